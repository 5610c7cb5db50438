//! The $D000–$DFFF I/O area in its four personalities (spec §M2.2): VIC registers a program without
//! KERNAL needs, the $D02F knock, speed, CIAs, F011, keyboard queue, hypervisor traps, SD buffer
//! select, the exit port, DMA and the hardware multiplier/divider.

use ssnail_format::mega65::{
    cia1, d7fe, f011, hyppo, io_area, keyboard, math, model, sd, testing, vic,
};

use super::machine::{Machine, StopReason};
use super::raster::raster_line;

/// A register's offset in the $D000-$DFFF area, as the decoders below match it.
pub(crate) const fn io(addr: u16) -> u16 {
    addr - io_area::FIRST
}
/// The same offset as an index of `Machine::io_regs`.
pub(crate) const fn reg(addr: u16) -> usize {
    io(addr) as usize
}
const VIC_CONTROL_A: u16 = io(vic::CONTROL_A);
const VIC_RASTER: u16 = io(vic::RASTER);
const VIC_MEMORY: u16 = io(vic::MEMORY);
const VIC_IRQ_FLAGS: u16 = io(vic::IRQ_FLAGS);
const VIC_IRQ_MASK: u16 = io(vic::IRQ_MASK);
const VIC_KEY: u16 = io(vic::KEY);
const VIC_ROM_BANKS: u16 = io(vic::ROM_BANKS);
const VIC_CONTROL_B: u16 = io(vic::CONTROL_B);
const VIC_CONTROL_C: u16 = io(vic::CONTROL_C);
/// The VIC registers every personality has (the VIC-II's); the rest are kept from the VIC-III's on.
const VIC_II_END: u16 = 0x080;
const CIA1_FIRST: u16 = io(cia1::BASE);
const CIA1_LAST: u16 = CIA1_FIRST + 0xFF;
/// CIA 2: the page after CIA 1's, the same registers (spec §M15).
const CIA2_FIRST: u16 = CIA1_FIRST + 0x100;
const CIA2_LAST: u16 = CIA2_FIRST + 0xFF;
const MODEL: u16 = io(model::ADDRESS);
const REALHW: u16 = io(testing::REALHW);
const EXIT: u16 = io(testing::EXIT);
const D7FE: u16 = io(d7fe::ADDRESS);
const F011_FIRST: u16 = io(f011::CONTROL);
const F011_LAST: u16 = io(f011::LAST);
const KBD_ASCII: u16 = io(keyboard::ASCII);
const KBD_PETSCII: u16 = io(keyboard::PETSCII);
const KBD_MODIFIERS: u16 = io(keyboard::MODIFIERS);
const KBD_MATRIX_PEEK: u16 = io(keyboard::MATRIX_PEEK);
const KBD_MATRIX_SELECT: u16 = io(keyboard::MATRIX_SELECT);
const TRAP_FIRST: u16 = io(hyppo::TRAP_DOS);
const TRAP_LAST: u16 = io(hyppo::TRAP_LAST);
const SD_CONTROL: u16 = io(sd::CONTROL);
const SD_SECTOR0: u16 = io(sd::SECTOR0);
const SD_SECTOR3: u16 = io(sd::SECTOR3);
const SD_BUFFER_SELECT: u16 = io(sd::BUFFER_SELECT);
const MATH_BUSY: u16 = io(math::BUSY);
const MATH_FIRST: u16 = io(math::DIVOUT);
const MATH_MULTINA: u16 = io(math::MULTINA);
const MATH_MULTINB_LAST: u16 = io(math::MULTOUT) - 1;
const MATH_LAST: u16 = io(math::LAST);

impl Machine {
    pub(crate) fn io_read(&mut self, mode: u8, off: u16) -> u8 {
        match off {
            0x800..=0xBFF => return self.colour[(off - 0x800) as usize],
            0xC00..=0xFFF if self.d030 & 1 != 0 && mode != 0 => {
                return self.colour[(off - 0x800) as usize]
            }
            CIA1_FIRST..=CIA1_LAST => {
                let now = self.cycles;
                return self.cia1.read(now, (off & 0x0F) as u8);
            }
            CIA2_FIRST..=CIA2_LAST => {
                let now = self.cycles;
                return self.cia2.read(now, (off & 0x0F) as u8);
            }
            0xE00..=0xFFF if self.sd.window && mode >= 2 => {
                return self.sectors.user_read(self.sd.bufsel_sd, off as u32);
            }
            _ => {}
        }
        match off {
            // Raster position from the clock, so that programs waiting for a line or the
            // vertical blank run: PAL, 312 lines per 20 ms frame (50 Hz).
            VIC_CONTROL_A => {
                return (self.io_regs[VIC_CONTROL_A as usize] & 0x7F)
                    | (((raster_line(self.cycles) >> 8) as u8) << 7)
            }
            VIC_RASTER => return raster_line(self.cycles) as u8,
            VIC_IRQ_FLAGS => {
                let flag = self.vic_irq_flag() as u8;
                let on = flag & self.io_regs[VIC_IRQ_MASK as usize] & 1;
                return 0x70 | flag | on << 7;
            }
            _ => {}
        }
        if mode == 0 {
            return self.io_regs[off as usize];
        }
        match off {
            VIC_KEY => self.knock,
            VIC_ROM_BANKS => self.d030,
            F011_FIRST..=F011_LAST => {
                self.f011
                    .read(self.cycles, &mut self.sectors, (off & 0x0F) as u8)
            }
            0x600..=0x6FF if mode >= 2 => self.mega_io_read(off),
            MATH_BUSY => 0, // DIVBUSY / MULBUSY: results are immediate
            D7FE if mode >= 2 => self.d7fe_read(),
            MATH_FIRST..=MATH_LAST if mode >= 2 => self.math.read((off - MATH_FIRST) as u8),
            0x700..=0x7FF => self
                .dma_register_read(off)
                .unwrap_or(self.io_regs[off as usize]),
            _ => self.io_regs[off as usize],
        }
    }

    pub(crate) fn io_write(&mut self, mode: u8, off: u16, v: u8) {
        match off {
            0x800..=0xBFF => {
                self.colour[(off - 0x800) as usize] = v;
                return;
            }
            0xC00..=0xFFF if self.d030 & 1 != 0 && mode != 0 => {
                self.colour[(off - 0x800) as usize] = v;
                return;
            }
            CIA1_FIRST..=CIA1_LAST => {
                let now = self.cycles;
                self.cia1.write(now, (off & 0x0F) as u8, v);
                self.request_service();
                return;
            }
            CIA2_FIRST..=CIA2_LAST => {
                let now = self.cycles;
                self.cia2.write(now, (off & 0x0F) as u8, v);
                self.request_service();
                return;
            }
            VIC_KEY => {
                self.write_knock(v);
                return;
            }
            VIC_CONTROL_A | VIC_RASTER | VIC_IRQ_MASK => {
                // Raster compare ($D012 + $D011 bit 7) and interrupt enable.
                self.vic_irq_flag();
                self.io_regs[off as usize] = v;
                self.request_service();
                return;
            }
            VIC_IRQ_FLAGS => {
                if v & 1 != 0 {
                    self.vic_irq_flag();
                    self.raster.clear();
                }
                return;
            }
            0xE00..=0xFFF if self.sd.window && mode >= 2 => {
                self.sectors.user_write(self.sd.bufsel_sd, off as u32, v);
                return;
            }
            _ => {}
        }
        if off == VIC_MEMORY {
            // $D018 also sets CHARPTR bits 13–11 from bits 3–1 and clears bits 10–0 (mega65-core
            // viciv.vhdl lines 2359–2364); bits 23–14 stay.
            let charptr = reg(vic::CHARPTR);
            self.io_regs[charptr] = 0;
            self.io_regs[charptr + 1] = (self.io_regs[charptr + 1] & 0xC0) | ((v >> 1) & 7) << 3;
        }
        if mode == 0 {
            if off < VIC_II_END {
                self.io_regs[off as usize] = v;
            }
            return;
        }
        match off {
            VIC_ROM_BANKS => {
                self.d030 = v;
                self.rebuild_view();
            }
            VIC_CONTROL_B | VIC_CONTROL_C => {
                self.io_regs[off as usize] = v;
                self.update_speed();
            }
            F011_FIRST..=F011_LAST => {
                let held = self
                    .f011
                    .write(self.cycles, &mut self.sectors, (off & 0x0F) as u8, v);
                self.cycles += held;
            }
            0x600..=0x6FF if mode >= 2 => self.mega_io_write(off, v),
            0x700..=0x70F => self.dma_register_write(off, v),
            D7FE if mode >= 2 => self.d7fe_write(v),
            MATH_MULTINA..=MATH_MULTINB_LAST if mode >= 2 => {
                self.math.write((off - MATH_FIRST) as u8, v)
            }
            _ => self.io_regs[off as usize] = v,
        }
    }

    /// The raster compare line: $D012 plus $D011 bit 7.
    fn raster_compare(&self) -> u64 {
        self.io_regs[VIC_RASTER as usize] as u64
            | ((self.io_regs[VIC_CONTROL_A as usize] as u64 >> 7) << 8)
    }

    /// Raster interrupt flag ($D019 bit 0), brought up to date with the clock.
    pub(crate) fn vic_irq_flag(&mut self) -> bool {
        let compare = self.raster_compare();
        self.raster.flag(self.cycles, compare)
    }

    pub(crate) fn vic_irq_pending(&mut self) -> bool {
        self.io_regs[VIC_IRQ_MASK as usize] & 1 != 0 && self.vic_irq_flag()
    }

    pub(crate) fn vic_next_irq_time(&self) -> u64 {
        if self.io_regs[VIC_IRQ_MASK as usize] & 1 == 0 {
            return u64::MAX;
        }
        self.raster.next_time(self.raster_compare())
    }

    /// $D02F: two magic values in a row select the personality; anything else selects C64.
    fn write_knock(&mut self, v: u8) {
        let mode = match (self.knock, v) {
            (0x47, 0x53) => Some(3),
            (0xA5, 0x96) => Some(1),
            (0x45, 0x54) => Some(2),
            (_, 0x47 | 0xA5 | 0x45) => None,
            _ => Some(0),
        };
        self.knock = v;
        if let Some(m) = mode {
            if m != self.io_mode {
                self.io_mode = m;
                self.rebuild_view();
            }
        }
    }

    /// $D600–$D6FF in the MEGA65 personality.
    fn mega_io_read(&mut self, off: u16) -> u8 {
        match off {
            KBD_ASCII => {
                if self.keys.is_empty() {
                    self.keys.empty_polls += 1;
                }
                self.keys.ascii()
            }
            KBD_PETSCII => self.keys.petscii(),
            0x60A => {
                if self.keys.is_empty() {
                    0
                } else {
                    0x80
                }
            }
            REALHW => 0,        // REALHW = 0: an emulator, like xemu without -realhw
            KBD_MODIFIERS => 0, // modifier keys: none held (iomap.txt lines 512-522)
            KBD_MATRIX_PEEK => self
                .keys
                .matrix_column(self.io_regs[KBD_MATRIX_SELECT as usize], self.cycles),
            MODEL => self.model_id(),    // M65MODEL (attic.rs)
            TRAP_FIRST..=TRAP_LAST => 0, // traps; $D67C reads 0 = serial monitor ready
            SD_CONTROL | SD_SECTOR0..=SD_SECTOR3 | SD_BUFFER_SELECT => {
                self.sd.read((off - SD_CONTROL) as u8).unwrap_or(0)
            }
            EXIT => self.exit_value,
            _ => self.io_regs[off as usize],
        }
    }

    fn mega_io_write(&mut self, off: u16, v: u8) {
        match off {
            KBD_ASCII | KBD_PETSCII => self.keys.pop(),
            0x60A => {
                if v & 0x80 == 0 {
                    self.keys.flush()
                }
            }
            TRAP_FIRST..=TRAP_LAST => self.hypervisor_trap((off - TRAP_FIRST) as u8),
            SD_CONTROL | SD_SECTOR0..=SD_SECTOR3 | SD_BUFFER_SELECT => {
                self.sd.write((off - SD_CONTROL) as u8, v);
            }
            EXIT => {
                if v == testing::EXIT_NOW {
                    self.request_stop(StopReason::Exit(self.exit_value));
                } else {
                    self.exit_value = v;
                }
            }
            _ => self.io_regs[off as usize] = v,
        }
    }
}

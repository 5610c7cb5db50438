//! The 28-bit physical address space and the CPU's 64 KB view of it (spec §M2).
//!
//! The CPU view is kept as two 256-entry page tables (read and write). A page that lies in plain chip
//! RAM holds its physical base, so the step loop reads and writes RAM with one table lookup; every
//! other page (I/O, colour RAM, the CPU port, SSNAIL memory) is marked `SLOW` and goes through the
//! full decoder in [`Machine::read_phys`] / [`Machine::write_phys`].

use super::machine::Machine;
use ssnail_format::mega65::io_area;

/// The I/O area in the CPU's 64 KB view, as this file's addresses are typed.
const IO_FIRST: u32 = io_area::FIRST as u32;
const IO_LAST: u32 = io_area::LAST as u32;

/// Chip RAM: banks 0–5 (384 KB) at $0000000.
pub const CHIP_RAM_SIZE: usize = 0x60000;
/// The chip-RAM buffer is a power of two so that masked indexing needs no bounds check.
pub(crate) const CHIP_BUF: usize = 0x80000;
/// Colour RAM (32 KB) at $FF80000.
pub const COLOUR_RAM_BASE: u32 = 0xFF8_0000;
pub const COLOUR_RAM_SIZE: usize = 0x8000;
/// The I/O personalities: $FFD0000 + mode × $1000 (0 = C64, 1 = C65, 2 = MEGA65 Ethernet, 3 = MEGA65).
pub const IO_BASE: u32 = 0xFFD_0000;
/// Hypervisor scratch and sector buffers ($FFD6000–$FFD6FFF).
pub const SECTOR_AREA_BASE: u32 = 0xFFD_6000;
/// The SSNAIL device page ($FFD7500–$FFD75FF) inside the I²C window.
pub const SSNAIL_IO_BASE: u32 = ssnail_format::registers::BLOCK;
/// SSNAIL memory (attic RAM window) starts at $8000000.
pub const SSNAIL_MEM_BASE: u32 = ssnail_format::image::BASE;
/// Largest SSNAIL memory: 128 MiB, up to the end of the 28-bit address space.
pub const SSNAIL_MEM_MAX: usize =
    (ssnail_format::image::ADDRESS_END - SSNAIL_MEM_BASE as u64) as usize;
/// Marks a page-table entry that is not plain chip RAM.
pub const SLOW: u32 = u32::MAX;

/// MAP state (spec §M1.5): per half, a 4-bit block mask, a 20-bit offset and a megabyte number.
#[derive(Clone, Copy, Debug, Default)]
pub struct MapState {
    pub lo_offset: u32,
    pub hi_offset: u32,
    /// Bit n set = 8 KB block n ($0000 + n×$2000) is mapped.
    pub mask: u8,
    pub lo_mb: u8,
    pub hi_mb: u8,
}

impl Machine {
    /// Physical address the CPU reads for a 16-bit address (after MAP and ROM/I/O banking).
    pub fn cpu_to_phys_read(&self, addr: u16) -> u32 {
        self.rview[(addr >> 8) as usize] + (addr as u32 & 0xFF)
    }

    /// Physical address the CPU writes for a 16-bit address.
    pub fn cpu_to_phys_write(&self, addr: u16) -> u32 {
        self.wview[(addr >> 8) as usize] + (addr as u32 & 0xFF)
    }

    /// Rebuilds the page tables from MAP, $01, $D030 and the I/O personality. Called whenever one
    /// of them changes (rare), never in the step loop.
    pub(crate) fn rebuild_view(&mut self) {
        let port = self.cpu_port & 7;
        let (loram, hiram, charen) = (port & 1 != 0, port & 2 != 0, port & 4 != 0);
        let io_base = IO_BASE + ((self.io_mode as u32) << 12);
        for page in 0..256u32 {
            let addr = page << 8;
            let block = (page >> 5) as u8;
            let (r, w) = if self.map.mask & (1 << block) != 0 {
                let (offset, mb) = if block < 4 {
                    (self.map.lo_offset, self.map.lo_mb)
                } else {
                    (self.map.hi_offset, self.map.hi_mb)
                };
                let p = ((mb as u32) << 20) | ((addr + offset) & 0xF_FFFF);
                (p, p)
            } else {
                let rom = |bit: u8| self.d030 & bit != 0;
                let r = match addr {
                    0x8000..=0x9FFF if rom(0x08) => 0x2_0000 + addr,
                    0xA000..=0xBFFF if rom(0x10) => 0x2_0000 + addr,
                    0xA000..=0xBFFF if loram && hiram => 0x2_0000 + addr,
                    0xC000..=0xCFFF if rom(0x20) => 0x2_0000 + addr,
                    IO_FIRST..=IO_LAST if charen && (loram || hiram) => io_base + (addr - IO_FIRST),
                    IO_FIRST..=IO_LAST if !charen && (loram || hiram) => 0x2_0000 + addr,
                    0xE000..=0xFFFF if rom(0x80) => 0x3_0000 + addr,
                    0xE000..=0xFFFF if hiram => 0x2_0000 + addr,
                    _ => addr,
                };
                // ROM areas are write-through to the RAM underneath; I/O stays I/O.
                let w = if (IO_FIRST..=IO_LAST).contains(&addr) && charen && (loram || hiram) {
                    r
                } else {
                    addr
                };
                (r, w)
            };
            self.rview[page as usize] = r;
            self.wview[page as usize] = w;
            let fast = |p: u32| {
                // Chip RAM except the colour-RAM window at $1F800 and the CPU port at $0000/$0001.
                p < CHIP_RAM_SIZE as u32 && !(0x1_F800..0x2_0000).contains(&p)
            };
            // Page 0 stays fast: `wr` sends $0000/$0001 (the CPU port) to the slow path itself.
            self.rmap[page as usize] = if fast(r) { r } else { SLOW };
            self.wmap[page as usize] = if fast(w) { w } else { SLOW };
        }
    }

    /// CPU read of a 16-bit address (the step loop's only read path).
    #[inline(always)]
    pub(crate) fn rd(&mut self, addr: u16) -> u8 {
        let base = self.rmap[(addr >> 8) as usize];
        if base != SLOW {
            self.chip[(base + (addr as u32 & 0xFF)) as usize & (CHIP_BUF - 1)]
        } else {
            self.rd_slow(addr)
        }
    }

    #[inline(always)]
    pub(crate) fn wr(&mut self, addr: u16, v: u8) {
        let base = self.wmap[(addr >> 8) as usize];
        if base != SLOW && addr > 1 {
            self.chip[(base + (addr as u32 & 0xFF)) as usize & (CHIP_BUF - 1)] = v;
        } else {
            self.wr_slow(addr, v)
        }
    }

    #[inline(never)]
    fn rd_slow(&mut self, addr: u16) -> u8 {
        let p = self.cpu_to_phys_read(addr);
        if p < 2 {
            return if p == 0 { self.cpu_ddr } else { self.cpu_port };
        }
        self.read_phys(p)
    }

    #[inline(never)]
    fn wr_slow(&mut self, addr: u16, v: u8) {
        let p = self.cpu_to_phys_write(addr);
        if p < 2 {
            self.write_cpu_port(p, v);
            return;
        }
        self.write_phys(p, v)
    }

    fn write_cpu_port(&mut self, p: u32, v: u8) {
        if p == 0 {
            // $40/$41 written to $00 clear/set the force-fast flag instead of changing the DDR.
            match v {
                0x40 => self.force_fast = false,
                0x41 => self.force_fast = true,
                _ => self.cpu_ddr = v,
            }
            self.update_speed();
        } else {
            self.cpu_port = v;
            self.rebuild_view();
        }
        // Reads of $00/$01 take the fast path: keep the port values in the RAM cells they shadow.
        self.chip[0] = self.cpu_ddr;
        self.chip[1] = self.cpu_port;
    }

    /// Reads one byte of the 28-bit physical address space.
    pub fn read_phys(&mut self, p: u32) -> u8 {
        let p = p & 0xFFF_FFFF;
        if p < CHIP_RAM_SIZE as u32 {
            if (0x1_F800..0x2_0000).contains(&p) {
                return self.colour[(p - 0x1_F800) as usize];
            }
            return self.chip[p as usize];
        }
        if (COLOUR_RAM_BASE..COLOUR_RAM_BASE + COLOUR_RAM_SIZE as u32).contains(&p) {
            return self.colour[(p - COLOUR_RAM_BASE) as usize];
        }
        if (IO_BASE..IO_BASE + 0x4000).contains(&p) {
            let mode = ((p >> 12) & 3) as u8;
            return self.io_read(mode, (p & 0xFFF) as u16);
        }
        if (SECTOR_AREA_BASE..SECTOR_AREA_BASE + 0x1000).contains(&p) {
            let bufsel_sd = self.sd.bufsel_sd;
            return self.sectors.user_read(bufsel_sd, p - SECTOR_AREA_BASE);
        }
        if (SSNAIL_IO_BASE..SSNAIL_IO_BASE + 0x100).contains(&p) {
            return self.ssnail_io_read((p - SSNAIL_IO_BASE) as u8);
        }
        if (0xFFD_7000..0xFFD_8000).contains(&p) {
            // The rest of the I²C window reads $FF. The hardware promises no value: on R3-R6 only
            // $FFD71xx, $FFD73xx and $FFD74xx have a chip select (mega65-core 76fac1b
            // src/vhdl/iomapper.vhdl lines 2209-2222) and every unselected fastio device drives
            // 'Z' (e.g. sdcardio.vhdl line 1138). xemu reads $FF here (its I²C array is filled
            // with $FF, targets/mega65/memory_mapper.c line 961), and so do we, so that the two
            // emulators' transcripts agree; programs must test for a signature, not a value.
            return 0xFF;
        }
        // SSNAIL memory fills the rest of $8000000–$FFFFFFF (the MEGA65's own areas above win).
        if p >= SSNAIL_MEM_BASE && p < SSNAIL_MEM_BASE + SSNAIL_MEM_MAX as u32 {
            // The attic window: which RAM and which cache decide what the CPU reads (attic.rs).
            return self.attic_read(p - SSNAIL_MEM_BASE);
        }
        // Unpopulated space reads as $FF (xemu's dummy areas do the same).
        0xFF
    }

    /// Writes one byte of the 28-bit physical address space.
    pub fn write_phys(&mut self, p: u32, v: u8) {
        let p = p & 0xFFF_FFFF;
        if p < CHIP_RAM_SIZE as u32 {
            if (0x1_F800..0x2_0000).contains(&p) {
                self.colour[(p - 0x1_F800) as usize] = v;
            } else {
                self.chip[p as usize] = v;
            }
            return;
        }
        if (COLOUR_RAM_BASE..COLOUR_RAM_BASE + COLOUR_RAM_SIZE as u32).contains(&p) {
            self.colour[(p - COLOUR_RAM_BASE) as usize] = v;
            return;
        }
        if (IO_BASE..IO_BASE + 0x4000).contains(&p) {
            let mode = ((p >> 12) & 3) as u8;
            self.io_write(mode, (p & 0xFFF) as u16, v);
            return;
        }
        if (SECTOR_AREA_BASE..SECTOR_AREA_BASE + 0x1000).contains(&p) {
            let bufsel_sd = self.sd.bufsel_sd;
            self.sectors.user_write(bufsel_sd, p - SECTOR_AREA_BASE, v);
            return;
        }
        if (SSNAIL_IO_BASE..SSNAIL_IO_BASE + 0x100).contains(&p) {
            self.ssnail_io_write((p - SSNAIL_IO_BASE) as u8, v);
            return;
        }
        if p >= SSNAIL_MEM_BASE && p < SSNAIL_MEM_BASE + SSNAIL_MEM_MAX as u32 {
            self.attic_write(p - SSNAIL_MEM_BASE, v);
        }
    }
}

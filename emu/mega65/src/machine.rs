//! The machine: CPU registers, memories, devices, and the run loop.

use std::path::PathBuf;

use super::attic::Attic;
use super::bus::{MapState, CHIP_BUF, COLOUR_RAM_SIZE, SLOW};
use super::cia::Cia;
use super::dma::Dma;
use super::f011::F011;
use super::hyppo::Hyppo;
use super::io::reg;
use super::keys::KeyQueue;
use super::math::Math;
use super::opcodes::{CYCLES_CE02, CYCLES_FAST};
use super::raster::RasterIrq;
use super::sd::SdCard;
use super::sectors::SectorBuffers;
use super::ssnail::SsnailPort;
use ssnail_format::mega65::vic;

/// The CPU clock at full speed: 40.5 MHz (MEGA65 Book, "40.5 MHz fast mode").
pub const CPU_HZ: u64 = 40_500_000;

/// Processor status bits.
pub mod flag {
    pub const C: u8 = 0x01;
    pub const Z: u8 = 0x02;
    pub const I: u8 = 0x04;
    pub const D: u8 = 0x08;
    pub const B: u8 = 0x10;
    pub const E: u8 = 0x20;
    pub const V: u8 = 0x40;
    pub const N: u8 = 0x80;
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The program wrote $42 to $D6CF; the value is the last one written before it.
    Exit(u8),
    /// The cycle or time budget was used up.
    Budget,
}

/// Run statistics.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub instructions: u64,
    pub cycles: u64,
}

/// Headless MEGA65. A clone is a snapshot to run again from (e.g. a program started once, then
/// many inputs from there); only a machine without an SSNAIL device can be cloned (the core's
/// memory and threads are not copied), and files the hypervisor has open are shared with it.
#[derive(Clone)]
pub struct Machine {
    // --- 45GS02 registers ---
    pub a: u8,
    pub x: u8,
    pub y: u8,
    pub z: u8,
    pub b: u8,
    /// SPH:SPL.
    pub sp: u16,
    pub pc: u16,
    pub p: u8,
    /// MAP sets it, EOM clears it: no interrupts in between.
    pub(crate) map_inhibit: bool,

    // --- time ---
    /// Elapsed 40.5 MHz cycles since power-on (the machine's only clock).
    pub cycles: u64,
    pub instructions: u64,
    /// The step loop runs until `cycles` reaches this, then services events.
    pub(crate) next_event: u64,
    /// Cycle cost of each base opcode at the current CPU speed.
    pub(crate) cost: [u16; 256],
    /// Multiplier applied to the CE02 table in slow modes (1 in fast mode).
    pub(crate) slow_factor: u16,

    // --- memory ---
    pub(crate) chip: Box<[u8; CHIP_BUF]>,
    pub(crate) colour: Box<[u8]>,
    /// The F011 and SD sector buffers in $FFD6000–$FFD6FFF.
    pub(crate) sectors: SectorBuffers,
    pub(crate) rmap: [u32; 256],
    pub(crate) wmap: [u32; 256],
    pub(crate) rview: [u32; 256],
    pub(crate) wview: [u32; 256],
    pub(crate) map: MapState,
    pub(crate) cpu_port: u8,
    pub(crate) cpu_ddr: u8,
    pub(crate) d030: u8,
    /// 0 = C64, 1 = C65, 2 = MEGA65 Ethernet, 3 = MEGA65 (VIC-IV).
    pub(crate) io_mode: u8,
    pub(crate) knock: u8,
    pub(crate) force_fast: bool,
    /// Plain register file behind $D000–$DFFF for registers without side effects (VIC, etc.).
    pub(crate) io_regs: Box<[u8; 4096]>,

    // --- devices ---
    pub(crate) cia1: Cia,
    pub(crate) cia2: Cia,
    pub(crate) dma: Dma,
    pub(crate) math: Math,
    pub(crate) sd: SdCard,
    pub(crate) hyppo: Hyppo,
    pub(crate) f011: F011,
    /// VIC raster interrupt ($D019 bit 0).
    pub(crate) raster: RasterIrq,
    pub keys: KeyQueue,
    pub ssnail: SsnailPort,
    /// $D7FE and the CPU's attic-RAM window: which RAM, line cache, prefetch.
    pub attic: Attic,
    /// Bytes written through the $D643 / $7C serial-monitor traps.
    pub serial: Vec<u8>,
    pub(crate) exit_value: u8,
    pub(crate) stop: Option<StopReason>,
}

impl Default for Machine {
    fn default() -> Self {
        Self::new()
    }
}

impl Machine {
    /// A machine in the state BASIC 65's `RUN`/`SYS` leaves it: MEGA65 I/O personality, 40.5 MHz,
    /// KERNAL mapped at $E000 by MAP (its ROM area is empty: programs bank it out), $01 = $35 (RAM
    /// at $A000 and $E000, I/O at $D000), $D030 = $64, B = 0, Z = 0, 8-bit stack at $01FF, E = 1.
    pub fn new() -> Machine {
        let mut m = Machine {
            a: 0,
            x: 0,
            y: 0,
            z: 0,
            b: 0,
            sp: 0x01FF,
            pc: 0,
            p: flag::E | flag::I,
            map_inhibit: false,
            cycles: 0,
            instructions: 0,
            next_event: 0,
            cost: [0; 256],
            slow_factor: 1,
            chip: vec![0u8; CHIP_BUF]
                .into_boxed_slice()
                .try_into()
                .expect("size"),
            colour: vec![0u8; COLOUR_RAM_SIZE].into_boxed_slice(),
            sectors: SectorBuffers::default(),
            rmap: [SLOW; 256],
            wmap: [SLOW; 256],
            rview: [0; 256],
            wview: [0; 256],
            map: MapState {
                hi_offset: 0x3_0000,
                mask: 0x80,
                ..MapState::default()
            },
            cpu_port: 0x35,
            cpu_ddr: 0x2F,
            d030: 0x64,
            io_mode: 3,
            knock: 0,
            force_fast: false,
            io_regs: Box::new([0u8; 4096]),
            cia1: Cia::default(),
            cia2: Cia::default(),
            dma: Dma::default(),
            math: Math::default(),
            sd: SdCard::default(),
            hyppo: Hyppo::default(),
            f011: F011::default(),
            raster: RasterIrq::default(),
            keys: KeyQueue::default(),
            ssnail: SsnailPort::default(),
            attic: Attic::default(),
            serial: Vec::new(),
            exit_value: 0x42,
            stop: None,
        };
        // VIC-IV defaults for the 80×25 text screen at $0800 (spec §M7.1).
        m.io_regs[reg(vic::BORDER)] = 6; // blue
        m.io_regs[reg(vic::BACKGROUND)] = 6; // blue
        m.io_regs[reg(vic::CONTROL_B)] =
            vic::CONTROL_B_H640 | vic::CONTROL_B_FAST | vic::CONTROL_B_ATTR;
        m.io_regs[reg(vic::CONTROL_C)] = vic::CONTROL_C_VFAST;
        m.io_regs[reg(vic::LINESTEP)] = 80;
        m.io_regs[reg(vic::CHRCOUNT)] = 80;
        m.io_regs[reg(vic::SCRNPTR)] = 0x00; // screen at $0800
        m.io_regs[reg(vic::SCRNPTR) + 1] = 0x08;
        m.io_regs[reg(vic::DISPROWS)] = 25;
        m.io_regs[reg(vic::MEMORY)] = 0x16; // lower-case character set
        m.io_regs[reg(vic::CHARPTR) + 1] = 0x18; // CHARPTR $001800: the ROM's lower-case set (screen.rs)
                                                 // The screen BASIC's RUN leaves: cleared to spaces, white text.
        m.chip[0x0800..0x0800 + 2000].fill(0x20);
        m.colour[..2000].fill(1);
        m.chip[0] = m.cpu_ddr;
        m.chip[1] = m.cpu_port;
        m.rebuild_view();
        m.update_speed();
        m
    }

    /// Host-side stats.
    pub fn stats(&self) -> Stats {
        Stats {
            instructions: self.instructions,
            cycles: self.cycles,
        }
    }

    /// Emulated seconds since power-on.
    pub fn seconds(&self) -> f64 {
        self.cycles as f64 / CPU_HZ as f64
    }

    /// Recomputes the cycle table from the speed registers (spec §M2.4). Full speed uses the
    /// measured 40.5 MHz table; the 3.5 MHz and 1 MHz modes are approximated by the 65CE02 table
    /// stretched to 40.5 MHz cycles (×12, ×40) — programs for this machine run at full speed.
    pub(crate) fn update_speed(&mut self) {
        let fast = self.io_regs[reg(vic::CONTROL_B)] & vic::CONTROL_B_FAST != 0;
        let vfast = self.io_regs[reg(vic::CONTROL_C)] & vic::CONTROL_C_VFAST != 0;
        let factor: u16 = if self.force_fast || (fast && vfast) {
            1
        } else if fast {
            12 // 3.5 MHz: 40.5 / 3.5 ≈ 11.6 fast cycles per CE02 cycle
        } else {
            40 // 1 MHz
        };
        self.slow_factor = factor;
        for op in 0..256 {
            self.cost[op] = if factor == 1 {
                CYCLES_FAST[op] as u16
            } else {
                CYCLES_CE02[op] as u16 * factor
            };
        }
    }

    /// Copies bytes into chip RAM (or any physical address) — used to load programs.
    pub fn poke_phys(&mut self, addr: u32, data: &[u8]) {
        for (i, &b) in data.iter().enumerate() {
            self.write_phys(addr + i as u32, b);
        }
    }

    /// Chip RAM as it is ($00000 up; for checks that read much of it at once).
    pub fn chip_ram(&self) -> &[u8] {
        &self.chip[..]
    }

    /// Reads bytes from the physical address space.
    pub fn peek_phys(&mut self, addr: u32, len: usize) -> Vec<u8> {
        (0..len).map(|i| self.read_phys(addr + i as u32)).collect()
    }

    /// Attaches the SD card directory for hypervisor file calls.
    pub fn set_sd_dir(&mut self, dir: PathBuf) {
        self.hyppo.set_root(dir);
    }

    /// Mounts a D81 image in drive 0 of the F011 controller.
    pub fn mount_d81(&mut self, image: Vec<u8>) {
        self.f011.mount(image);
    }

    /// Runs until the program exits or `max_cycles` more cycles have passed.
    pub fn run(&mut self, max_cycles: u64) -> StopReason {
        let deadline = self.cycles.saturating_add(max_cycles);
        self.stop = None;
        loop {
            self.service_events(deadline);
            if let Some(reason) = self.stop {
                return reason;
            }
            if self.cycles >= deadline {
                return StopReason::Budget;
            }
            let mut n = 0u64;
            while self.cycles < self.next_event {
                self.exec();
                n += 1;
            }
            self.instructions += n;
        }
    }

    /// Runs exactly one instruction (servicing events first); Some(reason) if the program exited.
    pub fn run_one(&mut self) -> Option<StopReason> {
        self.stop = None;
        self.service_events(u64::MAX);
        self.step();
        self.service_events(u64::MAX);
        self.stop
    }

    /// Handles everything that happens between instructions: key arrivals, CIA timers, the SSNAIL
    /// core catching up, interrupts. Sets `next_event` to the next cycle that needs attention.
    fn service_events(&mut self, deadline: u64) {
        let now = self.cycles;
        self.keys.advance(now);
        self.ssnail_advance(now);
        let irq = self.cia1.irq_pending(now) || self.vic_irq_pending();
        let nmi = self.cia2.irq_pending(now);
        if nmi && !self.map_inhibit && self.stop.is_none() {
            self.cia2.nmi_taken = true;
            self.interrupt(0xFFFA);
        } else if irq && self.p & flag::I == 0 && !self.map_inhibit && self.stop.is_none() {
            self.interrupt(0xFFFE);
        }
        let mut next = deadline;
        next = next.min(self.keys.next_time().unwrap_or(u64::MAX));
        next = next.min(self.cia1.next_irq_time(now));
        next = next.min(self.cia2.next_irq_time(now));
        next = next.min(self.ssnail_next_time());
        next = next.min(self.vic_next_irq_time());
        // Service at least every 2^16 cycles so that late-arriving conditions are seen.
        next = next.min(now + 65_536);
        self.next_event = if self.stop.is_some() {
            now
        } else {
            next.max(now + 1)
        };
    }

    /// Makes the step loop return to `service_events` after the current instruction.
    #[inline]
    pub(crate) fn request_service(&mut self) {
        self.next_event = 0;
    }

    pub(crate) fn request_stop(&mut self, reason: StopReason) {
        self.stop = Some(reason);
        self.next_event = 0;
    }

    fn interrupt(&mut self, vector: u16) {
        let pc = self.pc;
        self.push((pc >> 8) as u8);
        self.push(pc as u8);
        self.push(self.p & !flag::B);
        self.p |= flag::I;
        let lo = self.rd(vector) as u16;
        let hi = self.rd(vector.wrapping_add(1)) as u16;
        self.pc = lo | hi << 8;
        self.cycles += 7;
    }
}

impl Machine {
    /// One trace line for the instruction at PC: address, disassembly and registers.
    pub fn trace_line(&mut self) -> String {
        let bytes: Vec<u8> = (0..5u16)
            .map(|i| {
                let p = self.cpu_to_phys_read(self.pc.wrapping_add(i));
                // Code is fetched from memory, never from I/O registers with side effects.
                if (super::bus::IO_BASE..super::bus::IO_BASE + 0x4000).contains(&p) {
                    0
                } else {
                    self.read_phys(p)
                }
            })
            .collect();
        let (text, len) = super::opcodes::disassemble(&bytes, self.pc);
        let hex: Vec<String> = bytes[..len].iter().map(|b| format!("{b:02X}")).collect();
        format!(
            "{:04X}  {:<15} {:<16} A={:02X} X={:02X} Y={:02X} Z={:02X} B={:02X} SP={:04X} P={:02X} {}",
            self.pc,
            hex.join(" "),
            text,
            self.a,
            self.x,
            self.y,
            self.z,
            self.b,
            self.sp,
            self.p,
            self.cycles
        )
    }
}

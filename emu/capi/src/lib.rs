//! The SSNAIL core emulator ([`ssnail_core::Ssnail`]) behind a small C interface
//! (`include/ssnail.h`) for C hosts: the xemu patch (`xemu/`) links the static library into
//! xmega65, so the unchanged MEGA65 program finds an SSNAIL core there too.
//!
//! Time: the host passes its emulated CPU clock with every call. A job runs its instructions as
//! that clock passes their start times, each costing the bytes it moves at the configured
//! bandwidth, the same model as the headless MEGA65 (emu/mega65/src/ssnail.rs), so BUSY, SYNC
//! and the tokens a job writes appear at the same emulated times in both.
//!
//! The CPU's view of the attic window at $8000000 follows $D7FE bit 4 (SELSDRAM) with the rule
//! of the headless MEGA65 (emu/mega65/src/attic.rs, from mega65-core gs4510.vhdl 3616-3625 and
//! mega65r4.vhdl 1285-1308); the 8-byte line cache and prefetch it also models are not modelled
//! here (xemu has none; the program switches them off).

use ssnail_core::{Board, Machine, NoHost, Numerics, Ssnail};

/// Default SSNAIL memory bandwidth (bytes per second), as the headless MEGA65's.
pub const DEFAULT_BANDWIDTH: f64 = ssnail_mega65::ssnail::DEFAULT_BANDWIDTH;
/// $D7FE bit 4: the CPU's attic window shows SDRAM (R4-R6).
pub use ssnail_mega65::attic::d7fe::SELSDRAM;
use ssnail_mega65::attic::{window_cell, Cell};

/// One SSNAIL device with its clock.
pub struct Device {
    pub ssnail: Ssnail,
    /// Host CPU cycles per byte SSNAIL moves.
    cycles_per_byte: f64,
    /// The host cycle at which the running job's next instruction is due.
    due: f64,
    pub jobs: u64,
    /// HyperRAM of an R4-R6 board whose SSNAIL memory does not reach $C000000 (1 MiB pieces,
    /// allocated on first write; unwritten bytes read 0 as in the headless MEGA65).
    own_hyperram: Vec<Option<Box<[u8]>>>,
}

impl Device {
    /// `mem_mib` 1-128 (up to 8: an R3 board); None outside that range.
    pub fn new(mem_mib: u32, numerics: Numerics, bandwidth: f64, cpu_hz: f64) -> Option<Device> {
        if !(1..=128).contains(&mem_mib) {
            return None;
        }
        let bandwidth = if bandwidth > 0.0 && bandwidth.is_finite() {
            bandwidth
        } else {
            DEFAULT_BANDWIDTH
        };
        let cpu_hz = if cpu_hz > 0.0 && cpu_hz.is_finite() {
            cpu_hz
        } else {
            40.5e6
        };
        let mut core = Machine::new((mem_mib as usize) << 20);
        core.numerics = numerics;
        let board = if mem_mib <= 8 { Board::R3 } else { Board::R4 };
        Some(Device {
            ssnail: Ssnail::with_board(core, board),
            cycles_per_byte: cpu_hz / bandwidth,
            due: 0.0,
            jobs: 0,
            own_hyperram: Vec::new(),
        })
    }

    /// Runs the job's instructions that are due by host cycle `now`.
    pub fn advance(&mut self, now: u64) {
        while self.ssnail.busy() && self.due <= now as f64 {
            let before = self.ssnail.machine.traffic.total();
            self.ssnail.tick(1, &mut NoHost);
            let moved = self.ssnail.machine.traffic.total() - before;
            self.due += moved as f64 * self.cycles_per_byte;
        }
    }

    pub fn reg_read(&mut self, reg: u8, now: u64) -> u8 {
        self.advance(now);
        self.ssnail.read(reg)
    }

    pub fn reg_write(&mut self, reg: u8, v: u8, now: u64) {
        self.advance(now);
        let was_busy = self.ssnail.busy();
        self.ssnail.write(reg, v);
        if !was_busy && self.ssnail.busy() {
            self.jobs += 1;
            self.due = now as f64;
        }
    }

    fn mem_read(&mut self, off: u32, now: u64) -> u8 {
        self.advance(now);
        self.ssnail
            .machine
            .mem()
            .get(off as usize)
            .copied()
            .unwrap_or(0xFF)
    }

    fn mem_write(&mut self, off: u32, v: u8, now: u64) {
        self.advance(now);
        if let Some(b) = self.ssnail.machine.mem_mut().get_mut(off as usize) {
            *b = v;
        }
    }

    /// Which cell the CPU reaches at $8000000 + off (the headless MEGA65's rule).
    fn cell(&self, off: u32, d7fe: u8) -> Cell {
        window_cell(
            Some(self.ssnail.board),
            d7fe,
            self.ssnail.machine.mem_size(),
            off,
        )
    }

    pub fn attic_read(&mut self, off: u32, d7fe: u8, now: u64) -> u8 {
        match self.cell(off, d7fe) {
            Cell::Ssnail(o) => self.mem_read(o, now),
            Cell::OwnHyperram(o) => match self.own_hyperram.get((o >> 20) as usize) {
                Some(Some(chunk)) => chunk[(o & 0xF_FFFF) as usize],
                _ => 0,
            },
            Cell::Unpopulated => 0xFF,
        }
    }

    pub fn attic_write(&mut self, off: u32, d7fe: u8, v: u8, now: u64) {
        match self.cell(off, d7fe) {
            Cell::Ssnail(o) => self.mem_write(o, v, now),
            Cell::OwnHyperram(o) => {
                let i = (o >> 20) as usize;
                if self.own_hyperram.len() <= i {
                    self.own_hyperram.resize_with(i + 1, || None);
                }
                let chunk = self.own_hyperram[i]
                    .get_or_insert_with(|| vec![0u8; 1 << 20].into_boxed_slice());
                chunk[(o & 0xF_FFFF) as usize] = v;
            }
            Cell::Unpopulated => {}
        }
    }
}

/// The C handle (`ssnail_t`).
pub type SsnailHandle = Device;

/// # Safety
/// Returns a pointer owned by the caller; free it with `ssnail_destroy`.
#[no_mangle]
pub extern "C" fn ssnail_create(
    mem_mib: u32,
    numerics_float: i32,
    bandwidth: f64,
    cpu_hz: f64,
) -> *mut SsnailHandle {
    let numerics = if numerics_float != 0 {
        Numerics::Float
    } else {
        Numerics::Hardware
    };
    match Device::new(mem_mib, numerics, bandwidth, cpu_hz) {
        Some(d) => Box::into_raw(Box::new(d)),
        None => std::ptr::null_mut(),
    }
}

/// # Safety
/// `s` must come from `ssnail_create` (or be NULL) and not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ssnail_destroy(s: *mut SsnailHandle) {
    if !s.is_null() {
        drop(Box::from_raw(s));
    }
}

/// # Safety
/// `s` must be a live handle from `ssnail_create`.
#[no_mangle]
pub unsafe extern "C" fn ssnail_reg_read(s: *mut SsnailHandle, reg: u8, cycle: u64) -> u8 {
    match s.as_mut() {
        Some(d) => d.reg_read(reg, cycle),
        None => 0xFF,
    }
}

/// # Safety
/// `s` must be a live handle from `ssnail_create`.
#[no_mangle]
pub unsafe extern "C" fn ssnail_reg_write(s: *mut SsnailHandle, reg: u8, value: u8, cycle: u64) {
    if let Some(d) = s.as_mut() {
        d.reg_write(reg, value, cycle);
    }
}

/// # Safety
/// `s` must be a live handle from `ssnail_create`.
#[no_mangle]
pub unsafe extern "C" fn ssnail_attic_read(
    s: *mut SsnailHandle,
    off: u32,
    d7fe: u8,
    cycle: u64,
) -> u8 {
    match s.as_mut() {
        Some(d) => d.attic_read(off, d7fe, cycle),
        None => 0xFF,
    }
}

/// # Safety
/// `s` must be a live handle from `ssnail_create`.
#[no_mangle]
pub unsafe extern "C" fn ssnail_attic_write(
    s: *mut SsnailHandle,
    off: u32,
    d7fe: u8,
    value: u8,
    cycle: u64,
) {
    if let Some(d) = s.as_mut() {
        d.attic_write(off, d7fe, value, cycle);
    }
}

/// # Safety
/// `s` must be a live handle from `ssnail_create` (or NULL: 0).
#[no_mangle]
pub unsafe extern "C" fn ssnail_mem_size(s: *const SsnailHandle) -> u64 {
    s.as_ref().map_or(0, |d| d.ssnail.machine.mem_size() as u64)
}

/// # Safety
/// `s` must be a live handle from `ssnail_create` (or NULL: 0).
#[no_mangle]
pub unsafe extern "C" fn ssnail_jobs(s: *const SsnailHandle) -> u64 {
    s.as_ref().map_or(0, |d| d.jobs)
}

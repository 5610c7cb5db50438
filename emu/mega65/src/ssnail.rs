//! The SSNAIL device at $FFD7500 and its memory from $8000000, shared with the core emulator
//! ([`ssnail_core::Ssnail`], the one register definition).
//!
//! Timing model: a job's instructions run interleaved with the 45GS02. Each core instruction costs
//! the bytes it moves (the core's traffic counters) at the memory bandwidth (default 130 MB/s),
//! converted to 40.5 MHz cycles. An instruction executes when the CPU's clock reaches its start
//! time, so its writes — a generated token and its count, made just before the SYNC that publishes
//! them — become visible at that point in emulated time, and a polling program sees tokens appear
//! over time as on the real machine. STATUS stays busy until the job's last instruction is due.
//!
//! Without an attached core the page reads as undecoded I²C space ($FF, like xemu; bus.rs) and the
//! memory window is plain attic RAM, allocated in 1 MiB pieces when first written.

use ssnail_core::{NoHost, Ssnail};

use super::bus::SSNAIL_MEM_MAX;
use super::machine::{Machine, CPU_HZ};

/// Default memory bandwidth of the SSNAIL core's RAM (bytes per second).
pub const DEFAULT_BANDWIDTH: f64 = ssnail_format::registers::DEFAULT_BANDWIDTH;

pub struct SsnailPort {
    pub device: Option<Ssnail>,
    /// Bytes per second.
    pub bandwidth: f64,
    /// The cycle at which the running job's next instruction is due.
    due: f64,
    /// Jobs started.
    pub jobs: u64,
    /// Fault injection for tests: a started job never advances and STATUS stays BUSY, as a
    /// hung core would leave it.
    pub hang: bool,
    /// Attic RAM when no core is attached (1 MiB chunks, allocated on first write).
    attic: Vec<Option<Box<[u8]>>>,
}

impl Clone for SsnailPort {
    /// Without a device only (the attic RAM is copied): a core's memory and threads are not.
    fn clone(&self) -> Self {
        assert!(
            self.device.is_none(),
            "a machine with an SSNAIL device cannot be cloned"
        );
        SsnailPort {
            device: None,
            bandwidth: self.bandwidth,
            due: self.due,
            jobs: self.jobs,
            hang: self.hang,
            attic: self.attic.clone(),
        }
    }
}

impl Default for SsnailPort {
    fn default() -> Self {
        SsnailPort {
            device: None,
            bandwidth: DEFAULT_BANDWIDTH,
            due: 0.0,
            jobs: 0,
            hang: false,
            attic: Vec::new(),
        }
    }
}

impl SsnailPort {
    pub fn busy(&self) -> bool {
        self.device.as_ref().is_some_and(|d| d.busy())
    }

    /// Without a core: the attic RAM written so far, as (offset from $8000000, 1 MiB) pieces
    /// (the rest reads 0).
    pub fn attic_pieces(&self) -> impl Iterator<Item = (u32, &[u8])> {
        self.attic
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.as_deref().map(|c| ((i as u32) << 20, c)))
    }
}

impl Machine {
    /// Attaches an SSNAIL device (its memory becomes $8000000…).
    pub fn attach_ssnail(&mut self, device: Ssnail) {
        self.ssnail.device = Some(device);
    }

    pub(crate) fn ssnail_io_read(&mut self, r: u8) -> u8 {
        let now = self.cycles;
        self.ssnail_advance(now);
        match &self.ssnail.device {
            Some(d) => d.read(r),
            // No SSNAIL core: the page is part of the undecoded I²C window (bus.rs, read_phys).
            None => 0xFF,
        }
    }

    pub(crate) fn ssnail_io_write(&mut self, r: u8, v: u8) {
        let now = self.cycles;
        self.ssnail_advance(now);
        let Some(d) = self.ssnail.device.as_mut() else {
            return;
        };
        let was_busy = d.busy();
        d.write(r, v);
        if !was_busy && d.busy() {
            self.ssnail.jobs += 1;
            self.ssnail.due = now as f64;
            self.request_service();
        }
    }

    pub(crate) fn ssnail_mem_read(&mut self, off: u32) -> u8 {
        let now = self.cycles;
        self.ssnail_advance(now);
        match &self.ssnail.device {
            Some(d) => d.machine.mem().get(off as usize).copied().unwrap_or(0xFF),
            None => match self.ssnail.attic.get((off >> 20) as usize) {
                Some(Some(chunk)) => chunk[(off & 0xF_FFFF) as usize],
                _ => 0,
            },
        }
    }

    pub(crate) fn ssnail_mem_write(&mut self, off: u32, v: u8) {
        let now = self.cycles;
        self.ssnail_advance(now);
        match self.ssnail.device.as_mut() {
            Some(d) => {
                if let Some(b) = d.machine.mem_mut().get_mut(off as usize) {
                    *b = v;
                }
            }
            None => {
                let i = (off >> 20) as usize;
                if i >= SSNAIL_MEM_MAX >> 20 {
                    return;
                }
                if self.ssnail.attic.len() <= i {
                    self.ssnail.attic.resize_with(i + 1, || None);
                }
                let chunk = self.ssnail.attic[i]
                    .get_or_insert_with(|| vec![0u8; 1 << 20].into_boxed_slice());
                chunk[(off & 0xF_FFFF) as usize] = v;
            }
        }
    }

    /// Runs the core's instructions that are due by cycle `now`.
    pub(crate) fn ssnail_advance(&mut self, now: u64) {
        let port = &mut self.ssnail;
        let Some(d) = port.device.as_mut() else {
            return;
        };
        if port.hang {
            return;
        }
        let cycles_per_byte = CPU_HZ as f64 / port.bandwidth;
        while d.busy() && port.due <= now as f64 {
            let before = d.machine.traffic.total();
            d.tick(1, &mut NoHost);
            let moved = d.machine.traffic.total() - before;
            port.due += moved as f64 * cycles_per_byte;
        }
    }

    /// When the step loop must next let the core run.
    pub(crate) fn ssnail_next_time(&self) -> u64 {
        if self.ssnail.busy() && !self.ssnail.hang {
            self.ssnail.due.ceil() as u64
        } else {
            u64::MAX
        }
    }
}

//! The two 6526 CIAs' clocks ($DC00 CIA 1 → IRQ, $DD00 CIA 2 → NMI): timers A and B (one-shot or
//! continuous, B counting system ticks or A underflows) and the time-of-day clock.
//!
//! This is the clock a program uses to measure time (e.g. tokens per second). Both are derived
//! from the machine's one cycle counter, so they agree with every other figure the emulator
//! reports: timers tick at 1 MHz (one tick per 40.5 CPU cycles at full speed), the TOD clock counts
//! tenths of seconds in BCD from the same counter. Evaluation is lazy (on access), so the CIAs cost
//! nothing in the step loop. Port registers (keyboard matrix, serial) are plain storage.

use super::machine::CPU_HZ;
use ssnail_format::mega65::cia1;

/// The registers' numbers within a CIA (CIA 1's addresses less its base; CIA 2's are the same).
const fn reg(addr: u16) -> u8 {
    (addr - cia1::BASE) as u8
}
const TALO: u8 = reg(cia1::TALO);
const TAHI: u8 = reg(cia1::TAHI);
const TBLO: u8 = reg(cia1::TBLO);
const TBHI: u8 = reg(cia1::TBHI);
const TOD: u8 = reg(cia1::TOD);
const TOD_HOURS: u8 = reg(cia1::TOD_HOURS);
const ICR: u8 = reg(cia1::ICR);
const CRA: u8 = reg(cia1::CRA);
const CRB: u8 = reg(cia1::CRB);

/// CIA timer tick rate.
pub const CIA_HZ: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, Default)]
struct Timer {
    latch: u16,
    counter: u16,
    running: bool,
    one_shot: bool,
}

impl Timer {
    /// Counts `n` ticks down; returns the number of underflows.
    fn count(&mut self, n: u64) -> u64 {
        if !self.running || n == 0 {
            return 0;
        }
        let c = self.counter as u64;
        if n <= c {
            self.counter = (c - n) as u16;
            return 0;
        }
        // First underflow after c+1 ticks, then one every latch+1 ticks.
        let rest = n - c - 1;
        let period = self.latch as u64 + 1;
        if self.one_shot {
            self.counter = self.latch;
            self.running = false;
            return 1;
        }
        self.counter = (self.latch as u64 - rest % period) as u16;
        1 + rest / period
    }

    fn ticks_to_underflow(&self) -> u64 {
        self.counter as u64 + 1
    }
}

/// One CIA.
#[derive(Clone, Debug, Default)]
pub struct Cia {
    regs: [u8; 16],
    ta: Timer,
    tb: Timer,
    /// Timer B counts timer A underflows (CRB bits 5–6 = %10).
    tb_counts_a: bool,
    /// Ticks already applied.
    ticks_done: u64,
    /// Interrupt flags (ICR read bits 0–4) and mask.
    icr: u8,
    mask: u8,
    /// TOD: offset in tenths of seconds added to the emulated time.
    tod_offset: i64,
    tod_latch: Option<[u8; 4]>,
    tod_stopped_at: Option<i64>,
    pub(crate) nmi_taken: bool,
}

fn ticks_at(cycles: u64) -> u64 {
    (cycles as u128 * CIA_HZ as u128 / CPU_HZ as u128) as u64
}

fn cycles_at(ticks: u64) -> u64 {
    (ticks as u128 * CPU_HZ as u128).div_ceil(CIA_HZ as u128) as u64
}

fn bcd(v: u8) -> u8 {
    (v / 10) << 4 | (v % 10)
}

fn from_bcd(v: u8) -> i64 {
    ((v >> 4) * 10 + (v & 0x0F)) as i64
}

impl Cia {
    fn update(&mut self, now: u64) {
        let t = ticks_at(now);
        let n = t.saturating_sub(self.ticks_done);
        self.ticks_done = t;
        let ua = self.ta.count(n);
        if ua > 0 {
            self.icr |= 1;
        }
        let ub = if self.tb_counts_a {
            self.tb.count(ua)
        } else {
            self.tb.count(n)
        };
        if ub > 0 {
            self.icr |= 2;
        }
    }

    fn tenths(&self, now: u64) -> i64 {
        let base = self
            .tod_stopped_at
            .unwrap_or((now as u128 * 10 / CPU_HZ as u128) as i64);
        (base + self.tod_offset).rem_euclid(24 * 36_000)
    }

    fn tod_regs(&self, now: u64) -> [u8; 4] {
        let t = self.tenths(now);
        let h24 = (t / 36_000) as u8;
        let (h12, pm) = match h24 {
            0 => (12, false),
            1..=11 => (h24, false),
            12 => (12, true),
            _ => (h24 - 12, true),
        };
        [
            (t % 10) as u8,
            bcd(((t / 10) % 60) as u8),
            bcd(((t / 600) % 60) as u8),
            bcd(h12) | if pm { 0x80 } else { 0 },
        ]
    }

    pub fn read(&mut self, now: u64, reg: u8) -> u8 {
        self.update(now);
        match reg {
            TALO => self.ta.counter as u8,
            TAHI => (self.ta.counter >> 8) as u8,
            TBLO => self.tb.counter as u8,
            TBHI => (self.tb.counter >> 8) as u8,
            TOD..=TOD_HOURS => {
                // Reading hours latches the clock until tenths are read.
                let regs = match self.tod_latch {
                    Some(l) => l,
                    None => self.tod_regs(now),
                };
                if reg == TOD_HOURS {
                    self.tod_latch = Some(regs);
                } else if reg == TOD {
                    self.tod_latch = None;
                }
                regs[(reg - TOD) as usize]
            }
            ICR => {
                let v = self.icr
                    | if self.icr & self.mask != 0 {
                        cia1::ICR_SET
                    } else {
                        0
                    };
                self.icr = 0;
                v
            }
            CRA => (self.regs[CRA as usize] & !cia1::CR_START) | self.ta.running as u8,
            CRB => (self.regs[CRB as usize] & !cia1::CR_START) | self.tb.running as u8,
            _ => self.regs[reg as usize],
        }
    }

    pub fn write(&mut self, now: u64, reg: u8, v: u8) {
        self.update(now);
        match reg {
            TALO => self.ta.latch = (self.ta.latch & 0xFF00) | v as u16,
            TAHI => {
                self.ta.latch = (self.ta.latch & 0xFF) | (v as u16) << 8;
                if !self.ta.running {
                    self.ta.counter = self.ta.latch;
                }
            }
            TBLO => self.tb.latch = (self.tb.latch & 0xFF00) | v as u16,
            TBHI => {
                self.tb.latch = (self.tb.latch & 0xFF) | (v as u16) << 8;
                if !self.tb.running {
                    self.tb.counter = self.tb.latch;
                }
            }
            TOD..=TOD_HOURS => {
                // Writing sets the TOD (alarm writes, CRB bit 7, are not modelled).
                if self.regs[CRB as usize] & cia1::CRB_ALARM != 0 {
                    return;
                }
                let mut cur = self.tod_regs(now);
                cur[(reg - TOD) as usize] = v;
                let h = from_bcd(cur[3] & 0x1F) % 12 + if cur[3] & 0x80 != 0 { 12 } else { 0 };
                let want = h * 36_000
                    + from_bcd(cur[2]) * 600
                    + from_bcd(cur[1]) * 10
                    + (cur[0] & 0x0F) as i64;
                let now_t = (now as u128 * 10 / CPU_HZ as u128) as i64;
                self.tod_offset = want - now_t;
                // Writing hours stops the clock until tenths are written.
                self.tod_stopped_at = if reg == TOD_HOURS { Some(now_t) } else { None };
                if let Some(at) = self.tod_stopped_at {
                    self.tod_offset = want - at;
                }
            }
            ICR => {
                if v & cia1::ICR_SET != 0 {
                    self.mask |= v & 0x1F;
                } else {
                    self.mask &= !(v & 0x1F);
                }
            }
            CRA => {
                if v & cia1::CR_LOAD != 0 {
                    self.ta.counter = self.ta.latch;
                }
                self.ta.running = v & cia1::CR_START != 0;
                self.ta.one_shot = v & cia1::CR_ONESHOT != 0;
                self.regs[CRA as usize] = v & !cia1::CR_LOAD;
            }
            CRB => {
                if v & cia1::CR_LOAD != 0 {
                    self.tb.counter = self.tb.latch;
                }
                self.tb.running = v & cia1::CR_START != 0;
                self.tb.one_shot = v & cia1::CR_ONESHOT != 0;
                self.tb_counts_a = v & cia1::CRB_INMODE == cia1::CRB_COUNT_TA;
                self.regs[CRB as usize] = v & !cia1::CR_LOAD;
            }
            _ => self.regs[reg as usize] = v,
        }
    }

    /// Is an enabled interrupt flag set?
    pub fn irq_pending(&mut self, now: u64) -> bool {
        if self.mask == 0 {
            self.nmi_taken = false;
            return false;
        }
        self.update(now);
        let pending = self.icr & self.mask != 0;
        if !pending {
            self.nmi_taken = false;
        }
        // NMI is edge-triggered: only once per set of flags.
        pending && !self.nmi_taken
    }

    /// Earliest cycle at which an enabled timer interrupt can fire.
    pub fn next_irq_time(&self, now: u64) -> u64 {
        let mut next = u64::MAX;
        if self.mask & 1 != 0 && self.ta.running {
            next = next.min(cycles_at(self.ticks_done + self.ta.ticks_to_underflow()));
        }
        if self.mask & 2 != 0 && self.tb.running && !self.tb_counts_a {
            next = next.min(cycles_at(self.ticks_done + self.tb.ticks_to_underflow()));
        }
        if self.mask & 2 != 0 && self.tb.running && self.tb_counts_a && self.ta.running {
            // Conservative: look again at A's next underflow.
            next = next.min(cycles_at(self.ticks_done + self.ta.ticks_to_underflow()));
        }
        next.max(now + 1)
    }
}

//! The VIC's raster clock and raster interrupt (spec §M7.5): a PAL frame of 312 lines in 20 ms,
//! so that programs waiting for a line or the vertical blank run; the interrupt flag ($D019 bit
//! 0) rises when the beam reaches the compare line ($D012 + $D011 bit 7).

use super::machine::CPU_HZ;

/// A PAL frame: 312 raster lines in 20 ms.
const FRAME: u64 = CPU_HZ / 50;
const LINES: u64 = 312;

/// Current raster line (0–311) of a PAL frame at cycle `now`.
pub(crate) fn raster_line(now: u64) -> u32 {
    ((now % FRAME) * LINES / FRAME) as u32
}

/// First cycle after `after` at which compare line `line` starts (None: line beyond the frame).
fn next_compare_start(line: u64, after: u64) -> Option<u64> {
    if line >= LINES {
        return None;
    }
    let offset = (line * FRAME).div_ceil(LINES);
    let mut t = after / FRAME * FRAME + offset;
    if t <= after {
        t += FRAME;
    }
    Some(t)
}

/// The raster interrupt flag and the cycle up to which it has been checked.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RasterIrq {
    flag: bool,
    checked: u64,
}

impl RasterIrq {
    /// The flag at cycle `now` for compare line `compare`, brought up to date.
    pub(crate) fn flag(&mut self, now: u64, compare: u64) -> bool {
        if !self.flag {
            if let Some(t) = next_compare_start(compare, self.checked) {
                self.flag = t <= now;
            }
        }
        self.checked = now;
        self.flag
    }

    /// Acknowledges the interrupt ($D019 bit 0 written with 1).
    pub(crate) fn clear(&mut self) {
        self.flag = false;
    }

    /// The next cycle the flag may rise (u64::MAX: it is up, or the line is never reached).
    pub(crate) fn next_time(&self, compare: u64) -> u64 {
        if self.flag {
            return u64::MAX;
        }
        next_compare_start(compare, self.checked).unwrap_or(u64::MAX)
    }
}

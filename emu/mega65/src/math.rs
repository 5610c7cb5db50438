//! The hardware multiplier and divider at $D768–$D77F (spec §M9; the registers are
//! ssnail_format::mega65::math, from mega65-core iomap.txt): MULTINA ($D770–$D773) and MULTINB
//! ($D774–$D777) in, the 64-bit product ($D778–$D77F) and the 32.32 quotient DIVOUT
//! ($D768–$D76F) out, always ready.

use ssnail_format::mega65::math;

/// A register's offset from DIVOUT, the first, as [`Math::read`] and [`Math::write`] take it.
const fn reg(addr: u16) -> u8 {
    (addr - math::DIVOUT) as u8
}
const MULTINA: u8 = reg(math::MULTINA);
const MULTINB_LAST: u8 = reg(math::MULTOUT) - 1;
const MULTOUT: u8 = reg(math::MULTOUT);
const LAST: u8 = reg(math::LAST);

/// The multiplier/divider's two 32-bit inputs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Math {
    inputs: [u8; 8],
}

impl Math {
    /// A read of DIVOUT + `reg` (0–$17).
    pub(crate) fn read(&self, reg: u8) -> u8 {
        let a = u32::from_le_bytes(self.inputs[0..4].try_into().unwrap());
        let b = u32::from_le_bytes(self.inputs[4..8].try_into().unwrap());
        match reg {
            MULTINA..=MULTINB_LAST => self.inputs[(reg - MULTINA) as usize],
            MULTOUT..=LAST => {
                let prod = a as u64 * b as u64;
                prod.to_le_bytes()[(reg - MULTOUT) as usize]
            }
            _ => {
                // DIVOUT = (A << 32) / B as 32.32; division by zero reads all $FF.
                let q = if b == 0 {
                    u64::MAX
                } else {
                    (((a as u128) << 32) / b as u128) as u64
                };
                q.to_le_bytes()[reg as usize & 7]
            }
        }
    }

    /// A write of DIVOUT + `reg`: only the inputs (MULTINA, MULTINB: $D770–$D777) are writable.
    pub(crate) fn write(&mut self, reg: u8, v: u8) {
        if let MULTINA..=MULTINB_LAST = reg {
            self.inputs[(reg - MULTINA) as usize] = v;
        }
    }
}

//! The hardware multiplier and divider at $D768–$D77F (spec §M9): MULTINA ($D770–$D773) and
//! MULTINB ($D774–$D777) in, the 64-bit product ($D778–$D77F) and the 32.32 quotient DIVOUT
//! ($D768–$D76F) out, always ready.

/// The multiplier/divider's two 32-bit inputs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Math {
    inputs: [u8; 8],
}

impl Math {
    /// A read of $D768 + `reg` (0–$17).
    pub(crate) fn read(&self, reg: u8) -> u8 {
        let a = u32::from_le_bytes(self.inputs[0..4].try_into().unwrap());
        let b = u32::from_le_bytes(self.inputs[4..8].try_into().unwrap());
        match reg {
            0x08..=0x0F => self.inputs[(reg - 0x08) as usize],
            0x10..=0x17 => {
                let prod = a as u64 * b as u64;
                prod.to_le_bytes()[(reg - 0x10) as usize]
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

    /// A write of $D768 + `reg`: only the inputs ($D770–$D777, `reg` 8–$F) are writable.
    pub(crate) fn write(&mut self, reg: u8, v: u8) {
        if let 0x08..=0x0F = reg {
            self.inputs[(reg - 0x08) as usize] = v;
        }
    }
}

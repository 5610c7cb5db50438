//! The `EA` prefix (spec §M1.7): `($nn),Z` instructions through a 32-bit flat pointer.

use crate::machine::Machine;
use crate::opcodes::FLAT_CYCLES;

impl Machine {
    /// `EA op`: an ($nn),Z opcode with a 32-bit flat pointer. Returns the cycle total.
    pub(super) fn flat_op(&mut self, op: u8) -> u64 {
        let addr = self.ea_flat(true);
        match op {
            0x92 => self.write_phys(addr, self.a),
            _ => {
                let v = self.read_phys(addr);
                match op {
                    0x12 => self.ora(v),
                    0x32 => self.and(v),
                    0x52 => self.eor(v),
                    0x72 => self.adc(v),
                    0xB2 => {
                        self.a = v;
                        self.set_nz(v)
                    }
                    0xD2 => self.cmp(self.a, v),
                    _ => self.sbc(v),
                }
            }
        }
        FLAT_CYCLES[(op >> 5) as usize] as u64 * self.slow_factor as u64
    }
}

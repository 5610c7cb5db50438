//! The 45GS02 in its 4510 personality (spec §M1): all 256 base opcodes, the E flag and 16-bit stack,
//! MAP/EOM, 16-bit branches, the `42 42` quad prefix, the `EA` flat-address prefix and `42 42 EA`.
//!
//! `exec.rs` holds the one `match` on the opcode, `map.rs` MAP, `flat.rs` the `EA` prefix and
//! `quad.rs` the `42 42` prefix; this file the fetch, addressing, stack and ALU helpers they share.
//! Memory goes through the page-table fast path in `bus.rs`. Cycles are
//! charged from the measured 40.5 MHz table (`opcodes::CYCLES_FAST`) plus the documented extras: a
//! taken 8-bit branch costs 2 more, prefixed forms cost the measured totals in
//! `opcodes::QUAD_CYCLES`, `FLAT_CYCLES` and `FLAT_QUAD_CYCLES`.

use super::machine::{flag, Machine};
use ssnail_format::mega65::vic;

mod exec;
mod flat;
mod map;
mod quad;

impl Machine {
    #[inline(always)]
    fn fetch(&mut self) -> u8 {
        let v = self.rd(self.pc);
        self.pc = self.pc.wrapping_add(1);
        v
    }

    #[inline(always)]
    fn fetch16(&mut self) -> u16 {
        let lo = self.fetch() as u16;
        let hi = self.fetch() as u16;
        lo | hi << 8
    }

    #[inline(always)]
    fn bp(&self, o: u8) -> u16 {
        (self.b as u16) << 8 | o as u16
    }

    #[inline(always)]
    fn rd_bp16(&mut self, o: u8) -> u16 {
        let lo = self.rd(self.bp(o)) as u16;
        let hi = self.rd(self.bp(o.wrapping_add(1))) as u16;
        lo | hi << 8
    }

    #[inline(always)]
    fn set_nz(&mut self, v: u8) {
        self.p = (self.p & !(flag::N | flag::Z)) | (v & flag::N) | if v == 0 { flag::Z } else { 0 };
    }

    #[inline(always)]
    fn set_flag(&mut self, f: u8, on: bool) {
        if on {
            self.p |= f
        } else {
            self.p &= !f
        }
    }

    /// Pushes a byte: 8-bit stack inside page SPH when E = 1, 16-bit SPH:SPL when E = 0.
    #[inline(always)]
    pub(crate) fn push(&mut self, v: u8) {
        self.wr(self.sp, v);
        self.sp = if self.p & flag::E != 0 {
            (self.sp & 0xFF00) | (self.sp.wrapping_sub(1) & 0xFF)
        } else {
            self.sp.wrapping_sub(1)
        };
    }

    #[inline(always)]
    pub(crate) fn pop(&mut self) -> u8 {
        self.sp = if self.p & flag::E != 0 {
            (self.sp & 0xFF00) | (self.sp.wrapping_add(1) & 0xFF)
        } else {
            self.sp.wrapping_add(1)
        };
        self.rd(self.sp)
    }

    // --- effective addresses ---
    #[inline(always)]
    fn ea_bp(&mut self) -> u16 {
        let o = self.fetch();
        self.bp(o)
    }
    #[inline(always)]
    fn ea_bpx(&mut self) -> u16 {
        let o = self.fetch().wrapping_add(self.x);
        self.bp(o)
    }
    #[inline(always)]
    fn ea_bpy(&mut self) -> u16 {
        let o = self.fetch().wrapping_add(self.y);
        self.bp(o)
    }
    #[inline(always)]
    fn ea_abs(&mut self) -> u16 {
        self.fetch16()
    }
    #[inline(always)]
    fn ea_absx(&mut self) -> u16 {
        self.fetch16().wrapping_add(self.x as u16)
    }
    #[inline(always)]
    fn ea_absy(&mut self) -> u16 {
        self.fetch16().wrapping_add(self.y as u16)
    }
    #[inline(always)]
    fn ea_izx(&mut self) -> u16 {
        let o = self.fetch().wrapping_add(self.x);
        self.rd_bp16(o)
    }
    #[inline(always)]
    fn ea_izy(&mut self) -> u16 {
        let o = self.fetch();
        self.rd_bp16(o).wrapping_add(self.y as u16)
    }
    #[inline(always)]
    fn ea_izz(&mut self) -> u16 {
        let o = self.fetch();
        self.rd_bp16(o).wrapping_add(self.z as u16)
    }
    /// `(d,SP),Y`: 16-bit pointer at stack address + d, plus Y.
    fn ea_ispy(&mut self) -> u16 {
        let d = self.fetch();
        let at = if self.p & flag::E != 0 {
            (self.sp & 0xFF00) | ((self.sp as u8).wrapping_add(d) as u16)
        } else {
            self.sp.wrapping_add(d as u16)
        };
        let lo = self.rd(at) as u16;
        let hi = self.rd(at.wrapping_add(1)) as u16;
        (lo | hi << 8).wrapping_add(self.y as u16)
    }
    /// `[bp],Z`: 32-bit pointer in the base page (wrapping inside it) + Z, 28 bits.
    fn ea_flat(&mut self, add_z: bool) -> u32 {
        let o = self.fetch();
        let mut ptr = 0u32;
        for i in 0..4u8 {
            ptr |= (self.rd(self.bp(o.wrapping_add(i))) as u32) << (8 * i);
        }
        if add_z {
            ptr = ptr.wrapping_add(self.z as u32);
        }
        ptr & 0xFFF_FFFF
    }

    // --- ALU ---
    #[inline(always)]
    fn ora(&mut self, v: u8) {
        self.a |= v;
        self.set_nz(self.a);
    }
    #[inline(always)]
    fn and(&mut self, v: u8) {
        self.a &= v;
        self.set_nz(self.a);
    }
    #[inline(always)]
    fn eor(&mut self, v: u8) {
        self.a ^= v;
        self.set_nz(self.a);
    }
    #[inline(always)]
    fn cmp(&mut self, r: u8, v: u8) {
        let d = r.wrapping_sub(v);
        self.set_nz(d);
        self.set_flag(flag::C, r >= v);
    }
    #[inline(always)]
    fn bit(&mut self, v: u8) {
        self.p = (self.p & !(flag::N | flag::V | flag::Z))
            | (v & (flag::N | flag::V))
            | if self.a & v == 0 { flag::Z } else { 0 };
    }

    /// ADC; decimal mode follows the NMOS 6502 algorithm, flags included (spec §M1.2).
    #[inline(always)]
    fn adc(&mut self, v: u8) {
        let a = self.a as u16;
        let m = v as u16;
        let c = (self.p & flag::C) as u16;
        if self.p & flag::D == 0 {
            let r = a + m + c;
            self.set_flag(flag::C, r > 0xFF);
            self.set_flag(flag::V, (!(a ^ m) & (a ^ r) & 0x80) != 0);
            self.a = r as u8;
            self.set_nz(self.a);
        } else {
            let mut t = (a & 0x0F) + (m & 0x0F) + c;
            if t > 9 {
                t += 6;
            }
            t = if t <= 0x0F {
                (t & 0x0F) + (a & 0xF0) + (m & 0xF0)
            } else {
                (t & 0x0F) + (a & 0xF0) + (m & 0xF0) + 0x10
            };
            let zero = (a + m + c) & 0xFF == 0;
            let n = t & 0x80 != 0;
            let ov = ((a ^ t) & 0x80) != 0 && ((a ^ m) & 0x80) == 0;
            if (t & 0x1F0) > 0x90 {
                t += 0x60;
            }
            self.set_flag(flag::C, (t & 0xFF0) > 0xF0);
            self.set_flag(flag::Z, zero);
            self.set_flag(flag::N, n);
            self.set_flag(flag::V, ov);
            self.a = t as u8;
        }
    }

    /// SBC; decimal mode as the NMOS 6502 (flags from the binary result).
    #[inline(always)]
    fn sbc(&mut self, v: u8) {
        if self.p & flag::D == 0 {
            self.adc(!v);
            return;
        }
        let a = self.a as i16;
        let m = v as i16;
        let borrow = 1 - (self.p & flag::C) as i16;
        let r = a - m - borrow;
        let rb = r as u8;
        self.set_flag(flag::C, r >= 0);
        self.set_flag(flag::V, ((a ^ m) & (a ^ r) & 0x80) != 0);
        self.set_nz(rb);
        let mut lo = (a & 0x0F) - (m & 0x0F) - borrow;
        let mut hi = (a >> 4) - (m >> 4);
        if lo & 0x10 != 0 {
            lo -= 6;
            hi -= 1;
        }
        if hi & 0x10 != 0 {
            hi -= 6;
        }
        self.a = (((hi & 0x0F) << 4) | (lo & 0x0F)) as u8;
    }

    #[inline(always)]
    fn asl(&mut self, v: u8) -> u8 {
        self.set_flag(flag::C, v & 0x80 != 0);
        let r = v << 1;
        self.set_nz(r);
        r
    }
    #[inline(always)]
    fn lsr(&mut self, v: u8) -> u8 {
        self.set_flag(flag::C, v & 1 != 0);
        let r = v >> 1;
        self.set_nz(r);
        r
    }
    #[inline(always)]
    fn rol(&mut self, v: u8) -> u8 {
        let c = self.p & flag::C;
        self.set_flag(flag::C, v & 0x80 != 0);
        let r = v << 1 | c;
        self.set_nz(r);
        r
    }
    #[inline(always)]
    fn ror(&mut self, v: u8) -> u8 {
        let c = self.p & flag::C;
        self.set_flag(flag::C, v & 1 != 0);
        let r = v >> 1 | c << 7;
        self.set_nz(r);
        r
    }
    #[inline(always)]
    fn asr(&mut self, v: u8) -> u8 {
        self.set_flag(flag::C, v & 1 != 0);
        let r = ((v as i8) >> 1) as u8;
        self.set_nz(r);
        r
    }
    #[inline(always)]
    fn inc(&mut self, v: u8) -> u8 {
        let r = v.wrapping_add(1);
        self.set_nz(r);
        r
    }
    #[inline(always)]
    fn dec(&mut self, v: u8) -> u8 {
        let r = v.wrapping_sub(1);
        self.set_nz(r);
        r
    }

    /// 8-bit relative branch; returns the extra cycles (2 when taken, spec §M1.4).
    #[inline(always)]
    fn branch8(&mut self, cond: bool) -> u64 {
        let off = self.fetch() as i8;
        if cond {
            self.pc = self.pc.wrapping_add(off as i16 as u16);
            // +2 at 40.5 MHz (measured); +1 bus cycle in the slow modes.
            if self.slow_factor == 1 {
                2
            } else {
                self.slow_factor as u64
            }
        } else {
            0
        }
    }

    /// 16-bit branch: target = opcode address + 2 + offset (spec §M1.3).
    #[inline(always)]
    fn branch16(&mut self, cond: bool) -> u64 {
        let off = self.fetch16();
        if cond {
            self.pc = self.pc.wrapping_sub(1).wrapping_add(off);
        }
        0
    }

    /// BBRn/BBSn: test bit `n` of a base-page byte, branch relative to the end of the instruction.
    #[inline(always)]
    fn bbx(&mut self, n: u8, set: bool) -> u64 {
        let addr = self.ea_bp();
        let v = self.rd(addr);
        let off = self.fetch() as i8;
        if ((v >> n) & 1 != 0) == set {
            self.pc = self.pc.wrapping_add(off as i16 as u16);
        }
        0
    }

    #[inline(always)]
    fn rmw(&mut self, addr: u16, f: fn(&mut Machine, u8) -> u8) {
        let v = self.rd(addr);
        let r = f(self, v);
        if addr == vic::IRQ_FLAGS {
            // The 6502's dummy write of the old value is kept for $D019 only (spec §M1.2), so
            // that `INC $D019` acknowledges the VIC interrupt.
            self.wr(addr, v);
        }
        self.wr(addr, r);
    }
}

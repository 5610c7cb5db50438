//! The 45GS02 in its 4510 personality (spec §M1): all 256 base opcodes, the E flag and 16-bit stack,
//! MAP/EOM, 16-bit branches, the `42 42` quad prefix, the `EA` flat-address prefix and `42 42 EA`.
//!
//! One `match` on the opcode; memory goes through the page-table fast path in `bus.rs`. Cycles are
//! charged from the measured 40.5 MHz table (`opcodes::CYCLES_FAST`) plus the documented extras: a
//! taken 8-bit branch costs 2 more, prefixed forms cost the measured totals in `QUAD_CYCLES` etc.

use super::machine::{flag, Machine};

/// Total cycles (prefix bytes included) of `42 42 op` quad instructions at 40.5 MHz, measured on real
/// hardware with MEGAcyc (xemu `cpu65_mega65_timings.h`); 0 = not a quad opcode (RESQ).
pub(crate) const QUAD_CYCLES: [u8; 256] = {
    let mut t = [0u8; 256];
    let list: [(usize, u8); 59] = [
        (0x05, 11),
        (0x06, 17),
        (0x0A, 4),
        (0x0D, 12),
        (0x0E, 18),
        (0x12, 14),
        (0x16, 17),
        (0x1A, 4),
        (0x1E, 18),
        (0x24, 11),
        (0x25, 11),
        (0x26, 17),
        (0x2A, 4),
        (0x2C, 12),
        (0x2D, 12),
        (0x2E, 18),
        (0x32, 14),
        (0x36, 17),
        (0x3A, 4),
        (0x3E, 18),
        (0x43, 4),
        (0x44, 17),
        (0x45, 11),
        (0x46, 17),
        (0x4A, 4),
        (0x4D, 12),
        (0x4E, 18),
        (0x52, 14),
        (0x54, 17),
        (0x56, 17),
        (0x5E, 18),
        (0x65, 11),
        (0x66, 17),
        (0x6A, 4),
        (0x6D, 12),
        (0x6E, 18),
        (0x72, 14),
        (0x76, 17),
        (0x7E, 18),
        (0x85, 9),
        (0x8D, 10),
        (0x92, 12),
        (0xA5, 10),
        (0xAD, 11),
        (0xB2, 13),
        (0xC5, 11),
        (0xC6, 17),
        (0xCD, 12),
        (0xCE, 18),
        (0xD2, 14),
        (0xD6, 17),
        (0xDE, 18),
        (0xE5, 11),
        (0xE6, 17),
        (0xED, 12),
        (0xEE, 18),
        (0xF2, 14),
        (0xF6, 17),
        (0xFE, 18),
    ];
    let mut i = 0;
    while i < list.len() {
        t[list[i].0] = list[i].1;
        i += 1;
    }
    t
};

/// Total cycles of `EA op` flat instructions (index = op >> 5), same source.
const FLAT_CYCLES: [u8; 8] = [10, 10, 10, 14, 9, 13, 10, 10];
/// Total cycles of `42 42 EA op` flat quad instructions (index = op >> 5), same source.
const FLAT_QUAD_CYCLES: [u8; 8] = [17, 17, 17, 17, 15, 16, 17, 17];

/// Where a quad operand lives.
#[derive(Clone, Copy)]
enum QAddr {
    /// Base page: 4 bytes at B:nn.. wrapping inside the page.
    Bp(u8),
    /// 16-bit CPU address (through MAP).
    Cpu(u16),
    /// 28-bit physical address (flat `[bp]` forms).
    Phys(u32),
}

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
        if addr == 0xD019 {
            // The 6502's dummy write of the old value is kept for $D019 only (spec §M1.2), so
            // that `INC $D019` acknowledges the VIC interrupt.
            self.wr(addr, v);
        }
        self.wr(addr, r);
    }

    /// Executes one instruction (prefixes and their instruction count as one).
    pub fn step(&mut self) {
        self.exec();
        self.instructions += 1;
    }

    /// One instruction without counting it (the run loop counts in a register).
    #[inline(always)]
    pub(crate) fn exec(&mut self) {
        let op = self.fetch();
        let mut cyc = self.cost[op as usize] as u64;
        match op {
            0x00 => {
                // BRK: push PC+1 (6502 convention), P with B set.
                let ret = self.pc.wrapping_add(1);
                self.push((ret >> 8) as u8);
                self.push(ret as u8);
                self.push(self.p | flag::B);
                self.p |= flag::I;
                let lo = self.rd(0xFFFE) as u16;
                let hi = self.rd(0xFFFF) as u16;
                self.pc = lo | hi << 8;
            }
            0x01 => {
                let a = self.ea_izx();
                let v = self.rd(a);
                self.ora(v)
            }
            0x02 => {
                self.p &= !flag::E;
            }
            0x03 => self.p |= flag::E,
            0x04 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.set_flag(flag::Z, v & self.a == 0);
                self.wr(a, v | self.a);
            }
            0x05 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.ora(v)
            }
            0x06 => {
                let a = self.ea_bp();
                self.rmw(a, Machine::asl)
            }
            0x07 | 0x17 | 0x27 | 0x37 | 0x47 | 0x57 | 0x67 | 0x77 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.wr(a, v & !(1 << (op >> 4)));
            }
            0x87 | 0x97 | 0xA7 | 0xB7 | 0xC7 | 0xD7 | 0xE7 | 0xF7 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.wr(a, v | 1 << ((op >> 4) & 7));
            }
            0x0F | 0x1F | 0x2F | 0x3F | 0x4F | 0x5F | 0x6F | 0x7F => {
                cyc += self.bbx(op >> 4, false)
            }
            0x8F | 0x9F | 0xAF | 0xBF | 0xCF | 0xDF | 0xEF | 0xFF => {
                cyc += self.bbx((op >> 4) & 7, true)
            }
            0x08 => self.push(self.p | flag::B),
            0x09 => {
                let v = self.fetch();
                self.ora(v)
            }
            0x0A => self.a = self.asl(self.a),
            0x0B => {
                self.y = (self.sp >> 8) as u8;
                self.set_nz(self.y)
            }
            0x0C => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.set_flag(flag::Z, v & self.a == 0);
                self.wr(a, v | self.a);
            }
            0x0D => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.ora(v)
            }
            0x0E => {
                let a = self.ea_abs();
                self.rmw(a, Machine::asl)
            }
            0x10 => cyc += self.branch8(self.p & flag::N == 0),
            0x11 => {
                let a = self.ea_izy();
                let v = self.rd(a);
                self.ora(v)
            }
            0x12 => {
                let a = self.ea_izz();
                let v = self.rd(a);
                self.ora(v)
            }
            0x13 => cyc += self.branch16(self.p & flag::N == 0),
            0x14 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.set_flag(flag::Z, v & self.a == 0);
                self.wr(a, v & !self.a);
            }
            0x15 => {
                let a = self.ea_bpx();
                let v = self.rd(a);
                self.ora(v)
            }
            0x16 => {
                let a = self.ea_bpx();
                self.rmw(a, Machine::asl)
            }
            0x18 => self.p &= !flag::C,
            0x19 => {
                let a = self.ea_absy();
                let v = self.rd(a);
                self.ora(v)
            }
            0x1A => self.a = self.inc(self.a),
            0x1B => self.z = self.inc(self.z),
            0x1C => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.set_flag(flag::Z, v & self.a == 0);
                self.wr(a, v & !self.a);
            }
            0x1D => {
                let a = self.ea_absx();
                let v = self.rd(a);
                self.ora(v)
            }
            0x1E => {
                let a = self.ea_absx();
                self.rmw(a, Machine::asl)
            }
            0x20 => {
                let target = self.fetch16();
                let ret = self.pc.wrapping_sub(1);
                self.push((ret >> 8) as u8);
                self.push(ret as u8);
                self.pc = target;
            }
            0x21 => {
                let a = self.ea_izx();
                let v = self.rd(a);
                self.and(v)
            }
            0x22 | 0x23 => {
                let mut ptr = self.fetch16();
                if op == 0x23 {
                    ptr = ptr.wrapping_add(self.x as u16);
                }
                let ret = self.pc.wrapping_sub(1);
                self.push((ret >> 8) as u8);
                self.push(ret as u8);
                let lo = self.rd(ptr) as u16;
                let hi = self.rd(ptr.wrapping_add(1)) as u16;
                self.pc = lo | hi << 8;
            }
            0x24 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.bit(v)
            }
            0x25 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.and(v)
            }
            0x26 => {
                let a = self.ea_bp();
                self.rmw(a, Machine::rol)
            }
            0x28 => {
                // PLP keeps E (the stack mode) and ignores B.
                let v = self.pop();
                self.p = (v & !(flag::B | flag::E)) | (self.p & flag::E);
                self.request_service();
            }
            0x29 => {
                let v = self.fetch();
                self.and(v)
            }
            0x2A => self.a = self.rol(self.a),
            0x2B => self.sp = (self.sp & 0x00FF) | (self.y as u16) << 8,
            0x2C => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.bit(v)
            }
            0x2D => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.and(v)
            }
            0x2E => {
                let a = self.ea_abs();
                self.rmw(a, Machine::rol)
            }
            0x30 => cyc += self.branch8(self.p & flag::N != 0),
            0x31 => {
                let a = self.ea_izy();
                let v = self.rd(a);
                self.and(v)
            }
            0x32 => {
                let a = self.ea_izz();
                let v = self.rd(a);
                self.and(v)
            }
            0x33 => cyc += self.branch16(self.p & flag::N != 0),
            0x34 => {
                let a = self.ea_bpx();
                let v = self.rd(a);
                self.bit(v)
            }
            0x35 => {
                let a = self.ea_bpx();
                let v = self.rd(a);
                self.and(v)
            }
            0x36 => {
                let a = self.ea_bpx();
                self.rmw(a, Machine::rol)
            }
            0x38 => self.p |= flag::C,
            0x39 => {
                let a = self.ea_absy();
                let v = self.rd(a);
                self.and(v)
            }
            0x3A => self.a = self.dec(self.a),
            0x3B => self.z = self.dec(self.z),
            0x3C => {
                let a = self.ea_absx();
                let v = self.rd(a);
                self.bit(v)
            }
            0x3D => {
                let a = self.ea_absx();
                let v = self.rd(a);
                self.and(v)
            }
            0x3E => {
                let a = self.ea_absx();
                self.rmw(a, Machine::rol)
            }
            0x40 => {
                let v = self.pop();
                self.p = (v & !(flag::B | flag::E)) | (self.p & flag::E);
                let lo = self.pop() as u16;
                let hi = self.pop() as u16;
                self.pc = lo | hi << 8;
                self.request_service();
            }
            0x41 => {
                let a = self.ea_izx();
                let v = self.rd(a);
                self.eor(v)
            }
            0x42 => {
                if self.rd(self.pc) == 0x42 {
                    cyc = self.quad_prefix();
                } else {
                    self.a = self.a.wrapping_neg();
                    self.set_nz(self.a);
                }
            }
            0x43 => self.a = self.asr(self.a),
            0x44 => {
                let a = self.ea_bp();
                self.rmw(a, Machine::asr)
            }
            0x45 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.eor(v)
            }
            0x46 => {
                let a = self.ea_bp();
                self.rmw(a, Machine::lsr)
            }
            0x48 => self.push(self.a),
            0x49 => {
                let v = self.fetch();
                self.eor(v)
            }
            0x4A => self.a = self.lsr(self.a),
            0x4B => {
                self.z = self.a;
                self.set_nz(self.z)
            }
            0x4C => self.pc = self.fetch16(),
            0x4D => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.eor(v)
            }
            0x4E => {
                let a = self.ea_abs();
                self.rmw(a, Machine::lsr)
            }
            0x50 => cyc += self.branch8(self.p & flag::V == 0),
            0x51 => {
                let a = self.ea_izy();
                let v = self.rd(a);
                self.eor(v)
            }
            0x52 => {
                let a = self.ea_izz();
                let v = self.rd(a);
                self.eor(v)
            }
            0x53 => cyc += self.branch16(self.p & flag::V == 0),
            0x54 => {
                let a = self.ea_bpx();
                self.rmw(a, Machine::asr)
            }
            0x55 => {
                let a = self.ea_bpx();
                let v = self.rd(a);
                self.eor(v)
            }
            0x56 => {
                let a = self.ea_bpx();
                self.rmw(a, Machine::lsr)
            }
            0x58 => {
                self.p &= !flag::I;
                self.request_service();
            }
            0x59 => {
                let a = self.ea_absy();
                let v = self.rd(a);
                self.eor(v)
            }
            0x5A => self.push(self.y),
            0x5B => self.b = self.a,
            0x5C => self.exec_map(),
            0x5D => {
                let a = self.ea_absx();
                let v = self.rd(a);
                self.eor(v)
            }
            0x5E => {
                let a = self.ea_absx();
                self.rmw(a, Machine::lsr)
            }
            0x60 | 0x62 => {
                let n = if op == 0x62 { self.fetch() } else { 0 };
                let lo = self.pop() as u16;
                let hi = self.pop() as u16;
                self.pc = (lo | hi << 8).wrapping_add(1);
                for _ in 0..n {
                    // RTS #n: drop n more bytes from the stack.
                    self.pop();
                }
            }
            0x61 => {
                let a = self.ea_izx();
                let v = self.rd(a);
                self.adc(v)
            }
            0x63 => {
                let off = self.fetch16();
                let ret = self.pc.wrapping_sub(1);
                self.push((ret >> 8) as u8);
                self.push(ret as u8);
                self.pc = self.pc.wrapping_sub(1).wrapping_add(off);
            }
            0x64 => {
                let a = self.ea_bp();
                self.wr(a, self.z)
            }
            0x65 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.adc(v)
            }
            0x66 => {
                let a = self.ea_bp();
                self.rmw(a, Machine::ror)
            }
            0x68 => {
                self.a = self.pop();
                self.set_nz(self.a)
            }
            0x69 => {
                let v = self.fetch();
                self.adc(v)
            }
            0x6A => self.a = self.ror(self.a),
            0x6B => {
                self.a = self.z;
                self.set_nz(self.a)
            }
            0x6C | 0x7C => {
                let mut ptr = self.fetch16();
                if op == 0x7C {
                    ptr = ptr.wrapping_add(self.x as u16);
                }
                let lo = self.rd(ptr) as u16;
                let hi = self.rd(ptr.wrapping_add(1)) as u16;
                self.pc = lo | hi << 8;
            }
            0x6D => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.adc(v)
            }
            0x6E => {
                let a = self.ea_abs();
                self.rmw(a, Machine::ror)
            }
            0x70 => cyc += self.branch8(self.p & flag::V != 0),
            0x71 => {
                let a = self.ea_izy();
                let v = self.rd(a);
                self.adc(v)
            }
            0x72 => {
                let a = self.ea_izz();
                let v = self.rd(a);
                self.adc(v)
            }
            0x73 => cyc += self.branch16(self.p & flag::V != 0),
            0x74 => {
                let a = self.ea_bpx();
                self.wr(a, self.z)
            }
            0x75 => {
                let a = self.ea_bpx();
                let v = self.rd(a);
                self.adc(v)
            }
            0x76 => {
                let a = self.ea_bpx();
                self.rmw(a, Machine::ror)
            }
            0x78 => self.p |= flag::I,
            0x79 => {
                let a = self.ea_absy();
                let v = self.rd(a);
                self.adc(v)
            }
            0x7A => {
                self.y = self.pop();
                self.set_nz(self.y)
            }
            0x7B => {
                self.a = self.b;
                self.set_nz(self.a)
            }
            0x7D => {
                let a = self.ea_absx();
                let v = self.rd(a);
                self.adc(v)
            }
            0x7E => {
                let a = self.ea_absx();
                self.rmw(a, Machine::ror)
            }
            0x80 => cyc += self.branch8(true),
            0x81 => {
                let a = self.ea_izx();
                self.wr(a, self.a)
            }
            0x82 => {
                let a = self.ea_ispy();
                self.wr(a, self.a)
            }
            0x83 => cyc += self.branch16(true),
            0x84 => {
                let a = self.ea_bp();
                self.wr(a, self.y)
            }
            0x85 => {
                let a = self.ea_bp();
                self.wr(a, self.a)
            }
            0x86 => {
                let a = self.ea_bp();
                self.wr(a, self.x)
            }
            0x88 => self.y = self.dec(self.y),
            0x89 => {
                // BIT #imm sets N and V from the operand like every BIT mode (65CE02): $89 is
                // I_BIT in mega65-core's gs4510.vhdl opcode table (line 1056), immediate operands
                // go through MicrocodeInterpret (lines 7428, 7714) and mcBIT sets Z from A AND the
                // operand, N and V from its bits 7 and 6 (lines 8551-8555). Not the 65C02 rule
                // (Z only), which xemu's 4510 core follows.
                let v = self.fetch();
                self.bit(v);
            }
            0x8A => {
                self.a = self.x;
                self.set_nz(self.a)
            }
            0x8B => {
                let a = self.ea_absx();
                self.wr(a, self.y)
            }
            0x8C => {
                let a = self.ea_abs();
                self.wr(a, self.y)
            }
            0x8D => {
                let a = self.ea_abs();
                self.wr(a, self.a)
            }
            0x8E => {
                let a = self.ea_abs();
                self.wr(a, self.x)
            }
            0x90 => cyc += self.branch8(self.p & flag::C == 0),
            0x91 => {
                let a = self.ea_izy();
                self.wr(a, self.a)
            }
            0x92 => {
                let a = self.ea_izz();
                self.wr(a, self.a)
            }
            0x93 => cyc += self.branch16(self.p & flag::C == 0),
            0x94 => {
                let a = self.ea_bpx();
                self.wr(a, self.y)
            }
            0x95 => {
                let a = self.ea_bpx();
                self.wr(a, self.a)
            }
            0x96 => {
                let a = self.ea_bpy();
                self.wr(a, self.x)
            }
            0x98 => {
                self.a = self.y;
                self.set_nz(self.a)
            }
            0x99 => {
                let a = self.ea_absy();
                self.wr(a, self.a)
            }
            0x9A => self.sp = (self.sp & 0xFF00) | self.x as u16,
            0x9B => {
                let a = self.ea_absy();
                self.wr(a, self.x)
            }
            0x9C => {
                let a = self.ea_abs();
                self.wr(a, self.z)
            }
            0x9D => {
                let a = self.ea_absx();
                self.wr(a, self.a)
            }
            0x9E => {
                let a = self.ea_absx();
                self.wr(a, self.z)
            }
            0xA0 => {
                self.y = self.fetch();
                self.set_nz(self.y)
            }
            0xA1 => {
                let a = self.ea_izx();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xA2 => {
                self.x = self.fetch();
                self.set_nz(self.x)
            }
            0xA3 => {
                self.z = self.fetch();
                self.set_nz(self.z)
            }
            0xA4 => {
                let a = self.ea_bp();
                self.y = self.rd(a);
                self.set_nz(self.y)
            }
            0xA5 => {
                let a = self.ea_bp();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xA6 => {
                let a = self.ea_bp();
                self.x = self.rd(a);
                self.set_nz(self.x)
            }
            0xA8 => {
                self.y = self.a;
                self.set_nz(self.y)
            }
            0xA9 => {
                self.a = self.fetch();
                self.set_nz(self.a)
            }
            0xAA => {
                self.x = self.a;
                self.set_nz(self.x)
            }
            0xAB => {
                let a = self.ea_abs();
                self.z = self.rd(a);
                self.set_nz(self.z)
            }
            0xAC => {
                let a = self.ea_abs();
                self.y = self.rd(a);
                self.set_nz(self.y)
            }
            0xAD => {
                let a = self.ea_abs();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xAE => {
                let a = self.ea_abs();
                self.x = self.rd(a);
                self.set_nz(self.x)
            }
            0xB0 => cyc += self.branch8(self.p & flag::C != 0),
            0xB1 => {
                let a = self.ea_izy();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xB2 => {
                let a = self.ea_izz();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xB3 => cyc += self.branch16(self.p & flag::C != 0),
            0xB4 => {
                let a = self.ea_bpx();
                self.y = self.rd(a);
                self.set_nz(self.y)
            }
            0xB5 => {
                let a = self.ea_bpx();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xB6 => {
                let a = self.ea_bpy();
                self.x = self.rd(a);
                self.set_nz(self.x)
            }
            0xB8 => self.p &= !flag::V,
            0xB9 => {
                let a = self.ea_absy();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xBA => {
                self.x = self.sp as u8;
                self.set_nz(self.x)
            }
            0xBB => {
                let a = self.ea_absx();
                self.z = self.rd(a);
                self.set_nz(self.z)
            }
            0xBC => {
                let a = self.ea_absx();
                self.y = self.rd(a);
                self.set_nz(self.y)
            }
            0xBD => {
                let a = self.ea_absx();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xBE => {
                let a = self.ea_absy();
                self.x = self.rd(a);
                self.set_nz(self.x)
            }
            0xC0 => {
                let v = self.fetch();
                self.cmp(self.y, v)
            }
            0xC1 => {
                let a = self.ea_izx();
                let v = self.rd(a);
                self.cmp(self.a, v)
            }
            0xC2 => {
                let v = self.fetch();
                self.cmp(self.z, v)
            }
            0xC3 | 0xE3 => {
                // DEW / INW: 16-bit base-page word, N/Z from the 16-bit result, C unchanged.
                let o = self.fetch();
                let w = self.rd_bp16(o);
                let r = if op == 0xC3 {
                    w.wrapping_sub(1)
                } else {
                    w.wrapping_add(1)
                };
                self.wr(self.bp(o), r as u8);
                self.wr(self.bp(o.wrapping_add(1)), (r >> 8) as u8);
                self.set_flag(flag::Z, r == 0);
                self.set_flag(flag::N, r & 0x8000 != 0);
            }
            0xC4 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.cmp(self.y, v)
            }
            0xC5 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.cmp(self.a, v)
            }
            0xC6 => {
                let a = self.ea_bp();
                self.rmw(a, Machine::dec)
            }
            0xC8 => self.y = self.inc(self.y),
            0xC9 => {
                let v = self.fetch();
                self.cmp(self.a, v)
            }
            0xCA => self.x = self.dec(self.x),
            0xCB | 0xEB => {
                // ASW / ROW: 16-bit shift left of an absolute word (ROW through C).
                let a = self.ea_abs();
                let w = self.rd(a) as u16 | (self.rd(a.wrapping_add(1)) as u16) << 8;
                let c_in = if op == 0xEB {
                    (self.p & flag::C) as u16
                } else {
                    0
                };
                let r = w << 1 | c_in;
                self.set_flag(flag::C, w & 0x8000 != 0);
                self.set_flag(flag::Z, r == 0);
                self.set_flag(flag::N, r & 0x8000 != 0);
                self.wr(a, r as u8);
                self.wr(a.wrapping_add(1), (r >> 8) as u8);
            }
            0xCC => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.cmp(self.y, v)
            }
            0xCD => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.cmp(self.a, v)
            }
            0xCE => {
                let a = self.ea_abs();
                self.rmw(a, Machine::dec)
            }
            0xD0 => cyc += self.branch8(self.p & flag::Z == 0),
            0xD1 => {
                let a = self.ea_izy();
                let v = self.rd(a);
                self.cmp(self.a, v)
            }
            0xD2 => {
                let a = self.ea_izz();
                let v = self.rd(a);
                self.cmp(self.a, v)
            }
            0xD3 => cyc += self.branch16(self.p & flag::Z == 0),
            0xD4 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.cmp(self.z, v)
            }
            0xD5 => {
                let a = self.ea_bpx();
                let v = self.rd(a);
                self.cmp(self.a, v)
            }
            0xD6 => {
                let a = self.ea_bpx();
                self.rmw(a, Machine::dec)
            }
            0xD8 => self.p &= !flag::D,
            0xD9 => {
                let a = self.ea_absy();
                let v = self.rd(a);
                self.cmp(self.a, v)
            }
            0xDA => self.push(self.x),
            0xDB => self.push(self.z),
            0xDC => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.cmp(self.z, v)
            }
            0xDD => {
                let a = self.ea_absx();
                let v = self.rd(a);
                self.cmp(self.a, v)
            }
            0xDE => {
                let a = self.ea_absx();
                self.rmw(a, Machine::dec)
            }
            0xE0 => {
                let v = self.fetch();
                self.cmp(self.x, v)
            }
            0xE1 => {
                let a = self.ea_izx();
                let v = self.rd(a);
                self.sbc(v)
            }
            0xE2 => {
                let a = self.ea_ispy();
                self.a = self.rd(a);
                self.set_nz(self.a)
            }
            0xE4 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.cmp(self.x, v)
            }
            0xE5 => {
                let a = self.ea_bp();
                let v = self.rd(a);
                self.sbc(v)
            }
            0xE6 => {
                let a = self.ea_bp();
                self.rmw(a, Machine::inc)
            }
            0xE8 => self.x = self.inc(self.x),
            0xE9 => {
                let v = self.fetch();
                self.sbc(v)
            }
            0xEA => {
                // EOM clears the MAP interrupt latch; before a ($nn),Z opcode it is the flat prefix.
                if self.map_inhibit {
                    self.map_inhibit = false;
                    self.request_service();
                }
                let next = self.rd(self.pc);
                if next & 0x1F == 0x12 {
                    self.pc = self.pc.wrapping_add(1);
                    cyc = self.flat_op(next);
                }
            }
            0xEC => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.cmp(self.x, v)
            }
            0xED => {
                let a = self.ea_abs();
                let v = self.rd(a);
                self.sbc(v)
            }
            0xEE => {
                let a = self.ea_abs();
                self.rmw(a, Machine::inc)
            }
            0xF0 => cyc += self.branch8(self.p & flag::Z != 0),
            0xF1 => {
                let a = self.ea_izy();
                let v = self.rd(a);
                self.sbc(v)
            }
            0xF2 => {
                let a = self.ea_izz();
                let v = self.rd(a);
                self.sbc(v)
            }
            0xF3 => cyc += self.branch16(self.p & flag::Z != 0),
            0xF4 => {
                // PHW #$nnnn pushes the low byte first (spec §M1.1).
                let w = self.fetch16();
                self.push(w as u8);
                self.push((w >> 8) as u8);
            }
            0xF5 => {
                let a = self.ea_bpx();
                let v = self.rd(a);
                self.sbc(v)
            }
            0xF6 => {
                let a = self.ea_bpx();
                self.rmw(a, Machine::inc)
            }
            0xF8 => self.p |= flag::D,
            0xF9 => {
                let a = self.ea_absy();
                let v = self.rd(a);
                self.sbc(v)
            }
            0xFA => {
                self.x = self.pop();
                self.set_nz(self.x)
            }
            0xFB => {
                self.z = self.pop();
                self.set_nz(self.z)
            }
            0xFC => {
                let a = self.ea_abs();
                let lo = self.rd(a);
                let hi = self.rd(a.wrapping_add(1));
                self.push(lo);
                self.push(hi);
            }
            0xFD => {
                let a = self.ea_absx();
                let v = self.rd(a);
                self.sbc(v)
            }
            0xFE => {
                let a = self.ea_absx();
                self.rmw(a, Machine::inc)
            }
        }
        self.cycles += cyc;
    }

    /// MAP (spec §M1.5): X/A program the low half, Z/Y the high half; X = $0F / Z = $0F select the
    /// megabyte instead. Blocks interrupts until EOM.
    fn exec_map(&mut self) {
        if self.x == 0x0F {
            self.map.lo_mb = self.a;
        } else {
            self.map.lo_offset = ((self.x as u32 & 0x0F) << 16) | (self.a as u32) << 8;
            self.map.mask = (self.map.mask & 0xF0) | (self.x >> 4);
        }
        if self.z == 0x0F {
            self.map.hi_mb = self.y;
        } else {
            self.map.hi_offset = ((self.z as u32 & 0x0F) << 16) | (self.y as u32) << 8;
            self.map.mask = (self.map.mask & 0x0F) | (self.z & 0xF0);
        }
        self.map_inhibit = true;
        self.rebuild_view();
    }

    /// `EA op`: an ($nn),Z opcode with a 32-bit flat pointer. Returns the cycle total.
    fn flat_op(&mut self, op: u8) -> u64 {
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

    /// `42 42 …`: the second NEG is at PC. Executes the quad instruction (or, for a reserved
    /// combination, just the two NEGs, leaving the next opcode to run on its own).
    fn quad_prefix(&mut self) -> u64 {
        // The prefixes really execute: NEG NEG restores A and leaves N/Z from A.
        self.set_nz(self.a);
        let after = self.pc.wrapping_add(1);
        let op = self.rd(after);
        if op == 0xEA {
            let op2 = self.rd(after.wrapping_add(1));
            if op2 & 0x1F == 0x12 {
                self.pc = after.wrapping_add(2);
                let addr = self.ea_flat(op2 == 0xB2);
                self.quad_exec(op2, QAddr::Phys(addr));
                return FLAT_QUAD_CYCLES[(op2 >> 5) as usize] as u64 * self.slow_factor as u64;
            }
        }
        let total = QUAD_CYCLES[op as usize];
        if total == 0 {
            // Reserved: NEG NEG only (2 cycles); the opcode executes as the next instruction.
            self.pc = after;
            return 2 * self.slow_factor as u64;
        }
        self.pc = after.wrapping_add(1);
        let target = match op {
            0x0A | 0x2A | 0x4A | 0x6A | 0x43 | 0x1A | 0x3A => None,
            0x05 | 0x06 | 0x24 | 0x25 | 0x26 | 0x44 | 0x45 | 0x46 | 0x65 | 0x66 | 0x85 | 0xA5
            | 0xC5 | 0xC6 | 0xE5 | 0xE6 => Some(QAddr::Bp(self.fetch())),
            0x16 | 0x36 | 0x54 | 0x56 | 0x76 | 0xD6 | 0xF6 => {
                Some(QAddr::Bp(self.fetch().wrapping_add(self.x)))
            }
            0x1E | 0x3E | 0x5E | 0x7E | 0xDE | 0xFE => Some(QAddr::Cpu(self.ea_absx())),
            0x12 | 0x32 | 0x52 | 0x72 | 0x92 | 0xB2 | 0xD2 | 0xF2 => {
                let o = self.fetch();
                let mut ptr = self.rd_bp16(o);
                if op == 0xB2 {
                    ptr = ptr.wrapping_add(self.z as u16);
                }
                Some(QAddr::Cpu(ptr))
            }
            _ => Some(QAddr::Cpu(self.ea_abs())),
        };
        match target {
            Some(t) => self.quad_exec(op, t),
            None => self.quad_acc(op),
        }
        total as u64 * self.slow_factor as u64
    }

    fn q(&self) -> u32 {
        u32::from_le_bytes([self.a, self.x, self.y, self.z])
    }

    fn set_q(&mut self, v: u32) {
        let [a, x, y, z] = v.to_le_bytes();
        self.a = a;
        self.x = x;
        self.y = y;
        self.z = z;
    }

    fn set_nz32(&mut self, v: u32) {
        self.set_flag(flag::N, v & 0x8000_0000 != 0);
        self.set_flag(flag::Z, v == 0);
    }

    fn q_byte_addr(&self, t: QAddr, i: u8) -> Result<u16, u32> {
        match t {
            QAddr::Bp(o) => Ok(self.bp(o.wrapping_add(i))),
            QAddr::Cpu(a) => Ok(a.wrapping_add(i as u16)),
            QAddr::Phys(p) => Err(p.wrapping_add(i as u32)),
        }
    }

    fn q_read(&mut self, t: QAddr) -> u32 {
        let mut v = 0u32;
        for i in 0..4u8 {
            let b = match self.q_byte_addr(t, i) {
                Ok(a) => self.rd(a),
                Err(p) => self.read_phys(p),
            };
            v |= (b as u32) << (8 * i);
        }
        v
    }

    fn q_write(&mut self, t: QAddr, v: u32) {
        for i in 0..4u8 {
            let b = (v >> (8 * i)) as u8;
            match self.q_byte_addr(t, i) {
                Ok(a) => self.wr(a, b),
                Err(p) => self.write_phys(p, b),
            }
        }
    }

    /// Shift/rotate/inc/dec of a 32-bit value with flags (shared by Q and memory forms).
    fn q_unary(&mut self, op: u8, v: u32) -> u32 {
        let c = (self.p & flag::C) as u32;
        let r = match op {
            0x0A | 0x06 | 0x0E | 0x16 | 0x1E => {
                self.set_flag(flag::C, v & 0x8000_0000 != 0);
                v << 1
            }
            0x2A | 0x26 | 0x2E | 0x36 | 0x3E => {
                self.set_flag(flag::C, v & 0x8000_0000 != 0);
                v << 1 | c
            }
            0x4A | 0x46 | 0x4E | 0x56 | 0x5E => {
                self.set_flag(flag::C, v & 1 != 0);
                v >> 1
            }
            0x6A | 0x66 | 0x6E | 0x76 | 0x7E => {
                self.set_flag(flag::C, v & 1 != 0);
                v >> 1 | c << 31
            }
            0x43 | 0x44 | 0x54 => {
                self.set_flag(flag::C, v & 1 != 0);
                ((v as i32) >> 1) as u32
            }
            0x1A | 0xE6 | 0xEE | 0xF6 | 0xFE => v.wrapping_add(1),
            _ => v.wrapping_sub(1), // DEQ: 3A C6 CE D6 DE
        };
        self.set_nz32(r);
        r
    }

    fn quad_acc(&mut self, op: u8) {
        let v = self.q();
        let r = self.q_unary(op, v);
        self.set_q(r);
    }

    fn quad_exec(&mut self, op: u8, t: QAddr) {
        match op & 0x1F {
            // Read-modify-write forms ($x6, $xE, ASRQ $44/$54).
            0x06 | 0x0E | 0x16 | 0x1E if op != 0x86 && op != 0x8E => {
                let v = self.q_read(t);
                let r = self.q_unary(op, v);
                self.q_write(t, r);
            }
            0x04 | 0x14 if op == 0x44 || op == 0x54 => {
                let v = self.q_read(t);
                let r = self.q_unary(op, v);
                self.q_write(t, r);
            }
            _ => {
                if op >> 5 == 4 {
                    // STQ
                    let q = self.q();
                    self.q_write(t, q);
                    return;
                }
                let m = self.q_read(t);
                let q = self.q();
                match op {
                    0x24 | 0x2C => {
                        self.set_flag(flag::N, m & 0x8000_0000 != 0);
                        self.set_flag(flag::V, m & 0x4000_0000 != 0);
                        self.set_flag(flag::Z, q & m == 0);
                    }
                    _ => match op >> 5 {
                        0 => {
                            let r = q | m;
                            self.set_nz32(r);
                            self.set_q(r)
                        }
                        1 => {
                            let r = q & m;
                            self.set_nz32(r);
                            self.set_q(r)
                        }
                        2 => {
                            let r = q ^ m;
                            self.set_nz32(r);
                            self.set_q(r)
                        }
                        3 => self.adcq(m),
                        5 => {
                            self.set_nz32(m);
                            self.set_q(m)
                        }
                        6 => {
                            let r = q.wrapping_sub(m);
                            self.set_nz32(r);
                            self.set_flag(flag::C, q >= m);
                        }
                        _ => self.adcq(!m),
                    },
                }
            }
        }
    }

    /// ADCQ (binary only): C = carry out of bit 31, V = signed overflow at bit 31.
    fn adcq(&mut self, m: u32) {
        let q = self.q();
        let r = q as u64 + m as u64 + (self.p & flag::C) as u64;
        let r32 = r as u32;
        self.set_flag(flag::C, r > 0xFFFF_FFFF);
        self.set_flag(flag::V, (!(q ^ m) & (q ^ r32) & 0x8000_0000) != 0);
        self.set_nz32(r32);
        self.set_q(r32);
    }
}

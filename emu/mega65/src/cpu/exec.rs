//! The opcode switch: one `match` over the 256 base opcodes (spec §M1.4); the prefixes hand over
//! to `flat.rs` and `quad.rs`, MAP to `map.rs`.

use crate::machine::{flag, Machine};

impl Machine {
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
}

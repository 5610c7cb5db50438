//! The `42 42` quad prefix (spec §M1.6): 32-bit operations on Q = A:X:Y:Z, and with `EA` the
//! flat-pointer forms.

use crate::machine::{flag, Machine};
use crate::opcodes::{FLAT_QUAD_CYCLES, QUAD_CYCLES};

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
    /// `42 42 …`: the second NEG is at PC. Executes the quad instruction (or, for a reserved
    /// combination, just the two NEGs, leaving the next opcode to run on its own).
    pub(super) fn quad_prefix(&mut self) -> u64 {
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

//! Instruction set v1 (spec §3): 16-byte instructions `op, a, b, 0, X, Y, Z`.

use crate::facts::{group, Group, Radix};
use crate::{rd_u32, wr_u32};

/// Bytes per instruction; the PC must be a multiple of this.
pub const INSTR_LEN: u32 = 16;

/// Opcodes. Everything not listed is illegal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    Nop = 0x00,
    Halt = 0x01,
    Sync = 0x02,
    Copy = 0x03,
    SetN = 0x07,
    Li = 0x08,
    Ldr = 0x09,
    Str = 0x0A,
    AddI = 0x0B,
    Lea = 0x0C,
    Beq = 0x0D,
    Bne = 0x0E,
    Blt = 0x0F,
    Gemv = 0x10,
    DeqRow = 0x11,
    ArgMax = 0x12,
    VAdd = 0x20,
    VMul = 0x21,
    RmsNorm = 0x22,
    SiluMul = 0x23,
    Rope = 0x24,
    Attn = 0x25,
    LayerNorm = 0x26,
    Gelu = 0x27,
    MeanRows = 0x28,
    Cvt16 = 0x29,
}

impl Op {
    pub const ALL: [Op; 26] = [
        Op::Nop,
        Op::Halt,
        Op::Sync,
        Op::Copy,
        Op::SetN,
        Op::Li,
        Op::Ldr,
        Op::Str,
        Op::AddI,
        Op::Lea,
        Op::Beq,
        Op::Bne,
        Op::Blt,
        Op::Gemv,
        Op::DeqRow,
        Op::ArgMax,
        Op::VAdd,
        Op::VMul,
        Op::RmsNorm,
        Op::SiluMul,
        Op::Rope,
        Op::Attn,
        Op::LayerNorm,
        Op::Gelu,
        Op::MeanRows,
        Op::Cvt16,
    ];

    pub fn from_u8(b: u8) -> Option<Op> {
        Op::ALL.iter().copied().find(|o| *o as u8 == b)
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Nop => "NOP",
            Op::Halt => "HALT",
            Op::Sync => "SYNC",
            Op::Copy => "COPY",
            Op::SetN => "SETN",
            Op::Li => "LI",
            Op::Ldr => "LDR",
            Op::Str => "STR",
            Op::AddI => "ADDI",
            Op::Lea => "LEA",
            Op::Beq => "BEQ",
            Op::Bne => "BNE",
            Op::Blt => "BLT",
            Op::Gemv => "GEMV",
            Op::DeqRow => "DEQROW",
            Op::ArgMax => "ARGMAX",
            Op::VAdd => "VADD",
            Op::VMul => "VMUL",
            Op::RmsNorm => "RMSNORM",
            Op::SiluMul => "SILUMUL",
            Op::Rope => "ROPE",
            Op::Attn => "ATTN",
            Op::LayerNorm => "LAYERNORM",
            Op::Gelu => "GELU",
            Op::MeanRows => "MEANROWS",
            Op::Cvt16 => "CVT16",
        }
    }
}

group! {
    /// An instruction's address-operand bits (spec §3.2) and GEMV flags (spec §3.4).
    pub mod bits, prefix "", source "docs/spec/isa.md §3.2 address operands, §3.4 GEMV flags" {
        /// GEMV flag bit 0: y = old y + W·x
        pub const GEMV_ACC: u8 = 1;
        /// GEMV flag bit 1: store y as F16 (round to nearest even)
        pub const GEMV_F16OUT: u8 = 2;
        /// bit 31 of an address operand: register-relative (A[bits 27-24] + bits 23-0)
        pub const ADDR_REL: u32 = 0x8000_0000;
        /// bits 23-0 of a register-relative address operand: the offset
        pub const ADDR_OFFSET: u32 = 0x00FF_FFFF;
        /// mask of an absolute address operand: the 28-bit SSNAIL address space
        pub const ADDR_MASK: u32 = 0x0FFF_FFFF;
    }
}
pub use bits::{ADDR_MASK, ADDR_OFFSET, ADDR_REL, GEMV_ACC, GEMV_F16OUT};

/// The ISA's numbers as data for the generated C and ca65 files (crate::softcore): the opcodes
/// (`OP_` + the name, [`Op::name`]), the flag and operand bits and the ATTN parameter block.
pub fn groups() -> Vec<Group> {
    let mut ops = Group::new("OP_", "docs/spec/isa.md §3.4: opcodes", Radix::Hex);
    for op in Op::ALL {
        ops = ops.fact(op.name(), op as u64, "");
    }
    vec![ops, bits::group(), attn::group()]
}

/// Address operand "A[n] + offset" (offset < 2^24).
pub fn areg(n: u8, offset: u32) -> u32 {
    debug_assert!(n < 16 && offset < (1 << 24));
    ADDR_REL | ((n as u32) << 24) | offset
}

/// One decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instr {
    /// Raw opcode byte (may be illegal; see [`Instr::op`]).
    pub opcode: u8,
    pub a: u8,
    pub b: u8,
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

impl Instr {
    pub fn new(op: Op, a: u8, b: u8, x: u32, y: u32, z: u32) -> Instr {
        Instr {
            opcode: op as u8,
            a,
            b,
            x,
            y,
            z,
        }
    }

    pub fn op(&self) -> Option<Op> {
        Op::from_u8(self.opcode)
    }

    pub fn encode(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0] = self.opcode;
        b[1] = self.a;
        b[2] = self.b;
        wr_u32(&mut b, 4, self.x);
        wr_u32(&mut b, 8, self.y);
        wr_u32(&mut b, 12, self.z);
        b
    }

    pub fn decode(b: &[u8]) -> Instr {
        Instr {
            opcode: b[0],
            a: b[1],
            b: b[2],
            x: rd_u32(b, 4),
            y: rd_u32(b, 8),
            z: rd_u32(b, 12),
        }
    }
}

impl std::fmt::Display for Instr {
    /// The trace format: name, a, b, X, Y, Z.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self.op() {
            Some(op) => op.name().to_string(),
            None => format!("?{:02X}", self.opcode),
        };
        write!(
            f,
            "{name:<9} a={:<2} b={:<2} X={:08X} Y={:08X} Z={:08X}",
            self.a, self.b, self.x, self.y, self.z
        )
    }
}

/// Register numbers.
pub const R_ZERO: u8 = 15;

/// ATTN parameter block (§3.5): 8 × u32, 32-byte aligned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttnBlock {
    pub k_cache: u32,
    pub v_cache: u32,
    pub n_heads: u32,
    pub n_kv_heads: u32,
    pub head_dim: u32,
    /// 0 F32, 1 F16.
    pub kv_format: u32,
}

group! {
    /// The ATTN parameter block (spec §3.5): where each u32 word lies, its length and the KV
    /// formats of its word 5.
    pub mod attn, prefix "", source "docs/spec/isa.md §3.5: the ATTN parameter block", decimal {
        /// the block's bytes (8 u32 words, 32-byte aligned)
        pub const ATTN_BLOCK_LEN: usize = 32;
        /// word 0: the K cache's address
        pub const ATTN_K_CACHE: usize = 0;
        /// word 1: the V cache's address
        pub const ATTN_V_CACHE: usize = 4;
        /// word 2: query heads
        pub const ATTN_N_HEADS: usize = 8;
        /// word 3: key/value heads
        pub const ATTN_N_KV_HEADS: usize = 12;
        /// word 4: elements per head
        pub const ATTN_HEAD_DIM: usize = 16;
        /// word 5: the caches' format, KV_F32 or KV_F16
        pub const ATTN_KV_FORMAT: usize = 20;
        /// ATTN_KV_FORMAT: single-precision caches
        pub const KV_F32: u32 = 0;
        /// ATTN_KV_FORMAT: half-precision caches
        pub const KV_F16: u32 = 1;
    }
}
pub use attn::{
    ATTN_BLOCK_LEN, ATTN_HEAD_DIM, ATTN_KV_FORMAT, ATTN_K_CACHE, ATTN_N_HEADS, ATTN_N_KV_HEADS,
    ATTN_V_CACHE, KV_F16, KV_F32,
};

impl AttnBlock {
    pub fn encode(&self) -> [u8; ATTN_BLOCK_LEN] {
        let mut b = [0u8; ATTN_BLOCK_LEN];
        for (off, v) in [
            (ATTN_K_CACHE, self.k_cache),
            (ATTN_V_CACHE, self.v_cache),
            (ATTN_N_HEADS, self.n_heads),
            (ATTN_N_KV_HEADS, self.n_kv_heads),
            (ATTN_HEAD_DIM, self.head_dim),
            (ATTN_KV_FORMAT, self.kv_format),
        ] {
            wr_u32(&mut b, off, v);
        }
        b
    }
    pub fn decode(b: &[u8]) -> AttnBlock {
        AttnBlock {
            k_cache: rd_u32(b, ATTN_K_CACHE),
            v_cache: rd_u32(b, ATTN_V_CACHE),
            n_heads: rd_u32(b, ATTN_N_HEADS),
            n_kv_heads: rd_u32(b, ATTN_N_KV_HEADS),
            head_dim: rd_u32(b, ATTN_HEAD_DIM),
            kv_format: rd_u32(b, ATTN_KV_FORMAT),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode() {
        let i = Instr::new(Op::Gemv, 8, GEMV_ACC, areg(3, 0), 0x8005000, 0xFFFF_FFFF);
        let b = i.encode();
        assert_eq!(b[0], 0x10);
        assert_eq!(b[3], 0);
        assert_eq!(Instr::decode(&b), i);
        assert_eq!(areg(3, 0), 0x8300_0000);
        for op in Op::ALL {
            assert_eq!(Op::from_u8(op as u8), Some(op));
        }
        assert_eq!(Op::from_u8(0x04), None);
        assert_eq!(Op::from_u8(0x2A), None);
    }
}

//! The 36-byte tokenizer block at header $78 and its table conventions (§2.1).

use crate::{rd_u32, wr_u32};

pub const TOKBLOCK_LEN: usize = 36;
/// "None" for begin/end tokens and byte-table entries.
pub const NONE32: u32 = 0xFFFF_FFFF;
/// "None" in a u16 priority table.
pub const NONE16: u16 = 0xFFFF;
/// Flag: lowercase the input (WordPiece).
pub const TF_LOWERCASE: u8 = 0x02;
/// Flag: priority entries are u32 (n_vocab > $FFFE).
pub const TF_PRIO32: u8 = 0x08;
/// Byte table: 256 × u32.
pub const BYTE_TABLE_LEN: usize = 256 * 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    Spm = 0,
    Bpe = 1,
    WordPiece = 2,
}

impl TokKind {
    pub fn from_u8(b: u8) -> Option<TokKind> {
        match b {
            0 => Some(TokKind::Spm),
            1 => Some(TokKind::Bpe),
            2 => Some(TokKind::WordPiece),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokBlock {
    pub kind: u8,
    pub flags: u8,
    pub n_vocab: u32,
    pub index: u32,
    pub index_len: u32,
    pub priority: u32,
    pub byte_table: u32,
    pub begin: u32,
    pub end: u32,
    pub unk: u32,
}

impl TokBlock {
    pub fn encode(&self) -> [u8; TOKBLOCK_LEN] {
        let mut b = [0u8; TOKBLOCK_LEN];
        b[0] = self.kind;
        b[1] = self.flags;
        for (off, v) in [
            (4, self.n_vocab),
            (8, self.index),
            (12, self.index_len),
            (16, self.priority),
            (20, self.byte_table),
            (24, self.begin),
            (28, self.end),
            (32, self.unk),
        ] {
            wr_u32(&mut b, off, v);
        }
        b
    }
    pub fn decode(b: &[u8]) -> TokBlock {
        TokBlock {
            kind: b[0],
            flags: b[1],
            n_vocab: rd_u32(b, 4),
            index: rd_u32(b, 8),
            index_len: rd_u32(b, 12),
            priority: rd_u32(b, 16),
            byte_table: rd_u32(b, 20),
            begin: rd_u32(b, 24),
            end: rd_u32(b, 28),
            unk: rd_u32(b, 32),
        }
    }
    pub fn prio32(&self) -> bool {
        self.flags & TF_PRIO32 != 0
    }
    /// Bytes of the priority table.
    pub fn priority_len(&self) -> usize {
        self.n_vocab as usize * if self.prio32() { 4 } else { 2 }
    }
}

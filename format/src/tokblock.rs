//! The 36-byte tokenizer block at header $78 and its table conventions (§2.1).

use crate::{rd_u32, wr_u32};

/// Field offsets inside the tokenizer block, and its length.
pub mod tb {
    /// Bytes in the block.
    pub const LEN: usize = 36;
    pub const KIND: usize = 0;
    pub const FLAGS: usize = 1;
    pub const N_VOCAB: usize = 4;
    pub const INDEX: usize = 8;
    pub const INDEX_LEN: usize = 12;
    pub const PRIORITY: usize = 16;
    pub const BYTE_TABLE: usize = 20;
    pub const BEGIN: usize = 24;
    pub const END: usize = 28;
    pub const UNK: usize = 32;
}
/// "None" for begin/end tokens and byte-table entries.
pub const TOK_NONE: u32 = 0xFFFF_FFFF;
/// "None" in a u16 priority table.
pub const TOK_NONE16: u16 = 0xFFFF;
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
    pub fn encode(&self) -> [u8; tb::LEN] {
        let mut b = [0u8; tb::LEN];
        b[tb::KIND] = self.kind;
        b[tb::FLAGS] = self.flags;
        for (off, v) in [
            (tb::N_VOCAB, self.n_vocab),
            (tb::INDEX, self.index),
            (tb::INDEX_LEN, self.index_len),
            (tb::PRIORITY, self.priority),
            (tb::BYTE_TABLE, self.byte_table),
            (tb::BEGIN, self.begin),
            (tb::END, self.end),
            (tb::UNK, self.unk),
        ] {
            wr_u32(&mut b, off, v);
        }
        b
    }
    pub fn decode(b: &[u8]) -> TokBlock {
        TokBlock {
            kind: b[tb::KIND],
            flags: b[tb::FLAGS],
            n_vocab: rd_u32(b, tb::N_VOCAB),
            index: rd_u32(b, tb::INDEX),
            index_len: rd_u32(b, tb::INDEX_LEN),
            priority: rd_u32(b, tb::PRIORITY),
            byte_table: rd_u32(b, tb::BYTE_TABLE),
            begin: rd_u32(b, tb::BEGIN),
            end: rd_u32(b, tb::END),
            unk: rd_u32(b, tb::UNK),
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

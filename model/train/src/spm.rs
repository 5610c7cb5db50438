//! The SentencePiece model file (`.model`, a protobuf `ModelProto`): the pieces with their
//! scores and types, which become the GGUF's `tokenizer.ggml.tokens`, `scores` and
//! `token_type` as llama.cpp's converter writes them (the type numbers are SentencePiece's:
//! 1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte).
//!
//! Only the fields the vocabulary needs are read: `ModelProto.pieces` (field 1), and in each
//! `SentencePiece` its `piece` (1, string), `score` (2, float) and `type` (3, enum, default 1).

use anyhow::{bail, Context, Result};
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    pub text: String,
    pub score: f32,
    pub kind: i32,
}

pub const UNKNOWN: i32 = 2;
pub const CONTROL: i32 = 3;

/// Reads the pieces of a SentencePiece model file; errors name the file.
pub fn read(path: &Path) -> Result<Vec<Piece>> {
    let b = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    parse(&b).with_context(|| format!("{}: not a SentencePiece model", path.display()))
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.b.get(self.at) else {
                bail!("a number runs past the end at byte {}", self.at)
            };
            self.at += 1;
            v |= u64::from(byte & 0x7F) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        bail!("a number longer than 10 bytes at byte {}", self.at)
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let Some(end) = end else {
            bail!("a field of {n} bytes runs past the end at byte {}", self.at)
        };
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    /// (field number, wire type) or None at the end.
    fn key(&mut self) -> Result<Option<(u64, u8)>> {
        if self.at >= self.b.len() {
            return Ok(None);
        }
        let k = self.varint()?;
        Ok(Some((k >> 3, (k & 7) as u8)))
    }
    fn skip(&mut self, wire: u8) -> Result<()> {
        match wire {
            0 => {
                self.varint()?;
            }
            1 => {
                self.bytes(8)?;
            }
            2 => {
                let n = self.varint()? as usize;
                self.bytes(n)?;
            }
            5 => {
                self.bytes(4)?;
            }
            w => bail!("wire type {w} at byte {}", self.at),
        }
        Ok(())
    }
}

fn piece(b: &[u8]) -> Result<Piece> {
    let mut r = Reader { b, at: 0 };
    let (mut text, mut score, mut kind) = (None, 0.0f32, 1i32);
    while let Some((field, wire)) = r.key()? {
        match (field, wire) {
            (1, 2) => {
                let n = r.varint()? as usize;
                let s = std::str::from_utf8(r.bytes(n)?).context("a piece is not UTF-8")?;
                text = Some(s.to_string());
            }
            (2, 5) => score = f32::from_le_bytes(r.bytes(4)?.try_into()?),
            (3, 0) => kind = r.varint()? as i32,
            (_, w) => r.skip(w)?,
        }
    }
    let Some(text) = text else {
        bail!("a piece without its text")
    };
    if !(1..=6).contains(&kind) {
        bail!("piece {text:?} has type {kind}, which SentencePiece does not define");
    }
    Ok(Piece { text, score, kind })
}

pub fn parse(b: &[u8]) -> Result<Vec<Piece>> {
    let mut r = Reader { b, at: 0 };
    let mut out = Vec::new();
    while let Some((field, wire)) = r.key()? {
        if (field, wire) == (1, 2) {
            let n = r.varint()? as usize;
            out.push(piece(r.bytes(n)?)?);
        } else {
            r.skip(wire)?;
        }
    }
    if out.is_empty() {
        bail!("no pieces");
    }
    Ok(out)
}

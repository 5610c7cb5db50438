//! The chat block at header $7C (§2.6): a chat model's turn template as
//! token ids, so that a host wraps what a person types the way the model was
//! trained, without a template engine or special-token parsing of its own
//! (the PC tools' `run` and `chat` do, and the MEGA65 program's chat.c).
//!
//! A conversation is laid out as
//!
//! ```text
//! FIRST  text₁ SUFFIX  reply₁ END  PREFIX text₂ SUFFIX  reply₂ END  PREFIX …
//! ```
//!
//! where each `text` is the typed line through the image's own tokenizer
//! (no begin token: a BOS the model wants is part of FIRST). The first token
//! of END is the one that ends a reply: a host stops generating when the
//! model writes it (it is usually `H_EOS`, which the script stops on
//! itself), then appends the rest of END. A reply cut short for any other
//! reason gets the whole of END. An image without a chat block has 0 at $7C
//! and its lines are plain continuations.

use crate::{rd_u32, wr_u32};

pub const MAGIC: &[u8; 4] = b"CHAT";
/// Bytes before the token ids.
pub const FIXED_LEN: usize = 24;
/// Most tokens in each of the four sequences (a count is one byte).
pub const MAX_SEQ: usize = 32;
/// Bytes of the template's family name field (NUL-padded).
pub const NAME_LEN: usize = 16;

/// Field offsets inside the chat block.
pub mod cb {
    pub const MAGIC: usize = 0;
    pub const N_FIRST: usize = 4;
    pub const N_PREFIX: usize = 5;
    pub const N_SUFFIX: usize = 6;
    pub const N_END: usize = 7;
    pub const NAME: usize = 8;
    /// The ids, u32 each: FIRST, PREFIX, SUFFIX, END in that order.
    pub const IDS: usize = 24;
}

/// A chat template as token ids.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ChatBlock {
    /// The template family ("chatml", "llama2", "llama3", "zephyr" or
    /// "template" for others), at most 15 bytes.
    pub name: String,
    /// Before the first turn's text (a wanted BOS, a system turn, the user opener).
    pub first: Vec<u32>,
    /// Before every later turn's text.
    pub prefix: Vec<u32>,
    /// After each turn's text: opens the model's reply.
    pub suffix: Vec<u32>,
    /// Closes a reply; `end[0]` stops generation.
    pub end: Vec<u32>,
}

/// Why bytes are not a chat block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatBlockError {
    TooShort { have: usize, need: usize },
    BadMagic,
    TooLong(&'static str),
    NoEnd,
}

impl std::fmt::Display for ChatBlockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChatBlockError::TooShort { have, need } => {
                write!(f, "chat block cut short ({have} of {need} bytes)")
            }
            ChatBlockError::BadMagic => f.write_str("chat block without its 'CHAT' magic"),
            ChatBlockError::TooLong(what) => {
                write!(f, "chat block's {what} is longer than {MAX_SEQ} tokens")
            }
            ChatBlockError::NoEnd => f.write_str("chat block has no end-of-reply token"),
        }
    }
}

impl std::error::Error for ChatBlockError {}

impl ChatBlock {
    /// Bytes the block occupies.
    pub fn len(&self) -> usize {
        FIXED_LEN + 4 * (self.first.len() + self.prefix.len() + self.suffix.len() + self.end.len())
    }

    /// Never true for a valid block (END has at least one token).
    pub fn is_empty(&self) -> bool {
        self.end.is_empty()
    }

    /// The block's bytes; fails if a sequence is longer than [`MAX_SEQ`] or END is empty.
    pub fn encode(&self) -> Result<Vec<u8>, ChatBlockError> {
        for (what, seq) in self.sequences() {
            if seq.len() > MAX_SEQ {
                return Err(ChatBlockError::TooLong(what));
            }
        }
        if self.end.is_empty() {
            return Err(ChatBlockError::NoEnd);
        }
        let mut b = vec![0u8; self.len()];
        b[cb::MAGIC..cb::MAGIC + 4].copy_from_slice(MAGIC);
        b[cb::N_FIRST] = self.first.len() as u8;
        b[cb::N_PREFIX] = self.prefix.len() as u8;
        b[cb::N_SUFFIX] = self.suffix.len() as u8;
        b[cb::N_END] = self.end.len() as u8;
        let name = self.name.as_bytes();
        let n = name.len().min(NAME_LEN - 1);
        b[cb::NAME..cb::NAME + n].copy_from_slice(&name[..n]);
        let ids = self.sequences().into_iter().flat_map(|(_, s)| s.iter());
        for (i, &id) in ids.enumerate() {
            wr_u32(&mut b, cb::IDS + 4 * i, id);
        }
        Ok(b)
    }

    /// Read a block from the bytes at its address (more bytes may follow).
    pub fn decode(b: &[u8]) -> Result<ChatBlock, ChatBlockError> {
        if b.len() < FIXED_LEN {
            return Err(ChatBlockError::TooShort {
                have: b.len(),
                need: FIXED_LEN,
            });
        }
        if &b[cb::MAGIC..cb::MAGIC + 4] != MAGIC {
            return Err(ChatBlockError::BadMagic);
        }
        let counts = [
            ("first-turn prefix", b[cb::N_FIRST] as usize),
            ("turn prefix", b[cb::N_PREFIX] as usize),
            ("turn suffix", b[cb::N_SUFFIX] as usize),
            ("end of reply", b[cb::N_END] as usize),
        ];
        for (what, n) in counts {
            if n > MAX_SEQ {
                return Err(ChatBlockError::TooLong(what));
            }
        }
        let total: usize = counts.iter().map(|c| c.1).sum();
        let need = FIXED_LEN + 4 * total;
        if b.len() < need {
            return Err(ChatBlockError::TooShort {
                have: b.len(),
                need,
            });
        }
        if counts[3].1 == 0 {
            return Err(ChatBlockError::NoEnd);
        }
        let name_field = &b[cb::NAME..cb::NAME + NAME_LEN];
        let name_end = name_field.iter().position(|&c| c == 0).unwrap_or(NAME_LEN);
        let mut at = cb::IDS;
        let mut seq = |n: usize| {
            let v: Vec<u32> = (0..n).map(|i| rd_u32(b, at + 4 * i)).collect();
            at += 4 * n;
            v
        };
        Ok(ChatBlock {
            name: String::from_utf8_lossy(&name_field[..name_end]).into_owned(),
            first: seq(counts[0].1),
            prefix: seq(counts[1].1),
            suffix: seq(counts[2].1),
            end: seq(counts[3].1),
        })
    }

    fn sequences(&self) -> [(&'static str, &Vec<u32>); 4] {
        [
            ("first-turn prefix", &self.first),
            ("turn prefix", &self.prefix),
            ("turn suffix", &self.suffix),
            ("end of reply", &self.end),
        ]
    }

    /// The tokens that go before a turn's text: FIRST on the first turn;
    /// otherwise what is left of END after the reply (`stopped_on_end`: the
    /// model wrote `end[0]` itself) followed by PREFIX.
    pub fn before_turn(&self, first: bool, stopped_on_end: bool) -> Vec<u32> {
        if first {
            return self.first.clone();
        }
        let skip = usize::from(stopped_on_end);
        let mut v: Vec<u32> = self.end.iter().skip(skip).copied().collect();
        v.extend_from_slice(&self.prefix);
        v
    }

    /// The token that ends a reply.
    pub fn stop_token(&self) -> u32 {
        self.end[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chatml() -> ChatBlock {
        ChatBlock {
            name: "chatml".into(),
            first: vec![1, 882, 198],
            prefix: vec![1, 882, 198],
            suffix: vec![2, 198, 1, 520, 9531, 198],
            end: vec![2, 198],
        }
    }

    #[test]
    fn a_block_reads_back_as_it_was_written() {
        let b = chatml().encode().unwrap();
        assert_eq!(b.len(), FIXED_LEN + 4 * 14);
        assert_eq!(&b[0..4], b"CHAT");
        assert_eq!(&b[cb::NAME..cb::NAME + 7], b"chatml\0");
        assert_eq!(ChatBlock::decode(&b).unwrap(), chatml());
    }

    #[test]
    fn a_cut_or_foreign_block_is_refused_with_its_reason() {
        let b = chatml().encode().unwrap();
        assert_eq!(
            ChatBlock::decode(&b[..b.len() - 1]),
            Err(ChatBlockError::TooShort {
                have: b.len() - 1,
                need: b.len()
            })
        );
        let mut bad = b.clone();
        bad[0] = b'X';
        assert_eq!(ChatBlock::decode(&bad), Err(ChatBlockError::BadMagic));
        let mut long = b.clone();
        long[cb::N_SUFFIX] = 33;
        assert_eq!(
            ChatBlock::decode(&long),
            Err(ChatBlockError::TooLong("turn suffix"))
        );
        let none = ChatBlock {
            end: vec![],
            ..chatml()
        };
        assert_eq!(none.encode(), Err(ChatBlockError::NoEnd));
    }

    #[test]
    fn a_later_turn_starts_with_the_rest_of_the_reply_end() {
        let c = chatml();
        assert_eq!(c.before_turn(true, false), vec![1, 882, 198]);
        // Stopped on <|im_end|> (2): only the newline after it, then the opener.
        assert_eq!(c.before_turn(false, true), vec![198, 1, 882, 198]);
        // Cut short by the token count: the whole end first.
        assert_eq!(c.before_turn(false, false), vec![2, 198, 1, 882, 198]);
        assert_eq!(c.stop_token(), 2);
    }
}

//! The image's tokenizer tables (§1.10, §2.1): vocab table, sorted index,
//! priority table, byte table and the 36-byte block. The converter places
//! them; the image tokenizer (`image` module) and the MEGA65 read them.

use crate::vocab::{parse_byte_token, TokModel, Vocab};
use ssnail_format::tokblock::{TokBlock, TF_LOWERCASE, TF_PRIO32, TOK_NONE, TOK_NONE16};
use std::collections::HashMap;

/// The tables as bytes, ready to be placed in an image.
#[derive(Clone, Debug)]
pub struct ImageTables {
    /// `u32 offset[n+1]` then the concatenated token bytes.
    pub vocab_table: Vec<u8>,
    /// Sorted index: u32 token ids.
    pub index: Vec<u8>,
    /// One u16 (or u32 with `TF_PRIO32`) merge priority per token.
    pub priority: Vec<u8>,
    /// 256 × u32 starting token per input byte.
    pub byte_table: Vec<u8>,
    /// The block; `index`, `priority` and `byte_table` addresses are 0 for
    /// the converter to fill in once it has placed the tables.
    pub block: TokBlock,
}

/// A plain-ASCII byte as far as the index is concerned: tab, newline, printable.
pub fn is_index_byte(b: u8) -> bool {
    matches!(b, 9 | 10 | 32..=126)
}

impl ImageTables {
    pub fn build(v: &Vocab) -> ImageTables {
        let n = v.n_vocab();
        let bytes: Vec<Vec<u8>> = (0..n).map(|t| v.token_bytes(t)).collect();

        // Vocab table.
        let mut vocab_table =
            Vec::with_capacity(4 * (n + 1) + bytes.iter().map(Vec::len).sum::<usize>());
        let mut off = 4 * (n + 1);
        for b in &bytes {
            vocab_table.extend_from_slice(&(off as u32).to_le_bytes());
            off += b.len();
        }
        vocab_table.extend_from_slice(&(off as u32).to_le_bytes());
        for b in &bytes {
            vocab_table.extend_from_slice(b);
        }

        // Sorted index: Vec<u8> ordering is memcmp with a proper prefix first;
        // the stable sort keeps ids ascending within equal texts, and dedup
        // keeps the first (lowest) id.
        let mut ids: Vec<u32> = (0..n)
            .filter(|&t| {
                let b = &bytes[t];
                !b.is_empty()
                    && !v.is_special(t)
                    && (v.model != TokModel::Spm || parse_byte_token(&v.tokens[t]).is_none())
                    && b.iter().all(|&c| is_index_byte(c))
            })
            .map(|t| t as u32)
            .collect();
        ids.sort_by(|&a, &b| bytes[a as usize].cmp(&bytes[b as usize]));
        ids.dedup_by(|later, first| bytes[*later as usize] == bytes[*first as usize]);
        let by_text: HashMap<&[u8], u32> = ids
            .iter()
            .map(|&t| (bytes[t as usize].as_slice(), t))
            .collect();

        // Priorities (None = no merge produces / may produce the token).
        let mut prio: Vec<Option<u32>> = vec![None; n];
        match v.model {
            TokModel::Bpe => {
                for (rank, rule) in v.merges.iter().enumerate() {
                    let Some((left, right)) = rule.split_once(' ') else {
                        continue;
                    };
                    let (Some(mut l), Some(r)) = (
                        crate::gpt2_bytes::decode(left),
                        crate::gpt2_bytes::decode(right),
                    ) else {
                        continue;
                    };
                    l.extend_from_slice(&r);
                    if let Some(&t) = by_text.get(l.as_slice()) {
                        let p = &mut prio[t as usize];
                        if p.is_none_or(|old| old > rank as u32) {
                            *p = Some(rank as u32);
                        }
                    }
                }
            }
            TokModel::Spm => {
                let mut multi: Vec<u32> = ids
                    .iter()
                    .copied()
                    .filter(|&t| bytes[t as usize].len() > 1)
                    .collect();
                multi.sort_by(|&a, &b| {
                    let (sa, sb) = (v.scores[a as usize], v.scores[b as usize]);
                    sb.total_cmp(&sa).then(a.cmp(&b))
                });
                for (pos, &t) in multi.iter().enumerate() {
                    prio[t as usize] = Some(pos as u32);
                }
            }
            TokModel::WordPiece => {}
        }
        let prio32 = n > 0xFFFE;
        let mut priority = Vec::with_capacity(n * if prio32 { 4 } else { 2 });
        for p in &prio {
            if prio32 {
                priority.extend_from_slice(&p.unwrap_or(TOK_NONE).to_le_bytes());
            } else {
                // A u16 table holds 0..=$FFFE. SPM positions always fit
                // (n <= $FFFE); a BPE vocabulary with more merge rules than
                // that saturates, keeping those late merges last.
                let e = p.map_or(TOK_NONE16, |r| r.min(0xFFFE) as u16);
                priority.extend_from_slice(&e.to_le_bytes());
            }
        }

        // Byte table.
        let mut byte_table = Vec::with_capacity(256 * 4);
        for b in 0..=255u8 {
            let mut t = by_text.get([b].as_slice()).copied();
            if t.is_none() && v.model == TokModel::Spm {
                t = (0..n)
                    .find(|&i| parse_byte_token(&v.tokens[i]) == Some(b))
                    .map(|i| i as u32);
            }
            byte_table.extend_from_slice(&t.unwrap_or(TOK_NONE).to_le_bytes());
        }

        let mut flags = 0u8;
        if v.model == TokModel::WordPiece {
            flags |= TF_LOWERCASE;
        }
        if prio32 {
            flags |= TF_PRIO32;
        }
        let block = TokBlock {
            kind: v.model.tok_kind() as u8,
            flags,
            n_vocab: n as u32,
            index: 0,
            index_len: ids.len() as u32,
            priority: 0,
            byte_table: 0,
            begin: v.begin_token().unwrap_or(TOK_NONE),
            end: v.end_token().unwrap_or(TOK_NONE),
            unk: v.unk_token(),
        };
        ImageTables {
            vocab_table,
            index: ids.iter().flat_map(|t| t.to_le_bytes()).collect(),
            priority,
            byte_table,
            block,
        }
    }

    /// Size of the encode tables in KB as the converter reports it (§1.11).
    pub fn encode_tables_kb(&self) -> f64 {
        (self.index.len() + self.priority.len() + self.byte_table.len() + 36) as f64 / 1024.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::tests::vocab;
    use crate::vocab::token_type;
    use ssnail_format::rd_u32;

    fn u32s(b: &[u8]) -> Vec<u32> {
        b.chunks(4).map(|c| rd_u32(c, 0)).collect()
    }
    fn u16s(b: &[u8]) -> Vec<u16> {
        b.chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()
    }

    #[test]
    fn spm_tables() {
        // 0..2 specials, byte tokens for 'a' and 0xE2, pieces with scores.
        let mut v = vocab(
            TokModel::Spm,
            &[
                "<unk>", "<s>", "</s>", "<0x61>", "<0xE2>", "▁", "a", "b", "ab", "▁a", "▁ab", "ab",
                "é", "▁b", "x\u{1}",
            ],
        );
        v.types[0] = token_type::UNKNOWN;
        v.types[1] = token_type::CONTROL;
        v.types[2] = token_type::CONTROL;
        v.types[3] = token_type::BYTE;
        v.types[4] = token_type::BYTE;
        v.scores = vec![
            0., 0., 0., 0., 0., -1., -2., -3., -1.5, -1.5, -0.5, -9., -4., -1.5, -1.,
        ];
        let t = ImageTables::build(&v);

        // Vocab table: offsets then bytes, specials empty, byte tokens raw.
        let offs = u32s(&t.vocab_table[..4 * 16]);
        assert_eq!(offs[0], 64);
        let text = |i: usize| &t.vocab_table[offs[i] as usize..offs[i + 1] as usize];
        assert_eq!(text(1), b"");
        assert_eq!(text(3), b"a");
        assert_eq!(text(4), [0xE2]);
        assert_eq!(text(10), b" ab");
        assert_eq!(text(12), "é".as_bytes());
        assert_eq!(offs[15] as usize, t.vocab_table.len());

        // Index: plain-ASCII, non-byte-token, prefix first, duplicate "ab" -> 8.
        // " " < " a" < " ab" < " b" < "a" < "ab" < "b"
        assert_eq!(u32s(&t.index), vec![5, 9, 10, 13, 6, 8, 7]);
        assert_eq!(t.block.index_len, 7);

        // Priorities: multi-byte index tokens by score desc, then id:
        // " ab" (-0.5), then -1.5 ties by id: "ab"(8), " a"(9), " b"(13).
        let p = u16s(&t.priority);
        assert_eq!(p.len(), 15);
        assert_eq!((p[10], p[8], p[9], p[13]), (0, 1, 2, 3));
        for single in [5, 6, 7, 11, 12, 14, 3] {
            assert_eq!(p[single], TOK_NONE16, "token {single}");
        }

        // Byte table: index token first, else <0xHH>, else none.
        let bt = u32s(&t.byte_table);
        assert_eq!(bt[b' ' as usize], 5);
        assert_eq!(bt[b'a' as usize], 6);
        assert_eq!(bt[b'b' as usize], 7);
        assert_eq!(bt[0xE2], 4);
        assert_eq!(bt[b'c' as usize], TOK_NONE);

        assert_eq!(t.block.kind, 0);
        assert_eq!(t.block.flags, 0);
        assert_eq!((t.block.begin, t.block.end, t.block.unk), (1, TOK_NONE, 0));
        assert_eq!(
            (t.block.index, t.block.priority, t.block.byte_table),
            (0, 0, 0)
        );
    }

    #[test]
    fn bpe_tables() {
        let mut v = vocab(
            TokModel::Bpe,
            &[
                "t",
                "h",
                "e",
                "Ġ",
                "th",
                "the",
                "Ġt",
                "Ġthe",
                "<|endoftext|>",
                "Ġth",
                "Ã©",
            ],
        );
        v.types[8] = token_type::CONTROL;
        v.merges = [
            "t h", "Ġ t", "th e", "Ġt h", "Ġ th", "Ġth e", "x ▁", "Ġ the",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let t = ImageTables::build(&v);
        let p = u16s(&t.priority);
        // th <- rank 0; Ġt <- 1; the <- 2; Ġth <- 3 (not 4); Ġthe <- 5 (not 7).
        assert_eq!(&p[4..8], &[0, 2, 1, 5]);
        assert_eq!(p[9], 3);
        assert_eq!(&p[0..4], &[TOK_NONE16; 4]);
        assert_eq!(p[10], TOK_NONE16);
        assert_eq!(t.block.begin, TOK_NONE);
        let bt = u32s(&t.byte_table);
        assert_eq!(bt[b' ' as usize], 3);
        assert_eq!(bt[0xC3], TOK_NONE);
        assert_eq!(t.block.kind, 1);
    }

    #[test]
    fn wordpiece_and_prio32() {
        let mut names: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "▁the", "s"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        names.extend((names.len()..70000).map(|i| format!("▁w{i}")));
        let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
        let mut v = vocab(TokModel::WordPiece, &refs);
        v.cls_id = Some(2);
        v.sep_id = Some(3);
        let t = ImageTables::build(&v);
        assert_eq!(t.block.flags, TF_LOWERCASE | TF_PRIO32);
        assert_eq!(t.priority.len(), 4 * 70000);
        assert!(u32s(&t.priority).iter().all(|&p| p == TOK_NONE));
        assert_eq!((t.block.begin, t.block.end, t.block.unk), (2, 3, 1));
        assert_eq!(t.block.index_len, 70000 - 4);
        assert_eq!(t.block.kind, 2);
    }
}

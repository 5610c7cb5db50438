//! A tokenizer vocabulary as stored in a GGUF file (`tokenizer.ggml.*`).

use ssnail_gguf::{Gguf, GgufError};

/// The tokenizer family, from `tokenizer.ggml.model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokModel {
    /// "llama": SentencePiece with byte fallback.
    Spm,
    /// "gpt2": byte-level BPE.
    Bpe,
    /// "bert": WordPiece.
    WordPiece,
}

impl TokModel {
    pub fn from_gguf_name(s: &str) -> Option<TokModel> {
        match s {
            "llama" => Some(TokModel::Spm),
            "gpt2" => Some(TokModel::Bpe),
            "bert" => Some(TokModel::WordPiece),
            _ => None,
        }
    }
    pub fn gguf_name(self) -> &'static str {
        match self {
            TokModel::Spm => "llama",
            TokModel::Bpe => "gpt2",
            TokModel::WordPiece => "bert",
        }
    }
    /// The image's tokenizer kind (block +0).
    pub fn tok_kind(self) -> ssnail_format::tokblock::TokKind {
        use ssnail_format::tokblock::TokKind;
        match self {
            TokModel::Spm => TokKind::Spm,
            TokModel::Bpe => TokKind::Bpe,
            TokModel::WordPiece => TokKind::WordPiece,
        }
    }
}

/// GGUF token types (`tokenizer.ggml.token_type`).
pub use ssnail_gguf::token_type;

/// Texts that are special whatever their type says (§1.10).
const SPECIAL_TEXTS: [&str; 8] = [
    "<s>", "</s>", "<unk>", "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]",
];

/// Everything the tokenizers and the image tables need from a GGUF.
#[derive(Clone, Debug)]
pub struct Vocab {
    pub model: TokModel,
    /// `tokenizer.ggml.pre` (pre-tokenizer name for BPE), if present.
    pub pre: Option<String>,
    pub tokens: Vec<String>,
    /// Per-token scores (0 when absent).
    pub scores: Vec<f32>,
    /// Per-token types (1 = normal when absent).
    pub types: Vec<i32>,
    /// BPE merge rules "left right" in rank order.
    pub merges: Vec<String>,
    /// Raw optional ids as stored in the GGUF (no defaults applied).
    pub bos_id: Option<u32>,
    pub eos_id: Option<u32>,
    pub unk_id: Option<u32>,
    pub sep_id: Option<u32>,
    pub cls_id: Option<u32>,
    pub pad_id: Option<u32>,
    pub add_bos: Option<bool>,
    pub add_eos: Option<bool>,
    pub add_space_prefix: Option<bool>,
}

impl Vocab {
    /// Read the vocabulary of a GGUF file; errors name the file.
    pub fn from_gguf(g: &Gguf) -> Result<Vocab, GgufError> {
        // Keys of the wrong type are errors (typed accessors), not defaults.
        let name = g
            .string("tokenizer.ggml.model")?
            .ok_or_else(|| g.error("no tokenizer (tokenizer.ggml.model missing)"))?;
        let model = TokModel::from_gguf_name(name).ok_or_else(|| {
            g.error(format!(
                "unsupported tokenizer model '{}' (supported: llama, gpt2, bert)",
                ssnail_gguf::printable(name)
            ))
        })?;
        let tokens = g
            .strings("tokenizer.ggml.tokens")?
            .ok_or_else(|| g.error("no tokenizer.ggml.tokens array"))?;
        let n = tokens.len();
        if n == 0 {
            return Err(g.error("tokenizer.ggml.tokens is empty"));
        }
        let scores: Vec<f32> = match g.floats("tokenizer.ggml.scores")? {
            Some(s) if s.len() == n => s.into_iter().map(|x| x as f32).collect(),
            Some(s) => {
                return Err(g.error(format!(
                    "tokenizer.ggml.scores has {} entries for {n} tokens",
                    s.len()
                )))
            }
            None => vec![0.0; n],
        };
        let types: Vec<i32> = match g.ints("tokenizer.ggml.token_type")? {
            Some(t) if t.len() == n => {
                t.into_iter()
                    .map(i32::try_from)
                    .collect::<Result<_, _>>()
                    .map_err(|_| g.error("tokenizer.ggml.token_type holds a value outside i32"))?
            }
            Some(t) => {
                return Err(g.error(format!(
                    "tokenizer.ggml.token_type has {} entries for {n} tokens",
                    t.len()
                )))
            }
            None => vec![token_type::NORMAL; n],
        };
        let merges = g.strings("tokenizer.ggml.merges")?.unwrap_or_default();
        if model == TokModel::Bpe && merges.is_empty() {
            return Err(g.error("gpt2 tokenizer without tokenizer.ggml.merges"));
        }
        let id = |key: &str| -> Result<Option<u32>, GgufError> {
            let full = format!("tokenizer.ggml.{key}");
            if let Some(v) = g
                .get(&full)
                .filter(|v| v.as_i64().is_none() && v.as_u64().is_none())
            {
                return Err(g.error(format!(
                    "{full} is {} ({}), expected a token id",
                    v.summary(),
                    v.type_name()
                )));
            }
            match g.get_u64(&full) {
                None => Ok(None),
                Some(v) if (v as usize) < n => Ok(Some(v as u32)),
                // Some GGUFs store -1 (as u32 0xFFFFFFFF) for "none".
                Some(v) if v == u32::MAX as u64 || v == u64::MAX => Ok(None),
                Some(v) => Err(g.error(format!(
                    "tokenizer.ggml.{key} = {v} is outside the {n}-token vocabulary"
                ))),
            }
        };
        let flag = |key: &str| g.boolean(&format!("tokenizer.ggml.{key}"));
        Ok(Vocab {
            model,
            pre: g.string("tokenizer.ggml.pre")?.map(str::to_string),
            tokens,
            scores,
            types,
            merges,
            bos_id: id("bos_token_id")?,
            eos_id: id("eos_token_id")?,
            unk_id: id("unknown_token_id")?,
            sep_id: id("seperator_token_id")?,
            cls_id: id("cls_token_id")?,
            pad_id: id("padding_token_id")?,
            add_bos: flag("add_bos_token")?,
            add_eos: flag("add_eos_token")?,
            add_space_prefix: flag("add_space_prefix")?,
        })
    }

    pub fn n_vocab(&self) -> usize {
        self.tokens.len()
    }

    /// "BOS wanted" (§2.1): `add_bos_token` if present, else true for SentencePiece only.
    pub fn bos_wanted(&self) -> bool {
        self.add_bos.unwrap_or(self.model == TokModel::Spm)
    }

    /// BOS id for decoders: `bos_token_id`, default 1 for llama, none for gpt2.
    pub fn decoder_bos(&self) -> Option<u32> {
        match self.model {
            TokModel::Spm => Some(self.bos_id.unwrap_or(1)),
            _ => self.bos_id,
        }
    }

    /// Header $24 (`H_BOS`): `bos_token_id`, default 1, always written.
    pub fn header_bos(&self) -> u32 {
        self.bos_id.unwrap_or(1)
    }

    /// Header $28 (`H_EOS`): `eos_token_id`, default 2.
    pub fn header_eos(&self) -> u32 {
        self.eos_id.unwrap_or(2)
    }

    /// Block begin token (§2.1): [CLS] for bert, BOS for decoders when wanted.
    pub fn begin_token(&self) -> Option<u32> {
        match self.model {
            TokModel::WordPiece => self.cls_id.or(self.bos_id),
            _ => {
                if self.bos_wanted() {
                    self.decoder_bos()
                } else {
                    None
                }
            }
        }
    }

    /// Block end token (§2.1): [SEP] for bert, none for decoders.
    pub fn end_token(&self) -> Option<u32> {
        match self.model {
            TokModel::WordPiece => self.sep_id.or(self.eos_id),
            _ => None,
        }
    }

    /// Block unknown token (§2.1): `unknown_token_id`, else `[UNK]`'s id, else 0.
    pub fn unk_token(&self) -> u32 {
        self.unk_id.or_else(|| self.find_text("[UNK]")).unwrap_or(0)
    }

    /// Lowest id whose text is exactly `s`.
    pub fn find_text(&self, s: &str) -> Option<u32> {
        self.tokens.iter().position(|t| t == s).map(|i| i as u32)
    }

    /// Special tokens have no text in the image (§1.10).
    pub fn is_special(&self, id: usize) -> bool {
        matches!(
            self.types[id],
            token_type::UNKNOWN | token_type::CONTROL | token_type::UNUSED
        ) || SPECIAL_TEXTS.contains(&self.tokens[id].as_str())
    }

    /// The token's raw bytes as stored in the vocab table (§1.10).
    pub fn token_bytes(&self, id: usize) -> Vec<u8> {
        if self.is_special(id) {
            return Vec::new();
        }
        let text = &self.tokens[id];
        match self.model {
            TokModel::Bpe => {
                crate::gpt2_bytes::decode(text).unwrap_or_else(|| text.as_bytes().to_vec())
            }
            TokModel::Spm if parse_byte_token(text).is_some() => {
                vec![parse_byte_token(text).unwrap()]
            }
            _ => text.replace('\u{2581}', " ").into_bytes(),
        }
    }
}

/// The byte of a SentencePiece byte token `<0xHH>` (exactly 6 characters).
pub fn parse_byte_token(s: &str) -> Option<u8> {
    let b = s.as_bytes();
    if b.len() == 6 && s.starts_with("<0x") && b[5] == b'>' {
        u8::from_str_radix(&s[3..5], 16).ok()
    } else {
        None
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A vocabulary built in memory for tests.
    pub fn vocab(model: TokModel, tokens: &[&str]) -> Vocab {
        let n = tokens.len();
        Vocab {
            model,
            pre: None,
            tokens: tokens.iter().map(|s| s.to_string()).collect(),
            scores: vec![0.0; n],
            types: vec![token_type::NORMAL; n],
            merges: Vec::new(),
            bos_id: None,
            eos_id: None,
            unk_id: None,
            sep_id: None,
            cls_id: None,
            pad_id: None,
            add_bos: None,
            add_eos: None,
            add_space_prefix: None,
        }
    }

    #[test]
    fn token_bytes_follow_1_10() {
        let mut v = vocab(
            TokModel::Spm,
            &[
                "<unk>", "<s>", "</s>", "<0x41>", "<0xE2>", "▁the", "x▁y", "<0x4>", "ctl",
            ],
        );
        v.types[8] = token_type::CONTROL;
        assert_eq!(v.token_bytes(0), b"");
        assert_eq!(v.token_bytes(1), b"");
        assert_eq!(v.token_bytes(3), b"A");
        assert_eq!(v.token_bytes(4), vec![0xE2]);
        assert_eq!(v.token_bytes(5), b" the");
        assert_eq!(v.token_bytes(6), b"x y");
        assert_eq!(v.token_bytes(7), b"<0x4>");
        assert_eq!(v.token_bytes(8), b"");

        let g = vocab(TokModel::Bpe, &["Ġthe", "Ċ", "Ã©", "▁odd", "[PAD]"]);
        assert_eq!(g.token_bytes(0), b" the");
        assert_eq!(g.token_bytes(1), b"\n");
        assert_eq!(g.token_bytes(2), "é".as_bytes());
        // Outside the byte map: plain UTF-8.
        assert_eq!(g.token_bytes(3), "▁odd".as_bytes());
        assert_eq!(g.token_bytes(4), b"");

        let w = vocab(TokModel::WordPiece, &["[CLS]", "▁play", "ing", "<0x41>"]);
        assert_eq!(w.token_bytes(1), b" play");
        assert_eq!(w.token_bytes(2), b"ing");
        // Byte tokens are a llama convention only.
        assert_eq!(w.token_bytes(3), b"<0x41>");
    }

    #[test]
    fn begin_end_unk_defaults() {
        let mut v = vocab(TokModel::Spm, &["<unk>", "<s>", "</s>", "a"]);
        assert_eq!(v.begin_token(), Some(1));
        v.add_bos = Some(false);
        assert_eq!(v.begin_token(), None);
        assert_eq!(v.end_token(), None);
        assert_eq!(v.unk_token(), 0);

        let mut g = vocab(TokModel::Bpe, &["a", "b", "<|endoftext|>"]);
        assert_eq!(g.begin_token(), None);
        g.bos_id = Some(2);
        assert_eq!(g.begin_token(), None);
        g.add_bos = Some(true);
        assert_eq!(g.begin_token(), Some(2));

        let mut w = vocab(TokModel::WordPiece, &["[PAD]", "[UNK]", "[CLS]", "[SEP]"]);
        assert_eq!(
            (w.begin_token(), w.end_token(), w.unk_token()),
            (None, None, 1)
        );
        w.bos_id = Some(2);
        w.eos_id = Some(3);
        assert_eq!((w.begin_token(), w.end_token()), (Some(2), Some(3)));
        w.cls_id = Some(0);
        w.sep_id = Some(1);
        w.unk_id = Some(3);
        assert_eq!(
            (w.begin_token(), w.end_token(), w.unk_token()),
            (Some(0), Some(1), 3)
        );
    }
}

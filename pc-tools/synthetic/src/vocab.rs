//! The small vocabularies of spec §10.1–§10.2, as GGUF tokenizer metadata.

use crate::models::ModelOpts;
use ssnail_gguf::writer::GgufWriter;

/// A test vocabulary: the `tokenizer.ggml.*` arrays and special ids.
#[derive(Clone, Debug, Default)]
pub struct TestVocab {
    /// `tokenizer.ggml.model`: "llama", "gpt2" or "bert".
    pub model: &'static str,
    pub tokens: Vec<String>,
    pub scores: Vec<f32>,
    pub types: Vec<i32>,
    pub merges: Vec<String>,
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub cls: Option<u32>,
    pub sep: Option<u32>,
    pub unk: Option<u32>,
    pub pad: Option<u32>,
}

/// Words the §10 vocabularies are built around.
pub const SPM_WORDS: [&str; 12] = [
    "the", "a", "cat", "dog", "sat", "on", "mat", "once", "upon", "time", "was", "happy",
];
pub const BPE_WORDS: [&str; 11] = [
    "the", "cat", "sat", "on", "mat", "once", "upon", "time", "happy", "dog", "a",
];
pub const WORDPIECE_WORDS: [&str; 11] = [
    "the", "cat", "play", "dog", "run", "jump", "lamp", "troll", "throw", "at", "a",
];

impl TestVocab {
    fn push(&mut self, t: &str, score: f32, ty: i32) -> bool {
        if self.tokens.iter().any(|x| x == t) {
            return false;
        }
        self.tokens.push(t.to_string());
        self.scores.push(score);
        self.types.push(ty);
        true
    }
    pub fn id(&self, t: &str) -> Option<u32> {
        self.tokens.iter().position(|x| x == t).map(|i| i as u32)
    }

    /// Add the tokenizer metadata to a GGUF under construction.
    pub fn write(&self, w: &mut GgufWriter, o: &ModelOpts) {
        w.meta_str("tokenizer.ggml.model", self.model)
            .meta_strs("tokenizer.ggml.tokens", &self.tokens)
            .meta_f32s("tokenizer.ggml.scores", &self.scores)
            .meta_i32s("tokenizer.ggml.token_type", &self.types);
        if !self.merges.is_empty() {
            w.meta_strs("tokenizer.ggml.merges", &self.merges);
        }
        for (k, v) in [
            ("bos_token_id", self.bos),
            ("eos_token_id", self.eos),
            ("cls_token_id", self.cls),
            ("seperator_token_id", self.sep),
            ("unknown_token_id", self.unk),
            ("padding_token_id", self.pad),
        ] {
            if let Some(v) = v {
                w.meta_u32(&format!("tokenizer.ggml.{k}"), v);
            }
        }
        if let Some(b) = o.add_bos {
            w.meta_bool("tokenizer.ggml.add_bos_token", b);
        }
        if let Some(t) = &o.chat_template {
            w.meta_str("tokenizer.chat_template", t);
        }
    }
}

/// §10.1 SentencePiece vocabulary, 400 tokens: `<unk> <s> </s>`, the 256
/// `<0xHH>` byte tokens, `▁`, a–z, every prefix (≥ 2 characters) of
/// `▁<word>`, then `▁w<i>` fillers. Score 0 for the first 259, else the
/// piece length in characters; all types 1; BOS 1, EOS 2.
pub fn spm() -> TestVocab {
    spm_sized(400)
}

/// The §10.1 SentencePiece vocabulary with `n` tokens (at least 400):
/// the same pieces, more `▁w<i>` fillers (512 is llama2.c's tok512 size).
pub fn spm_sized(n: usize) -> TestVocab {
    let mut v = TestVocab {
        model: "llama",
        bos: Some(1),
        eos: Some(2),
        ..Default::default()
    };
    for t in ["<unk>", "<s>", "</s>"] {
        v.push(t, 0.0, 1);
    }
    for b in 0..256 {
        v.push(&format!("<0x{b:02X}>"), 0.0, 1);
    }
    let scored = |v: &mut TestVocab, t: &str| v.push(t, t.chars().count() as f32, 1);
    scored(&mut v, "▁");
    for c in 'a'..='z' {
        scored(&mut v, &c.to_string());
    }
    for w in SPM_WORDS {
        let chars: Vec<char> = format!("▁{w}").chars().collect();
        for n in 2..=chars.len() {
            scored(&mut v, &chars[..n].iter().collect::<String>());
        }
    }
    let mut i = 0;
    while v.tokens.len() < n.max(400) {
        scored(&mut v, &format!("▁w{i}"));
        i += 1;
    }
    v
}

/// GPT-2's byte → unicode character table (spec §2.4).
pub fn gpt2_byte_char(b: u8) -> char {
    let direct =
        |x: u32| (33..=126).contains(&x) || (161..=172).contains(&x) || (174..=255).contains(&x);
    if direct(b as u32) {
        return char::from_u32(b as u32).unwrap();
    }
    let n = (0..b as u32).filter(|x| !direct(*x)).count() as u32;
    char::from_u32(256 + n).unwrap()
}

/// §10.2 byte-level BPE vocabulary: 256 byte tokens in byte order (token n
/// = byte n), then the tokens made by merges that build the test words
/// (`Ġ`-prefixed variants first, so their merges rank higher), then
/// `<|endoftext|>` (type 3, EOS and BOS id), padded to a multiple of 32
/// with `<|pad<i>|>` (type 3).
pub fn bpe() -> TestVocab {
    let mut v = TestVocab {
        model: "gpt2",
        ..Default::default()
    };
    for b in 0..=255u8 {
        v.push(&gpt2_byte_char(b).to_string(), 0.0, 1);
    }
    let variants = BPE_WORDS
        .iter()
        .map(|w| format!("Ġ{w}"))
        .chain(BPE_WORDS.iter().map(|w| w.to_string()));
    for word in variants {
        let chars: Vec<char> = word.chars().collect();
        let mut cur = chars[0].to_string();
        for c in &chars[1..] {
            let merged = format!("{cur}{c}");
            let rule = format!("{cur} {c}");
            if !v.merges.contains(&rule) {
                v.merges.push(rule);
            }
            v.push(&merged, 0.0, 1);
            cur = merged;
        }
    }
    v.push("<|endoftext|>", 0.0, 3);
    let eot = v.id("<|endoftext|>");
    v.eos = eot;
    v.bos = eot;
    let mut i = 0;
    while !v.tokens.len().is_multiple_of(32) {
        v.push(&format!("<|pad{i}|>"), 0.0, 3);
        i += 1;
    }
    v
}

/// §10.2 WordPiece vocabulary in llama.cpp's GGUF convention (word-initial
/// pieces carry `▁`, continuations are bare): `[PAD] [UNK] [CLS] [SEP]
/// [MASK]`, `▁<word>`, `ing s ed er , . ▁, ▁.`, `▁w<i>` fillers to a
/// multiple of 32. CLS 2, SEP 3, UNK 1, PAD 0.
pub fn wordpiece() -> TestVocab {
    let mut v = TestVocab {
        model: "bert",
        pad: Some(0),
        unk: Some(1),
        cls: Some(2),
        sep: Some(3),
        ..Default::default()
    };
    for t in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] {
        v.push(t, 0.0, 3);
    }
    for w in WORDPIECE_WORDS {
        v.push(&format!("▁{w}"), 0.0, 1);
    }
    for t in ["ing", "s", "ed", "er", ",", ".", "▁,", "▁."] {
        v.push(t, 0.0, 1);
    }
    let mut i = 0;
    while !v.tokens.len().is_multiple_of(32) {
        v.push(&format!("▁w{i}"), 0.0, 1);
        i += 1;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let s = spm();
        assert_eq!(s.tokens.len(), 400);
        assert_eq!(s.id("<0x41>"), Some(3 + 0x41));
        assert_eq!(s.id("▁"), Some(259));
        assert!(s.id("▁happy").is_some() && s.id("▁ha").is_some());
        assert_eq!(s.scores[s.id("▁cat").unwrap() as usize], 4.0);
        let b = bpe();
        assert_eq!(b.tokens.len() % 32, 0);
        assert_eq!(b.tokens[32], "Ġ");
        assert_eq!(b.tokens[b'a' as usize], "a");
        assert_eq!(b.merges[0], "Ġ t");
        assert!(b.id("Ġupon").unwrap() < b.id("upon").unwrap());
        assert_eq!(b.types[b.eos.unwrap() as usize], 3);
        let w = wordpiece();
        assert_eq!(w.tokens.len() % 32, 0);
        assert_eq!(w.tokens[2], "[CLS]");
        assert_eq!(w.id("▁troll"), Some(12));
    }
}

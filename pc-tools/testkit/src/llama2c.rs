//! Exact-shape stand-ins for karpathy's llama2.c tinyllamas, written by the
//! tests: the real configurations, deterministic random weights of a
//! trained model's scale, in llama2.c's legacy export format, with a
//! tokenizer.bin of the real layout (`<unk>`, `\n<s>\n`, `\n</s>\n`, the 256
//! byte pieces `<0x00>`..`<0xFF>`, then merged pieces in merge order with
//! falling scores, then single characters), trained here by byte-pair
//! merging on a short story.
//!
//! The bytes depend only on integer arithmetic and IEEE additions and
//! multiplications (no libm), so they are the same on every machine:
//! llama.cpp's outputs for them, committed under pc-tools/cli/tests/data/
//! llama2c/ by tools/llama2c-reference.sh, stay valid.

use crate::rng::Rng;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A stand-in: llama2.c's seven header fields and a seed.
#[derive(Clone, Copy, Debug)]
pub struct Standin {
    pub name: &'static str,
    pub dim: i32,
    pub hidden_dim: i32,
    pub n_layers: i32,
    pub n_heads: i32,
    pub n_kv_heads: i32,
    /// Positive: shared classifier; negative: a classifier of its own.
    pub vocab_size: i32,
    pub seq_len: i32,
    pub seed: u64,
}

/// stories260K: dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads, the
/// 512-token tok512.bin vocabulary, seq_len 512, shared classifier.
pub const STORIES260K: Standin = Standin {
    name: "stories260K",
    dim: 64,
    hidden_dim: 172,
    n_layers: 5,
    n_heads: 8,
    n_kv_heads: 4,
    vocab_size: 512,
    seq_len: 512,
    seed: 260,
};

/// stories260K's shape with an unshared classifier (vocab_size -512), for
/// the other branch of the legacy format.
pub const STORIES260K_UNSHARED: Standin = Standin {
    name: "stories260K-unshared",
    vocab_size: -512,
    seed: 261,
    ..STORIES260K
};

/// stories15M: dim 288, hidden 768, 6 layers, 6 heads (6 KV), the 32000-token
/// Llama 2 vocabulary, seq_len 256, shared classifier.
pub const STORIES15M: Standin = Standin {
    name: "stories15M",
    dim: 288,
    hidden_dim: 768,
    n_layers: 6,
    n_heads: 6,
    n_kv_heads: 6,
    vocab_size: 32000,
    seq_len: 256,
    seed: 15,
};

pub const ALL: [Standin; 3] = [STORIES260K, STORIES260K_UNSHARED, STORIES15M];

/// Approximately standard normal from integer-derived uniforms: the sum of
/// four uniforms, centred and scaled to variance 1 (no libm, so the same
/// bits everywhere).
fn normal(r: &mut Rng) -> f64 {
    let s = r.uniform() + r.uniform() + r.uniform() + r.uniform();
    (s - 2.0) * 1.732_050_807_568_877_2
}

impl Standin {
    pub fn vocab(&self) -> usize {
        self.vocab_size.unsigned_abs() as usize
    }

    /// The checkpoint file's bytes.
    pub fn checkpoint(&self) -> Vec<u8> {
        let (d, h, l, v) = (
            self.dim as usize,
            self.hidden_dim as usize,
            self.n_layers as usize,
            self.vocab(),
        );
        let head = d / self.n_heads as usize;
        let kv = head * self.n_kv_heads as usize;
        let mut out = Vec::new();
        for x in [
            self.dim,
            self.hidden_dim,
            self.n_layers,
            self.n_heads,
            self.n_kv_heads,
            self.vocab_size,
            self.seq_len,
        ] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let mut rng = Rng::new(self.seed);
        let mut put = |n: usize, mean: f64, std: f64, out: &mut Vec<u8>| {
            for _ in 0..n {
                let x = (mean + std * normal(&mut rng)) as f32;
                out.extend_from_slice(&x.to_le_bytes());
            }
        };
        // Scales of a trained small llama: embeddings of ~0.25 per component
        // (logits spread over several units, as trained tinyllamas'),
        // projections ~1/sqrt(fan-in), output projections smaller, norm
        // weights near 1.
        let inv = |n: usize| 1.0 / (n as f64).sqrt();
        put(v * d, 0.0, 0.25, &mut out); // token embedding
        put(l * d, 1.0, 0.1, &mut out); // attention norms
        put(l * d * d, 0.0, inv(d), &mut out); // wq
        put(l * kv * d, 0.0, inv(d), &mut out); // wk
        put(l * kv * d, 0.0, inv(d), &mut out); // wv
        put(l * d * d, 0.0, 0.5 * inv(d), &mut out); // wo
        put(l * d, 1.0, 0.1, &mut out); // ffn norms
        put(l * h * d, 0.0, inv(d), &mut out); // w1
        put(l * d * h, 0.0, 0.5 * inv(h), &mut out); // w2
        put(l * h * d, 0.0, inv(d), &mut out); // w3
        put(d, 1.0, 0.1, &mut out); // final norm
                                    // RoPE's tables, which readers skip: here a marker pattern rather
                                    // than cos/sin (which would need libm).
        for i in 0..self.seq_len as usize * head {
            out.extend_from_slice(&(i as f32 * -1e-3).to_le_bytes());
        }
        if self.vocab_size < 0 {
            put(v * d, 0.0, 0.25, &mut out); // the classifier
        }
        out
    }

    /// The tokenizer.bin's bytes.
    pub fn tokenizer(&self) -> Vec<u8> {
        tokenizer_bin(self.vocab())
    }

    /// Write `dir/NAME.bin` and `dir/NAME.tok.bin`; their paths.
    pub fn write(&self, dir: &Path) -> (PathBuf, PathBuf) {
        let model = dir.join(format!("{}.bin", self.name));
        let tok = dir.join(format!("{}.tok.bin", self.name));
        std::fs::write(&model, self.checkpoint()).unwrap();
        std::fs::write(&tok, self.tokenizer()).unwrap();
        (model, tok)
    }
}

/// The story the merges are learned from (written for these tests).
const CORPUS: &str = "Once upon a time, there was a little girl named Lily. \
She lived in a small house with her mom and her dog, Max. Every day Lily and Max \
went to the park to play. One day, they saw a big red ball under a tree. \
\"Look, Max! A ball!\" said Lily. Max ran to the ball and brought it back. \
Lily was very happy. She threw the ball again and again, and Max ran after it. \
Then the sun went down and it was time to go home. Lily said, \"Thank you for \
playing with me, Max.\" Max wagged his tail. They walked home together, and mom \
made them a warm dinner. After dinner, Lily told her mom about the ball, the tree \
and the park. Her mom smiled and said, \"You are a kind girl, Lily.\" That night, \
Lily and Max slept well. The next morning they went to the park again, and the \
ball was still there, waiting for them under the big tree.";

/// SentencePiece's word boundary mark.
const SPACE: char = '\u{2581}';

/// The pieces after the 259 fixed ones, in vocabulary order with their
/// scores: merges in the order learned (score -rank), then filler pieces
/// when the story has no more merges, then the story's characters.
fn pieces(n_vocab: usize) -> Vec<(String, f32)> {
    // Words with their counts, each a list of symbols; "▁" starts a word.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for w in CORPUS.split(' ') {
        *counts.entry(format!("{SPACE}{w}")).or_default() += 1;
    }
    let mut words: Vec<(Vec<String>, usize)> = counts
        .iter()
        .map(|(w, &c)| (w.chars().map(String::from).collect(), c))
        .collect();
    let mut chars: BTreeMap<char, usize> = BTreeMap::new();
    for (w, &c) in &counts {
        for ch in w.chars() {
            *chars.entry(ch).or_default() += c;
        }
    }
    let mut by_count: Vec<(char, usize)> = chars.into_iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let n_pieces = n_vocab - 3 - 256 - by_count.len();
    let mut merges: Vec<String> = Vec::new();
    while merges.len() < n_pieces {
        let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (w, c) in &words {
            for p in w.windows(2) {
                *pairs.entry((p[0].clone(), p[1].clone())).or_default() += c;
            }
        }
        // The most frequent pair; among equals the first in string order.
        let Some(((a, b), n)) = pairs
            .into_iter()
            .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
        else {
            break;
        };
        if n < 2 {
            break;
        }
        let joined = format!("{a}{b}");
        for (w, _) in &mut words {
            let mut i = 0;
            while i + 1 < w.len() {
                if w[i] == a && w[i + 1] == b {
                    w[i] = joined.clone();
                    w.remove(i + 1);
                }
                i += 1;
            }
        }
        merges.push(joined);
    }
    // Filler: distinct syllable words, as a large vocabulary's rare pieces.
    let syll = [
        "ba", "ko", "ri", "mu", "te", "sa", "no", "li", "pe", "da", "gu", "vi", "zo", "fa", "he",
        "ju",
    ];
    let mut seen: std::collections::HashSet<String> = merges.iter().cloned().collect();
    let mut k = 0usize;
    while merges.len() < n_pieces {
        let (mut x, mut s) = (k, String::from(SPACE));
        loop {
            s.push_str(syll[x % syll.len()]);
            x /= syll.len();
            if x == 0 {
                break;
            }
        }
        k += 1;
        if seen.insert(s.clone()) {
            merges.push(s);
        }
    }
    let mut out: Vec<(String, f32)> = merges
        .into_iter()
        .enumerate()
        .map(|(i, p)| (p, -(i as f32)))
        .collect();
    let base = out.len();
    for (j, (ch, _)) in by_count.into_iter().enumerate() {
        out.push((ch.to_string(), -((base + j) as f32)));
    }
    out
}

/// A llama2.c tokenizer.bin of `n_vocab` tokens, as llama2.c's tokenizer.py
/// exports a SentencePiece model: pieces with ▁ written as spaces, BOS and
/// EOS as "\n<s>\n" and "\n</s>\n", and the longest piece's byte length first.
pub fn tokenizer_bin(n_vocab: usize) -> Vec<u8> {
    let mut toks: Vec<(Vec<u8>, f32)> = vec![
        (b"<unk>".to_vec(), 0.0),
        (b"\n<s>\n".to_vec(), 0.0),
        (b"\n</s>\n".to_vec(), 0.0),
    ];
    for b in 0..=255u8 {
        toks.push((format!("<0x{b:02X}>").into_bytes(), 0.0));
    }
    for (p, s) in pieces(n_vocab) {
        toks.push((p.replace(SPACE, " ").into_bytes(), s));
    }
    assert_eq!(toks.len(), n_vocab);
    let max = toks.iter().map(|(t, _)| t.len()).max().unwrap() as i32;
    let mut out = max.to_le_bytes().to_vec();
    for (t, s) in toks {
        out.extend_from_slice(&s.to_le_bytes());
        out.extend_from_slice(&(t.len() as i32).to_le_bytes());
        out.extend_from_slice(&t);
    }
    out
}

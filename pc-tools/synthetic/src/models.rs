//! Deterministic small GGUF models (spec §10.1, §10.2), built in memory.
//!
//! Every matrix is N(0,1)/√cols (embeddings N(0,1)), norm gains
//! 1 + 0.1·N(0,1), biases and betas 0.1·N(0,1), all from a seeded
//! generator, so a given [`ModelOpts`] always gives the same bytes.
//! Matrices are stored in `opts.wtype`; 1-D tensors are always F32.

use crate::rng::Rng;
use crate::vocab;
use ssnail_format::ggml::{quantize_native, GgmlType};
use ssnail_gguf::writer::GgufWriter;

/// Which model to build and how. Start from [`ModelOpts::llama`],
/// [`ModelOpts::gpt2`] or [`ModelOpts::bert`] (the §10 shapes) and change
/// fields as needed.
#[derive(Clone, Debug)]
pub struct ModelOpts {
    /// "llama", "gpt2" or "bert".
    pub arch: &'static str,
    pub dim: usize,
    pub n_layers: usize,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub hidden: usize,
    pub context_length: usize,
    /// RMS eps (llama) or layer-norm eps (gpt2, bert).
    pub eps: f32,
    pub rope_base: f32,
    /// Storage type of every matrix: F32, F16, BF16, Q8_0, Q4_0 or Q4_K
    /// (Q4_K needs every row length a multiple of 256: the llama shapes).
    pub wtype: GgmlType,
    pub seed: u64,
    /// Decoders: no `output.weight` (the classifier reuses the embedding).
    pub tied: bool,
    /// `general.name`, if any.
    pub name: Option<String>,
    /// BERT `pooling_type`: 1 mean, 2 CLS.
    pub pooling: u32,
    /// `tokenizer.ggml.add_bos_token`, if written.
    pub add_bos: Option<bool>,
    /// BERT: write `token_types.weight` (2 rows).
    pub token_types: bool,
    /// `tokenizer.chat_template`, if written.
    pub chat_template: Option<String>,
    /// Llama: tokens of the SentencePiece vocabulary (at least 400).
    pub vocab_size: usize,
    /// With `tied`: write `output.weight` anyway, as a copy of
    /// `token_embd.weight`, as llama.cpp's `convert-llama2c-to-ggml` does.
    pub tied_copy: bool,
}

impl ModelOpts {
    /// §10.1: dim 256, 2 layers, 8 heads, 4 KV heads (GQA), hidden 512,
    /// context 128, 400-token SentencePiece vocabulary, untied.
    pub fn llama() -> ModelOpts {
        ModelOpts {
            arch: "llama",
            dim: 256,
            n_layers: 2,
            n_heads: 8,
            n_kv_heads: 4,
            hidden: 512,
            context_length: 128,
            eps: 1e-5,
            rope_base: 10000.0,
            wtype: GgmlType::F32,
            seed: 1,
            tied: false,
            name: None,
            pooling: 1,
            add_bos: None,
            token_types: false,
            chat_template: None,
            vocab_size: 400,
            tied_copy: false,
        }
    }
    /// The shape of llama2.c's stories260K as `convert-llama2c-to-ggml`
    /// writes it: dim 64, hidden 172, 5 layers, 8 heads with 4 KV heads,
    /// a 512-token vocabulary, context 512, every matrix F32, the tied
    /// classifier written as a copy of the embedding. Random weights.
    pub fn stories260k() -> ModelOpts {
        ModelOpts {
            dim: 64,
            n_layers: 5,
            n_heads: 8,
            n_kv_heads: 4,
            hidden: 172,
            context_length: 512,
            tied: true,
            tied_copy: true,
            vocab_size: 512,
            name: Some("stories260K shape".into()),
            ..ModelOpts::llama()
        }
    }
    /// §10.2: dim 128, 2 layers, 4 heads, hidden 512, context 64, fused
    /// qkv, tied classifier, byte-level BPE vocabulary with merges.
    pub fn gpt2() -> ModelOpts {
        ModelOpts {
            arch: "gpt2",
            dim: 128,
            n_heads: 4,
            n_kv_heads: 4,
            hidden: 512,
            context_length: 64,
            tied: true,
            ..ModelOpts::llama()
        }
    }
    /// §10.2: dim 128, 2 layers, 4 heads, hidden 256, context 32, eps
    /// 1e-12, mean pooling, two token types, WordPiece vocabulary.
    pub fn bert() -> ModelOpts {
        ModelOpts {
            arch: "bert",
            dim: 128,
            n_heads: 4,
            n_kv_heads: 4,
            hidden: 256,
            context_length: 32,
            eps: 1e-12,
            token_types: true,
            ..ModelOpts::llama()
        }
    }
    pub fn with_wtype(mut self, t: GgmlType) -> Self {
        self.wtype = t;
        self
    }
    pub fn with_tied(mut self, tied: bool) -> Self {
        self.tied = tied;
        self
    }
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    pub fn with_name(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }
    pub fn with_pooling(mut self, pooling: u32) -> Self {
        self.pooling = pooling;
        self
    }
}

/// Build the GGUF file for `opts`.
pub fn build(opts: &ModelOpts) -> Vec<u8> {
    let mut b = Builder::new(opts);
    match opts.arch {
        "llama" => b.llama(),
        "gpt2" => b.gpt2(),
        "bert" => b.bert(),
        a => panic!("testkit: unknown architecture {a}"),
    }
    b.w.to_bytes().expect("testkit model serialises")
}

/// Llama with the given weight type and tying (other fields as §10.1).
pub fn llama(wtype: GgmlType, tied: bool) -> Vec<u8> {
    build(&ModelOpts::llama().with_wtype(wtype).with_tied(tied))
}

/// GPT-2 with the given weight type and tying (other fields as §10.2).
pub fn gpt2(wtype: GgmlType, tied: bool) -> Vec<u8> {
    build(&ModelOpts::gpt2().with_wtype(wtype).with_tied(tied))
}

/// BERT with the given weight type and pooling (1 mean, 2 CLS).
pub fn bert(wtype: GgmlType, pooling: u32) -> Vec<u8> {
    build(&ModelOpts::bert().with_wtype(wtype).with_pooling(pooling))
}

/// Write `bytes` to `path` (panics with the path on failure: test support).
pub fn write(path: impl AsRef<std::path::Path>, bytes: &[u8]) {
    let p = path.as_ref();
    std::fs::write(p, bytes)
        .unwrap_or_else(|e| panic!("testkit: cannot write {}: {e}", p.display()));
}

/// Quantise f32 values (a whole tensor, row length `cols`) into `t`'s bytes.
pub fn encode(t: GgmlType, x: &[f32], cols: usize) -> Vec<u8> {
    let mut out = Vec::new();
    if t == GgmlType::Q4K {
        for row in x.chunks_exact(cols) {
            crate::kquant::quantize_q4_k(row, &mut out);
        }
    } else {
        assert!(t.is_native(), "testkit: cannot write {} weights", t.name());
        quantize_native(t, x, &mut out);
    }
    out
}

struct Builder<'a> {
    o: &'a ModelOpts,
    rng: Rng,
    w: GgufWriter,
}

impl<'a> Builder<'a> {
    fn new(o: &'a ModelOpts) -> Self {
        Builder {
            o,
            rng: Rng::new(o.seed),
            w: GgufWriter::new(),
        }
    }

    /// A rows × cols matrix in the model's weight type; returns its bytes.
    fn matrix(&mut self, name: &str, rows: usize, cols: usize, scale: f32) -> Vec<u8> {
        let x: Vec<f32> = (0..rows * cols)
            .map(|_| self.rng.normal() as f32 * scale)
            .collect();
        let t = self.o.wtype;
        let data = encode(t, &x, cols);
        self.w
            .tensor(name, &[cols as u64, rows as u64], t, data.clone())
            .expect("testkit matrix");
        data
    }
    fn weight(&mut self, name: &str, rows: usize, cols: usize) {
        self.matrix(name, rows, cols, 1.0 / (cols as f32).sqrt());
    }
    fn vector(&mut self, name: &str, n: usize, base: f32, scale: f32) {
        let x: Vec<f32> = (0..n)
            .map(|_| base + scale * self.rng.normal() as f32)
            .collect();
        let bytes = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.w
            .tensor(name, &[n as u64], GgmlType::F32, bytes)
            .expect("testkit vector");
    }
    fn gain(&mut self, name: &str, n: usize) {
        self.vector(name, n, 1.0, 0.1);
    }
    fn bias(&mut self, name: &str, n: usize) {
        self.vector(name, n, 0.0, 0.1);
    }

    fn common_meta(&mut self) {
        let o = self.o;
        let a = o.arch;
        self.w.meta_str("general.architecture", a);
        if let Some(n) = &o.name {
            self.w.meta_str("general.name", n);
        }
        self.w
            .meta_u32(&format!("{a}.context_length"), o.context_length as u32)
            .meta_u32(&format!("{a}.embedding_length"), o.dim as u32)
            .meta_u32(&format!("{a}.block_count"), o.n_layers as u32)
            .meta_u32(&format!("{a}.feed_forward_length"), o.hidden as u32)
            .meta_u32(&format!("{a}.attention.head_count"), o.n_heads as u32);
    }

    fn llama(&mut self) {
        let o = self.o.clone();
        self.common_meta();
        self.w
            .meta_u32("llama.attention.head_count_kv", o.n_kv_heads as u32)
            .meta_f32("llama.attention.layer_norm_rms_epsilon", o.eps)
            .meta_f32("llama.rope.freq_base", o.rope_base);
        let v = vocab::spm_sized(o.vocab_size);
        v.write(&mut self.w, &o);
        let kvd = o.n_kv_heads * (o.dim / o.n_heads);
        let embd = self.matrix("token_embd.weight", v.tokens.len(), o.dim, 1.0);
        for l in 0..o.n_layers {
            let p = format!("blk.{l}");
            self.gain(&format!("{p}.attn_norm.weight"), o.dim);
            self.weight(&format!("{p}.attn_q.weight"), o.dim, o.dim);
            self.weight(&format!("{p}.attn_k.weight"), kvd, o.dim);
            self.weight(&format!("{p}.attn_v.weight"), kvd, o.dim);
            self.weight(&format!("{p}.attn_output.weight"), o.dim, o.dim);
            self.gain(&format!("{p}.ffn_norm.weight"), o.dim);
            self.weight(&format!("{p}.ffn_gate.weight"), o.hidden, o.dim);
            self.weight(&format!("{p}.ffn_up.weight"), o.hidden, o.dim);
            self.weight(&format!("{p}.ffn_down.weight"), o.dim, o.hidden);
        }
        self.gain("output_norm.weight", o.dim);
        if !o.tied {
            self.weight("output.weight", v.tokens.len(), o.dim);
        } else if o.tied_copy {
            let dims = [o.dim as u64, v.tokens.len() as u64];
            self.w
                .tensor("output.weight", &dims, o.wtype, embd)
                .expect("testkit classifier copy");
        }
    }

    fn gpt2(&mut self) {
        let o = self.o.clone();
        self.common_meta();
        self.w.meta_f32("gpt2.attention.layer_norm_epsilon", o.eps);
        let v = vocab::bpe();
        v.write(&mut self.w, &o);
        let d = o.dim;
        self.matrix("token_embd.weight", v.tokens.len(), d, 1.0);
        self.matrix("position_embd.weight", o.context_length, d, 0.1);
        for l in 0..o.n_layers {
            let p = format!("blk.{l}");
            self.gain(&format!("{p}.attn_norm.weight"), d);
            self.bias(&format!("{p}.attn_norm.bias"), d);
            self.weight(&format!("{p}.attn_qkv.weight"), 3 * d, d);
            self.bias(&format!("{p}.attn_qkv.bias"), 3 * d);
            self.weight(&format!("{p}.attn_output.weight"), d, d);
            self.bias(&format!("{p}.attn_output.bias"), d);
            self.gain(&format!("{p}.ffn_norm.weight"), d);
            self.bias(&format!("{p}.ffn_norm.bias"), d);
            self.weight(&format!("{p}.ffn_up.weight"), o.hidden, d);
            self.bias(&format!("{p}.ffn_up.bias"), o.hidden);
            self.weight(&format!("{p}.ffn_down.weight"), d, o.hidden);
            self.bias(&format!("{p}.ffn_down.bias"), d);
        }
        self.gain("output_norm.weight", d);
        self.bias("output_norm.bias", d);
        if !o.tied {
            self.weight("output.weight", v.tokens.len(), d);
        }
    }

    fn bert(&mut self) {
        let o = self.o.clone();
        self.common_meta();
        self.w
            .meta_f32("bert.attention.layer_norm_epsilon", o.eps)
            .meta_bool("bert.attention.causal", false)
            .meta_u32("bert.pooling_type", o.pooling);
        let v = vocab::wordpiece();
        v.write(&mut self.w, &o);
        let d = o.dim;
        self.matrix("token_embd.weight", v.tokens.len(), d, 1.0);
        self.matrix("position_embd.weight", o.context_length, d, 0.1);
        if o.token_types {
            self.matrix("token_types.weight", 2, d, 0.1);
        }
        self.gain("token_embd_norm.weight", d);
        self.bias("token_embd_norm.bias", d);
        for l in 0..o.n_layers {
            let p = format!("blk.{l}");
            for m in ["attn_q", "attn_k", "attn_v", "attn_output"] {
                self.weight(&format!("{p}.{m}.weight"), d, d);
                self.bias(&format!("{p}.{m}.bias"), d);
            }
            self.gain(&format!("{p}.attn_output_norm.weight"), d);
            self.bias(&format!("{p}.attn_output_norm.bias"), d);
            self.weight(&format!("{p}.ffn_up.weight"), o.hidden, d);
            self.bias(&format!("{p}.ffn_up.bias"), o.hidden);
            self.weight(&format!("{p}.ffn_down.weight"), d, o.hidden);
            self.bias(&format!("{p}.ffn_down.bias"), d);
            self.gain(&format!("{p}.layer_output_norm.weight"), d);
            self.bias(&format!("{p}.layer_output_norm.bias"), d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssnail_gguf::Gguf;

    fn open(bytes: &[u8]) -> (tempfile::TempDir, Gguf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.gguf");
        write(&p, bytes);
        let g = Gguf::open(&p).unwrap();
        (dir, g)
    }

    #[test]
    fn models_read_back() {
        let a = llama(GgmlType::Q8_0, false);
        assert_eq!(a, llama(GgmlType::Q8_0, false), "deterministic");
        let (_d, g) = open(&a);
        assert_eq!(g.architecture(), Some("llama"));
        assert_eq!(
            g.tensor("blk.1.attn_k.weight").unwrap().shape,
            vec![256, 128]
        );
        assert_eq!(g.tensor("blk.1.attn_k.weight").unwrap().ty, GgmlType::Q8_0);
        assert_eq!(g.tensor("output_norm.weight").unwrap().ty, GgmlType::F32);
        assert!(g.tensor("output.weight").is_some());
        assert_eq!(g.get_strings("tokenizer.ggml.tokens").unwrap().len(), 400);

        let (_d, g) = open(&gpt2(GgmlType::F16, true));
        assert!(g.tensor("output.weight").is_none());
        assert_eq!(
            g.tensor("blk.0.attn_qkv.weight").unwrap().shape,
            vec![128, 384]
        );
        assert_eq!(
            g.tensor("position_embd.weight").unwrap().shape,
            vec![128, 64]
        );

        let (_d, g) = open(&llama(GgmlType::Q4K, true));
        assert_eq!(g.tensor("blk.0.ffn_down.weight").unwrap().ty, GgmlType::Q4K);

        let (_d, g) = open(&bert(GgmlType::Q8_0, 2));
        assert_eq!(g.get_u64("bert.pooling_type"), Some(2));
        assert_eq!(g.tensor("token_types.weight").unwrap().shape, vec![128, 2]);
        assert_eq!(g.tensor("blk.0.ffn_up.weight").unwrap().ty, GgmlType::Q8_0);
        assert_eq!(g.get_u64("tokenizer.ggml.cls_token_id"), Some(2));
    }
}

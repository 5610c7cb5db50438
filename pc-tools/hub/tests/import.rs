//! `import`: Hugging Face checkpoints → GGUF in llama.cpp's conventions.
//!
//! * all-MiniLM-L6-v2 (from the cache, `make testdata`): names, shapes,
//!   types and metadata as convert_hf_to_gguf.py writes them; tokenizer
//!   arrays equal to llama.cpp's own bert-bge vocabulary file; llama.cpp's
//!   bert-bge tokenizer cases reproduced on the imported GGUF; the pooled
//!   embedding of the GGUF equal to an f64 BERT computed here straight from
//!   the safetensors with Hugging Face's conventions.
//! * a small llama checkpoint written by the test: the Q/K permutation is
//!   checked by comparing logits of a Hugging Face-convention forward pass
//!   (rotate-half RoPE, unpermuted weights) with the GGUF-convention
//!   reference (adjacent-pair RoPE) on the imported file.

use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde_json::json;
use ssnail_format::ggml::{f32_to_f16, GgmlType};
use ssnail_gguf::Gguf;
use ssnail_hub::import::{import, OutType};
use ssnail_testkit::reference::{self, RefOpts};
use ssnail_tokenizer::{GgufTokenizer, Vocab};
use std::path::{Path, PathBuf};

/// The MiniLM checkpoint unpacked by tools/fetch-testdata.sh.
fn minilm_dir() -> PathBuf {
    ssnail_testkit::cache::minilm()
}

/// Import MiniLM once per output type for all tests of this file.
fn minilm_gguf(outtype: OutType) -> PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
    let out = dir.path().join(format!("minilm-{outtype:?}.gguf"));
    let _g = LOCK.lock().unwrap();
    if !out.exists() {
        let done = import(&minilm_dir(), &out, outtype, Some("all-MiniLM-L6-v2")).unwrap();
        assert_eq!(
            (done.arch, done.n_tensors, done.n_vocab),
            ("bert", 101, 30522)
        );
    }
    out
}

#[test]
fn minilm_metadata_and_tensors_follow_llama_cpp() {
    let g = Gguf::open(minilm_gguf(OutType::Auto)).unwrap();
    let u = |k: &str| g.get_u64(k).unwrap_or_else(|| panic!("{k} missing"));
    assert_eq!(g.architecture(), Some("bert"));
    assert_eq!(g.get_str("general.name"), Some("all-MiniLM-L6-v2"));
    assert_eq!(u("bert.block_count"), 6);
    assert_eq!(u("bert.context_length"), 512);
    assert_eq!(u("bert.embedding_length"), 384);
    assert_eq!(u("bert.feed_forward_length"), 1536);
    assert_eq!(u("bert.attention.head_count"), 12);
    assert_eq!(
        g.get_f64("bert.attention.layer_norm_epsilon")
            .map(|v| v as f32),
        Some(1e-12f32)
    );
    assert_eq!(g.get_bool("bert.attention.causal"), Some(false));
    // Mean pooling, from 1_Pooling/config.json.
    assert_eq!(u("bert.pooling_type"), 1);
    assert_eq!(u("general.file_type"), 1, "auto: F16 for an F32 checkpoint");
    assert_eq!(u("tokenizer.ggml.token_type_count"), 2);
    assert_eq!(g.get_str("tokenizer.ggml.model"), Some("bert"));
    assert_eq!(g.get_str("tokenizer.ggml.pre"), Some("bert-bge"));
    for (k, v) in [
        ("unknown", 100),
        ("seperator", 102),
        ("padding", 0),
        ("cls", 101),
        ("mask", 103),
        ("bos", 101),
        ("eos", 102),
    ] {
        assert_eq!(u(&format!("tokenizer.ggml.{k}_token_id")), v, "{k}");
    }
    assert_eq!(g.get_bool("tokenizer.ggml.add_bos_token"), Some(true));
    assert_eq!(g.get_bool("tokenizer.ggml.add_eos_token"), Some(true));
    assert_eq!(g.get_bool("tokenizer.ggml.add_sep_token"), Some(false));
    assert_eq!(
        g.get_bool("tokenizer.ggml.normalizer.lowercase"),
        Some(true)
    );

    assert_eq!(g.tensors.len(), 101, "pooler and position ids dropped");
    let t = |n: &str| {
        let t = g.tensor(n).unwrap_or_else(|| panic!("{n} missing"));
        (t.ty, t.shape.clone())
    };
    assert_eq!(t("token_embd.weight"), (GgmlType::F16, vec![384, 30522]));
    assert_eq!(t("position_embd.weight"), (GgmlType::F32, vec![384, 512]));
    assert_eq!(t("token_types.weight"), (GgmlType::F32, vec![384, 2]));
    assert_eq!(t("token_embd_norm.weight"), (GgmlType::F32, vec![384]));
    assert_eq!(t("token_embd_norm.bias"), (GgmlType::F32, vec![384]));
    for l in 0..6 {
        let b = |s: &str| format!("blk.{l}.{s}");
        for m in ["attn_q", "attn_k", "attn_v", "attn_output"] {
            assert_eq!(
                t(&b(&format!("{m}.weight"))),
                (GgmlType::F16, vec![384, 384])
            );
            assert_eq!(t(&b(&format!("{m}.bias"))), (GgmlType::F32, vec![384]));
        }
        assert_eq!(t(&b("ffn_up.weight")), (GgmlType::F16, vec![384, 1536]));
        assert_eq!(t(&b("ffn_down.weight")), (GgmlType::F16, vec![1536, 384]));
        assert_eq!(t(&b("ffn_up.bias")), (GgmlType::F32, vec![1536]));
        for n in ["attn_output_norm", "layer_output_norm"] {
            assert_eq!(t(&b(&format!("{n}.weight"))), (GgmlType::F32, vec![384]));
            assert_eq!(t(&b(&format!("{n}.bias"))), (GgmlType::F32, vec![384]));
        }
    }

    // The bytes are the checkpoint's values: F16 rounding of the matrix,
    // F32 copies of the rest.
    let bytes = std::fs::read(minilm_dir().join("model.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let src = f32s(&st, "encoder.layer.2.attention.self.key.weight");
    let want: Vec<u8> = src
        .iter()
        .flat_map(|v| f32_to_f16(*v).to_le_bytes())
        .collect();
    assert!(g.data(g.tensor("blk.2.attn_k.weight").unwrap()) == want.as_slice());
    let src = f32s(&st, "embeddings.position_embeddings.weight");
    let want: Vec<u8> = src.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert!(g.data(g.tensor("position_embd.weight").unwrap()) == want.as_slice());
}

#[test]
fn minilm_vocabulary_equals_llama_cpps_bert_bge_file() {
    // llama.cpp ships ggml-vocab-bert-bge.gguf, made by its converter from the
    // same bert-base-uncased vocabulary: word-initial pieces with U+2581,
    // `##` continuations bare, [PAD] [UNK] [CLS] [SEP] [MASK] as control.
    let ours = Gguf::open(minilm_gguf(OutType::Auto)).unwrap();
    let theirs = Gguf::open(ssnail_testkit::llama_vocab::gguf("bert-bge")).unwrap();
    let a = ours.get_strings("tokenizer.ggml.tokens").unwrap();
    let b = theirs.get_strings("tokenizer.ggml.tokens").unwrap();
    assert_eq!(a.len(), b.len());
    assert_eq!(
        ours.get_i64s("tokenizer.ggml.token_type"),
        theirs.get_i64s("tokenizer.ggml.token_type")
    );
    // The one difference: that file predates the converter's current rule
    // (only control tokens stay unprefixed), so its 994 normal `[unusedN]`
    // tokens are bare there and `▁[unusedN]` here, as today's
    // convert_hf_to_gguf.py writes them. No input can produce them anyway:
    // the word splitter cuts `[` off.
    let mut unused = 0;
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x != y {
            assert!(
                y.starts_with("[unused") && *x == format!("\u{2581}{y}"),
                "token {i}: {x:?} vs {y:?}"
            );
            unused += 1;
        }
    }
    assert_eq!(unused, 994);
    assert_eq!(a[1996], "\u{2581}the");
    assert_eq!(a[2015], "s", "##s is stored bare");
    assert_eq!(a[101], "[CLS]");
}

#[test]
fn tokenizer_on_the_imported_gguf_reproduces_llama_cpp_bert_bge_cases() {
    let g = Gguf::open(minilm_gguf(OutType::Auto)).unwrap();
    let tok = GgufTokenizer::new(Vocab::from_gguf(&g).unwrap()).unwrap();
    let cases = ssnail_testkit::llama_vocab::cases("bert-bge");
    assert!(cases.len() >= 40);
    for (text, want) in &cases {
        assert_eq!(&tok.encode(text, false), want, "{text:?}");
    }
    assert_eq!(
        tok.encode("Hello world", true),
        [101, 7592, 2088, 102],
        "[CLS] … [SEP] from the imported special ids"
    );
}

fn f32s(st: &SafeTensors, name: &str) -> Vec<f32> {
    let v = st.tensor(name).unwrap();
    assert_eq!(v.dtype(), Dtype::F32);
    v.data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// A matrix in Hugging Face's layout: [out][in].
struct Lin {
    w: Vec<f64>,
    b: Vec<f64>,
    n_in: usize,
}

impl Lin {
    fn load(st: &SafeTensors, prefix: &str) -> Lin {
        let w: Vec<f64> = f32s(st, &format!("{prefix}.weight"))
            .into_iter()
            .map(f64::from)
            .collect();
        let b: Vec<f64> = f32s(st, &format!("{prefix}.bias"))
            .into_iter()
            .map(f64::from)
            .collect();
        let n_in = w.len() / b.len();
        Lin { w, b, n_in }
    }
    fn apply(&self, x: &[f64]) -> Vec<f64> {
        self.b
            .iter()
            .enumerate()
            .map(|(o, b)| {
                b + self.w[o * self.n_in..(o + 1) * self.n_in]
                    .iter()
                    .zip(x)
                    .map(|(w, x)| w * x)
                    .sum::<f64>()
            })
            .collect()
    }
}

fn layer_norm(x: &[f64], g: &[f64], b: &[f64], eps: f64) -> Vec<f64> {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let inv = 1.0 / (var + eps).sqrt();
    x.iter()
        .zip(g)
        .zip(b)
        .map(|((v, g), b)| (v - mean) * inv * g + b)
        .collect()
}

/// sentence-transformers' all-MiniLM-L6-v2 before normalisation, in f64,
/// from the safetensors with Hugging Face's names and conventions (erf GELU,
/// post-LN, token type 0, mean pooling).
fn hf_bert_mean_embedding(dir: &Path, tokens: &[u32]) -> Vec<f64> {
    let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let (dim, n_head, eps) = (384, 12, 1e-12);
    let hd = dim / n_head;
    let v64 = |n: &str| -> Vec<f64> { f32s(&st, n).into_iter().map(f64::from).collect() };
    let word = v64("embeddings.word_embeddings.weight");
    let pos = v64("embeddings.position_embeddings.weight");
    let ty = v64("embeddings.token_type_embeddings.weight");
    let (eg, eb) = (
        v64("embeddings.LayerNorm.weight"),
        v64("embeddings.LayerNorm.bias"),
    );
    let mut x: Vec<Vec<f64>> = tokens
        .iter()
        .enumerate()
        .map(|(p, &t)| {
            let e: Vec<f64> = (0..dim)
                .map(|i| word[t as usize * dim + i] + pos[p * dim + i] + ty[i])
                .collect();
            layer_norm(&e, &eg, &eb, eps)
        })
        .collect();
    for l in 0..6 {
        let p = |s: &str| format!("encoder.layer.{l}.{s}");
        let (q, k, v) = (
            Lin::load(&st, &p("attention.self.query")),
            Lin::load(&st, &p("attention.self.key")),
            Lin::load(&st, &p("attention.self.value")),
        );
        let o = Lin::load(&st, &p("attention.output.dense"));
        let (g1, b1) = (
            v64(&p("attention.output.LayerNorm.weight")),
            v64(&p("attention.output.LayerNorm.bias")),
        );
        let up = Lin::load(&st, &p("intermediate.dense"));
        let down = Lin::load(&st, &p("output.dense"));
        let (g2, b2) = (
            v64(&p("output.LayerNorm.weight")),
            v64(&p("output.LayerNorm.bias")),
        );
        let qs: Vec<Vec<f64>> = x.iter().map(|r| q.apply(r)).collect();
        let ks: Vec<Vec<f64>> = x.iter().map(|r| k.apply(r)).collect();
        let vs: Vec<Vec<f64>> = x.iter().map(|r| v.apply(r)).collect();
        let n = x.len();
        for i in 0..n {
            let mut ctx = vec![0.0; dim];
            for h in 0..n_head {
                let r = h * hd..(h + 1) * hd;
                let scores: Vec<f64> = (0..n)
                    .map(|j| {
                        qs[i][r.clone()]
                            .iter()
                            .zip(&ks[j][r.clone()])
                            .map(|(a, b)| a * b)
                            .sum::<f64>()
                            / (hd as f64).sqrt()
                    })
                    .collect();
                let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
                let z: f64 = e.iter().sum();
                for j in 0..n {
                    for d in r.clone() {
                        ctx[d] += e[j] / z * vs[j][d];
                    }
                }
            }
            let a = o.apply(&ctx);
            let h1: Vec<f64> = x[i].iter().zip(&a).map(|(x, a)| x + a).collect();
            let h1 = layer_norm(&h1, &g1, &b1, eps);
            let f: Vec<f64> = up
                .apply(&h1)
                .into_iter()
                .map(|v| 0.5 * v * (1.0 + libm::erf(v / std::f64::consts::SQRT_2)))
                .collect();
            let f = down.apply(&f);
            let h2: Vec<f64> = h1.iter().zip(&f).map(|(a, b)| a + b).collect();
            x[i] = layer_norm(&h2, &g2, &b2, eps);
        }
    }
    (0..dim)
        .map(|d| x.iter().map(|r| r[d]).sum::<f64>() / x.len() as f64)
        .collect()
}

pub fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (na * nb)
}

#[test]
fn minilm_gguf_embeds_like_the_checkpoint() {
    let path = minilm_gguf(OutType::F32);
    let g = Gguf::open(&path).unwrap();
    let tok = GgufTokenizer::new(Vocab::from_gguf(&g).unwrap()).unwrap();
    let tokens = tok.encode("The quick brown fox jumps over the lazy dog.", true);
    assert_eq!(tokens.len(), 12);
    let want = hf_bert_mean_embedding(&minilm_dir(), &tokens);
    let got = reference::bert_embedding(&g, &tokens, RefOpts::default()).unwrap();
    let cos = cosine(&got, &want);
    println!("GGUF reference vs f64 Hugging Face BERT: cosine {cos:.9}");
    // Only the GELU form differs (the GGUF reference may use the tanh form).
    assert!(cos > 0.99999, "cosine {cos}");
}

#[test]
fn minilm_import_converts_to_a_64_mb_image_that_embeds_like_the_checkpoint() {
    use ssnail_core::{NoHost, Numerics, Ssnail};
    // The default import (F16 matrices, like llama.cpp's) kept as F16 by
    // the converter; the core emulator runs the image.
    let g = Gguf::open(minilm_gguf(OutType::Auto)).unwrap();
    let opts = ssnail_convert::Options {
        mem_mb: 64.0,
        ..Default::default()
    };
    let conv = ssnail_convert::convert(&g, &opts).unwrap();
    assert!(conv.image.len() <= 64 << 20);
    let tok = GgufTokenizer::new(Vocab::from_gguf(&g).unwrap()).unwrap();
    let tokens = tok.encode("The quick brown fox jumps over the lazy dog.", true);
    let want = hf_bert_mean_embedding(&minilm_dir(), &tokens);
    for numerics in [Numerics::Float, Numerics::Hardware] {
        let (mut dev, _) = Ssnail::load_bytes(&conv.image, None).unwrap();
        dev.machine.numerics = numerics;
        let enc = dev.encode(&tokens, &mut NoHost).unwrap();
        assert_eq!(enc.stop_reason, 1);
        assert_eq!(enc.output.len(), 384);
        let got: Vec<f64> = enc.output.iter().map(|v| *v as f64).collect();
        let cos = cosine(&got, &want);
        println!("64 MB image on the core emulator ({numerics:?}) vs f64 Hugging Face BERT: cosine {cos:.7}");
        assert!(cos > 0.9999, "{numerics:?}: cosine {cos}");
    }

    // The image's own tokenizer tables (what the MEGA65 uses) give llama.cpp's
    // ids on every plain-ASCII bert-bge case, wrapped in [CLS] … [SEP].
    let mem = ssnail_tokenizer::image::image_memory(&conv.image).unwrap();
    let image_tok = ssnail_tokenizer::ImageTokenizer::new(&mem).unwrap();
    let plain = |s: &str| s.bytes().all(ssnail_tokenizer::tables::is_index_byte);
    let mut n = 0;
    for (text, want) in ssnail_testkit::llama_vocab::cases("bert-bge")
        .iter()
        .filter(|(t, _)| plain(t))
    {
        let mut wrapped = vec![101];
        wrapped.extend(want);
        wrapped.push(102);
        assert_eq!(image_tok.encode(text, true), wrapped, "{text:?}");
        n += 1;
    }
    assert!(n >= 25, "{n} plain-ASCII cases");
}

// ---------------------------------------------------------------------------
// A llama checkpoint written by the test.

/// Deterministic values in [-scale, scale).
fn values(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32 * scale
        })
        .collect()
}

/// Convert an imported GGUF (matrices kept as F32, F32 KV cache, the full pass at every
/// position: `--all-logits`) and run it on the core emulator (float numerics): the logits at
/// every prompt position, as the script's ARGMAX sees them.
fn emulated_logits(gguf: &Path, prompt: &[u32]) -> Vec<Vec<f32>> {
    use ssnail_core::{Host, Machine, Ssnail};
    struct Capture(Vec<Vec<f32>>);
    impl Host for Capture {
        fn on_argmax(&mut self, logits: &[f32], _m: &Machine) -> Option<u32> {
            self.0.push(logits.to_vec());
            None
        }
    }
    let g = Gguf::open(gguf).unwrap();
    let opts = ssnail_convert::Options {
        kv_f16: false,
        all_logits: true,
        ..Default::default()
    };
    let conv = ssnail_convert::convert(&g, &opts).unwrap();
    let (mut dev, _) = Ssnail::load_bytes(&conv.image, None).unwrap();
    let mut cap = Capture(Vec::new());
    dev.generate(prompt, 1, &mut cap).unwrap();
    assert!(cap.0.len() >= prompt.len(), "{} ARGMAX runs", cap.0.len());
    cap.0.truncate(prompt.len());
    cap.0
}

/// Largest difference relative to the largest reference logit.
fn rel_diff(want: &[f64], got: &[f32]) -> f64 {
    let scale = want.iter().map(|v| v.abs()).fold(0.0, f64::max);
    want.iter()
        .zip(got)
        .map(|(a, b)| (a - *b as f64).abs() / scale)
        .fold(0.0, f64::max)
}

/// The checkpoint's own logits `want` (computed here from its tensors) against
/// the f64 reference on the imported GGUF `g` (file `out`), and against the
/// core emulator running the image converted from it.
fn check_imported_logits(arch: &str, g: &Gguf, out: &Path, ids: &[u32], want: &[Vec<f64>]) {
    let got = reference::decoder_logits(g, ids, RefOpts::default()).unwrap();
    let mut worst = 0.0f64;
    for (w, g) in want.iter().zip(&got) {
        let scale = w.iter().map(|v| v.abs()).fold(0.0, f64::max);
        for (a, b) in w.iter().zip(g) {
            worst = worst.max((a - b).abs() / scale);
        }
    }
    println!("{arch} import: worst logit difference {worst:.3e} (relative to the largest logit)");
    assert!(worst < 1e-9, "{worst}");

    // The converter takes the imported GGUF and the core runs it.
    let emu = emulated_logits(out, ids);
    let d = want
        .iter()
        .zip(&emu)
        .map(|(w, e)| rel_diff(w, e))
        .fold(0.0, f64::max);
    println!("{arch} import -> image -> core emulator: logits within {d:.2e}");
    assert!(d < 1e-5, "{d}");
}

/// Write `tensors` (name, HF shape, values) as model.safetensors (F32).
fn write_safetensors(dir: &Path, tensors: &[(String, Vec<usize>, Vec<f32>)]) {
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, _, v)| v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let views: Vec<(String, TensorView)> = tensors
        .iter()
        .zip(&bytes)
        .map(|((n, s, _), b)| {
            (
                n.clone(),
                TensorView::new(Dtype::F32, s.clone(), b).unwrap(),
            )
        })
        .collect();
    safetensors::serialize_to_file(views, None, &dir.join("model.safetensors")).unwrap();
}

struct TinyLlama {
    dim: usize,
    n_head: usize,
    n_kv: usize,
    hidden: usize,
    n_layer: usize,
    vocab: usize,
    tensors: Vec<(String, Vec<usize>, Vec<f32>)>,
}

impl TinyLlama {
    fn new(vocab: usize) -> TinyLlama {
        let (dim, n_head, n_kv, hidden, n_layer) = (64, 4, 2, 96, 2);
        let hd = dim / n_head;
        let mut t: Vec<(String, Vec<usize>, Vec<f32>)> = Vec::new();
        let mut seed = 1;
        let mut add = |name: &str, shape: Vec<usize>, scale: f32, offset: f32| {
            seed += 1;
            let n = shape.iter().product();
            let v = values(n, seed, scale)
                .into_iter()
                .map(|v| v + offset)
                .collect();
            t.push((name.to_string(), shape, v));
        };
        add("model.embed_tokens.weight", vec![vocab, dim], 1.0, 0.0);
        for l in 0..n_layer {
            let p = |s: &str| format!("model.layers.{l}.{s}");
            add(&p("input_layernorm.weight"), vec![dim], 0.2, 1.0);
            add(
                &p("self_attn.q_proj.weight"),
                vec![n_head * hd, dim],
                0.3,
                0.0,
            );
            add(
                &p("self_attn.k_proj.weight"),
                vec![n_kv * hd, dim],
                0.3,
                0.0,
            );
            add(
                &p("self_attn.v_proj.weight"),
                vec![n_kv * hd, dim],
                0.3,
                0.0,
            );
            add(&p("self_attn.o_proj.weight"), vec![dim, dim], 0.2, 0.0);
            add(&p("post_attention_layernorm.weight"), vec![dim], 0.2, 1.0);
            add(&p("mlp.gate_proj.weight"), vec![hidden, dim], 0.2, 0.0);
            add(&p("mlp.up_proj.weight"), vec![hidden, dim], 0.2, 0.0);
            add(&p("mlp.down_proj.weight"), vec![dim, hidden], 0.2, 0.0);
        }
        add("model.norm.weight", vec![dim], 0.2, 1.0);
        add("lm_head.weight", vec![vocab, dim], 0.5, 0.0);
        TinyLlama {
            dim,
            n_head,
            n_kv,
            hidden,
            n_layer,
            vocab,
            tensors: t,
        }
    }

    fn get(&self, name: &str) -> &[f32] {
        &self.tensors.iter().find(|t| t.0 == name).unwrap().2
    }

    /// Write config.json and model.safetensors.
    fn write_model(&self, dir: &Path) {
        let cfg = json!({
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            "hidden_size": self.dim,
            "intermediate_size": self.hidden,
            "num_attention_heads": self.n_head,
            "num_key_value_heads": self.n_kv,
            "num_hidden_layers": self.n_layer,
            "max_position_embeddings": 256,
            "rms_norm_eps": 1e-5,
            "rope_theta": 10000.0,
            "vocab_size": self.vocab,
            "bos_token_id": 0,
            "eos_token_id": 0,
            "tie_word_embeddings": false
        });
        std::fs::write(dir.join("config.json"), cfg.to_string()).unwrap();
        write_safetensors(dir, &self.tensors);
    }

    /// Write the model and a byte-level BPE tokenizer.json (256 byte
    /// symbols, 5 merges, one special token).
    fn write(&self, dir: &Path) {
        self.write_model(dir);
        let mut vocab = serde_json::Map::new();
        vocab.insert("<|endoftext|>".into(), json!(0));
        for b in 0..=255u8 {
            vocab.insert(
                ssnail_tokenizer::gpt2_bytes::byte_to_char(b).to_string(),
                json!(b as u32 + 1),
            );
        }
        let mut merges = Vec::new();
        for (i, (a, b)) in [("h", "e"), ("l", "l"), ("he", "ll"), ("Ġ", "w"), ("o", "r")]
            .iter()
            .enumerate()
        {
            vocab.insert(format!("{a}{b}"), json!(257 + i));
            merges.push(json!([a, b]));
        }
        let tok = json!({
            "version": "1.0",
            "added_tokens": [{"id": 0, "content": "<|endoftext|>", "special": true,
                              "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}],
            "normalizer": null,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
            "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
            "model": {"type": "BPE", "vocab": vocab, "merges": merges}
        });
        std::fs::write(dir.join("tokenizer.json"), tok.to_string()).unwrap();
        std::fs::write(
            dir.join("tokenizer_config.json"),
            json!({"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "add_bos_token": false}).to_string(),
        )
        .unwrap();
    }

    /// Logits at each position with Hugging Face's conventions: q/k as
    /// stored, RoPE rotating the two halves of each head (rotate_half).
    fn hf_logits(&self, tokens: &[u32]) -> Vec<Vec<f64>> {
        let (dim, hd) = (self.dim, self.dim / self.n_head);
        let mv = |w: &[f32], x: &[f64]| -> Vec<f64> {
            w.chunks_exact(x.len())
                .map(|r| r.iter().zip(x).map(|(a, b)| *a as f64 * b).sum())
                .collect()
        };
        let rms = |x: &[f64], g: &[f32]| -> Vec<f64> {
            let ms = x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64;
            let inv = 1.0 / (ms + 1e-5).sqrt();
            x.iter().zip(g).map(|(v, g)| v * inv * *g as f64).collect()
        };
        let rope = |v: &mut [f64], pos: usize| {
            for head in v.chunks_exact_mut(hd) {
                let half = hd / 2;
                for i in 0..half {
                    let theta = pos as f64 * 10000f64.powf(-2.0 * i as f64 / hd as f64);
                    let (c, s) = (theta.cos(), theta.sin());
                    let (a, b) = (head[i], head[i + half]);
                    head[i] = a * c - b * s;
                    head[i + half] = b * c + a * s;
                }
            }
        };
        let emb = self.get("model.embed_tokens.weight");
        let mut kc: Vec<Vec<Vec<f64>>> = vec![Vec::new(); self.n_layer];
        let mut vc: Vec<Vec<Vec<f64>>> = vec![Vec::new(); self.n_layer];
        let mut out = Vec::new();
        for (pos, &t) in tokens.iter().enumerate() {
            let mut x: Vec<f64> = emb[t as usize * dim..(t as usize + 1) * dim]
                .iter()
                .map(|v| *v as f64)
                .collect();
            for l in 0..self.n_layer {
                let p = |s: &str| format!("model.layers.{l}.{s}");
                let xn = rms(&x, self.get(&p("input_layernorm.weight")));
                let mut q = mv(self.get(&p("self_attn.q_proj.weight")), &xn);
                let mut k = mv(self.get(&p("self_attn.k_proj.weight")), &xn);
                let v = mv(self.get(&p("self_attn.v_proj.weight")), &xn);
                rope(&mut q, pos);
                rope(&mut k, pos);
                kc[l].push(k);
                vc[l].push(v);
                let mut ctx = vec![0.0; dim];
                for h in 0..self.n_head {
                    let kvh = h / (self.n_head / self.n_kv);
                    let qh = &q[h * hd..(h + 1) * hd];
                    let s: Vec<f64> = kc[l]
                        .iter()
                        .map(|k| {
                            qh.iter()
                                .zip(&k[kvh * hd..(kvh + 1) * hd])
                                .map(|(a, b)| a * b)
                                .sum::<f64>()
                                / (hd as f64).sqrt()
                        })
                        .collect();
                    let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = s.iter().map(|v| (v - m).exp()).collect();
                    let z: f64 = e.iter().sum();
                    for (j, vj) in vc[l].iter().enumerate() {
                        for d in 0..hd {
                            ctx[h * hd + d] += e[j] / z * vj[kvh * hd + d];
                        }
                    }
                }
                let a = mv(self.get(&p("self_attn.o_proj.weight")), &ctx);
                x.iter_mut().zip(&a).for_each(|(x, a)| *x += a);
                let xn = rms(&x, self.get(&p("post_attention_layernorm.weight")));
                let gate = mv(self.get(&p("mlp.gate_proj.weight")), &xn);
                let up = mv(self.get(&p("mlp.up_proj.weight")), &xn);
                let h: Vec<f64> = gate
                    .iter()
                    .zip(&up)
                    .map(|(g, u)| g / (1.0 + (-g).exp()) * u)
                    .collect();
                let d = mv(self.get(&p("mlp.down_proj.weight")), &h);
                x.iter_mut().zip(&d).for_each(|(x, d)| *x += d);
            }
            let xn = rms(&x, self.get("model.norm.weight"));
            out.push(mv(self.get("lm_head.weight"), &xn));
        }
        out
    }
}

#[test]
fn llama_import_permutes_q_and_k_for_adjacent_pair_rope() {
    let model = TinyLlama::new(300);
    let dir = tempfile::tempdir().unwrap();
    model.write(dir.path());
    let out = dir.path().join("tiny.gguf");
    let done = import(dir.path(), &out, OutType::F32, None).unwrap();
    assert_eq!(
        (done.arch, done.n_tensors, done.n_vocab),
        ("llama", 21, 300)
    );

    let g = Gguf::open(&out).unwrap();
    assert_eq!(g.get_u64("llama.attention.head_count_kv"), Some(2));
    assert_eq!(g.get_u64("llama.rope.dimension_count"), Some(16));
    assert_eq!(g.get_f64("llama.rope.freq_base"), Some(10000.0));
    assert_eq!(g.get_str("tokenizer.ggml.model"), Some("gpt2"));
    let tokens = g.get_strings("tokenizer.ggml.tokens").unwrap();
    assert_eq!(tokens[0], "<|endoftext|>");
    assert_eq!(tokens[257], "he");
    let pads: Vec<String> = (262..300).map(|i| format!("[PAD{i}]")).collect();
    assert_eq!(
        &tokens[262..],
        pads.as_slice(),
        "ids without a token are padding"
    );
    let types = g.get_i64s("tokenizer.ggml.token_type").unwrap();
    assert_eq!((types[0], types[1], types[299]), (3, 1, 5));
    assert_eq!(
        g.get_strings("tokenizer.ggml.merges").unwrap(),
        ["h e", "l l", "he ll", "Ġ w", "o r"]
    );
    assert_eq!(g.get_u64("tokenizer.ggml.bos_token_id"), Some(0));
    assert_eq!(g.get_bool("tokenizer.ggml.add_bos_token"), Some(false));
    assert_eq!(g.tensor("blk.1.attn_k.weight").unwrap().shape, [64, 32]);
    assert_eq!(g.tensor("output.weight").unwrap().shape, [64, 300]);
    // V is not permuted.
    let v: Vec<u8> = model
        .get("model.layers.0.self_attn.v_proj.weight")
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    assert!(g.data(g.tensor("blk.0.attn_v.weight").unwrap()) == v.as_slice());

    let ids = [5u32, 77, 140, 3, 299, 42, 8, 200];
    let want = model.hf_logits(&ids);
    check_imported_logits("llama", &g, &out, &ids, &want);
}

#[test]
fn bad_checkpoints_are_one_line_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.gguf");

    let err = import(&dir.path().join("nope"), &out, OutType::Auto, None).unwrap_err();
    assert!(format!("{err:#}").contains("not a directory"), "{err:#}");

    let ck = dir.path().join("ck");
    std::fs::create_dir(&ck).unwrap();
    let err = format!("{:#}", import(&ck, &out, OutType::Auto, None).unwrap_err());
    assert!(
        err.contains("config.json") && err.contains("cannot read"),
        "{err}"
    );

    std::fs::write(
        ck.join("config.json"),
        r#"{"architectures": ["MambaForCausalLM"]}"#,
    )
    .unwrap();
    std::fs::write(
        ck.join("model.safetensors"),
        b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ",
    )
    .unwrap();
    let err = format!("{:#}", import(&ck, &out, OutType::Auto, None).unwrap_err());
    assert!(
        err.contains("MambaForCausalLM") && err.contains("not imported"),
        "{err}"
    );

    std::fs::write(
        ck.join("model.safetensors"),
        b"\xff\xff\xff\x00\x00\x00\x00\x00{",
    )
    .unwrap();
    let err = format!("{:#}", import(&ck, &out, OutType::Auto, None).unwrap_err());
    assert!(
        err.contains("model.safetensors") && err.contains("not a safetensors file"),
        "{err}"
    );

    // A BERT config whose tensors are missing.
    std::fs::write(
        ck.join("config.json"),
        json!({"architectures": ["BertModel"], "num_hidden_layers": 2, "hidden_size": 8,
               "intermediate_size": 16, "num_attention_heads": 2, "max_position_embeddings": 16})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        ck.join("model.safetensors"),
        b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ",
    )
    .unwrap();
    std::fs::write(ck.join("vocab.txt"), "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n").unwrap();
    let err = format!("{:#}", import(&ck, &out, OutType::Auto, None).unwrap_err());
    assert!(err.contains("BERT tensors found"), "{err}");
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let p = e.unwrap().path();
        assert!(p.is_dir(), "left behind: {}", p.display());
    }
}

/// A small GPT-2 checkpoint in the original layout: Conv1D weights [in][out],
/// tied classifier (no lm_head), tokenizer as vocab.json + merges.txt.
#[test]
fn gpt2_import_transposes_conv1d_weights() {
    let (dim, n_head, n_layer, n_vocab, n_ctx) = (32usize, 4usize, 2usize, 260usize, 64usize);
    let mut tensors: Vec<(String, Vec<usize>, Vec<f32>)> = Vec::new();
    let mut seed = 100;
    let mut add = |name: &str, shape: Vec<usize>, scale: f32, offset: f32| {
        seed += 1;
        let n = shape.iter().product();
        let v = values(n, seed, scale)
            .into_iter()
            .map(|v| v + offset)
            .collect();
        tensors.push((name.to_string(), shape, v));
    };
    add("transformer.wte.weight", vec![n_vocab, dim], 0.5, 0.0);
    add("transformer.wpe.weight", vec![n_ctx, dim], 0.1, 0.0);
    for l in 0..n_layer {
        let p = |s: &str| format!("transformer.h.{l}.{s}");
        add(&p("ln_1.weight"), vec![dim], 0.2, 1.0);
        add(&p("ln_1.bias"), vec![dim], 0.1, 0.0);
        add(&p("attn.c_attn.weight"), vec![dim, 3 * dim], 0.3, 0.0);
        add(&p("attn.c_attn.bias"), vec![3 * dim], 0.1, 0.0);
        add(&p("attn.c_proj.weight"), vec![dim, dim], 0.2, 0.0);
        add(&p("attn.c_proj.bias"), vec![dim], 0.1, 0.0);
        add(&p("ln_2.weight"), vec![dim], 0.2, 1.0);
        add(&p("ln_2.bias"), vec![dim], 0.1, 0.0);
        add(&p("mlp.c_fc.weight"), vec![dim, 4 * dim], 0.2, 0.0);
        add(&p("mlp.c_fc.bias"), vec![4 * dim], 0.1, 0.0);
        add(&p("mlp.c_proj.weight"), vec![4 * dim, dim], 0.2, 0.0);
        add(&p("mlp.c_proj.bias"), vec![dim], 0.1, 0.0);
        // The causal mask buffer older checkpoints carry; llama.cpp drops it.
        add(&p("attn.bias"), vec![1, 1, n_ctx, n_ctx], 1.0, 0.0);
    }
    add("transformer.ln_f.weight", vec![dim], 0.2, 1.0);
    add("transformer.ln_f.bias", vec![dim], 0.1, 0.0);

    let dir = tempfile::tempdir().unwrap();
    write_safetensors(dir.path(), &tensors);
    let cfg = json!({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_ctx": n_ctx,
        "n_positions": n_ctx, "n_embd": dim, "n_head": n_head, "n_layer": n_layer,
        "layer_norm_epsilon": 1e-5, "vocab_size": n_vocab, "bos_token_id": 256, "eos_token_id": 256});
    std::fs::write(dir.path().join("config.json"), cfg.to_string()).unwrap();
    let mut vocab = serde_json::Map::new();
    for b in 0..=255u8 {
        vocab.insert(
            ssnail_tokenizer::gpt2_bytes::byte_to_char(b).to_string(),
            json!(b as u32),
        );
    }
    vocab.insert("<|endoftext|>".into(), json!(256));
    for (i, t) in ["Ġt", "he", "Ġthe"].iter().enumerate() {
        vocab.insert(t.to_string(), json!(257 + i));
    }
    std::fs::write(
        dir.path().join("vocab.json"),
        serde_json::Value::Object(vocab).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("merges.txt"),
        "#version: 0.2\nĠ t\nh e\nĠt he\n",
    )
    .unwrap();

    let out = dir.path().join("gpt2.gguf");
    let done = import(dir.path(), &out, OutType::F32, Some("tiny-gpt2")).unwrap();
    assert_eq!(
        (done.arch, done.n_tensors, done.n_vocab),
        ("gpt2", 4 + 12 * n_layer, n_vocab)
    );
    let g = Gguf::open(&out).unwrap();
    assert_eq!(g.get_u64("gpt2.feed_forward_length"), Some(4 * dim as u64));
    assert_eq!(g.get_str("tokenizer.ggml.model"), Some("gpt2"));
    assert_eq!(
        g.get_strings("tokenizer.ggml.merges").unwrap(),
        ["Ġ t", "h e", "Ġt he"]
    );
    assert_eq!(g.get_strings("tokenizer.ggml.tokens").unwrap()[259], "Ġthe");
    assert_eq!(
        g.tensor("blk.0.attn_qkv.weight").unwrap().shape,
        [dim as u64, 3 * dim as u64]
    );
    assert_eq!(
        g.tensor("blk.1.ffn_down.weight").unwrap().shape,
        [4 * dim as u64, dim as u64]
    );
    assert!(
        g.tensor("output.weight").is_none(),
        "tied: the classifier is token_embd"
    );

    // Hugging Face's GPT-2 in f64: x·W with W [in][out], tanh GELU.
    let get = |n: &str| -> &[f32] { &tensors.iter().find(|t| t.0 == n).unwrap().2 };
    let xw = |x: &[f64], w: &[f32], b: &[f32]| -> Vec<f64> {
        let n_out = b.len();
        (0..n_out)
            .map(|o| {
                b[o] as f64
                    + x.iter()
                        .enumerate()
                        .map(|(i, x)| x * w[i * n_out + o] as f64)
                        .sum::<f64>()
            })
            .collect()
    };
    let ln = |x: &[f64], g: &[f32], b: &[f32]| -> Vec<f64> {
        let g: Vec<f64> = g.iter().map(|v| *v as f64).collect();
        let b: Vec<f64> = b.iter().map(|v| *v as f64).collect();
        layer_norm(x, &g, &b, 1e-5)
    };
    let ids = [257u32, 3, 100, 259, 256, 42, 7];
    let hd = dim / n_head;
    let mut kc: Vec<Vec<Vec<f64>>> = vec![Vec::new(); n_layer];
    let mut vc: Vec<Vec<Vec<f64>>> = vec![Vec::new(); n_layer];
    let mut want = Vec::new();
    for (pos, &t) in ids.iter().enumerate() {
        let (wte, wpe) = (get("transformer.wte.weight"), get("transformer.wpe.weight"));
        let mut x: Vec<f64> = (0..dim)
            .map(|i| wte[t as usize * dim + i] as f64 + wpe[pos * dim + i] as f64)
            .collect();
        for l in 0..n_layer {
            let p = |s: &str| format!("transformer.h.{l}.{s}");
            let a = ln(&x, get(&p("ln_1.weight")), get(&p("ln_1.bias")));
            let qkv = xw(
                &a,
                get(&p("attn.c_attn.weight")),
                get(&p("attn.c_attn.bias")),
            );
            kc[l].push(qkv[dim..2 * dim].to_vec());
            vc[l].push(qkv[2 * dim..].to_vec());
            let mut ctx = vec![0.0; dim];
            for h in 0..n_head {
                let r = h * hd..(h + 1) * hd;
                let s: Vec<f64> = kc[l]
                    .iter()
                    .map(|k| {
                        qkv[r.clone()]
                            .iter()
                            .zip(&k[r.clone()])
                            .map(|(a, b)| a * b)
                            .sum::<f64>()
                            / (hd as f64).sqrt()
                    })
                    .collect();
                let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = s.iter().map(|v| (v - m).exp()).collect();
                let z: f64 = e.iter().sum();
                for (j, v) in vc[l].iter().enumerate() {
                    for d in r.clone() {
                        ctx[d] += e[j] / z * v[d];
                    }
                }
            }
            let o = xw(
                &ctx,
                get(&p("attn.c_proj.weight")),
                get(&p("attn.c_proj.bias")),
            );
            x.iter_mut().zip(&o).for_each(|(x, o)| *x += o);
            let m = ln(&x, get(&p("ln_2.weight")), get(&p("ln_2.bias")));
            let h: Vec<f64> = xw(&m, get(&p("mlp.c_fc.weight")), get(&p("mlp.c_fc.bias")))
                .into_iter()
                .map(|v| {
                    0.5 * v
                        * (1.0
                            + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v))
                                .tanh())
                })
                .collect();
            let d = xw(&h, get(&p("mlp.c_proj.weight")), get(&p("mlp.c_proj.bias")));
            x.iter_mut().zip(&d).for_each(|(x, d)| *x += d);
        }
        let xn = ln(
            &x,
            get("transformer.ln_f.weight"),
            get("transformer.ln_f.bias"),
        );
        let wte = get("transformer.wte.weight");
        want.push(
            (0..n_vocab)
                .map(|v| {
                    wte[v * dim..(v + 1) * dim]
                        .iter()
                        .zip(&xn)
                        .map(|(w, x)| *w as f64 * x)
                        .sum()
                })
                .collect::<Vec<f64>>(),
        );
    }
    check_imported_logits("gpt2", &g, &out, &ids, &want);
}

/// A llama checkpoint with a SentencePiece tokenizer.model (trained by the
/// sentencepiece library, tests/data/spm/make.py): pieces, scores and types
/// as that library reports them, and the reference tokenizer on the
/// imported GGUF encodes like it.
#[test]
fn llama_import_reads_sentencepiece_models() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spm");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("expected.json")).unwrap())
            .unwrap();
    let pieces = expected["pieces"].as_array().unwrap();
    let model = TinyLlama::new(pieces.len());
    let dir = tempfile::tempdir().unwrap();
    model.write_model(dir.path());
    std::fs::copy(
        data.join("tokenizer.model"),
        dir.path().join("tokenizer.model"),
    )
    .unwrap();
    // Llama's special ids: <s> = 1, </s> = 2 (config.json is where they are named).
    let cfg_path = dir.path().join("config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    cfg["bos_token_id"] = json!(1);
    cfg["eos_token_id"] = json!(2);
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let out = dir.path().join("spm.gguf");
    import(dir.path(), &out, OutType::F16, None).unwrap();

    let g = Gguf::open(&out).unwrap();
    assert_eq!(g.get_str("tokenizer.ggml.model"), Some("llama"));
    assert_eq!(g.get_str("tokenizer.ggml.pre"), Some("default"));
    assert_eq!(g.get_u64("general.file_type"), Some(1));
    let tokens = g.get_strings("tokenizer.ggml.tokens").unwrap();
    let scores = g.get_f64s("tokenizer.ggml.scores").unwrap();
    let types = g.get_i64s("tokenizer.ggml.token_type").unwrap();
    assert_eq!(tokens.len(), pieces.len());
    for (i, p) in pieces.iter().enumerate() {
        assert_eq!(tokens[i], p[0].as_str().unwrap(), "piece {i}");
        assert_eq!(scores[i], p[1].as_f64().unwrap(), "score {i}");
        assert_eq!(types[i], p[2].as_i64().unwrap(), "type {i}");
    }
    assert_eq!(g.get_u64("tokenizer.ggml.bos_token_id"), Some(1));
    assert_eq!(g.get_u64("tokenizer.ggml.eos_token_id"), Some(2));

    let tok = GgufTokenizer::new(Vocab::from_gguf(&g).unwrap()).unwrap();
    for case in expected["encode"].as_array().unwrap() {
        let text = case[0].as_str().unwrap();
        let want: Vec<u32> = case[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(tok.encode(text, false), want, "{text:?}");
    }
}

/// The same tokenizer as Hugging Face's converter writes it (tokenizer.json
/// only, BPE with byte fallback; tests/data/spm/hf): a SentencePiece-style
/// llama vocabulary whose reference tokenizer encodes like sentencepiece.
#[test]
fn llama_import_reads_sentencepiece_tokenizer_json() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/spm");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("expected.json")).unwrap())
            .unwrap();
    let pieces = expected["pieces"].as_array().unwrap();
    let model = TinyLlama::new(pieces.len());
    let dir = tempfile::tempdir().unwrap();
    model.write_model(dir.path());
    for f in ["tokenizer.json", "tokenizer_config.json"] {
        std::fs::copy(data.join("hf").join(f), dir.path().join(f)).unwrap();
    }
    let out = dir.path().join("hfspm.gguf");
    import(dir.path(), &out, OutType::F16, None).unwrap();

    let g = Gguf::open(&out).unwrap();
    assert_eq!(g.get_str("tokenizer.ggml.model"), Some("llama"));
    let tokens = g.get_strings("tokenizer.ggml.tokens").unwrap();
    let types = g.get_i64s("tokenizer.ggml.token_type").unwrap();
    let scores = g.get_f64s("tokenizer.ggml.scores").unwrap();
    for (i, p) in pieces.iter().enumerate() {
        assert_eq!(tokens[i], p[0].as_str().unwrap(), "piece {i}");
        // llama.cpp's LlamaHfVocab: the unknown token is a special (control)
        // token there; every other type as sentencepiece says.
        let want = match p[2].as_i64().unwrap() {
            2 => 3,
            t => t,
        };
        assert_eq!(types[i], want, "type {i}");
    }
    // Merge order: SentencePiece's BPE scores and ours rank multi-character
    // pieces the same way.
    let multi: Vec<usize> = (0..pieces.len())
        .filter(|&i| types[i] == 1 && tokens[i].chars().count() > 1 && pieces[i][0] != "<tool>")
        .collect();
    for w in multi.windows(2) {
        let (a, b) = (w[0], w[1]);
        let spm = pieces[a][1]
            .as_f64()
            .unwrap()
            .total_cmp(&pieces[b][1].as_f64().unwrap());
        assert_eq!(
            scores[a].total_cmp(&scores[b]),
            spm,
            "{} vs {}",
            tokens[a],
            tokens[b]
        );
    }
    for (k, v) in [("bos", 1), ("eos", 2), ("unknown", 0)] {
        assert_eq!(
            g.get_u64(&format!("tokenizer.ggml.{k}_token_id")),
            Some(v),
            "{k}"
        );
    }
    assert_eq!(g.get_bool("tokenizer.ggml.add_bos_token"), Some(true));

    let tok = GgufTokenizer::new(Vocab::from_gguf(&g).unwrap()).unwrap();
    for case in expected["encode"].as_array().unwrap() {
        let text = case[0].as_str().unwrap();
        let want: Vec<u32> = case[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(tok.encode(text, false), want, "{text:?}");
    }
}

/// config.json numbers and tokenizer ids that would size tables or be cut
/// to 32 bits are refused with one line naming the file; nothing is written.
#[test]
fn hostile_config_numbers_and_token_ids_are_refused_before_anything_is_sized() {
    let model = TinyLlama::new(262);
    let cases: Vec<(&str, serde_json::Value, &str)> = vec![
        ("vocab_size", json!(1_000_000_000_000u64), "out of range"),
        ("vocab_size", json!(300), "rows"),
        ("hidden_size", json!((1u64 << 32) + 32), "out of range"),
        ("num_hidden_layers", json!("2"), "non-negative integer"),
        ("num_attention_heads", json!(-4), "non-negative integer"),
        ("rms_norm_eps", json!(-1e-5), "positive finite"),
        ("rope_theta", json!(0), "positive finite"),
    ];
    for (key, value, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        model.write(dir.path());
        let cfg_path = dir.path().join("config.json");
        let mut cfg: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
        cfg[key] = value.clone();
        std::fs::write(&cfg_path, cfg.to_string()).unwrap();
        let out = dir.path().join("out.gguf");
        let err = format!(
            "{:#}",
            import(dir.path(), &out, OutType::F32, None).unwrap_err()
        );
        assert!(
            err.contains("config.json") && err.contains(key) && err.contains(want),
            "{key} = {value}: {err}"
        );
        assert!(!err.contains('\n') && !out.exists());
    }
    // A token id of 4·10⁹ in tokenizer.json.
    let dir = tempfile::tempdir().unwrap();
    model.write(dir.path());
    let tok_path = dir.path().join("tokenizer.json");
    let mut tok: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&tok_path).unwrap()).unwrap();
    tok["model"]["vocab"]["he"] = json!(4_000_000_000u64);
    std::fs::write(&tok_path, tok.to_string()).unwrap();
    let out = dir.path().join("out.gguf");
    let err = format!(
        "{:#}",
        import(dir.path(), &out, OutType::F32, None).unwrap_err()
    );
    assert!(err.contains("outside the 262-token vocabulary"), "{err}");
    assert!(!out.exists());
}

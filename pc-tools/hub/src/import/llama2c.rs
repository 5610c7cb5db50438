//! llama2.c checkpoints (karpathy's `model.bin` with its `tokenizer.bin`)
//! as a GGUF in the conventions of llama.cpp's `convert-llama2c-to-ggml`:
//! the same tensor names, shapes, order, types and bytes, the same
//! tokenizer arrays and special ids.
//!
//! The checkpoint is llama2.c's legacy export (export.py `--version 0`, the
//! format of karpathy's tinyllamas): seven little-endian int32s (dim,
//! hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len), then
//! f32 arrays: token embedding (vocab × dim); per-layer attention norms;
//! wq, wk, wv, wo; FFN norms; w1, w2, w3 (each stacked over the layers);
//! the final norm; RoPE's cos and sin tables (seq_len × head_size/2 each,
//! skipped); and, when vocab_size is negative, the classifier (vocab × dim).
//! A positive vocab_size means the classifier is the embedding (shared).
//! The matrices are PyTorch's `nn.Linear` weights (rows = outputs), and
//! llama2.c's RoPE already rotates adjacent pairs as llama.cpp does, so
//! wq and wk are copied unpermuted (unlike Hugging Face checkpoints).
//!
//! The tokenizer.bin: int32 max_token_length, then per token an f32 score,
//! an int32 length and that many bytes (spaces where SentencePiece has ▁).

use super::{file_type, general, Imported, OutType, Sink};
use crate::import::checkpoint::Tensor;
use anyhow::{bail, Result};
use ssnail_format::ggml::GgmlType;
use ssnail_gguf::token_type::{BYTE, CONTROL, NORMAL, UNKNOWN};
use ssnail_gguf::writer::GgufWriter;
use std::path::Path;

/// The magic of llama2.c's versioned exports (export.py `--version 1|2`):
/// the bytes "42ka", 0x616b3432 as a little-endian uint32.
pub const VERSIONED_MAGIC: u32 = 0x616b_3432;
/// The legacy header: seven int32s.
pub const HEADER_BYTES: u64 = 28;

/// The special ids llama.cpp's converter gives every llama2.c vocabulary
/// (SentencePiece's defaults, which llama2.c's tokenizers use).
const UNK_ID: usize = 0;
const BOS_ID: usize = 1;
const EOS_ID: usize = 2;
/// llama.cpp's `LLAMA_TOKEN_NULL` (-1) as the u32 its converter writes for
/// the separator and padding ids.
const TOKEN_NULL: u32 = u32::MAX;
/// llama2.c's RMSNorm epsilon (model.py's `norm_eps` default), which
/// llama.cpp's converter also writes.
const NORM_EPS: f32 = 1e-5;

/// A legacy checkpoint's configuration, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub dim: usize,
    pub hidden_dim: usize,
    pub n_layers: usize,
    pub n_heads: usize,
    pub n_kv_heads: usize,
    /// |vocab_size| of the header.
    pub vocab_size: usize,
    pub seq_len: usize,
    /// vocab_size > 0: the classifier is the token embedding.
    pub shared_classifier: bool,
}

impl Config {
    pub fn head_size(&self) -> usize {
        self.dim / self.n_heads
    }
    pub fn kv_dim(&self) -> usize {
        self.dim / self.n_heads * self.n_kv_heads
    }
    /// The file size this configuration makes (the header included).
    pub fn file_len(&self) -> u64 {
        let (d, h, l, v) = (
            self.dim as u64,
            self.hidden_dim as u64,
            self.n_layers as u64,
            self.vocab_size as u64,
        );
        let kv = self.kv_dim() as u64;
        let floats = v * d
            + l * d // attention norms
            + l * (d * d + 2 * d * kv + d * d) // wq wk wv wo
            + l * d // ffn norms
            + l * 3 * h * d // w1 w2 w3
            + d // final norm
            + self.seq_len as u64 * self.head_size() as u64 // RoPE cos + sin
            + if self.shared_classifier { 0 } else { v * d };
        HEADER_BYTES + 4 * floats
    }
    /// One line for messages.
    pub fn describe(&self) -> String {
        format!(
            "dim {}, hidden {}, {} layers, {} heads, {} kv heads, vocab {}, seq_len {}, {} classifier",
            self.dim,
            self.hidden_dim,
            self.n_layers,
            self.n_heads,
            self.n_kv_heads,
            self.vocab_size,
            self.seq_len,
            if self.shared_classifier { "shared" } else { "unshared" }
        )
    }
}

/// Each field is limited so that every size computed from them fits in a
/// u64 with room to spare (the largest llama2.c models are far below).
const FIELD_LIMIT: i64 = 1 << 20;

/// The header's configuration, or why it is not one.
fn parse_config(h: &[u8; 28]) -> std::result::Result<Config, String> {
    let f = |i: usize| i32::from_le_bytes(h[4 * i..4 * i + 4].try_into().unwrap()) as i64;
    let names = [
        "dim",
        "hidden_dim",
        "n_layers",
        "n_heads",
        "n_kv_heads",
        "vocab_size",
        "seq_len",
    ];
    for (i, name) in names.iter().enumerate() {
        let v = if i == 5 { f(i).abs() } else { f(i) };
        if v <= 0 || v > FIELD_LIMIT {
            return Err(format!(
                "{name} is {} in the config header (dim {}, hidden_dim {}, n_layers {}, n_heads {}, n_kv_heads {}, vocab_size {}, seq_len {})",
                f(i), f(0), f(1), f(2), f(3), f(4), f(5), f(6)
            ));
        }
    }
    let c = Config {
        dim: f(0) as usize,
        hidden_dim: f(1) as usize,
        n_layers: f(2) as usize,
        n_heads: f(3) as usize,
        n_kv_heads: f(4) as usize,
        vocab_size: f(5).unsigned_abs() as usize,
        seq_len: f(6) as usize,
        shared_classifier: f(5) > 0,
    };
    if !c.dim.is_multiple_of(c.n_heads) || !c.head_size().is_multiple_of(2) {
        return Err(format!(
            "dim {} is not n_heads {} × an even head size",
            c.dim, c.n_heads
        ));
    }
    if c.n_kv_heads > c.n_heads || !c.n_heads.is_multiple_of(c.n_kv_heads) {
        return Err(format!(
            "n_kv_heads {} does not divide n_heads {}",
            c.n_kv_heads, c.n_heads
        ));
    }
    Ok(c)
}

/// What the first bytes and the size of a file say about it.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// A legacy checkpoint whose size is exactly its configuration's.
    Legacy(Config),
    /// A versioned export ("ak42" magic) of this version.
    Versioned(i32),
}

/// Whether `path` looks like a llama2.c checkpoint (for the hint of
/// commands given one instead of a GGUF or an image): the versioned magic,
/// or a sane legacy header whose configuration makes exactly the file's size.
pub fn sniff(path: &Path) -> Option<Kind> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let len = f.metadata().ok()?.len();
    let mut h = [0u8; 28];
    f.read_exact(&mut h).ok()?;
    if u32::from_le_bytes(h[..4].try_into().unwrap()) == VERSIONED_MAGIC {
        return Some(Kind::Versioned(i32::from_le_bytes(
            h[4..8].try_into().unwrap(),
        )));
    }
    let c = parse_config(&h).ok()?;
    (c.file_len() == len).then_some(Kind::Legacy(c))
}

/// The one-line error for a command that was given a llama2.c checkpoint
/// where it wants a GGUF (or, `image`, an SSNAIL image): what the file is
/// and the command that makes what was wanted.
pub fn hint(path: &Path, image: bool) -> Option<String> {
    let p = path.display();
    let wanted = if image { "an SSNAIL image" } else { "a GGUF" };
    match sniff(path)? {
        Kind::Legacy(c) => {
            let gguf = path.with_extension("gguf");
            let then = if image {
                format!(
                    ", then `ssnail convert {} -o {}`",
                    gguf.display(),
                    path.with_extension("ssnail").display()
                )
            } else {
                String::new()
            };
            Some(format!(
                "{p}: a llama2.c checkpoint ({}), not {wanted}: import it with `ssnail import {p} --tokenizer tokenizer.bin -o {}`{then}",
                c.describe(),
                gguf.display()
            ))
        }
        Kind::Versioned(v) => Some(format!(
            "{p}: a llama2.c export of version {v} (magic \"ak42\"), not {wanted}; `ssnail import` reads llama2.c's legacy export (export.py --version 0), as karpathy's tinyllamas"
        )),
    }
}

/// Read and check the checkpoint: its configuration and the file's bytes.
fn open_checkpoint(path: &Path) -> Result<(Config, Vec<u8>)> {
    let p = path.display();
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{p}: cannot read: {e}"))?;
    if bytes.len() >= 4 && &bytes[..4] == b"GGUF" {
        bail!("{p}: already a GGUF file: give it to `ssnail convert`, not `ssnail import`");
    }
    if bytes.len() >= 4 && u32::from_le_bytes(bytes[..4].try_into().unwrap()) == VERSIONED_MAGIC {
        let v = bytes
            .get(4..8)
            .map(|b| i32::from_le_bytes(b.try_into().unwrap()).to_string())
            .unwrap_or_else(|| "?".into());
        bail!(
            "{p}: a llama2.c export of version {v} (magic \"ak42\"), which is not imported: only the legacy export (export.py --version 0, as karpathy's tinyllamas) is"
        );
    }
    let Some(h) = bytes.get(..28) else {
        bail!(
            "{p}: {} bytes, too short for a llama2.c checkpoint's 28-byte config header",
            bytes.len()
        );
    };
    let c = parse_config(h.try_into().unwrap())
        .map_err(|e| anyhow::anyhow!("{p}: not a llama2.c checkpoint: {e}"))?;
    let want = c.file_len();
    let have = bytes.len() as u64;
    if have < want {
        bail!(
            "{p}: truncated: a llama2.c checkpoint of this config ({}) has {want} bytes, the file {have}",
            c.describe()
        );
    }
    if have != want {
        let other = Config {
            shared_classifier: !c.shared_classifier,
            ..c
        };
        let why = if other.file_len() == have {
            format!(
                " (the size with {} classifier: the sign of vocab_size is wrong)",
                if other.shared_classifier {
                    "a shared"
                } else {
                    "an unshared"
                }
            )
        } else {
            String::new()
        };
        bail!(
            "{p}: {have} bytes, but a llama2.c checkpoint of this config ({}) has {want}{why}",
            c.describe()
        );
    }
    Ok((c, bytes))
}

/// One token of a tokenizer.bin as llama.cpp's converter stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub text: String,
    pub score: f32,
    pub ty: i32,
}

/// llama.cpp's byte-token test, `sscanf(text, "<0x%02hhX>") == 1`: the text
/// starts with `<0x` and a hex digit is converted (the closing `>` is not
/// checked there either).
fn is_byte_piece(text: &str) -> bool {
    text.strip_prefix("<0x")
        .and_then(|r| r.chars().next())
        .is_some_and(|c| c.is_ascii_hexdigit())
}

/// Read `n_vocab` tokens from a llama2.c tokenizer.bin, typed and renamed as
/// llama.cpp's converter does: id 0 `<unk>` (unknown), 1 `<s>` and 2 `</s>`
/// (control; llama2.c stores them as "\n<s>\n" and "\n</s>\n"), empty
/// pieces control, `<0xHH>` pieces byte, the rest normal; spaces become ▁.
/// Stricter than llama.cpp, which reads the first n_vocab tokens and ignores
/// the rest: a file that ends early, holds more tokens than the model, has a
/// token longer than its max_token_length or one that is not UTF-8 is refused.
pub fn read_tokenizer(path: &Path, n_vocab: usize) -> Result<Vec<Token>> {
    let p = path.display();
    let b = std::fs::read(path).map_err(|e| anyhow::anyhow!("{p}: cannot read: {e}"))?;
    if b.len() >= 4 && &b[..4] == b"GGUF" {
        bail!("{p}: a GGUF file, not a llama2.c tokenizer.bin (int32 max_token_length, then score, length and bytes per token)");
    }
    let int = |at: usize| {
        b.get(at..at + 4)
            .map(|s| i32::from_le_bytes(s.try_into().unwrap()))
    };
    let Some(max_len) = int(0) else {
        bail!(
            "{p}: {} bytes, too short for a llama2.c tokenizer.bin",
            b.len()
        );
    };
    if max_len <= 0 {
        bail!("{p}: max_token_length is {max_len}: not a llama2.c tokenizer.bin");
    }
    let mut pos = 4;
    let mut out = Vec::with_capacity(n_vocab);
    for id in 0..n_vocab {
        let (Some(score), Some(len)) = (int(pos), int(pos + 4)) else {
            bail!("{p}: ends in token {id} of the model's {n_vocab} (at byte {pos}): truncated, or the tokenizer of a smaller vocabulary");
        };
        let score = f32::from_bits(score as u32);
        if len < 0 || len > max_len {
            bail!("{p}: token {id} has length {len}, outside 0..={max_len} (the file's max_token_length)");
        }
        let start = pos + 8;
        let Some(piece) = b.get(start..start + len as usize) else {
            bail!("{p}: ends in token {id} of the model's {n_vocab} (at byte {start}): truncated");
        };
        let Ok(text) = std::str::from_utf8(piece) else {
            bail!("{p}: token {id} is not UTF-8 ({piece:02X?})");
        };
        pos = start + len as usize;
        let (text, ty) = match id {
            UNK_ID => ("<unk>".to_string(), UNKNOWN),
            BOS_ID => ("<s>".to_string(), CONTROL),
            EOS_ID => ("</s>".to_string(), CONTROL),
            _ if text.is_empty() => (String::new(), CONTROL),
            _ if is_byte_piece(text) => (text.to_string(), BYTE),
            _ => (text.to_string(), NORMAL),
        };
        out.push(Token {
            text: text.replace(' ', "\u{2581}"),
            score,
            ty,
        });
    }
    if pos != b.len() {
        bail!(
            "{p}: {} bytes left after the model's {n_vocab} tokens: the tokenizer of a larger vocabulary (stories260K uses tok512.bin, the 32000-token models tokenizer.bin)",
            b.len() - pos
        );
    }
    Ok(out)
}

/// The f32 arrays of the checkpoint, in file order.
struct Weights<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Weights<'_> {
    fn take(&mut self, n: usize) -> Vec<f32> {
        let end = self.pos + 4 * n;
        let v = self.b[self.pos..end]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        self.pos = end;
        v
    }
}

/// Per-layer slices of a stacked array.
fn layers(all: &[f32], n_layers: usize) -> Vec<&[f32]> {
    let each = all.len() / n_layers;
    all.chunks_exact(each).collect()
}

/// Import the checkpoint `model` with its tokenizer `tokenizer` and write
/// the GGUF to `out` (atomically; an output naming an input is refused).
/// `OutType::Auto` keeps every tensor F32, as llama.cpp's converter does.
/// `name` overrides `general.name` (default: the checkpoint's file stem).
pub fn import(
    model: &Path,
    tokenizer: &Path,
    out: &Path,
    outtype: OutType,
    name: Option<&str>,
) -> Result<Imported> {
    let (c, bytes) = open_checkpoint(model)?;
    let vocab = read_tokenizer(tokenizer, c.vocab_size)?;
    let matrix_type = match outtype {
        OutType::F32 | OutType::Auto => GgmlType::F32,
        OutType::F16 => GgmlType::F16,
        OutType::Bf16 => GgmlType::Bf16,
        OutType::Q8_0 => GgmlType::Q8_0,
    };
    let model_name = name.map(str::to_string).unwrap_or_else(|| {
        model
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "llama".into())
    });
    let mut sink = Sink {
        w: GgufWriter::new(),
        matrix_type,
        n_tensors: 0,
    };
    write_metadata(&mut sink.w, &c, &vocab, &model_name, matrix_type);

    let (d, h, l, v, kv) = (c.dim, c.hidden_dim, c.n_layers, c.vocab_size, c.kv_dim());
    let mut r = Weights {
        b: &bytes,
        pos: HEADER_BYTES as usize,
    };
    let embedding = r.take(v * d);
    let att_norm = r.take(l * d);
    let wq = r.take(l * d * d);
    let wk = r.take(l * kv * d);
    let wv = r.take(l * kv * d);
    let wo = r.take(l * d * d);
    let ffn_norm = r.take(l * d);
    let w1 = r.take(l * h * d);
    let w2 = r.take(l * d * h);
    let w3 = r.take(l * h * d);
    let final_norm = r.take(d);
    r.pos += 4 * c.seq_len * c.head_size(); // RoPE's cos and sin tables
    let classifier = if c.shared_classifier {
        embedding.clone()
    } else {
        r.take(v * d)
    };
    debug_assert_eq!(r.pos, bytes.len());

    let mat = |rows: usize, cols: usize, data: &[f32]| Tensor {
        shape: vec![rows, cols],
        data: data.to_vec(),
    };
    let vec1 = |data: &[f32]| Tensor {
        shape: vec![data.len()],
        data: data.to_vec(),
    };
    // llama.cpp's order: embedding, final norm, classifier (a copy of the
    // embedding when shared), then each layer's q k v o, attention norm,
    // gate (w1), down (w2), up (w3), FFN norm.
    sink.add("token_embd.weight", mat(v, d, &embedding))?;
    sink.add("output_norm.weight", vec1(&final_norm))?;
    sink.add("output.weight", mat(v, d, &classifier))?;
    drop((embedding, classifier));
    let (q, k, vv, o) = (
        layers(&wq, l),
        layers(&wk, l),
        layers(&wv, l),
        layers(&wo, l),
    );
    let (an, fnn) = (layers(&att_norm, l), layers(&ffn_norm, l));
    let (g, dn, up) = (layers(&w1, l), layers(&w2, l), layers(&w3, l));
    for i in 0..l {
        sink.add(&format!("blk.{i}.attn_q.weight"), mat(d, d, q[i]))?;
        sink.add(&format!("blk.{i}.attn_k.weight"), mat(kv, d, k[i]))?;
        sink.add(&format!("blk.{i}.attn_v.weight"), mat(kv, d, vv[i]))?;
        sink.add(&format!("blk.{i}.attn_output.weight"), mat(d, d, o[i]))?;
        sink.add(&format!("blk.{i}.attn_norm.weight"), vec1(an[i]))?;
        sink.add(&format!("blk.{i}.ffn_gate.weight"), mat(h, d, g[i]))?;
        sink.add(&format!("blk.{i}.ffn_down.weight"), mat(d, h, dn[i]))?;
        sink.add(&format!("blk.{i}.ffn_up.weight"), mat(h, d, up[i]))?;
        sink.add(&format!("blk.{i}.ffn_norm.weight"), vec1(fnn[i]))?;
    }
    let file = sink.w.to_bytes().map_err(|e| anyhow::anyhow!("{e}"))?;
    ssnail_output::write(out, &file, &[model, tokenizer])?;
    Ok(Imported {
        arch: "llama",
        n_tensors: sink.n_tensors,
        n_vocab: vocab.len(),
        bytes: file.len() as u64,
    })
}

/// The keys llama.cpp's converter writes, with the same values, except:
/// `general.name` is the checkpoint's name (llama.cpp: "llama"),
/// `llama.context_length` is the checkpoint's seq_len (llama.cpp: its
/// fixed 128), `llama.rope.dimension_count` is the head size (llama.cpp caps
/// it at 64, which no tinyllamas model exceeds), and `general.type` and
/// `general.file_type` are added as the Hugging Face importer writes them.
fn write_metadata(w: &mut GgufWriter, c: &Config, vocab: &[Token], name: &str, ty: GgmlType) {
    general(w, "llama", name);
    w.meta_u32("llama.context_length", c.seq_len as u32);
    w.meta_u32("llama.embedding_length", c.dim as u32);
    w.meta_u32("llama.feed_forward_length", c.hidden_dim as u32);
    w.meta_u32("llama.attention.head_count", c.n_heads as u32);
    w.meta_u32("llama.attention.head_count_kv", c.n_kv_heads as u32);
    w.meta_u32("llama.block_count", c.n_layers as u32);
    w.meta_u32("llama.rope.dimension_count", c.head_size() as u32);
    w.meta_f32("llama.attention.layer_norm_rms_epsilon", NORM_EPS);
    w.meta_u32("general.file_type", file_type(ty));
    w.meta_str("tokenizer.ggml.model", "llama");
    let texts: Vec<&str> = vocab.iter().map(|t| t.text.as_str()).collect();
    let scores: Vec<f32> = vocab.iter().map(|t| t.score).collect();
    let types: Vec<i32> = vocab.iter().map(|t| t.ty).collect();
    w.meta_strs("tokenizer.ggml.tokens", &texts);
    w.meta_f32s("tokenizer.ggml.scores", &scores);
    w.meta_i32s("tokenizer.ggml.token_type", &types);
    w.meta_u32("tokenizer.ggml.unknown_token_id", UNK_ID as u32);
    w.meta_u32("tokenizer.ggml.bos_token_id", BOS_ID as u32);
    w.meta_u32("tokenizer.ggml.eos_token_id", EOS_ID as u32);
    // (llama.cpp's own spelling of the key.)
    w.meta_u32("tokenizer.ggml.seperator_token_id", TOKEN_NULL);
    w.meta_u32("tokenizer.ggml.padding_token_id", TOKEN_NULL);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(v: [i32; 7]) -> [u8; 28] {
        let mut h = [0u8; 28];
        for (i, x) in v.iter().enumerate() {
            h[4 * i..4 * i + 4].copy_from_slice(&x.to_le_bytes());
        }
        h
    }

    #[test]
    fn the_stories260k_config_makes_a_file_of_its_264128_floats() {
        // 512×64 embedding, 5×(64 + 64×64 + 2×32×64 + 64×64 + 64 + 3×172×64)
        // layer floats, 64 final norm, 512×8 RoPE table: 264,128 floats.
        let c = parse_config(&header([64, 172, 5, 8, 4, 512, 512])).unwrap();
        assert!(c.shared_classifier);
        assert_eq!(c.kv_dim(), 32);
        assert_eq!(c.file_len(), 28 + 4 * 264_128);
    }

    #[test]
    fn the_stories15m_config_makes_a_file_of_its_15204000_floats() {
        let c = parse_config(&header([288, 768, 6, 6, 6, 32000, 256])).unwrap();
        assert_eq!(c.file_len(), 28 + 4 * 15_204_000);
    }

    #[test]
    fn a_negative_vocab_size_means_an_unshared_classifier() {
        let c = parse_config(&header([64, 172, 5, 8, 4, -512, 512])).unwrap();
        assert!(!c.shared_classifier);
        assert_eq!(c.vocab_size, 512);
        assert_eq!(c.file_len(), 28 + 4 * (264_128 + 512 * 64));
    }

    #[test]
    fn nonsense_headers_are_no_config() {
        assert!(parse_config(&header([64, 172, 5, 8, 3, 512, 512])).is_err());
        assert!(parse_config(&header([64, 172, 0, 8, 4, 512, 512])).is_err());
        assert!(parse_config(&header([66, 172, 5, 8, 4, 512, 512])).is_err());
        assert!(parse_config(&header([64, 172, 5, 8, 4, 0, 512])).is_err());
    }

    #[test]
    fn byte_pieces_are_recognised_as_llama_cpp_does() {
        assert!(is_byte_piece("<0x0A>"));
        assert!(is_byte_piece("<0xff>"));
        assert!(!is_byte_piece("<0x>"));
        assert!(!is_byte_piece("<unk>"));
        assert!(!is_byte_piece("0x41"));
    }
}

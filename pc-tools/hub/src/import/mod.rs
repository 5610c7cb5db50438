//! Import a Hugging Face checkpoint directory as a GGUF file in llama.cpp's
//! conventions (tensor names and shapes, metadata keys, tokenizer arrays as
//! convert_hf_to_gguf.py writes them), so that the converter takes it.
//!
//! Supported: BERT encoders (`BertModel`, e.g. sentence-transformers'
//! all-MiniLM-L6-v2), llama-architecture decoders (`LlamaForCausalLM`) and
//! GPT-2 (`GPT2LMHeadModel`); and llama2.c checkpoints with their
//! tokenizer.bin ([`llama2c`], as llama.cpp's `convert-llama2c-to-ggml`).

mod bert;
pub mod checkpoint;
mod gpt2;
mod llama;
pub mod llama2c;
pub mod vocab;

use anyhow::{bail, Result};
use checkpoint::{Checkpoint, Tensor};
use ssnail_format::ggml::{quantize_native, GgmlType};
use ssnail_gguf::writer::GgufWriter;
use std::path::{Path, PathBuf};

/// Weight format of the matrices (`--outtype`, as convert_hf_to_gguf.py).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutType {
    F32,
    F16,
    Bf16,
    Q8_0,
    /// F16, or BF16 when the checkpoint's matrices are BF16.
    Auto,
}

impl OutType {
    pub fn parse(s: &str) -> Option<OutType> {
        Some(match s {
            "f32" => OutType::F32,
            "f16" => OutType::F16,
            "bf16" => OutType::Bf16,
            "q8_0" => OutType::Q8_0,
            "auto" => OutType::Auto,
            _ => return None,
        })
    }
}

/// What an import did.
#[derive(Debug)]
pub struct Imported {
    pub arch: &'static str,
    pub n_tensors: usize,
    pub n_vocab: usize,
    pub bytes: u64,
}

/// Collects tensors in GGUF form, choosing each one's type like llama.cpp:
/// 1-D tensors, norms, biases, position and token-type embeddings stay F32;
/// other matrices take the output type (Q8_0 falls back to F16 for rows that
/// are not a multiple of 32).
struct Sink {
    w: GgufWriter,
    matrix_type: GgmlType,
    n_tensors: usize,
}

impl Sink {
    fn add(&mut self, name: &str, t: Tensor) -> Result<()> {
        let keep_f32 = t.shape.len() <= 1
            || name.ends_with("_norm.weight")
            || !name.ends_with(".weight")
            || name.starts_with("position_embd.")
            || name.starts_with("token_types.");
        let cols = *t.shape.last().unwrap_or(&1);
        let mut ty = if keep_f32 {
            GgmlType::F32
        } else {
            self.matrix_type
        };
        if !cols.is_multiple_of(ty.block_len()) {
            ty = GgmlType::F16;
        }
        let mut bytes = Vec::with_capacity(t.data.len() * 4);
        quantize_native(ty, &t.data, &mut bytes);
        let shape: Vec<u64> = t.shape.iter().rev().map(|&d| d as u64).collect();
        self.w
            .tensor(name, &shape, ty, bytes)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        self.n_tensors += 1;
        Ok(())
    }
}

/// llama.cpp's `general.file_type` for an output type.
fn file_type(t: GgmlType) -> u32 {
    match t {
        GgmlType::F32 => 0,
        GgmlType::F16 => 1,
        GgmlType::Q8_0 => 7,
        GgmlType::Bf16 => 32,
        _ => 1,
    }
}

/// Import `dir` and write the GGUF to `out` (atomically: a temporary file in
/// the same directory, renamed at the end). `name` overrides `general.name`.
pub fn import(dir: &Path, out: &Path, outtype: OutType, name: Option<&str>) -> Result<Imported> {
    let ckpt = Checkpoint::open(dir)?;
    let matrix_type = match outtype {
        OutType::F32 => GgmlType::F32,
        OutType::F16 => GgmlType::F16,
        OutType::Bf16 => GgmlType::Bf16,
        OutType::Q8_0 => GgmlType::Q8_0,
        OutType::Auto => match ckpt.first_matrix_dtype() {
            Some(safetensors::Dtype::BF16) => GgmlType::Bf16,
            _ => GgmlType::F16,
        },
    };
    let hf_arch = ckpt
        .config
        .get("architectures")
        .and_then(|a| a.get(0))
        .and_then(|a| a.as_str())
        .unwrap_or("")
        .to_string();
    let model_type = ckpt
        .config
        .get("model_type")
        .and_then(|a| a.as_str())
        .unwrap_or("")
        .to_string();
    let model_name = name.map(str::to_string).unwrap_or_else(|| {
        dir.canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "model".into())
    });
    let mut sink = Sink {
        w: GgufWriter::new(),
        matrix_type,
        n_tensors: 0,
    };
    let (arch, n_vocab) = match (hf_arch.as_str(), model_type.as_str()) {
        ("BertModel" | "BertForMaskedLM", _) | ("", "bert") => {
            ("bert", bert::import(&ckpt, &mut sink, &model_name)?)
        }
        ("GPT2LMHeadModel" | "GPT2Model", _) | ("", "gpt2") => {
            ("gpt2", gpt2::import(&ckpt, &mut sink, &model_name)?)
        }
        ("LlamaForCausalLM" | "LlamaModel", _) | ("", "llama") => {
            ("llama", llama::import(&ckpt, &mut sink, &model_name)?)
        }
        _ => bail!(
            "{}: architecture {} (model_type {}) is not imported; supported: BertModel, GPT2LMHeadModel, LlamaForCausalLM",
            dir.join("config.json").display(),
            if hf_arch.is_empty() { "?".into() } else { ssnail_gguf::printable(&hf_arch) },
            if model_type.is_empty() { "?".into() } else { ssnail_gguf::printable(&model_type) },
        ),
    };
    let bytes = sink.w.to_bytes().map_err(|e| anyhow::anyhow!("{e}"))?;
    // The checkpoint's files are inputs: an output naming one is refused.
    let inputs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    ssnail_output::write(out, &bytes, &inputs)?;
    Ok(Imported {
        arch,
        n_tensors: sink.n_tensors,
        n_vocab,
        bytes: bytes.len() as u64,
    })
}

/// The common `general.*` keys, first in the file as llama.cpp writes them.
fn general(w: &mut GgufWriter, arch: &str, name: &str) {
    w.meta_str("general.architecture", arch);
    w.meta_str("general.type", "model");
    w.meta_str("general.name", name);
}

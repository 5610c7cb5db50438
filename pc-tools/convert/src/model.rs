//! What the converter needs from a GGUF: hyper-parameters (§1.8 metadata
//! keys and defaults) and the tensors of one architecture, checked for
//! presence and shape.

use crate::ConvertError;
use ssnail_format::image::Arch;
use ssnail_gguf::{Gguf, TensorInfo};

/// Hyper-parameters of a supported model.
#[derive(Clone, Debug, PartialEq)]
pub struct Hparams {
    pub arch: Arch,
    pub dim: u32,
    pub n_layers: u32,
    pub n_heads: u32,
    pub n_kv_heads: u32,
    pub hidden: u32,
    pub context_length: u32,
    pub head_dim: u32,
    pub kv_dim: u32,
    /// RMS eps (llama) or layer-norm eps (gpt2, bert), as stored (f32).
    pub eps: f32,
    /// RoPE base, the stored f32 value widened exactly.
    pub rope_base: f64,
    /// BERT pooling: 2 = CLS, anything else mean.
    pub pooling: u32,
    /// Rows of `token_embd.weight`.
    pub vocab_rows: u32,
}

impl Hparams {
    pub fn read(g: &Gguf) -> Result<Hparams, ConvertError> {
        let arch_name = g
            .string("general.architecture")
            .map_err(|e| ConvertError::model(g, e.msg))?
            .ok_or_else(|| ConvertError::model(g, "no general.architecture"))?;
        let arch = Arch::from_name(arch_name).ok_or_else(|| {
            ConvertError::model(
                g,
                format!(
                    "unsupported architecture '{}' (supported: llama, gpt2, bert)",
                    ssnail_gguf::printable(arch_name)
                ),
            )
        })?;
        let a = arch.name();
        // Keys of the wrong type are errors, never a silent default.
        let gerr = |e: ssnail_gguf::GgufError| ConvertError::model(g, e.msg);
        let uint = |k: &str| g.uint(&format!("{a}.{k}")).map_err(gerr);
        let float = |k: &str| g.float(&format!("{a}.{k}")).map_err(gerr);
        let need = |k: &str| -> Result<u32, ConvertError> {
            let key = format!("{a}.{k}");
            match uint(k)? {
                Some(v) if v > 0 && v <= u32::MAX as u64 => Ok(v as u32),
                Some(v) => Err(ConvertError::model(
                    g,
                    format!("{key} = {v} is out of range"),
                )),
                None => Err(ConvertError::model(g, format!("missing metadata {key}"))),
            }
        };
        let dim = need("embedding_length")?;
        let n_layers = need("block_count")?;
        let n_heads = need("attention.head_count")?;
        let hidden = need("feed_forward_length")?;
        let n_kv_heads = match uint("attention.head_count_kv")? {
            Some(v) if v > 0 && v <= u32::MAX as u64 => v as u32,
            Some(v) => {
                return Err(ConvertError::model(
                    g,
                    format!("{a}.attention.head_count_kv = {v} is out of range"),
                ))
            }
            None => n_heads,
        };
        let context_length = match uint("context_length")? {
            Some(v) if v > 0 => v.min(u32::MAX as u64) as u32,
            Some(_) => return Err(ConvertError::model(g, format!("{a}.context_length is 0"))),
            None => 2048,
        };
        if dim % n_heads != 0 || n_heads % n_kv_heads != 0 {
            return Err(ConvertError::model(
                g,
                format!("{n_heads} heads ({n_kv_heads} kv) do not divide dimension {dim}"),
            ));
        }
        let eps_key = match arch {
            Arch::Llama => "attention.layer_norm_rms_epsilon",
            _ => "attention.layer_norm_epsilon",
        };
        // Stored as f32: a value that is not a finite positive f32 (NaN,
        // negative, zero, or too large for f32) would make every norm or
        // rotation meaningless.
        let positive = |k: &str, default: f64| -> Result<f32, ConvertError> {
            let v = float(k)?.unwrap_or(default);
            let f = v as f32;
            if f.is_finite() && f > 0.0 {
                Ok(f)
            } else {
                Err(ConvertError::model(
                    g,
                    format!("{a}.{k} = {v} is not a positive finite number"),
                ))
            }
        };
        let eps = positive(eps_key, 1e-5)?;
        let rope_base = positive("rope.freq_base", 10000.0)? as f64;
        let pooling = match uint("pooling_type")? {
            None => 1,
            Some(v) if v <= u32::MAX as u64 => v as u32,
            Some(v) => {
                return Err(ConvertError::model(
                    g,
                    format!("{a}.pooling_type = {v} is out of range"),
                ))
            }
        };
        let embd = g
            .tensor("token_embd.weight")
            .ok_or_else(|| ConvertError::model(g, "missing tensor token_embd.weight"))?;
        let (vocab_rows, embd_cols) = embd.rows_cols();
        // Sanity before anything is sized from these numbers: the embedding
        // fixes dim, every layer has tensors, and no activation needs more
        // than SSNAIL's 256 MiB address space.
        if embd_cols != dim as usize {
            return Err(ConvertError::model(
                g,
                format!(
                    "token_embd.weight has rows of {embd_cols}, but {a}.embedding_length is {dim}"
                ),
            ));
        }
        if n_layers as usize > g.tensors.len() {
            return Err(ConvertError::model(
                g,
                format!(
                    "{a}.block_count is {n_layers}, but the file has only {} tensors",
                    g.tensors.len()
                ),
            ));
        }
        if dim > 1 << 20 || hidden > 1 << 24 || vocab_rows > 1 << 24 {
            return Err(ConvertError::model(
                g,
                format!("implausible sizes: dim {dim}, hidden {hidden}, vocabulary {vocab_rows}"),
            ));
        }
        let head_dim = dim / n_heads;
        Ok(Hparams {
            arch,
            dim,
            n_layers,
            n_heads,
            n_kv_heads,
            hidden,
            context_length,
            head_dim,
            kv_dim: n_kv_heads * head_dim,
            eps,
            rope_base,
            pooling,
            vocab_rows: vocab_rows as u32,
        })
    }
}

/// Looks up tensors by name and checks their shapes, with errors that name
/// the file and tensor.
pub struct Tensors<'a> {
    pub g: &'a Gguf,
}

impl<'a> Tensors<'a> {
    /// A tensor that must exist with GGUF shape `[cols, rows]` (or `[n]` for
    /// a vector when `rows` is None).
    pub fn get(
        &self,
        name: &str,
        cols: u32,
        rows: Option<u32>,
    ) -> Result<&'a TensorInfo, ConvertError> {
        let t = self
            .g
            .tensor(name)
            .ok_or_else(|| ConvertError::model(self.g, format!("missing tensor {name}")))?;
        self.check(t, cols, rows)?;
        Ok(t)
    }

    /// Like [`get`](Self::get) for a tensor that may be absent.
    pub fn optional(
        &self,
        name: &str,
        cols: u32,
        rows: Option<u32>,
    ) -> Result<Option<&'a TensorInfo>, ConvertError> {
        match self.g.tensor(name) {
            Some(t) => self.check(t, cols, rows).map(|_| Some(t)),
            None => Ok(None),
        }
    }

    /// A 2-D tensor with `cols` columns and any number of rows (≥ 1).
    pub fn table(&self, name: &str, cols: u32) -> Result<&'a TensorInfo, ConvertError> {
        let t = self
            .g
            .tensor(name)
            .ok_or_else(|| ConvertError::model(self.g, format!("missing tensor {name}")))?;
        let rows = t.shape.get(1).copied().unwrap_or(0);
        if rows == 0 || rows > u32::MAX as u64 {
            return Err(ConvertError::model(
                self.g,
                format!(
                    "tensor {name} has shape {:?}, expected a table of {cols}-element rows",
                    t.shape
                ),
            ));
        }
        self.check(t, cols, Some(rows as u32))?;
        Ok(t)
    }

    fn check(&self, t: &TensorInfo, cols: u32, rows: Option<u32>) -> Result<(), ConvertError> {
        let want: Vec<u64> = match rows {
            Some(r) => vec![cols as u64, r as u64],
            None => vec![cols as u64],
        };
        // Trailing 1s are allowed (some writers store vectors as [n, 1]).
        let mut got = t.shape.clone();
        while got.len() > want.len() && got.last() == Some(&1) {
            got.pop();
        }
        if got != want {
            return Err(ConvertError::model(
                self.g,
                format!(
                    "tensor {} has shape {:?}, expected {:?}",
                    ssnail_gguf::printable(&t.name),
                    t.shape,
                    want
                ),
            ));
        }
        Ok(())
    }
}

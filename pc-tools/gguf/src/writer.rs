//! A small GGUF v3 writer: metadata of every GGUF value type (arrays
//! included), tensors of any ggml type given as raw bytes, 32-byte aligned.
//!
//! Written by hand rather than with gguf-rs's writer: gguf-rs 0.1.8 sizes
//! tensors by a "type < 10 → block 32, else 256" rule, so BF16, F64 and the
//! integer types get wrong sizes; it also sorts metadata keys (GGUF keeps
//! insertion order) and writes only to a file. The format is simple enough
//! (header, key/values, tensor infos, aligned data) to write directly.

use ssnail_format::ggml::GgmlType;
use std::path::Path;

/// GGUF's default (and our) tensor-data alignment.
pub const ALIGNMENT: u64 = 32;

/// One metadata value. Arrays hold values of one type (checked on write).
#[derive(Clone, Debug, PartialEq)]
pub enum MetaValue {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(String),
    Array(Vec<MetaValue>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl MetaValue {
    /// GGUF value-type code.
    fn type_code(&self) -> u32 {
        match self {
            MetaValue::U8(_) => 0,
            MetaValue::I8(_) => 1,
            MetaValue::U16(_) => 2,
            MetaValue::I16(_) => 3,
            MetaValue::U32(_) => 4,
            MetaValue::I32(_) => 5,
            MetaValue::F32(_) => 6,
            MetaValue::Bool(_) => 7,
            MetaValue::Str(_) => 8,
            MetaValue::Array(_) => 9,
            MetaValue::U64(_) => 10,
            MetaValue::I64(_) => 11,
            MetaValue::F64(_) => 12,
        }
    }
}

impl From<&crate::Value> for MetaValue {
    /// A value read from a GGUF, in the same GGUF type.
    fn from(v: &crate::Value) -> MetaValue {
        use crate::{Array, Value};
        match v {
            Value::U8(x) => MetaValue::U8(*x),
            Value::I8(x) => MetaValue::I8(*x),
            Value::U16(x) => MetaValue::U16(*x),
            Value::I16(x) => MetaValue::I16(*x),
            Value::U32(x) => MetaValue::U32(*x),
            Value::I32(x) => MetaValue::I32(*x),
            Value::F32(x) => MetaValue::F32(*x),
            Value::Bool(x) => MetaValue::Bool(*x),
            Value::Str(x) => MetaValue::Str(x.clone()),
            Value::U64(x) => MetaValue::U64(*x),
            Value::I64(x) => MetaValue::I64(*x),
            Value::F64(x) => MetaValue::F64(*x),
            Value::Array(Array::Str(s)) => {
                MetaValue::Array(s.iter().map(|x| MetaValue::Str(x.into())).collect())
            }
            Value::Array(a) => MetaValue::Array(
                (0..a.len())
                    .filter_map(|i| a.get(i))
                    .map(|x| MetaValue::from(&x))
                    .collect(),
            ),
        }
    }
}

/// Why a GGUF could not be written.
#[derive(Debug)]
pub enum WriteError {
    /// An array mixes value types, or nests arrays.
    BadArray(String),
    /// Tensor bytes do not match its type and shape.
    BadTensor(String),
    Io(std::io::Error),
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::BadArray(m) | WriteError::BadTensor(m) => f.write_str(m),
            WriteError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WriteError {}

struct PendingTensor {
    name: String,
    shape: Vec<u64>,
    ty: GgmlType,
    data: Vec<u8>,
}

/// Collects metadata and tensors, then serialises them as GGUF v3.
#[derive(Default)]
pub struct GgufWriter {
    meta: Vec<(String, MetaValue)>,
    tensors: Vec<PendingTensor>,
}

impl GgufWriter {
    pub fn new() -> GgufWriter {
        GgufWriter::default()
    }

    /// Add (or replace) a key; keys are written in first-insertion order.
    pub fn meta(&mut self, key: &str, v: MetaValue) -> &mut Self {
        if let Some(slot) = self.meta.iter_mut().find(|(k, _)| k == key) {
            slot.1 = v;
        } else {
            self.meta.push((key.to_string(), v));
        }
        self
    }
    pub fn meta_str(&mut self, key: &str, v: &str) -> &mut Self {
        self.meta(key, MetaValue::Str(v.to_string()))
    }
    pub fn meta_u32(&mut self, key: &str, v: u32) -> &mut Self {
        self.meta(key, MetaValue::U32(v))
    }
    pub fn meta_f32(&mut self, key: &str, v: f32) -> &mut Self {
        self.meta(key, MetaValue::F32(v))
    }
    pub fn meta_bool(&mut self, key: &str, v: bool) -> &mut Self {
        self.meta(key, MetaValue::Bool(v))
    }
    pub fn meta_strs<S: AsRef<str>>(&mut self, key: &str, v: &[S]) -> &mut Self {
        let a = v
            .iter()
            .map(|s| MetaValue::Str(s.as_ref().to_string()))
            .collect();
        self.meta(key, MetaValue::Array(a))
    }
    pub fn meta_f32s(&mut self, key: &str, v: &[f32]) -> &mut Self {
        self.meta(
            key,
            MetaValue::Array(v.iter().map(|x| MetaValue::F32(*x)).collect()),
        )
    }
    pub fn meta_i32s(&mut self, key: &str, v: &[i32]) -> &mut Self {
        self.meta(
            key,
            MetaValue::Array(v.iter().map(|x| MetaValue::I32(*x)).collect()),
        )
    }

    /// Add a tensor. `shape` is in GGUF order (shape[0] = row length);
    /// `data` must be exactly the bytes that type and shape need.
    pub fn tensor(
        &mut self,
        name: &str,
        shape: &[u64],
        ty: GgmlType,
        data: Vec<u8>,
    ) -> Result<&mut Self, WriteError> {
        let n: u64 = shape.iter().product();
        let blk = ty.block_len() as u64;
        if shape.is_empty() || !shape[0].is_multiple_of(blk) {
            return Err(WriteError::BadTensor(format!(
                "tensor {name}: shape {shape:?} does not fit the {} block of {blk}",
                ty.name()
            )));
        }
        let want = n / blk * ty.block_bytes() as u64;
        if data.len() as u64 != want {
            return Err(WriteError::BadTensor(format!(
                "tensor {name}: {} bytes given, {} {shape:?} needs {want}",
                data.len(),
                ty.name()
            )));
        }
        self.tensors.push(PendingTensor {
            name: name.to_string(),
            shape: shape.to_vec(),
            ty,
            data,
        });
        Ok(self)
    }

    /// The whole file.
    pub fn to_bytes(&self) -> Result<Vec<u8>, WriteError> {
        let mut out = Vec::new();
        out.extend_from_slice(b"GGUF");
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&(self.tensors.len() as u64).to_le_bytes());
        out.extend_from_slice(&(self.meta.len() as u64).to_le_bytes());
        for (k, v) in &self.meta {
            put_str(&mut out, k);
            out.extend_from_slice(&v.type_code().to_le_bytes());
            put_value(&mut out, k, v)?;
        }
        let mut offset = 0u64;
        let mut offsets = Vec::with_capacity(self.tensors.len());
        for t in &self.tensors {
            put_str(&mut out, &t.name);
            out.extend_from_slice(&(t.shape.len() as u32).to_le_bytes());
            for d in &t.shape {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&(t.ty as u32).to_le_bytes());
            out.extend_from_slice(&offset.to_le_bytes());
            offsets.push(offset);
            offset = (offset + t.data.len() as u64).div_ceil(ALIGNMENT) * ALIGNMENT;
        }
        let data_start = (out.len() as u64).div_ceil(ALIGNMENT) * ALIGNMENT;
        out.resize(data_start as usize, 0);
        for (t, off) in self.tensors.iter().zip(offsets) {
            out.resize((data_start + off) as usize, 0);
            out.extend_from_slice(&t.data);
        }
        Ok(out)
    }

    /// Write the file to `path`.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), WriteError> {
        std::fs::write(path, self.to_bytes()?).map_err(WriteError::Io)
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_value(out: &mut Vec<u8>, key: &str, v: &MetaValue) -> Result<(), WriteError> {
    match v {
        MetaValue::U8(x) => out.push(*x),
        MetaValue::I8(x) => out.push(*x as u8),
        MetaValue::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        MetaValue::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        MetaValue::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        MetaValue::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        MetaValue::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        MetaValue::Bool(x) => out.push(*x as u8),
        MetaValue::Str(s) => put_str(out, s),
        MetaValue::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        MetaValue::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        MetaValue::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
        MetaValue::Array(items) => {
            // An empty array is written with element type u8, as gguf-py does.
            let ty = items.first().map(|i| i.type_code()).unwrap_or(0);
            if ty == 9 {
                return Err(WriteError::BadArray(format!(
                    "{key}: nested arrays are not written"
                )));
            }
            out.extend_from_slice(&ty.to_le_bytes());
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for i in items {
                if i.type_code() != ty {
                    return Err(WriteError::BadArray(format!(
                        "{key}: array mixes value types {ty} and {}",
                        i.type_code()
                    )));
                }
                put_value(out, key, i)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Gguf;

    #[test]
    fn round_trip_through_the_reader() {
        let mut w = GgufWriter::new();
        w.meta_str("general.architecture", "llama")
            .meta_u32("llama.block_count", 2)
            .meta_f32("llama.attention.layer_norm_rms_epsilon", 1e-5)
            .meta_bool("tokenizer.ggml.add_bos_token", true)
            .meta("x.u8", MetaValue::U8(7))
            .meta("x.i8", MetaValue::I8(-7))
            .meta("x.u16", MetaValue::U16(65535))
            .meta("x.i16", MetaValue::I16(-300))
            .meta("x.i32", MetaValue::I32(-5))
            .meta("x.u64", MetaValue::U64(1 << 40))
            .meta("x.i64", MetaValue::I64(-(1 << 40)))
            .meta("x.f64", MetaValue::F64(0.125))
            .meta_strs("tokenizer.ggml.tokens", &["a", "▁b", ""])
            .meta_f32s("tokenizer.ggml.scores", &[0.0, -1.5])
            .meta_i32s("tokenizer.ggml.token_type", &[1, 3]);
        let f32s: Vec<u8> = [1.0f32, 2.0, 3.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        w.tensor("v", &[3], GgmlType::F32, f32s.clone()).unwrap();
        // BF16 has a block of one element (gguf-rs's writer gets this wrong).
        w.tensor(
            "b",
            &[3, 1],
            GgmlType::Bf16,
            vec![0x80, 0x3F, 0, 0x40, 0x40, 0x40],
        )
        .unwrap();
        w.tensor("q", &[32, 2], GgmlType::Q8_0, vec![9; 68])
            .unwrap();
        assert!(w.tensor("bad", &[33], GgmlType::Q8_0, vec![0; 34]).is_err());
        assert!(w.tensor("bad", &[32], GgmlType::Q8_0, vec![0; 33]).is_err());

        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.gguf");
        w.write(&p).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let g = Gguf::open(&p).unwrap();
        assert_eq!(g.architecture(), Some("llama"));
        assert_eq!(g.get_u64("llama.block_count"), Some(2));
        assert_eq!(
            g.get_f64("llama.attention.layer_norm_rms_epsilon"),
            Some(1e-5),
            "f32 read back as its shortest decimal"
        );
        assert_eq!(g.get_bool("tokenizer.ggml.add_bos_token"), Some(true));
        assert_eq!(g.get_u64("x.u16"), Some(65535));
        assert_eq!(g.get("x.i16").and_then(|v| v.as_i64()), Some(-300));
        assert_eq!(g.get("x.i8").and_then(|v| v.as_i64()), Some(-7));
        assert_eq!(g.get_u64("x.u64"), Some(1 << 40));
        assert_eq!(g.get("x.i64").and_then(|v| v.as_i64()), Some(-(1 << 40)));
        assert_eq!(g.get_f64("x.f64"), Some(0.125));
        assert_eq!(
            g.get_strings("tokenizer.ggml.tokens").unwrap(),
            vec!["a", "▁b", ""]
        );
        assert_eq!(
            g.get_f64s("tokenizer.ggml.scores").unwrap(),
            vec![0.0, -1.5]
        );
        assert_eq!(g.get_i64s("tokenizer.ggml.token_type").unwrap(), vec![1, 3]);
        assert_eq!(g.tensors.len(), 3);
        for t in &g.tensors {
            assert_eq!(t.file_offset % ALIGNMENT, 0, "{} aligned", t.name);
        }
        assert_eq!(g.data(g.tensor("v").unwrap()), &f32s[..]);
        assert_eq!(g.tensor("b").unwrap().n_bytes, 6);
        assert_eq!(g.data(g.tensor("q").unwrap()), &[9u8; 68][..]);
        // Key/value order is insertion order: the first key follows the header.
        assert_eq!(&bytes[24..32], &20u64.to_le_bytes());
        assert_eq!(&bytes[32..52], b"general.architecture");
    }
}

//! GGUF reading: metadata and tensor infos parsed by the gguf-rs crate,
//! tensor bytes memory-mapped. Only parses; no model knowledge beyond names.

use ssnail_format::ggml::GgmlType;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

pub use serde_json::Value;

pub mod writer;

/// GGUF token types (`tokenizer.ggml.token_type`, llama.cpp's `TokenType`).
pub mod token_type {
    pub const NORMAL: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const CONTROL: i32 = 3;
    pub const USER_DEFINED: i32 = 4;
    pub const UNUSED: i32 = 5;
    pub const BYTE: i32 = 6;
}

/// A GGUF problem, always naming the file.
#[derive(Debug)]
pub struct GgufError {
    pub path: PathBuf,
    pub msg: String,
}

impl std::fmt::Display for GgufError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.msg)
    }
}

impl std::error::Error for GgufError {}

pub type Result<T> = std::result::Result<T, GgufError>;

/// One tensor: its ggml type, GGUF shape (ne0 first = columns) and bytes.
#[derive(Clone, Debug)]
pub struct TensorInfo {
    pub name: String,
    pub ty: GgmlType,
    /// GGUF order: shape[0] is the innermost (row length).
    pub shape: Vec<u64>,
    /// Offset of the data in the file.
    pub file_offset: u64,
    pub n_bytes: u64,
}

impl TensorInfo {
    pub fn n_elements(&self) -> u64 {
        self.shape.iter().product()
    }
    /// (rows, cols) with rows = output features; 1-D tensors are one row.
    pub fn rows_cols(&self) -> (usize, usize) {
        let cols = self.shape.first().copied().unwrap_or(1) as usize;
        let rows = self.shape.iter().skip(1).product::<u64>() as usize;
        (rows, cols)
    }
}

/// An open GGUF file.
pub struct Gguf {
    pub path: PathBuf,
    pub version: String,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<TensorInfo>,
    map: memmap2::Mmap,
}

impl Gguf {
    pub fn open(path: impl AsRef<Path>) -> Result<Gguf> {
        let path = path.as_ref().to_path_buf();
        let err = |msg: String| GgufError {
            path: path.clone(),
            msg,
        };
        let mut file = File::open(&path).map_err(|e| err(format!("cannot open: {e}")))?;
        let mut magic = [0u8; 4];
        file.read_exact(&mut magic)
            .map_err(|_| err("too short to be a GGUF file".into()))?;
        if &magic != b"GGUF" {
            return Err(err(format!(
                "not a GGUF file (magic {:02X} {:02X} {:02X} {:02X}, expected 'GGUF')",
                magic[0], magic[1], magic[2], magic[3]
            )));
        }
        let reader =
            BufReader::with_capacity(1 << 20, file.try_clone().map_err(|e| err(e.to_string()))?);
        let mut container =
            gguf_rs::GGUFContainer::new(gguf_rs::ByteOrder::LE, Box::new(reader), u64::MAX);
        let model = container
            .decode()
            .map_err(|e| err(format!("corrupt or truncated GGUF header: {e}")))?;
        let map =
            unsafe { memmap2::Mmap::map(&file) }.map_err(|e| err(format!("cannot map: {e}")))?;
        let data_offset = model.data_offset();
        let mut tensors = Vec::with_capacity(model.tensors().len());
        for t in model.tensors() {
            let ty = GgmlType::from_u32(t.kind).ok_or_else(|| {
                err(format!(
                    "tensor {} has unknown ggml type {}",
                    t.name, t.kind
                ))
            })?;
            let n: u64 = t.shape.iter().product();
            if !n.is_multiple_of(ty.block_len() as u64) {
                return Err(err(format!(
                    "tensor {} has {} elements, not a multiple of the {} block of {}",
                    t.name,
                    n,
                    ty.name(),
                    ty.block_len()
                )));
            }
            let n_bytes = n / ty.block_len() as u64 * ty.block_bytes() as u64;
            let file_offset = data_offset + t.offset;
            if file_offset + n_bytes > map.len() as u64 {
                return Err(err(format!(
                    "truncated: tensor {} needs bytes {}..{} but the file has {}",
                    t.name,
                    file_offset,
                    file_offset + n_bytes,
                    map.len()
                )));
            }
            tensors.push(TensorInfo {
                name: t.name.clone(),
                ty,
                shape: t.shape.clone(),
                file_offset,
                n_bytes,
            });
        }
        Ok(Gguf {
            path,
            version: model.get_version(),
            metadata: model.metadata().clone(),
            tensors,
            map,
        })
    }

    /// An error that names this file.
    pub fn error(&self, msg: impl Into<String>) -> GgufError {
        GgufError {
            path: self.path.clone(),
            msg: msg.into(),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(|v| v.as_str())
    }
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        let v = self.get(key)?;
        v.as_u64().or_else(|| v.as_i64().map(|i| i as u64))
    }
    pub fn get_f64(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(|v| v.as_f64())
    }
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(|v| v.as_bool())
    }
    pub fn get_array(&self, key: &str) -> Option<&Vec<Value>> {
        self.get(key).and_then(|v| v.as_array())
    }
    /// An array of strings (e.g. `tokenizer.ggml.tokens`).
    pub fn get_strings(&self, key: &str) -> Option<Vec<String>> {
        self.get_array(key).map(|a| {
            a.iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect()
        })
    }
    /// An array of numbers as f64 (e.g. scores).
    pub fn get_f64s(&self, key: &str) -> Option<Vec<f64>> {
        self.get_array(key)
            .map(|a| a.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect())
    }
    /// An array of integers as i64 (e.g. token types).
    pub fn get_i64s(&self, key: &str) -> Option<Vec<i64>> {
        self.get_array(key)
            .map(|a| a.iter().map(|v| v.as_i64().unwrap_or(0)).collect())
    }

    /// `general.architecture`.
    pub fn architecture(&self) -> Option<&str> {
        self.get_str("general.architecture")
    }

    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The raw bytes of a tensor.
    pub fn data(&self, t: &TensorInfo) -> &[u8] {
        &self.map[t.file_offset as usize..(t.file_offset + t.n_bytes) as usize]
    }

    /// Whole file length.
    pub fn file_len(&self) -> u64 {
        self.map.len() as u64
    }
}

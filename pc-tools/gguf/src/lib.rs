//! GGUF reading: metadata and tensor infos parsed here, tensor bytes
//! memory-mapped. Only parses; no model knowledge beyond names.
//!
//! The header is parsed by hand rather than with gguf-rs (which this crate
//! used before): gguf-rs 0.1.8 reaches `unreachable!()` on ggml type id 40,
//! keeps every array element as a `serde_json::Value` (about 128 times the
//! bytes in the file, then cloned), lets a repeated key replace the first
//! one, and leaves offset checks to the caller. Here every number from the
//! file is checked before it sizes or places anything, arrays are stored
//! compactly (see [`value`]), and every problem is an error naming the file.

use ssnail_format::ggml::GgmlType;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

pub mod value;
pub mod writer;

pub use value::{printable, Array, Strings, Value};

/// GGUF token types (`tokenizer.ggml.token_type`, llama.cpp's `TokenType`).
pub mod token_type {
    pub const NORMAL: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const CONTROL: i32 = 3;
    pub const USER_DEFINED: i32 = 4;
    pub const UNUSED: i32 = 5;
    pub const BYTE: i32 = 6;
}

/// Limits on what a header may declare (far above any real model; they
/// bound the memory and time a hostile header can ask for).
pub mod limits {
    /// Bytes of one string (key, value or array element).
    pub const MAX_STRING: u64 = 16 << 20;
    /// Elements of one metadata array (vocabularies have < 1M tokens).
    pub const MAX_ARRAY: u64 = 1 << 24;
    /// Metadata keys.
    pub const MAX_KEYS: u64 = 1 << 16;
    /// Tensors.
    pub const MAX_TENSORS: u64 = 1 << 20;
    /// Dimensions of a tensor (GGML_MAX_DIMS).
    pub const MAX_DIMS: u32 = 4;
}

/// GGUF's default tensor-data alignment.
pub const DEFAULT_ALIGNMENT: u64 = 32;

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

/// The file's bytes: memory-mapped, or owned (files built in memory).
enum Bytes {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// An open GGUF file.
pub struct Gguf {
    pub path: PathBuf,
    pub version: String,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<TensorInfo>,
    /// Where tensor data starts (offsets in the file are relative to it).
    pub data_offset: u64,
    bytes: Bytes,
}

/// A cursor over the header; every read checks the bytes are there.
struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }
    fn take(&mut self, n: u64, what: &str) -> std::result::Result<&'a [u8], String> {
        if n > self.remaining() as u64 {
            return Err(format!(
                "truncated header: {what} needs {n} bytes at offset {} but the file ends at {}",
                self.pos,
                self.b.len()
            ));
        }
        let s = &self.b[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self, what: &str) -> std::result::Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N as u64, what)?);
        Ok(a)
    }
    fn u32(&mut self, what: &str) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.arr(what)?))
    }
    fn u64(&mut self, what: &str) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.arr(what)?))
    }
    fn string(&mut self, what: &str) -> std::result::Result<String, String> {
        let n = self.u64(what)?;
        if n > limits::MAX_STRING {
            return Err(format!(
                "{what} claims {n} bytes (limit {})",
                limits::MAX_STRING
            ));
        }
        let b = self.take(n, what)?;
        // Invalid UTF-8 is replaced, as llama.cpp shows such strings.
        Ok(String::from_utf8_lossy(b).into_owned())
    }
    /// A count of items of at least `min_bytes` each, checked against the
    /// limit and against the bytes left (so no count sizes memory the file
    /// cannot fill).
    fn count(
        &mut self,
        what: &str,
        limit: u64,
        min_bytes: u64,
    ) -> std::result::Result<usize, String> {
        let n = self.u64(what)?;
        if n > limit {
            return Err(format!("{what} is {n} (limit {limit})"));
        }
        if n.saturating_mul(min_bytes) > self.remaining() as u64 {
            return Err(format!(
                "truncated header: {what} is {n} but only {} bytes follow",
                self.remaining()
            ));
        }
        Ok(n as usize)
    }

    fn value(&mut self, ty: u32, key: &str) -> std::result::Result<Value, String> {
        let w = || format!("value of {}", printable(key));
        Ok(match ty {
            0 => Value::U8(self.arr::<1>(&w())?[0]),
            1 => Value::I8(self.arr::<1>(&w())?[0] as i8),
            2 => Value::U16(u16::from_le_bytes(self.arr(&w())?)),
            3 => Value::I16(i16::from_le_bytes(self.arr(&w())?)),
            4 => Value::U32(u32::from_le_bytes(self.arr(&w())?)),
            5 => Value::I32(i32::from_le_bytes(self.arr(&w())?)),
            6 => Value::F32(f32::from_le_bytes(self.arr(&w())?)),
            7 => match self.arr::<1>(&w())?[0] {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => return Err(format!("{} is a bool of value {b}", printable(key))),
            },
            8 => Value::Str(self.string(&w())?),
            9 => Value::Array(self.array(key)?),
            10 => Value::U64(u64::from_le_bytes(self.arr(&w())?)),
            11 => Value::I64(i64::from_le_bytes(self.arr(&w())?)),
            12 => Value::F64(f64::from_le_bytes(self.arr(&w())?)),
            t => return Err(format!("{} has unknown value type {t}", printable(key))),
        })
    }

    fn array(&mut self, key: &str) -> std::result::Result<Array, String> {
        let what = format!("array {}", printable(key));
        let ty = self.u32(&what)?;
        let size: u64 = match ty {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            8 | 10..=12 => 8,
            9 => return Err(format!("{what} nests arrays (not supported)")),
            t => return Err(format!("{what} has unknown element type {t}")),
        };
        let n = self.count(&format!("length of {what}"), limits::MAX_ARRAY, size)?;
        if ty == 8 {
            let mut s = Strings::default();
            for _ in 0..n {
                s.push(&self.string(&what)?);
            }
            return Ok(Array::Str(s));
        }
        let raw = self.take(n as u64 * size, &what)?;
        macro_rules! nums {
            ($t:ty, $v:ident) => {
                Array::$v(
                    raw.chunks_exact(std::mem::size_of::<$t>())
                        .map(|c| <$t>::from_le_bytes(c.try_into().unwrap_or_default()))
                        .collect(),
                )
            };
        }
        Ok(match ty {
            0 => Array::U8(raw.to_vec()),
            1 => Array::I8(raw.iter().map(|&b| b as i8).collect()),
            2 => nums!(u16, U16),
            3 => nums!(i16, I16),
            4 => nums!(u32, U32),
            5 => nums!(i32, I32),
            6 => nums!(f32, F32),
            7 => {
                if let Some(b) = raw.iter().find(|&&b| b > 1) {
                    return Err(format!("{what} holds a bool of value {b}"));
                }
                Array::Bool(raw.iter().map(|&b| b == 1).collect())
            }
            10 => nums!(u64, U64),
            11 => nums!(i64, I64),
            _ => nums!(f64, F64),
        })
    }
}

impl Gguf {
    pub fn open(path: impl AsRef<Path>) -> Result<Gguf> {
        let path = path.as_ref().to_path_buf();
        let err = |msg: String| GgufError {
            path: path.clone(),
            msg,
        };
        let file = File::open(&path).map_err(|e| err(format!("cannot open: {e}")))?;
        let meta = file
            .metadata()
            .map_err(|e| err(format!("cannot open: {e}")))?;
        if !meta.is_file() {
            return Err(err("not a regular file".into()));
        }
        // Safety: the map is read-only; a file changed underneath is the
        // user's doing, as with every memory-mapped model reader.
        let map =
            unsafe { memmap2::Mmap::map(&file) }.map_err(|e| err(format!("cannot map: {e}")))?;
        Gguf::parse(path, Bytes::Map(map))
    }

    /// A GGUF held in memory; `path` names it in errors.
    pub fn from_bytes(path: impl Into<PathBuf>, bytes: Vec<u8>) -> Result<Gguf> {
        Gguf::parse(path.into(), Bytes::Owned(bytes))
    }

    fn parse(path: PathBuf, bytes: Bytes) -> Result<Gguf> {
        match parse_header(&bytes) {
            Ok((version, metadata, tensors, data_offset)) => Ok(Gguf {
                path,
                version,
                metadata,
                tensors,
                data_offset,
                bytes,
            }),
            Err(msg) => Err(GgufError { path, msg }),
        }
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
    pub fn get_array(&self, key: &str) -> Option<&Array> {
        self.get(key).and_then(|v| v.as_array())
    }
    /// An array of strings (e.g. `tokenizer.ggml.tokens`); None when
    /// absent or not a string array (see [`strings`](Self::strings)).
    pub fn get_strings(&self, key: &str) -> Option<Vec<String>> {
        match self.get_array(key)? {
            Array::Str(s) => Some(s.iter().map(str::to_string).collect()),
            _ => None,
        }
    }
    /// An array of numbers as f64 (e.g. scores); None when absent or not numeric.
    pub fn get_f64s(&self, key: &str) -> Option<Vec<f64>> {
        let a = self.get_array(key).filter(|a| a.is_numeric())?;
        Some(
            (0..a.len())
                .map(|i| a.get(i).and_then(|v| v.as_f64()).unwrap_or(f64::NAN))
                .collect(),
        )
    }
    /// An array of integers as i64 (e.g. token types); None when absent or
    /// not all integers that fit i64.
    pub fn get_i64s(&self, key: &str) -> Option<Vec<i64>> {
        let a = self.get_array(key)?;
        (0..a.len()).map(|i| a.get(i)?.as_i64()).collect()
    }

    fn wrong_type(&self, key: &str, v: &Value, want: &str) -> GgufError {
        self.error(format!(
            "{} is {} ({}), expected {want}",
            printable(key),
            printable(&v.summary()),
            v.type_name()
        ))
    }
    /// A non-negative integer key: None when absent, an error when present
    /// with another type (a string or float never falls back to a default).
    pub fn uint(&self, key: &str) -> Result<Option<u64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, v, "a non-negative integer")),
        }
    }
    /// A number key (integers widened): None when absent, an error when
    /// present with another type. NaN and infinities are returned as read.
    pub fn float(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, v, "a number")),
        }
    }
    /// A string key: None when absent, an error when present with another type.
    pub fn string(&self, key: &str) -> Result<Option<&str>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, v, "a string")),
        }
    }
    /// A bool key: None when absent, an error when present with another type.
    pub fn boolean(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_bool()
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, v, "a bool")),
        }
    }
    /// A string array: None when absent, an error when another type.
    pub fn strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => self
                .get_strings(key)
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, v, "an array of strings")),
        }
    }
    /// A numeric array as f64: None when absent, an error when another type.
    pub fn floats(&self, key: &str) -> Result<Option<Vec<f64>>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => self
                .get_f64s(key)
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, v, "an array of numbers")),
        }
    }
    /// An integer array: None when absent, an error when another type.
    pub fn ints(&self, key: &str) -> Result<Option<Vec<i64>>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => self
                .get_i64s(key)
                .map(Some)
                .ok_or_else(|| self.wrong_type(key, v, "an array of integers")),
        }
    }

    /// `general.architecture`.
    pub fn architecture(&self) -> Option<&str> {
        self.get_str("general.architecture")
    }

    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensors.iter().find(|t| t.name == name)
    }

    /// The raw bytes of a tensor.
    /// (Infos come from [`open`](Self::open), which checked they lie in the
    /// file; a hand-made info outside it gives no bytes.)
    pub fn data(&self, t: &TensorInfo) -> &[u8] {
        let end = t.file_offset.saturating_add(t.n_bytes);
        usize::try_from(t.file_offset)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(a, b)| self.bytes.get(a..b))
            .unwrap_or(&[])
    }

    /// Whole file length.
    pub fn file_len(&self) -> u64 {
        self.bytes.len() as u64
    }
}

type Header = (String, BTreeMap<String, Value>, Vec<TensorInfo>, u64);

/// Everything before the tensor data, checked: known types, shapes whose
/// sizes do not overflow, aligned tensors inside the file that do not
/// overlap, no repeated key or tensor name.
fn parse_header(b: &[u8]) -> std::result::Result<Header, String> {
    if b.len() < 4 {
        return Err("too short to be a GGUF file".into());
    }
    if &b[..4] != b"GGUF" {
        return Err(format!(
            "not a GGUF file (magic {:02X} {:02X} {:02X} {:02X}, expected 'GGUF')",
            b[0], b[1], b[2], b[3]
        ));
    }
    let mut r = Reader { b, pos: 4 };
    let version = r.u32("version")?;
    if version != 2 && version != 3 {
        return Err(format!(
            "GGUF version {version} is not supported (versions 2 and 3 are)"
        ));
    }
    let n_tensors = r.u64("tensor count")?;
    let n_kv = r.u64("key count")?;
    if n_tensors > limits::MAX_TENSORS {
        return Err(format!(
            "tensor count is {n_tensors} (limit {})",
            limits::MAX_TENSORS
        ));
    }
    // A key/value takes at least 13 bytes, a tensor info at least 24.
    if n_kv > limits::MAX_KEYS || n_kv.saturating_mul(13) > r.remaining() as u64 {
        return Err(format!(
            "key count is {n_kv}, more than the header can hold"
        ));
    }
    let mut metadata = BTreeMap::new();
    for _ in 0..n_kv {
        let key = r.string("key")?;
        let ty = r.u32(&format!("type of {}", printable(&key)))?;
        let v = r.value(ty, &key)?;
        if metadata.contains_key(&key) {
            return Err(format!("key {} appears twice", printable(&key)));
        }
        metadata.insert(key, v);
    }
    let alignment = match metadata.get("general.alignment") {
        None => DEFAULT_ALIGNMENT,
        Some(Value::U32(a)) if *a > 0 && a.is_power_of_two() => *a as u64,
        Some(v) => {
            return Err(format!(
                "general.alignment is {v} ({}), expected a power of two as u32",
                v.type_name()
            ))
        }
    };
    if n_tensors.saturating_mul(24) > r.remaining() as u64 {
        return Err(format!(
            "tensor count is {n_tensors}, more than the header can hold"
        ));
    }
    let mut raw = Vec::with_capacity(n_tensors as usize);
    let mut names = std::collections::HashSet::new();
    for _ in 0..n_tensors {
        let name = r.string("tensor name")?;
        let shown = printable(&name).into_owned();
        let dims = r.u32(&format!("dimensions of tensor {shown}"))?;
        if dims > limits::MAX_DIMS {
            return Err(format!(
                "tensor {shown} has {dims} dimensions (at most {})",
                limits::MAX_DIMS
            ));
        }
        let mut shape = Vec::with_capacity(dims as usize);
        for _ in 0..dims {
            shape.push(r.u64(&format!("shape of tensor {shown}"))?);
        }
        let type_id = r.u32(&format!("type of tensor {shown}"))?;
        let offset = r.u64(&format!("offset of tensor {shown}"))?;
        let ty = GgmlType::from_u32(type_id)
            .ok_or_else(|| format!("tensor {shown} has unknown ggml type {type_id}"))?;
        let n = shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .filter(|&n| n <= i64::MAX as u64)
            .ok_or_else(|| format!("tensor {shown} has shape {shape:?}, too many elements"))?;
        let block = ty.block_len() as u64;
        let cols = shape.first().copied().unwrap_or(1);
        if !cols.is_multiple_of(block) {
            return Err(format!(
                "tensor {shown} has rows of {cols} elements, not a multiple of the {} block of {block}",
                ty.name()
            ));
        }
        let n_bytes = (n / block)
            .checked_mul(ty.block_bytes() as u64)
            .ok_or_else(|| format!("tensor {shown} has shape {shape:?}, too many bytes"))?;
        if !offset.is_multiple_of(alignment) {
            return Err(format!(
                "tensor {shown} is at offset {offset}, not a multiple of the alignment {alignment}"
            ));
        }
        if !names.insert(name.clone()) {
            return Err(format!("tensor {shown} appears twice"));
        }
        raw.push((name, ty, shape, offset, n_bytes));
    }
    let header_end = r.pos as u64;
    let data_offset = header_end.div_ceil(alignment) * alignment;
    let file_len = b.len() as u64;
    let mut tensors = Vec::with_capacity(raw.len());
    for (name, ty, shape, offset, n_bytes) in raw {
        let end = data_offset
            .checked_add(offset)
            .and_then(|start| start.checked_add(n_bytes).map(|end| (start, end)));
        let (file_offset, end) = match end {
            Some(se) if se.1 <= file_len => se,
            _ => {
                return Err(format!(
                    "truncated or corrupt: tensor {} needs {n_bytes} bytes at data offset {offset} but the file has {file_len}",
                    printable(&name)
                ))
            }
        };
        debug_assert!(end >= file_offset);
        tensors.push(TensorInfo {
            name,
            ty,
            shape,
            file_offset,
            n_bytes,
        });
    }
    // No two tensors share bytes.
    let mut spans: Vec<(u64, u64, usize)> = tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| t.n_bytes > 0)
        .map(|(i, t)| (t.file_offset, t.file_offset + t.n_bytes, i))
        .collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(format!(
                "tensors {} and {} overlap",
                printable(&tensors[w[0].2].name),
                printable(&tensors[w[1].2].name)
            ));
        }
    }
    Ok((version.to_string(), metadata, tensors, data_offset))
}

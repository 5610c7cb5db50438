//! A Hugging Face checkpoint directory: `config.json` and the tensors of its
//! `*.safetensors` files (one file or shards), read through the safetensors
//! crate and handed out as f32.

use anyhow::{bail, Context, Result};
use safetensors::{Dtype, SafeTensors};
use serde_json::Value;
use ssnail_format::ggml::{bf16_to_f32, f16_to_f32};
use ssnail_gguf::printable;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// config.json sizes and their upper bounds (far above any model SSNAIL
/// can hold; they keep a hostile config from sizing huge tables).
const SIZE_KEYS: &[(&str, u64)] = &[
    ("vocab_size", 1 << 24),
    ("hidden_size", 1 << 20),
    ("n_embd", 1 << 20),
    ("dim", 1 << 20),
    ("intermediate_size", 1 << 22),
    ("n_inner", 1 << 22),
    ("hidden_dim", 1 << 22),
    ("head_dim", 1 << 16),
    ("num_hidden_layers", 1 << 12),
    ("n_layer", 1 << 12),
    ("n_layers", 1 << 12),
    ("num_attention_heads", 1 << 12),
    ("n_head", 1 << 12),
    ("n_heads", 1 << 12),
    ("num_key_value_heads", 1 << 12),
    ("n_kv_heads", 1 << 12),
    ("max_position_embeddings", u32::MAX as u64),
    ("n_positions", u32::MAX as u64),
    ("n_ctx", u32::MAX as u64),
    ("max_seq_len", u32::MAX as u64),
    ("type_vocab_size", 1 << 16),
];

/// config.json sizes that divide others (a head's size is hidden_size /
/// heads): 0 is refused.
const NONZERO_KEYS: &[&str] = &[
    "num_attention_heads",
    "n_head",
    "n_heads",
    "num_key_value_heads",
    "n_kv_heads",
];

/// config.json numbers that must be positive and finite.
const POSITIVE_KEYS: &[&str] = &[
    "layer_norm_eps",
    "layer_norm_epsilon",
    "rms_norm_eps",
    "norm_eps",
    "rope_theta",
];

/// Token-embedding tensors, whose row count is the vocabulary size.
const EMBEDDING_SUFFIXES: &[&str] = &[
    "embed_tokens.weight",
    "word_embeddings.weight",
    "wte.weight",
];

/// One tensor as f32, HF shape (outermost first).
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

pub struct Checkpoint {
    pub dir: PathBuf,
    pub config: Value,
    maps: Vec<(PathBuf, memmap2::Mmap)>,
    /// Tensor name → index into `maps`.
    index: BTreeMap<String, usize>,
}

impl Checkpoint {
    pub fn open(dir: &Path) -> Result<Checkpoint> {
        if !dir.is_dir() {
            bail!("{}: not a directory", dir.display());
        }
        let config = read_json(&dir.join("config.json"))?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("{}: cannot list", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "safetensors"))
            .collect();
        files.sort();
        if files.is_empty() {
            bail!(
                "{}: no *.safetensors file (PyTorch .bin checkpoints are not read; \
                 convert them to safetensors first)",
                dir.display()
            );
        }
        let mut maps = Vec::new();
        let mut index = BTreeMap::new();
        for path in files {
            let file = std::fs::File::open(&path)
                .with_context(|| format!("{}: cannot open", path.display()))?;
            // Safety: the file is only read; a concurrent writer would be a
            // user error that at worst yields wrong numbers.
            let map = unsafe { memmap2::Mmap::map(&file) }
                .with_context(|| format!("{}: cannot map", path.display()))?;
            let st = SafeTensors::deserialize(&map).map_err(|e| {
                anyhow::anyhow!(
                    "{}: not a safetensors file: {}",
                    path.display(),
                    printable(&e.to_string())
                )
            })?;
            for name in st.names() {
                index.insert(name.to_string(), maps.len());
            }
            maps.push((path, map));
        }
        let ckpt = Checkpoint {
            dir: dir.to_path_buf(),
            config,
            maps,
            index,
        };
        ckpt.validate_config()?;
        Ok(ckpt)
    }

    /// The numbers of config.json are checked once, here, before anything
    /// is sized by them: each known size is a non-negative integer within
    /// its range (no silent truncation to 32 bits), each epsilon and RoPE
    /// base a positive finite number, and `vocab_size` the row count of the
    /// embedding the checkpoint holds (so tables sized by it are backed by
    /// bytes in the files).
    fn validate_config(&self) -> Result<()> {
        let file = self.dir.join("config.json");
        let shown = |v: &Value| -> String {
            let s = v.to_string();
            let s: String = s.chars().take(40).collect();
            ssnail_gguf::printable(&s).into_owned()
        };
        for &(key, max) in SIZE_KEYS {
            let Some(v) = self.config.get(key) else {
                continue;
            };
            match v.as_u64() {
                Some(0) if NONZERO_KEYS.contains(&key) => {
                    bail!("{}: {key} = 0, expected at least 1", file.display())
                }
                Some(n) if n <= max => {}
                Some(n) => bail!(
                    "{}: {key} = {n} is out of range (at most {max})",
                    file.display()
                ),
                None if v.is_null() => {}
                None => bail!(
                    "{}: {key} is {}, expected a non-negative integer",
                    file.display(),
                    shown(v)
                ),
            }
        }
        for &key in POSITIVE_KEYS {
            let Some(v) = self.config.get(key) else {
                continue;
            };
            match v.as_f64() {
                Some(x) if x.is_finite() && x > 0.0 && (x as f32).is_finite() => {}
                None if v.is_null() => {}
                _ => bail!(
                    "{}: {key} is {}, expected a positive finite number",
                    file.display(),
                    shown(v)
                ),
            }
        }
        if let Some(n) = self.config.get("vocab_size").and_then(Value::as_u64) {
            for name in self
                .index
                .keys()
                .filter(|k| EMBEDDING_SUFFIXES.iter().any(|sfx| k.ends_with(sfx)))
            {
                let rows = self.shape(name)?.first().copied().unwrap_or(0) as u64;
                if rows != n {
                    bail!(
                        "{}: vocab_size is {n} but {name} has {rows} rows",
                        file.display()
                    );
                }
            }
        }
        Ok(())
    }

    /// A tensor's shape (from the safetensors header; no data read).
    pub fn shape(&self, name: &str) -> Result<Vec<usize>> {
        let &i = self
            .index
            .get(name)
            .with_context(|| format!("{}: no tensor {name}", self.dir.display()))?;
        let (path, map) = &self.maps[i];
        let st = SafeTensors::deserialize(map)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), printable(&e.to_string())))?;
        let view = st.tensor(name).map_err(|e| {
            let (name, e) = (printable(name), printable(&e.to_string()).into_owned());
            anyhow::anyhow!("{}: {name}: {e}", path.display())
        })?;
        Ok(view.shape().to_vec())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.index.keys().map(String::as_str)
    }

    pub fn has(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// A tensor converted to f32.
    pub fn get(&self, name: &str) -> Result<Tensor> {
        let &i = self
            .index
            .get(name)
            .with_context(|| format!("{}: no tensor {name}", self.dir.display()))?;
        let (path, map) = &self.maps[i];
        let st = SafeTensors::deserialize(map)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), printable(&e.to_string())))?;
        let view = st.tensor(name).map_err(|e| {
            let (name, e) = (printable(name), printable(&e.to_string()).into_owned());
            anyhow::anyhow!("{}: {name}: {e}", path.display())
        })?;
        let bytes = view.data();
        let data: Vec<f32> = match view.dtype() {
            Dtype::F32 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                .collect(),
            Dtype::F16 => bytes
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            Dtype::BF16 => bytes
                .chunks_exact(2)
                .map(|b| bf16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            Dtype::F64 => bytes
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().unwrap()) as f32)
                .collect(),
            other => bail!(
                "{}: tensor {} has type {other:?}; only F32, F16, BF16 and F64 are imported",
                path.display(),
                printable(name)
            ),
        };
        Ok(Tensor {
            shape: view.shape().to_vec(),
            data,
        })
    }

    /// The dtype of the first matrix: what llama.cpp's "auto" output type
    /// follows.
    pub fn first_matrix_dtype(&self) -> Option<Dtype> {
        for (name, &i) in &self.index {
            let st = SafeTensors::deserialize(&self.maps[i].1).ok()?;
            let view = st.tensor(name).ok()?;
            if view.shape().len() >= 2 {
                return Some(view.dtype());
            }
        }
        None
    }

    /// A config value as an integer.
    pub fn cfg_u64(&self, keys: &[&str]) -> Option<u64> {
        keys.iter()
            .find_map(|k| self.config.get(*k).and_then(Value::as_u64))
    }
    pub fn cfg_f64(&self, keys: &[&str]) -> Option<f64> {
        keys.iter()
            .find_map(|k| self.config.get(*k).and_then(Value::as_f64))
    }
    pub fn require_u64(&self, keys: &[&str]) -> Result<u64> {
        self.cfg_u64(keys).with_context(|| {
            format!(
                "{}: config.json has no {}",
                self.dir.display(),
                keys.join(" / ")
            )
        })
    }
}

/// Read a JSON file, naming it in errors.
pub fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", path.display()))
}

/// Read a JSON file if it exists.
pub fn read_json_opt(path: &Path) -> Result<Option<Value>> {
    if path.is_file() {
        read_json(path).map(Some)
    } else {
        Ok(None)
    }
}

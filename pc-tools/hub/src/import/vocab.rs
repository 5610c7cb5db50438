//! Tokenizer data of a Hugging Face checkpoint turned into llama.cpp's GGUF
//! tokenizer keys: token list, token types, scores or merges, special token
//! ids and add-BOS/EOS/SEP flags, as convert_hf_to_gguf.py writes them.

use super::checkpoint::read_json_opt;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use ssnail_gguf::writer::GgufWriter;
use std::collections::HashMap;
use std::path::Path;

/// GGUF token types (llama.cpp's `TokenType`).
pub use ssnail_gguf::token_type::{BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED};

/// Token strings and types by id, `vocab_size` long.
pub struct TokenList {
    pub tokens: Vec<String>,
    pub types: Vec<i32>,
}

/// The special-token strings a tokenizer declares (tokenizer_config.json,
/// special_tokens_map.json), by kind (`bos`, `cls`, …).
fn declared_special(dir: &Path) -> Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    for file in ["special_tokens_map.json", "tokenizer_config.json"] {
        let Some(v) = read_json_opt(&dir.join(file))? else {
            continue;
        };
        for kind in ["bos", "eos", "unk", "sep", "pad", "cls", "mask"] {
            let entry = v.get(format!("{kind}_token"));
            let text = match entry {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Object(o)) => {
                    o.get("content").and_then(Value::as_str).map(String::from)
                }
                _ => None,
            };
            if let Some(t) = text {
                out.entry(kind.to_string()).or_insert(t);
            }
        }
    }
    Ok(out)
}

/// `tokenizer.json`'s added tokens: (id, content, special).
fn added_tokens(tokenizer: Option<&Value>) -> Vec<(u32, String, bool)> {
    tokenizer
        .and_then(|t| t.get("added_tokens"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|t| {
                    Some((
                        u32::try_from(t.get("id")?.as_u64()?).unwrap_or(u32::MAX),
                        t.get("content")?.as_str()?.to_string(),
                        t.get("special").and_then(Value::as_bool).unwrap_or(false),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The vocabulary (token → id) of `tokenizer.json`'s model, or of
/// `vocab.txt` (one token per line, id = line number).
fn base_vocab(dir: &Path, tokenizer: Option<&Value>) -> Result<HashMap<String, u32>> {
    if let Some(v) = tokenizer
        .and_then(|t| t.get("model"))
        .and_then(|m| m.get("vocab"))
    {
        if let Some(map) = v.as_object() {
            return Ok(map
                .iter()
                .filter_map(|(k, id)| {
                    Some((k.clone(), u32::try_from(id.as_u64()?).unwrap_or(u32::MAX)))
                })
                .collect());
        }
    }
    if let Some(v) = read_json_opt(&dir.join("vocab.json"))? {
        if let Some(map) = v.as_object() {
            return Ok(map
                .iter()
                .filter_map(|(k, id)| {
                    Some((k.clone(), u32::try_from(id.as_u64()?).unwrap_or(u32::MAX)))
                })
                .collect());
        }
    }
    let path = dir.join("vocab.txt");
    if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        return Ok(text
            .lines()
            .enumerate()
            .map(|(i, l)| (l.trim_end_matches('\r').to_string(), i as u32))
            .collect());
    }
    bail!(
        "{}: no tokenizer (tokenizer.json with a vocabulary, vocab.json or vocab.txt)",
        dir.display()
    )
}

/// Tokens by id with llama.cpp's `get_vocab_base` types: ids without a
/// token become `[PAD<id>]` (unused); added tokens are control when special
/// (user-defined otherwise); the rest normal. Without tokenizer.json the
/// declared special strings (which Hugging Face's tokenizer registers as
/// added special tokens) are the control tokens.
pub fn hf_token_list(
    dir: &Path,
    tokenizer: Option<&Value>,
    vocab_size: Option<usize>,
) -> Result<TokenList> {
    let vocab = base_vocab(dir, tokenizer)?;
    let mut added: HashMap<u32, (String, bool)> = added_tokens(tokenizer)
        .into_iter()
        .map(|(id, s, special)| (id, (s, special)))
        .collect();
    if tokenizer.is_none() {
        let mut declared: Vec<String> = declared_special(dir)?.into_values().collect();
        if declared.is_empty() {
            // BertTokenizer's defaults.
            declared = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                .map(String::from)
                .to_vec();
        }
        for s in declared {
            if let Some(&id) = vocab.get(&s) {
                added.insert(id, (s, true));
            }
        }
    }
    // Ids size the table: each must lie inside the vocabulary (config's
    // vocab_size, checked against the embedding, or else as many ids as
    // there are tokens), never a number from the file alone.
    let limit = vocab_size.unwrap_or(vocab.len() + added.len()).max(1);
    if let Some((t, &id)) = vocab.iter().find(|(_, &id)| id as usize >= limit) {
        bail!(
            "{}: token \"{}\" has id {id}, outside the {limit}-token vocabulary",
            dir.display(),
            ssnail_gguf::printable(t)
        );
    }
    if let Some((&id, (t, _))) = added.iter().find(|(&id, _)| id as usize >= limit) {
        bail!(
            "{}: added token \"{}\" has id {id}, outside the {limit}-token vocabulary",
            dir.display(),
            ssnail_gguf::printable(t)
        );
    }
    let max_id = vocab
        .values()
        .chain(added.keys())
        .copied()
        .max()
        .unwrap_or(0) as usize;
    let n = vocab_size.unwrap_or(max_id + 1).max(max_id + 1);
    let mut tokens: Vec<Option<String>> = vec![None; n];
    for (t, &id) in &vocab {
        tokens[id as usize] = Some(t.clone());
    }
    let mut types = vec![NORMAL; n];
    for (&id, (s, special)) in &added {
        tokens[id as usize] = Some(s.clone());
        types[id as usize] = if *special || looks_special(s) {
            CONTROL
        } else {
            USER_DEFINED
        };
    }
    let tokens = tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            t.unwrap_or_else(|| {
                types[i] = UNUSED;
                format!("[PAD{i}]")
            })
        })
        .collect();
    Ok(TokenList { tokens, types })
}

/// llama.cpp's heuristic for added tokens that are control tokens although
/// not flagged special.
fn looks_special(s: &str) -> bool {
    (s.starts_with("<|") && s.ends_with("|>") && s.len() > 4)
        || matches!(s, "<pad>" | "<mask>" | "<2mass>" | "[@BOS@]")
}

/// Special token ids and add-token flags (gguf-py's `SpecialVocab`, for the
/// simple templates real checkpoints use).
#[derive(Debug, Default, PartialEq)]
pub struct SpecialVocab {
    /// (kind, id) in the order written.
    pub ids: Vec<(String, u32)>,
    pub add: Vec<(String, bool)>,
    pub merges: Vec<String>,
    pub lowercase: Option<bool>,
    pub strip_accents: Option<bool>,
}

impl SpecialVocab {
    pub fn id(&self, kind: &str) -> Option<u32> {
        self.ids.iter().find(|(k, _)| k == kind).map(|(_, v)| *v)
    }
    fn set_id(&mut self, kind: &str, id: Option<u64>, n_vocab: usize) {
        if let Some(id) = id {
            if (id as usize) < n_vocab && self.id(kind).is_none() {
                self.ids.push((kind.to_string(), id as u32));
            }
        }
    }
    fn set_add(&mut self, kind: &str, v: bool) {
        match self.add.iter_mut().find(|(k, _)| k == kind) {
            Some(slot) => slot.1 = v,
            None => self.add.push((kind.to_string(), v)),
        }
    }
    fn add_default(&mut self, kind: &str, v: bool) {
        if !self.add.iter().any(|(k, _)| k == kind) {
            self.add.push((kind.to_string(), v));
        }
    }

    pub fn load(
        dir: &Path,
        tokenizer: Option<&Value>,
        n_vocab: usize,
        load_merges: bool,
    ) -> Result<SpecialVocab> {
        let mut sv = SpecialVocab::default();
        let mut kinds: Vec<&str> = vec!["bos", "eos", "unk", "sep", "pad", "cls", "mask"];
        let config = read_json_opt(&dir.join("tokenizer_config.json"))?;
        let mut declared: HashMap<String, String> = HashMap::new();
        if let Some(c) = &config {
            for kind in &kinds {
                let text = match c.get(format!("{kind}_token")) {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Object(o)) => {
                        o.get("content").and_then(Value::as_str).map(String::from)
                    }
                    _ => None,
                };
                if let Some(t) = text {
                    declared.insert(kind.to_string(), t);
                }
            }
        }
        if load_merges {
            sv.merges = match tokenizer {
                Some(tok) => merges(tok),
                None => merges_txt(dir)?,
            };
        }
        if let Some(tok) = tokenizer {
            if let Some(norm) = tok.get("normalizer") {
                sv.parse_normalizer(norm);
            }
            if config.is_some() {
                // A tokenizer with CLS/SEP but no BOS/EOS uses them as such.
                if !declared.contains_key("bos") {
                    if let Some(c) = declared.get("cls").cloned() {
                        declared.insert("bos".into(), c);
                    }
                }
                if !declared.contains_key("eos") {
                    if let Some(s) = declared.get("sep").cloned() {
                        declared.insert("eos".into(), s);
                    }
                }
            }
            if let Some(pp) = tok.get("post_processor").filter(|v| !v.is_null()) {
                let procs: Vec<&Value> = match pp.get("processors").and_then(Value::as_array) {
                    Some(a) => a.iter().collect(),
                    None => vec![pp],
                };
                for p in procs {
                    match p.get("type").and_then(Value::as_str) {
                        Some("ByteLevel") => {
                            sv.add_default("bos", false);
                            sv.add_default("eos", false);
                        }
                        Some("RobertaProcessing") => {
                            sv.set_add("bos", true);
                            sv.set_add("eos", true);
                            sv.set_add("sep", true);
                        }
                        Some("TemplateProcessing") => sv.template(p, &mut declared, &mut kinds),
                        _ => {}
                    }
                }
            }
        }
        let added = added_tokens(tokenizer);
        if let Some(c) = &config {
            for kind in kinds.clone() {
                if let Some(b) = c.get(format!("add_{kind}_token")).and_then(Value::as_bool) {
                    sv.add_default(kind, b);
                }
                if let Some(text) = declared.get(kind) {
                    let id = added
                        .iter()
                        .find(|(_, s, _)| s == text)
                        .map(|(id, _, _)| *id as u64);
                    sv.set_id(kind, id, n_vocab);
                }
            }
        }
        if let Some(c) = read_json_opt(&dir.join("config.json"))? {
            for kind in &kinds {
                sv.set_id(
                    kind,
                    c.get(format!("{kind}_token_id")).and_then(Value::as_u64),
                    n_vocab,
                );
            }
        }
        Ok(sv)
    }

    fn parse_normalizer(&mut self, n: &Value) {
        match n.get("type").and_then(Value::as_str) {
            Some("Lowercase") => self.lowercase = Some(true),
            Some("StripAccents") => self.strip_accents = Some(true),
            Some("BertNormalizer") => {
                if let Some(v) = n.get("lowercase") {
                    self.lowercase = v.as_bool();
                }
                if let Some(v) = n.get("strip_accents") {
                    self.strip_accents = v.as_bool();
                }
            }
            Some("Sequence") => {
                for m in n
                    .get("normalizers")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.parse_normalizer(m);
                }
            }
            _ => {}
        }
    }

    /// TemplateProcessing: a special token first in the single template
    /// means add-BOS (when it is the BOS or CLS token), one last means
    /// add-EOS; a special token between A and B in the pair template means
    /// add-SEP when nothing closes the single template.
    fn template(
        &mut self,
        p: &Value,
        declared: &mut HashMap<String, String>,
        kinds: &mut Vec<&str>,
    ) {
        let special = |v: &Value| {
            v.get("SpecialToken")
                .and_then(|s| s.get("id"))
                .and_then(Value::as_str)
                .map(String::from)
        };
        let single = p
            .get("single")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let pair = p
            .get("pair")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut first = None;
        let mut last = None;
        if single.len() > 1 {
            first = special(&single[0]);
            if let Some(f) = &first {
                let is_bos = declared.get("bos") == Some(f) || declared.get("cls") == Some(f);
                if !is_bos {
                    declared.entry("bos".into()).or_insert_with(|| f.clone());
                    declared.entry("cls".into()).or_insert_with(|| f.clone());
                }
                let is_bos = declared.get("bos") == Some(f) || declared.get("cls") == Some(f);
                self.set_add("bos", is_bos);
            }
            last = special(&single[single.len() - 1]);
            if let Some(l) = &last {
                if declared.get("eos") != Some(l) {
                    if let Some(old) = declared.get("eos").cloned() {
                        if !kinds.contains(&"eot") {
                            kinds.push("eot");
                            declared.insert("eot".into(), old);
                        }
                    }
                    declared.insert("eos".into(), l.clone());
                }
                self.set_add("eos", true);
            }
        }
        if !pair.is_empty() {
            let start = usize::from(first.is_some() && special(&pair[0]) == first);
            let stop = if last.is_some() && special(&pair[pair.len() - 1]) == last {
                pair.len() - 1
            } else {
                pair.len()
            };
            let mid = &pair[start.min(stop)..stop];
            let seq = |v: &Value| {
                v.get("Sequence")
                    .and_then(|s| s.get("id"))
                    .and_then(Value::as_str)
                    .map(String::from)
            };
            if mid.len() > 2
                && seq(&mid[0]).as_deref() == Some("A")
                && seq(&mid[mid.len() - 1]).as_deref() == Some("B")
            {
                let inner = &mid[1..mid.len() - 1];
                let is_sep = |v: &Value| {
                    special(v).is_some_and(|s| {
                        declared.get("sep") == Some(&s) || declared.get("eos") == Some(&s)
                    })
                };
                let mut add_sep = is_sep(&inner[0]) && last.is_none();
                if inner.len() == 2 && is_sep(&inner[1]) {
                    add_sep = true;
                }
                self.set_add("sep", add_sep);
            }
        }
    }

    /// Write the ids, flags, merges and normalizer keys.
    pub fn write(&self, w: &mut GgufWriter) {
        if !self.merges.is_empty() {
            w.meta_strs("tokenizer.ggml.merges", &self.merges);
        }
        for (kind, id) in &self.ids {
            let key = match kind.as_str() {
                "unk" => "unknown".to_string(),
                "sep" => "seperator".to_string(), // llama.cpp's spelling
                "pad" => "padding".to_string(),
                k => k.to_string(),
            };
            w.meta_u32(&format!("tokenizer.ggml.{key}_token_id"), *id);
        }
        for (kind, v) in &self.add {
            w.meta_bool(&format!("tokenizer.ggml.add_{kind}_token"), *v);
        }
        if let Some(v) = self.lowercase {
            w.meta_bool("tokenizer.ggml.normalizer.lowercase", v);
        }
        if let Some(v) = self.strip_accents {
            w.meta_bool("tokenizer.ggml.normalizer.strip_accents", v);
        }
    }
}

/// BPE merges as "left right" strings; pairs given as lists have their
/// spaces encoded as U+0120, as gguf-py does.
fn merges(tok: &Value) -> Vec<String> {
    let Some(list) = tok
        .get("model")
        .and_then(|m| m.get("merges"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|m| match m {
            Value::String(s) => Some(s.clone()),
            Value::Array(pair) if pair.len() == 2 => {
                let enc = |v: &Value| v.as_str().map(|s| s.replace(' ', "\u{120}"));
                Some(format!("{} {}", enc(&pair[0])?, enc(&pair[1])?))
            }
            _ => None,
        })
        .collect()
}

/// `merges.txt` (GPT-2's original files): one "left right" pair a line,
/// after an optional `#version` line.
fn merges_txt(dir: &Path) -> Result<Vec<String>> {
    let path = dir.join("merges.txt");
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    Ok(text
        .lines()
        .enumerate()
        .filter(|(i, l)| !(*i == 0 && l.starts_with('#')))
        .filter_map(|(_, l)| {
            let mut parts = l.split_whitespace();
            match (parts.next(), parts.next(), parts.next()) {
                (Some(a), Some(b), None) => Some(format!("{a} {b}")),
                _ => None,
            }
        })
        .collect())
}

/// A byte-level BPE tokenizer (GPT-2, SmolLM, Llama 3) as llama.cpp's
/// `gpt2` tokenizer model: tokens, types, merges, special ids. `pre` is the
/// pre-tokenizer name (llama.cpp finds it by hashing a test encoding, which
/// needs the tokenizer library; callers name the family). Returns the
/// token count and the special vocabulary written.
pub fn write_byte_level_bpe(
    dir: &Path,
    w: &mut GgufWriter,
    vocab_size: Option<usize>,
    pre: &str,
    no_bos: bool,
) -> Result<usize> {
    let tok = tokenizer_json(dir)?;
    if let Some(t) = &tok {
        let model_ty = t
            .get("model")
            .and_then(|m| m.get("type"))
            .and_then(Value::as_str);
        if model_ty != Some("BPE") {
            bail!(
                "{}: tokenizer model {} is not imported here (byte-level BPE expected)",
                dir.join("tokenizer.json").display(),
                ssnail_gguf::printable(model_ty.unwrap_or("?"))
            );
        }
    }
    let list = hf_token_list(dir, tok.as_ref(), vocab_size)?;
    let n = list.tokens.len();
    w.meta_str("tokenizer.ggml.model", "gpt2");
    w.meta_str("tokenizer.ggml.pre", pre);
    w.meta_strs("tokenizer.ggml.tokens", &list.tokens);
    w.meta_i32s("tokenizer.ggml.token_type", &list.types);
    let mut special = SpecialVocab::load(dir, tok.as_ref(), n, true)?;
    if special.merges.is_empty() {
        bail!(
            "{}: no BPE merges (tokenizer.json or merges.txt)",
            dir.display()
        );
    }
    if no_bos {
        special.add.retain(|(k, _)| k != "bos");
        special.add.push(("bos".into(), false));
    }
    special.write(w);
    Ok(n)
}

/// `tokenizer.json` if present.
pub fn tokenizer_json(dir: &Path) -> Result<Option<Value>> {
    read_json_opt(&dir.join("tokenizer.json"))
}

/// A SentencePiece model (`tokenizer.model`): pieces, scores and types.
/// Decoded by hand: only three fields of one repeated message are needed
/// (ModelProto.pieces = 1 → piece = 1, score = 2, type = 3), which does not
/// justify a protobuf code generator in the build.
pub fn sentencepiece(path: &Path) -> Result<Vec<(String, f32, i32)>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let bad = || anyhow::anyhow!("{}: not a SentencePiece model", path.display());
    let mut pieces = Vec::new();
    let mut r = ProtoReader { b: &bytes, i: 0 };
    while !r.done() {
        let (field, wire) = r.key().ok_or_else(bad)?;
        if field == 1 && wire == 2 {
            let msg = r.bytes().ok_or_else(bad)?;
            let mut m = ProtoReader { b: msg, i: 0 };
            let (mut piece, mut score, mut ty) = (String::new(), 0.0f32, NORMAL);
            while !m.done() {
                let (f, w) = m.key().ok_or_else(bad)?;
                match (f, w) {
                    (1, 2) => {
                        piece = String::from_utf8_lossy(m.bytes().ok_or_else(bad)?).into_owned()
                    }
                    (2, 5) => score = f32::from_le_bytes(m.fixed::<4>().ok_or_else(bad)?),
                    (3, 0) => ty = m.varint().ok_or_else(bad)? as i32,
                    _ => m.skip(w).ok_or_else(bad)?,
                }
            }
            pieces.push((piece, score, ty));
        } else {
            r.skip(wire).ok_or_else(bad)?;
        }
    }
    if pieces.is_empty() {
        return Err(bad());
    }
    Ok(pieces)
}

struct ProtoReader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> ProtoReader<'a> {
    fn done(&self) -> bool {
        self.i >= self.b.len()
    }
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.i)?;
            self.i += 1;
            v |= ((byte & 0x7f) as u64) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    fn key(&mut self) -> Option<(u64, u64)> {
        let k = self.varint()?;
        Some((k >> 3, k & 7))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.varint()? as usize;
        let s = self.b.get(self.i..self.i.checked_add(n)?)?;
        self.i += n;
        Some(s)
    }
    fn fixed<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.b.get(self.i..self.i + N)?;
        self.i += N;
        s.try_into().ok()
    }
    fn skip(&mut self, wire: u64) -> Option<()> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.fixed::<8>().map(|_| ()),
            2 => self.bytes().map(|_| ()),
            5 => self.fixed::<4>().map(|_| ()),
            _ => None,
        }
    }
}

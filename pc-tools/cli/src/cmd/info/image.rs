//! `ssnail info IMAGE`: what an SSNAIL image holds, read from the image
//! alone: the header, the hyper-parameters the script implies (ATTN
//! parameter blocks, GEMV shapes, norm epsilons), the tokenizer tables, the
//! memory map, the boards it runs on, weight formats per tensor group, the
//! script length and a SHA-256.

use anyhow::{anyhow, Context, Result};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{
    Arch, Header, BASE, HEADER_LEN, HYPERRAM_BOUNDARY, MIB, OUTPUT_AREA, TOKENS, TOKEN_SLOTS,
};
use ssnail_format::isa::{AttnBlock, Instr, Op, ADDR_REL, ATTN_BLOCK_LEN, INSTR_LEN, KV_F16};
use ssnail_format::rd_u32;
use ssnail_format::tokblock::{tb, TokBlock, TokKind, BYTE_TABLE_LEN, TF_LOWERCASE};
use std::collections::BTreeMap;
use std::path::Path;

/// Weights of one role, by format: how many matrices and their bytes.
#[derive(Default)]
struct Group {
    formats: BTreeMap<&'static str, (u32, u64)>,
}

/// Everything `info` says about an image, computed once for text and JSON.
pub struct ImageInfo {
    file: String,
    file_len: u64,
    sha256: String,
    h: Header,
    arch: String,
    layers: u32,
    heads: u32,
    kv_heads: u32,
    head_dim: u32,
    hidden: u32,
    eps: Option<f32>,
    kv_format: &'static str,
    /// (first address, bytes) of the KV caches.
    kv: Option<(u32, u64)>,
    script_len: usize,
    groups: Vec<(&'static str, Group)>,
    tok: Option<TokBlock>,
    vocab_bytes: u64,
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB as f64
}

/// Which boards can hold `need` bytes from $8000000 (§1.9).
fn boards(need: u64) -> (&'static str, Vec<&'static str>) {
    if need <= 8 * MIB {
        (
            "every board: R3 (8 MB of HyperRAM) and R4-R6",
            vec!["R3", "R4-R6"],
        )
    } else if need <= 64 * MIB {
        ("R4-R6 (all in SDRAM); not R3", vec!["R4-R6"])
    } else if need <= 72 * MIB {
        (
            "R4-R6 (SDRAM, then HyperRAM at $C000000); not R3",
            vec!["R4-R6"],
        )
    } else {
        ("no board: more than 72 MB, the emulator only", vec![])
    }
}

/// Read the image and work out what it holds.
pub fn inspect(path: &Path) -> Result<ImageInfo> {
    let name = path.display().to_string();
    let file = std::fs::read(path).with_context(|| format!("{name}: cannot read"))?;
    let h = Header::parse(&file).map_err(|e| anyhow!("{name}: {e}"))?;
    let mem = ssnail_tokenizer::image::image_memory(&file).map_err(|e| anyhow!("{name}: {e}"))?;
    let bad = |what: &str| anyhow!("{name}: {what} lies outside the image");
    // Bounds-checked reads of the image's memory view.
    let at = |addr: u32, len: usize| -> Option<&[u8]> {
        let o = (addr as usize).checked_sub(BASE as usize)?;
        mem.get(o..o.checked_add(len)?)
    };
    let u32_at = |addr: u32| at(addr, 4).map(|b| rd_u32(b, 0));

    // The script: its slots run from $08 to $0C (the data after them).
    let slots = (h.data.saturating_sub(h.code) / INSTR_LEN) as usize;
    let code = at(h.code, slots * INSTR_LEN as usize).ok_or_else(|| bad("the script"))?;
    let instrs: Vec<Instr> = code
        .chunks_exact(INSTR_LEN as usize)
        .map(Instr::decode)
        .collect();
    let script_len = instrs
        .iter()
        .rposition(|i| i.encode() != [0u8; 16])
        .map_or(0, |p| p + 1);

    // Walk the script once, keeping N0/N1/N2 as SETN leaves them.
    let (mut n0, mut n1, mut n2) = (0u32, 0u32, 0u32);
    let mut attn: Vec<AttnBlock> = Vec::new();
    let mut gemvs: Vec<(u8, u32, u32, u32)> = Vec::new(); // format, columns, rows, next SILUMUL's N0
    let mut deqrows: Vec<(u8, u32)> = Vec::new();
    let mut eps = None;
    // (a GEMV right before a SILUMUL, SETNs between, makes its two inputs: llama's gate|up)
    let mut before_silumul = None;
    for i in &instrs[..script_len] {
        if !matches!(i.op(), Some(Op::SetN | Op::SiluMul)) {
            before_silumul = None;
        }
        match i.op() {
            Some(Op::SetN) => (n0, n1, n2) = (i.x, i.y, i.z),
            Some(Op::Gemv) => {
                gemvs.push((i.a, n0, n1, 0));
                before_silumul = Some(gemvs.len() - 1);
            }
            Some(Op::SiluMul) => {
                if let Some(g) = before_silumul.take() {
                    gemvs[g].3 = n0;
                }
            }
            Some(Op::DeqRow) => deqrows.push((i.a, n0)),
            Some(Op::RmsNorm | Op::LayerNorm) => eps = Some(f32::from_bits(n2)),
            Some(Op::Attn) if i.x & ADDR_REL == 0 => {
                let b = at(i.x, ATTN_BLOCK_LEN).ok_or_else(|| bad("an ATTN parameter block"))?;
                attn.push(AttnBlock::decode(b));
            }
            _ => {}
        }
    }
    let first = attn.first().copied();
    let (heads, kv_heads, head_dim) =
        first.map_or((0, 0, 0), |b| (b.n_heads, b.n_kv_heads, b.head_dim));
    let dim = heads * head_dim;
    let kv_dim = kv_heads * head_dim;
    let arch = h.arch();
    // GEMVs by role, from their shapes: the classifier maps to the output
    // vector (decoders), attention maps dim to dim/kv_dim (GPT-2: fused
    // q|k|v, 3·dim), everything else is the feed-forward network.
    let mut groups: Vec<(&'static str, Group)> =
        ["embedding", "attention", "feed-forward", "classifier"]
            .into_iter()
            .map(|n| (n, Group::default()))
            .collect();
    let mut hidden = 0;
    let mut add = |g: usize, fmt: u8, cols: u32, rows: u32| {
        let ty = GgmlType::from_u32(fmt as u32);
        let name = ty.map_or("unknown", |t| t.name());
        let bytes = ty.map_or(0, |t| t.row_bytes(cols as usize) as u64 * rows as u64);
        let e = groups[g].1.formats.entry(name).or_default();
        e.0 += 1;
        e.1 += bytes;
    };
    // One GEMV over two matrices' rows (llama: q|k, gate|up; spec §3.7) counts as the two.
    for &(fmt, cols, rows, silu) in &gemvs {
        let attention_rows =
            rows == dim || rows == kv_dim || (arch == Some(Arch::Gpt2) && rows == 3 * dim);
        let llama = arch == Some(Arch::Llama);
        if !h.is_encoder() && rows == h.out_dim {
            add(3, fmt, cols, rows);
        } else if llama && cols == dim && silu != 0 && rows == 2 * silu {
            hidden = hidden.max(silu);
            add(2, fmt, cols, silu);
            add(2, fmt, cols, silu);
        } else if cols == dim && attention_rows {
            add(1, fmt, cols, rows);
        } else if llama && cols == dim && rows == dim + kv_dim {
            add(1, fmt, cols, dim);
            add(1, fmt, cols, kv_dim);
        } else {
            hidden = hidden.max(if cols == dim { rows } else { cols });
            add(2, fmt, cols, rows);
        }
    }
    // One DEQROW per embedding table the script reads rows of (token,
    // position, token type): their formats; the table sizes are not in the
    // script (rows are reached through address registers).
    for &(fmt, _) in &deqrows {
        let ty = GgmlType::from_u32(fmt as u32);
        let e = groups[0]
            .1
            .formats
            .entry(ty.map_or("unknown", |t| t.name()))
            .or_default();
        e.0 += 1;
    }
    groups.retain(|(_, g)| !g.formats.is_empty());

    let kv = if attn.is_empty() {
        None
    } else {
        let per = h.max_ctx as u64
            * kv_dim as u64
            * if first.is_some_and(|b| b.kv_format == KV_F16) {
                2
            } else {
                4
            };
        let lo = attn
            .iter()
            .flat_map(|b| [b.k_cache, b.v_cache])
            .min()
            .unwrap_or(0);
        Some((lo, per * 2 * attn.len() as u64))
    };
    let tok = if h.tokenizer != 0 {
        Some(TokBlock::decode(
            at(h.tokenizer, tb::LEN).ok_or_else(|| bad("the tokenizer block"))?,
        ))
    } else {
        None
    };
    // offsets[n_vocab] (relative to the table) is where the table ends.
    let vocab_bytes = u32_at(h.vocab.saturating_add(4 * h.n_vocab)).map_or(0, |end| end as u64);
    Ok(ImageInfo {
        file: name,
        file_len: file.len() as u64,
        sha256: Sha256::digest(&file)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        arch: arch.map_or_else(|| format!("unknown ({})", h.arch), |a| a.name().to_string()),
        layers: attn.len() as u32,
        heads,
        kv_heads,
        head_dim,
        hidden,
        eps,
        kv_format: if first.is_some_and(|b| b.kv_format == KV_F16) {
            "F16"
        } else {
            "F32"
        },
        kv,
        script_len,
        groups,
        tok,
        vocab_bytes,
        h,
    })
}

fn tok_kind(t: &TokBlock) -> &'static str {
    match TokKind::from_u8(t.kind) {
        Some(TokKind::Spm) => "SentencePiece",
        Some(TokKind::Bpe) => "byte-level BPE",
        Some(TokKind::WordPiece) => "WordPiece",
        None => "unknown",
    }
}

impl ImageInfo {
    fn need(&self) -> u64 {
        self.h.mem_needed as u64
    }
    fn end(&self) -> u64 {
        BASE as u64 + self.need()
    }

    /// Where $C000000 (HyperRAM on R4-R6) falls in this image's memory.
    fn boundary(&self) -> String {
        let b = HYPERRAM_BOUNDARY as u64;
        let h = &self.h;
        if self.end() <= b {
            "$C000000 is past the end: on R4-R6 everything is in SDRAM".into()
        } else if b < h.data as u64 {
            "$C000000 falls in the script or tokenizer tables (not a valid layout)".into()
        } else if b < h.scratch as u64 {
            "$C000000 falls in the weights: the tensors from there on stream from HyperRAM".into()
        } else {
            "$C000000 falls in scratch: activations or KV cache in HyperRAM, weights in SDRAM"
                .into()
        }
    }

    pub fn text(&self) -> String {
        let h = &self.h;
        let mut o = Vec::new();
        o.push(format!(
            "{}: SSNAIL image v1, {} bytes, SHA-256 {}",
            self.file, self.file_len, self.sha256
        ));
        o.push(format!("description: {}", h.description()));
        o.push(format!(
            "header: flags ${:04X}{}, script ${:07X}, data ${:07X}, vocab ${:07X}, tokenizer ${:07X}, payload {} bytes at ${:07X}, scratch ${:07X}, output ${:07X}, needs {} bytes",
            h.flags,
            if h.is_encoder() { " (encoder)" } else { "" },
            h.code,
            h.data,
            h.vocab,
            h.tokenizer,
            h.payload_len,
            h.payload_address(),
            h.scratch,
            h.output,
            h.mem_needed
        ));
        o.push(format!(
            "architecture {} {} ({}), {} layers, dim {}, {} heads ({} kv, head_dim {}), hidden {}, vocab {}, context {}{}",
            self.arch,
            if h.is_encoder() { "encoder" } else { "decoder" },
            if h.is_encoder() { format!("{}-float embedding", h.out_dim) } else { format!("{} logits", h.out_dim) },
            self.layers,
            self.heads * self.head_dim,
            self.heads,
            self.kv_heads,
            self.head_dim,
            self.hidden,
            h.n_vocab,
            h.max_ctx,
            self.eps.map_or(String::new(), |e| format!(", eps {e:e}")),
        ));
        if !h.is_encoder() {
            o.push(format!(
                "tokens: BOS {}, EOS {}",
                h.bos as i32, h.eos as i32
            ));
        }
        match &self.tok {
            Some(t) => o.push(format!(
                "tokenizer: {}{}, vocab table {} bytes, sorted index {} entries, priority table {} bytes, byte table {} bytes",
                tok_kind(t),
                if t.flags & TF_LOWERCASE != 0 { " (lowercased)" } else { "" },
                self.vocab_bytes,
                t.index_len,
                t.priority_len(),
                if t.byte_table != 0 { BYTE_TABLE_LEN } else { 0 },
            )),
            None => o.push("tokenizer: none (header $78 is 0)".into()),
        }
        o.push(format!(
            "script: {} instructions at ${:07X}",
            self.script_len, h.code
        ));
        o.push("weights:".into());
        for (role, g) in &self.groups {
            let parts: Vec<String> = g
                .formats
                .iter()
                .map(|(f, (n, bytes))| {
                    if *bytes > 0 {
                        format!("{n} x {f} ({:.2} MB)", mib(*bytes))
                    } else {
                        format!("{n} x {f}")
                    }
                })
                .collect();
            o.push(format!("  {role:<13} {}", parts.join(", ")));
        }
        o.push("memory map (SSNAIL addresses):".into());
        // (address, line), sorted by address.
        let mut map: Vec<(u64, String)> = h
            .segments()
            .iter()
            .map(|s| {
                (
                    s.address as u64,
                    format!(
                        "  ${:07X}-${:07X}  file bytes {}-{}{}",
                        s.address,
                        s.address as u64 + s.len - 1,
                        s.file_offset,
                        s.file_offset + s.len - 1,
                        if s.file_offset == 0 {
                            " (header and runtime block)"
                        } else {
                            " (payload: script, tables, weights)"
                        }
                    ),
                )
            })
            .collect();
        map.push((
            h.output as u64,
            format!(
                "  ${:07X}-${:07X}  output vector, {} floats",
                h.output,
                h.output as u64 + 4 * h.out_dim as u64 - 1,
                h.out_dim
            ),
        ));
        map.push((
            TOKENS as u64,
            format!(
                "  ${TOKENS:07X}-${:07X}  token buffer ({} slots)",
                TOKENS + 4 * TOKEN_SLOTS - 1,
                TOKEN_SLOTS
            ),
        ));
        map.push((
            h.data as u64,
            format!(
                "  ${:07X}            end of the script slots: tables, then weights (header $0C)",
                h.data
            ),
        ));
        map.push((
            h.scratch as u64,
            format!(
                "  ${:07X}-${:07X}  scratch (not in the file): activations{}",
                h.scratch,
                self.end() - 1,
                match self.kv {
                    Some((at, bytes)) => format!(
                        ", KV cache {:.2} MB ({}) from ${at:07X}",
                        mib(bytes),
                        self.kv_format
                    ),
                    None => String::new(),
                }
            ),
        ));
        map.sort_by_key(|(a, _)| *a);
        o.extend(map.into_iter().map(|(_, l)| l));
        o.push(format!("  {}", self.boundary()));
        o.push(format!(
            "memory needed: {:.2} MB (to ${:07X}); runs on {}",
            mib(self.need()),
            self.end(),
            boards(self.need()).0
        ));
        o.join("\n") + "\n"
    }

    pub fn json(&self) -> Value {
        let h = &self.h;
        let groups: serde_json::Map<String, Value> = self
            .groups
            .iter()
            .map(|(role, g)| {
                let f: serde_json::Map<String, Value> = g
                    .formats
                    .iter()
                    .map(|(f, (n, b))| (f.to_string(), json!({"matrices": n, "bytes": b})))
                    .collect();
                (role.to_string(), Value::Object(f))
            })
            .collect();
        json!({
            "kind": "ssnail-image",
            "file": self.file,
            "file_bytes": self.file_len,
            "sha256": self.sha256,
            "description": h.description(),
            "header": {
                "version": 1,
                "flags": h.flags,
                "code": h.code,
                "data": h.data,
                "scratch": h.scratch,
                "tokens": h.tokens,
                "vocab": h.vocab,
                "n_vocab": h.n_vocab,
                "max_ctx": h.max_ctx,
                "bos": h.bos,
                "eos": h.eos,
                "payload_len": h.payload_len,
                "output": h.output,
                "out_dim": h.out_dim,
                "mem_needed": h.mem_needed,
                "arch": h.arch,
                "load_base": h.load_base,
                "tokenizer": h.tokenizer,
            },
            "architecture": self.arch,
            "encoder": h.is_encoder(),
            "hyper_parameters": {
                "layers": self.layers,
                "dim": self.heads * self.head_dim,
                "heads": self.heads,
                "kv_heads": self.kv_heads,
                "head_dim": self.head_dim,
                "hidden": self.hidden,
                "vocab": h.n_vocab,
                "context": h.max_ctx,
                "eps": self.eps,
                "output_len": h.out_dim,
            },
            "tokens": {"bos": h.bos as i32, "eos": h.eos as i32},
            "tokenizer": self.tok.map(|t| json!({
                "kind": tok_kind(&t),
                "lowercase": t.flags & TF_LOWERCASE != 0,
                "vocab_table_bytes": self.vocab_bytes,
                "index_entries": t.index_len,
                "priority_table_bytes": t.priority_len(),
                "byte_table_bytes": if t.byte_table != 0 { BYTE_TABLE_LEN } else { 0 },
                "begin": t.begin as i32, "end": t.end as i32, "unk": t.unk as i32,
            })),
            "script": {"address": h.code, "instructions": self.script_len},
            "weights": groups,
            "memory": {
                "segments": h.segments().iter().map(|s| json!({
                    "file_offset": s.file_offset, "address": s.address, "bytes": s.len
                })).collect::<Vec<_>>(),
                "header": BASE,
                "output": h.output,
                "output_area": OUTPUT_AREA,
                "tokens": TOKENS,
                "payload": h.payload_address(),
                "payload_bytes": h.payload_len,
                "weights": h.data,
                "scratch": h.scratch,
                "end": self.end(),
                "needed_bytes": self.need(),
                "kv_cache": self.kv.map(|(at, b)| json!({"address": at, "bytes": b, "format": self.kv_format})),
                "hyperram_boundary": self.boundary(),
            },
            "boards": boards(self.need()).1,
            "header_bytes": HEADER_LEN,
        })
    }
}

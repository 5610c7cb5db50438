//! GGUF → SSNAIL image converter (spec §1–§4).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let g = ssnail_gguf::Gguf::open("model.gguf")?;
//! let opts = ssnail_convert::Options { mem_mb: 64.0, ..Default::default() };
//! let out = ssnail_convert::convert(&g, &opts)?;
//! std::fs::write("model.ssnail", &out.image)?;
//! for line in out.report.lines() { println!("{line}"); }
//! # Ok(()) }
//! ```
//!
//! Conversion is two steps so that a caller can ask before doing the work:
//! [`plan`] chooses formats, lays out the payload, allocates scratch and
//! emits the script (cheap: no tensor is touched); [`Plan::build`] encodes
//! the tensors in parallel and returns the image bytes.

pub mod layout;
pub mod model;
pub mod report;
pub mod script;

use layout::{Content, Layout, Scratch};
use model::{Hparams, Tensors};
use rayon::prelude::*;
use script::{Common, DecoderScratch, W};
use ssnail_format::dequant::{can_dequantize, dequantize};
use ssnail_format::ggml::{quantize_native, GgmlType};
use ssnail_format::image::{
    Arch, Header, ADDRESS_END, BASE, FLAG_ENCODER, HEADER_LEN, HYPERRAM_BOUNDARY, MAX_CTX, MIB,
    OUTPUT_AREA, OUTPUT_AREA_LEN, PAYLOAD_BASE, TOKENS,
};
use ssnail_format::isa::{AttnBlock, Instr, INSTR_LEN, KV_F16, KV_F32};
use ssnail_gguf::{Gguf, TensorInfo};
use ssnail_tokenizer::{ImageTables, Vocab};

pub use report::Report;

/// `--wtype`: how matrices are stored (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Native formats unchanged; others repacked to the fallback.
    Keep,
    /// keep, then q8_0, then mixed, then q4_0: the first that fits.
    Auto,
    /// Embedding and classifier Q4_0, every other matrix Q8_0.
    Mixed,
    /// Every matrix in this native format.
    All(GgmlType),
}

impl Policy {
    pub fn parse(s: &str) -> Option<Policy> {
        match s.to_ascii_lowercase().as_str() {
            "keep" => Some(Policy::Keep),
            "auto" => Some(Policy::Auto),
            "mixed" => Some(Policy::Mixed),
            other => GgmlType::from_name(other)
                .filter(|t| t.is_native())
                .map(Policy::All),
        }
    }
    /// The `--wtype` spelling.
    pub fn name(self) -> String {
        match self {
            Policy::Keep => "keep".into(),
            Policy::Auto => "auto".into(),
            Policy::Mixed => "mixed".into(),
            Policy::All(t) => t.name().to_ascii_lowercase(),
        }
    }
    /// One-line description for the `auto:` report line.
    pub fn description(self, fallback: GgmlType) -> String {
        match self {
            Policy::Keep => format!("the GGUF's own formats, others as {}", fallback.name()),
            Policy::Auto => "the first policy that fits".into(),
            Policy::Mixed => "Q4_0 embedding and classifier, Q8_0 elsewhere".into(),
            Policy::All(t) => format!(
                "every matrix {}, {} bits per weight",
                t.name(),
                t.bits_per_weight()
            ),
        }
    }
}

/// Conversion options (the `convert` command line).
#[derive(Clone, Debug)]
pub struct Options {
    /// Context / KV capacity; None = the default of §1.9.
    pub ctx: Option<u32>,
    pub policy: Policy,
    /// Format for non-native tensors under `keep` (a native format).
    pub fallback: GgmlType,
    /// F16 KV cache (default) or F32.
    pub kv_f16: bool,
    /// Memory size in MiB (8, 64, 72, or any value up to 128).
    pub mem_mb: f64,
    /// Specialty recorded in the description (`--type`).
    pub type_name: String,
    /// The SDRAM/HyperRAM boundary no blob may straddle ($C000000; tests move it).
    pub boundary: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            ctx: None,
            policy: Policy::Keep,
            fallback: GgmlType::Q8_0,
            kv_f16: true,
            mem_mb: 8.0,
            type_name: "General".into(),
            boundary: HYPERRAM_BOUNDARY,
        }
    }
}

/// Largest memory size: SSNAIL's 28-bit address space from $8000000.
pub const MAX_MEM_MB: f64 = ((ADDRESS_END - BASE as u64) / MIB) as f64;
/// Largest size a MEGA65 board has (R4–R6: SDRAM then HyperRAM).
pub const BOARD_MAX_MB: f64 = 72.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The GGUF is unreadable, unsupported or malformed.
    Model,
    /// Options that cannot work (context, memory size, formats).
    Options,
    /// The image does not fit the memory size.
    TooBig,
    /// A bug: a layout rule the converter itself broke.
    Internal,
}

/// A conversion failure; `msg` names the file and the problem. Only
/// `TooBig` messages have more than one line (the suggestions of §1.11).
#[derive(Clone, Debug)]
pub struct ConvertError {
    pub kind: ErrorKind,
    pub msg: String,
}

impl ConvertError {
    pub fn model(g: &Gguf, msg: impl std::fmt::Display) -> ConvertError {
        ConvertError {
            kind: ErrorKind::Model,
            msg: format!("{}: {msg}", g.path.display()),
        }
    }
    fn options(g: &Gguf, msg: impl std::fmt::Display) -> ConvertError {
        ConvertError {
            kind: ErrorKind::Options,
            msg: format!("{}: {msg}", g.path.display()),
        }
    }
    fn internal(msg: impl std::fmt::Display) -> ConvertError {
        ConvertError {
            kind: ErrorKind::Internal,
            msg: format!("internal error: {msg}"),
        }
    }
}

impl std::fmt::Display for ConvertError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for ConvertError {}

/// How one tensor is stored.
#[derive(Clone, Debug)]
pub struct Stored {
    pub name: String,
    pub src: GgmlType,
    pub dst: GgmlType,
    pub bytes: usize,
    pub elements: u64,
    /// A matrix (≥ 2-D); vectors are always F32.
    pub matrix: bool,
    /// Why it is not in the format the policy asked for, if it is not.
    pub instead: Option<String>,
}

impl Stored {
    pub fn repacked(&self) -> bool {
        self.src != self.dst
    }
    /// Lost bits (§4.3): a non-float source stored with fewer bits per weight.
    pub fn lossy(&self) -> bool {
        !self.src.is_float() && self.dst.bits_per_weight() < self.src.bits_per_weight()
    }
}

/// A laid-out image, ready to build.
pub struct Plan<'a> {
    pub g: &'a Gguf,
    pub hp: Hparams,
    /// The policy actually used (never `Auto`).
    pub policy: Policy,
    /// Set when `auto` chose `policy`.
    pub auto: bool,
    pub opts: Options,
    pub ctx: u32,
    pub header: Header,
    pub script: Vec<Instr>,
    pub stored: Vec<Stored>,
    pub layout: Layout<'a>,
    pub tables: ImageTables,
    /// `H_MEM_NEEDED` as a u64 (may exceed the address space before the check).
    pub mem_needed: u64,
}

/// The result of a conversion.
pub struct Converted {
    /// The image file: header then payload.
    pub image: Vec<u8>,
    pub header: Header,
    pub report: Report,
}

/// Plan and build in one call (no consent step: `auto` picks and builds).
pub fn convert(g: &Gguf, opts: &Options) -> Result<Converted, ConvertError> {
    Ok(plan(g, opts)?.build(&|_| {}))
}

/// Choose formats, lay out the payload and emit the script. Fails with
/// `TooBig` (and the §1.11 suggestions) if the image does not fit.
pub fn plan<'a>(g: &'a Gguf, opts: &Options) -> Result<Plan<'a>, ConvertError> {
    if !(opts.mem_mb >= 0.0 && opts.mem_mb <= MAX_MEM_MB) {
        return Err(ConvertError::options(
            g,
            format!(
                "--mem-mb {} is beyond SSNAIL's address space ({MAX_MEM_MB} MB from $8000000, 28-bit addresses)",
                report::fmt_mb(opts.mem_mb)
            ),
        ));
    }
    if !opts.fallback.is_native() {
        return Err(ConvertError::options(
            g,
            format!(
                "--fallback {} is not a format SSNAIL executes",
                opts.fallback.name()
            ),
        ));
    }
    let hp = Hparams::read(g)?;
    let vocab = Vocab::from_gguf(g).map_err(|e| ConvertError {
        kind: ErrorKind::Model,
        msg: e.to_string(),
    })?;
    let ctx = match opts.ctx {
        Some(c) => c,
        None if hp.arch.is_encoder() => hp.context_length.min(128),
        None => hp.context_length.min(256),
    };
    if ctx == 0 {
        return Err(ConvertError::options(
            g,
            "context 0: at least one position is needed",
        ));
    }
    if ctx > MAX_CTX {
        return Err(ConvertError::options(
            g,
            format!("context {ctx} is too large: the token buffer holds {MAX_CTX} tokens (--ctx {MAX_CTX} at most)"),
        ));
    }
    if hp.arch.is_encoder() && 4 * hp.dim as u64 > OUTPUT_AREA_LEN as u64 {
        return Err(ConvertError::model(
            g,
            format!(
                "dimension {} is too large for the {}-float output area",
                hp.dim,
                OUTPUT_AREA_LEN / 4
            ),
        ));
    }
    let tables = ImageTables::build(&vocab);
    let candidates: Vec<Policy> = match opts.policy {
        Policy::Auto => vec![
            Policy::Keep,
            Policy::All(GgmlType::Q8_0),
            Policy::Mixed,
            Policy::All(GgmlType::Q4_0),
        ],
        p => vec![p],
    };
    let mut last = None;
    for p in candidates {
        let plan = lay_out(g, &hp, &vocab, &tables, opts, p, ctx)?;
        if plan.mem_needed <= (opts.mem_mb * MIB as f64) as u64 {
            return Ok(Plan {
                auto: opts.policy == Policy::Auto,
                ..plan
            });
        }
        last = Some(plan);
    }
    let last = last.expect("at least one policy tried");
    Err(ConvertError {
        kind: ErrorKind::TooBig,
        msg: report::too_big(g, opts, &last),
    })
}

/// The format the policy asks for and the one used (F16 when the row is not
/// whole blocks of the asked format), with the reason.
fn choose(
    g: &Gguf,
    t: &TensorInfo,
    policy: Policy,
    fallback: GgmlType,
) -> Result<(GgmlType, Option<String>), ConvertError> {
    let (_, cols) = t.rows_cols();
    let asked = match policy {
        Policy::Keep if t.ty.is_native() => t.ty,
        Policy::Keep => fallback,
        Policy::Mixed if matches!(t.name.as_str(), "token_embd.weight" | "output.weight") => {
            GgmlType::Q4_0
        }
        Policy::Mixed => GgmlType::Q8_0,
        Policy::All(f) => f,
        Policy::Auto => unreachable!("auto is resolved before formats are chosen"),
    };
    let (dst, why) = if cols % asked.block_len() != 0 {
        (
            GgmlType::F16,
            Some(format!(
                "stored as F16 instead of {}: rows of {cols} are not a multiple of its {}-element block",
                asked.name(),
                asked.block_len()
            )),
        )
    } else {
        (asked, None)
    };
    if dst != t.ty {
        if !can_dequantize(t.ty) {
            return Err(ConvertError::model(
                g,
                format!(
                    "tensor {} has type {}, which the converter cannot read",
                    t.name,
                    t.ty.name()
                ),
            ));
        }
        if cols % t.ty.block_len() != 0 {
            return Err(ConvertError::model(
                g,
                format!(
                    "tensor {}: rows of {cols} are not whole {} blocks",
                    t.name,
                    t.ty.name()
                ),
            ));
        }
    }
    Ok((dst, why))
}

/// Builds one policy's layout: blobs in §1.8 order, scratch, script, header.
struct Builder<'a, 'o> {
    g: &'a Gguf,
    opts: &'o Options,
    policy: Policy,
    lay: Layout<'a>,
    stored: Vec<Stored>,
}

impl<'a, 'o> Builder<'a, 'o> {
    fn matrix(&mut self, t: &'a TensorInfo) -> Result<W, ConvertError> {
        let (dst, instead) = choose(self.g, t, self.policy, self.opts.fallback)?;
        let (rows, cols) = t.rows_cols();
        let row_bytes = dst.row_bytes(cols);
        let len = rows * row_bytes;
        let addr = self.lay.place(&t.name, len, Content::Matrix { t, dst });
        self.stored.push(Stored {
            name: t.name.clone(),
            src: t.ty,
            dst,
            bytes: len,
            elements: t.n_elements(),
            matrix: true,
            instead,
        });
        Ok(W {
            addr,
            fmt: dst as u8,
            row_bytes: row_bytes as u32,
        })
    }

    /// 1-D tensors as f32, back to back (e.g. gain then bias).
    fn vectors(&mut self, ts: &[&'a TensorInfo]) -> Result<u32, ConvertError> {
        let mut len = 0;
        for t in ts {
            if t.ty != GgmlType::F32 && !can_dequantize(t.ty) {
                return Err(ConvertError::model(
                    self.g,
                    format!(
                        "tensor {} has type {}, which the converter cannot read",
                        t.name,
                        t.ty.name()
                    ),
                ));
            }
            len += 4 * t.n_elements() as usize;
            self.stored.push(Stored {
                name: t.name.clone(),
                src: t.ty,
                dst: GgmlType::F32,
                bytes: 4 * t.n_elements() as usize,
                elements: t.n_elements(),
                matrix: false,
                instead: None,
            });
        }
        let name = ts
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join("+");
        Ok(self.lay.place(&name, len, Content::Vectors(ts.to_vec())))
    }

    fn bytes(&mut self, name: &str, b: Vec<u8>) -> u32 {
        let len = b.len();
        self.lay.place(name, len, Content::Bytes(b))
    }
}

/// The script, unless the layout already runs past the 28-bit address
/// space (such a plan only serves the too-big message, and address
/// arithmetic in the script could overflow).
fn emit_within_address_space(scratch_end: u64, emit: impl FnOnce() -> Vec<Instr>) -> Vec<Instr> {
    if scratch_end <= ADDRESS_END {
        emit()
    } else {
        Vec::new()
    }
}

/// RoPE table (§3.6) into `out`: ctx rows of head_dim/2 (cos, sin) pairs,
/// θ = p·base^(−2j/head_dim) in double precision, stored as f32.
fn rope_table(head_dim: u32, base: f64, out: &mut [u8]) {
    let half = (head_dim / 2) as usize;
    for (p, row) in out.chunks_exact_mut(8 * half).enumerate() {
        for (j, pair) in row.chunks_exact_mut(8).enumerate() {
            let theta = p as f64 * base.powf(-2.0 * j as f64 / head_dim as f64);
            pair[..4].copy_from_slice(&(theta.cos() as f32).to_le_bytes());
            pair[4..].copy_from_slice(&(theta.sin() as f32).to_le_bytes());
        }
    }
}

fn lay_out<'a>(
    g: &'a Gguf,
    hp: &Hparams,
    vocab: &Vocab,
    tables: &ImageTables,
    opts: &Options,
    policy: Policy,
    ctx: u32,
) -> Result<Plan<'a>, ConvertError> {
    let tn = Tensors { g };
    let mut b = Builder {
        g,
        opts,
        policy,
        lay: Layout::new(opts.boundary),
        stored: Vec::new(),
    };
    let slots = 64 + 64 * hp.n_layers as usize;
    let code = b.lay.script_area(slots * INSTR_LEN as usize);

    // CPU-read tables, then the block with their addresses.
    let vocab_addr = b.bytes("vocab table", tables.vocab_table.clone());
    let mut block = tables.block;
    block.index = b.bytes("sorted index", tables.index.clone());
    block.priority = b.bytes("priority table", tables.priority.clone());
    block.byte_table = b.bytes("byte table", tables.byte_table.clone());
    let tokenizer = b.bytes("tokenizer block", block.encode().to_vec());
    if b.lay.end() > opts.boundary as u64 {
        return Err(ConvertError::internal(format!(
            "tokenizer tables end at ${:X}, above the ${:X} boundary",
            b.lay.end(),
            opts.boundary
        )));
    }

    let (dim, hidden, l) = (hp.dim, hp.hidden, hp.n_layers);
    let esz: u64 = if opts.kv_f16 { 2 } else { 4 };
    let kv_format = if opts.kv_f16 { KV_F16 } else { KV_F32 };
    let common = |base| Common {
        base,
        ctx,
        dim,
        hidden,
        eps_bits: hp.eps.to_bits(),
        kv_f16: opts.kv_f16,
    };
    let blk = |i: u32, s: &str| format!("blk.{i}.{s}");
    let check_positions = |t: &TensorInfo| -> Result<(), ConvertError> {
        let rows = t.rows_cols().0 as u32;
        if rows < ctx {
            return Err(ConvertError::options(
                g,
                format!("context {ctx} is longer than the {rows} positions of {} (--ctx {rows} at most)", t.name),
            ));
        }
        Ok(())
    };
    let mut attn_blocks = Vec::new();
    let script;
    let output;
    let out_dim;
    let scratch_end;

    match hp.arch {
        Arch::Llama => {
            let (hd, kvd) = (hp.head_dim, hp.kv_dim);
            let embd = b.matrix(tn.get("token_embd.weight", dim, Some(hp.vocab_rows))?)?;
            let mut layers = Vec::new();
            for i in 0..l {
                let an = b.vectors(&[tn.get(&blk(i, "attn_norm.weight"), dim, None)?])?;
                let fnm = b.vectors(&[tn.get(&blk(i, "ffn_norm.weight"), dim, None)?])?;
                let mut w = Vec::new();
                for (name, cols, rows) in [
                    ("attn_q.weight", dim, dim),
                    ("attn_k.weight", dim, kvd),
                    ("attn_v.weight", dim, kvd),
                    ("attn_output.weight", dim, dim),
                    ("ffn_gate.weight", dim, hidden),
                    ("ffn_up.weight", dim, hidden),
                    ("ffn_down.weight", hidden, dim),
                ] {
                    w.push(b.matrix(tn.get(&blk(i, name), cols, Some(rows))?)?);
                }
                let w: [W; 7] = w.try_into().expect("seven matrices");
                layers.push(([an, fnm], w));
            }
            let output_norm = b.vectors(&[tn.get("output_norm.weight", dim, None)?])?;
            let classifier = match tn.optional("output.weight", dim, Some(hp.vocab_rows))? {
                Some(t) => b.matrix(t)?,
                None => embd,
            };
            let rope = b.lay.place(
                "rope table",
                ctx as usize * hd as usize * 4,
                Content::Rope {
                    ctx,
                    head_dim: hd,
                    base: hp.rope_base,
                },
            );
            for _ in 0..l {
                attn_blocks.push(b.bytes("attention block", vec![0; 32]));
            }
            let mut s = Scratch::new(PAYLOAD_BASE as u64 + b.lay.payload_len());
            let sc = DecoderScratch {
                x: s.alloc(4 * dim as u64),
                xb: s.alloc(4 * dim as u64),
                q: s.alloc(4 * dim as u64),
                att: s.alloc(4 * dim as u64),
                kscr: s.alloc(4 * kvd as u64),
                hb: s.alloc(4 * hidden as u64),
                logits: 0,
            };
            let hb2 = s.alloc(4 * hidden as u64);
            let sc = DecoderScratch {
                logits: s.alloc(4 * hp.vocab_rows as u64),
                ..sc
            };
            let kc: Vec<u32> = (0..l)
                .map(|_| s.alloc(esz * ctx as u64 * kvd as u64))
                .collect();
            let vc: Vec<u32> = (0..l)
                .map(|_| s.alloc(esz * ctx as u64 * kvd as u64))
                .collect();
            scratch_end = s.end();
            let m = script::Llama {
                c: common(code),
                eos: vocab.eos_id.unwrap_or(2),
                head_dim: hd,
                kv_dim: kvd,
                vocab: hp.vocab_rows,
                embd,
                layers: layers
                    .iter()
                    .enumerate()
                    .map(|(i, (norms, w))| script::LlamaLayer {
                        attn_norm: norms[0],
                        ffn_norm: norms[1],
                        wq: w[0],
                        wk: w[1],
                        wv: w[2],
                        wo: w[3],
                        w1: w[4],
                        w3: w[5],
                        w2: w[6],
                        attn_block: attn_blocks[i],
                        k_cache: kc[i],
                        v_cache: vc[i],
                    })
                    .collect(),
                output_norm,
                classifier,
                rope,
                s: sc,
                hb2,
            };
            for i in 0..l as usize {
                let ab = AttnBlock {
                    k_cache: kc[i],
                    v_cache: vc[i],
                    n_heads: hp.n_heads,
                    n_kv_heads: hp.n_kv_heads,
                    head_dim: hd,
                    kv_format,
                };
                b.lay.set_bytes(attn_blocks[i], ab.encode().to_vec());
            }
            script = emit_within_address_space(scratch_end, || script::llama(&m));
            output = sc.logits;
            out_dim = hp.vocab_rows;
        }
        Arch::Gpt2 => {
            let wte = b.matrix(tn.get("token_embd.weight", dim, Some(hp.vocab_rows))?)?;
            let pe = tn.table("position_embd.weight", dim)?;
            check_positions(pe)?;
            let wpe = b.matrix(pe)?;
            let mut layers = Vec::new();
            for i in 0..l {
                let ln1 = b.vectors(&[
                    tn.get(&blk(i, "attn_norm.weight"), dim, None)?,
                    tn.get(&blk(i, "attn_norm.bias"), dim, None)?,
                ])?;
                let ln2 = b.vectors(&[
                    tn.get(&blk(i, "ffn_norm.weight"), dim, None)?,
                    tn.get(&blk(i, "ffn_norm.bias"), dim, None)?,
                ])?;
                let qkv = b.matrix(tn.get(&blk(i, "attn_qkv.weight"), dim, Some(3 * dim))?)?;
                let qkv_bias = b.vectors(&[tn.get(&blk(i, "attn_qkv.bias"), 3 * dim, None)?])?;
                let wo = b.matrix(tn.get(&blk(i, "attn_output.weight"), dim, Some(dim))?)?;
                let bo = b.vectors(&[tn.get(&blk(i, "attn_output.bias"), dim, None)?])?;
                let wup = b.matrix(tn.get(&blk(i, "ffn_up.weight"), dim, Some(hidden))?)?;
                let bup = b.vectors(&[tn.get(&blk(i, "ffn_up.bias"), hidden, None)?])?;
                let wdn = b.matrix(tn.get(&blk(i, "ffn_down.weight"), hidden, Some(dim))?)?;
                let bdn = b.vectors(&[tn.get(&blk(i, "ffn_down.bias"), dim, None)?])?;
                layers.push(script::Gpt2Layer {
                    ln1,
                    ln2,
                    qkv,
                    qkv_bias,
                    wo,
                    bo,
                    wup,
                    bup,
                    wdn,
                    bdn,
                    attn_block: 0,
                    k_cache: 0,
                    v_cache: 0,
                });
            }
            let lnf = b.vectors(&[
                tn.get("output_norm.weight", dim, None)?,
                tn.get("output_norm.bias", dim, None)?,
            ])?;
            let classifier = match tn.optional("output.weight", dim, Some(hp.vocab_rows))? {
                Some(t) => b.matrix(t)?,
                None => wte,
            };
            for _ in 0..l {
                attn_blocks.push(b.bytes("attention block", vec![0; 32]));
            }
            let mut s = Scratch::new(PAYLOAD_BASE as u64 + b.lay.payload_len());
            let d4 = 4 * dim as u64;
            let (x, xb, q, att, tmp, kscr, vscr) = (
                s.alloc(d4),
                s.alloc(d4),
                s.alloc(d4),
                s.alloc(d4),
                s.alloc(d4),
                s.alloc(d4),
                s.alloc(d4),
            );
            let hb = s.alloc(4 * hidden as u64);
            let logits = s.alloc(4 * hp.vocab_rows as u64);
            let kc: Vec<u32> = (0..l)
                .map(|_| s.alloc(esz * ctx as u64 * dim as u64))
                .collect();
            let vc: Vec<u32> = (0..l)
                .map(|_| s.alloc(esz * ctx as u64 * dim as u64))
                .collect();
            scratch_end = s.end();
            for (i, ly) in layers.iter_mut().enumerate() {
                ly.attn_block = attn_blocks[i];
                ly.k_cache = kc[i];
                ly.v_cache = vc[i];
                let ab = AttnBlock {
                    k_cache: kc[i],
                    v_cache: vc[i],
                    n_heads: hp.n_heads,
                    n_kv_heads: hp.n_heads,
                    head_dim: hp.head_dim,
                    kv_format,
                };
                b.lay.set_bytes(attn_blocks[i], ab.encode().to_vec());
            }
            let m = script::Gpt2 {
                c: common(code),
                eos: vocab.eos_id.unwrap_or(50256),
                vocab: hp.vocab_rows,
                wte,
                wpe,
                layers,
                lnf,
                classifier,
                s: DecoderScratch {
                    x,
                    xb,
                    q,
                    att,
                    kscr,
                    hb,
                    logits,
                },
                tmp,
                vscr,
            };
            script = emit_within_address_space(scratch_end, || script::gpt2(&m));
            output = logits;
            out_dim = hp.vocab_rows;
        }
        Arch::Bert => {
            let tok_embd = b.matrix(tn.get("token_embd.weight", dim, Some(hp.vocab_rows))?)?;
            let pe = tn.table("position_embd.weight", dim)?;
            check_positions(pe)?;
            let pos_embd = b.matrix(pe)?;
            let token_types = match g.tensor("token_types.weight") {
                Some(_) => Some(b.matrix(tn.table("token_types.weight", dim)?)?),
                None => None,
            };
            let embd_norm = b.vectors(&[
                tn.get("token_embd_norm.weight", dim, None)?,
                tn.get("token_embd_norm.bias", dim, None)?,
            ])?;
            let mut layers = Vec::new();
            for i in 0..l {
                let wb = |b: &mut Builder<'a, '_>,
                          n: &str,
                          cols,
                          rows|
                 -> Result<(W, u32), ConvertError> {
                    let w =
                        b.matrix(tn.get(&blk(i, &format!("{n}.weight")), cols, Some(rows))?)?;
                    let bias =
                        b.vectors(&[tn.get(&blk(i, &format!("{n}.bias")), rows, None)?])?;
                    Ok((w, bias))
                };
                let (wq, bq) = wb(&mut b, "attn_q", dim, dim)?;
                let (wk, bk) = wb(&mut b, "attn_k", dim, dim)?;
                let (wv, bv) = wb(&mut b, "attn_v", dim, dim)?;
                let (wo, bo) = wb(&mut b, "attn_output", dim, dim)?;
                let ln_attn = b.vectors(&[
                    tn.get(&blk(i, "attn_output_norm.weight"), dim, None)?,
                    tn.get(&blk(i, "attn_output_norm.bias"), dim, None)?,
                ])?;
                let (wup, bup) = wb(&mut b, "ffn_up", dim, hidden)?;
                let (wdn, bdn) = wb(&mut b, "ffn_down", hidden, dim)?;
                let ln_out = b.vectors(&[
                    tn.get(&blk(i, "layer_output_norm.weight"), dim, None)?,
                    tn.get(&blk(i, "layer_output_norm.bias"), dim, None)?,
                ])?;
                layers.push(script::BertLayer {
                    wq,
                    bq,
                    wk,
                    bk,
                    wv,
                    bv,
                    wo,
                    bo,
                    ln_attn,
                    wup,
                    bup,
                    wdn,
                    bdn,
                    ln_out,
                    attn_block: 0,
                });
            }
            for _ in 0..l {
                attn_blocks.push(b.bytes("attention block", vec![0; 32]));
            }
            let mut s = Scratch::new(PAYLOAD_BASE as u64 + b.lay.payload_len());
            let d4 = 4 * dim as u64;
            let rows = ctx as u64 * dim as u64;
            let (xs, qs, k, v) = (
                s.alloc(4 * rows),
                s.alloc(4 * rows),
                s.alloc(esz * rows),
                s.alloc(esz * rows),
            );
            let (att, tmp, kscr, vscr) = (s.alloc(d4), s.alloc(d4), s.alloc(d4), s.alloc(d4));
            let hb = s.alloc(4 * hidden as u64);
            scratch_end = s.end();
            for (i, ly) in layers.iter_mut().enumerate() {
                ly.attn_block = attn_blocks[i];
                let ab = AttnBlock {
                    k_cache: k,
                    v_cache: v,
                    n_heads: hp.n_heads,
                    n_kv_heads: hp.n_heads,
                    head_dim: hp.head_dim,
                    kv_format,
                };
                b.lay.set_bytes(attn_blocks[i], ab.encode().to_vec());
            }
            let m = script::Bert {
                c: common(code),
                tok_embd,
                pos_embd,
                token_types,
                embd_norm,
                layers,
                pooling: hp.pooling,
                xs,
                qs,
                k,
                v,
                att,
                tmp,
                kscr,
                vscr,
                hb,
            };
            script = emit_within_address_space(scratch_end, || script::bert(&m));
            output = OUTPUT_AREA;
            out_dim = dim;
        }
    }

    if script.len() > slots {
        return Err(ConvertError::internal(format!(
            "script of {} instructions exceeds its {slots} slots",
            script.len()
        )));
    }
    let code_bytes: Vec<u8> = script
        .iter()
        .flat_map(|i| i.encode())
        .chain(std::iter::repeat(0))
        .take(slots * INSTR_LEN as usize)
        .collect();
    b.lay.set_bytes(code, code_bytes);

    let payload_len = b.lay.payload_len();
    let mem_needed = scratch_end - BASE as u64;
    let desc = match g.get_str("general.name").filter(|n| !n.is_empty()) {
        Some(n) => format!("{n} ({}) [{}]", hp.arch.name(), opts.type_name),
        None => format!(
            "{} {}d {}L {}H [{}]",
            hp.arch.name(),
            hp.dim,
            hp.n_layers,
            hp.n_heads,
            opts.type_name
        ),
    };
    let sat = |v: u64| v.min(u32::MAX as u64) as u32;
    let header = Header {
        flags: if hp.arch.is_encoder() {
            FLAG_ENCODER
        } else {
            0
        },
        code,
        data: code + slots as u32 * INSTR_LEN,
        scratch: sat(PAYLOAD_BASE as u64 + payload_len),
        tokens: TOKENS,
        vocab: vocab_addr,
        n_vocab: vocab.n_vocab() as u32,
        max_ctx: ctx,
        bos: vocab.header_bos(),
        eos: vocab.header_eos(),
        payload_len: sat(payload_len),
        output,
        out_dim,
        mem_needed: sat(mem_needed),
        arch: hp.arch as u32,
        load_base: PAYLOAD_BASE,
        host_base: 0,
        host_len: 0,
        tokenizer,
        desc: desc.into_bytes(),
    };
    Ok(Plan {
        g,
        hp: hp.clone(),
        policy,
        auto: false,
        opts: opts.clone(),
        ctx,
        header,
        script,
        stored: b.stored,
        layout: b.lay,
        tables: tables.clone(),
        mem_needed,
    })
}

/// Rows encoded per parallel work item.
const ROWS_PER_TASK: usize = 64;

fn encode_matrix(
    g: &Gguf,
    t: &TensorInfo,
    dst: GgmlType,
    out: &mut [u8],
    progress: &(dyn Fn(u64) + Sync),
) {
    let src = g.data(t);
    if t.ty == dst {
        out.copy_from_slice(src);
        progress(out.len() as u64);
        return;
    }
    let (_, cols) = t.rows_cols();
    let (src_rb, dst_rb) = (t.ty.row_bytes(cols), dst.row_bytes(cols));
    out.par_chunks_mut(dst_rb * ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, chunk)| {
            let mut f = vec![0f32; cols];
            let mut q = Vec::with_capacity(dst_rb);
            for (r, o) in chunk.chunks_exact_mut(dst_rb).enumerate() {
                let row = i * ROWS_PER_TASK + r;
                let ok = dequantize(t.ty, &src[row * src_rb..(row + 1) * src_rb], &mut f);
                debug_assert!(ok, "types were checked when planned");
                q.clear();
                quantize_native(dst, &f, &mut q);
                o.copy_from_slice(&q);
            }
            progress(chunk.len() as u64);
        });
}

fn encode_vectors(g: &Gguf, ts: &[&TensorInfo], out: &mut [u8]) {
    let mut off = 0;
    for t in ts {
        let n = t.n_elements() as usize;
        let mut f = vec![0f32; n];
        let ok = dequantize(t.ty, g.data(t), &mut f);
        debug_assert!(ok, "types were checked when planned");
        for (i, v) in f.iter().enumerate() {
            out[off + 4 * i..off + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        off += 4 * n;
    }
}

impl<'a> Plan<'a> {
    /// Total bytes of stored tensors (for a progress bar).
    pub fn weight_bytes(&self) -> u64 {
        self.stored
            .iter()
            .filter(|s| s.matrix)
            .map(|s| s.bytes as u64)
            .sum()
    }

    /// Encode every tensor (in parallel) and assemble the image.
    /// `progress` receives byte counts of matrices as they are done.
    pub fn build(self, progress: &(dyn Fn(u64) + Sync)) -> Converted {
        let payload_len = self.header.payload_len as usize;
        let mut image = vec![0u8; HEADER_LEN + payload_len];
        image[..HEADER_LEN].copy_from_slice(&self.header.to_bytes());
        // Split the payload into one disjoint slice per blob (blobs are in
        // address order), then fill them in parallel.
        let mut rest: &mut [u8] = &mut image[HEADER_LEN..];
        let mut at = PAYLOAD_BASE as usize;
        let mut jobs = Vec::with_capacity(self.layout.blobs.len());
        for blob in &self.layout.blobs {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(blob.addr as usize - at);
            let (mine, tail) = tail.split_at_mut(blob.len);
            jobs.push((blob, mine));
            rest = tail;
            at = blob.addr as usize + blob.len;
        }
        let g = self.g;
        jobs.into_par_iter()
            .for_each(|(blob, out)| match &blob.content {
                Content::Bytes(b) => out.copy_from_slice(b),
                Content::Matrix { t, dst } => encode_matrix(g, t, *dst, out, progress),
                Content::Vectors(ts) => encode_vectors(g, ts, out),
                Content::Rope { head_dim, base, .. } => rope_table(*head_dim, *base, out),
            });
        let report = Report::new(&self);
        Converted {
            image,
            header: self.header,
            report,
        }
    }
}

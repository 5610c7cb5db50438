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
//!
//! Modules: `model` reads hyper-parameters and checks tensors, `chat`
//! renders the chat template into the chat block (§2.6), `arch` lays
//! out each architecture and chooses formats, `layout` places blobs and
//! scratch, `script` emits §3.7, `encode` fills the payload, `report` holds
//! the §1.11 texts.

mod arch;
pub mod chat;
mod encode;
pub mod layout;
pub mod model;
pub mod report;
pub mod script;

use arch::Builder;
use layout::Layout;
use model::Hparams;
use ssnail_format::chatblock::ChatBlock;
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{
    Arch, Header, ADDRESS_END, BASE, FLAG_ENCODER, HYPERRAM_BOUNDARY, MAX_CTX, MIB,
    OUTPUT_AREA_LEN, PAYLOAD_BASE, TOKENS,
};
use ssnail_format::isa::{Instr, INSTR_LEN};
use ssnail_gguf::Gguf;
use ssnail_tokenizer::{GgufTokenizer, ImageTables, Vocab};

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

/// `--core`: the SSNAIL core an image is made for (§4.4). The FPGA core
/// streams every native format at the memory's speed; the software core on
/// the 45GS02 spends about 37-42 cycles a Q8_0 weight, 41-46 a Q4_0 one and
/// 194-297 an F16, BF16 or F32 one, so its images hold block formats only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Core {
    /// Today's images: `auto` keeps the GGUF's formats when they fit.
    #[default]
    Fpga,
    /// Q8_0 (Q4_0 where needed to fit) for every matrix, llama FFNs whose
    /// hidden size is not whole blocks padded with zeros, a classifier that
    /// is a copy of the embedding stored once.
    Soft,
}

impl Core {
    pub fn parse(s: &str) -> Option<Core> {
        match s.to_ascii_lowercase().as_str() {
            "fpga" => Some(Core::Fpga),
            "soft" => Some(Core::Soft),
            _ => None,
        }
    }
    /// The `--core` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Core::Fpga => "fpga",
            Core::Soft => "soft",
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
    /// Whose words the advice uses: command-line flags or make variables.
    pub interface: Interface,
    /// Store the GGUF's chat template as a chat block (§2.6); false: `--no-template`.
    pub chat_template: bool,
    /// The core the image is made for (`--core`, §4.4).
    pub core: Core,
    /// The answer defaults hosts take for this image (header $58, §1.4): 0 = theirs.
    pub answer: u32,
    /// Decoders: the script computes the logits (and runs ARGMAX) at every prompt position too
    /// (`--all-logits`, §3.7); false: only where a token is predicted.
    pub all_logits: bool,
}

/// Who is converting, so that advice names what that user types:
/// `--wtype q4_0` on the command line, `WTYPE=q4_0` under make (the
/// Makefile sets `SSNAIL_ADVICE=make`, see [`Interface::from_env`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Interface {
    #[default]
    Cli,
    Make,
}

impl Interface {
    /// `SSNAIL_ADVICE=make` (exported by the Makefile) selects make's words.
    pub fn from_env() -> Interface {
        match std::env::var("SSNAIL_ADVICE").as_deref() {
            Ok("make") => Interface::Make,
            _ => Interface::Cli,
        }
    }
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
            interface: Interface::Cli,
            chat_template: true,
            core: Core::Fpga,
            answer: 0,
            all_logits: false,
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
    /// A converter bug, still naming the file it happened on.
    fn internal(g: &Gguf, msg: impl std::fmt::Display) -> ConvertError {
        ConvertError {
            kind: ErrorKind::Internal,
            msg: format!("{}: internal error: {msg}", g.path.display()),
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
    /// The chat block, or why the GGUF's template gave none (None: no template).
    pub chat: Option<Result<ChatBlock, String>>,
    /// `H_MEM_NEEDED` as a u64 (may exceed the address space before the check).
    pub mem_needed: u64,
    /// What the layout did beyond the policy (padding, a classifier stored
    /// once), one report line each.
    pub notes: Vec<String>,
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

/// The order `auto` tries for the FPGA core (§4.3): the first that fits wins.
pub const AUTO_ORDER: [Policy; 4] = [
    Policy::Keep,
    Policy::All(GgmlType::Q8_0),
    Policy::Mixed,
    Policy::All(GgmlType::Q4_0),
];

/// The order `auto` tries for `core` (§4.3, §4.4). The software core gets
/// `keep` only when every matrix of the GGUF is already Q8_0 or Q4_0 (its
/// fast formats), then Q8_0, mixed, Q4_0.
pub fn auto_order(g: &Gguf, core: Core) -> Vec<Policy> {
    match core {
        Core::Fpga => AUTO_ORDER.to_vec(),
        Core::Soft => {
            let all_blocks = g
                .tensors
                .iter()
                .filter(|t| t.shape.iter().filter(|&&d| d > 1).count() >= 2)
                .all(|t| matches!(t.ty, GgmlType::Q8_0 | GgmlType::Q4_0));
            let mut v = Vec::new();
            if all_blocks {
                v.push(Policy::Keep);
            }
            v.extend(AUTO_ORDER[1..].iter().copied());
            v
        }
    }
}

/// Choose formats, lay out the payload and emit the script. Fails with
/// `TooBig` (and suggestions computed by [`Sizer`]) if the image does not fit.
pub fn plan<'a>(g: &'a Gguf, opts: &Options) -> Result<Plan<'a>, ConvertError> {
    let s = Sizer::new(g, opts)?;
    let ctx = s.default_ctx();
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
    let candidates: Vec<Policy> = match opts.policy {
        Policy::Auto => auto_order(g, opts.core),
        p => vec![p],
    };
    let mut last = None;
    for p in candidates {
        let plan = s.lay_out(p, ctx)?;
        if plan.mem_needed <= mib(opts.mem_mb) {
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
        msg: report::too_big(&s, &last),
    })
}

/// The settings that convert `g` without a question: `opts` when they fit (with the policy `auto`
/// picked named, so lossy formats need no consent), else the first larger memory size the
/// too-big advice names (§1.11): the smallest board size above `opts.mem_mb` where a policy
/// fits at the default context (the asked policy first, then `auto`'s order), else the memory
/// size the emulator needs (at most [`MAX_MEM_MB`]). `ssnail run -m model.gguf` converts with
/// these; the error of `plan` when nothing fits.
pub fn advised(g: &Gguf, opts: &Options) -> Result<Options, ConvertError> {
    let err = match plan(g, opts) {
        Ok(p) => {
            return Ok(Options {
                policy: p.policy,
                ctx: Some(p.ctx),
                ..opts.clone()
            })
        }
        Err(e) if e.kind == ErrorKind::TooBig => e,
        Err(e) => return Err(e),
    };
    let s = Sizer::new(g, opts)?;
    let ctx = s.default_ctx();
    let mut order: Vec<Policy> = match opts.policy {
        Policy::Auto => vec![],
        p => vec![p],
    };
    let rest: Vec<Policy> = AUTO_ORDER
        .into_iter()
        .filter(|p| !order.contains(p))
        .collect();
    order.extend(rest);
    let best = |mem: f64| {
        order.iter().find_map(|&p| {
            s.need(p, ctx)
                .ok()
                .filter(|n| *n <= mib(mem))
                .map(|n| (p, n))
        })
    };
    let sizes = report::BOARDS.into_iter().filter(|b| *b > opts.mem_mb);
    let pick = sizes
        .filter_map(|b| best(b).map(|(p, _)| (p, b)))
        .next()
        .or_else(|| {
            best(MAX_MEM_MB).map(|(p, n)| (p, (n as f64 / MIB as f64).ceil().min(MAX_MEM_MB)))
        });
    match pick {
        Some((policy, mem_mb)) => Ok(Options {
            policy,
            ctx: Some(ctx),
            mem_mb,
            ..opts.clone()
        }),
        None => Err(err),
    }
}

/// A memory size in MiB as bytes (the limit is exact, §1.9).
pub fn mib(mem_mb: f64) -> u64 {
    (mem_mb * MIB as f64) as u64
}

/// Lays a model out with any policy and context, using the converter's own
/// layout code: the one place sizes are computed, for [`plan`] and for the
/// advice when something does not fit (no estimates).
pub struct Sizer<'a> {
    pub g: &'a Gguf,
    pub opts: Options,
    pub hp: Hparams,
    vocab: Vocab,
    tables: ImageTables,
    chat: Option<Result<ChatBlock, String>>,
}

impl<'a> Sizer<'a> {
    /// Check the options and read the model once.
    pub fn new(g: &'a Gguf, opts: &Options) -> Result<Sizer<'a>, ConvertError> {
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
        let chat = match g.get_str("tokenizer.chat_template") {
            Some(t) if opts.chat_template && !hp.arch.is_encoder() => {
                Some(GgufTokenizer::new(vocab.clone()).and_then(|tok| chat::block(t, &tok)))
            }
            _ => None,
        };
        Ok(Sizer {
            g,
            opts: opts.clone(),
            hp,
            vocab,
            tables,
            chat,
        })
    }

    /// `--ctx`, or the default of §1.9.
    pub fn default_ctx(&self) -> u32 {
        match self.opts.ctx {
            Some(c) => c,
            None if self.hp.arch.is_encoder() => self.hp.context_length.min(128),
            None => self.hp.context_length.min(256),
        }
    }

    /// The image plan for `policy` (never `Auto`) and `ctx`.
    pub fn lay_out(&self, policy: Policy, ctx: u32) -> Result<Plan<'a>, ConvertError> {
        lay_out(self, policy, ctx)
    }

    /// Bytes of memory from $8000000 the image needs (header $38).
    pub fn need(&self, policy: Policy, ctx: u32) -> Result<u64, ConvertError> {
        Ok(self.lay_out(policy, ctx)?.mem_needed)
    }

    /// The largest context in 1..=`below`-1 with which `policy` fits in
    /// `limit` bytes (the need grows with the context: KV cache, RoPE table).
    pub fn max_ctx(&self, policy: Policy, below: u32, limit: u64) -> Option<u32> {
        let fits = |c: u32| self.need(policy, c).is_ok_and(|n| n <= limit);
        if below <= 1 || !fits(1) {
            return None;
        }
        let (mut lo, mut hi) = (1u32, below - 1); // fits(lo); find the largest
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo)
    }
}

/// One policy's image plan: script area, tokenizer tables, the
/// architecture's blobs and scratch (arch.rs), then the header.
fn lay_out<'a>(s: &Sizer<'a>, policy: Policy, ctx: u32) -> Result<Plan<'a>, ConvertError> {
    let (g, hp, vocab, tables, opts) = (s.g, &s.hp, &s.vocab, &s.tables, &s.opts);
    let chat = s.chat.as_ref();
    let mut b = Builder {
        g,
        opts,
        policy,
        lay: Layout::new(opts.boundary),
        stored: Vec::new(),
        hp,
        ctx,
        eos: vocab.eos_id,
        notes: Vec::new(),
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
    // The chat block is CPU-read too (§2.6); images without one keep their old layout.
    let chat_addr = match chat {
        Some(Ok(c)) => {
            let bytes = c
                .encode()
                .map_err(|e| ConvertError::internal(g, format!("chat block: {e}")))?;
            b.bytes("chat block", bytes)
        }
        _ => 0,
    };
    if b.lay.end() > opts.boundary as u64 {
        return Err(ConvertError::internal(
            g,
            format!(
                "tokenizer tables end at ${:X}, above the ${:X} boundary",
                b.lay.end(),
                opts.boundary
            ),
        ));
    }

    let arch::ArchOut {
        script,
        output,
        out_dim,
        scratch_end,
    } = match hp.arch {
        Arch::Llama => arch::llama(&mut b, code)?,
        Arch::Gpt2 => arch::gpt2(&mut b, code)?,
        Arch::Bert => arch::bert(&mut b, code)?,
    };

    if script.len() > slots {
        return Err(ConvertError::internal(
            g,
            format!(
                "script of {} instructions exceeds its {slots} slots",
                script.len()
            ),
        ));
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
        chat: chat_addr,
        answer: opts.answer,
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
        chat: chat.cloned(),
        mem_needed,
        notes: b.notes,
    })
}

//! The texts of §1.11 and §4.3: conversion report, too-big message, lossy
//! warning.

use crate::{auto_order, mib, Interface, Plan, Policy, Sizer, Stored, BOARD_MAX_MB, MAX_MEM_MB};
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{size_description, BASE, MIB, PAYLOAD_BASE, TOKENS};
use ssnail_gguf::Gguf;

/// A memory size as typed: "8", "1.5".
pub fn fmt_mb(mb: f64) -> String {
    if mb.fract() == 0.0 {
        format!("{}", mb as i64)
    } else {
        format!("{mb}")
    }
}

/// File name without directory and `.gguf`.
pub fn stem(g: &Gguf) -> String {
    let name = g
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(".gguf").unwrap_or(&name).to_string()
}

/// What a conversion did, as printed after it.
#[derive(Clone, Debug)]
pub struct Report {
    pub policy: Policy,
    pub auto: bool,
    pub stored: Vec<Stored>,
    lines: Vec<String>,
}

impl Report {
    pub fn new(p: &Plan) -> Report {
        let hp = &p.hp;
        let h = &p.header;
        let mut out = Vec::new();
        if p.auto {
            out.push(format!(
                "auto: using --wtype {} ({}){}",
                p.policy.name(),
                p.policy.description(p.opts.fallback),
                if p.opts.core == crate::Core::Soft {
                    ", for the software core"
                } else {
                    ""
                }
            ));
        }
        out.push(format!(
            "{}: dim {}, {} layers, {} heads ({} kv), hidden {}, vocab {}, ctx {}",
            hp.arch.name(),
            hp.dim,
            hp.n_layers,
            hp.n_heads,
            hp.n_kv_heads,
            hp.hidden,
            hp.vocab_rows,
            p.ctx
        ));
        let total: usize = p.stored.iter().map(|s| s.bytes).sum();
        let repacked: Vec<&Stored> = p.stored.iter().filter(|s| s.repacked()).collect();
        out.push(format!(
            "weights {:.2} MB in {} tensors, {} repacked",
            total as f64 / 1e6,
            p.stored.len(),
            repacked.len()
        ));
        let width = p.stored.iter().map(|s| s.name.len()).max().unwrap_or(0);
        let line = |s: &Stored| {
            format!(
                "  {:<width$} {} -> {} {} bytes{}",
                s.name,
                s.src.name(),
                s.dst.name(),
                s.bytes,
                if s.repacked() { " (repacked)" } else { "" }
            )
        };
        let first: Vec<&Stored> = p.stored.iter().take(2).collect();
        let extra: Vec<&Stored> = repacked
            .iter()
            .filter(|s| !first.iter().any(|x| x.name == s.name))
            .take(4)
            .copied()
            .collect();
        let shown = first.into_iter().chain(extra);
        out.extend(shown.map(line));
        if repacked.len() > 4 {
            out.push(format!("  ... and {} more repacked", repacked.len() - 4));
        }
        for s in p.stored.iter().filter(|s| s.instead.is_some()) {
            out.push(format!(
                "  {}: {}",
                s.name,
                s.instead.as_deref().unwrap_or_default()
            ));
        }
        for n in &p.notes {
            out.push(format!("  {n}"));
        }
        if !p.auto {
            let lossy: Vec<&Stored> = p.stored.iter().filter(|s| s.lossy()).collect();
            if !lossy.is_empty() {
                out.push(format!(
                    "note: {} tensors lost precision ({})",
                    lossy.len(),
                    conversions(&lossy)
                ));
            }
        }
        out.push(format!(
            "script: {} instructions at ${:07X}",
            p.script.len(),
            h.code
        ));
        out.push(format!(
            "payload ${:07X}-${:07X}, scratch to ${:07X}, tokens at ${:07X}",
            PAYLOAD_BASE,
            h.scratch,
            BASE as u64 + p.mem_needed,
            TOKENS
        ));
        let mb = p.opts.mem_mb;
        out.push(format!(
            "memory used to ${:07X} with {}-token context ({} MB: {})",
            BASE as u64 + p.mem_needed,
            p.ctx,
            fmt_mb(mb),
            size_description(mb)
        ));
        if mb > BOARD_MAX_MB && p.mem_needed > (BOARD_MAX_MB * MIB as f64) as u64 {
            out.push(format!(
                "note: this image needs {:.2} MB, more than any MEGA65 board has ({} MB): it runs only in the emulator",
                p.mem_needed as f64 / MIB as f64,
                fmt_mb(BOARD_MAX_MB)
            ));
        }
        out.push(format!(
            "tokenizer: {:.1} KB of encode tables",
            p.tables.encode_tables_kb()
        ));
        match &p.chat {
            Some(Ok(c)) => out.push(format!(
                "chat template: {} ({} + {} tokens around the first line, {} + {} around the others; a reply ends with {} tokens)",
                c.name,
                c.first.len(),
                c.suffix.len(),
                c.prefix.len(),
                c.suffix.len(),
                c.end.len()
            )),
            Some(Err(why)) => out.push(format!(
                "warning: no chat block: {why}; lines are plain continuations"
            )),
            None => {}
        }
        Report {
            policy: p.policy,
            auto: p.auto,
            stored: p.stored.clone(),
            lines: out,
        }
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Tensors that lost bits.
    pub fn lossy(&self) -> Vec<&Stored> {
        self.stored.iter().filter(|s| s.lossy()).collect()
    }
}

/// "Q8_0 -> Q4_0, Q6_K -> Q4_0": the distinct conversions of `ts`.
fn conversions(ts: &[&Stored]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for s in ts {
        let c = format!("{} -> {}", s.src.name(), s.dst.name());
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    seen.join(", ")
}

/// Names of options in the words of the interface in use.
struct Say<'a> {
    ui: Interface,
    /// The GGUF path without `.gguf`, as make's `$*` (for `make foo.64mb.chat`).
    target: &'a str,
}

impl Say<'_> {
    fn wtype(&self, p: Policy) -> String {
        match self.ui {
            Interface::Cli => format!("--wtype {}", p.name()),
            Interface::Make => format!("WTYPE={}", p.name()),
        }
    }
    fn ctx(&self, c: u32) -> String {
        match self.ui {
            Interface::Cli => format!("--ctx {c}"),
            Interface::Make => format!("CONTEXT_WINDOW={c}"),
        }
    }
    /// A memory size; under make the board sizes also have their own targets.
    fn mem(&self, mb: f64) -> String {
        match self.ui {
            Interface::Cli => format!("--mem-mb {}", fmt_mb(mb)),
            Interface::Make if [8.0, 64.0, 72.0].contains(&mb) => format!(
                "ATTICRAM={} (or make {}.{}mb.chat)",
                fmt_mb(mb),
                self.target,
                fmt_mb(mb)
            ),
            Interface::Make => format!("ATTICRAM={}", fmt_mb(mb)),
        }
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.2} MB", bytes as f64 / MIB as f64)
}

/// The memory sizes of the boards, smallest first (§1.9).
pub(crate) const BOARDS: [f64; 3] = [8.0, 64.0, 72.0];

/// The too-big message: what was asked and what it needs, then only
/// alternatives that the converter's layout code says fit (other formats,
/// a shorter context, larger memory sizes), in the words of the interface;
/// and plainly when no board can run the model at all.
pub fn too_big(s: &Sizer, last: &Plan) -> String {
    let g = s.g;
    let opts = &s.opts;
    let size = opts.mem_mb;
    let limit = mib(size);
    let target = g.path.to_string_lossy();
    let say = Say {
        ui: opts.interface,
        target: target.strip_suffix(".gguf").unwrap_or(&target),
    };
    let ctx = last.ctx;
    let need = |p: Policy, c: u32| s.need(p, c).ok();
    // The policy loses bits on this model (§4.3), so auto would ask before using it.
    let lossy = |p: Policy| {
        s.lay_out(p, ctx)
            .is_ok_and(|plan| plan.stored.iter().any(|t| t.lossy()))
    };
    // Policies in order of preference: what was asked, then auto's order.
    let auto_policies = auto_order(g, opts.core);
    let asked: Vec<Policy> = match opts.policy {
        Policy::Auto => auto_policies.clone(),
        p => vec![p],
    };
    let mut order = asked.clone();
    order.extend(auto_policies.iter().filter(|p| !asked.contains(p)));
    // The first policy (in order) that fits `bytes` at `ctx`.
    let best = |bytes: u64, c: u32| {
        order
            .iter()
            .find_map(|&p| need(p, c).filter(|n| *n <= bytes).map(|n| (p, n)))
    };

    let mut out = vec![format!(
        "{} does not fit in {} MB{}{}",
        stem(g),
        fmt_mb(size),
        if opts.policy == Policy::Auto {
            " even with Q4_0 weights"
        } else {
            ""
        },
        if size == 8.0 {
            " (the size that works on every board)."
        } else {
            "."
        }
    )];
    out.push(format!(
        "  it needs {} with {} and a {}-token context; the limit is {} MB",
        mb(last.mem_needed),
        say.wtype(last.policy),
        ctx,
        fmt_mb(size)
    ));

    // 1. The same memory size: another weight format, else a shorter context.
    let here: Vec<(Policy, u64)> = order
        .iter()
        .filter(|p| !asked.contains(p))
        .filter_map(|&p| need(p, ctx).filter(|n| *n <= limit).map(|n| (p, n)))
        .collect();
    if !here.is_empty() {
        out.push(format!(
            "In {} MB with the {ctx}-token context, these weight formats fit:",
            fmt_mb(size)
        ));
        for (p, n) in &here {
            out.push(format!("  {} ({})", say.wtype(*p), mb(*n)));
        }
        let auto = auto_policies
            .iter()
            .find(|p| need(**p, ctx).is_some_and(|n| n <= limit));
        if let Some(p) = auto {
            out.push(format!(
                "  or {}, which picks {} here",
                say.wtype(Policy::Auto),
                p.name()
            ));
        }
    } else {
        // The longest context per policy, listed only when it is longer than
        // what a preferred policy allows.
        let mut longest = 0;
        let mut shorter = Vec::new();
        for &p in &order {
            if let Some(c) = s.max_ctx(p, ctx, limit).filter(|c| *c > longest) {
                longest = c;
                let n = need(p, c).unwrap_or(0);
                let opt = if asked.contains(&p) && !(opts.policy == Policy::Auto && lossy(p)) {
                    say.ctx(c)
                } else {
                    format!("{} {}", say.ctx(c), say.wtype(p))
                };
                shorter.push(format!("  {opt} ({} with {})", mb(n), p.name()));
            }
        }
        if !shorter.is_empty() {
            out.push(format!("In {} MB, a shorter context fits:", fmt_mb(size)));
            out.extend(shorter);
        }
    }

    // Options to type for a policy: its --wtype only when it differs from
    // what was asked (under auto, auto picks it by itself), or when auto would
    // pick a lossy one: auto asks first, and the advice must work as typed.
    let with = |first: String, p: Policy| {
        if asked.contains(&p) && !(opts.policy == Policy::Auto && lossy(p)) {
            first
        } else {
            format!("{first} {}", say.wtype(p))
        }
    };

    // 2. Larger memory sizes of real boards, each with the best policy that
    //    fits there (a size is listed only if it allows a better policy).
    let mut bigger = Vec::new();
    let mut prev: Option<Policy> = None;
    for b in BOARDS.into_iter().filter(|b| *b > size) {
        if let Some((p, n)) = best(mib(b), ctx) {
            if prev != Some(p) {
                bigger.push(format!(
                    "  {} ({} with {}; {})",
                    with(say.mem(b), p),
                    mb(n),
                    p.name(),
                    size_description(b)
                ));
                prev = Some(p);
            }
        }
    }
    if !bigger.is_empty() {
        out.push("A larger memory size fits:".into());
        out.extend(bigger);
    }

    // 3. Beyond every board: the emulator's size, and what would fit a board.
    let board_max = mib(BOARD_MAX_MB);
    if best(board_max, ctx).is_none() {
        if let Some((p, n)) = best(mib(MAX_MEM_MB), ctx) {
            let m = (n as f64 / MIB as f64).ceil().min(MAX_MEM_MB);
            if n > limit && mib(m) >= n {
                out.push(format!(
                    "More memory than any MEGA65 board has runs in the emulator only ({}):",
                    match say.ui {
                        Interface::Cli => "ssnail run / ssnail chat".to_string(),
                        Interface::Make => format!("make {}.run / .chat", say.target),
                    }
                ));
                out.push(format!(
                    "  {} ({} with {})",
                    with(say.mem(m), p),
                    mb(n),
                    p.name()
                ));
            }
        }
        let fits_a_board = order
            .iter()
            .any(|&p| s.max_ctx(p, ctx + 1, board_max).is_some());
        if !fits_a_board {
            out.extend(nothing_fits(s, &say));
        }
    }
    out.join("\n")
}

/// Said when no policy fits 72 MB even with a 1-token context: the need at
/// the smallest settings, and how many weights a board could hold.
fn nothing_fits(s: &Sizer, say: &Say) -> Vec<String> {
    let q4 = Policy::All(GgmlType::Q4_0);
    let Ok(p) = s.lay_out(q4, 1) else {
        return vec![];
    };
    let matrices: u64 = p
        .stored
        .iter()
        .filter(|t| t.matrix)
        .map(|t| t.bytes as u64)
        .sum();
    let weights: u64 = p
        .stored
        .iter()
        .filter(|t| t.matrix)
        .map(|t| t.elements)
        .sum();
    let rest = p.mem_needed.saturating_sub(matrices);
    let room = mib(BOARD_MAX_MB).saturating_sub(rest);
    // Q4_0: 18 bytes per 32 weights.
    let holds = room as f64 * 32.0 / 18.0;
    vec![
        format!(
            "No MEGA65 board can run {}: even {} with a 1-token context needs {}, more than the {} MB of an R4-R6 (SDRAM then HyperRAM).",
            stem(s.g),
            say.wtype(q4),
            mb(p.mem_needed),
            fmt_mb(BOARD_MAX_MB)
        ),
        format!(
            "  A smaller model would: {} MB holds about {:.0} million Q4_0 weights besides this model's other {}; {} has {:.0} million.",
            fmt_mb(BOARD_MAX_MB),
            holds / 1e6,
            mb(rest),
            stem(s.g),
            weights as f64 / 1e6
        ),
    ]
}

/// What to type to accept the lossy formats `auto` picked without being asked: `--wtype q4_0`
/// (`WTYPE=q4_0` under make).
pub fn accept_lossy(g: &Gguf, p: &Plan) -> String {
    let target = g.path.to_string_lossy();
    Say {
        ui: p.opts.interface,
        target: target.strip_suffix(".gguf").unwrap_or(&target),
    }
    .wtype(p.policy)
}

/// The warning `auto` prints before asking to accept lossy tensors (§4.3).
/// Larger memory sizes are suggested only where a lossless policy fits
/// (laid out, not estimated).
pub fn lossy_warning(g: &Gguf, p: &Plan) -> Option<String> {
    let lossy: Vec<&Stored> = p.stored.iter().filter(|s| s.lossy()).collect();
    if lossy.is_empty() {
        return None;
    }
    let all: u64 = p
        .stored
        .iter()
        .filter(|s| s.matrix)
        .map(|s| s.elements)
        .sum();
    let lost: u64 = lossy.iter().map(|s| s.elements).sum();
    let pct = 100.0 * lost as f64 / all.max(1) as f64;
    let dst: Vec<&str> = {
        let mut v: Vec<&str> = lossy.iter().map(|s| s.dst.name()).collect();
        v.dedup();
        v
    };
    let target = g.path.to_string_lossy();
    let say = Say {
        ui: p.opts.interface,
        target: target.strip_suffix(".gguf").unwrap_or(&target),
    };
    // The smallest board size above this one where some policy loses nothing.
    let lossless = Sizer::new(g, &p.opts).ok().and_then(|s| {
        BOARDS
            .into_iter()
            .filter(|b| *b > p.opts.mem_mb)
            .find_map(|b| {
                auto_order(g, p.opts.core).into_iter().find_map(|pol| {
                    let plan = s.lay_out(pol, p.ctx).ok()?;
                    (plan.mem_needed <= mib(b) && !plan.stored.iter().any(|t| t.lossy()))
                        .then_some((b, pol))
                })
            })
    });
    let larger = match lossless {
        Some((b, pol)) => format!(
            "a larger memory size ({}: {} without loss, {}), ",
            say.mem(b),
            pol.name(),
            size_description(b)
        ),
        None => String::new(),
    };
    Some(
        [
            format!(
                "WARNING: {} fits in {} MB only as {}, which loses precision on {pct:.1}% of the weights ({}).",
                stem(g),
                fmt_mb(p.opts.mem_mb),
                say.wtype(p.policy),
                conversions(&lossy)
            ),
            format!(
                "  Better: {larger}a GGUF already in {}, or an F16/F32 GGUF.",
                dst.join("/")
            ),
            format!(
                "  To accept without being asked: {}.",
                say.wtype(p.policy)
            ),
        ]
        .join("\n"),
    )
}

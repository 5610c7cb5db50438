//! The texts of §1.11 and §4.3: conversion report, too-big message, lossy
//! warning.

use crate::{Options, Plan, Policy, Stored, BOARD_MAX_MB};
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
                "auto: using --wtype {} ({})",
                p.policy.name(),
                p.policy.description(p.opts.fallback)
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

/// The §1.11 too-big message for the last plan tried.
pub fn too_big(g: &Gguf, opts: &Options, last: &Plan) -> String {
    let stem = stem(g);
    let size = opts.mem_mb;
    let elements: u64 = g
        .tensors
        .iter()
        .filter(|t| t.shape.len() >= 2)
        .map(|t| t.n_elements())
        .sum();
    let need = elements as f64 * 4.5 / 8.0 * 1.05 + 2.0 * MIB as f64;
    let mut out = vec![format!(
        "{stem} does not fit in {} MB{}{}",
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
        "  it needs {:.2} MB with --wtype {} and a {}-token context; the limit is {} MB",
        last.mem_needed as f64 / MIB as f64,
        last.policy.name(),
        last.ctx,
        fmt_mb(size)
    ));
    let fits: Vec<(f64, &str)> = [(72.0, "SDRAM, then HyperRAM"), (64.0, "all in SDRAM")]
        .into_iter()
        .filter(|(s, _)| *s > size && need <= s * MIB as f64)
        .collect();
    if let Some((first, _)) = fits.first() {
        out.push("On an R4-R6 (with SDRAM), use a larger memory size:".into());
        for (s, what) in &fits {
            out.push(format!("  make {stem}.{}mb.chat ({what})", fmt_mb(*s)));
        }
        out.push(format!(
            "  or ATTICRAM={} make {stem}.chat (ssnail convert: --mem-mb {})",
            fmt_mb(*first),
            fmt_mb(*first)
        ));
    } else if size < BOARD_MAX_MB {
        out.push("probably too big even for 72 MB (SDRAM + HyperRAM)".into());
    }
    // Upstream always suggests 128; below that, suggesting 128 would be no
    // help, so halve what was asked for.
    let shorter = if last.ctx > 128 {
        128
    } else {
        (last.ctx / 2).max(1)
    };
    out.push(format!(
        "A shorter context needs less memory: CONTEXT_WINDOW={shorter} (ssnail convert: --ctx {shorter})"
    ));
    out.join("\n")
}

/// The warning `auto` prints before asking to accept lossy tensors (§4.3).
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
    let policy = p.policy.name();
    let dst: Vec<&str> = {
        let mut v: Vec<&str> = lossy.iter().map(|s| s.dst.name()).collect();
        v.dedup();
        v
    };
    Some(
        [
            format!(
                "WARNING: {} fits in {} MB only as --wtype {policy}, which loses precision on {pct:.1}% of the weights ({}).",
                stem(g),
                fmt_mb(p.opts.mem_mb),
                conversions(&lossy)
            ),
            format!(
                "  Better: a larger memory size (--mem-mb 64 or 72 on R4-R6), a GGUF already in {}, or an F16/F32 GGUF.",
                dst.join("/")
            ),
            format!("  To accept without being asked: WTYPE={policy} (make) or --wtype {policy} (ssnail convert)."),
        ]
        .join("\n"),
    )
}

//! `ssnail info GGUF`: what a GGUF holds (header, metadata, tensors) and
//! what the converter would make of it: the hyper-parameters it reads, the
//! memory each weight policy needs and which memory sizes it fits. Worked
//! out once ([`inspect`]) for the text and the JSON.

use super::Args;
use anyhow::anyhow;
use serde_json::json;
use ssnail_convert::model::Hparams;
use ssnail_convert::report::fmt_mb;
use ssnail_convert::{Options, Policy, MAX_MEM_MB};
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::MIB;
use ssnail_gguf::{printable, Gguf};

/// Append a line to the output text.
macro_rules! outln {
    ($o:ident, $($t:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($o, $($t)*);
    }};
}

/// Everything `info` says about a GGUF, computed once for text and JSON.
pub struct GgufInfo {
    g: Gguf,
    /// The KV cache format sized for, upper case (F16, F32).
    kv: String,
    /// What the converter makes of it, or why it cannot convert it.
    converter: Result<Converter, String>,
}

/// The converter's view of a GGUF it can convert.
struct Converter {
    hp: Hparams,
    /// The context of the planned images (None: no policy could be planned).
    ctx: Option<u32>,
    /// Memory needed per weight policy (None: more than the largest size).
    needed: Vec<(Policy, Option<u64>)>,
}

/// Read the GGUF and plan its conversion with every weight policy.
pub fn inspect(a: &Args) -> anyhow::Result<GgufInfo> {
    crate::shared::not_llama2c(&a.model, false)?;
    let g = Gguf::open(&a.model)?;
    let converter = plan(a, &g);
    Ok(GgufInfo {
        g,
        kv: a.kv.to_uppercase(),
        converter,
    })
}

fn plan(a: &Args, g: &Gguf) -> Result<Converter, String> {
    let hp = Hparams::read(g).map_err(|e| e.msg)?;
    let base = Options {
        ctx: a.ctx,
        kv_f16: a.kv == "f16",
        mem_mb: MAX_MEM_MB,
        ..Options::default()
    };
    let policies = [
        Policy::Keep,
        Policy::All(GgmlType::Q8_0),
        Policy::Mixed,
        Policy::All(GgmlType::Q4_0),
        Policy::All(GgmlType::F16),
    ];
    let mut needed = Vec::new();
    let mut ctx = None;
    for p in policies {
        let opts = Options {
            policy: p,
            ..base.clone()
        };
        match ssnail_convert::plan(g, &opts) {
            Ok(plan) => {
                ctx = Some(plan.ctx);
                needed.push((p, Some(plan.mem_needed)));
            }
            Err(e) if e.kind == ssnail_convert::ErrorKind::TooBig => needed.push((p, None)),
            Err(e) => return Err(e.msg),
        }
    }
    Ok(Converter { hp, ctx, needed })
}

/// A metadata value as JSON; arrays longer than 64 items are summarised
/// (type and length), as the text output does.
fn value_json(v: &ssnail_gguf::Value) -> serde_json::Value {
    use serde_json::json;
    use ssnail_gguf::Value as V;
    match v {
        V::Str(s) => json!(s),
        V::Bool(b) => json!(b),
        V::Array(a) if a.len() > 64 => json!({"type": v.type_name(), "len": a.len()}),
        V::Array(a) => (0..a.len())
            .filter_map(|i| a.get(i))
            .map(|x| value_json(&x))
            .collect(),
        other => match (other.as_u64(), other.as_i64(), other.as_f64()) {
            (Some(u), _, _) => json!(u),
            (None, Some(i), _) => json!(i),
            (_, _, Some(f)) => json!(f),
            _ => json!(other.to_string()),
        },
    }
}

// 8/64/72 MB are the boards; 128 MB (the whole address space) only the emulator.
const SIZES: [f64; 4] = [8.0, 64.0, 72.0, MAX_MEM_MB];

impl GgufInfo {
    /// The text, into `o`; an error after what could be written when no
    /// weight policy could be planned.
    pub fn text(&self, o: &mut String) -> anyhow::Result<()> {
        let g = &self.g;
        let arch = g.architecture().unwrap_or("(none)");
        let tok = g.get_str("tokenizer.ggml.model").unwrap_or("(none)");
        outln!(
            o,
            "{}: GGUF v{}, architecture {arch}, tokenizer {tok}",
            g.path.display(),
            g.version
        );
        outln!(o, "parameters:");
        for (k, v) in &g.metadata {
            outln!(o, "  {:<44} {}", printable(k), v.summary());
        }
        outln!(o, "tensors ({}):", g.tensors.len());
        for t in &g.tensors {
            outln!(
                o,
                "  {:<32} {:<6} {:?}",
                printable(&t.name),
                t.ty.name(),
                t.shape
            );
        }

        // What the converter would do.
        let Converter { hp, ctx, needed } = match &self.converter {
            Ok(c) => c,
            Err(msg) => {
                outln!(o, "converter: cannot convert this model: {msg}");
                return Ok(());
            }
        };
        outln!(o,
            "hyper-parameters: dim {}, {} layers, {} heads ({} kv, head_dim {}), hidden {}, vocab {}, context_length {}, eps {:e}{}",
            hp.dim,
            hp.n_layers,
            hp.n_heads,
            hp.n_kv_heads,
            hp.head_dim,
            hp.hidden,
            hp.vocab_rows,
            hp.context_length,
            hp.eps,
            match hp.arch {
                ssnail_format::image::Arch::Llama => format!(", rope base {}", hp.rope_base),
                ssnail_format::image::Arch::Bert => {
                    format!(", pooling {}", if hp.pooling == 2 { "CLS" } else { "mean" })
                }
                _ => String::new(),
            }
        );
        outln!(
            o,
            "converter ({} {}d {}L, {}-token context, {} KV cache):",
            hp.arch.name(),
            hp.dim,
            hp.n_layers,
            ctx.ok_or_else(|| anyhow!("no policy could be planned"))?,
            self.kv
        );
        let sizes = SIZES;
        outln!(
            o,
            "  {:<8} {:>14}  {}",
            "--wtype",
            "memory needed",
            sizes
                .map(|s| format!("{:>5}", format!("{}MB", fmt_mb(s))))
                .join(" ")
        );
        for (p, need) in needed {
            let (text, fits) = match need {
                Some(n) => (
                    format!("{:.2} MB", *n as f64 / MIB as f64),
                    sizes.map(|s| {
                        if (*n as f64) <= s * MIB as f64 {
                            "fits"
                        } else {
                            "-"
                        }
                    }),
                ),
                None => (format!("> {} MB", fmt_mb(MAX_MEM_MB)), ["-"; 4]),
            };
            outln!(
                o,
                "  {:<8} {:>14}  {}",
                p.name(),
                text,
                fits.map(|f| format!("{f:>5}")).join(" ")
            );
        }
        for s in sizes {
            let pick = needed[..4]
                .iter()
                .find(|(_, n)| n.is_some_and(|n| (n as f64) <= s * MIB as f64));
            match pick {
                Some((p, n)) => outln!(
                    o,
                    "  {} MB: auto uses --wtype {} ({:.2} MB){}",
                    fmt_mb(s),
                    p.name(),
                    n.unwrap_or(0) as f64 / MIB as f64,
                    if s > 72.0 { ", emulator only" } else { "" }
                ),
                None => outln!(o, "  {} MB: does not fit even with Q4_0 weights", fmt_mb(s)),
            }
        }
        Ok(())
    }

    /// The same as one JSON object; an error where [`GgufInfo::text`] ends in one.
    pub fn json(&self) -> anyhow::Result<serde_json::Value> {
        let g = &self.g;
        let mut j = serde_json::Map::new();
        j.insert("kind".into(), json!("gguf"));
        j.insert("file".into(), json!(g.path.display().to_string()));
        j.insert("gguf_version".into(), json!(g.version));
        j.insert(
            "architecture".into(),
            json!(g.architecture().unwrap_or("(none)")),
        );
        j.insert(
            "tokenizer".into(),
            json!(g.get_str("tokenizer.ggml.model").unwrap_or("(none)")),
        );
        j.insert(
            "metadata".into(),
            g.metadata
                .iter()
                .map(|(k, v)| (k.to_string(), value_json(v)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        );
        j.insert(
            "tensors".into(),
            g.tensors
                .iter()
                .map(|t| json!({"name": t.name, "type": t.ty.name(), "shape": t.shape}))
                .collect(),
        );
        let Converter { hp, ctx, needed } = match &self.converter {
            Ok(c) => c,
            Err(msg) => {
                j.insert("converter_error".into(), json!(msg));
                return Ok(j.into());
            }
        };
        if ctx.is_none() {
            return Err(anyhow!("no policy could be planned"));
        }
        j.insert(
            "hyper_parameters".into(),
            json!({
                "dim": hp.dim, "layers": hp.n_layers, "heads": hp.n_heads, "kv_heads": hp.n_kv_heads,
                "head_dim": hp.head_dim, "hidden": hp.hidden, "vocab": hp.vocab_rows,
                "context_length": hp.context_length, "eps": hp.eps,
            }),
        );
        j.insert("context".into(), json!(ctx));
        j.insert("kv_cache".into(), json!(self.kv));
        j.insert(
            "memory_needed".into(),
            needed
                .iter()
                .map(|(p, n)| {
                    let fits: Vec<f64> = SIZES
                        .into_iter()
                        .filter(|s| n.is_some_and(|n| n as f64 <= *s * MIB as f64))
                        .collect();
                    json!({"wtype": p.name(), "bytes": n, "fits_mb": fits})
                })
                .collect(),
        );
        Ok(j.into())
    }
}

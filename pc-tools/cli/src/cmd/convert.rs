//! `ssnail convert MODEL.gguf -o OUT.ssnail`: GGUF → SSNAIL image (spec §1.11).

use anyhow::{anyhow, bail};
use ssnail_convert::report::{accept_lossy, lossy_warning, stem};
use ssnail_convert::{Core, ErrorKind, Interface, Options, Policy};
use ssnail_format::ggml::GgmlType;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(about = "Convert a GGUF model (llama, gpt2, bert) into an SSNAIL image")]
pub struct Args {
    /// The GGUF model (llama, gpt2 or bert architecture).
    pub model: PathBuf,
    /// The image to write (default: the model's name with .ssnail, beside it).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Context length (BERT: longest sequence); default min(context_length, 256), BERT 128.
    #[arg(long, short = 'c', visible_alias = "ctx-size")]
    pub ctx: Option<u32>,
    /// Weight formats: auto (the GGUF's own formats if they fit, else Q8_0,
    /// mixed, Q4_0; asks before losing bits), keep, mixed, f32, f16, bf16, q8_0, q4_0.
    #[arg(long, default_value = "auto")]
    pub wtype: String,
    /// Format for tensors SSNAIL cannot execute under keep (f32, f16, bf16, q8_0, q4_0).
    #[arg(long, default_value = "q8_0")]
    pub fallback: String,
    /// KV cache format.
    #[arg(long, default_value = "f16", value_parser = ["f16", "f32"])]
    pub kv: String,
    /// Memory size in MiB (1 MB = 1,048,576 bytes here, as run/chat --mem-mb):
    /// 8 (any board), 64 (R4-R6 SDRAM), 72 (R4-R6 SDRAM + HyperRAM); at most 128.
    #[arg(long = "mem-mb", visible_alias = "hyperram-mb", default_value_t = 8.0)]
    pub mem_mb: f64,
    /// Specialty recorded in the description, e.g. Story, Code, Chat.
    #[arg(long = "type", default_value = "General")]
    pub type_name: String,
    /// Leave out the chat block: the GGUF's chat template is not stored, and
    /// every host treats lines as plain continuations.
    #[arg(long = "no-template")]
    pub no_template: bool,
    /// The core the image is made for: fpga (the SSNAIL FPGA core; auto keeps
    /// the GGUF's formats), or soft (the MEGA65 program's software core on a
    /// stock board: Q8_0/Q4_0 only, FFNs padded to whole blocks, a copied
    /// classifier stored once).
    #[arg(long, default_value = "fpga", value_parser = ["fpga", "soft"])]
    pub core: String,
    /// Answer greedily by default (temperature 0, repetition penalty 1.0, as the v1
    /// hardware) in `ssnail chat` and the MEGA65 program, which otherwise sample; for a model
    /// whose quality was measured greedy. --temp and /temp still choose.
    #[arg(long = "default-greedy")]
    pub default_greedy: bool,
    /// Tokens per answer by default in `ssnail run`/`chat` and the MEGA65 program (1-4095);
    /// -n and /n still choose.
    #[arg(long = "default-tokens", value_name = "N", value_parser = clap::value_parser!(u16).range(1..=4095))]
    pub default_tokens: Option<u16>,
    /// Decoders: compute the logits at every prompt position too (the full pass, classifier and
    /// ARGMAX, at every position, for `run --logits` rows of the whole prompt or a per-position
    /// comparison). By default a prompt position before the last stops after the last layer's
    /// K/V cache writes, as nothing after them is used there (same tokens, faster).
    #[arg(long = "all-logits")]
    pub all_logits: bool,
}

fn native(s: &str, what: &str) -> anyhow::Result<GgmlType> {
    GgmlType::from_name(s)
        .filter(|t| t.is_native())
        .ok_or_else(|| anyhow!("{what} {s}: not one of f32, f16, bf16, q8_0, q4_0"))
}

/// Ask on the terminal; anything but y/yes (or EOF) is no.
fn ask(question: &str) -> bool {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => false,
        Ok(_) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
    }
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| a.model.with_extension("ssnail"));
    let policy = Policy::parse(&a.wtype).ok_or_else(|| {
        anyhow!(
            "--wtype {}: not one of keep, auto, mixed, f32, f16, bf16, q8_0, q4_0",
            a.wtype
        )
    })?;
    let opts = Options {
        ctx: a.ctx,
        policy,
        fallback: native(&a.fallback, "--fallback")?,
        kv_f16: a.kv == "f16",
        mem_mb: a.mem_mb,
        type_name: a.type_name.clone(),
        interface: Interface::from_env(),
        chat_template: !a.no_template,
        core: Core::parse(&a.core).expect("clap checked --core"),
        answer: a.default_tokens.unwrap_or(0) as u32
            | if a.default_greedy {
                ssnail_format::image::ANSWER_GREEDY
            } else {
                0
            },
        all_logits: a.all_logits,
        ..Options::default()
    };
    if a.mem_mb.is_nan() || a.mem_mb < 0.0 {
        bail!("--mem-mb {}: a memory size cannot be negative", a.mem_mb);
    }
    if a.mem_mb > ssnail_convert::MAX_MEM_MB {
        bail!(
            "--mem-mb {}: SSNAIL addresses are 28 bits, so at most {} MB fit above $8000000",
            a.mem_mb,
            ssnail_convert::MAX_MEM_MB
        );
    }
    // Fail on an unwritable destination before the work, not after.
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        bail!(
            "{}: directory {} does not exist",
            output.display(),
            dir.display()
        );
    }

    crate::shared::not_llama2c(&a.model, false)?;
    let g = ssnail_gguf::Gguf::open(&a.model)?;
    let plan = ssnail_convert::plan(&g, &opts).map_err(|e| match e.kind {
        // The too-big message is the §1.11 text with its suggestions.
        ErrorKind::TooBig => anyhow!("{}", e.msg),
        _ => anyhow!(e),
    })?;
    // A vocabulary `ssnail tokenize` (the reference tokenizer) refuses is
    // converted, but not silently: the image's ids cannot be checked.
    if let Ok(v) = ssnail_tokenizer::vocab::Vocab::from_gguf(&g) {
        if let Err(e) = ssnail_tokenizer::reference::GgufTokenizer::new(v) {
            eprintln!(
                "{}: warning: the reference tokenizer does not support this vocabulary ({}); \
                 the image's tokenizer may give other ids than llama.cpp",
                a.model.display(),
                ssnail_gguf::printable(&e)
            );
        }
    }
    if plan.auto {
        if let Some(w) = lossy_warning(&g, &plan) {
            eprintln!("{w}");
            if !std::io::stdin().is_terminal() {
                bail!(
                    "{}: Not converted: stdin is not a terminal to ask; add {} to convert anyway.",
                    stem(&g),
                    accept_lossy(&g, &plan)
                );
            }
            if !ask("Convert anyway?") {
                bail!("{}: Not converted.", stem(&g));
            }
        }
    }

    let total = plan.weight_bytes();
    // A bar only where someone watches, and only for work that takes a moment.
    let bar = (std::io::stderr().is_terminal() && total > 32 << 20).then(|| {
        let b = indicatif::ProgressBar::new(total);
        b.set_style(
            indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {bytes}/{total_bytes} {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        b.set_message("converting");
        b
    });
    let out = plan.build(&|n| {
        if let Some(b) = &bar {
            b.inc(n)
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // The model is an input: `-o` naming it is refused, never replaced.
    ssnail_output::write(&output, &out.image, &[&a.model])?;
    let mut text = out.report.lines().join("\n");
    text.push_str(&format!("\nwrote {}: load at $8000000\n", output.display()));
    if output.as_os_str() == "-" {
        // The image went to stdout: the report must not follow it there.
        eprint!("{text}");
        return Ok(());
    }
    crate::shared::print_stdout(&text)
}

//! `ssnail run`: load an image through the emulated load port, run it on the
//! SSNAIL core emulator and print the text (or ids, or the embedding), the
//! stop reason, the instruction count and the RAM traffic per token (§6.5).

use crate::cmd::chat::sampler::{Sampler, Settings};
use crate::shared::{stop_name, ModelArgs, SamplingArgs};
use anyhow::{anyhow, bail, Result};
use clap::Parser;
use ssnail_core::{vocab_piece, Host, Machine, Numerics};
use ssnail_tokenizer::ImageTokenizer;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(
    about = "Run an SSNAIL image (or a GGUF, converted first) on the core emulator",
    after_help = crate::shared::LLAMA_CPP_DEFAULTS
)]
pub struct Args {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Temperature (default 0: greedy, exactly the v1 hardware), top-k, top-p, min-p,
    /// repetition penalty, seed (spec §7.3, as chat samples).
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Prompt token ids, comma-separated (e.g. 1,450,6635), instead of --prompt.
    #[arg(long, value_delimiter = ',', conflicts_with = "prompt")]
    pub tokens: Option<Vec<u32>>,
    /// Print every instruction to stderr.
    #[arg(long)]
    pub trace: bool,
    /// Print the prompt and generated token ids instead of text.
    #[arg(long)]
    pub ids: bool,
    /// Write the logits of every ARGMAX (encoders: the embedding) as little-endian f32 rows: the
    /// last prompt position's and each generated token's; every position's with an image made
    /// by `convert --all-logits`.
    #[arg(long)]
    pub logits: Option<PathBuf>,
    /// Cumulative instruction limit.
    #[arg(long, default_value_t = ssnail_core::DEFAULT_INSTR_LIMIT)]
    pub instr_limit: u64,
}

/// `run`'s default for -n.
const DEFAULT_N: u32 = 32;

/// Streams newly published tokens at each SYNC and records logits at each ARGMAX.
struct Printer {
    shown: u32,
    /// When the first generated token was published (the end of prompt eval).
    first_token: Option<Instant>,
    print_text: bool,
    pending: Vec<u8>,
    logits: Option<Vec<f32>>,
    /// A chat template's end-of-reply token when it is not the image's EOS
    /// (the script stops on EOS itself): a stop is requested when it appears.
    stop_token: Option<u32>,
    /// Sampling (temperature > 0): chooses at every ARGMAX; None: the core's greedy ARGMAX.
    sampler: Option<Sampler>,
    /// Tokens the repetition penalty looks back over.
    window: u32,
}

impl Printer {
    /// Print the longest valid UTF-8 prefix; invalid bytes become U+FFFD and
    /// an incomplete sequence at the end waits for the next token.
    fn flush_text(&mut self, last: bool) {
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (ok, bad) = rest.split_at(e.valid_up_to());
                    out.push_str(std::str::from_utf8(ok).unwrap());
                    match e.error_len() {
                        Some(n) => {
                            out.push('\u{FFFD}');
                            rest = &bad[n..];
                        }
                        None if last => {
                            out.push('\u{FFFD}');
                            rest = &[];
                            break;
                        }
                        None => {
                            rest = bad;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        print!("{out}");
        let _ = std::io::stdout().flush();
    }
}

impl Host for Printer {
    fn on_sync(&mut self, m: &mut Machine) {
        let rt = ssnail_core::runtime(m);
        if rt.generated > 0 && self.first_token.is_none() {
            self.first_token = Some(Instant::now());
        }
        if let (Some(stop), true) = (self.stop_token, rt.generated > 0) {
            let last = ssnail_core::read_tokens(m, rt.prompt_len + rt.generated - 1, 1);
            if last == [stop] {
                m.poke_u32(
                    (ssnail_format::image::BASE + ssnail_format::image::rt::STOP_REQUEST) as u64,
                    1,
                );
            }
        }
        if !self.print_text {
            return;
        }
        let toks = ssnail_core::read_tokens(
            m,
            rt.prompt_len + self.shown,
            rt.generated.saturating_sub(self.shown),
        );
        for t in toks {
            self.pending.extend(vocab_piece(m, t));
            self.shown += 1;
        }
        self.flush_text(false);
    }
    fn on_argmax(&mut self, logits: &[f32], m: &Machine) -> Option<u32> {
        if let Some(all) = &mut self.logits {
            all.extend_from_slice(logits);
        }
        // As chat (§7.3): only an ARGMAX whose result becomes a generated token draws (an image
        // made with --all-logits runs ARGMAX at every prompt position too).
        let s = self.sampler.as_mut()?;
        let rt = ssnail_core::runtime(m);
        if rt.pos + 1 < rt.prompt_len {
            return None;
        }
        let from = rt.pos.saturating_sub(self.window - 1);
        let recent = ssnail_core::read_tokens(m, from, rt.pos - from + 1);
        Some(s.choose(logits, &recent))
    }
}

/// Write f32 rows to `path` as little-endian bytes, atomically.
pub fn write_f32s(path: &Path, values: &[f32]) -> Result<()> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok(ssnail_output::write(path, &bytes, &[])?)
}

/// How the summary names the numerics the run used (`--hw` / `--float`, or the default).
fn numerics_name(n: Numerics) -> &'static str {
    match n {
        Numerics::Hardware => "hardware numerics",
        Numerics::Float => "float reference numerics",
    }
}

pub fn run(mut args: Args) -> Result<()> {
    args.model.convert_gguf(args.model.ctx)?;
    let name = args.model.image().display().to_string();
    let mut dev = args.model.load()?;
    let bandwidth = args.model.bandwidth;
    dev.machine.trace = args.trace;
    dev.machine.instr_limit = args.instr_limit;
    let header = dev.header();
    let ctx = args.model.context(&header)?;
    let a = &args.sampling;
    let settings = Settings {
        top_p: a.top_p,
        min_p: a.min_p,
        ..Settings::new(a.temp.unwrap_or(0.0), a.topk, a.penalty)
    };
    let template = args.model.chat_template(&dev, args.model.image())?;
    // The prompt's own tokens (echoed) and, with a chat template, the turn around them.
    let (tokens, typed): (Vec<u32>, std::ops::Range<usize>) =
        match (&args.tokens, &args.model.prompt) {
            (Some(t), _) => (t.clone(), 0..t.len()),
            (None, Some(text)) => {
                let tok =
                    ImageTokenizer::new(dev.machine.mem()).map_err(|e| anyhow!("{name}: {e}"))?;
                match &template {
                    Some(c) => {
                        let mut v = c.before_turn(true, false);
                        let from = v.len();
                        v.extend(tok.encode(text, false));
                        let typed = from..v.len();
                        v.extend_from_slice(&c.suffix);
                        (v, typed)
                    }
                    None => {
                        let v = tok.encode(text, true);
                        let n = v.len();
                        (v, 0..n)
                    }
                }
            }
            (None, None) => bail!("give --prompt TEXT or --tokens IDS"),
        };
    if tokens.is_empty() {
        bail!("{name}: the prompt gives no tokens");
    }
    if let Some(&bad) = tokens
        .iter()
        .find(|&&t| t >= header.out_dim.max(header.n_vocab))
    {
        bail!(
            "{name}: token id {bad} is outside the vocabulary ({} tokens)",
            header.n_vocab
        );
    }
    if tokens.len() > ctx as usize && ctx < header.max_ctx {
        bail!(
            "{name}: the prompt is {} tokens, more than -c {ctx}",
            tokens.len()
        );
    }
    let mut printer = Printer {
        shown: 0,
        first_token: None,
        print_text: !args.ids && !header.is_encoder(),
        pending: Vec::new(),
        logits: args.logits.as_ref().map(|_| Vec::new()),
        stop_token: template
            .as_ref()
            .map(|c| c.stop_token())
            .filter(|&t| t != header.eos),
        sampler: (!settings.is_greedy() && !header.is_encoder())
            .then(|| Sampler::new(settings, a.seed.unwrap_or_else(rand::random))),
        window: a.repeat_last_n,
    };
    let start = Instant::now();
    if header.is_encoder() {
        let enc = dev
            .encode(&tokens, &mut printer)
            .map_err(|e| anyhow!("{name}: {e}"))?;
        let secs = start.elapsed().as_secs_f64();
        if args.ids {
            println!("tokens: {}", join(&tokens));
        }
        if enc.stop_reason == ssnail_format::image::stop::COUNT {
            let norm = enc
                .output
                .iter()
                .map(|v| (*v as f64).powi(2))
                .sum::<f64>()
                .sqrt();
            println!("embedding ({} values, |v| = {norm:.4}):", enc.output.len());
            let first: Vec<String> = enc
                .output
                .iter()
                .take(16)
                .map(|v| format!("{v:.4}"))
                .collect();
            let more = if enc.output.len() > 16 { " ..." } else { "" };
            println!("{}{more}", first.join(" "));
        } else {
            println!(
                "[too long: {} tokens, maximum {}]",
                tokens.len(),
                header.max_ctx
            );
        }
        let mb = dev.machine.traffic.total() as f64 / 1e6;
        eprintln!(
            "[{}; stop reason: {}, {} instructions; RAM traffic {mb:.2} MB -> ~{:.1} ms at {bandwidth} MB/s; {secs:.2}s on this PC]",
            numerics_name(dev.machine.numerics),
            stop_name(enc.stop_reason),
            dev.machine.instructions,
            mb / bandwidth * 1000.0,
        );
        eprint!("{}", perf_lines(tokens.len(), secs, 0, 0.0));
        if let Some(p) = &args.logits {
            write_f32s(p, &enc.output)?;
        }
        return Ok(());
    }
    if printer.print_text {
        for &t in &tokens[typed] {
            printer.pending.extend(vocab_piece(&dev.machine, t));
        }
        if template.is_some() {
            printer.pending.push(b'\n'); // the reply is the model's turn
        }
        printer.flush_text(false);
    }
    // -c below the image's context: the run stops where that context ends.
    // -n, else the image's default (header $58), else run's own.
    let asked = args
        .model
        .n
        .unwrap_or(match header.answer & ssnail_format::image::ANSWER_TOKENS {
            0 => DEFAULT_N,
            t => t,
        });
    let room = ctx.saturating_sub(tokens.len() as u32);
    let limited = ctx < header.max_ctx && room < asked;
    if limited && room == 0 {
        bail!("{name}: the prompt fills -c {ctx}: nothing is left to generate");
    }
    let n = if limited { room } else { asked };
    let out = dev
        .generate(&tokens, n, &mut printer)
        .map_err(|e| anyhow!("{name}: {e}"))?;
    let end = Instant::now();
    let secs = (end - start).as_secs_f64();
    // llama.cpp's split: prompt eval ends when the first token appears; the
    // other generated tokens are the eval runs.
    let first = printer.first_token.unwrap_or(end);
    let prompt_secs = (first - start).as_secs_f64();
    let runs = out.tokens.len().saturating_sub(1);
    if printer.print_text {
        printer.flush_text(true);
        println!();
    }
    if args.ids {
        println!("prompt: {}", join(&tokens));
        println!("generated: {}", join(&out.tokens));
    }
    let positions = (tokens.len() + out.tokens.len()) as f64;
    let mb_per_token = dev.machine.traffic.total() as f64 / 1e6 / positions;
    let chat = match &template {
        Some(c) => format!("; chat template {}", c.name),
        None => String::new(),
    };
    let reason = if limited && out.stop_reason == ssnail_format::image::stop::COUNT {
        format!("context full (-c {ctx})")
    } else {
        stop_name(out.stop_reason)
    };
    let sampling = match &printer.sampler {
        None => String::new(),
        Some(_) => {
            let mut s = format!(
                ", sampled: temperature {}, top-k {}, repetition penalty {}",
                settings.temperature, settings.top_k, settings.penalty
            );
            if settings.top_p < 1.0 {
                s += &format!(", top-p {}", settings.top_p);
            }
            if settings.min_p > 0.0 {
                s += &format!(", min-p {}", settings.min_p);
            }
            s
        }
    };
    eprintln!(
        "[{}{sampling}{chat}; {} tokens, stop reason: {reason}, {} instructions, {secs:.2}s on this PC]",
        numerics_name(dev.machine.numerics),
        out.tokens.len(),
        dev.machine.instructions
    );
    eprintln!(
        "[RAM traffic {mb_per_token:.2} MB/token -> ~{:.1} tokens/s at {bandwidth} MB/s]",
        bandwidth / mb_per_token,
    );
    eprint!(
        "{}",
        perf_lines(tokens.len(), prompt_secs, runs, (end - first).as_secs_f64())
    );
    if let (Some(p), Some(l)) = (&args.logits, &printer.logits) {
        write_f32s(p, l)?;
    }
    Ok(())
}

/// llama.cpp's timing lines (as llama_perf_context_print lays them out),
/// measured on this PC's emulator.
fn perf_lines(prompt: usize, prompt_secs: f64, runs: usize, eval_secs: f64) -> String {
    let line = |what: &str, secs: f64, n: usize, unit: &str| {
        let ms = secs * 1000.0;
        if n == 0 {
            return format!("{what} = {ms:10.2} ms / {n:5} {unit}\n");
        }
        format!(
            "{what} = {ms:10.2} ms / {n:5} {unit} ({:8.2} ms per token, {:8.2} tokens per second)\n",
            ms / n as f64,
            n as f64 / secs.max(1e-9)
        )
    };
    let mut s = line("prompt eval time", prompt_secs, prompt, "tokens");
    s += &line("       eval time", eval_secs, runs, "runs  ");
    s += &format!(
        "      total time = {:10.2} ms / {:5} tokens\n",
        (prompt_secs + eval_secs) * 1000.0,
        prompt + runs
    );
    s
}

fn join(ids: &[u32]) -> String {
    ids.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

//! `ssnail run`: load an image through the emulated load port, run it on the
//! SSNAIL core emulator and print the text (or ids, or the embedding), the
//! stop reason, the instruction count and the RAM traffic per token (§6.5).

use anyhow::{anyhow, bail, Result};
use clap::Parser;
use ssnail_core::{vocab_piece, Host, Machine, Numerics, Ssnail};
use ssnail_tokenizer::ImageTokenizer;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(about = "Run an SSNAIL image on the core emulator")]
pub struct Args {
    /// The .ssnail image.
    pub image: PathBuf,
    /// Prompt text, tokenized with the image's own tokenizer.
    #[arg(long, conflicts_with = "tokens", required_unless_present = "tokens")]
    pub prompt: Option<String>,
    /// Prompt token ids, comma-separated (e.g. 1,450,6635).
    #[arg(long, value_delimiter = ',')]
    pub tokens: Option<Vec<u32>>,
    /// Tokens to generate (decoders).
    #[arg(short = 'n', default_value_t = 32)]
    pub n: u32,
    /// Hardware numerics (bit-exact to the FPGA core) instead of the float reference.
    #[arg(long)]
    pub hw: bool,
    /// Memory bandwidth in MB/s (1e6 bytes) for the tokens/s estimate.
    #[arg(long, default_value_t = 130.0)]
    pub bandwidth: f64,
    /// Print every instruction to stderr.
    #[arg(long)]
    pub trace: bool,
    /// Print the prompt and generated token ids instead of text.
    #[arg(long)]
    pub ids: bool,
    /// Write the logits at every position (encoders: the embedding) as little-endian f32 rows.
    #[arg(long)]
    pub logits: Option<PathBuf>,
    /// Worker threads for GEMV (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// SSNAIL memory in MiB (default: max(8, the image's need)).
    #[arg(long)]
    pub mem_mb: Option<f64>,
    /// Cumulative instruction limit.
    #[arg(long, default_value_t = ssnail_core::DEFAULT_INSTR_LIMIT)]
    pub instr_limit: u64,
}

/// Streams newly published tokens at each SYNC and records logits at each ARGMAX.
struct Printer {
    shown: u32,
    print_text: bool,
    pending: Vec<u8>,
    logits: Option<Vec<f32>>,
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
        if !self.print_text {
            return;
        }
        let rt = ssnail_core::runtime(m);
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
    fn on_argmax(&mut self, logits: &[f32], _m: &Machine) -> Option<u32> {
        if let Some(all) = &mut self.logits {
            all.extend_from_slice(logits);
        }
        None
    }
}

/// Write f32 rows to `path` as little-endian bytes, atomically.
pub fn write_f32s(path: &Path, values: &[f32]) -> Result<()> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    super::convert::write_atomically(path, &bytes)
}

/// Load an image with the options `run` and `chat` share applied: memory
/// size, numerics and GEMV threads.
pub fn load(image: &Path, mem_mb: Option<f64>, hw: bool, threads: Option<usize>) -> Result<Ssnail> {
    let mem = mem_mb.map(|mb| (mb * 1048576.0).ceil() as usize);
    let (mut dev, _report) = Ssnail::load_file(image, mem).map_err(|e| anyhow!("{e}"))?;
    dev.machine.numerics = if hw {
        Numerics::Hardware
    } else {
        Numerics::Float
    };
    if let Some(t) = threads {
        dev.machine.set_threads(t);
    }
    Ok(dev)
}

pub fn run(args: Args) -> Result<()> {
    let name = args.image.display().to_string();
    let mut dev = load(&args.image, args.mem_mb, args.hw, args.threads)?;
    dev.machine.trace = args.trace;
    dev.machine.instr_limit = args.instr_limit;
    let header = dev.header();
    let tokens: Vec<u32> = match (&args.tokens, &args.prompt) {
        (Some(t), _) => t.clone(),
        (None, Some(text)) => {
            let tok = ImageTokenizer::new(dev.machine.mem()).map_err(|e| anyhow!("{name}: {e}"))?;
            tok.encode(text, true)
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
    let mut printer = Printer {
        shown: 0,
        print_text: !args.ids && !header.is_encoder(),
        pending: Vec::new(),
        logits: args.logits.as_ref().map(|_| Vec::new()),
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
            "[stop reason {}, {} instructions; RAM traffic {mb:.2} MB -> ~{:.1} ms at {} MB/s; {secs:.2}s emulated]",
            enc.stop_reason,
            dev.machine.instructions,
            mb / args.bandwidth * 1000.0,
            args.bandwidth
        );
        if let Some(p) = &args.logits {
            write_f32s(p, &enc.output)?;
        }
        return Ok(());
    }
    if printer.print_text {
        for &t in &tokens {
            printer.pending.extend(vocab_piece(&dev.machine, t));
        }
        printer.flush_text(false);
    }
    let out = dev
        .generate(&tokens, args.n, &mut printer)
        .map_err(|e| anyhow!("{name}: {e}"))?;
    let secs = start.elapsed().as_secs_f64();
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
    eprintln!(
        "[{} tokens, stop reason {}, {} instructions, {secs:.2}s emulated]",
        out.tokens.len(),
        out.stop_reason,
        dev.machine.instructions
    );
    eprintln!(
        "[RAM traffic {mb_per_token:.2} MB/token -> ~{:.1} tokens/s at {} MB/s]",
        args.bandwidth / mb_per_token,
        args.bandwidth
    );
    if let (Some(p), Some(l)) = (&args.logits, &printer.logits) {
        write_f32s(p, l)?;
    }
    Ok(())
}

fn join(ids: &[u32]) -> String {
    ids.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

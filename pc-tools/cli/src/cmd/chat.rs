//! `ssnail chat IMAGE`: the interactive front end (spec §7). Needs only the
//! image: text is tokenized with the image's own tables, the core emulator
//! runs the image's script through the host protocol (§6.3), and every token
//! is shown as the script publishes it (at SYNC), folded to ASCII by one
//! persistent folder (§2.5) as the MEGA65 shows it.
//!
//! Decoders keep their context between turns (KV cache, tokens and pos stay
//! in the emulated memory); an empty line continues. Sampling at ARGMAX
//! (§7.3) is an emulator-only preview; `--greedy` is exactly the v1 hardware.
//! Encoders (BERT) embed each line and rank the earlier lines by cosine.
//!
//! This file holds the options, the session's state and its input loop; one
//! file a job beside it in `chat/`: reading lines (`input`), Ctrl-C
//! (`interrupt`), the host of a decoder run (`host`), a decoder's turn
//! (`decoder`), an encoder's ranking (`encoder`), the `/commands`
//! (`commands`), the samplers (`sampler`, `mega65`), type-ahead and word
//! wrapping (`typeahead`, `wrap`).

mod mega65;
pub(crate) mod sampler;
mod typeahead;
mod wrap;

// stdout that ends the program quietly when its reader has gone (e.g.
// `ssnail chat … | head`), where std's print! would panic.
macro_rules! print {
    ($($t:tt)*) => { crate::cmd::chat::emit(&format!($($t)*)) };
}
macro_rules! println {
    () => { crate::cmd::chat::emit("\n") };
    ($($t:tt)*) => { crate::cmd::chat::emit(&(format!($($t)*) + "\n")) };
}

mod commands;
mod decoder;
mod encoder;
mod host;
mod input;
mod interrupt;

use crate::shared::{ModelArgs, SamplingArgs};
use anyhow::{anyhow, bail, Result};
use clap::Parser;
use input::Input;
use interrupt::install_interrupt_handler;
use sampler::{Sampler, Settings};
use ssnail_core::{Numerics, Ssnail};
use ssnail_format::chatblock::ChatBlock;
use ssnail_format::image::{Arch, Header, ANSWER_GREEDY, ANSWER_TOKENS};
use ssnail_tokenizer::{AsciiFolder, GgufTokenizer, ImageTokenizer};
use std::io::Write;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    about = "Chat with an SSNAIL image (decoders) or compare lines (encoders) on the core emulator",
    after_help = crate::shared::LLAMA_CPP_DEFAULTS
)]
pub struct Args {
    /// The image, prompt (-p: this one input, non-interactively), -n (tokens
    /// per turn, default 120), numerics, threads, memory and bandwidth.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Temperature 0 and repetition penalty 1.0: exactly the v1 hardware (greedy ARGMAX).
    #[arg(long)]
    pub greedy: bool,
    /// Temperature (default 0.8), top-k, top-p, min-p, repetition penalty, seed.
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// float: the PC's double-precision sampler (spec §7.3); mega65: the MEGA65
    /// program's fixed-point sampler (§7.6), the same tokens for the same --seed.
    #[arg(long, value_enum, default_value_t = SamplerKind::Float)]
    pub sampler: SamplerKind,
    /// Show <EOS n%> before a token when P(end of text) >= 5%.
    #[arg(long)]
    pub eos: bool,
    /// Tokenize input with this GGUF's own tokenizer (llama.cpp's rules, any
    /// Unicode) instead of the image's tables (ASCII, as on the MEGA65).
    #[arg(long)]
    pub gguf: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SamplerKind {
    Float,
    Mega65,
}

/// `chat`'s default for -n (per turn).
const DEFAULT_N: u32 = 120;

fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

/// Positions processed and time spent, for tokens/s.
#[derive(Default)]
struct Totals {
    positions: u64,
    secs: f64,
}

struct Chat {
    dev: Ssnail,
    name: String,
    header: Header,
    /// Every token's bytes from the image's vocab table.
    pieces: Vec<Vec<u8>>,
    sampler: Sampler,
    /// Tokens the repetition penalty looks back over.
    window: u32,
    /// `--sampler mega65` (its settings follow `sampler.settings` at each turn).
    mega65: Option<mega65::Mega65Sampler>,
    n: u32,
    show_eos: bool,
    bandwidth: f64,
    /// Decoder: a context exists, so the next turn continues it.
    started: bool,
    folder: AsciiFolder,
    /// `--gguf`: the model's reference tokenizer, used instead of the image's.
    reference: Option<GgufTokenizer>,
    /// Encoder: earlier lines and their unit vectors.
    stored: Vec<(String, Vec<f32>)>,
    totals: Totals,
    /// The image file (for /models).
    image: PathBuf,
    /// Input comes from a person at a terminal.
    interactive: bool,
    /// Keys typed during the last answer, for the next prompt.
    typed: Vec<u8>,
    /// The image's chat template (§2.6), unless `--raw`.
    template: Option<ChatBlock>,
    /// The last reply ended with the template's end-of-reply token.
    reply_ended: bool,
    /// The context a conversation may fill: `-c`, at most the image's.
    ctx: u32,
    /// Tokens in the context so far (decoders).
    used: u32,
    /// On a terminal: answers wrap at words to its width.
    wrap: Option<wrap::Wrap>,
}

/// What the input loop does after a line.
enum Next {
    Go,
    Quit,
    /// `/models N`: continue with another image.
    Open(PathBuf),
}

/// A bracketed status line cut at words to 80 columns (continued with one space).
fn status(line: &str) -> String {
    wrap::fit(line, wrap::COLUMNS)
}

/// Numbers as the upstream Python printed them (1.0, 0.8, 1.15).
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

impl Chat {
    fn numerics_name(&self) -> &'static str {
        match self.dev.machine.numerics {
            Numerics::Hardware => "hardware numerics",
            Numerics::Float => "float reference numerics",
        }
    }

    /// The numerics and sampler line, cut to 80 columns.
    fn mode_line(&self) -> String {
        status(&self.mode_text())
    }

    fn mode_text(&self) -> String {
        let s = self.sampler.settings;
        if s.is_greedy() {
            format!("[{}; greedy, as the v1 hardware]", self.numerics_name())
        } else {
            let mut extra = String::new();
            if s.top_p < 1.0 {
                extra += &format!(", top-p {}", num(s.top_p));
            }
            if s.min_p > 0.0 {
                extra += &format!(", min-p {}", num(s.min_p));
            }
            format!(
                "[{}; {}: temperature {}, top-k {}, repeat penalty {}{extra}]",
                self.numerics_name(),
                if self.mega65.is_some() {
                    "sampling as the MEGA65 (fixed point)"
                } else {
                    "sampling"
                },
                num(s.temperature),
                s.top_k,
                num(s.penalty)
            )
        }
    }

    fn banner(&self) {
        let desc = self.dev.description();
        if !desc.is_empty() {
            println!("{}", status(&format!("[{desc}]")));
        }
        let arch = self.header.arch().unwrap_or(Arch::Llama).name();
        let kind = if self.header.is_encoder() {
            "encoder"
        } else {
            "decoder"
        };
        println!(
            "[{arch} {kind}, context {}, vocab {}]",
            self.header.max_ctx, self.header.n_vocab
        );
        if !self.header.is_encoder() {
            println!("{}", self.mode_line());
        }
        if let Some(c) = &self.template {
            println!(
                "[chat template {}: each line is a turn; --raw continues text]",
                c.name
            );
        }
    }

    fn hint(&self) {
        if self.header.is_encoder() {
            println!(
                "{}",
                status(
                    "[one text per line: the most similar earlier lines are listed; \
                     /reset forgets them, /help lists commands, /quit or Ctrl-D quits]"
                )
            );
        } else {
            println!(
                "{}",
                status(
                    "[type text and Enter; an empty line continues, /reset starts again, \
                     /help lists commands, /quit or Ctrl-D quits]"
                )
            );
        }
    }

    fn tokenize(&self, text: &str, first: bool) -> Result<Vec<u32>> {
        if let Some(t) = &self.reference {
            // `special` = the image tokenizer's `first`; encoders always get [CLS] … [SEP].
            return Ok(t.encode(text, first || self.header.is_encoder()));
        }
        let tok = ImageTokenizer::new(self.dev.machine.mem())
            .map_err(|e| anyhow!("{}: {e}", self.name))?;
        Ok(tok.encode(text, first))
    }

    /// Give the script a fresh budget per run: the limit catches runaway
    /// scripts, not long sessions.
    fn fresh_budget(&mut self) {
        let m = &mut self.dev.machine;
        m.instr_limit = m.instructions + ssnail_core::DEFAULT_INSTR_LIMIT;
    }

    /// "<x> tokens/s on this PC; ~<R> at <B> MB/s" (R: the hardware's tokens/s at that
    /// bandwidth), short enough for one 80-column line; /stats adds the MB/token.
    fn speeds(&self, positions: u64, secs: f64, traffic: u64) -> String {
        if positions == 0 {
            return "no positions processed".into();
        }
        let mb_per_token = traffic as f64 / 1e6 / positions as f64;
        format!(
            "{:.1} tokens/s on this PC; ~{:.1} at {} MB/s",
            positions as f64 / secs.max(1e-9),
            self.bandwidth / mb_per_token,
            self.bandwidth
        )
    }

    /// One input line: a command or text.
    fn line(&mut self, line: &str, echo: bool) -> Result<Next> {
        if line
            .split_whitespace()
            .next()
            .is_some_and(|w| w.starts_with('/'))
        {
            return Ok(self.command(line));
        }
        if self.header.is_encoder() {
            self.encoder_line(line)?;
        } else {
            self.decoder_turn(line, echo)?;
        }
        Ok(Next::Go)
    }
}

/// Load `image` and set a chat up on it with the command line's settings.
fn open_chat(args: &Args, image: &std::path::Path, interactive: bool) -> Result<Chat> {
    let name = image.display().to_string();
    if args.model.n == Some(0) {
        bail!("-n 0: a turn needs at least one token");
    }
    let dev = args.model.load_at(image)?;
    let header = dev.header();
    // The image's answer defaults (header $58) where the command line chose nothing.
    let n = args.model.n.unwrap_or(match header.answer & ANSWER_TOKENS {
        0 => DEFAULT_N,
        t => t,
    });
    let image_greedy = header.answer & ANSWER_GREEDY != 0 && args.sampling.temp.is_none();
    let ctx = args.model.context(&header)?;
    // Check the tokenizer tables once, so a broken image fails at start.
    ImageTokenizer::new(dev.machine.mem()).map_err(|e| anyhow!("{name}: {e}"))?;
    let pieces = (0..header.n_vocab).map(|id| dev.vocab_piece(id)).collect();
    let a = &args.sampling;
    let settings = Settings {
        top_p: a.top_p,
        min_p: a.min_p,
        ..if args.greedy || image_greedy {
            Settings::new(0.0, a.topk, 1.0)
        } else {
            Settings::new(a.temp.unwrap_or(0.8), a.topk, a.penalty)
        }
    };
    let reference = match &args.gguf {
        Some(path) => {
            let t = crate::shared::load_gguf_tokenizer(path)?;
            let n = t.vocab.n_vocab();
            if n != header.n_vocab as usize {
                bail!(
                    "{}: a {n}-token vocabulary, but {name} has {} tokens (not this image's model)",
                    path.display(),
                    header.n_vocab
                );
            }
            Some(t)
        }
        None => None,
    };
    let mega65 = match args.sampler {
        SamplerKind::Float => None,
        SamplerKind::Mega65 => {
            // The MEGA65 program's fixed-point sampler (spec §7.6) has no nucleus or min-p step.
            for (flag, v, off) in [("--top-p", a.top_p, 1.0), ("--min-p", a.min_p, 0.0)] {
                if v != off {
                    bail!(
                        "{flag} {v}: the MEGA65 program's sampler (--sampler mega65, spec §7.6) has only temperature, top-k and repetition penalty; --sampler float has {flag}"
                    );
                }
            }
            let seed = a.seed.unwrap_or_else(|| rand::random::<u32>() as u64);
            let mut m = mega65::Mega65Sampler::new(seed).map_err(|e| anyhow!(e))?;
            let s = settings;
            m.set(s.temperature, s.top_k, s.penalty, a.repeat_last_n)
                .map_err(|e| anyhow!(e))?;
            Some(m)
        }
    };
    let seed = a.seed.unwrap_or_else(rand::random);
    let template = args.model.chat_template(&dev, image)?;
    Ok(Chat {
        dev,
        name,
        header,
        pieces,
        sampler: Sampler::new(settings, seed),
        window: a.repeat_last_n,
        mega65,
        n,
        show_eos: args.eos,
        bandwidth: args.model.bandwidth,
        started: false,
        folder: AsciiFolder::new(),
        reference,
        stored: Vec::new(),
        totals: Totals::default(),
        image: image.to_path_buf(),
        interactive,
        typed: Vec::new(),
        template,
        reply_ended: false,
        ctx,
        used: 0,
        wrap: wrap::terminal_width().map(wrap::Wrap::new),
    })
}

pub fn run(mut args: Args) -> Result<()> {
    args.model.convert_gguf(args.model.ctx)?;
    let one_shot = args.model.prompt.is_some();
    let mut input = if one_shot { None } else { Some(Input::open()) };
    let interactive = input.as_ref().is_some_and(Input::interactive);
    let mut chat = open_chat(&args, args.model.image(), interactive)?;
    chat.banner();
    install_interrupt_handler();
    if let Some(prompt) = &args.model.prompt {
        chat.line(prompt, true)?;
        return Ok(());
    }
    let input = input.as_mut().expect("interactive or piped input");
    if interactive {
        chat.hint();
    }
    // Lines typed while the model wrote run first, shown after the prompt.
    let mut queued: std::collections::VecDeque<String> = Default::default();
    loop {
        let (whole, rest) = typeahead::lines(&std::mem::take(&mut chat.typed));
        queued.extend(whole);
        let line = match queued.pop_front() {
            Some(l) => {
                println!("> {l}");
                l
            }
            None => match input.line(&rest) {
                // A paste of several lines (the terminal's bracketed paste gives them to the
                // line editor as one): each runs as a turn of its own, in order.
                Some(l) if l.contains(['\n', '\r']) => {
                    let mut lines = l.split(['\n', '\r']).map(str::to_string);
                    let first = lines.next().unwrap_or_default();
                    queued.extend(lines.filter(|l| !l.is_empty()));
                    first
                }
                Some(l) => l,
                None => break,
            },
        };
        match chat.line(&line, false) {
            Ok(Next::Go) => {}
            Ok(Next::Quit) => break,
            Ok(Next::Open(path)) => match open_chat(&args, &path, interactive) {
                Ok(c) => {
                    chat = c;
                    chat.banner();
                }
                Err(e) => eprintln!("ssnail: {e:#}"),
            },
            // A piped session stops at the first error; a person can go on.
            Err(e) if interactive => eprintln!("ssnail: {e:#}"),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

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

mod mega65;
pub(crate) mod sampler;
mod typeahead;
mod wrap;

// stdout that ends the program quietly when its reader has gone (e.g.
// `ssnail chat … | head`), where std's print! would panic.
macro_rules! print {
    ($($t:tt)*) => { emit(&format!($($t)*)) };
}
macro_rules! println {
    () => { emit("\n") };
    ($($t:tt)*) => { emit(&(format!($($t)*) + "\n")) };
}

use crate::shared::{finite, positive, ModelArgs, SamplingArgs};
use anyhow::{anyhow, bail, Result};
use clap::Parser;
use sampler::{Sampler, Settings};
use ssnail_core::{read_tokens, runtime, Host, HostError, Machine, Numerics, Ssnail};
use ssnail_format::chatblock::ChatBlock;
use ssnail_format::image::{rt, stop, Arch, Header, BASE, TOKEN_SLOTS};
use ssnail_tokenizer::{AsciiFolder, GgufTokenizer, ImageTokenizer};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

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

/// Commands that only mean something to a decoder.
const DECODER_ONLY: [&str; 7] = [
    "/n", "/temp", "/topk", "/penalty", "/greedy", "/eos", "/seed",
];

/// `/help`: every command with what it does (decoder settings only for decoders).
fn help_text(encoder: bool) -> String {
    let mut v = vec![
        "[/reset  new conversation   /stats  speed and position   /hw  hardware/float numerics",
        " /tokens TEXT  token ids and pieces   /models [N]  images here (N: continue with one)",
    ];
    if !encoder {
        v.push(
            " /n N  tokens per turn   /temp T (0 = greedy)  /topk K  /penalty P  /greedy  /seed S",
        );
        v.push(" /eos  show P(end of text)");
    }
    v.push(" /help  this list   /quit (or Ctrl-D)  leave]");
    v.join("\n")
}

/// One `/models` line: number, file, description, memory and boards.
fn model_line(n: usize, p: &std::path::Path, current: bool) -> String {
    let head = std::fs::File::open(p).and_then(|mut f| {
        let mut b = vec![0u8; ssnail_format::image::HEADER_LEN];
        std::io::Read::read_exact(&mut f, &mut b).map(|_| b)
    });
    let file = p
        .file_name()
        .map_or(String::new(), |f| f.to_string_lossy().into_owned());
    match head.ok().and_then(|b| Header::parse(&b).ok()) {
        Some(h) => {
            let mb = h.mem_needed as f64 / (1u64 << 20) as f64;
            let boards = if mb <= 8.0 {
                "any board"
            } else if mb <= 72.0 {
                "R4-R6"
            } else {
                "emulator only"
            };
            format!(
                "{n}{} {file}  [{}]  {mb:.2} MB, {boards}",
                if current { "*" } else { " " },
                h.description()
            )
        }
        None => format!("{n}  {file}  (unreadable header)"),
    }
}

/// Where input lines come from: a line editor with history on a terminal,
/// plain lines otherwise (pipes, files).
enum Input {
    Editor(Box<rustyline::DefaultEditor>),
    Plain(std::io::StdinLock<'static>),
}

impl Input {
    fn open() -> Input {
        if std::io::stdin().is_terminal() {
            if let Ok(ed) = rustyline::DefaultEditor::new() {
                return Input::Editor(Box::new(ed));
            }
        }
        Input::Plain(std::io::stdin().lock())
    }

    fn interactive(&self) -> bool {
        matches!(self, Input::Editor(_))
    }

    /// The next line without its line ending; None at end of input or
    /// Ctrl-C. `typed`: text already typed (type-ahead), shown after "> ".
    fn line(&mut self, typed: &str) -> Option<String> {
        match self {
            Input::Editor(ed) => match ed.readline_with_initial("> ", (typed, "")) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = ed.add_history_entry(line.as_str());
                    }
                    Some(line)
                }
                Err(_) => None,
            },
            Input::Plain(stdin) => {
                let mut buf = Vec::new();
                match stdin.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => {
                        while matches!(buf.last(), Some(b'\n' | b'\r')) {
                            buf.pop();
                        }
                        Some(String::from_utf8_lossy(&buf).into_owned())
                    }
                }
            }
        }
    }
}

/// Ctrl-C: while a decoder runs, the first press asks the script to stop
/// after the current token (stop_request, reason 4); a second press, or one
/// at any other time outside the line editor, quits.
static GENERATING: AtomicU8 = AtomicU8::new(0);
const IDLE: u8 = 0;
const RUNNING: u8 = 1;
const STOP_ASKED: u8 = 2;

fn install_interrupt_handler() {
    // Fails only if another handler is installed; plain SIGINT then still quits.
    let _ = ctrlc::set_handler(|| {
        if GENERATING
            .compare_exchange(RUNNING, STOP_ASKED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            typeahead::restore();
            println!();
            std::process::exit(130);
        }
    });
}

/// The hooks of one decoder run: the sampler at every ARGMAX, the display at every SYNC.
struct TurnHost<'a> {
    sampler: &'a mut Sampler,
    pieces: &'a [Vec<u8>],
    folder: &'a mut AsciiFolder,
    /// The EOS id when the `/eos` display is on.
    eos: Option<u32>,
    /// P(EOS) of the last ARGMAX, shown just before its token appears.
    pending_eos: Option<f64>,
    shown: u32,
    /// Tokens the repetition penalty looks back over (--repeat-last-n).
    window: u32,
    /// `--sampler mega65`: chooses instead of `sampler`.
    mega65: Option<&'a mut mega65::Mega65Sampler>,
    /// On a terminal: keys typed meanwhile, kept for the next prompt.
    typeahead: Option<typeahead::TypeAhead>,
    /// A chat template's end-of-reply token when it is not EOS (the script
    /// stops on EOS itself): a stop is requested when the model writes it.
    stop_token: Option<u32>,
    /// On a terminal: the answer wrapped at words to its width.
    wrap: Option<&'a mut wrap::Wrap>,
}

impl Host for TurnHost<'_> {
    fn on_argmax(&mut self, logits: &[f32], m: &Machine) -> Option<u32> {
        let rt = runtime(m);
        if let Some(eos) = self.eos {
            // Only for ARGMAXes whose result becomes a generated token.
            if rt.pos + 1 >= rt.prompt_len {
                let p = sampler::eos_probability(logits, eos, &self.sampler.settings);
                self.pending_eos = (p >= 0.05).then_some(p);
            }
        }
        if let Some(s) = self.mega65.as_deref_mut() {
            return s.on_argmax(logits, m);
        }
        if self.sampler.settings.is_greedy() {
            return None; // the core's own ARGMAX: exactly the hardware
        }
        // Prompt positions sample too (result discarded) so the generator
        // advances as §7.3 says.
        let from = rt.pos.saturating_sub(self.window - 1);
        let recent = read_tokens(m, from, rt.pos - from + 1);
        Some(self.sampler.choose(logits, &recent))
    }

    fn on_sync(&mut self, m: &mut Machine) {
        if let Some(t) = &mut self.typeahead {
            t.poll();
        }
        if GENERATING.load(Ordering::SeqCst) == STOP_ASKED {
            m.poke_u32((BASE + rt::STOP_REQUEST) as u64, 1);
        }
        let rt = runtime(m);
        let new = read_tokens(
            m,
            rt.prompt_len + self.shown,
            rt.generated.saturating_sub(self.shown),
        );
        if self.stop_token.is_some() && new.last().copied() == self.stop_token {
            m.poke_u32((BASE + rt::STOP_REQUEST) as u64, 1);
        }
        let mut text = String::new();
        for t in new {
            if let Some(p) = self.pending_eos.take() {
                text.push_str(&format!("<EOS {:.0}%>", p * 100.0));
            }
            if let Some(piece) = self.pieces.get(t as usize) {
                self.folder.push(piece, &mut text);
            }
            self.shown += 1;
        }
        match self.wrap.as_deref_mut() {
            Some(w) => print!("{}", w.feed(&text)),
            None => print!("{text}"),
        }
        let _ = std::io::stdout().flush();
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

/// SSNAIL images in `dir` (by the magic), sorted by name.
fn images_in(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.path())
                .filter(|p| crate::shared::is_image(p).unwrap_or(false))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
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

    /// One decoder turn (§7.4). `echo` prints the input's tokens first (one-shot runs).
    fn decoder_turn(&mut self, line: &str, echo: bool) -> Result<()> {
        let first = !self.started;
        let tokens = match &self.template {
            _ if line.is_empty() => Vec::new(),
            // A turn: the opener (FIRST, or the rest of the last reply's end and PREFIX),
            // the line without a begin token, then the reply's opener (§2.6).
            Some(c) => {
                let mut v = c.before_turn(first, self.reply_ended);
                v.extend(self.tokenize(line, false)?);
                v.extend_from_slice(&c.suffix);
                v
            }
            None => self.tokenize(line, first)?,
        };
        if first && tokens.is_empty() {
            if echo {
                bail!("{}: the prompt gives no tokens", self.name);
            }
            return Ok(()); // nothing to start from
        }
        if let Some(w) = &mut self.wrap {
            w.at_line_start();
        }
        if echo {
            // The line as typed; a template's turn around it is not shown.
            let shown = match &self.template {
                Some(_) => self.tokenize(line, false)?,
                None => tokens.clone(),
            };
            let mut text = String::new();
            for &t in &shown {
                if let Some(p) = self.pieces.get(t as usize) {
                    self.folder.push(p, &mut text);
                }
            }
            if self.template.is_some() {
                text.push('\n');
            }
            match &mut self.wrap {
                Some(w) => print!("{}", w.feed(&text)),
                None => print!("{text}"),
            }
        }
        let pos_before = if first {
            0
        } else {
            runtime(&self.dev.machine).pos
        };
        let ctx = self.ctx;
        let used = if first { 0 } else { self.used };
        // -c below the image's context: the turn stops where that context ends.
        let limited = ctx < self.header.max_ctx;
        let room = ctx.saturating_sub(used + tokens.len() as u32);
        if limited && room == 0 {
            println!();
            println!("[context full at {ctx} tokens: /reset to start again]");
            return Ok(());
        }
        let n = if limited { self.n.min(room) } else { self.n };
        self.fresh_budget();
        let traffic_before = self.dev.machine.traffic.total();
        let start = Instant::now();
        if let Some(m) = &mut self.mega65 {
            let s = self.sampler.settings;
            m.set(s.temperature, s.top_k, s.penalty, self.window)
                .map_err(|e| anyhow!("{}: {e}", self.name))?;
        }
        let mut host = TurnHost {
            sampler: &mut self.sampler,
            pieces: &self.pieces,
            folder: &mut self.folder,
            eos: self.show_eos.then_some(self.header.eos),
            pending_eos: None,
            shown: 0,
            window: self.window,
            mega65: self.mega65.as_mut(),
            typeahead: if self.interactive {
                typeahead::TypeAhead::start(0)
            } else {
                None
            },
            stop_token: self
                .template
                .as_ref()
                .map(|c| c.stop_token())
                .filter(|&t| t != self.header.eos),
            wrap: self.wrap.as_mut(),
        };
        GENERATING.store(RUNNING, Ordering::SeqCst);
        let result = if first {
            self.dev.generate(&tokens, n, &mut host)
        } else {
            self.dev.continue_generation(&tokens, n, &mut host)
        };
        GENERATING.store(IDLE, Ordering::SeqCst);
        if let Some(t) = host.typeahead.take() {
            self.typed.extend(t.finish());
        }
        let secs = start.elapsed().as_secs_f64();
        if let Some(w) = &mut self.wrap {
            print!("{}", w.flush());
        }
        let generation = match result {
            Ok(g) => g,
            Err(HostError::TooManyTokens { .. }) => {
                println!();
                println!("[context full at {ctx} tokens: /reset to start again]");
                return Ok(());
            }
            Err(e) => {
                println!();
                // The machine state is not to be trusted: the next turn starts afresh.
                self.started = false;
                bail!("{}: {e}", self.name);
            }
        };
        self.started = true;
        if let Some(c) = &self.template {
            self.reply_ended = generation.tokens.last() == Some(&c.stop_token());
        }
        self.used = used + tokens.len() as u32 + generation.tokens.len() as u32;
        println!();
        match generation.stop_reason {
            stop::EOS => println!("[end of text]"),
            stop::CONTEXT_FULL => println!("[context full at {ctx} tokens: /reset to start again]"),
            stop::COUNT if limited && self.used >= ctx => {
                println!("[context full at {ctx} tokens (-c): /reset to start again]")
            }
            stop::REQUESTED => println!("[stopped]"),
            _ => {}
        }
        // Positions the script processed: 0..pos on a first turn, pos_before..pos on a continuation.
        let positions = generation.runtime.pos.saturating_sub(pos_before) as u64;
        let traffic = self.dev.machine.traffic.total() - traffic_before;
        self.totals.positions += positions;
        self.totals.secs += secs;
        eprintln!(
            "{}",
            status(&format!(
                "[{positions} positions in {secs:.2}s: {}]",
                self.speeds(positions, secs, traffic)
            ))
        );
        Ok(())
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

    /// One encoder line (§7.4): embed, rank the stored lines, store.
    fn encoder_line(&mut self, line: &str) -> Result<()> {
        if line.trim().is_empty() {
            return Ok(());
        }
        let tokens = self.tokenize(line, true)?;
        let ctx = self.ctx;
        if tokens.len() > TOKEN_SLOTS as usize || tokens.len() > ctx as usize {
            println!("[too long: {} tokens, maximum {ctx}]", tokens.len());
            return Ok(());
        }
        self.fresh_budget();
        let traffic_before = self.dev.machine.traffic.total();
        let start = Instant::now();
        let enc = self
            .dev
            .encode(&tokens, &mut ssnail_core::NoHost)
            .map_err(|e| anyhow!("{}: {e}", self.name))?;
        let secs = start.elapsed().as_secs_f64();
        if enc.stop_reason != stop::COUNT {
            println!("[too long: {} tokens, maximum {ctx}]", tokens.len());
            return Ok(());
        }
        let traffic = self.dev.machine.traffic.total() - traffic_before;
        self.totals.positions += tokens.len() as u64;
        self.totals.secs += secs;
        let norm = enc
            .output
            .iter()
            .map(|v| (*v as f64).powi(2))
            .sum::<f64>()
            .sqrt();
        let unit: Vec<f32> = if norm > 0.0 {
            enc.output
                .iter()
                .map(|v| (*v as f64 / norm) as f32)
                .collect()
        } else {
            enc.output.clone()
        };
        if self.stored.is_empty() {
            println!("  [{}-dimensional embedding stored]", unit.len());
        }
        let mut ranked: Vec<(f64, &str)> = self
            .stored
            .iter()
            .map(|(text, v)| {
                let dot: f64 = v
                    .iter()
                    .zip(&unit)
                    .map(|(a, b)| *a as f64 * *b as f64)
                    .sum();
                (dot, text.as_str())
            })
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.cmp(a.1)));
        for (score, text) in ranked.iter().take(3) {
            println!("  {score:+.3}  {text}");
        }
        let mb = traffic as f64 / 1e6;
        eprintln!(
            "{}",
            status(&format!(
                "[{} tokens in {:.1} ms on this PC, ~{:.1} ms at {} MB/s]",
                tokens.len(),
                secs * 1000.0,
                mb / self.bandwidth * 1000.0,
                self.bandwidth,
            ))
        );
        self.stored.push((line.to_string(), unit));
        Ok(())
    }

    fn stats(&self) {
        let m = &self.dev.machine;
        println!(
            "[{} instructions, {:.1} MB RAM traffic, pos {}]",
            m.instructions,
            m.traffic.total() as f64 / 1e6,
            runtime(m).pos
        );
        println!(
            "{}",
            status(&format!(
                "[{} positions in {:.2}s: {}]",
                self.totals.positions,
                self.totals.secs,
                self.speeds(self.totals.positions, self.totals.secs, m.traffic.total())
            ))
        );
        if self.totals.positions > 0 {
            let mb_per_token = m.traffic.total() as f64 / 1e6 / self.totals.positions as f64;
            println!(
                "[RAM traffic {mb_per_token:.2} MB/token -> ~{:.1} tokens/s at {} MB/s]",
                self.bandwidth / mb_per_token,
                self.bandwidth
            );
        }
    }

    /// A `/command` line (§7.5). A bad argument is an error naming the
    /// command; an unknown command says so; /help lists them.
    fn command(&mut self, line: &str) -> Next {
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or("");
        let arg = words.next();
        let rest = line.trim_start()[cmd.len()..].trim();
        let encoder = self.header.is_encoder();
        // Decoder settings mean nothing to an encoder, which embeds each line whole.
        if encoder && DECODER_ONLY.contains(&cmd) {
            println!(
                "[{cmd}: this is an encoder; it embeds each line whole and generates nothing]"
            );
            return Next::Go;
        }
        let s = &mut self.sampler.settings;
        let bad = |what: &str| println!("[{cmd} {}: {what}]", arg.unwrap_or("(nothing)"));
        match cmd {
            "/quit" => return Next::Quit,
            "/help" => println!("{}", help_text(encoder)),
            "/reset" => {
                self.started = false;
                self.stored.clear();
                self.folder = AsciiFolder::new();
                println!("[context cleared]");
            }
            "/n" => match arg.and_then(|a| a.parse::<u32>().ok()).filter(|n| *n > 0) {
                Some(n) => {
                    self.n = n;
                    println!("[{} tokens per turn]", self.n);
                }
                None => bad("needs a whole number of tokens, at least 1"),
            },
            "/temp" => match arg.map(finite) {
                Some(Ok(t)) => {
                    s.temperature = t;
                    let mode = self.mode_line();
                    println!("{mode}");
                }
                _ => bad("needs a temperature (a number; 0 = greedy)"),
            },
            "/topk" => match arg.and_then(|a| a.parse::<u32>().ok()) {
                Some(k) => {
                    s.top_k = k;
                    let mode = self.mode_line();
                    println!("{mode}");
                }
                None => bad("needs a whole number (0 = off)"),
            },
            "/penalty" => match arg.map(positive) {
                Some(Ok(p)) => {
                    s.penalty = p;
                    let mode = self.mode_line();
                    println!("{mode}");
                }
                _ => bad("needs a number > 0 (1 = off)"),
            },
            "/greedy" => {
                s.temperature = 0.0;
                s.penalty = 1.0;
                println!(
                    "[greedy (temperature 0, penalty 1.0), as the v1 hardware; /temp T samples again]"
                );
            }
            "/hw" => {
                let m = &mut self.dev.machine;
                m.numerics = match m.numerics {
                    Numerics::Hardware => Numerics::Float,
                    Numerics::Float => Numerics::Hardware,
                };
                println!("[{}]", self.numerics_name());
            }
            "/eos" => {
                self.show_eos = !self.show_eos;
                if self.show_eos {
                    println!("[EOS display on: <EOS n%> before a token when P(end of text) >= 5%]");
                } else {
                    println!("[EOS display off]");
                }
            }
            "/seed" => match arg.and_then(|a| a.parse::<u64>().ok()) {
                Some(seed) => {
                    self.sampler.reseed(seed);
                    match self.mega65.as_mut().map(|m| m.reseed(seed)) {
                        Some(Err(e)) => println!("[{e}]"),
                        _ => println!("[seed {seed}]"),
                    }
                }
                None => bad("needs a whole number"),
            },
            "/stats" => self.stats(),
            "/tokens" if rest.is_empty() => bad("needs text to tokenize"),
            "/tokens" => match self.tokenize(rest, true) {
                Ok(ids) => {
                    // Each id with its text, as the image's vocab table has it.
                    let shown: Vec<String> = ids
                        .iter()
                        .map(|&id| {
                            let p = self.pieces.get(id as usize).map_or(&[][..], |p| &p[..]);
                            match p {
                                [] if id == self.header.bos => format!("{id} (begin)"),
                                [] if id == self.header.eos => format!("{id} (end)"),
                                [] => format!("{id} (special)"),
                                p => format!("{id} {:?}", String::from_utf8_lossy(p)),
                            }
                        })
                        .collect();
                    println!("[{} tokens: {}]", ids.len(), shown.join(", "));
                }
                Err(e) => println!("[/tokens: {e:#}]"),
            },
            "/models" => {
                let dir = match self.image.parent() {
                    Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let list = images_in(&dir);
                match arg {
                    None => {
                        println!("[images in {}:]", dir.display());
                        let me = std::fs::canonicalize(&self.image).ok();
                        for (i, p) in list.iter().enumerate() {
                            let current = std::fs::canonicalize(p).ok() == me;
                            println!("  {}", model_line(i + 1, p, current));
                        }
                        println!("[/models N continues with image N]");
                    }
                    Some(a) => match a
                        .parse::<usize>()
                        .ok()
                        .and_then(|n| list.get(n.wrapping_sub(1)))
                    {
                        Some(p) => return Next::Open(p.clone()),
                        None => bad(&format!("needs an image number, 1 to {}", list.len())),
                    },
                }
            }
            _ => println!("[unknown command {cmd}: /help lists the commands]"),
        }
        Next::Go
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
    let n = args.model.n.unwrap_or(DEFAULT_N);
    if n == 0 {
        bail!("-n 0: a turn needs at least one token");
    }
    let dev = args.model.load_at(image)?;
    let header = dev.header();
    let ctx = args.model.context(&header)?;
    // Check the tokenizer tables once, so a broken image fails at start.
    ImageTokenizer::new(dev.machine.mem()).map_err(|e| anyhow!("{name}: {e}"))?;
    let pieces = (0..header.n_vocab).map(|id| dev.vocab_piece(id)).collect();
    let a = &args.sampling;
    let settings = Settings {
        top_p: a.top_p,
        min_p: a.min_p,
        ..if args.greedy {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ssnail_format::image::{h, rt, BASE, TOKENS};

    /// A machine with the token buffer at $8001000 holding id i at slot i.
    fn machine(pos: u32, prompt_len: u32) -> Machine {
        let mut m = Machine::new(0x10000);
        m.poke_u32((BASE as usize + h::TOKENS) as u64, TOKENS);
        for i in 0..200 {
            m.poke_u32((TOKENS + 4 * i) as u64, i);
        }
        m.poke_u32((BASE + rt::POS) as u64, pos);
        m.poke_u32((BASE + rt::PROMPT_LEN) as u64, prompt_len);
        m
    }

    fn host<'a>(sampler: &'a mut Sampler, folder: &'a mut AsciiFolder) -> TurnHost<'a> {
        TurnHost {
            sampler,
            pieces: &[],
            folder,
            eos: Some(2),
            pending_eos: None,
            shown: 0,
            window: 64,
            mega65: None,
            typeahead: None,
            stop_token: None,
            wrap: None,
        }
    }

    #[test]
    fn penalty_window_is_the_last_64_tokens_up_to_pos() {
        let settings = Settings::new(1.0, 0, 10.0);
        let mut sampler = Sampler::new(settings, 5);
        let mut folder = AsciiFolder::new();
        let mut h = host(&mut sampler, &mut folder);
        // Equal high logits for ids 36, 37, 100, 101: at pos 100 the window is
        // slots 37..=100, so 37 and 100 are penalised and never drawn.
        let mut logits = vec![-50.0f32; 128];
        for id in [36, 37, 100, 101] {
            logits[id] = 10.0;
        }
        let m = machine(100, 300);
        let mut seen = [0; 128];
        for _ in 0..200 {
            seen[h.on_argmax(&logits, &m).unwrap() as usize] += 1;
        }
        assert_eq!((seen[37], seen[100]), (0, 0), "{:?}", &seen[30..110]);
        assert!(seen[36] > 50 && seen[101] > 50);
    }

    #[test]
    fn prompt_positions_draw_too_and_eos_shows_only_for_generated_tokens() {
        let settings = Settings::new(0.8, 40, 1.15);
        let logits: Vec<f32> = (0..128).map(|i| ((i * 37) % 11) as f32 * 0.3).collect();
        let mut direct = Sampler::new(settings, 9);
        let mut sampler = Sampler::new(settings, 9);
        let mut folder = AsciiFolder::new();
        let mut h = host(&mut sampler, &mut folder);
        // Positions 0..9 of a 10-token prompt, then generated positions: every
        // ARGMAX draws, so the choices follow the generator step by step.
        for pos in 0..20u32 {
            let m = machine(pos, 10);
            let from = pos.saturating_sub(63);
            let recent: Vec<u32> = (from..=pos).collect();
            assert_eq!(
                h.on_argmax(&logits, &m),
                Some(direct.choose(&logits, &recent))
            );
        }
        // EOS (id 2) dominant: shown for a generated token, not at a prompt position.
        let mut eos_logits = vec![0.0f32; 128];
        eos_logits[2] = 5.0;
        h.pending_eos = None;
        h.on_argmax(&eos_logits, &machine(3, 10));
        assert_eq!(h.pending_eos, None);
        h.on_argmax(&eos_logits, &machine(9, 10));
        assert!(h.pending_eos.unwrap() > 0.5);
        // Greedy: the core's own ARGMAX decides (no replacement).
        h.sampler.settings.temperature = 0.0;
        assert_eq!(h.on_argmax(&logits, &machine(12, 10)), None);
    }
}

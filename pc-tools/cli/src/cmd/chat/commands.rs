//! The `/command` lines of `ssnail chat` (spec §7.5): what each does, its
//! arguments' checks, and the `/help`, `/stats` and `/models` listings.

use super::{status, Chat, Next};
use crate::shared::{finite, positive};
use ssnail_core::{runtime, Numerics};
use ssnail_format::image::Header;
use ssnail_tokenizer::AsciiFolder;
use std::path::PathBuf;

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

impl Chat {
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
    pub(super) fn command(&mut self, line: &str) -> Next {
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
}

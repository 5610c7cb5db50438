//! A decoder's turn in `ssnail chat` (spec §7.4): the line (inside the chat
//! template's turn, if any) goes into the context, the script continues it,
//! and the stop reason and speed are reported.

use super::host::TurnHost;
use super::interrupt::{GENERATING, IDLE, RUNNING};
use super::{status, typeahead, Chat};
use anyhow::{anyhow, bail, Result};
use ssnail_core::{runtime, HostError};
use ssnail_format::image::stop;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Chat {
    /// One decoder turn (§7.4). `echo` prints the input's tokens first (one-shot runs).
    pub(super) fn decoder_turn(&mut self, line: &str, echo: bool) -> Result<()> {
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
}

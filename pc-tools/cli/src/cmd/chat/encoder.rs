//! An encoder's line in `ssnail chat` (spec §7.4): the line is embedded and
//! the earlier lines are ranked by cosine similarity to it.

use super::{status, Chat};
use anyhow::{anyhow, Result};
use ssnail_format::image::{stop, TOKEN_SLOTS};
use std::time::Instant;

impl Chat {
    /// One encoder line (§7.4): embed, rank the stored lines, store.
    pub(super) fn encoder_line(&mut self, line: &str) -> Result<()> {
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
}

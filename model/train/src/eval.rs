//! Answers of a GGUF as it ships: converted to an SSNAIL image (Q8_0 kept, F16 KV cache, an
//! 8 MB layout) and run greedily on `ssnail_core` in hardware numerics (the bits the FPGA core
//! and the MEGA65's software core compute) or in the float reference (`ssnail run --float`),
//! the prompt tokenized by the image's own tokenizer as the MEGA65 program does.

use anyhow::{anyhow, Result};
use ssnail_convert::{Options, Policy};
use ssnail_core::{Host, Numerics, Ssnail};
use ssnail_gguf::Gguf;
use ssnail_tokenizer::ImageTokenizer;
use std::path::Path;

struct Quiet;
impl Host for Quiet {}

/// Keeps the smallest gap between the two largest logits of any ARGMAX whose choice is kept (the
/// greedy choice's margin: where it is small, other numerics may choose otherwise).
struct Margin {
    min: f32,
}
impl Host for Margin {
    fn on_argmax(&mut self, logits: &[f32], m: &ssnail_core::Machine) -> Option<u32> {
        // A prompt position before the last (an image made with `--all-logits` runs ARGMAX
        // there too): its choice is not kept.
        let rt = ssnail_core::runtime(m);
        if rt.pos + 1 < rt.prompt_len {
            return None;
        }
        let (mut a, mut b) = (f32::NEG_INFINITY, f32::NEG_INFINITY);
        for &x in logits {
            if x > a {
                b = a;
                a = x;
            } else if x > b {
                b = x;
            }
        }
        self.min = self.min.min(a - b);
        None
    }
}

pub struct Runner {
    dev: Ssnail,
    img: Vec<u8>,
}

/// One answer: the generated ids (with the EOS when the model stopped there) and its text.
pub struct Answer {
    pub ids: Vec<u32>,
    pub text: String,
    pub ended: bool,
}

impl Runner {
    pub fn new(gguf: &Path, ctx: u32, numerics: Numerics) -> Result<Runner> {
        let g = Gguf::open(gguf)?;
        let opts = Options {
            ctx: Some(ctx),
            policy: Policy::Keep,
            ..Options::default()
        };
        let img = ssnail_convert::convert(&g, &opts)
            .map_err(|e| anyhow!("{e}"))?
            .image;
        let (mut dev, _) = Ssnail::load_bytes(&img, None).map_err(|e| anyhow!("{e}"))?;
        dev.machine.numerics = numerics;
        Ok(Runner { dev, img })
    }
    pub fn image(&self) -> &[u8] {
        &self.img
    }
    pub fn prompt(&self, q: &str) -> Result<Vec<u32>> {
        let tok = ImageTokenizer::new(self.dev.machine.mem()).map_err(anyhow::Error::msg)?;
        Ok(tok.encode(q, true))
    }
    pub fn answer(&mut self, q: &str) -> Result<Answer> {
        self.answer_with(q, &mut Quiet)
    }

    /// The answer and the smallest margin of its greedy choices (top logit minus the next),
    /// over the answer's positions (the last prompt position's choice included).
    pub fn answer_and_margin(&mut self, q: &str) -> Result<(Answer, f32)> {
        let mut m = Margin { min: f32::INFINITY };
        let a = self.answer_with(q, &mut m)?;
        Ok((a, m.min))
    }

    fn answer_with(&mut self, q: &str, host: &mut dyn Host) -> Result<Answer> {
        let p = self.prompt(q)?;
        let h = self.dev.header();
        let n = h.max_ctx - p.len() as u32;
        let out = self.dev.generate(&p, n, host).map_err(|e| anyhow!("{e}"))?;
        let mut bytes = Vec::new();
        let mut ended = false;
        for &t in &out.tokens {
            if t == h.eos {
                ended = true;
                break;
            }
            bytes.extend(self.dev.vocab_piece(t));
        }
        let s = String::from_utf8_lossy(&bytes).to_string();
        Ok(Answer {
            ids: out.tokens,
            text: s.strip_prefix(' ').unwrap_or(&s).to_string(),
            ended,
        })
    }
}

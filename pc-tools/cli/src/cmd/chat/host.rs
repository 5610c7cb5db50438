//! The host of one decoder run in `ssnail chat` (spec §6.3): the sampler at
//! every ARGMAX, the display of the tokens the script publishes at every SYNC.

use super::interrupt::{GENERATING, STOP_ASKED};
use super::{mega65, sampler, typeahead, wrap};
use sampler::Sampler;
use ssnail_core::{read_tokens, runtime, Host, Machine};
use ssnail_format::image::{rt, BASE};
use ssnail_tokenizer::AsciiFolder;
use std::io::Write;
use std::sync::atomic::Ordering;

/// The hooks of one decoder run: the sampler at every ARGMAX, the display at every SYNC.
pub(super) struct TurnHost<'a> {
    pub(super) sampler: &'a mut Sampler,
    pub(super) pieces: &'a [Vec<u8>],
    pub(super) folder: &'a mut AsciiFolder,
    /// The EOS id when the `/eos` display is on.
    pub(super) eos: Option<u32>,
    /// P(EOS) of the last ARGMAX, shown just before its token appears.
    pub(super) pending_eos: Option<f64>,
    pub(super) shown: u32,
    /// Tokens the repetition penalty looks back over (--repeat-last-n).
    pub(super) window: u32,
    /// `--sampler mega65`: chooses instead of `sampler`.
    pub(super) mega65: Option<&'a mut mega65::Mega65Sampler>,
    /// On a terminal: keys typed meanwhile, kept for the next prompt.
    pub(super) typeahead: Option<typeahead::TypeAhead>,
    /// A chat template's end-of-reply token when it is not EOS (the script
    /// stops on EOS itself): a stop is requested when the model writes it.
    pub(super) stop_token: Option<u32>,
    /// On a terminal: the answer wrapped at words to its width.
    pub(super) wrap: Option<&'a mut wrap::Wrap>,
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
        // Only an ARGMAX whose result becomes a generated token draws (§7.3): an image made
        // with --all-logits runs ARGMAX at every prompt position too, and draws there would
        // change the text for the same seed.
        if rt.pos + 1 < rt.prompt_len {
            return None;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use sampler::Settings;
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
        let m = machine(100, 101);
        let mut seen = [0; 128];
        for _ in 0..200 {
            seen[h.on_argmax(&logits, &m).unwrap() as usize] += 1;
        }
        assert_eq!((seen[37], seen[100]), (0, 0), "{:?}", &seen[30..110]);
        assert!(seen[36] > 50 && seen[101] > 50);
    }

    #[test]
    fn only_generated_positions_draw_and_eos_shows_only_for_generated_tokens() {
        let settings = Settings::new(0.8, 40, 1.15);
        let logits: Vec<f32> = (0..128).map(|i| ((i * 37) % 11) as f32 * 0.3).collect();
        let mut direct = Sampler::new(settings, 9);
        let mut sampler = Sampler::new(settings, 9);
        let mut folder = AsciiFolder::new();
        let mut h = host(&mut sampler, &mut folder);
        // Positions 0..9 of a 10-token prompt, then generated positions: the ARGMAXes at
        // positions 0..8 (an --all-logits image's) keep the core's choice and leave the
        // generator alone; from position 9 on the choices follow it step by step.
        for pos in 0..20u32 {
            let m = machine(pos, 10);
            if pos < 9 {
                assert_eq!(h.on_argmax(&logits, &m), None, "position {pos}");
                continue;
            }
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

//! `--sampler mega65`: the MEGA65 program's fixed-point sampler (spec §7.6,
//! defined in `ssnail_format::sampler`) at the ARGMAX hook, so that the PC
//! chooses exactly the tokens the MEGA65 chooses with the same seed.
//!
//! The MEGA65 samples once per generated token, from the logits of the
//! position whose prediction it is; prompt positions keep the core's ARGMAX
//! (their result is thrown away and the generator does not move).

use ssnail_core::{read_tokens, runtime, Machine};
use ssnail_format::sampler::{window_start, Sampler, Settings};

pub struct Mega65Sampler {
    pub sampler: Sampler,
}

impl Mega65Sampler {
    /// `--seed` for this sampler: a u32.
    pub fn new(seed: u64) -> Result<Mega65Sampler, String> {
        Ok(Mega65Sampler {
            sampler: Sampler::new(Settings::default(), seed32(seed)?),
        })
    }

    /// Takes over the chat's decimal settings (temperature ≤ 0: greedy).
    pub fn set(
        &mut self,
        temperature: f64,
        top_k: u32,
        penalty: f64,
        window: u32,
    ) -> Result<(), String> {
        self.sampler.settings =
            Settings::from_decimal(temperature.max(0.0), top_k, penalty, window)?;
        Ok(())
    }

    pub fn reseed(&mut self, seed: u64) -> Result<(), String> {
        self.sampler.reseed(seed32(seed)?);
        Ok(())
    }

    /// The ARGMAX hook: the token replacing the core's, or None to keep it.
    pub fn on_argmax(&mut self, logits: &[f32], m: &Machine) -> Option<u32> {
        let rt = runtime(m);
        if rt.pos + 1 < rt.prompt_len || self.sampler.settings.is_greedy() {
            return None;
        }
        let from = window_start(rt.pos, &self.sampler.settings);
        let recent = read_tokens(m, from, rt.pos - from + 1);
        self.sampler.choose(logits, &recent)
    }
}

fn seed32(seed: u64) -> Result<u32, String> {
    u32::try_from(seed)
        .map_err(|_| format!("seed {seed}: the mega65 sampler takes 0 to 4294967295"))
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

    #[test]
    fn only_generated_positions_sample_with_the_window_ending_at_pos() {
        let logits: Vec<f32> = (0..128).map(|i| ((i * 37) % 11) as f32 * 0.3).collect();
        let mut hook = Mega65Sampler::new(9).unwrap();
        hook.set(0.8, 40, 1.15, 64).unwrap();
        let mut direct = Sampler::new(hook.sampler.settings, 9);
        // Prompt positions keep the ARGMAX and leave the generator alone.
        for pos in 0..9 {
            assert_eq!(hook.on_argmax(&logits, &machine(pos, 10)), None);
        }
        for pos in 9..80u32 {
            let from = pos.saturating_sub(63);
            let recent: Vec<u32> = (from..=pos).collect();
            assert_eq!(
                hook.on_argmax(&logits, &machine(pos, 10)),
                direct.choose(&logits, &recent)
            );
        }
        // Temperature 0: the ARGMAX stays.
        hook.set(0.0, 40, 1.15, 64).unwrap();
        assert_eq!(hook.on_argmax(&logits, &machine(20, 10)), None);
    }

    #[test]
    fn settings_and_seeds_outside_the_mega65_ranges_are_refused() {
        let mut hook = Mega65Sampler::new(u32::MAX as u64).unwrap();
        assert!(Mega65Sampler::new(1 << 32).is_err());
        assert!(hook.reseed(1 << 40).is_err());
        assert!(hook.set(0.8, 0, 1.15, 64).is_err());
        assert!(hook.set(0.8, 40, 0.5, 64).is_err());
        assert!(hook.set(0.8, 40, 1.15, 100).is_err());
        // A negative temperature is greedy, as --temp says.
        hook.set(-1.0, 40, 1.15, 64).unwrap();
        assert!(hook.sampler.settings.is_greedy());
    }
}

//! The chat front end's sampler (spec §7.3): an emulator-only preview of
//! sampling at the ARGMAX instruction; the v1 hardware ARGMAX is greedy.
//!
//! Logits → (repetition penalty over the distinct recent tokens) → top-k
//! (ties at the threshold survive) → top-p and min-p on the probabilities at
//! temperature 1 (as llama.cpp's chain, which applies them before the
//! temperature) → ÷ temperature → softmax in double precision → one draw. Written here because it is these few exact rules,
//! not a general sampling library; the draw itself is rand's `WeightedIndex`
//! over a seeded ChaCha generator (reproducible across platforms and rand
//! versions, unlike `StdRng`).

use rand::distr::{weighted::WeightedIndex, Distribution};
use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

/// Sampling settings; temperature ≤ 0 is greedy (first maximum).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    pub temperature: f64,
    /// 0 = off.
    pub top_k: u32,
    /// 1 = off.
    pub penalty: f64,
    /// Nucleus: the most probable tokens whose probabilities (at temperature 1) add up to at
    /// least this survive; 1 = off.
    pub top_p: f64,
    /// Tokens less probable (at temperature 1) than this times the most probable are cut;
    /// 0 = off.
    pub min_p: f64,
}

impl Settings {
    /// Temperature, top-k and penalty; top-p and min-p off.
    pub fn new(temperature: f64, top_k: u32, penalty: f64) -> Settings {
        Settings {
            temperature,
            top_k,
            penalty,
            top_p: 1.0,
            min_p: 0.0,
        }
    }

    pub fn is_greedy(&self) -> bool {
        self.temperature <= 0.0
    }
}

/// The settings and the random generator they draw from.
pub struct Sampler {
    pub settings: Settings,
    rng: ChaCha12Rng,
}

impl Sampler {
    pub fn new(settings: Settings, seed: u64) -> Sampler {
        Sampler {
            settings,
            rng: ChaCha12Rng::seed_from_u64(seed),
        }
    }

    /// A fresh generator with this seed (the `/seed` command).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha12Rng::seed_from_u64(seed);
    }

    /// Choose the next token from `logits`, `recent` being the context tokens
    /// the repetition penalty looks at (repeats allowed). Greedy settings take
    /// the first maximum and leave the generator untouched.
    pub fn choose(&mut self, logits: &[f32], recent: &[u32]) -> u32 {
        if self.settings.is_greedy() {
            return first_max(logits);
        }
        let p = probabilities(logits, recent, &self.settings);
        match WeightedIndex::new(&p) {
            Ok(dist) => dist.sample(&mut self.rng) as u32,
            // Non-finite logits (no valid distribution): fall back to greedy.
            Err(_) => first_max(logits),
        }
    }
}

/// Index of the first maximum (the hardware ARGMAX; NaN never wins).
pub fn first_max(v: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] || v[best].is_nan() && !x.is_nan() {
            best = i;
        }
    }
    best as u32
}

/// The probabilities the sampler draws from (§7.3 step 2), in f64.
pub fn probabilities(logits: &[f32], recent: &[u32], s: &Settings) -> Vec<f64> {
    let mut z: Vec<f64> = logits.iter().map(|&v| v as f64).collect();
    if s.penalty != 1.0 {
        let mut distinct = recent.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        for t in distinct {
            if let Some(v) = z.get_mut(t as usize) {
                *v = if *v > 0.0 {
                    *v / s.penalty
                } else {
                    *v * s.penalty
                };
            }
        }
    }
    let k = s.top_k as usize;
    if k > 0 && k < z.len() {
        // The k-th largest value (duplicates counted); everything equal to it survives.
        let mut sorted = z.clone();
        let (_, kth, _) = sorted.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
        let threshold = *kth;
        for v in &mut z {
            if *v < threshold {
                *v = f64::NEG_INFINITY;
            }
        }
    }
    if s.top_p < 1.0 || s.min_p > 0.0 {
        let p1 = softmax(&z);
        let mut cut = 0.0f64;
        if s.top_p < 1.0 {
            // The smallest most-probable set reaching top_p; ties with its least probable
            // member survive (as in top-k).
            let mut sorted: Vec<f64> = p1.iter().copied().filter(|p| *p > 0.0).collect();
            sorted.sort_unstable_by(|a, b| b.total_cmp(a));
            let mut sum = 0.0;
            for &p in &sorted {
                sum += p;
                cut = p;
                if sum >= s.top_p {
                    break;
                }
            }
        }
        if s.min_p > 0.0 {
            let max = p1.iter().copied().fold(0.0, f64::max);
            cut = cut.max(s.min_p * max);
        }
        for (v, p) in z.iter_mut().zip(&p1) {
            if *p < cut {
                *v = f64::NEG_INFINITY;
            }
        }
    }
    for v in &mut z {
        *v /= s.temperature;
    }
    softmax(&z)
}

/// exp(z − max) normalised.
fn softmax(z: &[f64]) -> Vec<f64> {
    let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut p: Vec<f64> = z.iter().map(|v| (v - max).exp()).collect();
    let sum: f64 = p.iter().sum();
    for v in &mut p {
        *v /= sum;
    }
    p
}

/// P(EOS) for the `/eos` display: temperature and top-k but no repetition
/// penalty; 0 when EOS is outside the logits; greedy: 1 if EOS is the argmax.
pub fn eos_probability(logits: &[f32], eos: u32, s: &Settings) -> f64 {
    if eos as usize >= logits.len() {
        return 0.0;
    }
    if s.is_greedy() {
        return if first_max(logits) == eos { 1.0 } else { 0.0 };
    }
    let no_penalty = Settings { penalty: 1.0, ..*s };
    probabilities(logits, &[], &no_penalty)[eos as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(temperature: f64, top_k: u32, penalty: f64) -> Settings {
        Settings::new(temperature, top_k, penalty)
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-12, "{a:?} vs {b:?}");
        }
    }

    /// softmax by hand for the expected values.
    fn softmax(z: &[f64]) -> Vec<f64> {
        let e: Vec<f64> = z.iter().map(|v| v.exp()).collect();
        let sum: f64 = e.iter().sum();
        e.iter().map(|v| v / sum).collect()
    }

    #[test]
    fn temperature_scales_before_softmax() {
        let p = probabilities(&[1.0, 2.0, 0.0], &[], &s(0.5, 0, 1.0));
        close(&p, &softmax(&[2.0, 4.0, 0.0]));
    }

    #[test]
    fn penalty_divides_positive_multiplies_negative_once_per_distinct_token() {
        // Token 0 appears three times, 2 once; 1 not at all.
        let p = probabilities(&[3.0, 1.0, -2.0], &[0, 0, 2, 0], &s(1.0, 0, 1.5));
        close(&p, &softmax(&[2.0, 1.0, -3.0]));
        // Ids beyond the vocabulary are ignored.
        let p = probabilities(&[3.0, 1.0], &[7, 1], &s(1.0, 0, 2.0));
        close(&p, &softmax(&[3.0, 0.5]));
        // A zero logit is "not > 0": multiplied, stays 0.
        let p = probabilities(&[0.0, 1.0], &[0], &s(1.0, 0, 2.0));
        close(&p, &softmax(&[0.0, 1.0]));
    }

    #[test]
    fn top_k_keeps_ties_at_the_threshold() {
        // k = 2: the 2nd largest is 2.0, shared by two tokens: three survive.
        let p = probabilities(&[1.0, 2.0, 3.0, 2.0, 0.5], &[], &s(1.0, 2, 1.0));
        let kept = softmax(&[2.0, 3.0, 2.0]);
        close(&p, &[0.0, kept[0], kept[1], kept[2], 0.0]);
        // k ≥ vocab and k = 0 are off.
        let all = softmax(&[1.0, 2.0, 3.0]);
        close(&probabilities(&[1.0, 2.0, 3.0], &[], &s(1.0, 3, 1.0)), &all);
        close(&probabilities(&[1.0, 2.0, 3.0], &[], &s(1.0, 0, 1.0)), &all);
        // Top-k sees the penalised, tempered values: penalty can reorder.
        let p = probabilities(&[4.0, 3.0, 1.0], &[0], &s(1.0, 1, 2.0));
        close(&p, &[0.0, 1.0, 0.0]);
    }

    #[test]
    fn greedy_is_the_first_maximum_and_leaves_the_rng_alone() {
        let mut a = Sampler::new(s(0.0, 40, 1.15), 7);
        assert_eq!(a.choose(&[1.0, 5.0, 5.0, -1.0], &[1]), 1);
        assert_eq!(first_max(&[f32::NAN, 2.0, 2.0]), 1);
        // The generator did not move: the next sampled draw equals a fresh one's.
        a.settings = s(1.0, 0, 1.0);
        let mut b = Sampler::new(s(1.0, 0, 1.0), 7);
        let logits = [0.3f32, 0.1, 0.2, 0.0, 0.25];
        for _ in 0..20 {
            assert_eq!(a.choose(&logits, &[]), b.choose(&logits, &[]));
        }
    }

    #[test]
    fn draws_follow_the_probabilities_and_the_seed() {
        let logits = [0.0f32, 1.0, 2.0, -1.0, 1.5];
        let set = s(0.8, 3, 1.0);
        let p = probabilities(&logits, &[], &set);
        let mut sampler = Sampler::new(set, 42);
        let n = 200_000;
        let mut counts = [0usize; 5];
        for _ in 0..n {
            counts[sampler.choose(&logits, &[]) as usize] += 1;
        }
        // Cut tokens never drawn; the others within 5 standard deviations.
        assert_eq!(counts[0] + counts[3], 0);
        for i in [1, 2, 4] {
            let expect = p[i] * n as f64;
            let sd = (expect * (1.0 - p[i])).sqrt();
            assert!(
                (counts[i] as f64 - expect).abs() < 5.0 * sd,
                "{counts:?} vs {p:?}"
            );
        }
        // Same seed, same sequence; another seed, another sequence.
        let seq = |seed| {
            let mut r = Sampler::new(set, seed);
            (0..64).map(|_| r.choose(&logits, &[])).collect::<Vec<_>>()
        };
        assert_eq!(seq(1), seq(1));
        assert_ne!(seq(1), seq(2));
        let mut r = Sampler::new(set, 5);
        let first: Vec<u32> = (0..8).map(|_| r.choose(&logits, &[])).collect();
        r.reseed(5);
        let again: Vec<u32> = (0..8).map(|_| r.choose(&logits, &[])).collect();
        assert_eq!(first, again);
    }

    #[test]
    fn top_p_keeps_the_smallest_most_probable_set_reaching_p_before_the_temperature() {
        // At temperature 1: p = softmax(3, 2, 1, 0) = 0.644, 0.237, 0.087, 0.032.
        let z = [3.0f32, 2.0, 1.0, 0.0];
        let p1 = softmax(&[3.0, 2.0, 1.0, 0.0]);
        assert!(p1[0] < 0.9 && p1[0] + p1[1] > 0.85);
        // top-p 0.85: the first two reach it; at temperature 0.5 the two are re-weighted.
        let set = Settings {
            top_p: 0.85,
            ..s(0.5, 0, 1.0)
        };
        let kept = softmax(&[6.0, 4.0]);
        close(&probabilities(&z, &[], &set), &[kept[0], kept[1], 0.0, 0.0]);
        // Exactly reaching p counts; 1.0 is off.
        let set = Settings {
            top_p: p1[0],
            ..s(1.0, 0, 1.0)
        };
        close(&probabilities(&z, &[], &set), &[1.0, 0.0, 0.0, 0.0]);
        let set = Settings {
            top_p: 1.0,
            ..s(1.0, 0, 1.0)
        };
        close(&probabilities(&z, &[], &set), &p1);
        // Ties with the last member survive.
        let set = Settings {
            top_p: 0.3,
            ..s(1.0, 0, 1.0)
        };
        let p = probabilities(&[1.0, 1.0, 0.0], &[], &set);
        assert!(p[0] > 0.0 && p[1] > 0.0 && p[2] == 0.0, "{p:?}");
    }

    #[test]
    fn min_p_cuts_tokens_below_a_share_of_the_most_probable_before_the_temperature() {
        // p(1)/p(0) = e^-1 = 0.37, p(2)/p(0) = e^-2 = 0.14 at temperature 1.
        let z = [3.0f32, 2.0, 1.0];
        let set = Settings {
            min_p: 0.2,
            ..s(2.0, 0, 1.0)
        };
        let kept = softmax(&[1.5, 1.0]);
        close(&probabilities(&z, &[], &set), &[kept[0], kept[1], 0.0]);
        // Off at 0; with top-k the stricter cut wins.
        let set = Settings {
            min_p: 0.0,
            ..s(1.0, 0, 1.0)
        };
        close(&probabilities(&z, &[], &set), &softmax(&[3.0, 2.0, 1.0]));
        let set = Settings {
            min_p: 0.1,
            ..s(1.0, 1, 1.0)
        };
        close(&probabilities(&z, &[], &set), &[1.0, 0.0, 0.0]);
    }

    #[test]
    fn eos_probability_ignores_the_penalty() {
        let logits = [2.0f32, 1.0, 0.5];
        let set = s(0.5, 0, 3.0);
        let expect = softmax(&[4.0, 2.0, 1.0])[1];
        assert!((eos_probability(&logits, 1, &set) - expect).abs() < 1e-12);
        // Cut by top-k, outside the vocabulary, greedy.
        assert_eq!(eos_probability(&logits, 2, &s(1.0, 2, 1.0)), 0.0);
        assert_eq!(eos_probability(&logits, 9, &set), 0.0);
        assert_eq!(eos_probability(&logits, 0, &s(0.0, 0, 1.0)), 1.0);
        assert_eq!(eos_probability(&logits, 1, &s(0.0, 0, 1.0)), 0.0);
    }
}

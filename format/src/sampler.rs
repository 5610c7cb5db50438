//! The MEGA65 sampler (spec §7.6): temperature, top-k and repetition penalty in
//! integer and fixed-point arithmetic only, so that the MEGA65 program (a 6502
//! without floating point) and the PC (`ssnail chat --sampler mega65`) choose
//! exactly the same token from the same logits, settings and seed.
//!
//! This module is the definition; the MEGA65 program implements the choice in
//! mega65/src/smpcore.s (ca65) with the exp tables of
//! mega65/include/sampler_tables.h, which [`c_tables`] generates (a test
//! regenerates and compares); mega65/src/sampler.c holds the settings, their
//! derived constants, the seeding and the commands:
//!
//! ```text
//! cargo run -q -p ssnail-format --example sampler_tables > mega65/include/sampler_tables.h
//! ```
//!
//! Written by hand because it is a small, exactly specified algorithm shared
//! with a C implementation, not a general sampling library.

use std::fmt::Write;
use std::sync::OnceLock;

/// The repetition penalty looks at the last `WINDOW` context tokens.
pub const WINDOW: u32 = 64;
/// Top-k range: 1..=MAX_TOP_K (the candidate list has a fixed size).
pub const MAX_TOP_K: u32 = 64;
/// Largest output (logits) the sampler takes; a larger one keeps the ARGMAX (greedy).
pub const MAX_VOCAB: usize = 65_536;
/// Largest temperature and penalty, in thousandths.
pub const MAX_MILLI: u32 = 60_000;
/// Fixed-point logits: Q16.16, saturated to ±2^30.
pub const FRAC_BITS: u32 = 16;
pub const LIMIT: i32 = 1 << 30;
/// Keys at or below this are excluded: every negative NaN and −∞.
pub const KEY_EXCLUDED_MAX: u32 = 0x007F_FFFF;
/// Keys at or above this are excluded: every positive NaN.
pub const KEY_NAN_MIN: u32 = 0xFF80_0001;
/// Scaled exponent (z in 1/256 nat) from which a weight is 0.
pub const Z_CUT: u32 = 4096;
/// Weight of the best candidate (z = 0): 2^15.
pub const W_ONE: u32 = 1 << 15;

/// Sampler settings, exactly as the MEGA65 holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Temperature in thousandths, 0..=MAX_MILLI; 0 = greedy.
    pub temp_milli: u32,
    /// 1..=MAX_TOP_K.
    pub top_k: u32,
    /// Repetition penalty in thousandths, 1000..=MAX_MILLI (1000 = off).
    pub penalty_milli: u32,
    /// The penalty looks at the last `window` context tokens, 1..=WINDOW.
    pub window: u32,
}

impl Default for Settings {
    /// Temperature 0.8, top-k 40, penalty 1.15 (the PC tools' defaults).
    fn default() -> Settings {
        Settings {
            temp_milli: 800,
            top_k: 40,
            penalty_milli: 1150,
            window: WINDOW,
        }
    }
}

/// A decimal setting rounded to thousandths (the MEGA65 reads up to three decimals).
pub fn milli(v: f64) -> Option<u32> {
    let m = (v * 1000.0).round();
    (v.is_finite() && (0.0..=MAX_MILLI as f64).contains(&m)).then_some(m as u32)
}

impl Settings {
    /// From the PC tools' decimal settings; a message naming the range when one is outside it.
    pub fn from_decimal(
        temperature: f64,
        top_k: u32,
        penalty: f64,
        window: u32,
    ) -> Result<Settings, String> {
        let temp_milli = milli(temperature).ok_or_else(|| {
            format!("temperature {temperature}: the mega65 sampler takes 0 to 60")
        })?;
        let penalty_milli = milli(penalty)
            .filter(|&p| p >= 1000)
            .ok_or_else(|| format!("penalty {penalty}: the mega65 sampler takes 1 to 60"))?;
        if !(1..=MAX_TOP_K).contains(&top_k) {
            return Err(format!(
                "top-k {top_k}: the mega65 sampler takes 1 to {MAX_TOP_K}"
            ));
        }
        if !(1..=WINDOW).contains(&window) {
            return Err(format!(
                "last-n {window}: the mega65 sampler takes 1 to {WINDOW}"
            ));
        }
        Ok(Settings {
            temp_milli,
            top_k,
            penalty_milli,
            window,
        })
    }

    pub fn is_greedy(&self) -> bool {
        self.temp_milli == 0
    }

    /// floor(2^16 · 1000 / T): the inverse temperature in Q16.16.
    pub fn inv_temp(&self) -> u32 {
        (65_536_000u64 / self.temp_milli.max(1) as u64) as u32
    }

    /// floor(2^31 · 1000 / P): the multiplier for positive logits (÷ P).
    pub fn pen_div(&self) -> u32 {
        ((1000u64 << 31) / self.penalty_milli as u64) as u32
    }

    /// round(2^16 · P / 1000), halves up: the multiplier for logits ≤ 0 (× P).
    pub fn pen_mul(&self) -> u32 {
        ((self.penalty_milli as u64 * 65_536 + 500) / 1000) as u32
    }
}

/// The f32's order key: a u32 that orders as the float's value (−0 just below +0).
pub fn key(bits: u32) -> u32 {
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// NaN and −∞ never become candidates.
pub fn excluded(key: u32) -> bool {
    key <= KEY_EXCLUDED_MAX || key >= KEY_NAN_MIN
}

/// The f32 (by its bits) as Q16.16, the magnitude truncated and saturated at 2^30.
pub fn fixed(bits: u32) -> i32 {
    let e = (bits >> 23) & 0xFF;
    let frac = bits & 0x7F_FFFF;
    let (m, e) = if e == 0 {
        (frac, 1)
    } else {
        (frac | 0x80_0000, e)
    };
    let mag: u32 = if e >= 141 {
        LIMIT as u32
    } else if e >= 134 {
        m << (e - 134)
    } else if 134 - e >= 24 {
        0
    } else {
        m >> (134 - e)
    };
    let mag = mag.min(LIMIT as u32) as i32;
    if bits & 0x8000_0000 != 0 {
        -mag
    } else {
        mag
    }
}

/// The repetition penalty on a Q16.16 value: positive ÷ P, zero and negative × P.
pub fn penalise(x: i32, s: &Settings) -> i32 {
    if x > 0 {
        ((x as u64 * s.pen_div() as u64) >> 31) as i32
    } else {
        let mag = ((-(x as i64)) as u64 * s.pen_mul() as u64).div_ceil(65_536);
        -(mag.min(LIMIT as u64) as i64) as i32
    }
}

/// The exp tables: `hi[h]` = round(2^15 · e^(−h/4)), `lo[l]` = round(2^15 · e^(−l/256)).
pub struct ExpTables {
    pub hi: [u16; 64],
    pub lo: [u16; 64],
}

/// Computed once. Every entry lies far from a rounding boundary (a test checks),
/// so any correctly working `exp` gives these same integers.
pub fn exp_tables() -> &'static ExpTables {
    static T: OnceLock<ExpTables> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = ExpTables {
            hi: [0; 64],
            lo: [0; 64],
        };
        for i in 0..64 {
            t.hi[i] = (32768.0 * (-(i as f64) / 4.0).exp()).round() as u16;
            t.lo[i] = (32768.0 * (-(i as f64) / 256.0).exp()).round() as u16;
        }
        t
    })
}

/// The weight of a candidate whose Q16.16 distance below the best is `d`.
pub fn weight(d: u32, s: &Settings) -> u32 {
    let z = (d as u64 * s.inv_temp() as u64) >> 24;
    if z >= Z_CUT as u64 {
        return 0;
    }
    let t = exp_tables();
    let z = z as usize;
    (t.hi[z >> 6] as u32 * t.lo[z & 63] as u32) >> 15
}

/// murmur3's 32-bit finaliser: the seed mixer (a bijection with 0 ↦ 0).
pub fn fmix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x85EB_CA6B);
    x ^= x >> 13;
    x = x.wrapping_mul(0xC2B2_AE35);
    x ^= x >> 16;
    x
}

/// The generator's state after seeding with `seed`.
pub fn seed_state(seed: u32) -> u32 {
    match fmix32(seed) {
        0 => 0x9E37_79B9,
        s => s,
    }
}

/// One xorshift32 step (13, 17, 5); returns the new state, which is the draw.
pub fn xorshift32(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x
}

/// A candidate: the penalised Q16.16 value, the raw key and the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub value: i32,
    pub key: u32,
    pub token: u32,
}

impl Candidate {
    /// Better first: higher value, then higher key, then lower token.
    fn order(a: &Candidate, b: &Candidate) -> std::cmp::Ordering {
        b.value
            .cmp(&a.value)
            .then(b.key.cmp(&a.key))
            .then(a.token.cmp(&b.token))
    }
}

/// The first slot of the penalty window for the logits of position `q`: the
/// window is slots `window_start(q, s) ..= q`.
pub fn window_start(q: u32, s: &Settings) -> u32 {
    q.saturating_sub(s.window - 1)
}

/// The distinct tokens of `recent` below `vocab`, ascending (the penalised set).
pub fn penalised_set(recent: &[u32], vocab: usize) -> Vec<u32> {
    let mut r: Vec<u32> = recent
        .iter()
        .copied()
        .filter(|&t| (t as usize) < vocab)
        .collect();
    r.sort_unstable();
    r.dedup();
    r
}

/// The top-k candidates, best first (steps 1–3 of spec §7.6).
pub fn candidates(logits: &[f32], recent: &[u32], s: &Settings) -> Vec<Candidate> {
    let set = penalised_set(recent, logits.len());
    let mut all: Vec<Candidate> = logits
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let k = key(v.to_bits());
            if excluded(k) {
                return None;
            }
            let x = fixed(v.to_bits());
            let value = if s.penalty_milli != 1000 && set.binary_search(&(i as u32)).is_ok() {
                penalise(x, s)
            } else {
                x
            };
            Some(Candidate {
                value,
                key: k,
                token: i as u32,
            })
        })
        .collect();
    let k = (s.top_k as usize).min(all.len());
    if k > 0 && k < all.len() {
        all.select_nth_unstable_by(k - 1, Candidate::order);
        all.truncate(k);
    }
    all.sort_unstable_by(Candidate::order);
    all
}

/// The weights of the candidates (best first), each ≤ 2^15; the first is 2^15.
pub fn weights(c: &[Candidate], s: &Settings) -> Vec<u32> {
    let best = c.first().map_or(0, |c| c.value);
    c.iter()
        .map(|c| weight((best as i64 - c.value as i64) as u32, s))
        .collect()
}

/// The candidate index a draw `r` picks: u = ⌊r · S / 2^32⌋, the first j with u < w0 + … + wj.
pub fn pick(w: &[u32], r: u32) -> usize {
    let sum: u64 = w.iter().map(|&v| v as u64).sum();
    let u = (r as u64 * sum) >> 32;
    let mut cum = 0u64;
    for (j, &v) in w.iter().enumerate() {
        cum += v as u64;
        if u < cum {
            return j;
        }
    }
    unreachable!("u < sum")
}

/// The settings and the generator state.
#[derive(Clone, Debug)]
pub struct Sampler {
    pub settings: Settings,
    pub state: u32,
}

impl Sampler {
    pub fn new(settings: Settings, seed: u32) -> Sampler {
        Sampler {
            settings,
            state: seed_state(seed),
        }
    }

    pub fn reseed(&mut self, seed: u32) {
        self.state = seed_state(seed);
    }

    /// The token for these logits, `recent` being the context tokens of the
    /// window (repeats allowed, any order). None: keep the greedy result (the
    /// core's ARGMAX) — temperature 0, or no candidate at all; then the
    /// generator does not move.
    pub fn choose(&mut self, logits: &[f32], recent: &[u32]) -> Option<u32> {
        if self.settings.is_greedy() || logits.len() > MAX_VOCAB {
            return None;
        }
        let c = candidates(logits, recent, &self.settings);
        if c.is_empty() {
            return None;
        }
        let w = weights(&c, &self.settings);
        self.state = xorshift32(self.state);
        Some(c[pick(&w, self.state)].token)
    }
}

/// mega65/include/sampler_tables.h: the constants and exp tables for the C side.
pub fn c_tables() -> String {
    let t = exp_tables();
    let mut o = String::new();
    // cc65's int is 16 bits: a constant above 32767 without a suffix is a long (and a warning)
    let int = |x: u32| {
        if x > 32767 {
            format!("{x}U")
        } else {
            x.to_string()
        }
    };
    let row = |o: &mut String, v: &[u16]| {
        for chunk in v.chunks(8) {
            let items: Vec<String> = chunk
                .iter()
                .map(|&x| format!("{:>5}", int(x as u32)))
                .collect();
            writeln!(o, "    {},", items.join(", ")).unwrap();
        }
    };
    writeln!(
        o,
        "/* sampler_tables.h: GENERATED from format/src/sampler.rs (spec §7.6); do not edit.\n \
         * cargo run -q -p ssnail-format --example sampler_tables > mega65/include/sampler_tables.h */\n\
         #ifndef SAMPLER_TABLES_H\n#define SAMPLER_TABLES_H\n#include <stdint.h>"
    )
    .unwrap();
    for (name, v) in [
        ("SMP_WINDOW", WINDOW),
        ("SMP_MAX_TOP_K", MAX_TOP_K),
        ("SMP_MAX_MILLI", MAX_MILLI),
        ("SMP_Z_CUT", Z_CUT),
    ] {
        writeln!(o, "#define {name:<20} {}", int(v)).unwrap();
    }
    writeln!(o, "#define {:<20} 0x{LIMIT:08X}L", "SMP_LIMIT").unwrap();
    writeln!(
        o,
        "#define {:<20} 0x{KEY_EXCLUDED_MAX:08X}UL",
        "SMP_KEY_EXCL_MAX"
    )
    .unwrap();
    writeln!(o, "#define {:<20} 0x{KEY_NAN_MIN:08X}UL", "SMP_KEY_NAN_MIN").unwrap();
    writeln!(o, "/* round(2^15 exp(-h/4)), h = 0..63 */").unwrap();
    writeln!(o, "static const uint16_t smp_exp_hi[64] = {{").unwrap();
    row(&mut o, &t.hi);
    writeln!(o, "}};\n/* round(2^15 exp(-l/256)), l = 0..63 */").unwrap();
    writeln!(o, "static const uint16_t smp_exp_lo[64] = {{").unwrap();
    row(&mut o, &t.lo);
    writeln!(o, "}};\n#endif").unwrap();
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(temp_milli: u32, top_k: u32, penalty_milli: u32) -> Settings {
        Settings {
            temp_milli,
            top_k,
            penalty_milli,
            window: WINDOW,
        }
    }

    #[test]
    fn keys_order_as_the_floats_do_and_nan_and_minus_infinity_are_excluded() {
        let vals = [
            f32::NEG_INFINITY,
            f32::MIN,
            -1.5,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            1e-40,
            1.0,
            f32::MAX,
            f32::INFINITY,
        ];
        for w in vals.windows(2) {
            assert!(key(w[0].to_bits()) < key(w[1].to_bits()), "{w:?}");
        }
        assert!(excluded(key(f32::NEG_INFINITY.to_bits())));
        assert!(excluded(key(f32::NAN.to_bits())));
        assert!(excluded(key((-f32::NAN).to_bits())));
        assert!(excluded(key(0xFFFF_FFFF)) && excluded(key(0x7F80_0001)));
        assert!(!excluded(key(f32::MIN.to_bits())) && !excluded(key(f32::INFINITY.to_bits())));
    }

    #[test]
    fn fixed_point_truncates_toward_zero_and_saturates() {
        assert_eq!(fixed(1.0f32.to_bits()), 65536);
        assert_eq!(fixed((-2.5f32).to_bits()), -163840);
        assert_eq!(fixed(1.5e-5f32.to_bits()), 0);
        assert_eq!(fixed((1.0f32 / 65536.0 * 3.7).to_bits()), 3);
        assert_eq!(fixed((-1.0f32 / 65536.0 * 3.7).to_bits()), -3);
        assert_eq!(
            fixed(16383.99f32.to_bits()),
            (16383.99f32 as f64 * 65536.0) as i32
        );
        assert_eq!(fixed(16384.0f32.to_bits()), LIMIT);
        assert_eq!(fixed(f32::INFINITY.to_bits()), LIMIT);
        assert_eq!(fixed((-1e30f32).to_bits()), -LIMIT);
        assert_eq!(fixed(1e-42f32.to_bits()), 0);
        // Monotone over a sweep of keys.
        let mut prev = i32::MIN;
        for k in (0x0080_0000u32..0xFF80_0000).step_by(65_521) {
            let bits = if k & 0x8000_0000 != 0 {
                k & 0x7FFF_FFFF
            } else {
                !k
            };
            let x = fixed(bits);
            assert!(x >= prev, "{k:08x}");
            prev = x;
        }
    }

    #[test]
    fn the_penalty_divides_positive_and_multiplies_negative_values_and_only_lowers() {
        let s = set(800, 40, 1150);
        assert_eq!(penalise(115_000, &s), 100_000 - 1); // floor of 99999.99…
        assert_eq!(penalise(-100_000, &s), -115_000);
        assert_eq!(penalise(0, &s), 0);
        let off = set(800, 40, 1000);
        for x in [-LIMIT, -12345, -1, 0, 1, 777, LIMIT] {
            assert_eq!(penalise(x, &off), x);
            for p in [1001, 1150, 2000, 60_000] {
                let y = penalise(x, &set(800, 40, p));
                assert!(y <= x && y >= -LIMIT, "{x} {p} {y}");
            }
        }
        assert_eq!(penalise(-LIMIT / 2, &set(800, 40, 60_000)), -LIMIT);
    }

    #[test]
    fn exp_tables_are_far_from_rounding_boundaries() {
        let t = exp_tables();
        assert_eq!((t.hi[0], t.lo[0]), (32768, 32768));
        for i in 0..64 {
            for (v, x) in [(t.hi[i], -(i as f64) / 4.0), (t.lo[i], -(i as f64) / 256.0)] {
                let exact = 32768.0 * x.exp();
                assert!((exact - exact.floor() - 0.5).abs() > 1e-6, "{i}: {exact}");
                assert_eq!(v as f64, exact.round());
            }
        }
    }

    #[test]
    fn weights_follow_exp_of_the_tempered_distance() {
        let s = set(1000, 40, 1000);
        assert_eq!(weight(0, &s), 32768);
        for d_nats in [0.1f64, 0.5, 1.0, 3.0, 9.9] {
            let w = weight((d_nats * 65536.0) as u32, &s) as f64 / 32768.0;
            assert!(
                (w - (-d_nats).exp()).abs() < 0.005 * (-d_nats).exp() + 1e-4,
                "{d_nats}"
            );
        }
        assert_eq!(weight(16 << 16, &s), 0);
        // Temperature 0.5 doubles the distance.
        assert_eq!(weight(1 << 16, &set(500, 40, 1000)), weight(2 << 16, &s));
        assert_eq!(weight(u32::MAX, &set(1, 40, 1000)), 0);
    }

    #[test]
    fn seeds_are_mixed_and_the_generator_is_xorshift32() {
        assert_eq!(xorshift32(1), 270_369);
        assert_ne!(seed_state(0), 0);
        assert_ne!(seed_state(1), seed_state(2));
        assert_eq!(fmix32(0), 0);
        let mut s = Sampler::new(Settings::default(), 7);
        let a = s.state;
        s.reseed(7);
        assert_eq!(a, s.state);
    }

    #[test]
    fn temperature_zero_is_greedy_and_leaves_the_generator_alone() {
        let mut s = Sampler::new(set(0, 40, 1150), 3);
        let st = s.state;
        assert_eq!(s.choose(&[1.0, 5.0, 2.0], &[1]), None);
        assert_eq!(s.state, st);
    }

    #[test]
    fn outputs_beyond_65536_rows_keep_the_argmax() {
        let mut s = Sampler::new(Settings::default(), 3);
        let st = s.state;
        assert_eq!(s.choose(&vec![0.5f32; MAX_VOCAB + 1], &[]), None);
        assert_eq!(s.state, st);
        assert!(s.choose(&vec![0.5f32; MAX_VOCAB], &[]).is_some());
    }

    #[test]
    fn top_k_one_without_penalty_is_the_first_maximum() {
        let mut s = Sampler::new(set(800, 1, 1000), 3);
        let logits = [0.5f32, 3.0, -1.0, 3.0, 2.9];
        for _ in 0..50 {
            assert_eq!(s.choose(&logits, &[1, 2, 3]), Some(1));
        }
        // With the penalty, the repeated maximum can lose.
        let mut s = Sampler::new(set(800, 1, 1500), 3);
        assert_eq!(s.choose(&logits, &[1]), Some(3));
        assert_eq!(s.choose(&logits, &[1, 3]), Some(4));
    }

    #[test]
    fn ties_in_value_go_to_the_higher_key_then_the_lower_token() {
        // 1.0 and 1.0000001 have the same Q16.16 value; the larger float wins.
        let a = 1.0f32;
        let b = f32::from_bits(a.to_bits() + 1);
        assert_eq!(fixed(a.to_bits()), fixed(b.to_bits()));
        let c = candidates(&[a, b, 0.0, b], &[], &set(800, 2, 1000));
        assert_eq!(c.iter().map(|c| c.token).collect::<Vec<_>>(), [1, 3]);
    }

    #[test]
    fn nan_and_minus_infinity_are_never_drawn_plus_infinity_always() {
        let mut s = Sampler::new(set(1000, 64, 1000), 11);
        let logits = [f32::NAN, 0.0, f32::NEG_INFINITY, -f32::NAN, 0.0];
        let mut seen = [0; 5];
        for _ in 0..400 {
            seen[s.choose(&logits, &[]).unwrap() as usize] += 1;
        }
        assert_eq!((seen[0], seen[2], seen[3]), (0, 0, 0));
        assert!(seen[1] > 100 && seen[4] > 100, "{seen:?}");
        let logits = [3.0, f32::INFINITY, 100.0, f32::NAN];
        assert_eq!(s.choose(&logits, &[]), Some(1));
        // Nothing eligible: the greedy result stays, the generator does not move.
        let st = s.state;
        assert_eq!(s.choose(&[f32::NAN, f32::NEG_INFINITY], &[]), None);
        assert_eq!(s.state, st);
    }

    #[test]
    fn the_penalty_lowers_tokens_of_the_window_once_each() {
        let s = set(1000, 64, 2000);
        let logits = [2.0f32, 2.0, -1.0, 0.5];
        let c = candidates(&logits, &[0, 0, 2, 9], &s);
        let v = |t: u32| c.iter().find(|c| c.token == t).unwrap().value;
        assert_eq!(v(0), 65536); // 2.0 / 2, once though it appears twice
        assert_eq!(v(1), 131072);
        assert_eq!(v(2), -131072); // -1.0 * 2
        assert_eq!(v(3), 32768);
        assert_eq!(c[0].token, 1);
    }

    /// Chi-square over many draws on fixed logits against the defined weights.
    #[test]
    fn draws_follow_the_defined_weights_chi_square() {
        let logits = [0.0f32, 1.0, 2.0, -1.0, 1.5, 0.7, 2.2, -3.0];
        let s = set(800, 6, 1150);
        let recent = [6u32, 6, 1];
        let c = candidates(&logits, &recent, &s);
        let w = weights(&c, &s);
        let sum: u32 = w.iter().sum();
        let mut sampler = Sampler::new(s, 42);
        let n = 200_000;
        let mut counts = vec![0u64; logits.len()];
        for _ in 0..n {
            counts[sampler.choose(&logits, &recent).unwrap() as usize] += 1;
        }
        let mut chi2 = 0.0;
        for (cand, &wj) in c.iter().zip(&w) {
            let expect = n as f64 * wj as f64 / sum as f64;
            chi2 += (counts[cand.token as usize] as f64 - expect).powi(2) / expect;
        }
        // 5 degrees of freedom: P(chi2 > 20.5) ≈ 0.001.
        assert!(chi2 < 20.5, "chi2 {chi2}: {counts:?} vs {w:?}");
        // The two tokens cut by top-k are never drawn.
        let cut: Vec<u32> = (0..8)
            .filter(|t| !c.iter().any(|c| c.token == *t))
            .collect();
        assert_eq!(cut.len(), 2);
        for t in cut {
            assert_eq!(counts[t as usize], 0);
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_draws_another_seed_others() {
        let logits: Vec<f32> = (0..300).map(|i| ((i * 37) % 101) as f32 * 0.05).collect();
        let seq = |seed| {
            let mut s = Sampler::new(Settings::default(), seed);
            (0..64)
                .map(|_| s.choose(&logits, &[]).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(seq(1), seq(1));
        assert_ne!(seq(1), seq(2));
    }

    #[test]
    fn pick_maps_the_draw_by_the_cumulative_sum() {
        let w = [32768, 0, 16384, 16384];
        assert_eq!(pick(&w, 0), 0);
        assert_eq!(pick(&w, 0x7FFF_FFFF), 0);
        assert_eq!(pick(&w, 0x8000_0000), 2);
        assert_eq!(pick(&w, 0xBFFF_FFFF), 2);
        assert_eq!(pick(&w, 0xC000_0000), 3);
        assert_eq!(pick(&w, u32::MAX), 3);
    }

    /// The MEGA65's scan (mega65/src/smpcore.s, step 2): the top k non-penalised tokens by raw
    /// key with a 16-bit fast path, penalised tokens merged afterwards.
    fn by_scan(logits: &[f32], recent: &[u32], s: &Settings) -> Vec<Candidate> {
        let set = penalised_set(recent, logits.len());
        let k = s.top_k as usize;
        let mut list: Vec<(u32, u32)> = Vec::new(); // (key, token), best first
        let mut thr = KEY_EXCLUDED_MAX;
        for (i, v) in logits.iter().enumerate() {
            let kk = key(v.to_bits());
            if kk >> 16 < thr >> 16 {
                continue; // fast path: the high 16 bits decide
            }
            if kk <= thr || kk >= KEY_NAN_MIN {
                continue;
            }
            if s.penalty_milli != 1000 && set.binary_search(&(i as u32)).is_ok() {
                continue;
            }
            let at = list
                .iter()
                .position(|&(k2, _)| kk > k2)
                .unwrap_or(list.len());
            list.insert(at, (kk, i as u32));
            list.truncate(k);
            if list.len() == k {
                thr = list[k - 1].0;
            }
        }
        let mut out: Vec<Candidate> = list
            .iter()
            .map(|&(k, t)| Candidate {
                value: fixed(if k & 0x8000_0000 != 0 {
                    k & 0x7FFF_FFFF
                } else {
                    !k
                }),
                key: k,
                token: t,
            })
            .collect();
        if s.penalty_milli != 1000 {
            for t in set {
                let kk = key(logits[t as usize].to_bits());
                if excluded(kk) {
                    continue;
                }
                let c = Candidate {
                    value: penalise(fixed(logits[t as usize].to_bits()), s),
                    key: kk,
                    token: t,
                };
                let at = out
                    .iter()
                    .position(|o| Candidate::order(&c, o).is_lt())
                    .unwrap_or(out.len());
                out.insert(at, c);
                out.truncate(k);
            }
        }
        out
    }

    #[test]
    fn the_mega65_scan_with_its_fast_path_selects_what_the_definition_selects() {
        let mut r = 12345u32;
        for round in 0..300 {
            let n = 1 + (round * 7) % 400;
            let logits: Vec<f32> = (0..n)
                .map(|_| {
                    r = xorshift32(r);
                    match r % 50 {
                        0 => f32::NAN,
                        1 => f32::NEG_INFINITY,
                        2 => f32::INFINITY,
                        3 => 1.0, // ties
                        4 => f32::from_bits(1.0f32.to_bits() + (r >> 28)),
                        _ => ((r >> 8) as f32 / 16_777_216.0 - 0.5) * 40.0,
                    }
                })
                .collect();
            let recent: Vec<u32> = (0..(r % 70))
                .map(|j| (j * 13 + r) % (n as u32 + 5))
                .collect();
            for s in [
                set(800, 40, 1150),
                set(1000, 1, 1000),
                set(300, 64, 3000),
                set(2000, 5, 1000),
            ] {
                assert_eq!(
                    by_scan(&logits, &recent, &s),
                    candidates(&logits, &recent, &s),
                    "round {round} {s:?}"
                );
            }
        }
    }

    #[test]
    fn decimal_settings_round_to_thousandths_and_ranges_are_checked() {
        assert_eq!(
            Settings::from_decimal(0.8, 40, 1.15, 64).unwrap(),
            Settings::default()
        );
        assert_eq!(
            Settings::from_decimal(0.0, 1, 1.0, 1).unwrap().temp_milli,
            0
        );
        assert!(Settings::from_decimal(0.8, 0, 1.15, 64).is_err());
        assert!(Settings::from_decimal(0.8, 65, 1.15, 64).is_err());
        assert!(Settings::from_decimal(0.8, 40, 0.9, 64).is_err());
        assert!(Settings::from_decimal(61.0, 40, 1.15, 64).is_err());
        assert!(Settings::from_decimal(-0.1, 40, 1.15, 64).is_err());
        assert!(Settings::from_decimal(0.8, 40, 1.15, 65).is_err());
        assert!(Settings::from_decimal(0.8, 40, 1.15, 0).is_err());
    }
}

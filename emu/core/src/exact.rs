//! Exact summation for the hardware's wide fixed-point GEMV accumulator.
//!
//! **Definition** (spec §5.3, F32/F16/BF16 weights): every product w·x is
//! formed exactly, all products of a row are summed exactly, and the sum is
//! rounded once to single (round to nearest, ties to even). A product of two
//! singles is exact in double (24 + 24 bits ≤ 53), so each product is taken as
//! a double and added into a fixed-point superaccumulator of 32-bit limbs that
//! covers every possible product (2^−350 … 2^256) with carry headroom for 2^31
//! additions. Written by hand: no crate offers an exact f64 sum rounded
//! directly to f32 (rounding an exactly rounded f64 sum again could double-round).

const LIMBS: usize = 22;
/// Bit position of 2^0 in the limb array: product lsbs go down to 2^−350.
const BIAS: i32 = 352;

#[derive(Clone)]
pub struct ExactSum {
    limbs: [i64; LIMBS],
    /// Sum of non-finite terms (inf/NaN make the result non-finite anyway).
    special: f64,
    has_special: bool,
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum::new()
    }
}

impl ExactSum {
    pub fn new() -> ExactSum {
        ExactSum {
            limbs: [0; LIMBS],
            special: 0.0,
            has_special: false,
        }
    }

    /// Add one exact product (any finite double in the product range, or inf/NaN).
    #[inline]
    pub fn add(&mut self, p: f64) {
        let bits = p.to_bits();
        let e = ((bits >> 52) & 0x7FF) as i32;
        if e == 0x7FF {
            self.special += p;
            self.has_special = true;
            return;
        }
        if p == 0.0 {
            return;
        }
        let frac = bits & ((1u64 << 52) - 1);
        // Products of singles are never double-subnormal, but keep the rule general.
        let (m, exp) = if e == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), e - 1075)
        };
        let pos = exp + BIAS;
        debug_assert!(pos >= 0 && (pos as usize) / 32 + 2 < LIMBS);
        // Split the shifted magnitude into three 32-bit pieces; add or subtract them.
        let v = (m as u128) << (pos % 32);
        let (lo, mid, hi) = (
            (v as u32) as i64,
            ((v >> 32) as u32) as i64,
            (v >> 64) as i64,
        );
        let i = (pos / 32) as usize;
        // Branch-free negation (signs are random; a branch would mispredict).
        let neg = -((bits >> 63) as i64);
        let l = &mut self.limbs[i..i + 3];
        l[0] += (lo ^ neg) - neg;
        l[1] += (mid ^ neg) - neg;
        l[2] += (hi ^ neg) - neg;
    }

    /// Add another accumulator's exact sum (lets independent partial sums run
    /// in parallel without losing exactness).
    pub fn merge(&mut self, o: &ExactSum) {
        for (a, b) in self.limbs.iter_mut().zip(&o.limbs) {
            *a += b;
        }
        self.special += o.special;
        self.has_special |= o.has_special;
    }

    fn normalise(limbs: &mut [i64; LIMBS]) {
        for i in 0..LIMBS - 1 {
            let c = limbs[i] >> 32;
            limbs[i] -= c << 32;
            limbs[i + 1] += c;
        }
    }

    /// The exact sum rounded once to single (+0 for an exact zero).
    pub fn round_f32(&self) -> f32 {
        if self.has_special {
            return self.special as f32;
        }
        let mut l = self.limbs;
        Self::normalise(&mut l);
        let negative = l[LIMBS - 1] < 0;
        if negative {
            for v in l.iter_mut() {
                *v = -*v;
            }
            Self::normalise(&mut l);
        }
        let Some(h) = (0..LIMBS).rev().find(|&i| l[i] != 0) else {
            return 0.0;
        };
        let limb = |i: isize| if i >= 0 { l[i as usize] as u128 } else { 0 };
        let hi = h as isize;
        let mag = (limb(hi) << 64) | (limb(hi - 1) << 32) | limb(hi - 2);
        let sticky = (0..(hi - 2).max(0) as usize).any(|i| l[i] != 0);
        let r = round_u128(mag, sticky, 32 * (hi as i32 - 2) - BIAS);
        if negative {
            -r
        } else {
            r
        }
    }
}

/// Round `mag · 2^scale` (plus a sticky bit below `mag`) to single, nearest even.
fn round_u128(mag: u128, sticky: bool, scale: i32) -> f32 {
    let n = 128 - mag.leading_zeros() as i32;
    let msb = scale + n - 1;
    if msb > 127 {
        return f32::INFINITY;
    }
    // Significant bits available at this exponent (fewer for subnormals).
    let prec = if msb >= -126 { 24 } else { 24 - (-126 - msb) };
    let drop = n - prec;
    if drop <= 0 {
        return (mag as f64 * 2f64.powi(scale)) as f32;
    }
    let (keep, up) = if drop >= 129 {
        (0u128, false)
    } else {
        let keep = if drop == 128 { 0 } else { mag >> drop };
        let rem = if drop == 128 {
            mag
        } else {
            mag & ((1u128 << drop) - 1)
        };
        let half = 1u128 << (drop - 1);
        let up = rem > half || (rem == half && (sticky || keep & 1 == 1));
        (keep, up)
    };
    let keep = keep + up as u128;
    // keep ≤ 2^24 and the scale is in double range: exact, then exact (or ±inf) to single.
    (keep as f64 * 2f64.powi(scale + drop)) as f32
}

/// Error-free transformation: s + e = a + b exactly (Knuth's TwoSum).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Fast path for the exactly rounded single-precision dot product of `w`
/// and `x`: a compensated sum (TwoSum in four lanes, the Sum2 algorithm of
/// Ogita, Rump and Oishi) with a rigorous error bound E (4× the published
/// bound u·|res| + γ²·Σ|p|). The result is returned only when every value
/// within E of the approximation rounds to the same single, i.e. no rounding
/// boundary (midpoint between singles) lies within E; otherwise None and the
/// caller uses [`ExactSum`]. So the answer is always the exact sum rounded once.
#[inline(always)]
pub fn dot_rounded_fast(w: &[f32], x: &[f32]) -> Option<f32> {
    let n = w.len().min(x.len());
    let (mut s, mut c, mut a) = ([0f64; 4], [0f64; 4], [0f64; 4]);
    let full = n / 4 * 4;
    for k in (0..full).step_by(4) {
        for l in 0..4 {
            let p = w[k + l] as f64 * x[k + l] as f64;
            let (t, e) = two_sum(s[l], p);
            s[l] = t;
            c[l] += e;
            a[l] += p.abs();
        }
    }
    for j in full..n {
        let p = w[j] as f64 * x[j] as f64;
        let (t, e) = two_sum(s[0], p);
        s[0] = t;
        c[0] += e;
        a[0] += p.abs();
    }
    let mut total = s[0];
    let mut comp = (c[0] + c[1]) + (c[2] + c[3]);
    for &sl in &s[1..] {
        let (t, e) = two_sum(total, sl);
        total = t;
        comp += e;
    }
    let sum_abs = (a[0] + a[1]) + (a[2] + a[3]);
    let approx = total + comp;
    if !(approx.is_finite() && sum_abs.is_finite()) {
        return None;
    }
    const U: f64 = 1.0 / 9007199254740992.0; // 2^-53
    let m = (n + 8) as f64;
    let gamma = m * U / (1.0 - m * U);
    let err = 4.0 * (U * approx.abs() + gamma * gamma * sum_abs);
    let r = approx as f32;
    let (dn, up) = (r.next_down(), r.next_up());
    if !(dn.is_finite() && up.is_finite()) {
        return None;
    }
    // Midpoints to the neighbouring singles: exact in double.
    let lo = (r as f64 + dn as f64) * 0.5;
    let hi = (r as f64 + up as f64) * 0.5;
    (approx - lo > err && hi - approx > err).then_some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact_f32(terms: &[f64]) -> f32 {
        let mut s = ExactSum::new();
        terms.iter().for_each(|&t| s.add(t));
        s.round_f32()
    }

    #[test]
    fn cancellation_and_tiny_terms_are_exact() {
        // 1e30 − 1e30 + 1: naive double gives 1 too, but with a tiny tail that
        // decides a tie the exact sum must see it.
        assert_eq!(exact_f32(&[1e30, 1.0, -1e30]), 1.0);
        // 1 + 2^-24 is a tie between 1 and 1+2^-23: even → 1. Adding 2^-200
        // makes it above half → rounds up. Double would lose the 2^-200.
        let t = 2f64.powi(-24);
        assert_eq!(exact_f32(&[1.0, t]), 1.0);
        assert_eq!(exact_f32(&[1.0, t, 2f64.powi(-200)]), 1.0 + f32::EPSILON);
        assert_eq!(exact_f32(&[1.0, t, -2f64.powi(-200)]), 1.0);
        assert_eq!(
            exact_f32(&[-1.0, -t, -2f64.powi(-200)]),
            -1.0 - f32::EPSILON
        );
        assert_eq!(exact_f32(&[]), 0.0);
        assert_eq!(exact_f32(&[3.0, -3.0]).to_bits(), 0);
    }

    #[test]
    fn fast_path_agrees_or_declines() {
        let exact = |w: &[f32], x: &[f32]| {
            let mut s = ExactSum::new();
            w.iter()
                .zip(x)
                .for_each(|(a, b)| s.add(*a as f64 * *b as f64));
            s.round_f32()
        };
        // Ties and near-ties must not be decided by the fast path wrongly.
        let t = (2f64.powi(-24)) as f32;
        let cases: Vec<(Vec<f32>, Vec<f32>)> = vec![
            (vec![1.0, 1.0], vec![1.0, t]), // exact tie → even (1.0)
            (vec![1.0, 1.0, 1.0], vec![1.0, t, 2f32.powi(-60)]), // just above the tie
            (vec![1.0, 1.0, 1.0], vec![1.0, t, -(2f32.powi(-60))]), // just below
            (vec![1e30, 1.0, -1e30], vec![1.0, 1.0, 1.0]), // cancellation
            (vec![3.0, -3.0], vec![1.5, 1.5]), // exact zero
        ];
        for (w, x) in &cases {
            let e = exact(w, x);
            if let Some(f) = dot_rounded_fast(w, x) {
                assert_eq!(f.to_bits(), e.to_bits(), "{w:?} {x:?}");
            }
        }
        assert_eq!(
            dot_rounded_fast(&[1.0, 1.0], &[1.0, t]),
            None,
            "a tie needs the exact sum"
        );
        // Random rows: the fast path answers almost always and always right.
        let mut seed = 99u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut answered = 0;
        for len in [1usize, 3, 7, 64, 257, 1000] {
            for _ in 0..200 {
                let w: Vec<f32> = (0..len).map(|_| rnd() as f32).collect();
                let x: Vec<f32> = (0..len).map(|_| (rnd() * 1e3) as f32).collect();
                if let Some(f) = dot_rounded_fast(&w, &x) {
                    answered += 1;
                    assert_eq!(f.to_bits(), exact(&w, &x).to_bits());
                }
            }
        }
        assert!(answered > 1150, "{answered}");
    }

    #[test]
    fn extremes() {
        assert_eq!(exact_f32(&[1e38, 1e38, 1e38, 1e38]), f32::INFINITY);
        let tiny = f32::from_bits(1) as f64; // 2^-149
        assert_eq!(exact_f32(&[tiny, tiny * 0.25]), f32::from_bits(1));
        assert_eq!(
            exact_f32(&[tiny * 0.5]),
            0.0,
            "tie to even at the subnormal edge"
        );
        assert_eq!(
            exact_f32(&[tiny * 0.5, tiny * 2f64.powi(-60)]),
            f32::from_bits(1)
        );
        assert!(exact_f32(&[1.0, f64::NAN]).is_nan());
        assert_eq!(exact_f32(&[f64::INFINITY, 5.0]), f32::INFINITY);
    }

    #[test]
    fn matches_exact_integer_sums() {
        // Terms m·2^e (|m| < 2^21, e in [-40, -10]): the exact total times
        // 2^40 is an integer below 2^53, so it converts to double exactly and
        // a single `as f32` is the correctly rounded reference.
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut inexact = 0;
        for _ in 0..20000 {
            let n = (rnd() % 40 + 1) as usize;
            let mut terms = Vec::new();
            let mut exact: i64 = 0;
            for _ in 0..n {
                let m = (rnd() % (1 << 21)) as i64 - (1 << 20);
                let e = (rnd() % 31) as i32 - 40;
                terms.push(m as f64 * 2f64.powi(e));
                exact += m << (e + 40);
            }
            let want = (exact as f64 * 2f64.powi(-40)) as f32;
            assert_eq!(exact_f32(&terms).to_bits(), want.to_bits(), "{terms:?}");
            inexact += (want as f64 != exact as f64 * 2f64.powi(-40)) as usize;
        }
        assert!(inexact > 1000, "the cases must exercise rounding");
    }
}

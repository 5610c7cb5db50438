//! The hardware's function tables for exp, SiLU and GELU (spec §5.3).
//!
//! **Definition.** Each table has 256 segments over `[lo, hi)`. Knots
//! `xs_k = lo + k·(hi − lo)/256` (k = 0..=256) and values `ys_k = f(xs_k)` are
//! computed in double. Segment i holds the chord through knots i and i+1:
//! `c1_i = (ys_{i+1} − ys_i)/(xs_{i+1} − xs_i)` and `c0_i = ys_i − c1_i·xs_i`,
//! both computed in double and then rounded to single. `k = single(256/(hi − lo))`.
//!
//! Evaluation of a single `x`: below `lo` and at/above `hi` fixed rules apply
//! (see [`Table::eval`]); otherwise `i = floor(single(single(x − lo) × k))`,
//! clamped to 0..=255, and `y = single(c0_i + single(c1_i × x))`.
//! A NaN input falls through to the segment formula and gives NaN.

use std::sync::OnceLock;

/// What a table returns outside `[lo, hi)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outside {
    Zero,
    One,
    Identity,
}

/// One 256-segment chord table (the coefficients the hardware must hold).
pub struct Table {
    pub lo: f32,
    pub hi: f32,
    /// single(256 / (hi − lo))
    pub k: f32,
    pub c0: [f32; 256],
    pub c1: [f32; 256],
    pub below: Outside,
    pub above: Outside,
}

fn apply(rule: Outside, x: f32) -> f32 {
    match rule {
        Outside::Zero => 0.0,
        Outside::One => 1.0,
        Outside::Identity => x,
    }
}

impl Table {
    /// Build the table for `f` over `[lo, hi)` as the definition above says.
    pub fn build(lo: f64, hi: f64, f: fn(f64) -> f64, below: Outside, above: Outside) -> Table {
        let step = (hi - lo) / 256.0;
        let xs: Vec<f64> = (0..=256).map(|k| lo + k as f64 * step).collect();
        let ys: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
        let mut c0 = [0f32; 256];
        let mut c1 = [0f32; 256];
        for i in 0..256 {
            let slope = (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]);
            c1[i] = slope as f32;
            c0[i] = (ys[i] - slope * xs[i]) as f32;
        }
        Table {
            lo: lo as f32,
            hi: hi as f32,
            k: (256.0 / (hi - lo)) as f32,
            c0,
            c1,
            below,
            above,
        }
    }

    /// Evaluate for one single-precision input, exactly as the hardware does.
    #[inline]
    pub fn eval(&self, x: f32) -> f32 {
        if x < self.lo {
            return apply(self.below, x);
        }
        if x >= self.hi {
            return apply(self.above, x);
        }
        let t = (x - self.lo) * self.k;
        // t ≥ 0 here, so truncation is the floor (and needs no libm call);
        // `as i32` maps NaN to 0; the NaN then propagates through c1·x.
        let i = (t as i32).clamp(0, 255) as usize;
        self.c0[i] + self.c1[i] * x
    }
}

impl Table {
    /// `y[i] = eval(x[i])` for every element, the same bits: eight at a
    /// time with AVX2 (the same single-precision steps, the segment's
    /// coefficients gathered by index) where the CPU has it.
    pub fn eval_into(&self, x: &[f32], y: &mut [f32]) {
        assert_eq!(x.len(), y.len());
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was detected at run time.
            done = unsafe { self.eval_avx2(x, y) };
        }
        for (o, &v) in y[done..].iter_mut().zip(&x[done..]) {
            *o = self.eval(v);
        }
    }

    /// [`Table::eval_into`] for the first multiple of eight elements; returns how many.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn eval_avx2(&self, x: &[f32], y: &mut [f32]) -> usize {
        use std::arch::x86_64::*;
        let n = x.len() / 8 * 8;
        let (lo, hi, k) = (
            _mm256_set1_ps(self.lo),
            _mm256_set1_ps(self.hi),
            _mm256_set1_ps(self.k),
        );
        let rule = |r: Outside, v: __m256| match r {
            Outside::Zero => _mm256_setzero_ps(),
            Outside::One => _mm256_set1_ps(1.0),
            Outside::Identity => v,
        };
        for j in (0..n).step_by(8) {
            let v = _mm256_loadu_ps(x.as_ptr().add(j));
            // t = single(single(x − lo) × k); i = trunc(t) clamped to 0..=255
            // (a NaN or huge t converts to i32::MIN, clamped to 0: where
            // that differs from the scalar's saturation x is outside).
            let t = _mm256_mul_ps(_mm256_sub_ps(v, lo), k);
            let i = _mm256_cvttps_epi32(t);
            let i = _mm256_min_epi32(
                _mm256_max_epi32(i, _mm256_setzero_si256()),
                _mm256_set1_epi32(255),
            );
            let c0 = _mm256_i32gather_ps::<4>(self.c0.as_ptr(), i);
            let c1 = _mm256_i32gather_ps::<4>(self.c1.as_ptr(), i);
            // Two roundings, as the scalar (no fused multiply-add).
            let inside = _mm256_add_ps(c0, _mm256_mul_ps(c1, v));
            // Ordered compares: a NaN is neither below nor above.
            let below = _mm256_cmp_ps::<_CMP_LT_OQ>(v, lo);
            let above = _mm256_cmp_ps::<_CMP_GE_OQ>(v, hi);
            let r = _mm256_blendv_ps(inside, rule(self.below, v), below);
            let r = _mm256_blendv_ps(r, rule(self.above, v), above);
            _mm256_storeu_ps(y.as_mut_ptr().add(j), r);
        }
        n
    }
}

/// SiLU in double: x / (1 + e^(−x)).
pub fn silu_f64(x: f64) -> f64 {
    x / (1.0 + (-x).exp())
}

/// GELU, ggml's tanh approximation, in double (§3.4).
pub fn gelu_f64(x: f64) -> f64 {
    0.5 * x * (1.0 + (0.7978845608028654 * (x + 0.044715 * x * x * x)).tanh())
}

/// SiLU table: [−12, 12), 0 below, x at and above.
pub fn silu() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::build(-12.0, 12.0, silu_f64, Outside::Zero, Outside::Identity))
}

/// GELU table: [−6, 6), 0 below, x at and above.
pub fn gelu() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::build(-6.0, 6.0, gelu_f64, Outside::Zero, Outside::Identity))
}

/// exp table for softmax (inputs ≤ 0): [−16, 0), 0 below, 1 at and above.
pub fn exp() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::build(-16.0, 0.0, f64::exp, Outside::Zero, Outside::One))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Max abs error of a table against the exact function on `n` points of [a, b].
    fn max_err(t: &Table, f: fn(f64) -> f64, a: f64, b: f64, n: usize) -> f64 {
        (0..n)
            .map(|i| {
                let x = (a + (b - a) * i as f64 / (n - 1) as f64) as f32;
                (t.eval(x) as f64 - f(x as f64)).abs()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn k_constants_match_the_spec() {
        assert_eq!(silu().k, 10.666667);
        assert_eq!(gelu().k, 21.333334);
        assert_eq!(exp().k, 16.0);
    }

    #[test]
    fn tables_within_quoted_error() {
        // Quoted: SiLU 5.5e-4, GELU 2.2e-4, exp 4.7e-4 (spec §5.3); upstream
        // test ranges: SiLU [−10, 10], GELU [−8, 8], exp [−20, 0] on 20001 points.
        let e_silu = max_err(silu(), silu_f64, -10.0, 10.0, 20001);
        let e_gelu = max_err(gelu(), gelu_f64, -8.0, 8.0, 20001);
        let e_exp = max_err(exp(), f64::exp, -20.0, 0.0, 20001);
        assert!(e_silu < 5.6e-4, "silu {e_silu}");
        assert!(e_gelu < 2.3e-4, "gelu {e_gelu}");
        assert!(e_exp < 4.8e-4, "exp {e_exp}");
        // And they are real approximations, not exact functions by accident.
        assert!(e_silu > 1e-5 && e_gelu > 1e-5 && e_exp > 1e-5);
    }

    #[test]
    fn eight_at_a_time_is_eval_bit_for_bit() {
        // Every 4099th bit pattern (all signs, exponents, NaNs, infinities),
        // the range ends and their neighbours, knots, and a length that
        // leaves a tail for the scalar loop.
        let mut x: Vec<f32> = (0..=u32::MAX / 4099)
            .map(|i| f32::from_bits(i * 4099))
            .collect();
        for t in [silu(), gelu(), exp()] {
            for e in [t.lo, t.hi] {
                x.extend([e, e.next_down(), e.next_up(), -e]);
            }
            x.extend((0..=256).map(|k| t.lo + k as f32 * (t.hi - t.lo) / 256.0));
        }
        x.extend([
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
        ]);
        x.push(1.5);
        assert!(!x.len().is_multiple_of(8));
        for t in [silu(), gelu(), exp()] {
            let mut y = vec![0f32; x.len()];
            t.eval_into(&x, &mut y);
            for (v, o) in x.iter().zip(&y) {
                let want = t.eval(*v);
                assert_eq!(o.to_bits(), want.to_bits(), "{v:e}: {o:e} vs {want:e}");
            }
        }
    }

    #[test]
    fn outside_rules() {
        assert_eq!(silu().eval(-12.5), 0.0);
        assert_eq!(silu().eval(12.0), 12.0);
        assert_eq!(gelu().eval(7.25), 7.25);
        assert_eq!(gelu().eval(-6.01), 0.0);
        assert_eq!(exp().eval(0.0), 1.0);
        assert_eq!(exp().eval(-16.5), 0.0);
        assert!(exp().eval(f32::NAN).is_nan());
        // Inside: the chord formula at a knot reproduces the rounded knot value closely.
        let t = exp();
        let x = -1.0f32;
        let i = (((x - t.lo) * t.k).floor() as usize).min(255);
        assert_eq!(t.eval(x), t.c0[i] + t.c1[i] * x);
    }
}

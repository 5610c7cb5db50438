//! The vector unit's macro-ops in both numerics modes (spec §3.4, §5.3).
//!
//! Float reference: reductions and transcendental functions in double, each
//! result rounded once to single. Hardware numerics: every intermediate is a
//! single with round-to-nearest-even after each operation (Rust never fuses
//! a·b + c, so each `*`/`+` below is one rounded step); "sequential sum" means
//! acc = +0, then acc = acc + x[i] in order. The hardware rule for each op is
//! written in its doc comment.

use super::tables;

/// Which arithmetic the emulator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Numerics {
    /// Accuracy reference (default).
    #[default]
    Float,
    /// Bit-exact hardware rules.
    Hardware,
}

/// recip(x) = 1/x correctly rounded to single.
#[inline]
pub fn recip(x: f32) -> f32 {
    1.0 / x
}

/// rsqrt(x) = recip(sqrt_f32(x)): a correctly rounded single square root,
/// then a correctly rounded reciprocal (the hardware has both units).
#[inline]
pub fn rsqrt(x: f32) -> f32 {
    recip(x.sqrt())
}

/// Sequential single-precision sum: acc = +0, acc += v in order.
#[inline]
pub fn seq_sum(v: impl Iterator<Item = f32>) -> f32 {
    v.fold(0.0f32, |acc, x| acc + x)
}

/// RMSNORM. Hardware: ss = sequential sum of single(x_i²); m = single(ss ×
/// recip(N)); r = rsqrt(single(m + eps)); y_i = single(single(x_i × r) × g_i).
pub fn rmsnorm(mode: Numerics, x: &[f32], g: &[f32], eps: f32, y: &mut [f32]) {
    let n = x.len();
    match mode {
        Numerics::Hardware => {
            let ss = seq_sum(x.iter().map(|v| v * v));
            let m = ss * recip(n as f32);
            let r = rsqrt(m + eps);
            for i in 0..n {
                y[i] = (x[i] * r) * g[i];
            }
        }
        Numerics::Float => {
            let ss: f64 = x.iter().map(|&v| v as f64 * v as f64).sum();
            let r = 1.0 / (ss / n as f64 + eps as f64).sqrt();
            for i in 0..n {
                y[i] = (x[i] as f64 * r * g[i] as f64) as f32;
            }
        }
    }
}

/// LAYERNORM (G then B). Hardware: rn = recip(N); mu = single(sequential
/// sum(x) × rn); d_i = single(x_i − mu); var = single(sequential
/// sum(single(d_i²)) × rn); r = rsqrt(single(var + eps)); y_i =
/// single(single(single(d_i × r) × g_i) + b_i).
pub fn layernorm(mode: Numerics, x: &[f32], g: &[f32], b: &[f32], eps: f32, y: &mut [f32]) {
    let n = x.len();
    match mode {
        Numerics::Hardware => {
            let rn = recip(n as f32);
            let mu = seq_sum(x.iter().copied()) * rn;
            let d: Vec<f32> = x.iter().map(|v| v - mu).collect();
            let var = seq_sum(d.iter().map(|v| v * v)) * rn;
            let r = rsqrt(var + eps);
            for i in 0..n {
                y[i] = ((d[i] * r) * g[i]) + b[i];
            }
        }
        Numerics::Float => {
            let mu = x.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
            let var = x.iter().map(|&v| (v as f64 - mu).powi(2)).sum::<f64>() / n as f64;
            let r = 1.0 / (var + eps as f64).sqrt();
            for i in 0..n {
                y[i] = ((x[i] as f64 - mu) * r * g[i] as f64 + b[i] as f64) as f32;
            }
        }
    }
}

/// SILUMUL. Hardware: single(SiLU_table(x) × y).
pub fn silumul(mode: Numerics, x: &[f32], m: &[f32], y: &mut [f32]) {
    match mode {
        Numerics::Hardware => {
            let y = &mut y[..x.len()];
            tables::silu().eval_into(x, y);
            for (o, &mi) in y.iter_mut().zip(m) {
                *o *= mi;
            }
        }
        Numerics::Float => {
            for i in 0..x.len() {
                y[i] = (tables::silu_f64(x[i] as f64) * m[i] as f64) as f32;
            }
        }
    }
}

/// GELU (tanh form). Hardware: GELU_table(x).
pub fn gelu(mode: Numerics, x: &[f32], y: &mut [f32]) {
    match mode {
        Numerics::Hardware => tables::gelu().eval_into(x, &mut y[..x.len()]),
        Numerics::Float => {
            for i in 0..x.len() {
                y[i] = tables::gelu_f64(x[i] as f64) as f32;
            }
        }
    }
}

/// MEANROWS over `rows` consecutive rows of `cols`. Hardware: per column a
/// sequential sum over the rows in order, then single(sum × recip(rows)).
pub fn meanrows(mode: Numerics, x: &[f32], rows: usize, cols: usize, y: &mut [f32]) {
    match mode {
        Numerics::Hardware => {
            let rr = recip(rows as f32);
            for c in 0..cols {
                y[c] = seq_sum((0..rows).map(|r| x[r * cols + c])) * rr;
            }
        }
        Numerics::Float => {
            for c in 0..cols {
                let s: f64 = (0..rows).map(|r| x[r * cols + c] as f64).sum();
                y[c] = (s / rows as f64) as f32;
            }
        }
    }
}

/// ROPE (same in both modes, plain single arithmetic): for pair i, j = i mod
/// (N1/2): v[2i] = single(single(v0·cos_j) − single(v1·sin_j)), v[2i+1] =
/// single(single(v0·sin_j) + single(v1·cos_j)), using the old v0, v1.
pub fn rope(v: &mut [f32], cs: &[f32]) {
    let half = cs.len() / 2;
    for i in 0..v.len() / 2 {
        let j = i % half;
        let (c, s) = (cs[2 * j], cs[2 * j + 1]);
        let (v0, v1) = (v[2 * i], v[2 * i + 1]);
        v[2 * i] = v0 * c - v1 * s;
        v[2 * i + 1] = v0 * s + v1 * c;
    }
}

/// The shape of one ATTN: `q` holds n_heads·head_dim values; `k` and `v` hold
/// rows 0..T of kv_dim values each (already widened to single).
pub struct AttnShape {
    pub n_heads: usize,
    pub n_kv_heads: usize,
    pub head_dim: usize,
    pub rows: usize,
}

/// ATTN. For head h, KV head g = h / (n_heads / n_kv_heads). Hardware (per
/// head): s_t = sequential sum over i of single(q_i × k_t,i); s_t =
/// single(s_t × rsqrt(head_dim)); m = max s_t; e_t = EXP_table(single(s_t −
/// m)); z = sequential sum of e_t; w_t = single(e_t × recip(z)); out = +0,
/// then for t in order out = single(out + single(w_t × v_t)) elementwise.
/// Float: scores, softmax and the weighted sum in double.
pub fn attention(mode: Numerics, sh: &AttnShape, q: &[f32], k: &[f32], v: &[f32], out: &mut [f32]) {
    let hd = sh.head_dim;
    let kvd = sh.n_kv_heads * hd;
    let group = (sh.n_heads / sh.n_kv_heads).max(1);
    let t_rows = sh.rows;
    // K of each KV head transposed (column i holds k_t,i for every t), so
    // the T scores' sums advance together, one per vector lane, each still
    // in the order i = 0, 1, … (both modes: the float sums were a serial
    // chain of double additions per score, ~7% of a float-mode token).
    let kt: Vec<Vec<f32>> = (0..sh.n_kv_heads)
        .map(|g| {
            let mut c = vec![0f32; hd * t_rows];
            for t in 0..t_rows {
                for (i, &kv) in k[t * kvd + g * hd..t * kvd + (g + 1) * hd]
                    .iter()
                    .enumerate()
                {
                    c[i * t_rows + t] = kv;
                }
            }
            c
        })
        .collect();
    for h in 0..sh.n_heads {
        let g = h / group;
        let qh = &q[h * hd..(h + 1) * hd];
        let oh = &mut out[h * hd..(h + 1) * hd];
        let vrow = |t: usize| &v[t * kvd + g * hd..t * kvd + (g + 1) * hd];
        match mode {
            Numerics::Hardware => {
                let scale = rsqrt(hd as f32);
                let mut s = vec![0f32; t_rows];
                for (i, &qi) in qh.iter().enumerate() {
                    for (st, &kv) in s.iter_mut().zip(&kt[g][i * t_rows..(i + 1) * t_rows]) {
                        *st += qi * kv;
                    }
                }
                for st in &mut s {
                    *st *= scale;
                }
                let m = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let d: Vec<f32> = s.iter().map(|&st| st - m).collect();
                let mut e = vec![0f32; t_rows];
                tables::exp().eval_into(&d, &mut e);
                let rz = recip(seq_sum(e.iter().copied()));
                oh.fill(0.0);
                for (t, &et) in e.iter().enumerate() {
                    let w = et * rz;
                    for (o, &vv) in oh.iter_mut().zip(vrow(t)) {
                        *o += w * vv;
                    }
                }
            }
            Numerics::Float => {
                let scale = 1.0 / (hd as f64).sqrt();
                // Σ_i q_i·k_t,i in double, in order i (from −0, as `f64::sum`).
                let mut s = vec![-0.0f64; t_rows];
                for (i, &qi) in qh.iter().enumerate() {
                    let qi = qi as f64;
                    for (st, &kv) in s.iter_mut().zip(&kt[g][i * t_rows..(i + 1) * t_rows]) {
                        *st += qi * kv as f64;
                    }
                }
                for st in &mut s {
                    *st *= scale;
                }
                let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = s.iter().map(|&st| (st - m).exp()).collect();
                let z: f64 = e.iter().sum();
                let mut acc = vec![0f64; hd];
                for (t, &et) in e.iter().enumerate() {
                    let w = et / z;
                    for (a, &vv) in acc.iter_mut().zip(vrow(t)) {
                        *a += w * vv as f64;
                    }
                }
                for (o, a) in oh.iter_mut().zip(acc) {
                    *o = a as f32;
                }
            }
        }
    }
}

/// ARGMAX: index of the first maximum (ties → lowest index; NaNs never win;
/// all NaN → 0). The largest non-NaN value in eight lanes (so it
/// vectorises), then its first index: ~20 µs over a 49,152-entry vocabulary,
/// where a scan with a compare and branch per element took ~100 µs.
pub fn argmax(x: &[f32]) -> usize {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            // f32::max ignores a NaN operand.
            lanes[k] = lanes[k].max(c[k]);
        }
    }
    let m = lanes
        .iter()
        .chain(rest)
        .fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    x.iter().position(|&v| v == m).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsqrt_is_recip_of_rounded_sqrt() {
        // The two-rounding definition differs from a once-rounded 1/√x for some inputs.
        let mut differ = 0;
        for i in 1..200_000u32 {
            let x = 1.0 + i as f32 * 1e-5;
            assert_eq!(rsqrt(x), 1.0 / x.sqrt());
            if rsqrt(x) != (1.0 / (x as f64).sqrt()) as f32 {
                differ += 1;
            }
        }
        assert!(differ > 0, "the definitions should differ somewhere");
    }

    #[test]
    fn rmsnorm_hw_chain() {
        let x = [1.0f32, 2.0, 3.0, 4.0];
        let g = [1.0f32, 0.5, 2.0, 1.0];
        let mut y = [0f32; 4];
        rmsnorm(Numerics::Hardware, &x, &g, 1e-5, &mut y);
        let ss = 0.0f32 + 1.0 + 4.0 + 9.0 + 16.0;
        let r = 1.0 / ((ss * (1.0 / 4.0)) + 1e-5f32).sqrt();
        assert_eq!(y[2], (3.0 * r) * 2.0);
        let mut yf = [0f32; 4];
        rmsnorm(Numerics::Float, &x, &g, 1e-5, &mut yf);
        for i in 0..4 {
            assert!((y[i] - yf[i]).abs() < 1e-6);
        }
    }

    #[test]
    fn layernorm_modes_agree_closely() {
        let x: Vec<f32> = (0..64)
            .map(|i| (i as f32 * 0.37).sin() * 3.0 + 1.0)
            .collect();
        let g: Vec<f32> = (0..64).map(|i| 1.0 + i as f32 * 0.01).collect();
        let b: Vec<f32> = (0..64).map(|i| i as f32 * -0.02).collect();
        let (mut a, mut c) = (vec![0f32; 64], vec![0f32; 64]);
        layernorm(Numerics::Hardware, &x, &g, &b, 1e-5, &mut a);
        layernorm(Numerics::Float, &x, &g, &b, 1e-5, &mut c);
        for i in 0..64 {
            assert!((a[i] - c[i]).abs() < 1e-5, "{i} {} {}", a[i], c[i]);
        }
        let mean: f32 = c
            .iter()
            .zip(&b)
            .zip(&g)
            .map(|((y, b), g)| (y - b) / g)
            .sum::<f32>()
            / 64.0;
        assert!(mean.abs() < 1e-5);
    }

    #[test]
    fn attention_gqa_and_softmax() {
        // 4 heads, 2 KV heads, hd 2, 3 rows: head h uses KV head h/2.
        let sh = AttnShape {
            n_heads: 4,
            n_kv_heads: 2,
            head_dim: 2,
            rows: 3,
        };
        let q = [1.0f32, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0];
        let k = [
            1.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 5.0, 5.0, 1.0, 1.0, 0.0, 0.0,
        ];
        let v = [
            1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0,
        ];
        for mode in [Numerics::Float, Numerics::Hardware] {
            let mut out = [0f32; 8];
            attention(mode, &sh, &q, &k, &v, &mut out);
            // Head 3 has q = 0: uniform weights over KV head 1's V rows (4, 8, 12)/(3, 7, 11).
            assert!(
                (out[6] - 7.0).abs() < 1e-2 && (out[7] - 8.0).abs() < 1e-2,
                "{out:?}"
            );
            // Head 0 (KV head 0): scores q·k/√2 = (1, 0, 1)/√2.
            let s = [1.0f64, 0.0, 1.0].map(|v| (v / 2f64.sqrt()).exp());
            let z: f64 = s.iter().sum();
            let e0 = (s[0] * 1.0 + s[1] * 5.0 + s[2] * 9.0) / z;
            assert!(
                (out[0] as f64 - e0).abs() < 2e-3,
                "{mode:?} {} {e0}",
                out[0]
            );
        }
    }

    /// Float-mode ATTN read off its description: per head, each score a
    /// double sum over i in order, softmax and weighted sum in double.
    fn attention_float_plain(sh: &AttnShape, q: &[f32], k: &[f32], v: &[f32]) -> Vec<f32> {
        let (hd, kvd) = (sh.head_dim, sh.n_kv_heads * sh.head_dim);
        let group = sh.n_heads / sh.n_kv_heads;
        let mut out = vec![0f32; sh.n_heads * hd];
        for h in 0..sh.n_heads {
            let g = h / group;
            let s: Vec<f64> = (0..sh.rows)
                .map(|t| {
                    let kr = &k[t * kvd + g * hd..][..hd];
                    let dot: f64 = (0..hd).map(|i| q[h * hd + i] as f64 * kr[i] as f64).sum();
                    dot * (1.0 / (hd as f64).sqrt())
                })
                .collect();
            let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = s.iter().map(|&st| (st - m).exp()).collect();
            let z: f64 = e.iter().sum();
            for i in 0..hd {
                let mut a = 0f64;
                for t in 0..sh.rows {
                    a += e[t] / z * v[t * kvd + g * hd + i] as f64;
                }
                out[h * hd + i] = a as f32;
            }
        }
        out
    }

    #[test]
    fn float_attention_is_the_plain_double_computation_bit_for_bit() {
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5) as f32 * 4.0
        };
        for (n_heads, n_kv_heads, head_dim, rows) in [
            (9, 3, 64, 1),
            (9, 3, 64, 37),
            (4, 4, 8, 5),
            (8, 2, 16, 64),
            (2, 1, 6, 3),
        ] {
            let sh = AttnShape {
                n_heads,
                n_kv_heads,
                head_dim,
                rows,
            };
            let mut q: Vec<f32> = (0..n_heads * head_dim).map(|_| rnd()).collect();
            let kv = rows * n_kv_heads * head_dim;
            let mut k: Vec<f32> = (0..kv).map(|_| rnd()).collect();
            // Head 0's score for row 0 depends on the order of its sum
            // (2^60 + 0.75 − 2^60 + rest is the rest in order i, 0 or 0.75
            // summed another way); its other rows' scores stay small.
            let big = 2f32.powi(30);
            q[..3].copy_from_slice(&[big, 1.0, -big]);
            k[..3].copy_from_slice(&[big, 0.75, big]);
            for t in 1..rows {
                k[t * n_kv_heads * head_dim] = 0.0;
                k[t * n_kv_heads * head_dim + 2] = 0.0;
            }
            let v: Vec<f32> = (0..kv).map(|_| rnd()).collect();
            let mut out = vec![0f32; n_heads * head_dim];
            attention(Numerics::Float, &sh, &q, &k, &v, &mut out);
            let want = attention_float_plain(&sh, &q, &k, &v);
            let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&out),
                bits(&want),
                "{n_heads}/{n_kv_heads} heads, hd {head_dim}, {rows} rows"
            );
        }
    }

    #[test]
    fn argmax_is_the_first_maximum_as_a_scan_finds_it() {
        // The rule read off as a scan: a later value wins only if greater,
        // or if the best so far is NaN and it is not.
        let scan = |x: &[f32]| {
            let mut best = 0;
            for (i, &v) in x.iter().enumerate() {
                if v > x[best] || x[best].is_nan() && !v.is_nan() {
                    best = i;
                }
            }
            best
        };
        let mut seed = 77u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let pick = [
            f32::NAN,
            f32::NEG_INFINITY,
            f32::INFINITY,
            0.0,
            -0.0,
            1.0,
            -1.0,
            3.0,
        ];
        for len in [0usize, 1, 2, 7, 8, 9, 31, 100] {
            for _ in 0..300 {
                let x: Vec<f32> = (0..len).map(|_| pick[(next() % 8) as usize]).collect();
                assert_eq!(argmax(&x), scan(&x), "{x:?}");
            }
        }
    }

    #[test]
    fn argmax_ties_lowest() {
        assert_eq!(argmax(&[1.0, 3.0, 3.0, 2.0]), 1);
        assert_eq!(argmax(&[f32::NAN, 1.0, 1.0]), 1);
        assert_eq!(argmax(&[-1.0]), 0);
    }

    #[test]
    fn rope_adjacent_pairs() {
        let mut v = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 0.0];
        // N1 = 4: two pairs (cos, sin) = (0, 1) and (1, 0); reused for the second head.
        rope(&mut v, &[0.0, 1.0, 1.0, 0.0]);
        assert_eq!(v, [0.0, 1.0, 0.0, 1.0, -1.0, 1.0, 2.0, 0.0]);
    }
}

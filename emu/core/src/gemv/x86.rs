//! x86-64 kernels of [`super`]: eight rows at a time, row r in lane r of
//! the accumulator, so each row keeps its own block-by-block chain while
//! the integer block sums of the eight rows are reduced together. The
//! scalar definitions they must equal bit for bit are in `gemv.rs`.

use super::{LimbInput, Q8Input};
use std::arch::x86_64::*;

/// How the integer block sums are formed: `maddubs` + `madd` (AVX2), or
/// `vpdpbusd` in its EVEX (AVX-512 VNNI) or VEX (AVX-VNNI) encoding.
pub const MADD: u8 = 0;
pub const VNNI512: u8 = 1;
pub const VNNI256: u8 = 2;

/// [`super::quantize_input`] with AVX2 and F16C, block by block: the
/// same steps as the portable loop (NaN-ignoring maximum, single d and
/// 1/d, round half away from zero by truncation and the exact remainder,
/// saturation to int8, NaN → 0, d rounded to F16 to nearest even).
#[target_feature(enable = "avx2,f16c,fma")]
pub unsafe fn quantize_avx2(x: &[f32], xq: &mut Q8Input) {
    let nb = x.len() / 32;
    assert!(xq.q.len() >= 32 * nb && xq.d.len() >= nb && xq.s.len() >= nb);
    let sign = _mm256_set1_ps(-0.0);
    let (lim, half, one) = (
        _mm256_set1_ps(256.0),
        _mm256_set1_ps(0.5),
        _mm256_set1_ps(1.0),
    );
    for b in 0..nb {
        let xp = x.as_ptr().add(32 * b);
        let a: [__m256; 4] = std::array::from_fn(|k| _mm256_loadu_ps(xp.add(8 * k)));
        // maxps returns its second operand when either is NaN: m stays
        // a number, NaN inputs are skipped.
        let mut m = _mm256_setzero_ps();
        for v in a {
            m = _mm256_max_ps(_mm256_andnot_ps(sign, v), m);
        }
        let m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps::<1>(m));
        let m2 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        let m1 = _mm_max_ss(m2, _mm_shuffle_ps::<1>(m2, m2));
        let amax = _mm_cvtss_f32(m1);
        let db = amax / 127.0;
        let id = _mm256_set1_ps(if db != 0.0 { 1.0 / db } else { 0.0 });
        let mut sum = _mm256_setzero_si256();
        let q: [__m256i; 4] = std::array::from_fn(|k| {
            let v = _mm256_mul_ps(a[k], id);
            let nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(v, v);
            let c = _mm256_max_ps(
                _mm256_min_ps(v, lim),
                _mm256_sub_ps(_mm256_setzero_ps(), lim),
            );
            let t = _mm256_round_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(c);
            let f = _mm256_sub_ps(c, t);
            let up = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(f, half), one);
            let down = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_LE_OQ>(f, _mm256_sub_ps(_mm256_setzero_ps(), half)),
                one,
            );
            let r = _mm256_andnot_ps(nan, _mm256_sub_ps(_mm256_add_ps(t, up), down));
            let i = _mm256_cvttps_epi32(r);
            let i = _mm256_min_epi32(
                _mm256_max_epi32(i, _mm256_set1_epi32(-128)),
                _mm256_set1_epi32(127),
            );
            sum = _mm256_add_epi32(sum, i);
            i
        });
        let p = _mm256_packs_epi16(
            _mm256_packs_epi32(q[0], q[1]),
            _mm256_packs_epi32(q[2], q[3]),
        );
        let p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(xq.q.as_mut_ptr().add(32 * b) as *mut __m256i, p);
        let s4 = _mm_add_epi32(
            _mm256_castsi256_si128(sum),
            _mm256_extracti128_si256::<1>(sum),
        );
        let s2 = _mm_add_epi32(s4, _mm_shuffle_epi32::<0b1110>(s4));
        let s1 = _mm_add_epi32(s2, _mm_shuffle_epi32::<0b01>(s2));
        xq.s[b] = _mm_cvtsi128_si32(s1);
        let h = _mm_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT }>(_mm_set_ss(db));
        xq.d[b] = _mm_cvtss_f32(_mm_cvtph_ps(h));
    }
}

#[target_feature(enable = "avx2,f16c,fma")]
pub unsafe fn limbs_avx2(x: &[f32], li: &mut LimbInput) -> bool {
    super::limbs_body(x, li)
}

/// Widen the first multiple of eight F16 values; returns how many.
#[target_feature(enable = "avx2,f16c")]
pub unsafe fn widen_f16(src: &[u8], dst: &mut [f32]) -> usize {
    let n = dst.len().min(src.len() / 2) / 8 * 8;
    for i in (0..n).step_by(8) {
        let h = _mm_loadu_si128(src.as_ptr().add(2 * i) as *const __m128i);
        _mm256_storeu_ps(dst.as_mut_ptr().add(i), _mm256_cvtph_ps(h));
    }
    n
}

/// Rows of the eight lanes from group start `g` of `n` rows (missing rows
/// repeat the last one; their results are not stored).
#[inline(always)]
pub unsafe fn lane_ptrs(w: &[u8], rb: usize, r0: usize, n: usize, g: usize) -> [*const u8; 8] {
    std::array::from_fn(|k| w.as_ptr().add((r0 + (g + k).min(n - 1)) * rb))
}

/// How far ahead of the current eight rows the kernels prefetch (bytes).
pub const PREFETCH: usize = 8192;

/// Prefetch the part of the weights the kernel reaches PREFETCH bytes
/// later: the eight rows of a group are contiguous (8·rb bytes), and each
/// block step moves through 8·bb of them. Hardware prefetchers do not
/// follow eight interleaved streams that move 18 bytes per step well.
#[inline(always)]
pub unsafe fn prefetch_step(p0: *const u8, step: usize, b: usize) {
    let a = p0.wrapping_add(PREFETCH + b * step);
    let mut off = 0;
    while off < step {
        _mm_prefetch::<_MM_HINT_T0>(a.wrapping_add(off) as *const i8);
        off += 64;
    }
}

/// acc + Σ a_u8 · b_i8 per group of four bytes (i32 lanes).
#[inline(always)]
unsafe fn dp<const V: u8>(acc: __m256i, a: __m256i, b: __m256i) -> __m256i {
    match V {
        VNNI512 => _mm256_dpbusd_epi32(acc, a, b),
        VNNI256 => _mm256_dpbusd_avx_epi32(acc, a, b),
        _ => _mm256_add_epi32(
            acc,
            _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)),
        ),
    }
}

/// Two byte dot products summed: Σ a·b + Σ c·d per four-byte group, for
/// a, c ≤ 15 (Q4 nibbles: the 16-bit pair sums cannot saturate).
#[inline(always)]
unsafe fn dp2_nib<const V: u8>(a: __m256i, b: __m256i, c: __m256i, d: __m256i) -> __m256i {
    if V == MADD {
        let s = _mm256_add_epi16(_mm256_maddubs_epi16(a, b), _mm256_maddubs_epi16(c, d));
        _mm256_madd_epi16(s, _mm256_set1_epi16(1))
    } else {
        dp::<V>(dp::<V>(_mm256_setzero_si256(), a, b), c, d)
    }
}

/// The eight rows' F16 block scales at p[k] + o as singles (packed in
/// general-purpose registers, whose ALUs are otherwise idle, then F16C).
#[inline(always)]
unsafe fn scales8(p: &[*const u8; 8], o: usize) -> __m256 {
    let r = |k: usize| (p[k].add(o) as *const u16).read_unaligned() as u64;
    let lo = r(0) | r(1) << 16 | r(2) << 32 | r(3) << 48;
    let hi = r(4) | r(5) << 16 | r(6) << 32 | r(7) << 48;
    _mm256_cvtph_ps(_mm_set_epi64x(hi as i64, lo as i64))
}

/// Q4_0 block `o` of rows a and c as [a low nibbles | c low], [a high | c high].
#[inline(always)]
unsafe fn q4_pair(a: *const u8, c: *const u8, o: usize) -> (__m256i, __m256i) {
    let low4 = _mm256_set1_epi8(0x0F);
    let v = _mm256_loadu2_m128i(
        c.add(o + 2) as *const __m128i,
        a.add(o + 2) as *const __m128i,
    );
    (
        _mm256_and_si256(v, low4),
        _mm256_and_si256(_mm256_srli_epi16(v, 4), low4),
    )
}

/// Sums of four pair vectors (lane half 0: row 2i, half 1: row 2i+1) as
/// one vector in row order 0..7.
#[inline(always)]
unsafe fn reduce_pairs(d: [__m256i; 4]) -> __m256i {
    let s = _mm256_hadd_epi32(_mm256_hadd_epi32(d[0], d[1]), _mm256_hadd_epi32(d[2], d[3]));
    // Now rows 0 2 4 6 1 3 5 7.
    _mm256_permutevar8x32_epi32(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
}

/// Sums of eight row vectors as one vector in row order.
#[inline(always)]
unsafe fn reduce_rows(v: [__m256i; 8]) -> __m256i {
    let a01 = _mm256_hadd_epi32(v[0], v[1]);
    let a23 = _mm256_hadd_epi32(v[2], v[3]);
    let a45 = _mm256_hadd_epi32(v[4], v[5]);
    let a67 = _mm256_hadd_epi32(v[6], v[7]);
    let b03 = _mm256_hadd_epi32(a01, a23);
    let b47 = _mm256_hadd_epi32(a45, a67);
    _mm256_add_epi32(
        _mm256_permute2x128_si256(b03, b47, 0x20),
        _mm256_permute2x128_si256(b03, b47, 0x31),
    )
}

/// Exact isum of block b for the eight rows. Q4_0: Σ nibble·x − 8·Σx
/// (nibbles are unsigned, so no sign trick). Q8_0: with `vpdpbusd`
/// Σ (w + 128)·x − 128·Σx; with `maddubs` |w| · x·sign(w) (never
/// saturates: |w| ≤ 128, |x| ≤ 127).
#[inline(always)]
unsafe fn isum8<const Q4: bool, const V: u8>(
    p: &[*const u8; 8],
    o: usize,
    xp: *const i8,
    sx: i32,
) -> __m256i {
    if Q4 {
        let xl = _mm256_broadcastsi128_si256(_mm_loadu_si128(xp as *const __m128i));
        let xh = _mm256_broadcastsi128_si256(_mm_loadu_si128(xp.add(16) as *const __m128i));
        let d: [__m256i; 4] = std::array::from_fn(|i| {
            let (lo, hi) = q4_pair(p[2 * i], p[2 * i + 1], o);
            dp2_nib::<V>(lo, xl, hi, xh)
        });
        _mm256_sub_epi32(reduce_pairs(d), _mm256_set1_epi32(8 * sx))
    } else {
        let xv = _mm256_loadu_si256(xp as *const __m256i);
        let v: [__m256i; 8] = std::array::from_fn(|k| {
            let wv = _mm256_loadu_si256(p[k].add(o + 2) as *const __m256i);
            if V == MADD {
                dp::<V>(
                    _mm256_setzero_si256(),
                    _mm256_sign_epi8(wv, wv),
                    _mm256_sign_epi8(xv, wv),
                )
            } else {
                dp::<V>(
                    _mm256_setzero_si256(),
                    _mm256_xor_si256(wv, _mm256_set1_epi8(-128)),
                    xv,
                )
            }
        });
        let s = reduce_rows(v);
        if V == MADD {
            s
        } else {
            _mm256_sub_epi32(s, _mm256_set1_epi32(128 * sx))
        }
    }
}

/// Hardware-numerics rows: per block the eight exact isums, scale =
/// single(dw × dx), term = single(single(isum) × scale), acc = single(acc
/// + term) lane by lane — the definition's chain for each row.
#[inline(always)]
pub unsafe fn rows_hw_q<const Q4: bool, const V: u8>(
    w: &[u8],
    rb: usize,
    r0: usize,
    xq: &Q8Input,
    y: &mut [f32],
) {
    let (n, nb) = (y.len(), xq.d.len());
    let bb = if Q4 { 18 } else { 34 };
    assert!(w.len() >= (r0 + n) * rb && rb >= nb * bb);
    assert!(xq.q.len() >= 32 * nb && xq.s.len() >= nb);
    for g in (0..n).step_by(8) {
        let p = lane_ptrs(w, rb, r0, n, g);
        let mut acc = _mm256_setzero_ps();
        for b in 0..nb {
            let o = b * bb;
            prefetch_step(p[0], 8 * bb, b);
            let isum = isum8::<Q4, V>(&p, o, xq.q.as_ptr().add(32 * b), xq.s[b]);
            let scale = _mm256_mul_ps(scales8(&p, o), _mm256_set1_ps(xq.d[b]));
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_cvtepi32_ps(isum), scale));
        }
        if n - g >= 8 {
            _mm256_storeu_ps(y.as_mut_ptr().add(g), acc);
        } else {
            let mut out = [0f32; 8];
            _mm256_storeu_ps(out.as_mut_ptr(), acc);
            y[g..].copy_from_slice(&out[..n - g]);
        }
    }
}

/// Float-reference rows from limbs: per block A = T3·2^8 + T2 and
/// B = T1·2^8 + T0 (T_k = Σ_j w_j·L_kj) exactly in 32-bit lanes, then in
/// double T = A·2^16 + B − offset·ΣX (exact, < 2^53), and acc =
/// fma(d·2^-s, T, acc): one rounding per block. Q8_0 needs `vpdpbusd`.
#[inline(always)]
pub unsafe fn rows_float_q<const Q4: bool, const V: u8>(
    w: &[u8],
    rb: usize,
    r0: usize,
    li: &LimbInput,
    y: &mut [f32],
) {
    let (n, nb) = (y.len(), li.unit.len());
    let bb = if Q4 { 18 } else { 34 };
    assert!(Q4 || V != MADD);
    assert!(w.len() >= (r0 + n) * rb && rb >= nb * bb);
    assert!(li.limbs.len() >= 128 * nb && li.sum.len() >= nb);
    let half = |v: __m256i, h: bool| {
        if h {
            _mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(v))
        } else {
            _mm256_cvtepi32_pd(_mm256_castsi256_si128(v))
        }
    };
    for g in (0..n).step_by(8) {
        let p = lane_ptrs(w, rb, r0, n, g);
        let mut acc = [_mm256_setzero_pd(); 2];
        for b in 0..nb {
            let o = b * bb;
            prefetch_step(p[0], 8 * bb, b);
            let lp = li.limbs.as_ptr().add(128 * b);
            let mut ab = [_mm256_setzero_si256(); 2];
            if Q4 {
                let pairs: [(__m256i, __m256i); 4] =
                    std::array::from_fn(|i| q4_pair(p[2 * i], p[2 * i + 1], o));
                for (j, (kh, kl)) in [(3usize, 2usize), (1, 0)].into_iter().enumerate() {
                    let x16 = |k: usize, h: usize| {
                        _mm256_broadcastsi128_si256(_mm_loadu_si128(
                            lp.add(32 * k + 16 * h) as *const __m128i
                        ))
                    };
                    let (hl, hh, ll, lh) = (x16(kh, 0), x16(kh, 1), x16(kl, 0), x16(kl, 1));
                    let d: [__m256i; 4] = std::array::from_fn(|i| {
                        let (lo, hi) = pairs[i];
                        let a = _mm256_slli_epi32(dp2_nib::<V>(lo, hl, hi, hh), 8);
                        if V == MADD {
                            _mm256_add_epi32(a, dp2_nib::<V>(lo, ll, hi, lh))
                        } else {
                            dp::<V>(dp::<V>(a, lo, ll), hi, lh)
                        }
                    });
                    ab[j] = reduce_pairs(d);
                }
            } else {
                let wv: [__m256i; 8] = std::array::from_fn(|k| {
                    let v = _mm256_loadu_si256(p[k].add(o + 2) as *const __m256i);
                    _mm256_xor_si256(v, _mm256_set1_epi8(-128))
                });
                for (j, (kh, kl)) in [(3usize, 2usize), (1, 0)].into_iter().enumerate() {
                    let xh = _mm256_loadu_si256(lp.add(32 * kh) as *const __m256i);
                    let xl = _mm256_loadu_si256(lp.add(32 * kl) as *const __m256i);
                    let v: [__m256i; 8] = std::array::from_fn(|k| {
                        let a = dp::<V>(_mm256_setzero_si256(), wv[k], xh);
                        dp::<V>(_mm256_slli_epi32(a, 8), wv[k], xl)
                    });
                    ab[j] = reduce_rows(v);
                }
            }
            let off = _mm256_set1_pd(if Q4 { 8.0 } else { 128.0 } * li.sum[b] as f64);
            let unit = _mm256_set1_pd(li.unit[b]);
            let sc = scales8(&p, o);
            for (h, a) in acc.iter_mut().enumerate() {
                let hi = h == 1;
                let t = _mm256_fmadd_pd(half(ab[0], hi), _mm256_set1_pd(65536.0), half(ab[1], hi));
                let t = _mm256_sub_pd(t, off);
                let d = if hi {
                    _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(sc))
                } else {
                    _mm256_cvtps_pd(_mm256_castps256_ps128(sc))
                };
                *a = _mm256_fmadd_pd(_mm256_mul_pd(d, unit), t, *a);
            }
        }
        let out = _mm256_set_m128(_mm256_cvtpd_ps(acc[1]), _mm256_cvtpd_ps(acc[0]));
        if n - g >= 8 {
            _mm256_storeu_ps(y.as_mut_ptr().add(g), out);
        } else {
            let mut o = [0f32; 8];
            _mm256_storeu_ps(o.as_mut_ptr(), out);
            y[g..].copy_from_slice(&o[..n - g]);
        }
    }
}

/// Float-reference rows for Q8_0/Q4_0 in double: int8 weights widened to
/// double four at a time, products fused into double accumulators (q·x
/// is exact in double, so the fused add rounds once), d applied per
/// block. Used on AVX2 for Q8_0 (no `vpdpbusd`) and for inputs with
/// infinities or NaNs.
#[inline(always)]
pub unsafe fn rows_float_q_f64(q4: bool, w: &[u8], rb: usize, r0: usize, x: &[f64], y: &mut [f32]) {
    let nb = x.len() / 32;
    let bb = if q4 { 18 } else { 34 };
    assert!(w.len() >= (r0 + y.len()) * rb && rb >= nb * bb);
    let low4 = _mm_set1_epi8(0x0F);
    let eight = _mm_set1_epi8(8);
    for (i, out) in y.iter_mut().enumerate() {
        let row = w.as_ptr().add((r0 + i) * rb);
        let mut a = [_mm256_setzero_pd(); 4];
        for b in 0..nb {
            let blk = row.add(b * bb);
            // 32 int8 weights as two 16-byte halves (elements 0–15, 16–31).
            let (h0, h1) = if q4 {
                let bytes = _mm_loadu_si128(blk.add(2) as *const __m128i);
                (
                    _mm_sub_epi8(_mm_and_si128(bytes, low4), eight),
                    _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4), eight),
                )
            } else {
                (
                    _mm_loadu_si128(blk.add(2) as *const __m128i),
                    _mm_loadu_si128(blk.add(18) as *const __m128i),
                )
            };
            let xp = x.as_ptr().add(32 * b);
            // Four independent chains (latency, not throughput, bound otherwise).
            let mut s = [_mm256_setzero_pd(); 4];
            for (h, base) in [(h0, 0usize), (h1, 16)] {
                let lo = _mm256_cvtepi8_epi32(h);
                let hi = _mm256_cvtepi8_epi32(_mm_srli_si128(h, 8));
                for (k, (v, off)) in [(lo, 0usize), (hi, 8)].into_iter().enumerate() {
                    let q0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(v));
                    let q1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256(v, 1));
                    s[2 * k] = _mm256_fmadd_pd(q0, _mm256_loadu_pd(xp.add(base + off)), s[2 * k]);
                    s[2 * k + 1] =
                        _mm256_fmadd_pd(q1, _mm256_loadu_pd(xp.add(base + off + 4)), s[2 * k + 1]);
                }
            }
            let d = _mm256_set1_pd(super::f16(u16::from_le_bytes([*blk, *blk.add(1)])) as f64);
            for k in 0..4 {
                a[k] = _mm256_fmadd_pd(d, s[k], a[k]);
            }
        }
        let mut l = [0f64; 4];
        let s = _mm256_add_pd(_mm256_add_pd(a[0], a[1]), _mm256_add_pd(a[2], a[3]));
        _mm256_storeu_pd(l.as_mut_ptr(), s);
        *out = ((l[0] + l[1]) + (l[2] + l[3])) as f32;
    }
}

#[target_feature(enable = "avx2,f16c,fma")]
pub unsafe fn hw_q_avx2(q4: bool, w: &[u8], rb: usize, r0: usize, xq: &Q8Input, y: &mut [f32]) {
    if q4 {
        rows_hw_q::<true, MADD>(w, rb, r0, xq, y)
    } else {
        rows_hw_q::<false, MADD>(w, rb, r0, xq, y)
    }
}

#[target_feature(enable = "avx2,f16c,fma,avxvnni")]
pub unsafe fn hw_q_avxvnni(q4: bool, w: &[u8], rb: usize, r0: usize, xq: &Q8Input, y: &mut [f32]) {
    if q4 {
        rows_hw_q::<true, VNNI256>(w, rb, r0, xq, y)
    } else {
        rows_hw_q::<false, VNNI256>(w, rb, r0, xq, y)
    }
}

#[target_feature(enable = "avx2,f16c,fma,avx512f,avx512vl,avx512vnni")]
pub unsafe fn hw_q_avx512vnni(
    q4: bool,
    w: &[u8],
    rb: usize,
    r0: usize,
    xq: &Q8Input,
    y: &mut [f32],
) {
    if q4 {
        rows_hw_q::<true, VNNI512>(w, rb, r0, xq, y)
    } else {
        rows_hw_q::<false, VNNI512>(w, rb, r0, xq, y)
    }
}

#[target_feature(enable = "avx2,f16c,fma")]
pub unsafe fn float_q4_avx2(w: &[u8], rb: usize, r0: usize, li: &LimbInput, y: &mut [f32]) {
    rows_float_q::<true, MADD>(w, rb, r0, li, y)
}

#[target_feature(enable = "avx2,f16c,fma,avxvnni")]
pub unsafe fn float_q_avxvnni(
    q4: bool,
    w: &[u8],
    rb: usize,
    r0: usize,
    li: &LimbInput,
    y: &mut [f32],
) {
    if q4 {
        rows_float_q::<true, VNNI256>(w, rb, r0, li, y)
    } else {
        rows_float_q::<false, VNNI256>(w, rb, r0, li, y)
    }
}

#[target_feature(enable = "avx2,f16c,fma,avx512f,avx512vl,avx512vnni")]
pub unsafe fn float_q_avx512vnni(
    q4: bool,
    w: &[u8],
    rb: usize,
    r0: usize,
    li: &LimbInput,
    y: &mut [f32],
) {
    if q4 {
        rows_float_q::<true, VNNI512>(w, rb, r0, li, y)
    } else {
        rows_float_q::<false, VNNI512>(w, rb, r0, li, y)
    }
}

#[target_feature(enable = "avx2,f16c,fma")]
pub unsafe fn float_q_f64_avx2(q4: bool, w: &[u8], rb: usize, r0: usize, x: &[f64], y: &mut [f32]) {
    rows_float_q_f64(q4, w, rb, r0, x, y)
}

#[target_feature(enable = "avx2,f16c,fma")]
pub unsafe fn float_body_avx2(
    t: ssnail_format::ggml::GgmlType,
    w: &[u8],
    rb: usize,
    r0: usize,
    x: &[f64],
    y: &mut [f32],
) {
    super::rows_float_body(t, w, rb, r0, x, y)
}

#[target_feature(enable = "avx2,f16c,fma")]
pub unsafe fn hw_float_avx2(
    t: ssnail_format::ggml::GgmlType,
    w: &[u8],
    rb: usize,
    r0: usize,
    x: &[f32],
    y: &mut [f32],
) {
    super::rows_hw_float_body(t, w, rb, r0, x, y)
}

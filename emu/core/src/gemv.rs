//! GEMV kernels: y = W·x for the five native weight formats, in both numerics
//! modes. Weights are read straight from emulator memory (rows contiguous,
//! row starts need not be aligned), so a GEMV is one linear stream as on the
//! hardware.
//!
//! Each mode has a scalar *definition* (one element at a time, read top to
//! bottom) and an optimised kernel (explicit AVX2 for Q8_0/Q4_0 rows,
//! portable loops compiled twice — plain and AVX2 — for the rest, chosen at
//! run time; rows split in chunks over the threads of a [`RowPool`]). Rows are
//! independent and a row is never split, so results are bit-identical whatever
//! the thread count; the tests check optimised == definition bit for bit.
//!
//! **Hardware numerics, Q8_0/Q4_0 weights** (spec §5.3): x is quantised per
//! 32-block to Q8_0 exactly as llama.cpp `quantize_row_q8_0` ([`quantize_input`]).
//! For each row acc = +0; for each block b in order: isum = Σ qw·qx (exact
//! integer; Q4_0 qw = nibble − 8); scale = single(dw_b × dx_b); term =
//! single(single(isum) × scale); acc = single(acc + term).
//!
//! **Hardware numerics, F32/F16/BF16 weights**: x is not quantised; weights
//! widen exactly; the exact sum of all products is rounded once ([`ExactSum`]).
//!
//! **Float reference**: weights dequantised exactly (Q formats: d·q), products
//! and sums in double, rounded once to single per row. Not bit-defined.

use super::exact::ExactSum;
use super::rowpool::{RowPool, MAX_CHUNKS};
use ssnail_format::ggml::{bf16_to_f32, quantize_block_q8_0, GgmlType};
use std::sync::OnceLock;

/// F16 → f32 by table (exact; built once with the shared ggml conversion).
#[inline(always)]
pub fn f16(bits: u16) -> f32 {
    static LUT: OnceLock<Vec<f32>> = OnceLock::new();
    let lut = LUT.get_or_init(|| {
        (0..=u16::MAX)
            .map(ssnail_format::ggml::f16_to_f32)
            .collect()
    });
    lut[bits as usize]
}

#[inline(always)]
fn rd16(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}

/// A GEMV input quantised to Q8_0: one int8 per element, one scale per block.
pub struct Q8Input {
    pub q: Vec<i8>,
    /// Block scales as singles (the F16-rounded d widened).
    pub d: Vec<f32>,
}

/// Q8_0-quantise a GEMV input (length a multiple of 32) as llama.cpp does.
pub fn quantize_input(x: &[f32]) -> Q8Input {
    let mut q = Vec::with_capacity(x.len());
    let mut d = Vec::with_capacity(x.len() / 32);
    for blk in x.chunks_exact(32) {
        let (db, qb) = quantize_block_q8_0(blk);
        d.push(f16(db));
        q.extend_from_slice(&qb);
    }
    Q8Input { q, d }
}

/// The formats GEMV and DEQROW accept.
pub fn is_supported(t: GgmlType) -> bool {
    t.is_native()
}

/// Bytes of one row, or None if `cols` is not a whole number of blocks.
pub fn row_bytes(t: GgmlType, cols: usize) -> Option<usize> {
    cols.is_multiple_of(t.block_len())
        .then(|| t.row_bytes(cols))
}

// ---------------------------------------------------------------------------
// Scalar definitions.

/// Weight element `j` of a row of a float format, widened exactly.
fn float_weight(t: GgmlType, row: &[u8], j: usize) -> f32 {
    match t {
        GgmlType::F32 => f32::from_le_bytes(row[4 * j..4 * j + 4].try_into().unwrap()),
        GgmlType::F16 => f16(rd16(row, 2 * j)),
        GgmlType::Bf16 => bf16_to_f32(rd16(row, 2 * j)),
        _ => unreachable!(),
    }
}

/// Quantised weight `j` of block `b` as an integer (Q4_0: nibble − 8).
fn q_weight(t: GgmlType, row: &[u8], b: usize, j: usize) -> i32 {
    // Each block: the F16 scale, then the quants.
    let qs = b * t.block_bytes() + 2;
    match t {
        GgmlType::Q8_0 => row[qs + j] as i8 as i32,
        GgmlType::Q4_0 => {
            let byte = row[qs + (j % 16)];
            let nib = if j < 16 { byte & 15 } else { byte >> 4 };
            nib as i32 - 8
        }
        _ => unreachable!(),
    }
}

fn q_scale(t: GgmlType, row: &[u8], b: usize) -> f32 {
    f16(rd16(row, b * t.block_bytes()))
}

/// Hardware numerics, one row, read directly off the definition.
pub fn row_hw_definition(t: GgmlType, row: &[u8], x: &[f32], xq: Option<&Q8Input>) -> f32 {
    match t {
        GgmlType::Q8_0 | GgmlType::Q4_0 => {
            let xq = xq.expect("quantised weights need the Q8_0 input");
            let mut acc = 0.0f32;
            for b in 0..x.len() / 32 {
                let mut isum: i32 = 0;
                for j in 0..32 {
                    isum += q_weight(t, row, b, j) * xq.q[32 * b + j] as i32;
                }
                let scale = q_scale(t, row, b) * xq.d[b];
                let term = isum as f32 * scale;
                acc += term;
            }
            acc
        }
        _ => {
            let mut s = ExactSum::new();
            for (j, &xj) in x.iter().enumerate() {
                s.add(float_weight(t, row, j) as f64 * xj as f64);
            }
            s.round_f32()
        }
    }
}

/// Hardware numerics GEMV by the definition, single-threaded.
pub fn gemv_hw_definition(t: GgmlType, w: &[u8], rows: usize, x: &[f32], y: &mut [f32]) {
    let rb = t.row_bytes(x.len());
    let xq = matches!(t, GgmlType::Q8_0 | GgmlType::Q4_0).then(|| quantize_input(x));
    for r in 0..rows {
        y[r] = row_hw_definition(t, &w[r * rb..(r + 1) * rb], x, xq.as_ref());
    }
}

/// Float reference, one row by the definition (double everywhere).
pub fn row_float_definition(t: GgmlType, row: &[u8], x: &[f32]) -> f32 {
    let mut acc = 0.0f64;
    for (j, &xj) in x.iter().enumerate() {
        let w = match t {
            GgmlType::Q8_0 | GgmlType::Q4_0 => {
                q_scale(t, row, j / 32) as f64 * q_weight(t, row, j / 32, j % 32) as f64
            }
            _ => float_weight(t, row, j) as f64,
        };
        acc += w * xj as f64;
    }
    acc as f32
}

// ---------------------------------------------------------------------------
// Optimised kernels. Generic bodies are `inline(always)` so that each is
// compiled twice: once plain and once inside an AVX2 `target_feature`
// function, chosen at run time.

/// Exact integer dot product of one Q8_0 weight block with 32 input int8s.
#[inline(always)]
fn isum_q8(w: &[u8], x: &[i8]) -> i32 {
    let w: &[u8; 32] = w[..32].try_into().unwrap();
    let x: &[i8; 32] = x[..32].try_into().unwrap();
    let mut s = 0i32;
    for j in 0..32 {
        s += (w[j] as i8 as i16 as i32) * (x[j] as i16 as i32);
    }
    s
}

/// Exact integer dot product of one Q4_0 weight block (16 packed bytes) with 32 int8s.
#[inline(always)]
fn isum_q4(w: &[u8], x: &[i8]) -> i32 {
    let w: &[u8; 16] = w[..16].try_into().unwrap();
    let x: &[i8; 32] = x[..32].try_into().unwrap();
    let mut s = 0i32;
    for j in 0..16 {
        let lo = (w[j] & 15) as i32 - 8;
        let hi = (w[j] >> 4) as i32 - 8;
        s += lo * x[j] as i32 + hi * x[j + 16] as i32;
    }
    s
}

/// Hardware rows for Q formats: block integer sums, then the float chain in
/// block order.
#[inline(always)]
fn rows_hw_q_body(t: GgmlType, w: &[u8], rb: usize, r0: usize, xq: &Q8Input, y: &mut [f32]) {
    let nb = xq.d.len();
    let bb = t.block_bytes();
    for (i, out) in y.iter_mut().enumerate() {
        let row = &w[(r0 + i) * rb..(r0 + i + 1) * rb];
        let mut acc = 0.0f32;
        for b in 0..nb {
            let blk = &row[b * bb..(b + 1) * bb];
            let isum = match t {
                GgmlType::Q8_0 => isum_q8(&blk[2..], &xq.q[32 * b..]),
                _ => isum_q4(&blk[2..], &xq.q[32 * b..]),
            };
            let scale = f16(rd16(blk, 0)) * xq.d[b];
            acc += isum as f32 * scale;
        }
        *out = acc;
    }
}

/// Float reference rows, portable (double accumulation in 8 independent lanes
/// so it vectorises); Q formats use the AVX2 kernel where available.
#[inline(always)]
fn rows_float_body(t: GgmlType, w: &[u8], rb: usize, r0: usize, x: &[f64], y: &mut [f32]) {
    let n = x.len();
    for (i, out) in y.iter_mut().enumerate() {
        let row = &w[(r0 + i) * rb..(r0 + i + 1) * rb];
        let mut lanes = [0.0f64; 8];
        match t {
            GgmlType::Q8_0 | GgmlType::Q4_0 => {
                let bb = t.block_bytes();
                for b in 0..n / 32 {
                    let blk = &row[b * bb..(b + 1) * bb];
                    let d = f16(rd16(blk, 0)) as f64;
                    let xb: &[f64; 32] = x[32 * b..32 * b + 32].try_into().unwrap();
                    let mut q = [0f64; 32];
                    if t == GgmlType::Q8_0 {
                        for j in 0..32 {
                            q[j] = blk[2 + j] as i8 as f64;
                        }
                    } else {
                        for j in 0..16 {
                            q[j] = ((blk[2 + j] & 15) as i32 - 8) as f64;
                            q[j + 16] = ((blk[2 + j] >> 4) as i32 - 8) as f64;
                        }
                    }
                    let mut s = [0.0f64; 8];
                    for j in 0..32 {
                        s[j % 8] += q[j] * xb[j];
                    }
                    for k in 0..8 {
                        lanes[k] += d * s[k];
                    }
                }
            }
            GgmlType::F32 => {
                for (j, c) in row.chunks_exact(4).enumerate() {
                    lanes[j % 8] += f32::from_le_bytes(c.try_into().unwrap()) as f64 * x[j];
                }
            }
            GgmlType::F16 => {
                for (j, c) in row.chunks_exact(2).enumerate() {
                    lanes[j % 8] += f16(u16::from_le_bytes([c[0], c[1]])) as f64 * x[j];
                }
            }
            GgmlType::Bf16 => {
                for (j, c) in row.chunks_exact(2).enumerate() {
                    lanes[j % 8] += bf16_to_f32(u16::from_le_bytes([c[0], c[1]])) as f64 * x[j];
                }
            }
            _ => unreachable!(),
        }
        *out = lanes.iter().sum::<f64>() as f32;
    }
}

/// Hardware rows for float formats: widen the row, then the exact sum.
#[inline(always)]
fn rows_hw_float_body(t: GgmlType, w: &[u8], rb: usize, r0: usize, x: &[f32], y: &mut [f32]) {
    let mut wrow = vec![0f32; x.len()];
    for (i, out) in y.iter_mut().enumerate() {
        let row = &w[(r0 + i) * rb..(r0 + i + 1) * rb];
        match t {
            // F16 through the table: `half` without F16C converts in software.
            GgmlType::F16 => {
                for (o, c) in wrow.iter_mut().zip(row.chunks_exact(2)) {
                    *o = f16(u16::from_le_bytes([c[0], c[1]]));
                }
            }
            _ => {
                ssnail_format::ggml::dequantize_native(t, row, &mut wrow);
            }
        }
        // Certified compensated sum first; the exact accumulator when the
        // result is within its error bound of a rounding boundary.
        if let Some(v) = super::exact::dot_rounded_fast(&wrow, x) {
            *out = v;
            continue;
        }
        // Four independent exact partial sums (no store-to-load chain between
        // consecutive products), merged exactly.
        let mut s: [ExactSum; 4] = Default::default();
        for (j, (a, b)) in wrow.iter().zip(x).enumerate() {
            s[j % 4].add(*a as f64 * *b as f64);
        }
        let [mut s0, s1, s2, s3] = s;
        s0.merge(&s1);
        s0.merge(&s2);
        s0.merge(&s3);
        *out = s0.round_f32();
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rows_hw_float_avx2(
    t: GgmlType,
    w: &[u8],
    rb: usize,
    r0: usize,
    x: &[f32],
    y: &mut [f32],
) {
    rows_hw_float_body(t, w, rb, r0, x, y)
}

fn rows_hw_float(t: GgmlType, w: &[u8], rb: usize, r0: usize, x: &[f32], y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: AVX2 was detected at run time.
        return unsafe { rows_hw_float_avx2(t, w, rb, r0, x, y) };
    }
    rows_hw_float_body(t, w, rb, r0, x, y)
}

/// AVX2 hardware-numerics rows for Q8_0/Q4_0. Integer block sums use the
/// sign trick (|w| as u8 × x·sign(w) with `maddubs`, never saturating for
/// |w| ≤ 128, |x| ≤ 127), eight blocks at a time reduced to one vector of
/// eight exact isums; the scale and term products are IEEE single multiplies
/// (same as scalar), and the accumulation stays a scalar chain in block order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rows_hw_q_avx2(t: GgmlType, w: &[u8], rb: usize, r0: usize, xq: &Q8Input, y: &mut [f32]) {
    use std::arch::x86_64::*;
    let nb = xq.d.len();
    let bb = t.block_bytes();
    let q4 = t == GgmlType::Q4_0;
    let ones = _mm256_set1_epi16(1);
    let low4 = _mm_set1_epi8(0x0F);
    let eight = _mm256_set1_epi8(8);
    let xqp = xq.q.as_ptr();
    // Products of one block as 8 partial i32 sums.
    let block = |blk: *const u8, b: usize| -> __m256i {
        let wv = if q4 {
            let bytes = _mm_loadu_si128(blk.add(2) as *const __m128i);
            let lo = _mm_and_si128(bytes, low4);
            let hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low4);
            _mm256_sub_epi8(_mm256_set_m128i(hi, lo), eight)
        } else {
            _mm256_loadu_si256(blk.add(2) as *const __m256i)
        };
        let xv = _mm256_loadu_si256(xqp.add(32 * b) as *const __m256i);
        let p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
        _mm256_madd_epi16(p16, ones)
    };
    for (i, out) in y.iter_mut().enumerate() {
        let row = w.as_ptr().add((r0 + i) * rb);
        let mut acc = 0.0f32;
        let mut b = 0;
        while b + 8 <= nb {
            let v: [__m256i; 8] = std::array::from_fn(|k| block(row.add((b + k) * bb), b + k));
            let a01 = _mm256_hadd_epi32(v[0], v[1]);
            let a23 = _mm256_hadd_epi32(v[2], v[3]);
            let a45 = _mm256_hadd_epi32(v[4], v[5]);
            let a67 = _mm256_hadd_epi32(v[6], v[7]);
            let b03 = _mm256_hadd_epi32(a01, a23);
            let b47 = _mm256_hadd_epi32(a45, a67);
            let isum = _mm256_add_epi32(
                _mm256_permute2x128_si256(b03, b47, 0x20),
                _mm256_permute2x128_si256(b03, b47, 0x31),
            );
            let dw: [f32; 8] = std::array::from_fn(|k| {
                let p = row.add((b + k) * bb);
                f16(u16::from_le_bytes([*p, *p.add(1)]))
            });
            let scale = _mm256_mul_ps(
                _mm256_loadu_ps(dw.as_ptr()),
                _mm256_loadu_ps(xq.d.as_ptr().add(b)),
            );
            let term = _mm256_mul_ps(_mm256_cvtepi32_ps(isum), scale);
            let mut terms = [0f32; 8];
            _mm256_storeu_ps(terms.as_mut_ptr(), term);
            for tv in terms {
                acc += tv;
            }
            b += 8;
        }
        while b < nb {
            let blk = std::slice::from_raw_parts(row.add(b * bb), bb);
            let isum = if q4 {
                isum_q4(&blk[2..], &xq.q[32 * b..])
            } else {
                isum_q8(&blk[2..], &xq.q[32 * b..])
            };
            acc += isum as f32 * (f16(rd16(blk, 0)) * xq.d[b]);
            b += 1;
        }
        *out = acc;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn rows_float_avx2(t: GgmlType, w: &[u8], rb: usize, r0: usize, x: &[f64], y: &mut [f32]) {
    if matches!(t, GgmlType::Q8_0 | GgmlType::Q4_0) && std::is_x86_feature_detected!("fma") {
        return rows_float_q_avx2(t, w, rb, r0, x, y);
    }
    rows_float_body(t, w, rb, r0, x, y)
}

/// Float-reference rows for Q8_0/Q4_0 with explicit AVX2: int8 weights widened
/// to double four at a time, products fused into double accumulators
/// (q·x is exact in double, so the fused add rounds once), d applied per block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rows_float_q_avx2(t: GgmlType, w: &[u8], rb: usize, r0: usize, x: &[f64], y: &mut [f32]) {
    use std::arch::x86_64::*;
    let nb = x.len() / 32;
    let bb = t.block_bytes();
    let q4 = t == GgmlType::Q4_0;
    let low4 = _mm_set1_epi8(0x0F);
    let eight = _mm_set1_epi8(8);
    for (i, out) in y.iter_mut().enumerate() {
        let row = w.as_ptr().add((r0 + i) * rb);
        let (mut a0, mut a1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
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
            let (mut s0, mut s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
            for (h, base) in [(h0, 0usize), (h1, 16)] {
                let lo = _mm256_cvtepi8_epi32(h);
                let hi = _mm256_cvtepi8_epi32(_mm_srli_si128(h, 8));
                for (v, off) in [(lo, 0usize), (hi, 8)] {
                    let q0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(v));
                    let q1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256(v, 1));
                    s0 = _mm256_fmadd_pd(q0, _mm256_loadu_pd(xp.add(base + off)), s0);
                    s1 = _mm256_fmadd_pd(q1, _mm256_loadu_pd(xp.add(base + off + 4)), s1);
                }
            }
            let d = _mm256_set1_pd(f16(u16::from_le_bytes([*blk, *blk.add(1)])) as f64);
            a0 = _mm256_fmadd_pd(d, s0, a0);
            a1 = _mm256_fmadd_pd(d, s1, a1);
        }
        let mut l = [0f64; 4];
        _mm256_storeu_pd(l.as_mut_ptr(), _mm256_add_pd(a0, a1));
        *out = ((l[0] + l[1]) + (l[2] + l[3])) as f32;
    }
}

fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static A: OnceLock<bool> = OnceLock::new();
        *A.get_or_init(|| std::is_x86_feature_detected!("avx2"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

fn rows_hw_q(t: GgmlType, w: &[u8], rb: usize, r0: usize, xq: &Q8Input, y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: AVX2 was detected at run time.
        return unsafe { rows_hw_q_avx2(t, w, rb, r0, xq, y) };
    }
    rows_hw_q_body(t, w, rb, r0, xq, y)
}

fn rows_float(t: GgmlType, w: &[u8], rb: usize, r0: usize, x: &[f64], y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: AVX2 was detected at run time.
        return unsafe { rows_float_avx2(t, w, rb, r0, x, y) };
    }
    rows_float_body(t, w, rb, r0, x, y)
}

/// Rows per chunk: two chunks per thread, so a helper that starts late is
/// balanced out, but no more: every chunk costs a cache-line round trip
/// between cores and a fresh prefetch stream (measured: four or eight chunks
/// per thread are slower). At least 16 KiB of weights per chunk.
fn chunk_rows(rows: usize, row_bytes: usize, threads: usize) -> usize {
    if threads <= 1 {
        return rows.max(1);
    }
    let min_rows = (16usize << 10).div_ceil(row_bytes.max(1));
    rows.div_ceil(threads * 2)
        .max(min_rows)
        .max(rows.div_ceil(MAX_CHUNKS))
}

/// Hardware-numerics GEMV, optimised, rows split over `pool`'s threads
/// (bit-identical to [`gemv_hw_definition`] whatever the thread count).
/// `w` holds `y.len()` rows of `x.len()` columns.
pub fn gemv_hw(t: GgmlType, w: &[u8], x: &[f32], y: &mut [f32], pool: &mut RowPool) {
    let rb = t.row_bytes(x.len());
    let ch = chunk_rows(y.len(), rb, pool.threads());
    match t {
        GgmlType::Q8_0 | GgmlType::Q4_0 => {
            let xq = quantize_input(x);
            pool.split(y, ch, |r0, ys| rows_hw_q(t, w, rb, r0, &xq, ys));
        }
        _ => pool.split(y, ch, |r0, ys| rows_hw_float(t, w, rb, r0, x, ys)),
    }
}

/// Float-reference GEMV, optimised, rows split over `pool`'s threads.
pub fn gemv_float(t: GgmlType, w: &[u8], x: &[f32], y: &mut [f32], pool: &mut RowPool) {
    let rb = t.row_bytes(x.len());
    let ch = chunk_rows(y.len(), rb, pool.threads());
    let x64: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    pool.split(y, ch, |r0, ys| rows_float(t, w, rb, r0, &x64, ys));
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssnail_format::ggml::quantize_native;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        /// Roughly normal (sum of uniforms), scaled.
        fn normal(&mut self) -> f32 {
            let s: f64 = (0..12)
                .map(|_| (self.next() >> 11) as f64 / (1u64 << 53) as f64)
                .sum();
            (s - 6.0) as f32
        }
    }

    fn matrix(t: GgmlType, rows: usize, cols: usize, rng: &mut Rng) -> Vec<u8> {
        let mut w = Vec::new();
        for _ in 0..rows {
            let row: Vec<f32> = (0..cols).map(|_| rng.normal() * 0.3).collect();
            quantize_native(t, &row, &mut w);
        }
        w
    }

    const FORMATS: [GgmlType; 5] = [
        GgmlType::Q8_0,
        GgmlType::Q4_0,
        GgmlType::F16,
        GgmlType::F32,
        GgmlType::Bf16,
    ];

    #[test]
    fn optimised_equals_definition_bit_for_bit() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut pool = RowPool::new(2);
        // Odd row lengths (in blocks) and unaligned row starts (offset 1..3).
        for &t in &FORMATS {
            for &(rows, cols) in &[
                (7usize, 96usize),
                (33, 160),
                (5, 32),
                (130, 224),
                (9, 576),
                (3, 1536),
            ] {
                for offset in 0..3 {
                    let mut w = vec![0u8; offset];
                    w.extend(matrix(t, rows, cols, &mut rng));
                    let x: Vec<f32> = (0..cols).map(|_| rng.normal() * 2.0).collect();
                    let mut a = vec![0f32; rows];
                    let mut b = vec![0f32; rows];
                    gemv_hw_definition(t, &w[offset..], rows, &x, &mut a);
                    gemv_hw(t, &w[offset..], &x, &mut b, &mut pool);
                    let ab: Vec<u32> = a.iter().map(|v| v.to_bits()).collect();
                    let bb: Vec<u32> = b.iter().map(|v| v.to_bits()).collect();
                    assert_eq!(ab, bb, "{} {rows}x{cols} offset {offset}", t.name());
                    if matches!(t, GgmlType::Q8_0 | GgmlType::Q4_0) {
                        // The portable kernel too (the AVX2 one runs above where available).
                        let mut p = vec![0f32; rows];
                        let xq = quantize_input(&x);
                        rows_hw_q_body(t, &w[offset..], t.row_bytes(cols), 0, &xq, &mut p);
                        assert_eq!(p.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), ab);
                    }
                    // Float mode: optimised lanes vs the definition, within rounding.
                    let mut c = vec![0f32; rows];
                    gemv_float(t, &w[offset..], &x, &mut c, &mut pool);
                    for r in 0..rows {
                        let d = row_float_definition(t, &w[offset + r * t.row_bytes(cols)..], &x);
                        assert!(
                            (c[r] - d).abs() <= 1e-6 * d.abs().max(1.0),
                            "{} {} {}",
                            t.name(),
                            c[r],
                            d
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn thread_count_does_not_change_results() {
        let mut rng = Rng(42);
        let mut pools: Vec<RowPool> = [1, 2, 3].map(RowPool::new).into();
        // Odd chunk counts and a short last chunk; all split over 2+ threads.
        for &(rows, cols) in &[(1000usize, 256usize), (130, 512), (4100, 32)] {
            for &t in &FORMATS {
                assert!(chunk_rows(rows, t.row_bytes(cols), 2) < rows);
                let w = matrix(t, rows, cols, &mut rng);
                let x: Vec<f32> = (0..cols).map(|_| rng.normal()).collect();
                let run = |pool: &mut RowPool| {
                    let (mut h, mut f) = (vec![0f32; rows], vec![0f32; rows]);
                    gemv_hw(t, &w, &x, &mut h, pool);
                    gemv_float(t, &w, &x, &mut f, pool);
                    (h.iter().chain(&f).map(|v| v.to_bits())).collect::<Vec<_>>()
                };
                let one = run(&mut pools[0]);
                for p in &mut pools[1..] {
                    assert_eq!(one, run(p), "{} {rows}x{cols}", t.name());
                }
            }
        }
    }

    #[test]
    fn definition_is_the_documented_chain() {
        // One Q8_0 row of two blocks, hand-checked: isum, scale, term, acc.
        let mut row = Vec::new();
        let w: Vec<f32> = (0..64).map(|i| if i < 32 { 1.0 } else { -0.5 }).collect();
        quantize_native(GgmlType::Q8_0, &w, &mut row);
        let x: Vec<f32> = (0..64)
            .map(|i| if i % 2 == 0 { 2.0 } else { 0.0 })
            .collect();
        let xq = quantize_input(&x);
        assert_eq!(xq.q[0], 127);
        assert_eq!(xq.q[1], 0);
        // Weights: block 0 all q=127 d=1/127 (f16-rounded); block 1 q=-127 d=0.5/127.
        let dw0 = f16(u16::from_le_bytes([row[0], row[1]]));
        let dw1 = f16(u16::from_le_bytes([row[34], row[35]]));
        let dx = xq.d[0];
        let isum = 16 * 127 * 127;
        let expect = 0.0f32 + (isum as f32 * (dw0 * dx)) + (-isum as f32 * (dw1 * dx));
        let got = row_hw_definition(GgmlType::Q8_0, &row, &x, Some(&xq));
        assert_eq!(got.to_bits(), expect.to_bits());
        // And the value is close to the true dot product 32 − 16 = 16.
        assert!((got - 16.0).abs() < 0.1, "{got}");
    }

    #[test]
    fn q8_input_quantisation_edges() {
        // Identical to the shared llama.cpp-compatible quantiser, including
        // the all-zero block, exact halves and the roundf edge 0.49999997.
        let mut x = vec![0f32; 96];
        for i in 0..32 {
            x[32 + i] = i as f32 * 0.5;
        }
        x[64] = 127.0;
        x[65] = 0.49999997;
        let q = quantize_input(&x);
        assert_eq!(q.d[0], 0.0);
        assert!(q.q[..32].iter().all(|&v| v == 0));
        assert_eq!(q.q[65], 0, "roundf(0.49999997) = 0");
        assert_eq!(q.q[64], 127);
        let (d1, q1) = quantize_block_q8_0(&x[32..64]);
        assert_eq!(f16(d1), q.d[1]);
        assert_eq!(&q1[..], &q.q[32..64]);
    }
}

//! GEMV kernels: y = W·x for the five native weight formats, in both numerics
//! modes. Weights are read straight from emulator memory (rows contiguous,
//! row starts need not be aligned), so a GEMV is one linear stream per row
//! as on the hardware.
//!
//! Each mode has a scalar *definition* (one element at a time, read top to
//! bottom) and optimised kernels, chosen at run time by the CPU's features
//! ([`Kernels`]: AVX-512 VNNI, AVX-VNNI, AVX2, or portable Rust), rows split
//! in chunks over the threads of a [`RowPool`]. Rows are independent and a
//! row is never split, so results are bit-identical whatever the kernels and
//! the thread count; the tests check optimised == definition bit for bit for
//! every kernel set the CPU runs.
//!
//! **Hardware numerics, Q8_0/Q4_0 weights** (spec §5.3): x is quantised per
//! 32-block to Q8_0 exactly as llama.cpp `quantize_row_q8_0` ([`quantize_input`]).
//! For each row acc = +0; for each block b in order: isum = Σ qw·qx (exact
//! integer; Q4_0 qw = nibble − 8); scale = single(dw_b × dx_b); term =
//! single(single(isum) × scale); acc = single(acc + term). This is the
//! integer work of llama.cpp's `vec_dot_q4_0_q8_0`; the x86 kernels compute
//! eight rows at once, one per vector lane, so each row keeps its own
//! block-by-block chain while the eight rows' integer sums are reduced
//! together.
//!
//! **Hardware numerics, F32/F16/BF16 weights**: x is not quantised; weights
//! widen exactly; the exact sum of all products is rounded once ([`ExactSum`]).
//!
//! **Float reference**: weights dequantised exactly (Q formats: d·q), products
//! and sums in double, rounded once to single per row. Not bit-defined: the
//! optimised kernels sum in another order, and the integer ones take x as
//! 31-bit fixed point per block ([`LimbInput`]).

use super::exact::ExactSum;
use super::rowpool::{RowPool, MAX_CHUNKS};
use ssnail_format::ggml::{bf16_to_f32, GgmlType};
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

/// Little-endian F16 values to singles (exact): F16C eight at a time where
/// the CPU has it (the KV cache of every ATTN), else the table.
pub fn widen_f16(src: &[u8], dst: &mut [f32]) {
    assert_eq!(src.len(), 2 * dst.len());
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if Kernels::Avx2.supported() {
        // SAFETY: F16C is part of the AVX2 kernel set's check.
        unsafe { done = x86::widen_f16(src, dst) };
    }
    for (o, c) in dst[done..].iter_mut().zip(src[2 * done..].chunks_exact(2)) {
        *o = f16(u16::from_le_bytes([c[0], c[1]]));
    }
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
    /// Block sums of `q` (for the kernels that multiply unsigned weights).
    pub s: Vec<i32>,
}

/// Q8_0-quantise a GEMV input (length a multiple of 32) as llama.cpp does:
/// the same bits as [`quantize_block_q8_0`] (tests compare them), with C's
/// `roundf` done inline ([`round_to_i8`]) instead of a libm call per element.
pub fn quantize_input(x: &[f32]) -> Q8Input {
    let nb = x.len() / 32;
    let mut xq = Q8Input {
        q: vec![0i8; 32 * nb],
        d: vec![0.0; nb],
        s: vec![0; nb],
    };
    #[cfg(target_arch = "x86_64")]
    if Kernels::Avx2.supported() {
        // SAFETY: AVX2 was detected at run time.
        unsafe { x86::quantize_avx2(x, &mut xq) };
        return xq;
    }
    quantize_body(x, &mut xq);
    xq
}

/// [`quantize_input`]'s loop, written so that it vectorises (eight-lane
/// maximum, branch-free rounding); compiled plain and with AVX2.
#[inline(always)]
fn quantize_body(x: &[f32], xq: &mut Q8Input) {
    for (b, (blk, qb)) in x
        .chunks_exact(32)
        .zip(xq.q.chunks_exact_mut(32))
        .enumerate()
    {
        let blk: &[f32; 32] = blk.try_into().unwrap();
        // f32::max ignores NaN, as the shared quantiser's fold does; the
        // maximum does not depend on the order.
        let mut lanes = [0.0f32; 8];
        for (j, v) in blk.iter().enumerate() {
            lanes[j % 8] = lanes[j % 8].max(v.abs());
        }
        let amax = lanes.iter().fold(0.0f32, |m, &v| m.max(v));
        let db = amax / 127.0;
        let id = if db != 0.0 { 1.0 / db } else { 0.0 };
        let mut sum = 0i32;
        for (o, &v) in qb.iter_mut().zip(blk) {
            *o = round_to_i8(v * id);
            sum += *o as i32;
        }
        xq.d[b] = f16(ssnail_format::ggml::f32_to_f16(db));
        xq.s[b] = sum;
    }
}

/// `roundf(v) as i8` (half away from zero, then Rust's saturating cast; NaN
/// → 0) without a libm call: truncate, then step by the exact remainder.
#[inline(always)]
fn round_to_i8(v: f32) -> i8 {
    let v = v.clamp(-256.0, 256.0); // NaN stays NaN
    let i = v as i32; // toward zero; NaN → 0
    let f = v - i as f32; // exact: |v| < 2^24
    let r = i + (f >= 0.5) as i32 - (f <= -0.5) as i32;
    r.clamp(-128, 127) as i8
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
// Kernel choice.

/// The instruction sets the optimised kernels are written for. The best one
/// the CPU offers is chosen at run time ([`Kernels::best`]); every one gives
/// the same hardware-numerics bits (tests force each in turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernels {
    /// Plain Rust, one row at a time (any CPU).
    Portable,
    /// x86-64 AVX2 + F16C + FMA: eight rows at a time, one per vector lane.
    Avx2,
    /// AVX2 with AVX-VNNI: the integer block sums by `vpdpbusd` (256-bit).
    AvxVnni,
    /// AVX-512 VNNI + VL: `vpdpbusd` on 256-bit vectors. (512-bit vectors,
    /// two rows per register, measured slower on a Zen 4, which splits them
    /// in two; AVX-512BW without VNNI adds nothing these kernels use over AVX2.)
    Avx512Vnni,
}

impl Kernels {
    /// Every kernel set, worst first.
    pub const ALL: [Kernels; 4] = [
        Kernels::Portable,
        Kernels::Avx2,
        Kernels::AvxVnni,
        Kernels::Avx512Vnni,
    ];

    /// Whether this CPU can run these kernels.
    pub fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::is_x86_feature_detected as has;
            static F: OnceLock<[bool; 4]> = OnceLock::new();
            let f = F.get_or_init(|| {
                let avx2 = has!("avx2") && has!("f16c") && has!("fma");
                [
                    true,
                    avx2,
                    avx2 && has!("avxvnni"),
                    avx2 && has!("avx512f") && has!("avx512vl") && has!("avx512vnni"),
                ]
            });
            f[self as usize]
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Kernels::Portable
        }
    }

    /// The fastest kernels this CPU runs.
    pub fn best() -> Kernels {
        *Kernels::ALL.iter().rev().find(|k| k.supported()).unwrap()
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernels::Portable => "portable",
            Kernels::Avx2 => "AVX2",
            Kernels::AvxVnni => "AVX-VNNI",
            Kernels::Avx512Vnni => "AVX-512 VNNI",
        }
    }
}

// ---------------------------------------------------------------------------
// Portable kernels. Generic bodies are `inline(always)` so that the float
// ones are also compiled inside an AVX2 `target_feature` function.

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
/// so it vectorises).
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

// ---------------------------------------------------------------------------
// Float-reference input for the integer kernels.

/// The GEMV input of a float-reference Q8_0/Q4_0 GEMV as 31-bit fixed point
/// per 32-block: X_j = round(x_j · 2^s_b), |X_j| ≤ 2^30 where 2^(30 − s_b)
/// is the smallest power of two above the block's largest |x_j|, so each x_j
/// is kept to within 2^-31 of that largest magnitude (an f32 carries 2^-24).
/// X_j is split in four signed byte limbs, X = Σ_k L_k·2^(8k), so the
/// integer kernels compute Σ_j q_j·X_j exactly with byte dot products; the
/// block sum times d_b · 2^-s_b is then exact in double, and only the
/// accumulation over blocks rounds, as in the definition.
pub struct LimbInput {
    /// Per block, 128 bytes: limb k of element j at 32k + j.
    pub limbs: Vec<i8>,
    /// Per block: 2^-s_b, the value of one unit of X.
    pub unit: Vec<f64>,
    /// Per block: Σ_j X_j (for the weight offsets: Q4_0 nibble − 8, Q8_0 + 128).
    pub sum: Vec<i64>,
}

/// [`LimbInput`] of `x` (length a multiple of 32), or None if `x` holds an
/// infinity or NaN (then the double kernels run).
pub fn limb_input(x: &[f32]) -> Option<LimbInput> {
    let nb = x.len() / 32;
    let mut li = LimbInput {
        limbs: vec![0; nb * 128],
        unit: vec![0.0; nb],
        sum: vec![0; nb],
    };
    #[cfg(target_arch = "x86_64")]
    if Kernels::Avx2.supported() {
        // SAFETY: AVX2 was detected at run time.
        return unsafe { x86::limbs_avx2(x, &mut li) }.then_some(li);
    }
    limbs_body(x, &mut li).then_some(li)
}

/// [`limb_input`]'s loop, written so that it vectorises (no early exit,
/// element steps in separate passes); false if `x` is not all finite.
#[inline(always)]
fn limbs_body(x: &[f32], li: &mut LimbInput) -> bool {
    let mut finite = true;
    for (b, blk) in x.chunks_exact(32).enumerate() {
        let blk: &[f32; 32] = blk.try_into().unwrap();
        let mut lanes = [0f32; 8];
        for (j, v) in blk.iter().enumerate() {
            finite &= v.is_finite();
            lanes[j % 8] = lanes[j % 8].max(v.abs());
        }
        let m = lanes.iter().fold(0f32, |a, &v| a.max(v));
        // e: 2^e is the smallest power of two above m (exponent of m as a
        // double, which is normal for every f32).
        let e = if m > 0.0 && m.is_finite() {
            (((m as f64).to_bits() >> 52) & 0x7FF) as i32 - 1023 + 1
        } else {
            0
        };
        // 2^s and 2^-s, s = 30 − e in [−99, 178]: normal doubles, built from bits.
        let s = 30 - e;
        let pow2 = |k: i32| f64::from_bits(((1023 + k) as u64) << 52);
        let up = pow2(s);
        li.unit[b] = pow2(-s);
        // Exact scaling by a power of two, then rounding to an integer
        // (|v·2^s| ≤ 2^30: adding and removing 1.5·2^52 rounds it, to even
        // on ties, without a libm call).
        const R: f64 = 6755399441055744.0;
        let mut xv = [0i32; 32];
        for (o, &v) in xv.iter_mut().zip(blk) {
            *o = ((v as f64 * up + R) - R) as i32;
        }
        li.sum[b] = xv.iter().map(|&v| v as i64).sum();
        let l = &mut li.limbs[128 * b..128 * b + 128];
        for k in 0..3 {
            for (o, r) in l[32 * k..32 * k + 32].iter_mut().zip(xv.iter_mut()) {
                let d = *r as i8;
                *o = d;
                *r = (*r - d as i32) >> 8;
            }
        }
        for (o, &r) in l[96..].iter_mut().zip(&xv) {
            *o = r as i8;
        }
    }
    finite
}

/// The float-reference input: doubles, and the limbs where the kernel uses them.
struct FloatInput<'a> {
    x64: Vec<f64>,
    limbs: Option<&'a LimbInput>,
}

/// The input of the last GEMV on this thread and what was made of it (its
/// Q8_0 quantisation or its limbs): a layer's Q, K and V GEMVs read the same
/// x, as do gate and up, so 3 of its 7 inputs need not be prepared again.
struct LastInput<T> {
    x: Vec<f32>,
    made: Option<T>,
}

impl<T> LastInput<T> {
    const fn new() -> Self {
        LastInput {
            x: Vec::new(),
            made: None,
        }
    }

    /// `make(x)`, or the kept result if `x` is the last input bit for bit.
    fn get(&mut self, x: &[f32], make: impl FnOnce(&[f32]) -> T) -> &T {
        // All elements compared (no early exit, so the loop vectorises).
        let same = self.x.len() == x.len()
            && self
                .x
                .iter()
                .zip(x)
                .fold(true, |eq, (a, b)| eq & (a.to_bits() == b.to_bits()));
        if !same || self.made.is_none() {
            self.made = Some(make(x));
            self.x.clear();
            self.x.extend_from_slice(x);
        }
        self.made.as_ref().unwrap()
    }
}

thread_local! {
    static LAST_Q8: std::cell::RefCell<LastInput<Q8Input>> =
        const { std::cell::RefCell::new(LastInput::new()) };
    static LAST_LIMBS: std::cell::RefCell<LastInput<Option<LimbInput>>> =
        const { std::cell::RefCell::new(LastInput::new()) };
}

// ---------------------------------------------------------------------------
// x86-64 kernels, in gemv/x86.rs: eight rows at a time, row r in lane r of
// the accumulator, so each row keeps its own block-by-block chain while the
// integer block sums of the eight rows are reduced together.

#[cfg(target_arch = "x86_64")]
mod x86;

/// Hardware-numerics rows `r0..r0 + y.len()` of a Q8_0/Q4_0 matrix.
fn rows_hw_q(k: Kernels, t: GgmlType, w: &[u8], rb: usize, r0: usize, xq: &Q8Input, y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        let q4 = t == GgmlType::Q4_0;
        // SAFETY: `k` is supported by this CPU (checked by the callers).
        match k {
            Kernels::Avx2 => return unsafe { x86::hw_q_avx2(q4, w, rb, r0, xq, y) },
            Kernels::AvxVnni => return unsafe { x86::hw_q_avxvnni(q4, w, rb, r0, xq, y) },
            Kernels::Avx512Vnni => return unsafe { x86::hw_q_avx512vnni(q4, w, rb, r0, xq, y) },
            Kernels::Portable => {}
        }
    }
    let _ = k;
    rows_hw_q_body(t, w, rb, r0, xq, y)
}

fn rows_hw_float(
    k: Kernels,
    t: GgmlType,
    w: &[u8],
    rb: usize,
    r0: usize,
    x: &[f32],
    y: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if k != Kernels::Portable {
        // SAFETY: every x86 kernel set includes AVX2 (checked by the callers).
        return unsafe { x86::hw_float_avx2(t, w, rb, r0, x, y) };
    }
    let _ = k;
    rows_hw_float_body(t, w, rb, r0, x, y)
}

fn rows_float(
    k: Kernels,
    t: GgmlType,
    w: &[u8],
    rb: usize,
    r0: usize,
    x: &FloatInput,
    y: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if k != Kernels::Portable {
        let q4 = t == GgmlType::Q4_0;
        let q = matches!(t, GgmlType::Q8_0 | GgmlType::Q4_0);
        // SAFETY: `k` is supported by this CPU (checked by the callers).
        unsafe {
            match (x.limbs, k) {
                (Some(li), Kernels::Avx512Vnni) if q => {
                    return x86::float_q_avx512vnni(q4, w, rb, r0, li, y)
                }
                (Some(li), Kernels::AvxVnni) if q => {
                    return x86::float_q_avxvnni(q4, w, rb, r0, li, y)
                }
                (Some(li), Kernels::Avx2) if q4 => return x86::float_q4_avx2(w, rb, r0, li, y),
                _ if q => return x86::float_q_f64_avx2(q4, w, rb, r0, &x.x64, y),
                _ => return x86::float_body_avx2(t, w, rb, r0, &x.x64, y),
            }
        }
    }
    let _ = k;
    rows_float_body(t, w, rb, r0, &x.x64, y)
}

/// Whether kernels `k` take the float-reference input as limbs for format `t`.
fn uses_limbs(k: Kernels, t: GgmlType) -> bool {
    cfg!(target_arch = "x86_64")
        && match k {
            Kernels::Portable => false,
            Kernels::Avx2 => t == GgmlType::Q4_0,
            Kernels::AvxVnni | Kernels::Avx512Vnni => matches!(t, GgmlType::Q8_0 | GgmlType::Q4_0),
        }
}

/// Rows per chunk: one chunk per thread. Every chunk costs a cache-line
/// round trip between cores and a fresh prefetch stream (~1 µs): measured
/// on SmolLM2-135M Q4_0 at two threads, interleaved, two chunks per thread
/// gave 226 tokens/s in hardware numerics and 160 in float, one 264 and 168;
/// shrinking chunks (each a quarter of the rest, 7–22 per GEMV) were slower
/// still. A helper that starts late costs the caller that much waiting at the
/// end (about a µs on an idle machine); one that does not start at all
/// leaves both chunks to the caller. At least 16 KiB of weights per chunk,
/// and a multiple of the kernels' eight rows.
fn chunk_rows(rows: usize, row_bytes: usize, threads: usize) -> usize {
    if threads <= 1 {
        return rows.max(1);
    }
    let min_rows = (16usize << 10).div_ceil(row_bytes.max(1));
    rows.div_ceil(threads)
        .max(min_rows)
        .max(rows.div_ceil(MAX_CHUNKS))
        .next_multiple_of(8)
}

/// Hardware-numerics GEMV with kernels `k`, rows split over `pool`'s threads
/// (bit-identical to [`gemv_hw_definition`] whatever the kernels and the
/// thread count). `w` holds `y.len()` rows of `x.len()` columns.
///
/// Panics if this CPU cannot run `k` (see [`Kernels::supported`]).
pub fn gemv_hw(k: Kernels, t: GgmlType, w: &[u8], x: &[f32], y: &mut [f32], pool: &mut RowPool) {
    assert!(k.supported(), "{} kernels on a CPU without them", k.name());
    let rb = t.row_bytes(x.len());
    let ch = chunk_rows(y.len(), rb, pool.threads());
    match t {
        GgmlType::Q8_0 | GgmlType::Q4_0 => LAST_Q8.with_borrow_mut(|last| {
            let xq = last.get(x, quantize_input);
            pool.split(y, ch, |r0, ys| rows_hw_q(k, t, w, rb, r0, xq, ys));
        }),
        _ => pool.split(y, ch, |r0, ys| rows_hw_float(k, t, w, rb, r0, x, ys)),
    }
}

/// Float-reference GEMV with kernels `k`, rows split over `pool`'s threads.
///
/// Panics if this CPU cannot run `k`.
pub fn gemv_float(k: Kernels, t: GgmlType, w: &[u8], x: &[f32], y: &mut [f32], pool: &mut RowPool) {
    assert!(k.supported(), "{} kernels on a CPU without them", k.name());
    let rb = t.row_bytes(x.len());
    let ch = chunk_rows(y.len(), rb, pool.threads());
    let run = |limbs: Option<&LimbInput>, pool: &mut RowPool, y: &mut [f32]| {
        let input = FloatInput {
            x64: if limbs.is_some() {
                Vec::new()
            } else {
                x.iter().map(|&v| v as f64).collect()
            },
            limbs,
        };
        pool.split(y, ch, |r0, ys| rows_float(k, t, w, rb, r0, &input, ys));
    };
    if uses_limbs(k, t) {
        LAST_LIMBS.with_borrow_mut(|last| run(last.get(x, limb_input).as_ref(), pool, y))
    } else {
        run(None, pool, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssnail_format::ggml::{quantize_block_q8_0, quantize_native};

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

    /// The kernel sets this CPU runs (the portable one always).
    fn kernel_sets() -> Vec<Kernels> {
        Kernels::ALL.into_iter().filter(|k| k.supported()).collect()
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn optimised_equals_definition_bit_for_bit() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut pool = RowPool::new(2);
        // Odd row lengths (in blocks), row counts below, at and around the
        // kernels' groups of eight, and unaligned row starts (offset 1..3),
        // on every kernel set this CPU has.
        for &t in &FORMATS {
            for &(rows, cols) in &[
                (7usize, 96usize),
                (33, 160),
                (5, 32),
                (8, 64),
                (17, 288),
                (130, 224),
                (9, 576),
                (3, 1536),
            ] {
                for offset in 0..3 {
                    let mut w = vec![0u8; offset];
                    w.extend(matrix(t, rows, cols, &mut rng));
                    let x: Vec<f32> = (0..cols).map(|_| rng.normal() * 2.0).collect();
                    let mut a = vec![0f32; rows];
                    gemv_hw_definition(t, &w[offset..], rows, &x, &mut a);
                    for k in kernel_sets() {
                        let mut b = vec![0f32; rows];
                        gemv_hw(k, t, &w[offset..], &x, &mut b, &mut pool);
                        let what =
                            format!("{} {} {rows}x{cols} offset {offset}", k.name(), t.name());
                        assert_eq!(bits(&a), bits(&b), "{what}");
                        // Float mode: optimised vs the definition, within rounding.
                        let mut c = vec![0f32; rows];
                        gemv_float(k, t, &w[offset..], &x, &mut c, &mut pool);
                        for r in 0..rows {
                            let d =
                                row_float_definition(t, &w[offset + r * t.row_bytes(cols)..], &x);
                            assert!(
                                (c[r] - d).abs() <= 1e-6 * d.abs().max(1.0),
                                "{what}: float {} vs {d}",
                                c[r]
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_input_used_again_is_prepared_again_only_if_it_changed() {
        // The kept quantisation (hardware) and limbs (float) of the last
        // input: the same x for two matrices (as Q, K, V), then x changed in
        // one element, then the first x again, then another length.
        let mut rng = Rng(5);
        let mut pool = RowPool::new(2);
        for t in [GgmlType::Q4_0, GgmlType::Q8_0] {
            let cols = 192;
            let w1 = matrix(t, 40, cols, &mut rng);
            let w2 = matrix(t, 24, cols, &mut rng);
            let w3 = matrix(t, 16, 2 * cols, &mut rng);
            let x: Vec<f32> = (0..cols).map(|_| rng.normal()).collect();
            let mut x_changed = x.clone();
            x_changed[37] = 9.5;
            let x3: Vec<f32> = (0..2 * cols).map(|_| rng.normal()).collect();
            for k in kernel_sets() {
                for (w, x) in [
                    (&w1, &x),
                    (&w2, &x),
                    (&w2, &x_changed),
                    (&w1, &x),
                    (&w3, &x3),
                ] {
                    let rows = w.len() / t.row_bytes(x.len());
                    let (mut a, mut b, mut c) =
                        (vec![0f32; rows], vec![0f32; rows], vec![0f32; rows]);
                    gemv_hw_definition(t, w, rows, x, &mut a);
                    gemv_hw(k, t, w, x, &mut b, &mut pool);
                    assert_eq!(bits(&a), bits(&b), "{} {}", k.name(), t.name());
                    gemv_float(k, t, w, x, &mut c, &mut pool);
                    for r in 0..rows {
                        let d = row_float_definition(t, &w[r * t.row_bytes(x.len())..], x);
                        assert!(
                            (c[r] - d).abs() <= 1e-6 * d.abs().max(1.0),
                            "{} {}",
                            k.name(),
                            t.name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn quantised_kernels_match_the_definition_on_arbitrary_block_bytes() {
        // Quant bytes no quantiser writes (Q8_0 −128, every nibble) and
        // scales from tiny subnormal F16 to large: what memory may hold.
        let mut rng = Rng(7);
        let mut pool = RowPool::new(1);
        for t in [GgmlType::Q8_0, GgmlType::Q4_0] {
            let (rows, cols) = (21usize, 352usize);
            let mut w: Vec<u8> = (0..rows * t.row_bytes(cols))
                .map(|_| rng.next() as u8)
                .collect();
            for blk in w.chunks_exact_mut(t.block_bytes()) {
                // Finite F16 scales: exponent field below 31.
                blk[1] = (rng.next() % 0x7C) as u8 | (blk[1] & 0x80);
                if rng.next().is_multiple_of(4) {
                    blk[2] = 0x80;
                }
            }
            let mut x: Vec<f32> = (0..cols).map(|_| rng.normal() * 3.0).collect();
            // A block with a wide dynamic range (the float kernels' fixed point).
            x[32] = 1e-30;
            x[33] = 4e4;
            x[34] = -3e-7;
            let mut a = vec![0f32; rows];
            gemv_hw_definition(t, &w, rows, &x, &mut a);
            for k in kernel_sets() {
                let mut b = vec![0f32; rows];
                gemv_hw(k, t, &w, &x, &mut b, &mut pool);
                assert_eq!(bits(&a), bits(&b), "{} {}", k.name(), t.name());
                let mut c = vec![0f32; rows];
                gemv_float(k, t, &w, &x, &mut c, &mut pool);
                for r in 0..rows {
                    let d = row_float_definition(t, &w[r * t.row_bytes(cols)..], &x);
                    assert!(
                        (c[r] - d).abs() <= 1e-6 * d.abs().max(1.0),
                        "{} {}: float {} vs {d}",
                        k.name(),
                        t.name(),
                        c[r]
                    );
                }
            }
        }
    }

    #[test]
    fn float_kernels_pass_infinities_and_nans_through() {
        let mut rng = Rng(11);
        let mut pool = RowPool::new(1);
        for t in FORMATS {
            let (rows, cols) = (10usize, 64usize);
            let w = matrix(t, rows, cols, &mut rng);
            for bad in [f32::INFINITY, f32::NAN] {
                let mut x: Vec<f32> = (0..cols).map(|_| rng.normal()).collect();
                x[40] = bad;
                for k in kernel_sets() {
                    let mut c = vec![0f32; rows];
                    gemv_float(k, t, &w, &x, &mut c, &mut pool);
                    for r in 0..rows {
                        let d = row_float_definition(t, &w[r * t.row_bytes(cols)..], &x);
                        assert!(
                            c[r].is_nan() && d.is_nan() || c[r] == d,
                            "{} {} {bad}: {} vs {d}",
                            k.name(),
                            t.name(),
                            c[r]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn limb_input_holds_x_to_within_2_to_the_minus_31_of_the_block_maximum() {
        let mut rng = Rng(3);
        let mut x: Vec<f32> = (0..96).map(|_| rng.normal() * 1e3).collect();
        x[5] = 1e-20;
        x[40..72].fill(0.0);
        x[80] = f32::MAX;
        x[81] = -f32::MIN_POSITIVE / 8.0;
        let li = limb_input(&x).unwrap();
        for (b, blk) in x.chunks_exact(32).enumerate() {
            let m = blk.iter().fold(0f64, |a, v| a.max(v.abs() as f64));
            let mut sum = 0i64;
            for (j, &v) in blk.iter().enumerate() {
                let l = |k: usize| li.limbs[128 * b + 32 * k + j] as i64;
                let xv = l(0) + (l(1) << 8) + (l(2) << 16) + (l(3) << 24);
                assert!(xv.abs() <= 1 << 30);
                sum += xv;
                let back = xv as f64 * li.unit[b];
                assert!(
                    (back - v as f64).abs() <= m * 2f64.powi(-31),
                    "{b} {j}: {v} {back}"
                );
            }
            assert_eq!(sum, li.sum[b]);
        }
        // The portable loop gives the same limbs (limb_input takes the AVX2 one where it can).
        let mut p = LimbInput {
            limbs: vec![0; 3 * 128],
            unit: vec![0.0; 3],
            sum: vec![0; 3],
        };
        assert!(limbs_body(&x, &mut p));
        assert_eq!((&p.limbs, &p.sum, &p.unit), (&li.limbs, &li.sum, &li.unit));
        assert!(limb_input(&[f32::INFINITY; 32]).is_none());
        assert!(limb_input(&[f32::NAN; 32]).is_none());
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
                for k in kernel_sets() {
                    let run = |pool: &mut RowPool| {
                        let (mut h, mut f) = (vec![0f32; rows], vec![0f32; rows]);
                        gemv_hw(k, t, &w, &x, &mut h, pool);
                        gemv_float(k, t, &w, &x, &mut f, pool);
                        (h.iter().chain(&f).map(|v| v.to_bits())).collect::<Vec<_>>()
                    };
                    let one = run(&mut pools[0]);
                    for p in &mut pools[1..] {
                        assert_eq!(one, run(p), "{} {} {rows}x{cols}", k.name(), t.name());
                    }
                }
            }
        }
    }

    #[test]
    fn the_best_kernels_run_here_and_portable_runs_everywhere() {
        assert!(Kernels::Portable.supported());
        assert!(Kernels::best().supported());
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            assert_ne!(Kernels::best(), Kernels::Portable);
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
    fn q8_input_is_the_shared_quantiser_bit_for_bit() {
        // Random blocks over many magnitudes, exact halves, subnormal and
        // huge maxima (1/d overflowing to infinity), zeros, infinities, NaNs.
        let mut rng = Rng(99);
        let mut x = Vec::new();
        for b in 0..400 {
            let scale = 2f32.powi(b % 80 - 130);
            for j in 0..32 {
                x.push(match (b + j) % 37 {
                    0 if b % 5 == 0 => 0.5 * (rng.next() % 512) as f32,
                    1 if b % 7 == 0 => f32::NAN,
                    2 if b % 11 == 0 => f32::INFINITY,
                    3 if b % 13 == 0 => -f32::MAX,
                    _ => rng.normal() * scale,
                });
            }
        }
        // A block whose scale is exactly 1 (max 127), so x·(1/d) = x: exact
        // halves, which round away from zero.
        x.push(127.0);
        x.extend((0..31).map(|j| j as f32 * if j % 2 == 0 { 1.0 } else { -1.0 } + 0.5));
        let q = quantize_input(&x);
        // The portable loop too (quantize_input takes the AVX2 one where it can).
        let mut p = Q8Input {
            q: vec![0; x.len()],
            d: vec![0.0; x.len() / 32],
            s: vec![0; x.len() / 32],
        };
        quantize_body(&x, &mut p);
        assert_eq!((&p.q, &p.s), (&q.q, &q.s));
        assert_eq!(bits(&p.d), bits(&q.d));
        for (b, blk) in x.chunks_exact(32).enumerate() {
            let (d, qb) = quantize_block_q8_0(blk);
            assert_eq!(f16(d).to_bits(), q.d[b].to_bits(), "block {b}");
            assert_eq!(&qb[..], &q.q[32 * b..32 * b + 32], "block {b}");
            assert_eq!(q.s[b], qb.iter().map(|&v| v as i32).sum::<i32>());
        }
        for v in [
            0.5f32, -0.5, 1.5, -2.5, 127.49998, 127.5, -127.5, 0.49999997, 300.0, -1e30,
        ] {
            assert_eq!(round_to_i8(v), v.round() as i8, "{v}");
        }
        assert_eq!(round_to_i8(f32::NAN), 0);
    }

    #[test]
    fn f16_widening_is_the_table_for_every_value_and_length() {
        let all: Vec<u8> = (0..=u16::MAX).flat_map(|v| v.to_le_bytes()).collect();
        for n in [65536usize, 65533, 7, 0] {
            let mut out = vec![0f32; n];
            widen_f16(&all[2 * (65536 - n)..], &mut out);
            for (i, o) in out.iter().enumerate() {
                let want = f16((65536 - n + i) as u16);
                assert!(o.to_bits() == want.to_bits(), "{i}");
            }
        }
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

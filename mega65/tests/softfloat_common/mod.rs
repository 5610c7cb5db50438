//! Shared by softfloat_on_the_pc.rs and softfloat_in_headless_mega65.rs: the operation records of
//! mega65/host/softfloat_ops.h, their Rust reference results, the comparison, and the operand generators
//! (random bit patterns and targeted edge cases).

#![allow(dead_code)]

use half::f16;
use ssnail_core::exact::ExactSum;
use ssnail_core::vector::{recip, rsqrt};

/// Operation numbers, as in mega65/host/softfloat_ops.h.
pub mod op {
    pub const NOP: u8 = 0;
    pub const ADD: u8 = 1;
    pub const SUB: u8 = 2;
    pub const MUL: u8 = 3;
    pub const DIV: u8 = 4;
    pub const SQRT: u8 = 5;
    pub const RECIP: u8 = 6;
    pub const RSQRT: u8 = 7;
    pub const FROM_I32: u8 = 8;
    pub const FROM_U32: u8 = 9;
    pub const FROM_F16: u8 = 10;
    pub const FROM_BF16: u8 = 11;
    pub const TO_F16: u8 = 12;
    pub const FLOOR_I32: u8 = 13;
    pub const ROUND_I32: u8 = 14;
    pub const LT: u8 = 15;
    pub const LE: u8 = 16;
    pub const IS_NAN: u8 = 17;
    pub const XS_CLEAR: u8 = 18;
    pub const XS_ADD: u8 = 19;
    pub const XS_ROUND: u8 = 20;
    pub const ROUND_PACK: u8 = 21;
    pub const MUL32_LO: u8 = 22;
    pub const MUL32_HI: u8 = 23;
    pub const XS_ADD_F16: u8 = 24;
    pub const COUNT: usize = 25;
    pub const NAMES: [&str; COUNT] = [
        "nop",
        "sf_add",
        "sf_sub",
        "sf_mul",
        "sf_div",
        "sf_sqrt",
        "sf_recip",
        "sf_rsqrt",
        "sf_from_i32",
        "sf_from_u32",
        "sf_from_f16",
        "sf_from_bf16",
        "sf_to_f16",
        "sf_floor_i32",
        "sf_round_i32",
        "sf_lt",
        "sf_le",
        "sf_is_nan",
        "xs_clear",
        "xs_add_product",
        "xs_round",
        "sf_round_pack",
        "sf_mul32 (low)",
        "sf_mul32 (high)",
        "xs_add_product_f16",
    ];
}

/// The NaN the C returns for every NaN result (softfloat.h SF_NAN, SF_F16_NAN).
pub const SF_NAN: u32 = 0x7FC0_0000;
pub const SF_F16_NAN: u32 = 0x7E00;

#[derive(Clone, Copy, Debug)]
pub struct Rec {
    pub op: u8,
    pub a: u32,
    pub b: u32,
}

pub fn rec(op: u8, a: u32, b: u32) -> Rec {
    Rec { op, a, b }
}

/// 12 bytes per record: op, three zero bytes, a, b (little-endian).
pub fn encode(recs: &[Rec]) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 * recs.len());
    for r in recs {
        out.extend_from_slice(&[r.op, 0, 0, 0]);
        out.extend_from_slice(&r.a.to_le_bytes());
        out.extend_from_slice(&r.b.to_le_bytes());
    }
    out
}

/// The Rust result of each record (the exact-sum records share one accumulator, as in the C).
pub fn reference(recs: &[Rec]) -> Vec<u32> {
    let mut xs = ExactSum::new();
    let f = f32::from_bits;
    recs.iter()
        .map(|r| {
            let (a, b) = (f(r.a), f(r.b));
            match r.op {
                op::NOP => 0,
                op::XS_CLEAR => {
                    xs = ExactSum::new();
                    0
                }
                op::ADD => (a + b).to_bits(),
                op::SUB => (a - b).to_bits(),
                op::MUL => (a * b).to_bits(),
                op::DIV => (a / b).to_bits(),
                op::SQRT => a.sqrt().to_bits(),
                op::RECIP => recip(a).to_bits(),
                op::RSQRT => rsqrt(a).to_bits(),
                op::FROM_I32 => (r.a as i32 as f32).to_bits(),
                op::FROM_U32 => (r.a as f32).to_bits(),
                op::FROM_F16 => f16::from_bits(r.a as u16).to_f32().to_bits(),
                // the core's own widening (ssnail_format::ggml): bits << 16, NaN bits kept
                op::FROM_BF16 => ssnail_format::ggml::bf16_to_f32(r.a as u16).to_bits(),
                op::TO_F16 => f16::from_f32(a).to_bits() as u32,
                op::FLOOR_I32 => a.floor() as i32 as u32,
                op::ROUND_I32 => a.round() as i32 as u32,
                op::LT => (a < b) as u32,
                op::LE => (a <= b) as u32,
                op::IS_NAN => a.is_nan() as u32,
                op::XS_ADD => {
                    xs.add(a as f64 * b as f64);
                    0
                }
                op::XS_ADD_F16 => {
                    xs.add(f16::from_bits(r.a as u16).to_f32() as f64 * b as f64);
                    0
                }
                op::XS_ROUND => xs.round_f32().to_bits(),
                // sig·2^(e−157) is exact in double (sig < 2^31, |e| small), then rounded once
                op::ROUND_PACK => {
                    let (neg, e) = (r.b >> 16 != 0, r.b as u16 as i16 as i32);
                    let v = (r.a as f64 * 2f64.powi(e - 157)) as f32;
                    (if neg { -v } else { v }).to_bits()
                }
                op::MUL32_LO => (r.a as u64 * r.b as u64) as u32,
                op::MUL32_HI => ((r.a as u64 * r.b as u64) >> 32) as u32,
                _ => panic!("no operation {}", r.op),
            }
        })
        .collect()
}

/// What the C must give for a Rust result: the same bits, or the documented NaN where Rust's
/// result is a NaN (its payload and sign are the x86's, not part of the numerics).
fn agrees(op: u8, want: u32, got: u32) -> bool {
    let f32_nan = |x: u32| x & 0x7FFF_FFFF > 0x7F80_0000;
    match op {
        op::ADD
        | op::SUB
        | op::MUL
        | op::DIV
        | op::SQRT
        | op::RECIP
        | op::RSQRT
        | op::FROM_F16
        | op::XS_ROUND
            if f32_nan(want) =>
        {
            got == SF_NAN
        }
        op::TO_F16 if want & 0x7FFF > 0x7C00 => got == SF_F16_NAN,
        _ => got == want,
    }
}

fn show(op: u8, x: u32) -> String {
    match op {
        op::FROM_I32 | op::FLOOR_I32 | op::ROUND_I32 => format!("{}", x as i32),
        op::FROM_U32 => format!("{x}"),
        op::FROM_F16 | op::FROM_BF16 => format!("{:04x}", x as u16),
        op::XS_ADD_F16 if x >> 16 == 0 => format!("{:04x} (F16)", x as u16),
        _ => format!("{x:08x} ({:e})", f32::from_bits(x)),
    }
}

/// Compares the C results with the reference; on disagreement, the count per operation and the
/// first few records in full.
pub fn compare(recs: &[Rec], got: &[u32]) -> Result<usize, String> {
    if got.len() != recs.len() {
        return Err(format!("{} results for {} records", got.len(), recs.len()));
    }
    let want = reference(recs);
    let mut bad = [0usize; op::COUNT];
    let mut first = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        if !agrees(r.op, want[i], got[i]) {
            bad[r.op as usize] += 1;
            if first.len() < 12 {
                let res = |x: u32| match r.op {
                    op::TO_F16 => format!("{x:04x}"),
                    op::FLOOR_I32 | op::ROUND_I32 => format!("{}", x as i32),
                    op::LT | op::LE | op::IS_NAN | op::MUL32_LO | op::MUL32_HI => {
                        format!("{x:08x}")
                    }
                    _ => format!("{x:08x} ({:e})", f32::from_bits(x)),
                };
                first.push(format!(
                    "  #{i} {}({}, {}): Rust {}, C {}",
                    op::NAMES[r.op as usize],
                    show(r.op, r.a),
                    show(r.op, r.b),
                    res(want[i]),
                    res(got[i])
                ));
            }
        }
    }
    let total: usize = bad.iter().sum();
    if total == 0 {
        return Ok(recs.len());
    }
    let per_op: Vec<String> = bad
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(o, n)| format!("{} {n}", op::NAMES[o]))
        .collect();
    Err(format!(
        "{total} of {} results differ from Rust ({}):\n{}",
        recs.len(),
        per_op.join(", "),
        first.join("\n")
    ))
}

/// Records per operation, for the test's summary line.
pub fn census(recs: &[Rec]) -> String {
    let mut n = [0usize; op::COUNT];
    recs.iter().for_each(|r| n[r.op as usize] += 1);
    n.iter()
        .enumerate()
        .filter(|(_, &k)| k > 0)
        .map(|(o, k)| format!("{} {k}", op::NAMES[o]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// xorshift64*: reproducible operands.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn u32(&mut self) -> u32 {
        (self.u64() >> 32) as u32
    }
    /// Uniform in 0..n.
    pub fn below(&mut self, n: u32) -> u32 {
        ((self.u32() as u64 * n as u64) >> 32) as u32
    }
    /// Uniform in lo..=hi.
    pub fn range(&mut self, lo: i32, hi: i32) -> i32 {
        lo + self.below((hi - lo + 1) as u32) as i32
    }
    pub fn sign(&mut self) -> u32 {
        self.u32() & 0x8000_0000
    }
    /// A 23-bit fraction: random, sparse (few bits set, so products and sums land on ties), or
    /// all ones / zero.
    pub fn frac(&mut self) -> u32 {
        match self.below(8) {
            0..=3 => self.u32() & 0x7F_FFFF,
            4 | 5 => self.u32() & self.u32() & self.u32() & 0x7F_FFFF,
            6 => (1 << self.below(23)) | (1 << self.below(23)),
            _ => [0, 0x7F_FFFF, 1, 0x40_0000][self.below(4) as usize],
        }
    }
}

/// A single with biased exponent `e` (clamped to 0..=254), fraction and sign.
pub fn with_exp(sign: u32, e: i32, frac: u32) -> u32 {
    sign | (e.clamp(0, 254) as u32) << 23 | frac & 0x7F_FFFF
}

fn exp_of(x: u32) -> i32 {
    ((x >> 23) & 0xFF) as i32
}

/// Values where IEEE single arithmetic has its corners.
pub const EDGE: &[u32] = &[
    0x0000_0000, // +0
    0x8000_0000, // −0
    0x0000_0001, // smallest subnormal
    0x8000_0001,
    0x0000_0002,
    0x0000_0003,
    0x007F_FFFF, // largest subnormal
    0x0040_0000,
    0x0080_0000, // smallest normal
    0x8080_0000,
    0x0080_0001,
    0x00FF_FFFF,
    0x3F80_0000, // 1
    0xBF80_0000,
    0x3F80_0001, // 1 + ulp
    0x3F7F_FFFF, // 1 − ulp/2
    0x3FFF_FFFF,
    0x3F00_0000, // 0.5
    0xBF00_0000,
    0x3EFF_FFFF, // 0.49999997
    0xBEFF_FFFF,
    0x3FC0_0000, // 1.5
    0xBFC0_0000,
    0x4020_0000, // 2.5
    0xC020_0000,
    0x4040_0000, // 3
    0x3EAA_AAAB, // 1/3
    0x4049_0FDB, // π
    0x3FB5_04F3, // √2
    0x4B00_0000, // 2^23
    0x4B00_0001,
    0x4B80_0000, // 2^24
    0x4B80_0001,
    0x4B7F_FFFF,
    0x4F00_0000, // 2^31
    0xCF00_0000, // −2^31
    0x4EFF_FFFF, // 2^31 − 128
    0xCF00_0001,
    0x4F80_0000, // 2^32
    0x3380_0000, // 2^−24: half's smallest subnormal
    0x3300_0000, // 2^−25: half of it
    0x3300_0001,
    0x33C0_0000,
    0x3880_0000, // 2^−14: half's smallest normal
    0x387F_C000, // half's largest subnormal
    0x477F_E000, // 65504: half's largest
    0x477F_F000, // 65520: rounds to half inf
    0x477F_EFFF,
    0x1F80_0000, // 2^−64
    0x5F80_0000, // 2^64
    0x7F00_0000,
    0x7F7F_FFFF, // largest single
    0xFF7F_FFFF,
    0x7F80_0000, // +inf
    0xFF80_0000, // −inf
    0x7FC0_0000, // quiet NaN
    0xFFC0_0000,
    0x7F80_0001, // signalling NaN
    0x7FFF_FFFF,
];

/// Any single: raw bits, any exponent with a random or sparse fraction, an edge value, near 1,
/// or a small odd integer times a power of two.
pub fn any_f32(r: &mut Rng) -> u32 {
    match r.below(10) {
        0..=2 => r.u32(),
        // any exponent including 255 (inf and NaN)
        3..=5 => r.sign() | (r.below(256) << 23) | r.frac(),
        6 => EDGE[r.below(EDGE.len() as u32) as usize],
        7 | 8 => with_exp(r.sign(), r.range(97, 157), r.frac()),
        _ => {
            let m = (r.below(1 << 13) | 1) as f32;
            let v = m * 2f32.powi(r.range(-40, 40));
            v.to_bits() | r.sign()
        }
    }
}

/// Operand pairs for the binary operations.
pub fn pair(r: &mut Rng, o: u8) -> (u32, u32) {
    let a = any_f32(r);
    let ea = exp_of(a);
    let b = match r.below(8) {
        0 | 1 => any_f32(r),
        // a partner a few binades away: cancellation, alignment, rounding bits
        2 | 3 => with_exp(r.sign(), ea + r.range(-30, 30), r.frac()),
        // −a (or a) within a few ulps: catastrophic cancellation in add/sub
        4 => (a ^ (0x8000_0000 * r.below(2))).wrapping_add(r.range(-3, 3) as u32),
        // half an ulp of a (or just around it): ties for add/sub
        5 => with_exp(
            r.sign(),
            ea - 24 - r.below(2) as i32,
            r.frac() & r.u32() & 0xF,
        ),
        // exponents whose sum or difference leaves the normal range: subnormal results, ties
        // at their rounding, overflow (power-of-two partners make exact ties)
        _ => {
            let target = match r.below(3) {
                0 => r.range(-30, 2),
                1 => r.range(250, 258),
                _ => r.range(100, 160),
            };
            let eb = if o == op::DIV {
                ea + 127 - target
            } else {
                target + 127 - ea
            };
            let frac = if r.below(2) == 0 { 0 } else { r.frac() };
            with_exp(r.sign(), eb, frac)
        }
    };
    if r.below(2) == 0 {
        (a, b)
    } else {
        (b, a)
    }
}

/// Singles near the integer conversions' corners: halves, values around 2^31, both signs.
pub fn int_like_f32(r: &mut Rng) -> u32 {
    match r.below(4) {
        0 => any_f32(r),
        1 => with_exp(r.sign(), r.range(120, 160), r.frac()),
        2 => {
            // k + 0.5 (exact for |k| < 2^23) and its neighbours
            let bits = r.range(0, 22);
            let k = r.below(1 << bits) as f32 + 0.5;
            (k.to_bits() | r.sign()).wrapping_add(r.range(-1, 1) as u32)
        }
        _ => (0x4F00_0000 | r.sign()).wrapping_add(r.range(-3, 3) as u32),
    }
}

/// Integers around the corners of i32/u32 → single: 2^24 ± k, ties, saturation points.
pub fn int_operand(r: &mut Rng) -> u32 {
    match r.below(4) {
        0 => r.u32(),
        1 => r.u32() >> r.below(32),
        2 => {
            let p = 1u32 << r.range(23, 31);
            let v = p.wrapping_add(r.range(-300, 300) as u32);
            if r.below(2) == 0 {
                v
            } else {
                v.wrapping_neg()
            }
        }
        _ => {
            // an odd number with 25-32 significant bits and a tie pattern below the 24 kept
            let bits = r.range(25, 32) as u32;
            let drop = bits - 24;
            let keep = (r.u32() | 0x8000_0000) >> (32 - 24);
            let low = match r.below(3) {
                0 => 1 << (drop - 1),
                1 => (1 << (drop - 1)) - 1,
                _ => (1 << (drop - 1)) + 1,
            } & ((1u64 << drop) - 1) as u32;
            let v = ((keep as u64) << drop | low as u64) as u32;
            if r.below(4) == 0 {
                (v as i32).wrapping_neg() as u32
            } else {
                v
            }
        }
    }
}

/// F32 → F16 corners: halves' range edges and tie patterns in the 13 (or more) dropped bits.
pub fn f16_like_f32(r: &mut Rng) -> u32 {
    match r.below(3) {
        0 => any_f32(r),
        1 => {
            let low = [0x1000, 0x0FFF, 0x1001, 0, 0x1FFF, 0x3000][r.below(6) as usize];
            with_exp(r.sign(), r.range(98, 145), r.u32() & 0x7F_E000 | low)
        }
        _ => with_exp(r.sign(), r.range(98, 145), r.frac()),
    }
}

/// One exact-sum test: clear, a vector of products of one of several kinds, a rounding in the
/// middle (it must not disturb the sum), the final rounding.
pub fn exact_sum_case(r: &mut Rng, max_len: u32, out: &mut Vec<Rec>) {
    let n = 1 + r.below(max_len) as usize;
    let kind = r.below(10);
    // kinds 8 and 9: F16 weights (xs_add_product_f16)
    let half_weights = kind >= 8;
    let typical = |r: &mut Rng, centre: i32, spread: i32| {
        with_exp(r.sign(), centre + r.range(-spread, spread), r.frac())
    };
    let mut terms: Vec<(u32, u32)> = Vec::with_capacity(n + 4);
    match kind {
        // weights times activations
        0 => (0..n).for_each(|_| terms.push((typical(r, 120, 8), typical(r, 127, 10)))),
        // every magnitude, subnormals included
        1 => (0..n).for_each(|_| {
            terms.push((
                with_exp(r.sign(), r.range(0, 254), r.frac()),
                with_exp(r.sign(), r.range(0, 254), r.frac()),
            ))
        }),
        // catastrophic cancellation: products and their negations, plus a few much smaller terms
        2 => {
            let half = n.div_ceil(2);
            for _ in 0..half {
                let c = r.range(60, 200);
                terms.push((typical(r, c, 20), typical(r, 127, 20)));
            }
            for i in 0..half {
                let (a, b) = terms[i];
                terms.push((a, b ^ 0x8000_0000));
            }
            for _ in 0..r.below(4) {
                terms.push((typical(r, 40, 30), typical(r, 127, 30)));
            }
        }
        // products in and below the subnormal range: underflow, ties at the last subnormal place
        3 => (0..n).for_each(|_| {
            let ea = r.range(0, 120);
            let target = r.range(-175, -120);
            let frac = if r.below(2) == 0 { 0 } else { r.frac() };
            terms.push((
                with_exp(r.sign(), ea, r.frac()),
                with_exp(r.sign(), target + 254 - ea, frac),
            ))
        }),
        // products near the top: overflow to inf, or cancellation back into range
        4 => (0..n).for_each(|_| {
            let ea = r.range(180, 254);
            let target = r.range(100, 130); // the product's binary exponent
            terms.push((
                with_exp(r.sign(), ea, r.frac()),
                with_exp(r.sign(), target + 254 - ea, r.frac()),
            ))
        }),
        // an exact tie between two singles, nudged by a far smaller term (or not), in a shuffled
        // vector padded with products that cancel
        5 => {
            let e = r.range(40, 220);
            let s = r.sign();
            terms.push((with_exp(s, e, r.frac()), 0x3F80_0000));
            terms.push((with_exp(s, e - 24, 0), 0x3F80_0000));
            match r.below(3) {
                0 => {}
                1 => terms.push((with_exp(r.sign(), e - 24 - r.range(1, 100), 0), 0x3F80_0000)),
                _ => terms.push((with_exp(r.sign(), e - 60, r.frac()), 0x3F80_0000)),
            }
            while terms.len() < n {
                let (a, b) = (typical(r, 127, 40), typical(r, 127, 20));
                terms.push((a, b));
                terms.push((a ^ 0x8000_0000, b));
            }
        }
        // infinities, NaN and zeros among ordinary products
        6 => (0..n).for_each(|_| {
            let pick = |r: &mut Rng| {
                if r.below(12) == 0 {
                    [0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0, 0x8000_0000][r.below(5) as usize]
                } else {
                    typical(r, 127, 30)
                }
            };
            terms.push((pick(r), pick(r)))
        }),
        // F16 weights (normal, subnormal, a few inf/NaN/zeros) times activations
        8 => (0..n).for_each(|_| {
            let w = match r.below(16) {
                0 => [0x7C00, 0xFC00, 0x7E00, 0, 0x8000][r.below(5) as usize],
                1..=3 => r.u32() & 0x83FF, // subnormal
                _ => r.u32() & 0x8000 | (r.range(1, 30) as u32) << 10 | r.u32() & 0x3FF,
            };
            terms.push((w, typical(r, 127, 30)))
        }),
        9 => (0..n).for_each(|_| terms.push((r.u32() & 0xFFFF, any_f32(r)))),
        _ => (0..n).for_each(|_| terms.push((any_f32(r), any_f32(r)))),
    }
    // shuffle (Fisher–Yates)
    for i in (1..terms.len()).rev() {
        let j = r.below(i as u32 + 1) as usize;
        terms.swap(i, j);
    }
    out.push(rec(op::XS_CLEAR, 0, 0));
    let mid = r.below(terms.len() as u32 + 1) as usize;
    for (i, &(a, b)) in terms.iter().enumerate() {
        if i == mid {
            out.push(rec(op::XS_ROUND, 0, 0));
        }
        let o = if half_weights {
            op::XS_ADD_F16
        } else {
            op::XS_ADD
        };
        out.push(rec(o, a, b));
    }
    out.push(rec(op::XS_ROUND, 0, 0));
}

/// The test set: every binary operation on all pairs of `edge` and on `per_op` generated pairs,
/// the unary operations on `edge` and `per_op` generated operands, exhaustive widenings if
/// `exhaustive`, and `sums` exact sums of up to `max_len` products.
pub fn test_set(
    seed: u64,
    edge: &[u32],
    per_op: usize,
    exhaustive: bool,
    sums: usize,
    max_len: u32,
) -> Vec<Rec> {
    let mut r = Rng::new(seed);
    let mut v = Vec::new();
    for o in [op::ADD, op::SUB, op::MUL, op::DIV, op::LT, op::LE] {
        for &a in edge {
            for &b in edge {
                v.push(rec(o, a, b));
            }
        }
        for _ in 0..per_op {
            let (a, b) = pair(&mut r, o);
            v.push(rec(o, a, b));
        }
    }
    for o in [op::SQRT, op::RECIP, op::RSQRT, op::IS_NAN] {
        edge.iter().for_each(|&a| v.push(rec(o, a, 0)));
        for i in 0..per_op {
            let a = match i % 3 {
                0 => any_f32(&mut r),
                1 => any_f32(&mut r) & 0x7FFF_FFFF,
                _ => {
                    // an exact square (its root has at most 12 bits)
                    let y = (r.below(1 << 12) | 1) as f32 * 2f32.powi(r.range(-70, 60));
                    (y * y).to_bits()
                }
            };
            v.push(rec(o, a, 0));
        }
    }
    // recip at the ends of the exponents whose reciprocal is normal (the 45GS02 build's divider
    // path takes exponents 1..252 and leaves 253 and up to the division), each with the
    // fractions at its ends, a middle one and a random one, both signs
    for e in [1u32, 2, 126, 127, 128, 251, 252, 253, 254] {
        for f in [
            0u32,
            1,
            0x40_0000,
            0x7F_FFFE,
            0x7F_FFFF,
            r.u32() & 0x7F_FFFF,
        ] {
            for s in [0u32, 0x8000_0000] {
                v.push(rec(op::RECIP, s | e << 23 | f, 0));
            }
        }
    }
    for o in [op::FROM_I32, op::FROM_U32] {
        for k in [
            0u32,
            1,
            0x7FFF_FFFF,
            0x8000_0000,
            0x8000_0001,
            0xFFFF_FFFF,
            0xFFFF_FF80,
        ] {
            v.push(rec(o, k, 0));
        }
        for d in -3i32..=3 {
            for p in [1u32 << 24, 1 << 25, 1 << 31, 0u32.wrapping_sub(1 << 24)] {
                v.push(rec(o, p.wrapping_add(d as u32), 0));
            }
        }
        (0..per_op).for_each(|_| v.push(rec(o, int_operand(&mut r), 0)));
    }
    for o in [op::FLOOR_I32, op::ROUND_I32] {
        edge.iter().for_each(|&a| v.push(rec(o, a, 0)));
        (0..per_op).for_each(|_| v.push(rec(o, int_like_f32(&mut r), 0)));
    }
    edge.iter().for_each(|&a| v.push(rec(op::TO_F16, a, 0)));
    (0..per_op).for_each(|_| v.push(rec(op::TO_F16, f16_like_f32(&mut r), 0)));
    for o in [op::FROM_F16, op::FROM_BF16] {
        if exhaustive {
            (0..=0xFFFFu32).for_each(|h| v.push(rec(o, h, 0)));
        } else {
            (0..per_op).for_each(|_| v.push(rec(o, r.u32() & 0xFFFF, 0)));
            for h in [
                0u32, 0x8000, 1, 0x3FF, 0x400, 0x7BFF, 0x7C00, 0xFC00, 0x7C01, 0x7E00,
            ] {
                v.push(rec(o, h, 0));
            }
        }
    }
    for _ in 0..per_op {
        // sf_round_pack's inputs: the leading 1 at bit 30, or e = 1 and below 2^30
        let (sig, e) = if r.below(8) == 0 {
            (r.u32() >> (2 + r.below(30)), 1)
        } else {
            let low = [0u32, 0x40, 0x3F, 0x41, 0xC0, 1][r.below(6) as usize];
            let sig = 0x4000_0000 | (r.u32() & 0x3FFF_FF80) | low;
            (sig, r.range(-40, 300))
        };
        if sig != 0 {
            v.push(rec(op::ROUND_PACK, sig, r.below(2) << 16 | e as u16 as u32));
        }
        let (a, b) = (r.u32() >> r.below(32), r.u32() >> r.below(32));
        v.push(rec(op::MUL32_LO, a, b));
        v.push(rec(op::MUL32_HI, a, b));
    }
    for _ in 0..sums {
        exact_sum_case(&mut r, max_len, &mut v);
    }
    v
}

//! Dequantisers for the ggml types a GGUF may hold that SSNAIL does not
//! execute (Q4_1, Q5_0, Q5_1, Q2_K … Q6_K, Q8_K, F64), so the converter can
//! repack them. Block layouts and arithmetic order follow llama.cpp's
//! reference `dequantize_row_*` (f32 products in the same order), so the
//! values are the ones llama.cpp itself would compute.

use crate::ggml::{dequantize_native, f16_to_f32, GgmlType};

/// Elements in a K-quant super-block.
pub const QK_K: usize = 256;

#[inline]
fn f16_at(b: &[u8], off: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[off], b[off + 1]]))
}

/// Types [`dequantize`] can read.
pub fn can_dequantize(t: GgmlType) -> bool {
    use GgmlType::*;
    t.is_native()
        || matches!(
            t,
            Q4_1 | Q5_0 | Q5_1 | Q8_1 | Q2K | Q3K | Q4K | Q5K | Q6K | Q8K | F64
        )
}

/// Dequantise `out.len()` elements (a multiple of the type's block) of type
/// `t` from `src`. Returns false for a type this module cannot read (the
/// IQ*, TQ* and MXFP4 families, integer tensors).
pub fn dequantize(t: GgmlType, src: &[u8], out: &mut [f32]) -> bool {
    use GgmlType::*;
    if dequantize_native(t, src, out) {
        return true;
    }
    let bl = t.block_len();
    let bb = t.block_bytes();
    let f: fn(&[u8], &mut [f32]) = match t {
        Q4_1 => block_q4_1,
        Q5_0 => block_q5_0,
        Q5_1 => block_q5_1,
        Q8_1 => block_q8_1,
        Q2K => block_q2_k,
        Q3K => block_q3_k,
        Q4K => block_q4_k,
        Q5K => block_q5_k,
        Q6K => block_q6_k,
        Q8K => block_q8_k,
        F64 => |b: &[u8], o: &mut [f32]| {
            o[0] = f64::from_le_bytes(b[..8].try_into().unwrap()) as f32;
        },
        _ => return false,
    };
    for (blk, o) in src.chunks_exact(bb).zip(out.chunks_exact_mut(bl)) {
        f(blk, o);
    }
    true
}

/// Q4_1: d, m (F16), 16 bytes of nibbles; x = q·d + m, low nibbles first.
fn block_q4_1(b: &[u8], y: &mut [f32]) {
    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
    for j in 0..16 {
        let q = b[4 + j];
        y[j] = (q & 15) as f32 * d + m;
        y[j + 16] = (q >> 4) as f32 * d + m;
    }
}

/// The fifth bits of Q5_0/Q5_1: bit j of qh for element j (j < 32).
#[inline]
fn q5_high(qh: u32, j: usize) -> u8 {
    (((qh >> j) & 1) << 4) as u8
}

/// Q5_0: d (F16), qh (u32), 16 bytes of nibbles; x = (q − 16)·d.
fn block_q5_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let qh = u32::from_le_bytes(b[2..6].try_into().unwrap());
    for j in 0..16 {
        let q = b[6 + j];
        y[j] = (((q & 15) | q5_high(qh, j)) as i32 - 16) as f32 * d;
        y[j + 16] = (((q >> 4) | q5_high(qh, j + 16)) as i32 - 16) as f32 * d;
    }
}

/// Q5_1: d, m (F16), qh (u32), nibbles; x = q·d + m.
fn block_q5_1(b: &[u8], y: &mut [f32]) {
    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
    let qh = u32::from_le_bytes(b[4..8].try_into().unwrap());
    for j in 0..16 {
        let q = b[8 + j];
        y[j] = ((q & 15) | q5_high(qh, j)) as f32 * d + m;
        y[j + 16] = ((q >> 4) | q5_high(qh, j + 16)) as f32 * d + m;
    }
}

/// Q8_1: d, s (F16), 32 × i8; x = q·d (s is a precomputed sum).
fn block_q8_1(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    for j in 0..32 {
        y[j] = (b[4 + j] as i8) as f32 * d;
    }
}

/// Q2_K: scales[16] (low nibble scale, high nibble min), qs[64] (2-bit,
/// four planes per 32 bytes), d, dmin. Sixteen groups of 16.
fn block_q2_k(b: &[u8], y: &mut [f32]) {
    let (scales, qs) = (&b[0..16], &b[16..80]);
    let (d, dmin) = (f16_at(b, 80), f16_at(b, 82));
    let mut out = 0;
    let mut is = 0;
    for half in 0..2 {
        let q = &qs[32 * half..32 * half + 32];
        for shift in [0, 2, 4, 6] {
            for part in 0..2 {
                let sc = scales[is];
                is += 1;
                let dl = d * (sc & 15) as f32;
                let ml = dmin * (sc >> 4) as f32;
                for l in 0..16 {
                    y[out] = dl * ((q[16 * part + l] >> shift) & 3) as f32 - ml;
                    out += 1;
                }
            }
        }
    }
}

/// The sixteen 6-bit signed scales of a Q3_K block (stored minus 32): the
/// low 4 bits of scale i are in byte i (i < 8, low nibble) or byte i − 8
/// (high nibble); the high 2 bits in byte 8 + i % 4 at bit 2·(i / 4).
fn q3_k_scales(s: &[u8]) -> [i8; 16] {
    let mut out = [0i8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        let low = if i < 8 { s[i] & 15 } else { s[i - 8] >> 4 };
        let high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
        *o = ((low | (high << 4)) as i8) - 32;
    }
    out
}

/// Q3_K: hmask[32], qs[64], scales[12], d. x = d·scale·(q2 − (high bit ? 0 : 4)).
fn block_q3_k(b: &[u8], y: &mut [f32]) {
    let (hm, qs) = (&b[0..32], &b[32..96]);
    let scales = q3_k_scales(&b[96..108]);
    let d_all = f16_at(b, 108);
    let mut out = 0;
    let mut is = 0;
    let mut m = 1u8;
    for half in 0..2 {
        let q = &qs[32 * half..32 * half + 32];
        for shift in [0, 2, 4, 6] {
            for part in 0..2 {
                let dl = d_all * (scales[is] as f32);
                is += 1;
                for l in 0..16 {
                    let k = 16 * part + l;
                    let low = ((q[k] >> shift) & 3) as i32;
                    let sub = if hm[k] & m != 0 { 0 } else { 4 };
                    y[out] = dl * (low - sub) as f32;
                    out += 1;
                }
            }
            m <<= 1;
        }
    }
}

/// Scale and min j (0..8) of a Q4_K/Q5_K block's 12 packed 6-bit values.
pub fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

/// Q4_K: d, dmin, scales[12], qs[128]; eight groups of 32: x = d·sc·q − dmin·m.
fn block_q4_k(b: &[u8], y: &mut [f32]) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let (scales, qs) = (&b[4..16], &b[16..144]);
    for p in 0..4 {
        let q = &qs[32 * p..32 * p + 32];
        let (s1, m1) = scale_min_k4(2 * p, scales);
        let (s2, m2) = scale_min_k4(2 * p + 1, scales);
        let (d1, m1) = (d * s1 as f32, dmin * m1 as f32);
        let (d2, m2) = (d * s2 as f32, dmin * m2 as f32);
        for l in 0..32 {
            y[64 * p + l] = d1 * (q[l] & 15) as f32 - m1;
            y[64 * p + 32 + l] = d2 * (q[l] >> 4) as f32 - m2;
        }
    }
}

/// Q5_K: d, dmin, scales[12], qh[32], qs[128]; like Q4_K with a fifth bit
/// (bit 2p of qh[l] for the low nibbles of pair p, bit 2p + 1 for the high).
fn block_q5_k(b: &[u8], y: &mut [f32]) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let (scales, qh, qs) = (&b[4..16], &b[16..48], &b[48..176]);
    for p in 0..4 {
        let q = &qs[32 * p..32 * p + 32];
        let (s1, m1) = scale_min_k4(2 * p, scales);
        let (s2, m2) = scale_min_k4(2 * p + 1, scales);
        let (d1, m1) = (d * s1 as f32, dmin * m1 as f32);
        let (d2, m2) = (d * s2 as f32, dmin * m2 as f32);
        let (u1, u2) = (1u8 << (2 * p), 2u8 << (2 * p));
        for l in 0..32 {
            let h1 = if qh[l] & u1 != 0 { 16 } else { 0 };
            let h2 = if qh[l] & u2 != 0 { 16 } else { 0 };
            y[64 * p + l] = d1 * ((q[l] & 15) + h1) as f32 - m1;
            y[64 * p + 32 + l] = d2 * ((q[l] >> 4) + h2) as f32 - m2;
        }
    }
}

/// Q6_K: ql[128], qh[64], scales[16] (i8), d; x = d·scale·(q − 32).
fn block_q6_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 208);
    for half in 0..2 {
        let ql = &b[64 * half..64 * half + 64];
        let qh = &b[128 + 32 * half..128 + 32 * half + 32];
        let sc = &b[192 + 8 * half..192 + 8 * half + 8];
        let y = &mut y[128 * half..128 * half + 128];
        for l in 0..32 {
            let is = l / 16;
            let q1 = ((ql[l] & 15) | ((qh[l] & 3) << 4)) as i32 - 32;
            let q2 = ((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
            let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
            let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
            y[l] = d * (sc[is] as i8) as f32 * q1 as f32;
            y[l + 32] = d * (sc[is + 2] as i8) as f32 * q2 as f32;
            y[l + 64] = d * (sc[is + 4] as i8) as f32 * q3 as f32;
            y[l + 96] = d * (sc[is + 6] as i8) as f32 * q4 as f32;
        }
    }
}

/// Q8_K: d (f32), qs[256] (i8), bsums (ignored); x = d·q.
fn block_q8_k(b: &[u8], y: &mut [f32]) {
    let d = f32::from_le_bytes(b[0..4].try_into().unwrap());
    for j in 0..256 {
        y[j] = d * (b[4 + j] as i8) as f32;
    }
}

#[cfg(test)]
mod tests {
    //! Blocks built field by field; expected values worked out by hand from
    //! the block layouts (not from the code above).
    use super::*;
    use crate::ggml::GgmlType::*;

    const H_1: [u8; 2] = [0x00, 0x3C]; // F16 1.0
    const H_HALF: [u8; 2] = [0x00, 0x38]; // 0.5
    const H_QUARTER: [u8; 2] = [0x00, 0x34]; // 0.25
    const H_M1: [u8; 2] = [0x00, 0xBC]; // -1.0
    const H_0: [u8; 2] = [0, 0];

    fn deq(t: GgmlType, b: &[u8]) -> Vec<f32> {
        assert_eq!(b.len(), t.block_bytes());
        let mut y = vec![f32::NAN; t.block_len()];
        assert!(dequantize(t, b, &mut y));
        y
    }

    #[test]
    fn q4_1() {
        let mut b = [0u8; 20];
        b[0..2].copy_from_slice(&H_HALF);
        b[2..4].copy_from_slice(&H_M1);
        b[4] = 0x3A; // element 0 = 10, element 16 = 3
        let y = deq(Q4_1, &b);
        assert_eq!((y[0], y[16], y[1]), (4.0, 0.5, -1.0));
    }

    #[test]
    fn q5_0() {
        let mut b = [0u8; 22];
        b[0..2].copy_from_slice(&H_QUARTER);
        b[2..6].copy_from_slice(&[0x01, 0x00, 0x01, 0x00]); // fifth bit of elements 0 and 16
        b[6] = 0xF0;
        let y = deq(Q5_0, &b);
        // 16 - 16 = 0; (15 + 16) - 16 = 15 → 3.75; bare zero nibble: -16 → -4.
        assert_eq!((y[0], y[16], y[1], y[17]), (0.0, 3.75, -4.0, -4.0));
    }

    #[test]
    fn q5_1() {
        let mut b = [0u8; 24];
        b[0..2].copy_from_slice(&H_1);
        b[2..4].copy_from_slice(&H_HALF);
        b[4..8].copy_from_slice(&[0, 0, 0, 0x80]); // fifth bit of element 31
        b[8 + 15] = 0x21;
        let y = deq(Q5_1, &b);
        assert_eq!((y[15], y[31], y[0]), (1.5, 18.5, 0.5));
    }

    #[test]
    fn q2_k() {
        let mut b = [0u8; 84];
        b[0] = 0x21; // group 0: scale 1, min 2
        b[1] = 0x03; // group 1: scale 3, min 0
        b[2] = 0x12; // group 2: scale 2, min 1
        b[8] = 0x01; // group 8 (first of the second 128): scale 1
        b[16] = 0xE4; // qs[0]: 2-bit planes 0,1,2,3
        b[16 + 32] = 3; // qs[32], plane 0
        b[80..82].copy_from_slice(&H_1);
        b[82..84].copy_from_slice(&H_HALF);
        let y = deq(Q2K, &b);
        // y0 = 1·0 − 0.5·2; y16 = 3·0 − 0; y32 = 2·1 − 0.5·1 (plane 1 of qs[0]); y128 = 1·3.
        assert_eq!((y[0], y[16], y[32], y[128]), (-1.0, 0.0, 1.5, 3.0));
    }

    #[test]
    fn q3_k() {
        let mut b = [0u8; 110];
        b[0] = 0x01; // hmask: element 0 has its high bit
        b[16] = 0x10; // element 144's high bit is bit 4 (fifth plane)
        b[32] = 2; // qs[0]
        b[33] = 1; // qs[1]
        b[32 + 48] = 3; // qs[48] → element 144 (second half, group 9)
                        // scale 0 = +1 (stored 33 = low 1, high 2); scale 9 = -2 (stored 30 = low 14, high 1).
        b[96] = 0x01;
        b[96 + 8] = 0x02;
        b[96 + 1] = 0xE0;
        b[96 + 9] = 0x10;
        b[108..110].copy_from_slice(&H_1);
        let y = deq(Q3K, &b);
        // y0 = 1·2; y1 = 1·(1 − 4); y144 = −2·3.
        assert_eq!((y[0], y[1], y[144]), (2.0, -3.0, -6.0));
        // scales 1..15 other than 9 are 0 − 32 = −32: element 16 (scale 1, q 0, no high bit) = −32·−4.
        assert_eq!(y[16], 128.0);
    }

    #[test]
    fn q4_k() {
        let mut b = [0u8; 144];
        b[0..2].copy_from_slice(&H_1);
        b[2..4].copy_from_slice(&H_1);
        b[4] = 0x42; // scale 0 = 2, top bits 1 → high bits of scale 4
        b[5] = 3; // scale 1 = 3
        b[8] = 1; // min 0 = 1
        b[12] = 0x21; // scale 4 low 1, min 4 low 2
        b[16] = 0x45; // qs[0]: low 5 (element 0), high 4 (element 32)
        b[16 + 64] = 0x03; // element 128
        let y = deq(Q4K, &b);
        // y0 = 2·5 − 1; y32 = 3·4 − 0; y128 = 17·3 − 2.
        assert_eq!((y[0], y[32], y[128]), (9.0, 12.0, 49.0));
    }

    #[test]
    fn q5_k() {
        let mut b = [0u8; 176];
        b[0..2].copy_from_slice(&H_1);
        b[2..4].copy_from_slice(&H_0);
        b[4] = 1; // scale 0
        b[7] = 2; // scale 3
        b[16] = 0x09; // qh[0]: bit 0 (element 0) and bit 3 (element 96)
        b[48 + 32] = 0x50; // qs[32]: high nibble 5 → element 96
        let y = deq(Q5K, &b);
        assert_eq!((y[0], y[96], y[1]), (16.0, 42.0, 0.0));
    }

    #[test]
    fn q6_k() {
        let mut b = [0u8; 210];
        b[0] = 0x21; // ql[0]: low 1 (element 0), high 2 (element 64)
        b[128] = 0x02; // qh[0]: bits 0-1 = 2 → element 0 gets 32
        b[64 + 48] = 0xF0; // ql[112] = second half ql[48]: high 15 → element 240
        b[128 + 48] = 0xC0; // qh[48] = second half qh[16]: bits 6-7 = 3 → element 240
        b[192] = 2;
        b[196] = 1;
        b[207] = (-2i8) as u8; // scale 15
        b[208..210].copy_from_slice(&H_HALF);
        let y = deq(Q6K, &b);
        // y0 = 0.5·2·(33 − 32); y64 = 0.5·1·(2 − 32); y240 = 0.5·−2·(63 − 32).
        assert_eq!((y[0], y[64], y[240]), (1.0, -15.0, -31.0));
    }

    #[test]
    fn q8_k_and_f64() {
        let mut b = [0u8; 292];
        b[0..4].copy_from_slice(&0.25f32.to_le_bytes());
        b[4 + 5] = (-8i8) as u8;
        let y = deq(Q8K, &b);
        assert_eq!((y[5], y[0]), (-2.0, 0.0));
        assert_eq!(deq(F64, &1.5f64.to_le_bytes()), vec![1.5]);
        let mut y = [0.0f32; 256];
        assert!(
            !dequantize(Iq2Xxs, &[0; 66], &mut y),
            "IQ types are not read"
        );
    }
}

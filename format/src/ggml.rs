//! ggml weight formats (spec §4.1): type numbers, block sizes, and the five
//! formats SSNAIL executes natively (F32, F16, BF16, Q8_0, Q4_0), with
//! dequantisers and quantisers that give the same bytes as llama.cpp's
//! reference code. Dequantisers for the other ggml types a GGUF may hold
//! (K-quants and friends) belong beside these, sharing this type table.

use half::f16;

/// ggml type numbers as stored in GGUF tensor infos (the GEMV `a` operand).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GgmlType {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2K = 10,
    Q3K = 11,
    Q4K = 12,
    Q5K = 13,
    Q6K = 14,
    Q8K = 15,
    Iq2Xxs = 16,
    Iq2Xs = 17,
    Iq3Xxs = 18,
    Iq1S = 19,
    Iq4Nl = 20,
    Iq3S = 21,
    Iq2S = 22,
    Iq4Xs = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    Iq1M = 29,
    Bf16 = 30,
    Tq1_0 = 34,
    Tq2_0 = 35,
    Mxfp4 = 39,
}

use GgmlType::*;

const TABLE: [(GgmlType, &str, usize, usize); 32] = [
    // (type, name, elements per block, bytes per block)
    (F32, "F32", 1, 4),
    (F16, "F16", 1, 2),
    (Q4_0, "Q4_0", 32, 18),
    (Q4_1, "Q4_1", 32, 20),
    (Q5_0, "Q5_0", 32, 22),
    (Q5_1, "Q5_1", 32, 24),
    (Q8_0, "Q8_0", 32, 34),
    (Q8_1, "Q8_1", 32, 36),
    (Q2K, "Q2_K", 256, 84),
    (Q3K, "Q3_K", 256, 110),
    (Q4K, "Q4_K", 256, 144),
    (Q5K, "Q5_K", 256, 176),
    (Q6K, "Q6_K", 256, 210),
    (Q8K, "Q8_K", 256, 292),
    (Iq2Xxs, "IQ2_XXS", 256, 66),
    (Iq2Xs, "IQ2_XS", 256, 74),
    (Iq3Xxs, "IQ3_XXS", 256, 98),
    (Iq1S, "IQ1_S", 256, 50),
    (Iq4Nl, "IQ4_NL", 32, 18),
    (Iq3S, "IQ3_S", 256, 110),
    (Iq2S, "IQ2_S", 256, 82),
    (Iq4Xs, "IQ4_XS", 256, 136),
    (I8, "I8", 1, 1),
    (I16, "I16", 1, 2),
    (I32, "I32", 1, 4),
    (I64, "I64", 1, 8),
    (F64, "F64", 1, 8),
    (Iq1M, "IQ1_M", 256, 56),
    (Bf16, "BF16", 1, 2),
    (Tq1_0, "TQ1_0", 256, 54),
    (Tq2_0, "TQ2_0", 256, 66),
    (Mxfp4, "MXFP4", 32, 17),
];

impl GgmlType {
    pub fn from_u32(v: u32) -> Option<GgmlType> {
        TABLE.iter().find(|e| e.0 as u32 == v).map(|e| e.0)
    }
    fn entry(self) -> &'static (GgmlType, &'static str, usize, usize) {
        TABLE.iter().find(|e| e.0 == self).unwrap()
    }
    pub fn name(self) -> &'static str {
        self.entry().1
    }
    pub fn from_name(s: &str) -> Option<GgmlType> {
        TABLE
            .iter()
            .find(|e| e.1.eq_ignore_ascii_case(s))
            .map(|e| e.0)
    }
    /// Elements per block.
    pub fn block_len(self) -> usize {
        self.entry().2
    }
    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        self.entry().3
    }
    /// Bytes of one row of `cols` elements (cols must be a multiple of the block).
    pub fn row_bytes(self, cols: usize) -> usize {
        cols / self.block_len() * self.block_bytes()
    }
    /// Bits per weight.
    pub fn bits_per_weight(self) -> f64 {
        self.block_bytes() as f64 * 8.0 / self.block_len() as f64
    }
    /// SSNAIL executes this format natively.
    pub fn is_native(self) -> bool {
        matches!(self, F32 | F16 | Bf16 | Q8_0 | Q4_0)
    }
    /// A float type (never "lossy" as a source, §4.3).
    pub fn is_float(self) -> bool {
        matches!(self, F32 | F16 | Bf16 | F64)
    }
}

/// F16 → f32 (exact).
#[inline]
pub fn f16_to_f32(bits: u16) -> f32 {
    f16::from_bits(bits).to_f32()
}

/// f32 → F16, round to nearest even (overflow → ±inf), as ggml.
#[inline]
pub fn f32_to_f16(v: f32) -> u16 {
    f16::from_f32(v).to_bits()
}

/// BF16 → f32 (exact).
#[inline]
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// f32 → BF16 as llama.cpp's `ggml_compute_fp32_to_bf16`: round to nearest
/// even on the upper half, NaN kept and forced quiet. (Written out rather than
/// taken from `half` because ggml's NaN rule is part of the byte contract.)
#[inline]
pub fn f32_to_bf16(v: f32) -> u16 {
    let u = v.to_bits();
    if (u & 0x7fff_ffff) > 0x7f80_0000 {
        return ((u >> 16) | 64) as u16;
    }
    ((u + (0x7fff + ((u >> 16) & 1))) >> 16) as u16
}

/// Dequantise `out.len()` elements of a native format from `src`.
/// Returns false for a non-native type (see the converter for the others).
pub fn dequantize_native(t: GgmlType, src: &[u8], out: &mut [f32]) -> bool {
    let n = out.len();
    match t {
        F32 => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = f32::from_le_bytes(src[4 * i..4 * i + 4].try_into().unwrap());
            }
        }
        F16 => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = f16_to_f32(u16::from_le_bytes([src[2 * i], src[2 * i + 1]]));
            }
        }
        Bf16 => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = bf16_to_f32(u16::from_le_bytes([src[2 * i], src[2 * i + 1]]));
            }
        }
        Q8_0 => {
            for b in 0..n / 32 {
                let blk = &src[34 * b..34 * b + 34];
                let d = f16_to_f32(u16::from_le_bytes([blk[0], blk[1]]));
                for j in 0..32 {
                    out[32 * b + j] = d * (blk[2 + j] as i8) as f32;
                }
            }
        }
        Q4_0 => {
            for b in 0..n / 32 {
                let blk = &src[18 * b..18 * b + 18];
                let d = f16_to_f32(u16::from_le_bytes([blk[0], blk[1]]));
                for j in 0..16 {
                    let q = blk[2 + j];
                    out[32 * b + j] = d * ((q & 15) as i32 - 8) as f32;
                    out[32 * b + j + 16] = d * ((q >> 4) as i32 - 8) as f32;
                }
            }
        }
        _ => return false,
    }
    true
}

/// Quantise one 32-element block to Q8_0 exactly as llama.cpp's
/// `quantize_row_q8_0_ref`: returns (F16 scale bits, q).
pub fn quantize_block_q8_0(x: &[f32]) -> (u16, [i8; 32]) {
    let amax = x[..32].iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut q = [0i8; 32];
    for j in 0..32 {
        // C roundf: half away from zero, computed exactly on the single product.
        q[j] = (x[j] * id).round() as i8;
    }
    (f32_to_f16(d), q)
}

/// Quantise a row (length a multiple of 32) of one native format into bytes,
/// the same bytes llama.cpp's reference quantisers write.
pub fn quantize_native(t: GgmlType, x: &[f32], out: &mut Vec<u8>) {
    match t {
        F32 => x
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        F16 => x
            .iter()
            .for_each(|v| out.extend_from_slice(&f32_to_f16(*v).to_le_bytes())),
        Bf16 => x
            .iter()
            .for_each(|v| out.extend_from_slice(&f32_to_bf16(*v).to_le_bytes())),
        Q8_0 => {
            for blk in x.chunks_exact(32) {
                let (d, q) = quantize_block_q8_0(blk);
                out.extend_from_slice(&d.to_le_bytes());
                out.extend(q.iter().map(|v| *v as u8));
            }
        }
        Q4_0 => {
            for blk in x.chunks_exact(32) {
                // llama.cpp quantize_row_q4_0_ref: scale from the element of
                // largest magnitude, sign kept, so that it maps to -8.
                let (mut amax, mut max) = (0.0f32, 0.0f32);
                for &v in blk {
                    if amax < v.abs() {
                        amax = v.abs();
                        max = v;
                    }
                }
                let d = max / -8.0;
                let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
                for j in 0..16 {
                    // (int8_t)(x + 8.5f) truncates toward zero.
                    let q0 = ((blk[j] * id + 8.5) as i8).min(15) as u8;
                    let q1 = ((blk[j + 16] * id + 8.5) as i8).min(15) as u8;
                    out.push(q0 | (q1 << 4));
                }
            }
        }
        _ => panic!("quantize_native: {} is not a native format", t.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_sizes() {
        assert_eq!(Q8_0.row_bytes(96), 102);
        assert_eq!(Q4_0.bits_per_weight(), 4.5);
        assert_eq!(GgmlType::from_u32(30), Some(Bf16));
        assert_eq!(GgmlType::from_name("q4_k"), Some(Q4K));
        assert_eq!(GgmlType::from_u32(4), None);
    }

    #[test]
    fn q8_0_edges() {
        // All-zero block: scale 0, all q 0.
        let (d, q) = quantize_block_q8_0(&[0.0; 32]);
        assert_eq!((d, q), (0, [0; 32]));
        // 127 and 0.49999997: d = 1, so q = roundf(0.49999997) = 0, not 1.
        let mut x = [0.0f32; 32];
        x[0] = 127.0;
        x[1] = 0.49999997;
        x[2] = 0.5;
        x[3] = -0.5;
        let (d, q) = quantize_block_q8_0(&x);
        assert_eq!(f16_to_f32(d), 1.0);
        assert_eq!(&q[..4], &[127, 0, 1, -1]);
    }

    #[test]
    fn bf16_rounding() {
        assert_eq!(f32_to_bf16(1.0), 0x3F80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F80_8000)), 0x3F80); // tie → even
        assert_eq!(f32_to_bf16(f32::from_bits(0x3F81_8000)), 0x3F82);
        assert_eq!(f32_to_bf16(f32::from_bits(0x7F80_0001)) & 0x40, 0x40);
    }
}

//! A plain Q4_K encoder for test models, so that K-quant sources can be
//! tested. It is not llama.cpp's optimising quantiser (which searches for
//! the best scales): any well-formed block is a valid Q4_K tensor, and
//! tests compare against its dequantised values, not against llama.cpp's
//! bytes.

use ssnail_format::ggml::{f16_to_f32, f32_to_f16};

/// Append the Q4_K encoding of `x` (length a multiple of 256).
pub fn quantize_q4_k(x: &[f32], out: &mut Vec<u8>) {
    for blk in x.chunks_exact(256) {
        let mut scale = [0f32; 8];
        let mut minus_min = [0f32; 8];
        for j in 0..8 {
            let s = &blk[32 * j..32 * j + 32];
            let lo = s.iter().fold(0f32, |m, v| m.min(*v));
            let hi = s.iter().fold(f32::MIN, |m, v| m.max(*v));
            scale[j] = (hi - lo) / 15.0;
            minus_min[j] = -lo;
        }
        let d = f16_to_f32(f32_to_f16(scale.iter().fold(0f32, |m, v| m.max(*v)) / 63.0));
        let dmin = f16_to_f32(f32_to_f16(
            minus_min.iter().fold(0f32, |m, v| m.max(*v)) / 63.0,
        ));
        let q6 = |v: f32, unit: f32| {
            if unit > 0.0 {
                (v / unit).round().clamp(0.0, 63.0) as u8
            } else {
                0
            }
        };
        let ls: Vec<u8> = scale.iter().map(|s| q6(*s, d)).collect();
        let lm: Vec<u8> = minus_min.iter().map(|m| q6(*m, dmin)).collect();
        out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
        out.extend_from_slice(&f32_to_f16(dmin).to_le_bytes());
        let mut packed = [0u8; 12];
        for j in 0..4 {
            packed[j] = ls[j] | ((ls[j + 4] >> 4) << 6);
            packed[j + 4] = lm[j] | ((lm[j + 4] >> 4) << 6);
            packed[j + 8] = (ls[j + 4] & 15) | ((lm[j + 4] & 15) << 4);
        }
        out.extend_from_slice(&packed);
        let mut q = [0u8; 256];
        for j in 0..8 {
            let step = d * ls[j] as f32;
            let offset = dmin * lm[j] as f32;
            for l in 0..32 {
                let v = blk[32 * j + l] + offset;
                q[32 * j + l] = if step > 0.0 {
                    (v / step).round().clamp(0.0, 15.0) as u8
                } else {
                    0
                };
            }
        }
        for p in 0..4 {
            for l in 0..32 {
                out.push(q[64 * p + l] | (q[64 * p + 32 + l] << 4));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use ssnail_format::dequant::dequantize;
    use ssnail_format::ggml::GgmlType;

    #[test]
    fn round_trips_within_a_step() {
        let mut r = Rng::new(3);
        let x: Vec<f32> = (0..512).map(|_| r.normal() as f32).collect();
        let mut b = Vec::new();
        quantize_q4_k(&x, &mut b);
        assert_eq!(b.len(), 2 * 144);
        let mut y = vec![0f32; 512];
        assert!(dequantize(GgmlType::Q4K, &b, &mut y));
        let err = x
            .iter()
            .zip(&y)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(err < 0.35, "max error {err}");
    }
}

//! The native quantisers of ssnail-format against the bytes gguf-py's
//! `gguf.quants.quantize` writes (it follows llama.cpp's reference
//! `quantize_row_q8_0_ref` / `quantize_row_q4_0_ref` and
//! `ggml_compute_fp32_to_bf16`); golden hex made once with gguf-py 0.3.36.

use ssnail_format::ggml::{quantize_native, GgmlType};

fn q(t: GgmlType, x: &[f32]) -> String {
    let mut out = Vec::new();
    quantize_native(t, x, &mut out);
    out.iter().map(|b| format!("{b:02x}")).collect()
}

fn pad32(v: &[f32]) -> Vec<f32> {
    let mut x = v.to_vec();
    x.resize(32, 0.0);
    x
}

#[test]
fn q8_0_matches_llama_cpp() {
    // All zero: scale 0, every q 0.
    assert_eq!(q(GgmlType::Q8_0, &[0.0; 32]), "0".repeat(68));
    // Exact halves 0, 0.5, … 15.5.
    let halves: Vec<f32> = (0..32).map(|i| i as f32 * 0.5).collect();
    assert_eq!(
        q(GgmlType::Q8_0, &halves),
        "d02f0004080c1014191d2125292d3135393d42464a4e52565a5e62666b6f73777b7f"
    );
    // 127 sets d = 1; roundf(0.49999997) = 0 (not 1), ±0.5 round away from zero.
    assert_eq!(
        q(GgmlType::Q8_0, &pad32(&[127.0, 0.49999997, 0.5, -0.5])),
        format!("003c7f0001ff{}", "0".repeat(56))
    );
}

#[test]
fn q4_0_matches_llama_cpp() {
    // All zero: d = 0/-8 = -0.0 (F16 $8000), every nibble 8.
    assert_eq!(
        q(GgmlType::Q4_0, &[0.0; 32]),
        format!("0080{}", "8".repeat(32))
    );
    let halves: Vec<f32> = (0..32).map(|i| i as f32 * 0.5).collect();
    assert_eq!(
        q(GgmlType::Q4_0, &halves),
        "c0bf48483737373726262626151515150404"
    );
    // Largest magnitude negative: d = 1, nibbles 0..15 with the top clamped at 15.
    let mut neg: Vec<f32> = vec![-8.0];
    neg.extend((1..16).map(|i| i as f32 - 8.0));
    neg.extend([7.9, 8.0, -7.5, 3.3]);
    assert_eq!(
        q(GgmlType::Q4_0, &pad32(&neg)),
        "003cf0f112b38485868788898a8b8c8d8e8f"
    );
    // Largest magnitude positive: d = -1, so +8 → 0 and -8 → 16, clamped to 15.
    let mut pos = vec![8.0f32];
    pos.extend([0.0; 15]);
    pos.extend([-8.0, -7.99, 7.99, 4.5, -4.5, 0.49]);
    pos.extend([1e-3; 10]);
    assert_eq!(
        q(GgmlType::Q4_0, &pos),
        "00bcf0f80848d88888888888888888888888"
    );
}

#[test]
fn f16_and_bf16_match_llama_cpp() {
    assert_eq!(
        q(
            GgmlType::Bf16,
            &[
                1.0,
                f32::from_bits(0x3F80_8000), // 1 + 2^-8: a tie, to even
                f32::from_bits(0x3F81_8000), // 1 + 3·2^-8: a tie, to even
                -3.0e38,
                1e-40,
                f32::INFINITY
            ]
        ),
        "803f803f823f62ff0100807f"
    );
    assert_eq!(
        q(
            GgmlType::F16,
            &[1.0, 65504.0, 70000.0, 1e-8, -0.1, 0.333333]
        ),
        "003cff7b007c000066ae5535"
    );
}

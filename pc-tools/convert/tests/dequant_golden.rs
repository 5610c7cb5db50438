//! The non-native dequantisers against gguf-py (`gguf.quants.dequantize`,
//! which follows llama.cpp's reference layouts) on random blocks; the
//! golden file was made once with gguf-py 0.3.36's copy of llama.cpp.
//! (Hand-derived single-field checks are in ssnail-format's dequant.rs.)

use ssnail_format::dequant::dequantize;
use ssnail_format::ggml::GgmlType;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn k_quants_and_legacy_quants_match_gguf_py() {
    let text = include_str!("data/dequant_golden.txt");
    let mut seen = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut f = line.split(' ');
        let (name, block, want) = (
            f.next().unwrap(),
            hex(f.next().unwrap()),
            hex(f.next().unwrap()),
        );
        let t = GgmlType::from_name(name).unwrap();
        let mut y = vec![0f32; t.block_len()];
        assert!(dequantize(t, &block, &mut y), "{name} readable");
        let want: Vec<f32> = want
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        for (i, (a, b)) in y.iter().zip(&want).enumerate() {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{name} element {i}: {a} vs gguf-py {b}"
            );
        }
        seen.push(name.to_string());
    }
    for t in [
        "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
    ] {
        assert!(seen.iter().any(|s| s == t), "{t} covered");
    }
}

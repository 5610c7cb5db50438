//! The MEGA65 program's embedding cosine (mega65/src/cosine.c, integers only) built for the PC
//! (mega65/host/coshost.c) against the exact cosine of the same float32 vectors: within 0.005 for
//! real all-MiniLM-L6-v2 sentence embeddings (the test-data cache) and for adversarial vectors
//! (one huge component, exponents spread over 2^±40, tiny and subnormal values, alternating
//! signs, zero vectors, 960 dimensions). The 10-bit version before it was off by up to 0.014.

use ssnail_mega65_program as common;

use ssnail_gguf::Gguf;
use ssnail_hub::import::{import, OutType};
use ssnail_testkit::reference::{self, RefOpts};
use ssnail_tokenizer::{GgufTokenizer, Vocab};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The bound the program's documentation states (three printed decimals included).
const BOUND: f64 = 0.005;

/// coshost (mega65/src/cosine.c with a PC driver), made by build.mk into `dir`.
fn build_coshost(dir: &Path) -> PathBuf {
    common::make_for_test(dir, "mega65-coshost", "", "coshost")
}

/// The MEGA65's round(1000 x cosine) for each pair.
fn mega65_cosines(pairs: &[(Vec<f32>, Vec<f32>)]) -> Vec<i32> {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_coshost(dir.path());
    let mut input = String::new();
    for (a, b) in pairs {
        input.push_str(&a.len().to_string());
        for x in a.iter().chain(b) {
            input.push_str(&format!(" {:x}", x.to_bits()));
        }
        input.push('\n');
    }
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn exact_cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum();
    let na: f64 = a.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// Largest |MEGA65 - exact| over the pairs (zero vectors must give 0).
fn worst_error(pairs: &[(Vec<f32>, Vec<f32>)]) -> f64 {
    let got = mega65_cosines(pairs);
    assert_eq!(got.len(), pairs.len());
    pairs
        .iter()
        .zip(&got)
        .map(|((a, b), &g)| {
            let want = exact_cosine(a, b);
            let e = (g as f64 / 1000.0 - want).abs();
            assert!(e <= BOUND, "MEGA65 {g} vs {want:.5} (n = {})", a.len());
            e
        })
        .fold(0.0, f64::max)
}

/// xorshift64*: deterministic test vectors without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn the_cosine_is_within_0_005_on_adversarial_vectors() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut pairs = Vec::new();
    for case in 0..1200 {
        let n = [3, 16, 384, 768, 960][case % 5];
        let kind = case / 5 % 8;
        let vector = |r: &mut Rng| -> Vec<f32> {
            let mut v: Vec<f64> = (0..n).map(|_| r.unit()).collect();
            match kind {
                // one outlier far above small components (the old 10-bit version's weak spot)
                0 => {
                    v.iter_mut().for_each(|x| *x *= 0.03);
                    let i = r.below(n);
                    v[i] = 5.0 + 25.0 * r.unit().abs();
                }
                // magnitudes spread over 2^-40 .. 2^40
                1 => v
                    .iter_mut()
                    .for_each(|x| *x *= 2f64.powi((r.unit() * 40.0) as i32)),
                // tiny values, some subnormal
                2 => v.iter_mut().for_each(|x| *x *= 1e-39),
                // alternating signs of nearly equal size
                3 => v.iter_mut().enumerate().for_each(|(i, x)| {
                    *x = (1.0 + 0.05 * *x) * if i % 2 == 0 { 1.0 } else { -1.0 }
                }),
                // a few large components among noise
                4 => {
                    v.iter_mut().for_each(|x| *x *= 1e-3);
                    for _ in 0..3 {
                        let i = r.below(n);
                        v[i] = 4.0 * r.unit();
                    }
                }
                // huge values near the top of float32
                5 => v.iter_mut().for_each(|x| *x *= 1e37),
                // all zero but one
                6 => {
                    let i = r.below(n);
                    v.iter_mut()
                        .enumerate()
                        .for_each(|(j, x)| *x = if i == j { *x + 1.5 } else { 0.0 });
                }
                _ => {}
            }
            v.into_iter().map(|x| x as f32).collect()
        };
        let a = vector(&mut r);
        // Half the pairs are near each other (cosines near 1, where rounding shows most).
        let b = if case % 2 == 0 {
            a.iter()
                .map(|&x| x * (1.0 + 0.05 * r.unit() as f32))
                .collect()
        } else {
            vector(&mut r)
        };
        pairs.push((a, b));
    }
    pairs.push((vec![0.0; 8], vec![1.0; 8]));
    let worst = worst_error(&pairs);
    eprintln!(
        "adversarial: {} pairs, largest error {worst:.5}",
        pairs.len()
    );
}

/// Real sentence embeddings: all-MiniLM-L6-v2 (test-data cache) imported to GGUF and run by the
/// f64 reference BERT (as `ssnail chat` would embed them), cast to float32 as SSNAIL writes them.
#[test]
fn the_cosine_is_within_0_005_on_real_minilm_embeddings() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("minilm.gguf");
    import(
        &ssnail_testkit::cache::minilm(),
        &gguf,
        OutType::F32,
        Some("all-MiniLM-L6-v2"),
    )
    .unwrap();
    let g = Gguf::open(&gguf).unwrap();
    let tok = GgufTokenizer::new(Vocab::from_gguf(&g).unwrap()).unwrap();
    let sentences = [
        "A man is playing a guitar.",
        "Someone plays the guitar.",
        "The weather is lovely today.",
        "It is sunny and warm outside.",
        "The cat sat on the mat.",
        "A dog is running in the park.",
        "I love programming in C on old computers.",
        "The MEGA65 is an 8-bit computer.",
        "Stock markets fell sharply on Monday.",
        "She is reading a book in the library.",
        "the the the the",
        "42",
    ];
    let embeddings: Vec<Vec<f32>> = sentences
        .iter()
        .map(|s| {
            let t = tok.encode(s, true);
            reference::bert_embedding(&g, &t, RefOpts::default())
                .unwrap()
                .into_iter()
                .map(|x| x as f32)
                .collect()
        })
        .collect();
    assert_eq!(embeddings[0].len(), 384);
    let mut pairs = Vec::new();
    for i in 0..embeddings.len() {
        for j in 0..i {
            pairs.push((embeddings[i].clone(), embeddings[j].clone()));
        }
    }
    let worst = worst_error(&pairs);
    eprintln!("MiniLM: {} pairs, largest error {worst:.5}", pairs.len());
}

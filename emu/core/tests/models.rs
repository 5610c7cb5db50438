//! Whole models on the core emulator, against the independent f64 references
//! of ssnail-testkit (spec §10.1, §10.2, §10.5): GGUF → converter → image
//! loaded through the load port → script → logits at every position.

use ssnail_convert::{Options, Policy};
use ssnail_core::{Generation, Host, LoadError, Machine, Numerics, Ssnail};
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{rt, BASE, PAYLOAD_BASE};
use ssnail_gguf::Gguf;
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_testkit::reference::{self, argmax, rel_error, RefOpts};
use ssnail_tokenizer::ImageTokenizer;

struct Built {
    _dir: tempfile::TempDir,
    gguf: Gguf,
    image: Vec<u8>,
}

fn build(opts: &ModelOpts, conv: &Options) -> Built {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    models::write(&path, &models::build(opts));
    let gguf = Gguf::open(&path).unwrap();
    let image = ssnail_convert::convert(&gguf, conv).unwrap().image;
    Built {
        _dir: dir,
        gguf,
        image,
    }
}

/// The images here run the full pass at every position (`--all-logits`), so that the
/// logits of every prompt position are compared too (tests/prompt_positions.rs checks the
/// default images against these).
fn conv(ctx: u32, kv_f16: bool) -> Options {
    Options {
        ctx: Some(ctx),
        kv_f16,
        all_logits: true,
        ..Default::default()
    }
}

/// Records the logits at every ARGMAX; optionally steers generation.
#[derive(Default)]
struct Capture {
    logits: Vec<Vec<f32>>,
    /// Never pick this id (e.g. EOS) — to test context-full without early EOS.
    avoid: Option<u32>,
    /// Pick this id at every generated position.
    force: Option<u32>,
    /// Set stop_request at the first SYNC.
    stop_at_sync: bool,
}

impl Host for Capture {
    fn on_sync(&mut self, m: &mut Machine) {
        if self.stop_at_sync {
            m.poke_u32((BASE + rt::STOP_REQUEST) as u64, 1);
        }
    }
    fn on_argmax(&mut self, logits: &[f32], _m: &Machine) -> Option<u32> {
        self.logits.push(logits.to_vec());
        if let Some(f) = self.force {
            return Some(f);
        }
        let avoid = self.avoid?;
        let mut best = if avoid == 0 { 1 } else { 0 };
        for (i, &v) in logits.iter().enumerate() {
            if i as u32 != avoid && v > logits[best] {
                best = i;
            }
        }
        Some(best as u32)
    }
}

fn load(image: &[u8]) -> Ssnail {
    let (dev, rep) = Ssnail::load_bytes(image, None).unwrap();
    assert!(rep.sectors > 0);
    dev
}

fn prompt(dev: &Ssnail, text: &str) -> Vec<u32> {
    ImageTokenizer::new(dev.machine.mem())
        .unwrap()
        .encode(text, true)
}

/// Run a decoder; returns prompt ids, the generation and the captured logits.
fn decode(
    image: &[u8],
    text: &str,
    n: u32,
    mode: Numerics,
) -> (Vec<u32>, Generation, Vec<Vec<f32>>) {
    let mut dev = load(image);
    dev.machine.numerics = mode;
    let p = prompt(&dev, text);
    let mut cap = Capture::default();
    let g = dev.generate(&p, n, &mut cap).unwrap();
    (p, g, cap.logits)
}

/// Emulator (float mode) vs reference: logits at every position and greedy tokens.
fn check_decoder(b: &Built, text: &str, n: u32, tol: f64, what: &str) {
    let (p, g, logits) = decode(&b.image, text, n, Numerics::Float);
    let all: Vec<u32> = p.iter().chain(&g.tokens).copied().collect();
    assert!(!logits.is_empty());
    let want =
        reference::decoder_logits(&b.gguf, &all[..logits.len()], RefOpts::default()).unwrap();
    let flat: Vec<f32> = logits.concat();
    let ref_flat: Vec<f64> = want.concat();
    let err = rel_error(&flat, &ref_flat);
    assert!(err <= tol, "{what}: relative error {err:e} > {tol:e}");
    for (i, &t) in g.tokens.iter().enumerate() {
        let at = p.len() - 1 + i;
        if at < want.len() {
            assert_eq!(t as usize, argmax(&want[at]), "{what}: generated token {i}");
        }
    }
    eprintln!(
        "{what}: rel error {err:.2e}, {} tokens, stop reason {}",
        g.tokens.len(),
        g.stop_reason
    );
}

const WEIGHT_TYPES: [GgmlType; 5] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::Bf16,
    GgmlType::Q8_0,
    GgmlType::Q4_0,
];

#[test]
fn llama_matches_reference_all_formats_both_kv_caches() {
    for t in WEIGHT_TYPES {
        for (kv_f16, tol) in [(false, 1e-5), (true, 2e-3)] {
            let b = build(&ModelOpts::llama().with_wtype(t), &conv(64, kv_f16));
            check_decoder(
                &b,
                "once upon a time the cat",
                12,
                tol,
                &format!("llama {} kv_f16={kv_f16}", t.name()),
            );
        }
    }
    // Tied classifier.
    let b = build(
        &ModelOpts::llama()
            .with_wtype(GgmlType::Q8_0)
            .with_tied(true),
        &conv(64, true),
    );
    check_decoder(&b, "once upon a time the cat", 12, 2e-3, "llama Q8_0 tied");
}

#[test]
fn gpt2_matches_reference() {
    for (t, tied) in [
        (GgmlType::F32, true),
        (GgmlType::Q8_0, false),
        (GgmlType::Q4_0, true),
        (GgmlType::F16, false),
        (GgmlType::Bf16, true),
    ] {
        for (kv_f16, tol) in [(false, 1e-5), (true, 2e-3)] {
            let b = build(
                &ModelOpts::gpt2().with_wtype(t).with_tied(tied),
                &conv(48, kv_f16),
            );
            check_decoder(
                &b,
                "once upon a time the cat",
                10,
                tol,
                &format!("gpt2 {} tied={tied} kv_f16={kv_f16}", t.name()),
            );
        }
    }
}

fn encode(image: &[u8], text: &str, mode: Numerics) -> (Vec<u32>, Vec<f32>) {
    let mut dev = load(image);
    dev.machine.numerics = mode;
    let toks = prompt(&dev, text);
    let e = dev.encode(&toks, &mut Capture::default()).unwrap();
    assert_eq!(e.stop_reason, 1);
    (toks, e.output)
}

#[test]
fn bert_matches_reference() {
    let text = "Throw the lamp at the troll, playing cats.";
    for (t, pooling) in [
        (GgmlType::F32, 1),
        (GgmlType::Q8_0, 2),
        (GgmlType::F16, 1),
        (GgmlType::Q4_0, 2),
        (GgmlType::Bf16, 1),
    ] {
        for (kv_f16, tol) in [(false, 1e-5), (true, 2e-3)] {
            let b = build(
                &ModelOpts::bert().with_wtype(t).with_pooling(pooling),
                &conv(32, kv_f16),
            );
            let (toks, out) = encode(&b.image, text, Numerics::Float);
            assert_eq!(toks.len(), 14, "[CLS] … [SEP]");
            let want = reference::bert_embedding(&b.gguf, &toks, RefOpts::default()).unwrap();
            assert_eq!(out.len(), want.len());
            let err = rel_error(&out, &want);
            assert!(
                err <= tol,
                "bert {} pooling {pooling} kv_f16={kv_f16}: {err:e}",
                t.name()
            );
        }
    }
}

/// The reference fails a broken emulator: corrupt one weight byte and the gate trips.
#[test]
fn gate_fails_on_a_corrupted_weight() {
    let b = build(
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        &conv(32, false),
    );
    let mut dev = load(&b.image);
    let h = dev.header();
    // 64 bytes in the middle of the payload (weights, 2 layers of matrices).
    let mid = ((h.data as u64 + h.scratch as u64) / 2 - BASE as u64) as usize;
    for b in &mut dev.machine.mem_mut()[mid..mid + 64] {
        *b ^= 0x55;
    }
    let p = prompt(&dev, "the cat");
    let mut cap = Capture::default();
    let g = dev.generate(&p, 2, &mut cap).unwrap();
    let all: Vec<u32> = p.iter().chain(&g.tokens).copied().collect();
    let want =
        reference::decoder_logits(&b.gguf, &all[..cap.logits.len()], RefOpts::default()).unwrap();
    let err = rel_error(&cap.logits.concat(), &want.concat());
    assert!(
        err.is_nan() || err > 1e-5,
        "corrupted weights must be detected (error {err:e})"
    );
}

fn hw_vs_float(image: &[u8], text: &str) -> (f64, f64) {
    let (_, _, f) = decode(image, text, 1, Numerics::Float);
    let (_, _, h) = decode(image, text, 1, Numerics::Hardware);
    assert_eq!(f.len(), h.len());
    let mut worst = 0f64;
    let mut agree = 0;
    for (a, b) in h.iter().zip(&f) {
        let b64: Vec<f64> = b.iter().map(|&v| v as f64).collect();
        worst = worst.max(rel_error(a, &b64));
        let am = |v: &[f32]| ssnail_core::vector::argmax(v);
        agree += (am(a) == am(b)) as usize;
    }
    (worst, agree as f64 / f.len() as f64)
}

#[test]
fn hardware_numerics_close_to_float() {
    let text = "once upon a time the happy dog sat on the mat";
    for t in [GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::F16] {
        let b = build(&ModelOpts::llama().with_wtype(t), &conv(32, true));
        let (err, agree) = hw_vs_float(&b.image, text);
        eprintln!(
            "hw vs float llama {}: rel {err:.3e}, argmax agreement {agree:.2}",
            t.name()
        );
        assert!(
            err < 0.05 && agree >= 0.9,
            "llama {}: {err} {agree}",
            t.name()
        );
    }
    let b = build(
        &ModelOpts::gpt2().with_wtype(GgmlType::Q8_0),
        &conv(32, true),
    );
    let (err, agree) = hw_vs_float(&b.image, text);
    eprintln!("hw vs float gpt2 Q8_0: rel {err:.3e}, argmax agreement {agree:.2}");
    assert!(err < 0.05 && agree >= 0.9);
    let b = build(
        &ModelOpts::bert().with_wtype(GgmlType::Q8_0),
        &conv(32, true),
    );
    let (_, f) = encode(&b.image, "throw the lamp at the troll", Numerics::Float);
    let (_, h) = encode(&b.image, "throw the lamp at the troll", Numerics::Hardware);
    let dot: f64 = f.iter().zip(&h).map(|(a, b)| *a as f64 * *b as f64).sum();
    let n = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    let cos = dot / (n(&f) * n(&h));
    eprintln!("hw vs float bert Q8_0: cosine {cos:.6}");
    assert!(cos > 0.999, "{cos}");
    assert_ne!(f, h, "the modes must really differ");
}

#[test]
fn stop_reasons_context_full_and_continuation() {
    let b = build(
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        &conv(16, true),
    );
    let eos = 2;
    let mut dev = load(&b.image);
    let p = prompt(&dev, "the cat sat");
    assert_eq!(p.len(), 4, "<s> ▁the ▁cat ▁sat");
    // Context full: ctx 16, 4-token prompt, n = 100 → reason 3, 17 tokens in the buffer.
    let mut cap = Capture {
        avoid: Some(eos),
        ..Default::default()
    };
    let g = dev.generate(&p, 100, &mut cap).unwrap();
    assert_eq!(g.stop_reason, 3);
    assert_eq!(p.len() + g.tokens.len(), 17);
    assert_eq!(cap.logits.len(), 16, "positions 0..15 processed");
    // n = 0: no tokens, reason 1, pos unchanged.
    let g = dev.generate(&p, 0, &mut Capture::default()).unwrap();
    assert_eq!((g.tokens.len(), g.stop_reason, g.runtime.pos), (0, 1, 0));
    // Count reached.
    let g = dev
        .generate(
            &p,
            3,
            &mut Capture {
                avoid: Some(eos),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!((g.tokens.len(), g.stop_reason), (3, 1));
    // EOS.
    let g = dev
        .generate(
            &p,
            10,
            &mut Capture {
                force: Some(eos),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!((g.tokens.clone(), g.stop_reason), (vec![eos], 2));
    // Stop requested at the first SYNC.
    let g = dev
        .generate(
            &p,
            10,
            &mut Capture {
                avoid: Some(eos),
                stop_at_sync: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!((g.tokens.len(), g.stop_reason), (1, 4));
    // Continuation: 3 + (empty continuation) 3 = one run of 6, greedy.
    let mut one = load(&b.image);
    let whole = one
        .generate(
            &p,
            6,
            &mut Capture {
                avoid: Some(eos),
                ..Default::default()
            },
        )
        .unwrap();
    let mut two = load(&b.image);
    let a = two
        .generate(
            &p,
            3,
            &mut Capture {
                avoid: Some(eos),
                ..Default::default()
            },
        )
        .unwrap();
    let c = two
        .continue_generation(
            &[],
            3,
            &mut Capture {
                avoid: Some(eos),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!([a.tokens, c.tokens].concat(), whole.tokens);
    // Continuation with appended tokens equals a fresh run of the whole sequence.
    let mut three = load(&b.image);
    let a = three
        .generate(
            &p,
            2,
            &mut Capture {
                avoid: Some(eos),
                ..Default::default()
            },
        )
        .unwrap();
    let extra = prompt(&three, "the mat");
    let extra = &extra[1..]; // no BOS inside the text
    let c = three
        .continue_generation(
            extra,
            2,
            &mut Capture {
                avoid: Some(eos),
                ..Default::default()
            },
        )
        .unwrap();
    let mut four = load(&b.image);
    let seq: Vec<u32> = p.iter().chain(&a.tokens).chain(extra).copied().collect();
    let fresh = four
        .generate(
            &seq,
            2,
            &mut Capture {
                avoid: Some(eos),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(c.tokens, fresh.tokens);
}

#[test]
fn layouts_and_load_port() {
    for arch in ["gpt2", "bert"] {
        let opts = if arch == "gpt2" {
            ModelOpts::gpt2()
        } else {
            ModelOpts::bert()
        }
        .with_wtype(GgmlType::Q8_0);
        let mut results: Vec<Vec<u8>> = Vec::new();
        let mut lens = Vec::new();
        for (mem_mb, boundary) in [
            (8.0, None),
            (64.0, None),
            (72.0, None),
            (72.0, Some(0x800_E001)),
        ] {
            let mut o = conv(32, true);
            o.mem_mb = mem_mb;
            o.policy = Policy::Keep;
            if let Some(bd) = boundary {
                o.boundary = bd;
            }
            let b = build(&opts, &o);
            let (mut dev, rep) = Ssnail::load_bytes(&b.image, None).unwrap();
            assert!(rep.sectors > 0);
            let h = dev.header();
            assert!(h.tokens >= BASE && h.tokens < PAYLOAD_BASE);
            assert_eq!((h.load_base, h.code), (PAYLOAD_BASE, PAYLOAD_BASE));
            let bytes = if arch == "gpt2" {
                let p = prompt(&dev, "once upon a time the cat");
                let g = dev.generate(&p, 8, &mut Capture::default()).unwrap();
                g.tokens.iter().flat_map(|t| t.to_le_bytes()).collect()
            } else {
                let p = prompt(&dev, "throw the lamp at the troll");
                let e = dev.encode(&p, &mut Capture::default()).unwrap();
                e.output.iter().flat_map(|v| v.to_le_bytes()).collect()
            };
            results.push(bytes);
            lens.push(b.image.len());
        }
        assert!(
            results.iter().all(|r| *r == results[0]),
            "{arch}: identical results for every layout"
        );
        assert!(
            lens[3] > lens[2],
            "{arch}: boundary at $800E001 moves a tensor up"
        );
    }
    // An image bigger than memory: the port reports ERROR.
    let b = build(&ModelOpts::llama(), &conv(32, true));
    match Ssnail::load_bytes(&b.image, Some(1 << 20)) {
        Err(LoadError::PortError(_)) => {}
        other => panic!("expected a load-port ERROR, got {:?}", other.map(|_| ())),
    }
}

/// SmolLM2-135M (Q4_1 GGUF from the cache) converted to Q4_0 with --mem-mb 100:
/// the same greedy tokens as the f64 reference on the same Q4_0 weights.
#[test]
fn smollm2_q4_0_matches_reference() {
    let path = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    let g = Gguf::open(&path).unwrap();
    // The default F16 KV cache (≤ 2e-3) and an F32 cache (≤ 1e-5).
    for (kv_f16, tol) in [(true, 2e-3), (false, 1e-5)] {
        let o = Options {
            ctx: Some(32),
            policy: Policy::All(GgmlType::Q4_0),
            mem_mb: 100.0,
            kv_f16,
            all_logits: true,
            ..Default::default()
        };
        let image = ssnail_convert::convert(&g, &o).unwrap().image;
        let mut dev = load(&image);
        let p = prompt(&dev, "Once upon a time");
        let mut cap = Capture::default();
        let gen = dev.generate(&p, 3, &mut cap).unwrap();
        let all: Vec<u32> = p.iter().chain(&gen.tokens).copied().collect();
        let repack = RefOpts {
            repack: Some(GgmlType::Q4_0),
        };
        let want = reference::decoder_logits(&g, &all[..cap.logits.len()], repack).unwrap();
        for (i, &t) in gen.tokens.iter().enumerate() {
            assert_eq!(t as usize, argmax(&want[p.len() - 1 + i]), "token {i}");
        }
        let err = rel_error(&cap.logits.concat(), &want.concat());
        eprintln!(
            "SmolLM2 Q4_0 kv_f16={kv_f16}: tokens {:?}, rel error {err:.2e}",
            gen.tokens
        );
        assert!(err < tol, "{err}");
    }
}

/// Traffic per position is dominated by the weights streamed (§6.4): every
/// layer matrix and the classifier once, plus one embedding row.
#[test]
fn traffic_per_position_is_the_weight_stream() {
    let b = build(
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        &conv(32, true),
    );
    let mut dev = load(&b.image);
    let mut cap = Capture::default();
    dev.generate(&[1, 300, 301, 302], 1, &mut cap).unwrap();
    let positions = cap.logits.len() as u64;
    assert_eq!(positions, 4);
    let weights: u64 = b
        .gguf
        .tensors
        .iter()
        .filter(|t| t.shape.len() == 2 && t.name != "token_embd.weight")
        .map(|t| t.n_bytes)
        .sum();
    let per_pos = dev.machine.traffic.total() / positions;
    assert!(per_pos > weights, "{per_pos} vs {weights}");
    assert!(per_pos < weights + weights / 10, "{per_pos} vs {weights}");
    assert!(dev.machine.traffic.read > dev.machine.traffic.written);
}

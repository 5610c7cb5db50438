//! The decoder scripts at prompt positions (spec §3.7): a position before the last branches
//! past the work that feeds only its thrown-away prediction (the last layer's query, attention,
//! output and FFN, the final norm, the classifier and ARGMAX), and everything a host sees —
//! generated tokens, KV caches, pos and stop reasons — equals what the full pass
//! (`convert --all-logits`) leaves, in both numerics, for llama and gpt2 with several layers.

use ssnail_convert::Options;
use ssnail_core::{runtime, Generation, Host, Machine, Numerics, Ssnail};
use ssnail_format::image::{rt, stop, BASE};
use ssnail_gguf::Gguf;
use ssnail_testkit::models::{self, ModelOpts};

/// The two shapes, with three layers so that "the last layer" is not the only one.
fn shapes() -> [(&'static str, ModelOpts); 2] {
    [
        (
            "llama",
            ModelOpts {
                n_layers: 3,
                ..ModelOpts::llama()
            },
        ),
        (
            "gpt2",
            ModelOpts {
                n_layers: 3,
                ..ModelOpts::gpt2()
            },
        ),
    ]
}

/// The image of `m` without and with the full pass at prompt positions, the bytes of its KV
/// caches (the end of scratch, §1.9) and of the weights that feed only the prediction: the
/// classifier and the last layer's query, output and FFN matrices.
struct Images {
    skip: Vec<u8>,
    full: Vec<u8>,
    kv_bytes: usize,
    tail_weights: u64,
}

fn images(m: &ModelOpts, ctx: u32, kv_f16: bool) -> Images {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    models::write(&path, &models::build(m));
    let g = Gguf::open(&path).unwrap();
    let conv = |all_logits| {
        let o = Options {
            ctx: Some(ctx),
            kv_f16,
            all_logits,
            ..Default::default()
        };
        ssnail_convert::convert(&g, &o).unwrap().image
    };
    let size = |name: &str| g.tensors.iter().find(|t| t.name == name).map(|t| t.n_bytes);
    let last = format!("blk.{}.", m.n_layers - 1);
    let query = size(&format!("{last}attn_q.weight"))
        .or_else(|| size(&format!("{last}attn_qkv.weight")).map(|b| b / 3))
        .unwrap();
    let tail: u64 = ["attn_output", "ffn_gate", "ffn_up", "ffn_down"]
        .iter()
        .filter_map(|t| size(&format!("{last}{t}.weight")))
        .sum();
    let classifier = size("output.weight").or(size("token_embd.weight")).unwrap();
    let kv_dim = m.dim / m.n_heads * m.n_kv_heads;
    let esz: usize = if kv_f16 { 2 } else { 4 };
    Images {
        skip: conv(false),
        full: conv(true),
        kv_bytes: 2 * m.n_layers * esz * ctx as usize * kv_dim,
        tail_weights: query + tail + classifier,
    }
}

fn load(image: &[u8], numerics: Numerics) -> Ssnail {
    let (mut dev, _) = Ssnail::load_bytes(image, None).unwrap();
    dev.machine.numerics = numerics;
    dev
}

/// The positions of every ARGMAX; never picks EOS when `avoid_eos` (so that a run reaches the
/// count or the context's end), and asks for a stop at the SYNC of the `stop_at`-th token.
#[derive(Default)]
struct Watch {
    argmax_at: Vec<(u32, u32)>,
    avoid_eos: Option<u32>,
    stop_at: Option<u32>,
}

impl Host for Watch {
    fn on_argmax(&mut self, logits: &[f32], m: &Machine) -> Option<u32> {
        let r = runtime(m);
        self.argmax_at.push((r.pos, r.prompt_len));
        let eos = self.avoid_eos?;
        let mut best = usize::from(eos == 0);
        for (i, &v) in logits.iter().enumerate() {
            if i as u32 != eos && v > logits[best] {
                best = i;
            }
        }
        Some(best as u32)
    }
    fn on_sync(&mut self, m: &mut Machine) {
        if self.stop_at.is_some_and(|n| runtime(m).generated >= n) {
            m.poke_u32((BASE + rt::STOP_REQUEST) as u64, 1);
        }
    }
}

/// The range of memory where two loaded images differ: their scripts (the same length, as the
/// skipping script moves the prompt test instead of adding one).
fn script_bytes(a: &[u8], b: &[u8]) -> std::ops::Range<usize> {
    assert_eq!(a.len(), b.len(), "the two images differ in length");
    let (a, b) = (load(a, Numerics::Hardware), load(b, Numerics::Hardware));
    let (a, b) = (a.machine.mem(), b.machine.mem());
    let first = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .expect("the skipping and the full-pass images are the same");
    let last = a.iter().zip(b).rposition(|(x, y)| x != y).unwrap();
    first..last + 1
}

/// Memory outside the script (header, runtime block, tokens, weights) and the KV caches; with
/// `activations` also what lies between (activations and logits).
fn state(dev: &Ssnail, script: &std::ops::Range<usize>, kv: usize, activations: bool) -> Vec<u8> {
    let m = dev.machine.mem();
    let h = dev.header();
    let scratch = (h.scratch - BASE) as usize;
    let kv_start = (h.mem_needed as usize) - kv;
    let mut v = [&m[..script.start], &m[script.end..scratch]].concat();
    if activations {
        v.extend(&m[scratch..kv_start]);
    }
    v.extend(&m[kv_start..h.mem_needed as usize]);
    v
}

/// One job after another on both images (`jobs`: tokens appended, n; the first job's tokens
/// are the prompt), each with a fresh `Watch` from `host`; asserts every job's generation, the
/// KV caches and the memory outside the script equal — the activations and logits too after a
/// job whose last position made a token (a full pass in both) — and returns the generations.
fn same_jobs(
    what: &str,
    images: &Images,
    numerics: Numerics,
    jobs: &[(&[u32], u32)],
    host: &dyn Fn() -> Watch,
) -> Vec<Generation> {
    let script = script_bytes(&images.skip, &images.full);
    let mut skip = load(&images.skip, numerics);
    let mut full = load(&images.full, numerics);
    let mut out = Vec::new();
    for (i, &(toks, n)) in jobs.iter().enumerate() {
        let run = |dev: &mut Ssnail| {
            let mut h = host();
            if i == 0 {
                dev.generate(toks, n, &mut h).unwrap()
            } else {
                dev.continue_generation(toks, n, &mut h).unwrap()
            }
        };
        let (a, b) = (run(&mut skip), run(&mut full));
        assert_eq!(a, b, "{what}, job {i}: the generation differs");
        let all = !a.tokens.is_empty();
        let kv = images.kv_bytes;
        assert!(
            state(&skip, &script, kv, all) == state(&full, &script, kv, all),
            "{what}, job {i}: memory outside the script differs"
        );
        out.push(a);
    }
    out
}

#[test]
fn a_prompt_position_before_the_last_runs_no_argmax_and_skips_the_classifier_and_the_last_layers_tail(
) {
    let prompt = [1u32, 300, 301, 302, 303, 304, 305];
    for (what, m) in shapes() {
        let imgs = images(&m, 32, true);
        let mut dev = load(&imgs.skip, Numerics::Hardware);
        let mut h = Watch::default();
        let g = dev.generate(&prompt, 3, &mut h).unwrap();
        // ARGMAX runs at the last prompt position and at every generated one, nowhere else.
        let want: Vec<(u32, u32)> = (0..g.tokens.len() as u32)
            .map(|i| (prompt.len() as u32 - 1 + i, prompt.len() as u32))
            .collect();
        assert_eq!(h.argmax_at, want, "{what}: where ARGMAX ran");

        // The bytes not moved at each of the 6 positions before the last: at least the weights
        // of the classifier and of the last layer's query, output and FFN matrices.
        let mut f = load(&imgs.full, Numerics::Hardware);
        f.generate(&prompt, 3, &mut Watch::default()).unwrap();
        let saved = f.machine.traffic.total() - dev.machine.traffic.total();
        let per_position = imgs.tail_weights;
        assert!(
            saved >= (prompt.len() as u64 - 1) * per_position,
            "{what}: {saved} bytes fewer, want at least {} per prompt position",
            per_position
        );
        eprintln!(
            "{what}: {saved} bytes fewer over {} prompt positions ({} of weights each at least)",
            prompt.len() - 1,
            per_position
        );
    }
}

#[test]
fn answers_kv_caches_and_memory_equal_the_full_pass_on_llama_and_gpt2_with_several_layers() {
    for (what, m) in shapes() {
        for kv_f16 in [true, false] {
            let imgs = images(&m, 32, kv_f16);
            for numerics in [Numerics::Hardware, Numerics::Float] {
                for prompt in [&[1u32][..], &[1, 300], &[1, 300, 301, 302, 303, 304, 305]] {
                    let w = format!("{what} kv_f16 {kv_f16} {numerics:?} prompt {prompt:?}");
                    let g = same_jobs(&w, &imgs, numerics, &[(prompt, 5)], &Watch::default);
                    assert!(!g[0].tokens.is_empty(), "{w}");
                }
            }
        }
    }
}

#[test]
fn a_one_token_prompt_and_continuations_with_and_without_new_tokens_equal_the_full_pass() {
    for (what, m) in shapes() {
        let imgs = images(&m, 64, true);
        let avoid = || Watch {
            avoid_eos: Some(2),
            ..Watch::default()
        };
        let jobs: [(&[u32], u32); 4] =
            [(&[1], 3), (&[310, 311, 312, 313], 4), (&[], 2), (&[320], 3)];
        let g = same_jobs(what, &imgs, Numerics::Hardware, &jobs, &avoid);
        let counts: Vec<usize> = g.iter().map(|g| g.tokens.len()).collect();
        assert_eq!(counts, [3, 4, 2, 3], "{what}");
    }
}

#[test]
fn context_full_and_a_stop_request_end_as_with_the_full_pass() {
    for (what, m) in shapes() {
        let imgs = images(&m, 16, true);
        let avoid = || Watch {
            avoid_eos: Some(2),
            ..Watch::default()
        };
        // A 4-token prompt and n = 100 in a 16-token context: 17 tokens, reason 3.
        let g = same_jobs(
            what,
            &imgs,
            Numerics::Hardware,
            &[(&[1, 300, 301, 302], 100)],
            &avoid,
        );
        assert_eq!(g[0].stop_reason, stop::CONTEXT_FULL, "{what}");
        assert_eq!(g[0].tokens.len(), 13, "{what}");
        // A prompt that fills the context: one token, then reason 3.
        let full: Vec<u32> = (0..16).map(|i| 300 + i).collect();
        let g = same_jobs(what, &imgs, Numerics::Hardware, &[(&full, 5)], &avoid);
        assert_eq!(
            (g[0].stop_reason, g[0].tokens.len()),
            (stop::CONTEXT_FULL, 1)
        );
        // A continuation past the context: its prompt positions run up to ctx, no ARGMAX.
        let jobs: [(&[u32], u32); 2] = [(&[1, 300], 2), (&[330; 14], 3)];
        let g = same_jobs(what, &imgs, Numerics::Hardware, &jobs, &avoid);
        assert_eq!(
            (g[1].stop_reason, g[1].tokens.len()),
            (stop::CONTEXT_FULL, 0)
        );
        // stop_request after the second token: reason 4.
        let stopping = || Watch {
            avoid_eos: Some(2),
            stop_at: Some(2),
            ..Watch::default()
        };
        let g = same_jobs(
            what,
            &imgs,
            Numerics::Hardware,
            &[(&[1, 300, 301], 9)],
            &stopping,
        );
        assert_eq!((g[0].stop_reason, g[0].tokens.len()), (stop::REQUESTED, 2));
    }
}

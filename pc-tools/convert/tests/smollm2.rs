//! The real SmolLM2-135M-Instruct GGUF (Q4_1 matrices, Q8_0 embedding) from
//! the test-data cache (tools/fetch-testdata.sh). Repacked tensors must be
//! byte-identical to gguf-py's dequantise-then-quantise of the same tensors
//! (FNV-1a 64 digests computed once with gguf-py 0.3.36's `quants`).
//! Fails with a clear message when the cache has not been fetched (`make testdata`).

use ssnail_convert::layout::Content;
use ssnail_convert::{plan, Options, Policy};
use ssnail_format::ggml::GgmlType;
use std::path::PathBuf;

fn model() -> PathBuf {
    ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2)
}

fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ *x as u64).wrapping_mul(0x100_0000_01b3)
    })
}

#[test]
fn smollm2_repacks_like_gguf_py() {
    let path = model();
    let g = ssnail_gguf::Gguf::open(&path).unwrap();
    let o = Options {
        policy: Policy::All(GgmlType::Q4_0),
        mem_mb: 100.0,
        ..Options::default()
    };
    let p = plan(&g, &o).unwrap();
    let blobs: Vec<(String, u32, usize, bool)> = p
        .layout
        .blobs
        .iter()
        .map(|b| {
            (
                b.name.clone(),
                b.addr,
                b.len,
                matches!(b.content, Content::Matrix { .. }),
            )
        })
        .collect();
    assert_eq!(
        (
            p.hp.dim,
            p.hp.n_layers,
            p.hp.n_heads,
            p.hp.n_kv_heads,
            p.ctx
        ),
        (576, 30, 9, 3, 256)
    );
    assert!(
        p.mem_needed > 72 << 20,
        "at a 256-token context it needs more than 72 MB"
    );
    let img = p.build(&|_| {}).image;
    for (name, digest) in [
        ("token_embd.weight", 0xe68e_eadb_6d76_7fdbu64), // Q8_0 source
        ("blk.0.attn_q.weight", 0x8c91_1864_98d4_bed0),  // Q4_1 source
        ("blk.7.ffn_gate.weight", 0xe95c_8306_e856_4882),
    ] {
        let (_, addr, len, matrix) = blobs.iter().find(|b| b.0 == name).unwrap();
        assert!(matrix);
        let off = (addr - 0x800_5000) as usize + 256;
        assert_eq!(fnv1a(&img[off..off + len]), digest, "{name} as Q4_0");
    }
    // Blobs in address order, none straddling $C000000, some above it.
    for w in blobs.windows(2) {
        assert!(
            w[0].1 as usize + w[0].2 <= w[1].1 as usize,
            "{} overlaps {}",
            w[0].0,
            w[1].0
        );
    }
    for (n, a, l, _) in &blobs {
        assert!(
            !(*a < 0xC00_0000 && *a as usize + l > 0xC00_0000),
            "{n} straddles $C000000"
        );
    }
    assert!(blobs.iter().any(|b| b.1 >= 0xC00_0000));

    // Q8_0 would need about 150 MB: auto at 100 MB lands on Q4_0, which
    // loses bits against the Q4_1 (5 bits per weight) source.
    let p = plan(
        &g,
        &Options {
            policy: Policy::Auto,
            mem_mb: 100.0,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(p.policy, Policy::All(GgmlType::Q4_0));
    let q = p
        .stored
        .iter()
        .find(|s| s.name == "blk.0.attn_q.weight")
        .unwrap();
    assert_eq!(
        (q.src, q.dst, q.lossy()),
        (GgmlType::Q4_1, GgmlType::Q4_0, true)
    );
}

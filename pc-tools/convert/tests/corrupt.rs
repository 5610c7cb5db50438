//! Corrupted GGUF files: every conversion either succeeds or returns an
//! error naming the file; none panics or aborts.

mod common;
use ssnail_convert::{convert, Options};
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_testkit::rng::Rng;

#[test]
fn random_corruptions_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(99);
    let models = [
        models::build(&ModelOpts::llama().with_wtype(GgmlType::Q8_0)),
        models::build(&ModelOpts::gpt2()),
        models::build(&ModelOpts::bert().with_wtype(GgmlType::F16)),
    ];
    let (mut ok, mut failed) = (0, 0);
    for i in 0..240 {
        let mut b = models[i % 3].clone();
        // Mostly the header, metadata and tensor infos (the first 16 KiB),
        // where a flipped byte changes counts, lengths, types and shapes.
        for _ in 0..1 + rng.next_u64() % 3 {
            let span = if rng.next_u64().is_multiple_of(4) {
                b.len()
            } else {
                16 << 10
            };
            let at = (rng.next_u64() % span as u64) as usize;
            b[at] = match rng.next_u64() % 3 {
                0 => rng.next_u64() as u8,
                1 => 0xFF,
                _ => b[at] ^ (1 << (rng.next_u64() % 8)),
            };
        }
        let p = dir.path().join(format!("c{i}.gguf"));
        std::fs::write(&p, &b).unwrap();
        let Ok(g) = ssnail_gguf::Gguf::open(&p) else {
            failed += 1;
            continue;
        };
        match convert(
            &g,
            &Options {
                ctx: Some(16),
                ..Options::default()
            },
        ) {
            Ok(_) => ok += 1,
            Err(e) => {
                assert!(
                    e.msg.contains(&format!("c{i}.gguf")) || e.msg.contains("does not fit"),
                    "{}",
                    e.msg
                );
                assert!(!e.msg.contains('\n') || e.kind == ssnail_convert::ErrorKind::TooBig);
                failed += 1;
            }
        }
    }
    assert!(
        ok > 0 && failed > 0,
        "both outcomes exercised: {ok} ok, {failed} failed"
    );
}

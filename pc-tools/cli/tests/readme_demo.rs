//! The README's quick start, `make demo`, run step by step on small models so
//! the README cannot rot: the same Makefile rules, the same demo script, the
//! same MEGA65 program and key script; only the two images are the testkit's
//! small bert (as a 64 MB image) and llama instead of MiniLM and SmolLM2.

mod common;

use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::{self, ModelOpts};

#[test]
fn make_demo_runs_on_small_models() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    models::write(
        d.join("bert.gguf"),
        &models::build(&ModelOpts::bert().with_wtype(GgmlType::Q8_0)),
    );
    models::write(
        d.join("llama.gguf"),
        &models::build(&ModelOpts::llama().with_wtype(GgmlType::Q8_0)),
    );
    let tool = common::tool_wrapper(d);
    let build = d.join("build");
    let out = common::make(d, &tool)
        .arg("--no-print-directory")
        .arg(format!(
            "DEMO_ENCODER={}",
            d.join("bert.64mb.ssnail").display()
        ))
        .arg(format!("DEMO_DECODER={}", d.join("llama.ssnail").display()))
        .arg(format!("SSNAIL_BUILD={}", build.display()))
        .arg("demo")
        .output()
        .expect("make is needed for this test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "make demo failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );

    // The README's building blocks happened: images, disk, SD folder.
    assert!(d.join("bert.64mb.ssnail").exists() && d.join("llama.ssnail").exists());
    assert!(build.join("ssnail.d81").exists());
    assert!(build.join("demo-screen.png").exists());

    // 1. The MEGA65 program embedded the four typed sentences and ranked them.
    let screen_part = stdout
        .split("== 2.")
        .next()
        .expect("demo output has two parts");
    assert!(screen_part.contains("== 1."), "{stdout}");
    for s in [
        "> The cat sat on the mat.",
        "> A kitten is resting on a rug.",
        "> Stock markets fell sharply today.",
        "> Shares dropped as investors worried.",
    ] {
        assert!(
            screen_part.contains(s),
            "missing {s:?} on the screen:\n{stdout}"
        );
    }
    assert!(
        screen_part.contains("-dimensional embedding stored]"),
        "{stdout}"
    );
    // After the fourth sentence, three ranked lines with a signed cosine.
    let last = screen_part
        .rsplit("> Shares dropped as investors worried.")
        .next()
        .unwrap();
    let ranked = last
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            (t.starts_with("+0.") || t.starts_with("-0.") || t.starts_with("+1.")) && t.len() > 8
        })
        .count();
    assert!(ranked >= 3, "expected three ranked lines:\n{last}");

    // 2. The decoder continued the prompt and reported both speeds.
    let chat_part = stdout.split("== 2.").nth(1).unwrap();
    assert!(chat_part.contains("Once upon a time"), "{stdout}");
    let speeds = format!("{chat_part}{stderr}");
    assert!(speeds.contains("tokens/s on this PC"), "{speeds}");
    assert!(speeds.contains(" at 130 MB/s]"), "{speeds}");
}

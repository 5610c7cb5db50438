//! `ssnail run` and `ssnail bench` end to end on converted test models.

mod common;

use common::{image, ssnail, text};
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::ModelOpts;

#[test]
fn run_decoder_text_ids_logits() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    let img_s = img.to_str().unwrap();
    // --prompt: text of prompt + generation, then the stop line and traffic line.
    let o = ssnail(&["run", img_s, "--prompt", "once upon a time", "-n", "5"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with(" once upon a time"), "{out:?}");
    assert!(err.contains("stop reason"), "{err}");
    // The summary names the numerics: a decoder defaults to the hardware's.
    assert!(err.contains("[hardware numerics; 5 tokens"), "{err}");
    let o = ssnail(&["run", img_s, "--prompt", "once", "-n", "2", "--float"]);
    assert!(
        text(&o).1.contains("[float reference numerics; "),
        "{}",
        text(&o).1
    );
    assert!(
        err.contains("MB/token -> ~") && err.contains("at 130 MB/s"),
        "{err}"
    );
    // --tokens with --ids and --logits: logits rows of 400 f32 per ARGMAX.
    let logits = dir.path().join("logits.bin");
    let o = ssnail(&[
        "run",
        img_s,
        "--tokens",
        "1,300,301",
        "-n",
        "4",
        "--ids",
        "--hw",
        "--logits",
        logits.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("prompt: 1,300,301"), "{out}");
    let gen_line = out.lines().find(|l| l.starts_with("generated: ")).unwrap();
    let n_gen = gen_line["generated: ".len()..]
        .split(',')
        .filter(|s| !s.is_empty())
        .count();
    // One ARGMAX per predicted token: at the last prompt position and each generated one but
    // the last, which is not processed; earlier prompt positions run none (spec §3.7).
    assert_eq!(
        std::fs::metadata(&logits).unwrap().len() as usize,
        n_gen * 400 * 4,
        "{err}"
    );
    // convert --all-logits: a row at every processed position, and the same tokens.
    let full = dir.path().join("full.ssnail");
    let gguf = dir.path().join("llama.gguf");
    let o = ssnail(&[
        "convert",
        gguf.to_str().unwrap(),
        "-o",
        full.to_str().unwrap(),
        "--ctx",
        "32",
        "--all-logits",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = ssnail(&[
        "run",
        full.to_str().unwrap(),
        "--tokens",
        "1,300,301",
        "-n",
        "4",
        "--ids",
        "--hw",
        "--logits",
        logits.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(text(&o).0.contains(gen_line), "{}", text(&o).0);
    assert_eq!(
        std::fs::metadata(&logits).unwrap().len() as usize,
        (3 + n_gen - 1) * 400 * 4
    );
    // --trace prints instructions to stderr.
    let o = ssnail(&["run", img_s, "--tokens", "1", "-n", "1", "--trace", "--ids"]);
    assert!(text(&o).1.contains("8005000 LDR"), "{}", text(&o).1);
}

#[test]
fn run_encoder_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "bert",
        &ModelOpts::bert().with_wtype(GgmlType::F16),
        16,
    );
    let o = ssnail(&["run", img.to_str().unwrap(), "--prompt", "the cat"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.starts_with("embedding (128 values, |v| = "), "{out}");
    assert!(out.lines().nth(1).unwrap().ends_with(" ..."));
    assert!(err.contains("stop reason: count,"), "{err}");
    // An encoder defaults to the float reference.
    assert!(err.contains("[float reference numerics; "), "{err}");
    // Too long for the context (16): reason 3.
    let long = "the cat ".repeat(20);
    let o = ssnail(&["run", img.to_str().unwrap(), "--prompt", &long]);
    assert!(text(&o).0.contains("[too long:"), "{}", text(&o).0);
    // Bad input: one line naming the file, non-zero exit, no panic.
    let bogus = dir.path().join("bogus.ssnail");
    std::fs::write(&bogus, b"not an image at all").unwrap();
    let o = ssnail(&["run", bogus.to_str().unwrap(), "--tokens", "1"]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bogus.ssnail"), "{err}");
    // Memory too small for the image: the load port's ERROR.
    let o = ssnail(&[
        "run",
        img.to_str().unwrap(),
        "--tokens",
        "2,3",
        "--mem-mb",
        "0.25",
    ]);
    assert!(
        text(&o).1.contains("load port reported ERROR"),
        "{}",
        text(&o).1
    );
    // Token outside the vocabulary.
    let o = ssnail(&["run", img.to_str().unwrap(), "--tokens", "99999"]);
    assert!(
        text(&o).1.contains("outside the vocabulary"),
        "{}",
        text(&o).1
    );
}

#[test]
fn bench_reports_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "gpt2",
        &ModelOpts::gpt2().with_wtype(GgmlType::Q4_0),
        32,
    );
    let o = ssnail(&[
        "bench",
        img.to_str().unwrap(),
        "--positions",
        "4",
        "--threads",
        "1",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("hardware") || l.starts_with("float"))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    for r in rows {
        let tps: f64 = r.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!(tps > 0.0, "{r}");
    }
}

#[test]
fn bench_runs_one_mode_on_chosen_kernels_and_measures_read_bandwidth() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q4_0),
        32,
    );
    let o = ssnail(&[
        "bench",
        img.to_str().unwrap(),
        "--positions",
        "3",
        "--threads",
        "1",
        "--numerics",
        "hardware",
        "--kernels",
        "portable",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("GEMV kernels: portable"), "{out}");
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("hardware") || l.starts_with("float"))
        .collect();
    assert_eq!(rows.len(), 1, "{out}");
    assert!(rows[0].starts_with("hardware"), "{out}");
    let o = ssnail(&["bench", "--read-bandwidth", "--threads", "1"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let f: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(&f[..2], &["read-bandwidth", "1"], "{out}");
    assert!(f[2].parse::<f64>().unwrap() > 0.0, "{out}");
}

#[test]
fn bench_encoder_image() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "bert",
        &ModelOpts::bert().with_wtype(GgmlType::Q8_0),
        16,
    );
    let o = ssnail(&["bench", img.to_str().unwrap(), "--threads", "2"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("hardware") || l.starts_with("float"))
            .count(),
        2,
        "{out}"
    );
}

//! Images whose header numbers lie: the host bounds what it sizes and reads
//! by the image, so a small file never makes `ssnail chat` or `run`
//! allocate gigabytes; the error is one line naming the file.

mod common;

use common::ssnail_command;
use ssnail_format::image::h;
use ssnail_testkit::models::{self, ModelOpts};
use std::process::Stdio;

fn image() -> Vec<u8> {
    let g = ssnail_gguf::Gguf::from_bytes("m.gguf", models::build(&ModelOpts::llama())).unwrap();
    let o = ssnail_convert::Options {
        ctx: Some(16),
        ..Default::default()
    };
    ssnail_convert::convert(&g, &o).unwrap().image
}

#[test]
fn chat_on_an_image_whose_header_claims_a_billion_tokens_is_a_clean_error() {
    let d = tempfile::tempdir().unwrap();
    let mut img = image();
    img[h::NVOCAB..h::NVOCAB + 4].copy_from_slice(&1_000_000_000u32.to_le_bytes());
    let p = d.path().join("liar.ssnail");
    std::fs::write(&p, &img).unwrap();
    for cmd in [&["chat"][..], &["run", "-p", "hello", "-n", "2"]] {
        let o = ssnail_command()
            .args(cmd)
            .arg(&p)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{cmd:?} accepted it");
        assert!(
            err.contains("liar.ssnail") && err.contains("tokens"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn run_with_a_hundred_thousand_threads_uses_the_cores_with_one_message() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.ssnail");
    std::fs::write(&p, image()).unwrap();
    let o = ssnail_command()
        .arg("run")
        .arg(&p)
        .args(["-p", "hello", "-n", "2", "--threads", "100000"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("--threads")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("--threads 100000: using"), "{err}");
}

#[test]
fn tokenize_on_an_image_with_a_damaged_magic_says_what_both_kinds_start_with() {
    let d = tempfile::tempdir().unwrap();
    let mut img = image();
    img[3] = b'X';
    let p = d.path().join("bad.ssnail");
    std::fs::write(&p, &img).unwrap();
    let o = ssnail_command()
        .arg("tokenize")
        .arg(&p)
        .arg("hello")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("bad.ssnail") && err.contains("neither an SSNAIL image nor a GGUF file"),
        "{err}"
    );
    assert!(!err.contains("not a GGUF file"), "{err}");
}

#[test]
fn names_from_a_file_reach_the_terminal_escaped() {
    use ssnail_gguf::writer::{GgufWriter, MetaValue};
    let d = tempfile::tempdir().unwrap();
    let g = ssnail_gguf::Gguf::from_bytes("m.gguf", models::build(&ModelOpts::llama())).unwrap();
    let mut w = GgufWriter::new();
    for (k, v) in &g.metadata {
        w.meta(k, MetaValue::from(v));
    }
    w.meta(
        "evil.key\n\x1b[31m",
        MetaValue::Str("red\x1b[0m\nline".into()),
    );
    for t in &g.tensors {
        w.tensor(&t.name, &t.shape, t.ty, g.data(t).to_vec())
            .unwrap();
    }
    w.tensor(
        "evil\n\x1b[2Jtensor",
        &[4],
        ssnail_format::ggml::GgmlType::F32,
        vec![0; 16],
    )
    .unwrap();
    let p = d.path().join("evil.gguf");
    std::fs::write(&p, w.to_bytes().unwrap()).unwrap();
    let o = ssnail_command().arg("info").arg(&p).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains('\x1b'), "raw escape in: {out}");
    assert!(out.contains(r"evil\n\u{1b}[2Jtensor"), "{out}");
    assert!(out.contains(r"evil.key\n\u{1b}[31m"), "{out}");
}

#[test]
fn a_vocabulary_tokenize_refuses_is_converted_with_a_warning_naming_the_file() {
    use ssnail_gguf::writer::{GgufWriter, MetaValue};
    let d = tempfile::tempdir().unwrap();
    let g = ssnail_gguf::Gguf::from_bytes("m.gguf", models::build(&ModelOpts::gpt2())).unwrap();
    let mut w = GgufWriter::new();
    for (k, v) in &g.metadata {
        w.meta(k, MetaValue::from(v));
    }
    w.meta("tokenizer.ggml.pre", MetaValue::Str("qwen2".into()));
    for t in &g.tensors {
        w.tensor(&t.name, &t.shape, t.ty, g.data(t).to_vec())
            .unwrap();
    }
    let p = d.path().join("q.gguf");
    std::fs::write(&p, w.to_bytes().unwrap()).unwrap();
    let tok = ssnail_command()
        .arg("tokenize")
        .arg(&p)
        .arg("hello")
        .output()
        .unwrap();
    let tok_err = String::from_utf8_lossy(&tok.stderr);
    assert!(
        !tok.status.success() && tok_err.contains("qwen2"),
        "{tok_err}"
    );
    let conv = ssnail_command()
        .arg("convert")
        .arg(&p)
        .arg("-o")
        .arg(d.path().join("q.ssnail"))
        .args(["--ctx", "16"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&conv.stderr);
    assert!(conv.status.success(), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("q.gguf") && warnings[0].contains("qwen2"),
        "{err}"
    );
}

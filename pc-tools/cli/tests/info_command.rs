//! `ssnail info` on an SSNAIL image (what it holds, read from the image
//! alone) and `--json` for images and GGUFs.

mod common;

use common::{image, ssnail, text};
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::ModelOpts;
use std::process::Command;

#[test]
fn info_describes_an_image_from_the_image_alone() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        16,
    );
    // The GGUF is not needed: remove it.
    std::fs::remove_file(dir.path().join("llama.gguf")).unwrap();
    let o = ssnail(&["info", img.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    for want in [
        "description: llama 256d 2L 8H [General]",
        // The test model's hyper-parameters (§10.1), recovered from the script.
        "architecture llama decoder (400 logits), 2 layers, dim 256, 8 heads (4 kv, head_dim 32), hidden 512, vocab 400, context 16, eps 1e-5",
        "tokenizer: SentencePiece",
        "  attention     8 x Q8_0",
        "  feed-forward  6 x Q8_0",
        "  classifier    1 x Q8_0",
        "  $8000000-$80000FF  file bytes 0-255 (header and runtime block)",
        "  $8001000-$8004FFF  token buffer (4096 slots)",
        "$C000000 is past the end: on R4-R6 everything is in SDRAM",
        "runs on every board: R3 (8 MB of HyperRAM) and R4-R6",
    ] {
        assert!(out.contains(want), "{want:?} missing from\n{out}");
    }
    // The header's own fields, as the file has them.
    let bytes = std::fs::read(&img).unwrap();
    let h = ssnail_format::image::Header::parse(&bytes).unwrap();
    let header = out.lines().find(|l| l.starts_with("header: ")).unwrap();
    assert!(
        header.starts_with("header: flags $0000, script $8005000, ")
            && header.contains(&format!("tokenizer ${:07X}", h.tokenizer))
            && header.ends_with(&format!("needs {} bytes", h.mem_needed)),
        "{header}"
    );
    let script = out.lines().find(|l| l.starts_with("script: ")).unwrap();
    assert!(script.ends_with(" instructions at $8005000"), "{script}");
    // The checksum is the file's SHA-256, as sha256sum computes it.
    if let Ok(s) = Command::new("sha256sum").arg(&img).output() {
        let sum = String::from_utf8_lossy(&s.stdout)
            .split(' ')
            .next()
            .unwrap()
            .to_string();
        assert!(
            out.lines()
                .next()
                .unwrap()
                .ends_with(&format!("SHA-256 {sum}")),
            "{out}"
        );
    }
    // An encoder: the embedding, and no classifier.
    let bert = image(dir.path(), "bert", &ModelOpts::bert(), 16);
    let (out, _) = text(&ssnail(&["info", bert.to_str().unwrap()]));
    assert!(
        out.contains("architecture bert encoder (128-float embedding), 2 layers"),
        "{out}"
    );
    assert!(
        out.contains("tokenizer: WordPiece (lowercased)") && !out.contains("classifier"),
        "{out}"
    );
}

#[test]
fn info_json_describes_images_and_ggufs() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "gpt2",
        &ModelOpts::gpt2().with_wtype(GgmlType::Q8_0),
        16,
    );
    let o = ssnail(&["info", "--json", img.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["kind"], "ssnail-image");
    assert_eq!(j["architecture"], "gpt2");
    assert_eq!(j["hyper_parameters"]["layers"], 2);
    assert_eq!(j["hyper_parameters"]["context"], 16);
    assert_eq!(j["tokenizer"]["kind"], "byte-level BPE");
    assert_eq!(j["boards"], serde_json::json!(["R3", "R4-R6"]));
    assert_eq!(j["memory"]["tokens"], 0x800_1000);
    let need = u32::from_le_bytes(std::fs::read(&img).unwrap()[0x38..0x3C].try_into().unwrap());
    assert_eq!(j["memory"]["needed_bytes"], need);
    assert_eq!(j["header"]["mem_needed"], need);
    assert_eq!(j["header"]["max_ctx"], 16);
    assert_eq!(j["sha256"].as_str().unwrap().len(), 64);

    let gguf = dir.path().join("gpt2.gguf");
    let o = ssnail(&["info", "--json", gguf.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["kind"], "gguf");
    assert_eq!(j["architecture"], "gpt2");
    assert_eq!(j["metadata"]["general.architecture"], "gpt2");
    // Long arrays are summarised, as in the text output.
    assert_eq!(j["metadata"]["tokenizer.ggml.tokens"]["len"], 320);
    assert!(j["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "token_embd.weight"));
    let keep = &j["memory_needed"][0];
    assert_eq!(keep["wtype"], "keep");
    assert_eq!(keep["fits_mb"], serde_json::json!([8.0, 64.0, 72.0, 128.0]));
}

#[test]
fn info_on_a_broken_image_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "llama", &ModelOpts::llama(), 16);
    let bytes = std::fs::read(&img).unwrap();
    let cut = dir.path().join("cut.ssnail");
    std::fs::write(&cut, &bytes[..300]).unwrap();
    let o = ssnail(&["info", cut.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cut.ssnail: truncated image"), "{err}");
    // A script address pointing outside the image.
    let mut bad = bytes.clone();
    bad[0x0C..0x10].copy_from_slice(&0x0FFF_0000u32.to_le_bytes());
    let p = dir.path().join("bad.ssnail");
    std::fs::write(&p, &bad).unwrap();
    let o = ssnail(&["info", p.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("bad.ssnail: the script lies outside the image"),
        "{err}"
    );
}

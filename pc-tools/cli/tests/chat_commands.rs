//! `ssnail chat`'s slash commands at their edges: bad arguments are errors
//! naming the command, encoders refuse decoder settings, /tokens and
//! /models as on the MEGA65; `tokcheck` shows the pieces of a differing line.

mod common;

use common::{image, output_with_stdin, text};
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::ModelOpts;
use std::process::Command;

fn chat(img: &std::path::Path, input: &str) -> (String, String) {
    let o = output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_ssnail"))
            .arg("chat")
            .arg(img)
            .args(["--seed", "1", "-n", "3"]),
        input,
    );
    assert!(o.status.success(), "{}", text(&o).1);
    text(&o)
}

#[test]
fn a_bad_slash_command_argument_is_an_error_not_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    let (out, _) = chat(
        &img,
        "/n abc\n/n 0\n/temp hot\n/topk -1\n/penalty 0\n/seed x\n/frobnicate\n/n 7\n",
    );
    for want in [
        "[/n abc: needs a whole number of tokens, at least 1]",
        "[/n 0: needs a whole number of tokens, at least 1]",
        "[/temp hot: needs a temperature (a number; 0 = greedy)]",
        "[/topk -1: needs a whole number (0 = off)]",
        "[/penalty 0: needs a number > 0 (1 = off)]",
        "[/seed x: needs a whole number]",
        "[unknown command /frobnicate: /help lists the commands]",
        "[7 tokens per turn]",
    ] {
        assert!(out.contains(want), "{want:?} missing from\n{out}");
    }
    assert!(
        !out.contains("/tokens TEXT"),
        "the list only on /help: {out}"
    );
    let (out, _) = chat(&img, "/help\n");
    assert!(
        out.contains("/tokens TEXT") && out.contains("/models [N]"),
        "{out}"
    );
}

#[test]
fn encoders_refuse_settings_that_only_decoders_have() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "bert", &ModelOpts::bert(), 16);
    let (out, _) = chat(&img, "/n 5\n/temp 0.5\n/help\n");
    assert!(
        out.contains("[/n: this is an encoder; it embeds each line whole and generates nothing]"),
        "{out}"
    );
    assert!(out.contains("[/temp: this is an encoder"), "{out}");
    assert!(!out.contains("/n N  tokens per turn"), "{out}");
}

#[test]
fn tokens_shows_ids_and_pieces_and_models_switches_image() {
    let dir = tempfile::tempdir().unwrap();
    let llama = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    image(dir.path(), "gpt2", &ModelOpts::gpt2(), 16);
    let ids = common::ssnail(&["tokenize", llama.to_str().unwrap(), "once upon", "--ids"]);
    let ids: Vec<String> = text(&ids).0.trim().split(',').map(String::from).collect();
    let (out, _) = chat(&llama, "/tokens once upon\n/models\n/models 1\n/models 7\n");
    assert!(
        out.contains(&format!(
            "[3 tokens: {} (begin), {} \" once\", {} \" upon\"]",
            ids[0], ids[1], ids[2]
        )),
        "{out}"
    );
    // Listed by name with description and size; the current one starred.
    assert!(
        out.contains("  1  gpt2.ssnail  [gpt2 128d 2L 4H [General]]"),
        "{out}"
    );
    assert!(
        out.contains("  2* llama.ssnail  [llama 256d 2L 8H [General]]"),
        "{out}"
    );
    // /models 1 continues with gpt2: its banner.
    assert!(
        out.contains("[gpt2 decoder, context 16, vocab 320]"),
        "{out}"
    );
    assert!(
        out.contains("[/models 7: needs an image number, 1 to 2]"),
        "{out}"
    );
}

#[test]
fn tokcheck_shows_the_pieces_and_says_when_only_non_ascii_differs() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    let lines = dir.path().join("lines.txt");
    std::fs::write(&lines, "the café\nonce upon a time\n").unwrap();
    let o = common::ssnail(&[
        "tokcheck",
        img.to_str().unwrap(),
        dir.path().join("llama.gguf").to_str().unwrap(),
        lines.to_str().unwrap(),
    ]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.contains("DIFFER: the café"), "{out}");
    let image_line = out.lines().find(|l| l.starts_with("  image: ")).unwrap();
    assert!(
        image_line.contains(":\" the\"") && image_line.contains(":\"?\""),
        "{image_line}"
    );
    assert!(out.contains("  gguf:  1:\"<s>\""), "{out}");
    assert!(
        out.contains("(ASCII only: the image reads \"the caf?\""),
        "{out}"
    );
    assert!(out.contains("1/2 lines identical"), "{out}");
}

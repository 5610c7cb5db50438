//! Chat templates (spec §2.6): an instruct model's lines are wrapped in its
//! GGUF's chat template, as llama.cpp's conversation mode wraps them, on the
//! real SmolLM2-135M-Instruct.

mod common;

use common::{chat, ssnail, text};
use std::path::{Path, PathBuf};

/// SmolLM2-135M-Instruct at Q4_0 with a 96-token context, converted once
/// (`extra`: more convert flags, part of the cached name).
fn smollm2(extra: &[&str]) -> PathBuf {
    let name = format!("chat-template-smollm2{}.ssnail", extra.join(""));
    let cached = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    if cached.exists() {
        return cached;
    }
    let gguf = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let img = dir.path().join("smol.ssnail");
    let args = [
        &[
            "convert",
            gguf.to_str().unwrap(),
            "-o",
            img.to_str().unwrap(),
            "--wtype",
            "q4_0",
            "--mem-mb",
            "128",
            "--ctx",
            "96",
        ][..],
        extra,
    ]
    .concat();
    let out = ssnail(&args);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    std::fs::rename(&img, &cached).unwrap();
    cached
}

/// `run --ids`: the prompt ids, the generated ids and the text.
fn run(img: &Path, extra: &[&str]) -> (Vec<u32>, String) {
    let i = img.to_str().unwrap();
    let args = [
        &["run", i, "-p", "What is the capital of France?", "-n", "12"][..],
        extra,
    ]
    .concat();
    let out = ssnail(&[&args[..], &["--ids"]].concat());
    let (o, e) = text(&out);
    assert!(out.status.success(), "{e}");
    let line = o.lines().find(|l| l.starts_with("prompt: ")).unwrap();
    let ids = line["prompt: ".len()..]
        .split(',')
        .map(|t| t.parse().unwrap())
        .collect();
    let plain = ssnail(&args);
    (ids, text(&plain).0)
}

#[test]
fn smollm2_instruct_answers_what_the_capital_of_france_is_with_paris() {
    let (_, answer) = run(&smollm2(&[]), &[]);
    assert!(answer.contains("Paris"), "{answer}");
    // The summary names the template.
    let out = ssnail(&["run", smollm2(&[]).to_str().unwrap(), "-p", "Hi", "-n", "1"]);
    assert!(
        text(&out).1.contains("chat template chatml"),
        "{}",
        text(&out).1
    );
}

/// The turn's ids equal llama.cpp's own tokenization of the prompt its chat
/// template formats (the default system message, the user turn, the
/// assistant opener; tools/llama-cpp-chat-reference.sh made the reference).
#[test]
fn the_templated_prompt_is_llama_cpps_tokenization_of_the_formatted_turn() {
    let want: Vec<u32> = include_str!("data/smollm2-chat-prompt.ids")
        .trim()
        .split(',')
        .map(|t| t.parse().unwrap())
        .collect();
    let (ids, _) = run(&smollm2(&[]), &[]);
    assert_eq!(ids, want);
}

/// `--raw` (and an image converted with `--no-template`) is a plain
/// continuation: the prompt is the image tokenizer's ids alone.
#[test]
fn raw_and_no_template_images_continue_text_without_the_turn() {
    let plain: Vec<u32> = {
        let out = ssnail(&[
            "tokenize",
            smollm2(&[]).to_str().unwrap(),
            "What is the capital of France?",
            "--ids",
        ]);
        let (o, e) = text(&out);
        assert!(out.status.success(), "{e}");
        o.trim()
            .trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .map(|t| t.trim().parse().unwrap())
            .collect()
    };
    assert_eq!(run(&smollm2(&[]), &["--raw"]).0, plain);
    assert_eq!(run(&smollm2(&[]), &["--no-template"]).0, plain);
    let untemplated = smollm2(&["--no-template"]);
    assert_eq!(run(&untemplated, &[]).0, plain);
    let header = std::fs::read(&untemplated).unwrap();
    assert_eq!(&header[0x7C..0x80], &[0, 0, 0, 0], "header $7C");
}

/// `chat`: the second line is a new user turn after the first reply's end
/// (the rest of END, then PREFIX), so the model answers it as a question too.
#[test]
fn chat_keeps_the_turns_of_a_conversation() {
    let out = chat(
        &smollm2(&[]),
        &["--greedy", "-n", "12"],
        "What is the capital of France?\nAnd what is the capital of Germany?\n",
    );
    let (o, e) = text(&out);
    assert!(out.status.success(), "{e}");
    assert!(o.contains("[chat template chatml"), "{o}");
    assert!(o.contains("Paris"), "{o}");
    assert!(o.contains("Berlin"), "{o}");
}

//! The MEGA65 tokenizer (mega65/src/tokenizer.c, the C that runs on the 45GS02) built for the PC
//! with a file-backed far.h, against the PC image tokenizer (ssnail_tokenizer::ImageTokenizer) on
//! the real llama-spm, gpt-2 and bert-bge vocabularies: the same ids for every line. Also the
//! ASCII folder (mega65/src/fold.c) against ssnail_tokenizer::AsciiFolder.

use ssnail_mega65_program as common;

use ssnail_tokenizer::image::tables_only_memory;
use ssnail_tokenizer::{AsciiFolder, ImageTables, ImageTokenizer, Vocab};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// tokhost (the MEGA65 C sources + the PC far.h), made by build.mk into `dir`.
fn build_tokhost(dir: &Path) -> PathBuf {
    common::make_for_test(dir, "mega65-hosttest", "", "tokhost")
}

fn run(exe: &Path, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// 71 varied lines: prose, case, contractions, numbers, whitespace runs and tabs, punctuation
/// runs, underscores, code, e-mail, paths, non-ASCII (typed as '?'), edge cases.
const LINES: &[&str] = &[
    "Once upon a time, there was a little girl named Lily.",
    "the cat sat on the mat",
    "Hello world",
    " Hello world",
    "  two leading spaces",
    "trailing spaces   ",
    "",
    " ",
    "   ",
    "a",
    "I",
    "It's a dog's life, isn't it? We'll see, they've said, I'm sure you'd agree.",
    "DON'T SHOUT: IT'S RUDE",
    "'s 't 're 've 'm 'll 'd",
    "rock'n'roll",
    "The year 2024 had 366 days; 3.14159 is pi and 1,000,000 is a million.",
    "12345678901234567890",
    "x=1+2*3/4-5",
    "foo_bar_baz __init__ snake_case_name",
    "e-mail: someone@example.com, web: https://example.org/path?q=1&r=2",
    "C:\\Users\\name\\file.txt and /usr/local/bin/ssnail",
    "fn main() { println!(\"hi\"); }",
    "for (int i = 0; i < 10; ++i) sum += a[i];",
    "tab\tseparated\tvalues",
    "two\t\ttabs before a word",
    "space then tab \tword",
    "tab then space\t word",
    "many     spaces     between",
    "end with tab\t",
    "\t\t\tthree tabs",
    "code:\n\t\treturn x;\r\r\rdone",
    "    indented four\t\t\t\tand tabs",
    " \t \t mixed\t \tblank",
    "\r\n\r\nline\r\n\r\nends",
    "!!!???...",
    "Wait... what?!",
    "(parentheses) [brackets] {braces} <angles>",
    "#hashtag @mention $100 50% ^caret &amp; *star* ~tilde~ `backtick`",
    "quotes \"double\" and 'single'",
    "MiXeD CaSe WoRdS",
    "ALLCAPS",
    "lowercase",
    "supercalifragilisticexpialidocious",
    "antidisestablishmentarianism pneumonoultramicroscopic",
    "The quick brown fox jumps over the lazy dog.",
    "A journey of a thousand miles begins with a single step.",
    "To be, or not to be, that is the question:",
    "caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9}",
    "\u{201c}smart quotes\u{201d} \u{2014} dashes",
    "emoji \u{1F600} here",
    "\u{65e5}\u{672c}\u{8a9e}",
    "mixed 123abc abc123 a1b2c3",
    "--double-dash and trailing-",
    "a.b.c d,e,f g;h;i",
    "What is the capital of France?",
    "Tell me a story about a dragon.",
    "user: hi\\nassistant: hello",
    "1 2 3 4 5 6 7 8 9 10",
    "!",
    "_",
    "__",
    "a_b",
    "version 1.2.3-beta+build.45",
    "The SSNAIL core runs on the MEGA65.",
    "repeated repeated repeated words words",
    "x",
    "it's 2024",
    "   2024 three spaces before a number",
    "tab\t42 and newline\n7",
    "ab\x01cd control\x7fbytes\x1bhere",
    "averyveryverylongwordthatgoesonandonandonandonandonandonandonandonandonandonandonandonandonandonandonandon end",
];

fn check_vocab(name: &str) {
    check_gguf(&ssnail_testkit::llama_vocab::gguf(name));
}

fn check_gguf(path: &Path) {
    let gguf = path.file_name().unwrap().to_string_lossy();
    let g = ssnail_gguf::Gguf::open(path).unwrap();
    let vocab = Vocab::from_gguf(&g).unwrap();
    let tables = ImageTables::build(&vocab);
    let mem = tables_only_memory(&tables);
    let reference = ImageTokenizer::new(&mem).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mem_path = dir.path().join("mem.bin");
    std::fs::write(&mem_path, &mem).unwrap();
    let exe = build_tokhost(dir.path());
    let input = LINES.join("\0") + "\0";
    let out = run(
        &exe,
        &["--mem", mem_path.to_str().unwrap()],
        input.as_bytes(),
    );
    let out = String::from_utf8(out).unwrap();
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), LINES.len());
    assert!(LINES.len() >= 50);
    let mut tokens = 0;
    for (line, got) in LINES.iter().zip(got) {
        let want = reference.encode(line, true);
        tokens += want.len();
        let want: Vec<String> = want.iter().map(|t| t.to_string()).collect();
        assert_eq!(got, want.join(","), "{gguf}: {line:?}");
    }
    eprintln!("{gguf}: {} lines, {tokens} tokens identical", LINES.len());
}

#[test]
fn spm_ids_equal_the_pc_image_tokenizer() {
    check_vocab("llama-spm");
}

#[test]
fn bpe_ids_equal_the_pc_image_tokenizer() {
    check_vocab("gpt-2");
}

#[test]
fn wordpiece_ids_equal_the_pc_image_tokenizer() {
    check_vocab("bert-bge");
}

/// SmolLM2's 49,152-token GPT-2 BPE with the digits-first "smollm" pre-tokenizer (fix 4: no
/// " <digit>" token, so a space never joins a digit).
#[test]
fn smollm2_bpe_ids_equal_the_pc_image_tokenizer() {
    let p = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    check_gguf(&p);
}

#[test]
fn ascii_folder_equals_the_pc_folder() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_tokhost(dir.path());
    let mut text: Vec<u8> = "\u{201c}Hi\u{201d} \u{2014} caf\u{e9}\u{2026} \u{2603} soon\u{2019}! \
        \u{c6}sop \u{df} \u{a9}2024 \u{2122} x\u{d7}y \u{bf}Qu\u{e9}? \u{1F600}\t\r\n"
        .as_bytes()
        .to_vec();
    // Broken UTF-8: a stray continuation byte, a truncated sequence, bytes $F8-$FF, DEL.
    text.extend_from_slice(&[0x80, b'a', 0xE2, 0x80, b'b', 0xF8, 0xFF, 0x7F, 0xC3]);
    for b in 0u8..=255 {
        text.push(b);
    }
    let got = run(&exe, &["--fold"], &text);
    // Fed one byte at a time: the state must carry across calls, as across tokens.
    let mut folder = AsciiFolder::new();
    let mut want = String::new();
    for &b in &text {
        folder.push(&[b], &mut want);
    }
    assert_eq!(String::from_utf8(got).unwrap(), want);
}

//! `ssnail tokenize` and `ssnail tokcheck` on llama.cpp's vocab GGUFs and on
//! tables-only images built from them (vocab-only GGUFs cannot be converted).

mod common;

use common::{ssnail, text};
use ssnail_testkit::llama_vocab;
use ssnail_tokenizer::image::tables_only_image;
use ssnail_tokenizer::{ImageTables, Vocab};
use std::path::Path;

/// An image file (header + payload) holding only the tokenizer tables.
fn write_tables_image(gguf: &Path, out: &Path) {
    let g = ssnail_gguf::Gguf::open(gguf).unwrap();
    let file = tables_only_image(&ImageTables::build(&Vocab::from_gguf(&g).unwrap()));
    std::fs::write(out, file).unwrap();
}

#[test]
fn tokenize_gguf_prints_llama_tokenize_lines_and_ids() {
    let spm = llama_vocab::gguf("llama-spm");
    let (out, _) = text(&ssnail(&["tokenize", spm.to_str().unwrap(), "Hello world"]));
    assert_eq!(
        out,
        "     1 -> '<s>'\n 15043 -> ' Hello'\n  3186 -> ' world'\n"
    );
    let o = ssnail(&[
        "tokenize",
        "--ids",
        "--no-bos",
        spm.to_str().unwrap(),
        "Hello world",
    ]);
    assert!(o.status.success());
    assert_eq!(text(&o).0, "15043,3186\n");
    let bert = llama_vocab::gguf("bert-bge");
    let (out, _) = text(&ssnail(&[
        "tokenize",
        "--ids",
        bert.to_str().unwrap(),
        "snake_case",
    ]));
    // [CLS] snake _ case [SEP]: BERT splits '_' off as punctuation.
    assert_eq!(out, "101,7488,1035,2553,102\n");
}

#[test]
fn tokcheck_passes_on_matching_tables_and_image_tokenize_agrees() {
    let dir = tempfile::tempdir().unwrap();
    for vocab in ["llama-spm", "gpt-2", "bert-bge"] {
        let gguf = llama_vocab::gguf(vocab);
        let img = dir.path().join(format!("{vocab}.ssnail"));
        write_tables_image(&gguf, &img);
        let o = ssnail(&["tokcheck", img.to_str().unwrap(), gguf.to_str().unwrap()]);
        let (out, err) = text(&o);
        println!("{vocab}: {out}{err}");
        assert!(o.status.success(), "{vocab}: {out}{err}");
        assert!(out.starts_with("6/6 lines identical ("), "{vocab}: {out}");
        assert!(out.contains("index probes per token"));

        let line = "It's 3 o'clock:  tea at jane@example.com";
        let a = ssnail(&["tokenize", "--ids", img.to_str().unwrap(), line]);
        let b = ssnail(&["tokenize", "--ids", gguf.to_str().unwrap(), line]);
        assert!(a.status.success() && b.status.success());
        assert_eq!(text(&a).0, text(&b).0, "{vocab}");
    }
}

#[test]
fn tokcheck_reports_differences_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = llama_vocab::gguf("gpt-2");
    let img = dir.path().join("gpt2.ssnail");
    write_tables_image(&gguf, &img);
    // Non-ASCII text: the image sees '?', the GGUF the real characters.
    let txt = dir.path().join("t.txt");
    std::fs::write(&txt, "plain line\n\n  \ncafé crème\n").unwrap();
    let o = ssnail(&[
        "tokcheck",
        img.to_str().unwrap(),
        gguf.to_str().unwrap(),
        txt.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert!(!o.status.success());
    assert!(out.contains("DIFFER: café crème"), "{out}");
    assert!(out.contains("1/2 lines identical"), "{out}");
    assert_eq!(err.trim(), "ssnail: 1 of 2 lines differ");

    // The wrong GGUF for the image: one clear error line.
    let o = ssnail(&[
        "tokcheck",
        img.to_str().unwrap(),
        llama_vocab::gguf("bert-bge").to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not the image's GGUF"), "{err}");

    // A GGUF where an image is expected.
    let o = ssnail(&["tokcheck", gguf.to_str().unwrap(), gguf.to_str().unwrap()]);
    assert!(text(&o).1.contains("not an SSNAIL image"));

    // A truncated image.
    let bytes = std::fs::read(&img).unwrap();
    std::fs::write(&img, &bytes[..bytes.len() / 2]).unwrap();
    let o = ssnail(&["tokenize", img.to_str().unwrap(), "hi"]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("truncated image"), "{err}");
}

/// A real model end to end: SmolLM2-135M converted by `ssnail convert`, then
/// `ssnail tokcheck` on the built-in sample and on llama.cpp's GPT-2 test
/// strings (plain-ASCII lines).
#[test]
fn tokcheck_on_converted_smollm2() {
    let gguf = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("smol.ssnail");
    let (g, i) = (gguf.to_str().unwrap(), img.to_str().unwrap());
    let o = ssnail(&["convert", g, "-o", i, "--wtype", "q4_0", "--mem-mb", "128"]);
    assert!(o.status.success(), "{:?}", text(&o));

    let o = ssnail(&["tokcheck", i, g]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert!(out.starts_with("6/6 lines identical"), "{out}");

    let inp =
        std::fs::read_to_string(llama_vocab::gguf("gpt-2").with_extension("gguf.inp")).unwrap();
    let lines: Vec<&str> = inp
        .lines()
        .filter(|l| {
            *l != "__ggml_vocab_test__" && l.bytes().all(|b| b == 9 || (32..127).contains(&b))
        })
        .collect();
    let txt = dir.path().join("lines.txt");
    std::fs::write(&txt, lines.join("\n")).unwrap();
    let o = ssnail(&["tokcheck", i, g, txt.to_str().unwrap()]);
    let (out, err) = text(&o);
    println!("{out}");
    assert!(o.status.success(), "{out}{err}");
    let n = lines.iter().filter(|l| !l.trim().is_empty()).count();
    assert!(
        out.starts_with(&format!("{n}/{n} lines identical")),
        "{out}"
    );
}

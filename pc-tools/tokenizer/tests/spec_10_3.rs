//! §10.3: on the §10 test vocabularies (SentencePiece, byte-level BPE,
//! WordPiece), the image tokenizer equals the reference tokenizer on the
//! sample lines, and both give the tokenizations §10.1/§10.2 name.

mod common;

use ssnail_testkit::models::{self, ModelOpts};
use ssnail_tokenizer::image::tables_only_memory;
use ssnail_tokenizer::{GgufTokenizer, ImageTables, ImageTokenizer, TokModel, Vocab};

fn vocab_of(opts: &ModelOpts) -> Vocab {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    models::write(&path, &models::build(opts));
    Vocab::from_gguf(&ssnail_gguf::Gguf::open(&path).unwrap()).unwrap()
}

/// Pieces as text, specials by name.
fn pieces(v: &Vocab, ids: &[u32]) -> Vec<String> {
    ids.iter().map(|&i| v.tokens[i as usize].clone()).collect()
}

/// Image (first = true) vs reference (with specials) on every line; returns
/// the reference tokenizer.
fn all_lines_equal(v: &Vocab) -> GgufTokenizer {
    let mem = tables_only_memory(&ImageTables::build(v));
    let image = ImageTokenizer::new(&mem).unwrap();
    let reference = GgufTokenizer::new(v.clone()).unwrap();
    let lines = ssnail_tokenizer::CHECK_SAMPLE
        .lines()
        .chain(common::SPEC_10_3_LINES);
    let mut n = 0;
    for line in lines {
        let want = reference.encode(line, true);
        assert_eq!(image.encode(line, true), want, "{:?}: {line:?}", v.model);
        if v.model != TokModel::WordPiece {
            assert_eq!(image.encode(line, false), reference.encode(line, false));
        }
        n += 1;
    }
    println!("{:?}: {n}/{n} lines identical", v.model);
    reference
}

#[test]
fn spm_vocabulary() {
    let v = vocab_of(&ModelOpts::llama());
    let r = all_lines_equal(&v);
    assert_eq!(
        pieces(&v, &r.encode("the cat sat", true)),
        ["<s>", "▁the", "▁cat", "▁sat"]
    );
    // Empty text: BOS only (no lone ▁).
    assert_eq!(pieces(&v, &r.encode("", true)), ["<s>"]);
}

#[test]
fn bpe_vocabulary_and_bos_rule() {
    let text = "once upon a time the cat";
    let want = ["once", "Ġupon", "Ġa", "Ġtime", "Ġthe", "Ġcat"];
    for add_bos in [None, Some(false), Some(true)] {
        let v = vocab_of(&ModelOpts {
            add_bos,
            ..ModelOpts::gpt2()
        });
        let r = all_lines_equal(&v);
        let got = pieces(&v, &r.encode(text, true));
        if add_bos == Some(true) {
            assert_eq!(got[0], "<|endoftext|>");
            assert_eq!(&got[1..], want);
        } else {
            assert_eq!(got, want, "add_bos {add_bos:?}");
        }
        // The vocab table keeps raw bytes: token $E2 is the byte $E2.
        let t = ImageTables::build(&v);
        let off = |i: usize| {
            u32::from_le_bytes(t.vocab_table[4 * i..4 * i + 4].try_into().unwrap()) as usize
        };
        assert_eq!(&t.vocab_table[off(0xE2)..off(0xE3)], [0xE2]);
    }
}

#[test]
fn wordpiece_vocabulary() {
    let v = vocab_of(&ModelOpts::bert());
    let r = all_lines_equal(&v);
    let got = pieces(
        &v,
        &r.encode("Throw the lamp at the troll, playing cats.", true),
    );
    assert_eq!(
        got,
        [
            "[CLS]", "▁throw", "▁the", "▁lamp", "▁at", "▁the", "▁troll", "▁,", "▁play", "ing",
            "▁cat", "s", "▁.", "[SEP]"
        ]
    );
}

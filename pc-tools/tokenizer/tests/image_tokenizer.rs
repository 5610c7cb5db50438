//! The image tokenizer, reading only the tables (in a tables-only memory
//! image built from `ImageTables`, the bytes the converter places), against
//! the reference tokenizers on llama.cpp's vocabularies and test strings.

use ssnail_testkit::llama_vocab;
use ssnail_tokenizer::image::{gpt2_split, tables_only_memory};
use ssnail_tokenizer::tables::is_index_byte;
use ssnail_tokenizer::{GgufTokenizer, ImageTables, ImageTokenizer, TokModel, Vocab};

mod common;

/// Plain-ASCII texts: whole cases, and every line of every case.
fn ascii_texts(vocab: &str) -> Vec<String> {
    let plain = |s: &str| s.bytes().all(is_index_byte);
    let mut texts: Vec<String> = llama_vocab::inputs(vocab)
        .into_iter()
        .filter(|s| plain(s))
        .collect();
    for case in llama_vocab::inputs(vocab) {
        for line in case.split('\n') {
            if plain(line) && !texts.iter().any(|t| t == line) {
                texts.push(line.to_string());
            }
        }
    }
    // §10.3's sample lines, and a few more.
    let more = [
        "two\n\nLine",
        "snake_case_name __init__ a_b",
        "tabs\t\tbefore\t \tword",
    ];
    for s in common::SPEC_10_3_LINES.into_iter().chain(more) {
        texts.push(s.to_string());
    }
    texts
}

fn compare(vocab: &str) {
    let g = ssnail_gguf::Gguf::open(llama_vocab::gguf(vocab)).unwrap();
    let v = Vocab::from_gguf(&g).unwrap();
    let mem = tables_only_memory(&ImageTables::build(&v));
    let reference = GgufTokenizer::new(v.clone()).unwrap();
    let image = ImageTokenizer::new(&mem).unwrap();
    let mut texts = ascii_texts(vocab);
    texts.extend(common::word_soup(2000));
    let (mut same, mut n, mut tokens) = (0, 0, 0);
    for text in &texts {
        for first in [false, true] {
            // WordPiece always wraps in [CLS] … [SEP].
            let special = first || v.model == TokModel::WordPiece;
            let want = reference.encode(text, special);
            let got = image.encode(text, first);
            n += 1;
            tokens += got.len();
            if got == want {
                same += 1;
            } else {
                println!(
                    "{vocab} DIFFER {text:?} first={first}\n  ref   {want:?}\n  image {got:?}"
                );
            }
        }
    }
    println!(
        "{vocab}: {same}/{n} encodings identical (llama.cpp lines + word soup) ({} texts, {tokens} tokens, {:.1} probes/token)",
        texts.len(),
        image.probes() as f64 / tokens.max(1) as f64
    );
    assert_eq!(same, n);
}

#[test]
fn llama_spm_image_equals_reference() {
    compare("llama-spm");
}

#[test]
fn gpt2_image_equals_reference() {
    compare("gpt-2");
}

#[test]
fn bert_bge_image_equals_reference() {
    compare("bert-bge");
}

/// BERT's text cleaning drops control bytes (all but tab, newline, CR) without splitting the
/// word around them; DEL is a control byte too.
#[test]
fn bert_bge_control_bytes_are_dropped_as_by_the_reference() {
    let g = ssnail_gguf::Gguf::open(llama_vocab::gguf("bert-bge")).unwrap();
    let v = Vocab::from_gguf(&g).unwrap();
    let mem = tables_only_memory(&ImageTables::build(&v));
    let reference = GgufTokenizer::new(v).unwrap();
    let image = ImageTokenizer::new(&mem).unwrap();
    for text in [
        "ab\x01cd",
        "x\x7fy z",
        "\x1b[1mbold\x1b[0m text",
        "a\x0bb\x0cc d\x00e",
        "tab\there\x02 and\r\nlines\x1f",
        "\x01\x02\x03",
    ] {
        assert_eq!(
            image.encode(text, true),
            reference.encode(text, true),
            "{text:?}"
        );
    }
    assert_eq!(image.encode("ab\x01cd", true), image.encode("abcd", true));
}

#[test]
fn starcoder_image_equals_reference() {
    compare("starcoder");
}

/// The hand-written GPT-2 pre-split equals the real regex on ASCII text.
#[test]
fn gpt2_split_equals_regex() {
    let re = fancy_regex::Regex::new(
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    )
    .unwrap();
    let alphabet = b"ab Z09 '\n\t\r\x0b\x0c.,!_-sdtmlrve  \n";
    let mut state = 0x2545F4914F6CDD1Du64;
    let mut checked = 0;
    for len in 0..40 {
        for _ in 0..250 {
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            let text = std::str::from_utf8(&s).unwrap();
            let want: Vec<&str> = re.find_iter(text).map(|m| m.unwrap().as_str()).collect();
            let got: Vec<&str> = gpt2_split(&s, true)
                .iter()
                .map(|c| std::str::from_utf8(c).unwrap())
                .collect();
            assert_eq!(got, want, "text {text:?}");
            checked += 1;
        }
    }
    println!("gpt2_split: {checked} random ASCII strings split as the regex does");
}

/// With digits split off first (SmolLM2's "smollm" pre-tokenizer): the
/// regex runs on the text between digits, and every digit is its own chunk.
#[test]
fn gpt2_split_digit_mode_equals_regex_between_digits() {
    let re = fancy_regex::Regex::new(
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    )
    .unwrap();
    let mut checked = 0;
    for text in common::word_soup(3000) {
        let mut want: Vec<String> = Vec::new();
        let mut rest = text.as_str();
        while !rest.is_empty() {
            let cut = rest
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(rest.len());
            want.extend(
                re.find_iter(&rest[..cut])
                    .map(|m| m.unwrap().as_str().to_string()),
            );
            if cut < rest.len() {
                want.push(rest[cut..cut + 1].to_string());
                rest = &rest[cut + 1..];
            } else {
                rest = "";
            }
        }
        // The image split keeps a digit run whole (merges decide); compare per digit.
        let mut got: Vec<String> = Vec::new();
        for c in gpt2_split(text.as_bytes(), false) {
            let c = std::str::from_utf8(c).unwrap();
            if c.bytes().all(|b| b.is_ascii_digit()) {
                got.extend(c.chars().map(String::from));
            } else {
                got.push(c.to_string());
            }
        }
        assert_eq!(got, want, "text {text:?}");
        checked += 1;
    }
    println!("gpt2_split (digits apart): {checked} texts split as digits + regex");
}

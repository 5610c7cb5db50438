//! llama.cpp's tokenizer test cases (testdata/, from its test-tokenizer-0):
//! the reference tokenizers must reproduce every expected id list.

use ssnail_tokenizer::{GgufTokenizer, Vocab};
use std::path::PathBuf;

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

/// (input, expected ids) as test-tokenizer-0 reads them: inputs split on
/// "\n__ggml_vocab_test__\n", one output line each.
pub fn cases(vocab: &str) -> Vec<(String, Vec<u32>)> {
    let inp = std::fs::read_to_string(testdata(&format!("ggml-vocab-{vocab}.gguf.inp"))).unwrap();
    let out = std::fs::read_to_string(testdata(&format!("ggml-vocab-{vocab}.gguf.out"))).unwrap();
    let sep = "\n__ggml_vocab_test__\n";
    let mut inputs = Vec::new();
    let mut rest = inp.as_str();
    while !rest.is_empty() {
        match rest.find(sep) {
            Some(p) => {
                inputs.push(rest[..p].to_string());
                rest = &rest[p + sep.len()..];
            }
            None => {
                inputs.push(rest.to_string());
                rest = "";
            }
        }
    }
    let outputs: Vec<Vec<u32>> = out
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(
        inputs.len(),
        outputs.len(),
        "{vocab}: .inp/.out case counts differ"
    );
    inputs.into_iter().zip(outputs).collect()
}

fn check(vocab: &str) {
    let g = ssnail_gguf::Gguf::open(testdata(&format!("ggml-vocab-{vocab}.gguf"))).unwrap();
    let tok = GgufTokenizer::new(Vocab::from_gguf(&g).unwrap()).unwrap();
    let cases = cases(vocab);
    let mut pass = 0;
    for (text, want) in &cases {
        let got = tok.encode(text, false);
        if &got == want {
            pass += 1;
        } else {
            println!("{vocab} FAIL {text:?}\n  want {want:?}\n  got  {got:?}");
        }
    }
    println!("{vocab}: {pass}/{} llama.cpp cases identical", cases.len());
    assert_eq!(pass, cases.len(), "{vocab}: {pass}/{} cases", cases.len());
    assert!(cases.len() >= 40);
}

#[test]
fn llama_spm_all_cases() {
    check("llama-spm");
}

#[test]
fn gpt2_all_cases() {
    check("gpt-2");
}

#[test]
fn bert_bge_all_cases() {
    check("bert-bge");
}

//! A real model's vocabulary: SmolLM2-135M-Instruct (49152-token GPT-2 BPE
//! with the "smollm" pre-tokenizer, which splits digits). The image
//! tokenizer must equal the reference on plain-ASCII text with the same
//! tables; the reference on a few hand-checked ids.

use ssnail_tokenizer::image::tables_only_memory;
use ssnail_tokenizer::tables::is_index_byte;
use ssnail_tokenizer::{GgufTokenizer, ImageTables, ImageTokenizer, Vocab};
use std::path::PathBuf;

mod common;

fn smollm2() -> PathBuf {
    ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2)
}

#[test]
fn smollm2_image_equals_reference() {
    let g = ssnail_gguf::Gguf::open(smollm2()).unwrap();
    let v = Vocab::from_gguf(&g).unwrap();
    assert_eq!(v.n_vocab(), 49152);
    let tables = ImageTables::build(&v);
    assert_eq!(tables.block.begin, u32::MAX, "add_bos_token is false");
    let mem = tables_only_memory(&tables);
    let image = ImageTokenizer::new(&mem).unwrap();
    let reference = GgufTokenizer::new(v).unwrap();

    // Digits are split one by one; a space before a number stays alone.
    assert_eq!(
        reference.encode("it's 2024", true),
        [269, 506, 216, 34, 32, 34, 36]
    );

    let mut texts: Vec<String> = ssnail_tokenizer::CHECK_SAMPLE
        .lines()
        .map(String::from)
        .collect();
    let inp = std::fs::read_to_string(
        ssnail_testkit::llama_vocab::gguf("gpt-2").with_extension("gguf.inp"),
    )
    .unwrap();
    for case in inp.split("\n__ggml_vocab_test__\n") {
        texts.extend(
            case.split('\n')
                .filter(|l| l.bytes().all(is_index_byte))
                .map(String::from),
        );
        if case.bytes().all(is_index_byte) {
            texts.push(case.to_string());
        }
    }
    texts.extend(common::word_soup(3000));
    let (mut same, mut tokens) = (0, 0);
    for t in &texts {
        let want = reference.encode(t, true);
        let got = image.encode(t, true);
        tokens += got.len();
        if got == want {
            same += 1;
        } else {
            println!("DIFFER {t:?}\n  ref   {want:?}\n  image {got:?}");
        }
    }
    println!(
        "smollm2: {same}/{} texts identical ({tokens} tokens, {:.1} probes/token)",
        texts.len(),
        image.probes() as f64 / tokens as f64
    );
    assert_eq!(same, texts.len());
}

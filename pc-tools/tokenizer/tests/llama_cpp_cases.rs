//! llama.cpp's tokenizer test cases (testdata/, from its test-tokenizer-0):
//! the reference tokenizers must reproduce every expected id list.

use ssnail_testkit::llama_vocab;
use ssnail_tokenizer::{GgufTokenizer, Vocab};

fn check(vocab: &str) {
    let g = ssnail_gguf::Gguf::open(llama_vocab::gguf(vocab)).unwrap();
    let tok = GgufTokenizer::new(Vocab::from_gguf(&g).unwrap()).unwrap();
    let cases = llama_vocab::cases(vocab);
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

/// Digits split off before the GPT-2 regex (the path SmolLM2 takes).
#[test]
fn starcoder_all_cases() {
    check("starcoder");
}

/// User-defined tokens (runs of spaces) split out before the pre-tokenizer.
#[test]
fn mpt_all_cases() {
    check("mpt");
}

/// The tables of the real vocabularies: block fields and landmarks.
#[test]
fn tables_of_real_vocabularies() {
    use ssnail_format::tokblock::{TF_LOWERCASE, TOK_NONE};
    use ssnail_tokenizer::ImageTables;
    let tables = |name: &str| {
        let g = ssnail_gguf::Gguf::open(llama_vocab::gguf(name)).unwrap();
        let v = Vocab::from_gguf(&g).unwrap();
        (ImageTables::build(&v), v)
    };
    let byte_entry = |t: &ImageTables, b: u8| {
        u32::from_le_bytes(t.byte_table[4 * b as usize..][..4].try_into().unwrap())
    };

    let (t, v) = tables("llama-spm");
    assert_eq!(
        (t.block.kind, t.block.flags, t.block.n_vocab),
        (0, 0, 32000)
    );
    assert_eq!((t.block.begin, t.block.end, t.block.unk), (1, TOK_NONE, 0));
    assert_eq!(v.tokens[byte_entry(&t, b' ') as usize], "▁");
    assert_eq!(v.tokens[byte_entry(&t, 0xE2) as usize], "<0xE2>");
    assert_eq!(t.priority.len(), 2 * 32000);

    let (t, v) = tables("gpt-2");
    assert_eq!(
        (t.block.kind, t.block.flags, t.block.n_vocab),
        (1, 0, 50257)
    );
    // No add_bos_token: GPT-2 gets no BOS.
    assert_eq!((t.block.begin, t.block.end), (TOK_NONE, TOK_NONE));
    assert_eq!(v.tokens[byte_entry(&t, b' ') as usize], "Ġ");
    // Non-ASCII bytes have no plain-ASCII start token.
    assert_eq!(byte_entry(&t, 0xE2), TOK_NONE);
    // 50257 > $FFFE is false: u16 priorities; "Ġt" is merge rank 0.
    let p = |id: usize| u16::from_le_bytes([t.priority[2 * id], t.priority[2 * id + 1]]);
    assert_eq!(p(v.find_text("Ġt").unwrap() as usize), 0);
    assert_eq!(p(v.find_text("Ġthe").unwrap() as usize), 6);

    let (t, _) = tables("bert-bge");
    assert_eq!((t.block.kind, t.block.flags), (2, TF_LOWERCASE));
    assert_eq!((t.block.begin, t.block.end, t.block.unk), (101, 102, 100));
    println!("tables: llama-spm, gpt-2, bert-bge block fields as §2.1");
}

/// §10.3 folding across byte-split tokens: GPT-2 splits these characters'
/// UTF-8 across tokens; folding the tokens' vocab bytes one token at a time
/// gives the §2.5 example.
#[test]
fn ascii_folding_across_gpt2_tokens() {
    use ssnail_tokenizer::AsciiFolder;
    let g = ssnail_gguf::Gguf::open(llama_vocab::gguf("gpt-2")).unwrap();
    let v = Vocab::from_gguf(&g).unwrap();
    let tok = GgufTokenizer::new(v.clone()).unwrap();
    let ids = tok.encode("“Hi” — café… ☃ soon’!", false);
    let split = ids
        .iter()
        .filter(|&&i| std::str::from_utf8(&v.token_bytes(i as usize)).is_err())
        .count();
    assert!(split >= 2, "some tokens hold partial characters");
    let mut folder = AsciiFolder::new();
    let mut out = String::new();
    for &i in &ids {
        folder.push(&v.token_bytes(i as usize), &mut out);
    }
    assert_eq!(out, "\"Hi\" - cafe... ? soon'!");
}

//! Bad or unsupported tokenizer metadata: one clear error naming the file.

use ssnail_gguf::writer::GgufWriter;
use ssnail_tokenizer::{GgufTokenizer, Vocab};

fn open(w: &GgufWriter) -> (tempfile::TempDir, Result<Vocab, String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.gguf");
    w.write(&path).unwrap();
    let g = ssnail_gguf::Gguf::open(&path).unwrap();
    let r = Vocab::from_gguf(&g).map_err(|e| e.to_string());
    (dir, r)
}

fn base(model: &str) -> GgufWriter {
    let mut w = GgufWriter::new();
    w.meta_str("general.architecture", "llama")
        .meta_str("tokenizer.ggml.model", model)
        .meta_strs("tokenizer.ggml.tokens", &["<unk>", "a", "b", "ab"]);
    w
}

#[test]
fn errors_name_the_file_and_the_problem() {
    let mut w = GgufWriter::new();
    w.meta_str("general.architecture", "llama");
    let (_d, r) = open(&w);
    let e = r.unwrap_err();
    assert!(
        e.contains("bad.gguf: ") && e.contains("no tokenizer"),
        "{e}"
    );

    let (_d, r) = open(&base("rwkv"));
    let e = r.unwrap_err();
    assert!(e.contains("unsupported tokenizer model 'rwkv'"), "{e}");

    let mut w = base("llama");
    w.meta_f32s("tokenizer.ggml.scores", &[0.0, 1.0]);
    let (_d, r) = open(&w);
    assert!(r.unwrap_err().contains("scores has 2 entries for 4 tokens"));

    let mut w = base("llama");
    w.meta_u32("tokenizer.ggml.bos_token_id", 9);
    let (_d, r) = open(&w);
    assert!(r
        .unwrap_err()
        .contains("bos_token_id = 9 is outside the 4-token vocabulary"));

    let (_d, r) = open(&base("gpt2"));
    assert!(r.unwrap_err().contains("without tokenizer.ggml.merges"));

    let mut w = base("gpt2");
    w.meta_strs("tokenizer.ggml.merges", &["a b"])
        .meta_str("tokenizer.ggml.pre", "llama-bpe");
    let (_d, r) = open(&w);
    let e = GgufTokenizer::new(r.unwrap()).err().unwrap();
    assert!(
        e.contains("pre-tokenizer 'llama-bpe' is not supported"),
        "{e}"
    );

    // A merge whose result is not a token.
    let mut w = base("gpt2");
    w.meta_strs("tokenizer.ggml.merges", &["b a"]);
    let (_d, r) = open(&w);
    let e = GgufTokenizer::new(r.unwrap()).err().unwrap();
    assert!(e.starts_with("BPE vocabulary:"), "{e}");
}

//! llama.cpp's vocabulary test files, committed in pc-tools/tokenizer/testdata:
//! `ggml-vocab-NAME.gguf` and the inputs (`.inp`) and expected ids (`.out`)
//! that llama.cpp's test-tokenizer-0 checks on it.

use std::path::{Path, PathBuf};

/// `ggml-vocab-NAME.gguf` (NAME: llama-spm, gpt-2, bert-bge, mpt, starcoder).
pub fn gguf(name: &str) -> PathBuf {
    // This crate sits next to the tokenizer's, in pc-tools/.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("pc-tools")
        .join("tokenizer/testdata")
        .join(format!("ggml-vocab-{name}.gguf"))
}

/// The test strings of `ggml-vocab-NAME.gguf.inp` as test-tokenizer-0 reads
/// them: each is followed by the line `__ggml_vocab_test__`; some are empty.
pub fn inputs(name: &str) -> Vec<String> {
    let path = gguf(name).with_extension("gguf.inp");
    let inp = std::fs::read_to_string(&path).unwrap();
    let mut v: Vec<String> = inp
        .split("\n__ggml_vocab_test__\n")
        .map(str::to_string)
        .collect();
    // The file ends with the separator: no trailing case.
    assert_eq!(v.pop().as_deref(), Some(""), "{}", path.display());
    v
}

/// (input, expected ids): [`inputs`] with the lines of `.out`, one per input.
pub fn cases(name: &str) -> Vec<(String, Vec<u32>)> {
    let inputs = inputs(name);
    let out = std::fs::read_to_string(gguf(name).with_extension("gguf.out")).unwrap();
    let outputs: Vec<Vec<u32>> = out
        .lines()
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(
        inputs.len(),
        outputs.len(),
        "{name}: .inp/.out case counts differ"
    );
    inputs.into_iter().zip(outputs).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn bert_bge_cases_pair_inputs_with_ids() {
        let cases = super::cases("bert-bge");
        assert!(cases.len() >= 40);
        assert!(cases
            .iter()
            .any(|(text, ids)| text.is_empty() && ids.is_empty()));
        // Only blank inputs tokenize to nothing.
        assert!(cases
            .iter()
            .all(|(text, ids)| !ids.is_empty() || text.trim().is_empty()));
    }
}

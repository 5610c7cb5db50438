//! The model's corpus and vocabularies (`model/`, docs in model/README.md).
//!
//! * The split keeps its rule: every fact has training, dev and test
//!   phrasings, and phrasings that differ only in case, spacing or
//!   punctuation never sit in two sets.
//! * Each trained SentencePiece vocabulary (`model/tokenizer/tokN.vocab`),
//!   taken as a llama GGUF stores it, gives SentencePiece's own ids
//!   (`expected_ids.tsv`, written by `train_vocab.py`) in the reference
//!   tokenizer (llama.cpp's algorithm) and in the image tokenizer over the
//!   image's tables (what the MEGA65 program runs), for every held-out
//!   question, every answer and all of printable ASCII.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use ssnail_tokenizer::image::tables_only_memory;
use ssnail_tokenizer::vocab::token_type;
use ssnail_tokenizer::{GgufTokenizer, ImageTables, ImageTokenizer, TokModel, Vocab};

fn model_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../model")
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// (fact, question, answer) rows of a split file, header checked.
fn split_rows(name: &str) -> Vec<(String, String, String)> {
    let text = read(model_dir().join("corpus").join(format!("{name}.tsv")));
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("fact\tquestion\tanswer"),
        "{name}.tsv header"
    );
    lines
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 3, "{name}.tsv: {l:?}");
            (c[0].to_string(), c[1].to_string(), c[2].to_string())
        })
        .collect()
}

/// The group a phrasing belongs to: its runs of letters and digits, lower case
/// (split.py's `group_key`).
fn group_key(q: &str) -> String {
    q.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_split_holds_out_phrasings_of_every_fact_and_never_a_retyped_training_question() {
    let mut sets: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    let mut group_set: BTreeMap<String, &str> = BTreeMap::new();
    let mut answer: BTreeMap<String, String> = BTreeMap::new();
    let mut n = 0;
    let splits = ["train", "dev", "test"];
    for s in splits {
        for (fact, q, a) in split_rows(s) {
            n += 1;
            assert!(
                q.bytes().all(|b| (32..127).contains(&b)),
                "{s}: {q:?} is not printable ASCII"
            );
            assert!(a.ends_with('.'), "{s}: answer {a:?} has no full stop");
            let prev = answer.entry(fact.clone()).or_insert_with(|| a.clone());
            assert_eq!(*prev, a, "fact {fact} has two answers");
            sets.entry(fact).or_default().insert(s);
            let other = *group_set.entry(group_key(&q)).or_insert(s);
            assert_eq!(
                other, s,
                "{q:?} is in {s}, a phrasing with the same words in {other}"
            );
        }
    }
    for (fact, in_sets) in &sets {
        assert_eq!(in_sets.len(), 3, "fact {fact} is only in {in_sets:?}");
    }
    let jsonl = read(model_dir().join("corpus/facts.jsonl"));
    assert_eq!(
        jsonl.lines().count(),
        n,
        "facts.jsonl and the split files differ in length"
    );
    println!(
        "{} facts, {n} phrasings, {} groups",
        sets.len(),
        group_set.len()
    );
    assert!(sets.len() >= 100, "only {} facts", sets.len());
}

/// A SentencePiece `.vocab` (piece TAB score, in id order) as llama.cpp's
/// converters put it into a GGUF: unk 0, BOS 1, EOS 2, byte pieces typed BYTE.
fn sentencepiece_vocab(name: &str) -> Vocab {
    let text = read(model_dir().join("tokenizer").join(format!("{name}.vocab")));
    let (mut tokens, mut scores, mut types) = (vec![], vec![], vec![]);
    for (id, line) in text.lines().enumerate() {
        let (piece, score) = line.rsplit_once('\t').expect("piece TAB score");
        let ty = match (id, piece) {
            (0, "<unk>") => token_type::UNKNOWN,
            (1, "<s>") | (2, "</s>") => token_type::CONTROL,
            (0..=2, _) => panic!("{name}.vocab: id {id} is {piece:?}"),
            _ if piece.len() == 6 && piece.starts_with("<0x") && piece.ends_with('>') => {
                token_type::BYTE
            }
            _ => token_type::NORMAL,
        };
        tokens.push(piece.to_string());
        scores.push(score.parse::<f32>().expect("score"));
        types.push(ty);
    }
    Vocab {
        model: TokModel::Spm,
        pre: None,
        tokens,
        scores,
        types,
        merges: vec![],
        bos_id: Some(1),
        eos_id: Some(2),
        unk_id: Some(0),
        sep_id: None,
        cls_id: None,
        pad_id: None,
        add_bos: Some(true),
        add_eos: Some(false),
        add_space_prefix: Some(true),
    }
}

#[test]
fn each_model_vocabulary_tokenizes_the_corpus_as_sentencepiece_does() {
    let text = read(model_dir().join("tokenizer/expected_ids.tsv"));
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("header").split('\t').collect();
    assert_eq!(head[0], "text");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert!(rows.iter().all(|r| r.len() == head.len()));
    assert!(
        head.len() >= 5,
        "expected the vocabularies of 128, 192, 256, 384 pieces and more"
    );
    for (col, name) in head.iter().enumerate().skip(1) {
        let v = sentencepiece_vocab(name);
        let mem = tables_only_memory(&ImageTables::build(&v));
        let reference = GgufTokenizer::new(v.clone()).unwrap();
        let image = ImageTokenizer::new(&mem).unwrap();
        let mut tokens = 0;
        for r in &rows {
            let want: Vec<u32> = r[col].split(' ').map(|x| x.parse().unwrap()).collect();
            assert_eq!(
                reference.encode(r[0], false),
                want,
                "{name}, reference: {:?}",
                r[0]
            );
            assert_eq!(image.encode(r[0], false), want, "{name}, image: {:?}", r[0]);
            let with_bos: Vec<u32> = [1].into_iter().chain(want.iter().copied()).collect();
            assert_eq!(
                reference.encode(r[0], true),
                with_bos,
                "{name}, reference + BOS: {:?}",
                r[0]
            );
            assert_eq!(
                image.encode(r[0], true),
                with_bos,
                "{name}, image + BOS: {:?}",
                r[0]
            );
            tokens += want.len();
        }
        println!(
            "{name}: {} texts ({tokens} tokens) identical in SentencePiece, reference and image",
            rows.len()
        );
    }
}

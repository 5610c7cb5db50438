//! The shipped model (model/ssnail-qa.gguf) against its records:
//! * converted and run greedily on ssnail_core in hardware numerics (the bits of the FPGA core
//!   and of the MEGA65's software core), it gives the ids recorded in model/answers/hw.tsv for
//!   every corpus question (`make model` wrote them);
//! * llama.cpp (built from the vendored source; its answers recorded in
//!   model/answers/llama-cpp.tsv by model/llama-cpp/answers.sh, since CI has no llama.cpp
//!   build) gives the same greedy ids as the float reference (`ssnail run --float`) on every
//!   question whose greedy choices the float reference makes by a clear margin (`CLEAR`).
//!
//! Both comparisons are shown to fail: with one weight changed and with one recorded id changed.

use ssnail_core::Numerics;
use ssnail_gguf::Gguf;
use ssnail_train::eval::Runner;
use std::path::{Path, PathBuf};

const CTX: u32 = 64;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn gguf() -> PathBuf {
    root().join("model/ssnail-qa.gguf")
}

/// (question, ids) of a record: hw.tsv (set, question, expected, ids, answer, exact) or
/// llama-cpp.tsv (question, ids, text).
fn record(name: &str) -> Vec<(String, Vec<u32>)> {
    let p = root().join("model/answers").join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let hw = name == "hw.tsv";
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let (q, ids) = if hw { (f[1], f[3]) } else { (f[0], f[1]) };
            let ids = ids.split(',').map(|x| x.parse().unwrap()).collect();
            (q.to_string(), ids)
        })
        .collect()
}

/// The questions whose greedy ids differ from the record's.
fn mismatches(run: &mut Runner, rec: &[(String, Vec<u32>)]) -> Vec<String> {
    rec.iter()
        .filter(|(q, ids)| &run.answer(q).unwrap().ids != ids)
        .map(|(q, _)| q.clone())
        .collect()
}

#[test]
fn the_committed_gguf_converts_and_gives_the_recorded_answers_under_hardware_numerics() {
    let rec = record("hw.tsv");
    assert!(rec.len() > 1500, "{} recorded answers", rec.len());
    let mut run = Runner::new(&gguf(), CTX, Numerics::Hardware).unwrap();
    let bad = mismatches(&mut run, &rec);
    assert!(
        bad.is_empty(),
        "{} answers differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

/// The float reference's greedy choices are decided by at least this much (logit units) on
/// every answer position where llama.cpp must agree: llama.cpp quantises each matrix input to
/// Q8_0 (as the hardware does) and the float reference does not, so a choice between two
/// nearly equal logits may go either way.
const CLEAR: f32 = 0.5;

#[test]
fn llama_cpp_gives_the_float_references_greedy_answers_wherever_its_choices_are_clear() {
    let rec = record("llama-cpp.tsv");
    assert!(rec.len() > 1500, "{} recorded answers", rec.len());
    let mut run = Runner::new(&gguf(), CTX, Numerics::Float).unwrap();
    let (mut clear, mut same, mut bad) = (0, 0, Vec::new());
    for (q, ids) in &rec {
        let (a, margin) = run.answer_and_margin(q).unwrap();
        same += (&a.ids == ids) as usize;
        if margin >= CLEAR {
            clear += 1;
            if &a.ids != ids {
                bad.push(q.clone());
            }
        }
    }
    eprintln!(
        "llama.cpp = float reference on {same} of {} questions; {clear} with every choice clear by {CLEAR}",
        rec.len()
    );
    assert!(clear >= 100, "only {clear} questions with clear choices");
    assert!(
        bad.is_empty(),
        "{} clear answers differ, e.g. {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
fn a_changed_weight_or_a_changed_recorded_id_is_caught_by_both_comparisons() {
    // the EOS row of the classifier with every block scale zeroed: its logit is 0 everywhere
    let g = Gguf::open(gguf()).unwrap();
    let t = g.tensor("output.weight").unwrap().clone();
    let eos = g.get_u64("tokenizer.ggml.eos_token_id").unwrap() as usize;
    let mut bytes = std::fs::read(gguf()).unwrap();
    let (_, cols) = t.rows_cols();
    let row = cols / 32 * 34;
    for b in 0..cols / 32 {
        let at = t.file_offset as usize + eos * row + b * 34;
        bytes[at..at + 2].copy_from_slice(&[0, 0]);
    }
    let dir = tempfile::tempdir().unwrap();
    let changed = dir.path().join("changed.gguf");
    std::fs::write(&changed, &bytes).unwrap();
    // hardware numerics: every recorded answer is compared
    let rec: Vec<_> = record("hw.tsv").into_iter().take(40).collect();
    let mut run = Runner::new(&changed, CTX, Numerics::Hardware).unwrap();
    assert!(
        !mismatches(&mut run, &rec).is_empty(),
        "hw.tsv: a changed weight went unseen"
    );
    let mut run = Runner::new(&gguf(), CTX, Numerics::Hardware).unwrap();
    let mut wrong = rec.clone();
    wrong[7].1[0] ^= 1;
    assert_eq!(mismatches(&mut run, &wrong), vec![wrong[7].0.clone()]);
    // llama.cpp: the answers with clear choices are compared
    let mut run = Runner::new(&gguf(), CTX, Numerics::Float).unwrap();
    let clear: Vec<_> = record("llama-cpp.tsv")
        .into_iter()
        .filter(|(q, _)| run.answer_and_margin(q).unwrap().1 >= CLEAR)
        .take(40)
        .collect();
    assert!(mismatches(&mut run, &clear).is_empty());
    let mut wrong = clear.clone();
    wrong[7].1[0] ^= 1;
    assert_eq!(mismatches(&mut run, &wrong), vec![wrong[7].0.clone()]);
    let mut run = Runner::new(&changed, CTX, Numerics::Float).unwrap();
    assert!(
        !mismatches(&mut run, &clear).is_empty(),
        "llama-cpp.tsv: a changed weight went unseen"
    );
}

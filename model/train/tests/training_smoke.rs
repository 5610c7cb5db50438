//! A few training steps on the real corpus and vocabulary (`make test`'s smoke run of what
//! `make model` does in full): the loss falls, the GGUF written converts, and the image answers.

use ssnail_core::Numerics;
use ssnail_train::corpus::{self, Tok};
use ssnail_train::model::{Config, Model};
use ssnail_train::train::{self, Recipe};
use ssnail_train::{eval, export, spm};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

#[test]
fn a_few_training_steps_lower_the_loss_and_write_a_gguf_that_converts_and_answers() {
    let pieces = spm::read(&root().join("model/tokenizer/tok384.model")).unwrap();
    let vocab = corpus::vocab(&pieces).unwrap();
    let tok = Tok::new(vocab.clone()).unwrap();
    let qa = corpus::read_tsv(&root().join("model/corpus/train.tsv")).unwrap();
    let seqs: Vec<_> = qa.iter().take(64).map(|q| tok.seq(q)).collect();
    let cfg = Config {
        vocab: vocab.tokens.len(),
        dim: 32,
        layers: 1,
        heads: 2,
        hidden: 64,
        ctx: 64,
        eps: 1e-5,
        rope_base: 10000.0,
    };
    let m = Model::new(cfg, 3).unwrap();
    let r = Recipe {
        steps: 12,
        batch: 16,
        lr: 1e-2,
        weight_decay: 0.0,
        warmup: 2,
        seed: 3,
        first_weight: 1.0,
    };
    let (_, before) = train::evaluate(&m, &seqs, tok.eos()).unwrap();
    let mut losses = Vec::new();
    train::train(&m, &seqs, tok.eos(), &r, 4, &mut |_, _, l| {
        losses.push(l);
        Ok(())
    })
    .unwrap();
    let (_, after) = train::evaluate(&m, &seqs, tok.eos()).unwrap();
    assert!(
        after < before - 0.5,
        "loss {before:.3} -> {after:.3} after 12 steps ({losses:?})"
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("smoke.gguf");
    std::fs::write(
        &p,
        export::gguf(&m, &vocab, "smoke", "a smoke run").unwrap(),
    )
    .unwrap();
    let mut run = eval::Runner::new(&p, 64, Numerics::Hardware).unwrap();
    let a = run.answer(&qa[0].question).unwrap();
    assert!(!a.ids.is_empty());
    // the image's tokenizer gives the prompt the trainer trained on
    assert_eq!(
        run.prompt(&qa[0].question).unwrap(),
        tok.prompt(&qa[0].question)
    );
}

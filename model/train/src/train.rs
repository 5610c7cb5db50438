//! The training loop: AdamW on minibatches of the training phrasings, the loss on the answer
//! tokens and the EOS, a warm-up and a cosine decay of the learning rate.

use crate::corpus::Seq;
use crate::model::Model;
use crate::rng::Rng;
use anyhow::Result;
use candle_core::{DType, Device, Tensor, D};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};

#[derive(Clone, Debug)]
pub struct Recipe {
    pub steps: usize,
    pub batch: usize,
    pub lr: f64,
    pub weight_decay: f64,
    pub warmup: usize,
    pub seed: u64,
}

/// Ids (B, T), next-token targets (B, T) and the loss mask (B, T) for some sequences, padded
/// with EOS to the longest (the causal mask keeps padding out of every real position).
fn batch(seqs: &[&Seq], pad: u32) -> Result<(Tensor, Tensor, Tensor)> {
    let t = seqs.iter().map(|s| s.ids.len() - 1).max().unwrap_or(1);
    let (mut ids, mut tgt, mut mask) = (Vec::new(), Vec::new(), Vec::new());
    for s in seqs {
        for i in 0..t {
            ids.push(*s.ids.get(i).unwrap_or(&pad));
            tgt.push(*s.ids.get(i + 1).unwrap_or(&pad));
            let scored = i + 1 >= s.answer_at && i + 1 < s.ids.len();
            mask.push(if scored { 1f32 } else { 0.0 });
        }
    }
    let b = seqs.len();
    let dev = &Device::Cpu;
    Ok((
        Tensor::from_vec(ids, (b, t), dev)?,
        Tensor::from_vec(tgt, (b, t), dev)?,
        Tensor::from_vec(mask, (b, t), dev)?,
    ))
}

/// Mean loss over the scored positions, and per sequence whether every scored position's
/// argmax is its target: greedy decoding gives exactly the answer and its EOS if and only if
/// it does (each step's input is then the reference's).
fn loss_and_exact(m: &Model, seqs: &[&Seq], pad: u32) -> Result<(Tensor, Vec<bool>)> {
    let (ids, tgt, mask) = batch(seqs, pad)?;
    let logits = m.forward(&ids)?;
    let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
    let nll = logp.gather(&tgt.unsqueeze(2)?, 2)?.squeeze(2)?.neg()?;
    let loss = ((nll * &mask)?.sum_all()? / mask.sum_all()?.to_scalar::<f32>()? as f64)?;
    let am = logits.argmax(D::Minus1)?;
    let right = am.eq(&tgt)?.to_dtype(DType::F32)?;
    let wrong = ((right - 1.0)?.abs()? * &mask)?.sum(1)?.to_vec1::<f32>()?;
    Ok((loss, wrong.iter().map(|&w| w == 0.0).collect()))
}

/// Exact answers (teacher-forced argmax, see above) and the mean loss of a set.
pub fn evaluate(m: &Model, seqs: &[Seq], pad: u32) -> Result<(f64, f64)> {
    let mut exact = 0usize;
    let mut loss = 0f64;
    for c in seqs.chunks(128) {
        let refs: Vec<&Seq> = c.iter().collect();
        let (l, e) = loss_and_exact(m, &refs, pad)?;
        loss += l.to_scalar::<f32>()? as f64 * c.len() as f64;
        exact += e.iter().filter(|&&x| x).count();
    }
    Ok((exact as f64 / seqs.len() as f64, loss / seqs.len() as f64))
}

pub fn lr_at(r: &Recipe, step: usize) -> f64 {
    if step < r.warmup {
        return r.lr * (step + 1) as f64 / r.warmup as f64;
    }
    let p = (step - r.warmup) as f64 / (r.steps - r.warmup).max(1) as f64;
    r.lr * (0.05 + 0.95 * 0.5 * (1.0 + (std::f64::consts::PI * p).cos()))
}

/// Trains `m` on `train`; `log` gets (step, lr, loss) every `every` steps.
pub fn train(
    m: &Model,
    train: &[Seq],
    pad: u32,
    r: &Recipe,
    every: usize,
    log: &mut dyn FnMut(usize, f64, f64) -> Result<()>,
) -> Result<()> {
    let mut opt = AdamW::new(
        m.vars(),
        ParamsAdamW {
            lr: r.lr,
            beta1: 0.9,
            beta2: 0.98,
            eps: 1e-8,
            weight_decay: r.weight_decay,
        },
    )?;
    let mut rng = Rng::new(r.seed.wrapping_mul(7919).wrapping_add(1));
    let mut order: Vec<usize> = (0..train.len()).collect();
    let mut at = order.len();
    let mut run = 0f64;
    for step in 0..r.steps {
        let mut pick = Vec::new();
        while pick.len() < r.batch.min(train.len()) {
            if at == order.len() {
                rng.shuffle(&mut order);
                at = 0;
            }
            pick.push(&train[order[at]]);
            at += 1;
        }
        opt.set_learning_rate(lr_at(r, step));
        let (loss, _) = loss_and_exact(m, &pick, pad)?;
        opt.backward_step(&loss)?;
        run += loss.to_scalar::<f32>()? as f64;
        if (step + 1) % every == 0 || step + 1 == r.steps {
            let n = if (step + 1) % every == 0 {
                every
            } else {
                (step + 1) % every
            };
            log(step + 1, lr_at(r, step), run / n as f64)?;
            run = 0.0;
        }
    }
    Ok(())
}

//! The training loop: AdamW on minibatches of the training phrasings, the loss on the answer
//! tokens and the EOS only, a warm-up and a cosine decay of the learning rate. A batch is drawn
//! from a pool of similar lengths (less padding), and only the scored positions go through the
//! classifier.

use crate::corpus::Seq;
use crate::model::Model;
use crate::rng::Rng;
use anyhow::Result;
use candle_core::{Device, Tensor, D};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};

#[derive(Clone, Debug)]
pub struct Recipe {
    pub steps: usize,
    pub batch: usize,
    pub lr: f64,
    pub weight_decay: f64,
    pub warmup: usize,
    pub seed: u64,
    /// The loss's weight at the answer's first token (the others weigh 1): the choice that
    /// decides which fact is answered.
    pub first_weight: f64,
}

/// Ids (B, T) padded with `pad` to the longest, the flat positions (b·T + i) whose next token
/// is scored (the answer's tokens and its EOS), those next tokens, and each scored position's
/// sequence. The causal mask keeps padding out of every real position.
struct Batch {
    ids: Tensor,
    at: Tensor,
    tgt: Tensor,
    weight: Tensor,
    weight_sum: f64,
    seq: Vec<usize>,
}

fn batch(seqs: &[&Seq], pad: u32, first_weight: f64) -> Result<Batch> {
    let t = seqs.iter().map(|s| s.ids.len() - 1).max().unwrap_or(1);
    let (mut ids, mut at, mut tgt, mut seq) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut weight = Vec::new();
    for (n, s) in seqs.iter().enumerate() {
        for i in 0..t {
            ids.push(*s.ids.get(i).unwrap_or(&pad));
            if i + 1 >= s.answer_at && i + 1 < s.ids.len() {
                at.push((n * t + i) as u32);
                tgt.push(s.ids[i + 1]);
                let first = i + 1 == s.answer_at;
                weight.push(if first { first_weight as f32 } else { 1.0 });
                seq.push(n);
            }
        }
    }
    let dev = &Device::Cpu;
    let n = at.len();
    Ok(Batch {
        ids: Tensor::from_vec(ids, (seqs.len(), t), dev)?,
        at: Tensor::from_vec(at, n, dev)?,
        tgt: Tensor::from_vec(tgt, n, dev)?,
        weight_sum: weight.iter().map(|&w| w as f64).sum(),
        weight: Tensor::from_vec(weight, n, dev)?,
        seq,
    })
}

/// Mean loss over the scored positions (the answer's first weighing `first_weight`), and per
/// sequence whether every scored position's
/// argmax is its target: greedy decoding gives exactly the answer and its EOS if and only if
/// it does (each step's input is then the reference's).
fn loss_and_exact(
    m: &Model,
    seqs: &[&Seq],
    pad: u32,
    first_weight: f64,
) -> Result<(Tensor, Vec<bool>)> {
    let b = batch(seqs, pad, first_weight)?;
    let h = m.hidden(&b.ids)?;
    let h = h.reshape((h.elem_count() / m.cfg.dim, m.cfg.dim))?;
    let logits = m.classify(&h.index_select(&b.at, 0)?)?;
    let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
    let nll = logp.gather(&b.tgt.unsqueeze(1)?, 1)?.squeeze(1)?;
    let loss = ((nll * &b.weight)?.sum_all()? * (-1.0 / b.weight_sum))?;
    let am = logits.argmax(D::Minus1)?.to_vec1::<u32>()?;
    let tgt = b.tgt.to_vec1::<u32>()?;
    let mut exact = vec![true; seqs.len()];
    for ((a, t), &s) in am.iter().zip(&tgt).zip(&b.seq) {
        exact[s] &= a == t;
    }
    Ok((loss, exact))
}

/// Exact answers (teacher-forced argmax, see above) and the mean loss of a set (every position
/// weighing 1).
pub fn evaluate(m: &Model, seqs: &[Seq], pad: u32) -> Result<(f64, f64)> {
    let (e, loss) = exact_each(m, seqs, pad)?;
    let exact = e.iter().filter(|&&x| x).count();
    Ok((exact as f64 / seqs.len() as f64, loss))
}

/// Per sequence whether its answer is exact (teacher-forced argmax), and the set's mean loss.
pub fn exact_each(m: &Model, seqs: &[Seq], pad: u32) -> Result<(Vec<bool>, f64)> {
    let mut exact = Vec::new();
    let mut loss = 0f64;
    for c in seqs.chunks(128) {
        let refs: Vec<&Seq> = c.iter().collect();
        let (l, e) = loss_and_exact(m, &refs, pad, 1.0)?;
        loss += l.to_scalar::<f32>()? as f64 * c.len() as f64;
        exact.extend(e);
    }
    Ok((exact, loss / seqs.len() as f64))
}

pub fn lr_at(r: &Recipe, step: usize) -> f64 {
    if step < r.warmup {
        return r.lr * (step + 1) as f64 / r.warmup as f64;
    }
    let p = (step - r.warmup) as f64 / (r.steps - r.warmup).max(1) as f64;
    r.lr * (0.05 + 0.95 * 0.5 * (1.0 + (std::f64::consts::PI * p).cos()))
}

/// Batches drawn from a pool of this many batches, sorted by length.
const POOL: usize = 8;

/// Trains `m` on the fixed sequences `train`; `log` gets (step, lr, loss) every `every` steps.
pub fn train(
    m: &Model,
    train: &[Seq],
    pad: u32,
    r: &Recipe,
    every: usize,
    log: &mut dyn FnMut(usize, f64, f64) -> Result<()>,
) -> Result<()> {
    train_with(
        m,
        train.len(),
        &mut |i, _| train[i].clone(),
        pad,
        r,
        every,
        log,
    )
}

/// Trains `m` on `n` training items, each drawn as a sequence by `draw(item, rng)` every time
/// it is picked (so a drawing may vary it); `log` gets (step, lr, loss) every `every` steps.
/// Every epoch visits each item once, in an order shuffled by the recipe's seed; a pool of
/// `POOL` batches is sorted by length and its batches taken in a shuffled order.
pub fn train_with(
    m: &Model,
    n: usize,
    draw: &mut dyn FnMut(usize, &mut Rng) -> Seq,
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
    let mut order: Vec<usize> = (0..n).collect();
    let mut at = order.len();
    let mut pool: Vec<Vec<Seq>> = Vec::new();
    let bsz = r.batch.min(n);
    let mut run = 0f64;
    for step in 0..r.steps {
        if pool.is_empty() {
            let mut seqs = Vec::new();
            while seqs.len() < bsz * POOL {
                if at == order.len() {
                    rng.shuffle(&mut order);
                    at = 0;
                }
                seqs.push(draw(order[at], &mut rng));
                at += 1;
            }
            seqs.sort_by_key(|s| s.ids.len());
            pool = seqs.chunks(bsz).map(|c| c.to_vec()).collect();
            rng.shuffle(&mut pool);
        }
        let pick = pool.pop().expect("filled above");
        let refs: Vec<&Seq> = pick.iter().collect();
        opt.set_learning_rate(lr_at(r, step));
        let (loss, _) = loss_and_exact(m, &refs, pad, r.first_weight)?;
        opt.backward_step(&loss)?;
        run += loss.to_scalar::<f32>()? as f64;
        if (step + 1) % every == 0 || step + 1 == r.steps {
            let k = if (step + 1) % every == 0 {
                every
            } else {
                (step + 1) % every
            };
            log(step + 1, lr_at(r, step), run / k as f64)?;
            run = 0.0;
        }
    }
    Ok(())
}

//! The llama that ships, as candle tensors, with the image's numerics in its forward pass:
//! every matrix is used as the Q8_0 weights the GGUF stores (blocks of 32 along a row, an F16
//! scale; llama.cpp's `quantize_row_q8_0_ref`), every GEMV input as the hardware quantises it
//! (Q8_0 with the scale rounded to F16), the embedding rows as the DEQROW of their Q8_0, and
//! K and V as the F16 cache holds them. Rounding has no gradient: each is a straight-through
//! estimator (x + (q(x) − x) detached), so the float weights learn and the quantised ones are
//! what the loss saw. Layout as llama.cpp's llama: RMSNORM, Q/K/V, ROPE on adjacent pairs
//! (llama.cpp's normal mode, what a GGUF's Q and K rows are ordered for), causal attention,
//! the output projection added to the residual, RMSNORM, SiLU(gate)·up, down added, the final
//! RMSNORM and the classifier.

use crate::ops::{causal_softmax, fake_f16, fake_q8_0, RopeTable};
use crate::rng::Rng;
use anyhow::Result;
use candle_core::{DType, Device, Tensor, Var, D};

#[derive(Clone, Debug)]
pub struct Config {
    pub vocab: usize,
    pub dim: usize,
    pub layers: usize,
    pub heads: usize,
    pub hidden: usize,
    pub ctx: usize,
    pub eps: f32,
    pub rope_base: f32,
}

impl Config {
    pub fn head_dim(&self) -> usize {
        self.dim / self.heads
    }
    pub fn check(&self) -> Result<()> {
        anyhow::ensure!(
            self.dim.is_multiple_of(32) && self.hidden.is_multiple_of(32),
            "dim {} and hidden {} must be multiples of 32 (whole Q8_0 blocks)",
            self.dim,
            self.hidden
        );
        anyhow::ensure!(
            self.heads > 0
                && self.dim.is_multiple_of(self.heads)
                && self.head_dim().is_multiple_of(2),
            "dim {} does not split into {} heads of an even size",
            self.dim,
            self.heads
        );
        Ok(())
    }
}

pub struct Layer {
    pub attn_norm: Var,
    pub wq: Var,
    pub wk: Var,
    pub wv: Var,
    pub wo: Var,
    pub ffn_norm: Var,
    pub gate: Var,
    pub up: Var,
    pub down: Var,
}

pub struct Model {
    pub cfg: Config,
    pub embd: Var,
    pub layers: Vec<Layer>,
    pub out_norm: Var,
    pub output: Var,
    rope: RopeTable,
}

fn rmsnorm(x: &Tensor, g: &Tensor, eps: f32) -> Result<Tensor> {
    let ms = x.sqr()?.mean_keepdim(D::Minus1)?;
    let r = (ms + eps as f64)?.sqrt()?.recip()?;
    Ok(x.broadcast_mul(&r)?.broadcast_mul(g)?)
}

/// x (…, in) times the Q8_0 matrix w (out, in), the input quantised as the GEMV does.
fn gemv(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    // as one (rows, in) matrix: a broadcast matmul's weight gradient would be summed over
    // the batch afterwards
    let dims = x.dims().to_vec();
    let (rows, cols) = (x.elem_count() / dims[dims.len() - 1], dims[dims.len() - 1]);
    let xq = fake_q8_0(&x.reshape((rows, cols))?)?;
    let wq = fake_q8_0(w)?;
    let mut out = dims;
    *out.last_mut().expect("a matrix input") = w.dims()[0];
    Ok(xq.matmul(&wq.t()?)?.reshape(out)?)
}

fn var(rng: &mut Rng, shape: (usize, usize), std: f64) -> Result<Var> {
    let v: Vec<f32> = (0..shape.0 * shape.1)
        .map(|_| (rng.normal() * std) as f32)
        .collect();
    Ok(Var::from_tensor(&Tensor::from_vec(
        v,
        shape,
        &Device::Cpu,
    )?)?)
}

fn ones(n: usize) -> Result<Var> {
    Ok(Var::from_tensor(&Tensor::ones(
        n,
        DType::F32,
        &Device::Cpu,
    )?)?)
}

impl Model {
    /// Weights N(0, 1/cols) (the projections into the residual smaller by √(2·layers)), the
    /// embedding N(0, 1), norm gains 1; all from `seed`.
    pub fn new(cfg: Config, seed: u64) -> Result<Model> {
        cfg.check()?;
        let mut rng = Rng::new(seed);
        let (d, h, kvd) = (cfg.dim, cfg.hidden, cfg.dim);
        let w = |c: usize| 1.0 / (c as f64).sqrt();
        let res = 1.0 / ((2 * cfg.layers) as f64).sqrt();
        let embd = var(&mut rng, (cfg.vocab, d), 1.0)?;
        let mut layers = Vec::new();
        for _ in 0..cfg.layers {
            layers.push(Layer {
                attn_norm: ones(d)?,
                wq: var(&mut rng, (d, d), w(d))?,
                wk: var(&mut rng, (kvd, d), w(d))?,
                wv: var(&mut rng, (kvd, d), w(d))?,
                wo: var(&mut rng, (d, d), w(d) * res)?,
                ffn_norm: ones(d)?,
                gate: var(&mut rng, (h, d), w(d))?,
                up: var(&mut rng, (h, d), w(d))?,
                down: var(&mut rng, (d, h), w(h) * res)?,
            });
        }
        let out_norm = ones(d)?;
        let output = var(&mut rng, (cfg.vocab, d), w(d))?;
        let rope = RopeTable::new(cfg.ctx, cfg.head_dim(), cfg.rope_base);
        Ok(Model {
            cfg,
            embd,
            layers,
            out_norm,
            output,
            rope,
        })
    }

    pub fn vars(&self) -> Vec<Var> {
        let mut v = vec![self.embd.clone()];
        for l in &self.layers {
            v.extend(
                [
                    &l.attn_norm,
                    &l.wq,
                    &l.wk,
                    &l.wv,
                    &l.wo,
                    &l.ffn_norm,
                    &l.gate,
                    &l.up,
                    &l.down,
                ]
                .map(|x| x.clone()),
            );
        }
        v.push(self.out_norm.clone());
        v.push(self.output.clone());
        v
    }

    /// Logits (B, T, vocab) for token ids (B, T).
    pub fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        self.classify(&self.hidden(ids)?)
    }

    /// The classifier's input (…, dim), the final RMSNORM not yet applied, for token ids
    /// (B, T).
    pub fn hidden(&self, ids: &Tensor) -> Result<Tensor> {
        let cfg = &self.cfg;
        let (b, t) = ids.dims2()?;
        let (d, nh, hd) = (cfg.dim, cfg.heads, cfg.head_dim());
        let embd = fake_q8_0(self.embd.as_tensor())?;
        let mut x = embd
            .index_select(&ids.flatten_all()?, 0)?
            .reshape((b, t, d))?;
        let scale = 1.0 / (hd as f32).sqrt();
        for l in &self.layers {
            let h = rmsnorm(&x, l.attn_norm.as_tensor(), cfg.eps)?;
            let q = gemv(&h, &l.wq)?.reshape((b, t, nh, hd))?;
            let k = gemv(&h, &l.wk)?.reshape((b, t, nh, hd))?;
            let v = gemv(&h, &l.wv)?.reshape((b, t, nh, hd))?;
            let q = self.rope.apply(&q)?.transpose(1, 2)?.contiguous()?;
            let k = fake_f16(&self.rope.apply(&k)?)?
                .transpose(1, 2)?
                .contiguous()?;
            let v = fake_f16(&v)?.transpose(1, 2)?.contiguous()?;
            let p = causal_softmax(&q.matmul(&k.t()?)?, scale)?;
            let a = p.matmul(&v)?.transpose(1, 2)?.reshape((b, t, d))?;
            x = (x + gemv(&a, &l.wo)?)?;
            let h = rmsnorm(&x, l.ffn_norm.as_tensor(), cfg.eps)?;
            let g = gemv(&h, &l.gate)?;
            let u = gemv(&h, &l.up)?;
            x = (x + gemv(&(g.silu()? * u)?, &l.down)?)?;
        }
        Ok(x)
    }

    /// Logits (…, vocab) of hidden states (…, dim): the final RMSNORM and the classifier.
    pub fn classify(&self, x: &Tensor) -> Result<Tensor> {
        let h = rmsnorm(x, self.out_norm.as_tensor(), self.cfg.eps)?;
        gemv(&h, &self.output)
    }
}

/// The float values of a var, row-major.
pub fn values(v: &Var) -> Result<Vec<f32>> {
    Ok(v.as_tensor().flatten_all()?.to_vec1::<f32>()?)
}

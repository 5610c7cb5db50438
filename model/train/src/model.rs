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
    cos: Tensor,
    sin: Tensor,
}

/// Q8_0 of the last dimension's blocks of 32 as the stored (or hardware-quantised) values;
/// `f16_scale` rounds the scale to F16 as both the file and the hardware's input quantiser do.
fn q8_0_values(x: &Tensor) -> Result<Tensor> {
    let shape = x.shape().clone();
    let b = x.detach().reshape((x.elem_count() / 32, 32))?;
    let amax = b.abs()?.max_keepdim(1)?;
    let d = (amax / 127.0)?;
    let d16 = d.to_dtype(DType::F16)?.to_dtype(DType::F32)?;
    // d = 0 only for an all-zero block, whose quants are 0 whatever id is (llama.cpp: id 0)
    let id = d.maximum(1e-38)?.recip()?;
    let q = b.broadcast_mul(&id)?.round()?;
    Ok(q.broadcast_mul(&d16)?.reshape(shape)?)
}

/// Straight through: the forward value is Q8_0's, the gradient is the identity's.
pub fn fake_q8_0(x: &Tensor) -> Result<Tensor> {
    let q = q8_0_values(x)?;
    Ok((x + (q - x.detach())?)?)
}

fn fake_f16(x: &Tensor) -> Result<Tensor> {
    let h = x.detach().to_dtype(DType::F16)?.to_dtype(DType::F32)?;
    Ok((x + (h - x.detach())?)?)
}

fn rmsnorm(x: &Tensor, g: &Tensor, eps: f32) -> Result<Tensor> {
    let ms = x.sqr()?.mean_keepdim(D::Minus1)?;
    let r = (ms + eps as f64)?.sqrt()?.recip()?;
    Ok(x.broadcast_mul(&r)?.broadcast_mul(g)?)
}

/// x (…, in) times the Q8_0 matrix w (out, in), the input quantised as the GEMV does.
fn gemv(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    let xq = fake_q8_0(x)?;
    let wq = fake_q8_0(w)?;
    Ok(xq.broadcast_matmul(&wq.t()?)?)
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
        // ROPE: pair i of a head turns by pos·base^(−2i/hd), as llama.cpp (and the
        // converter's table) compute it
        let hd = cfg.head_dim();
        let mut c = Vec::new();
        let mut s = Vec::new();
        for p in 0..cfg.ctx {
            for i in 0..hd / 2 {
                let theta = cfg.rope_base.powf(-2.0 * i as f32 / hd as f32);
                let a = p as f32 * theta;
                c.push(a.cos());
                s.push(a.sin());
            }
        }
        let cos = Tensor::from_vec(c, (cfg.ctx, 1, hd / 2, 1), &Device::Cpu)?;
        let sin = Tensor::from_vec(s, (cfg.ctx, 1, hd / 2, 1), &Device::Cpu)?;
        Ok(Model {
            cfg,
            embd,
            layers,
            out_norm,
            output,
            cos,
            sin,
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

    /// (B, T, H, hd) turned pairwise by position.
    fn rope(&self, x: &Tensor) -> Result<Tensor> {
        let (b, t, h, hd) = x.dims4()?;
        let x = x.reshape((b, t, h, hd / 2, 2))?;
        let x0 = x.narrow(4, 0, 1)?;
        let x1 = x.narrow(4, 1, 1)?;
        let c = self.cos.narrow(0, 0, t)?.unsqueeze(0)?;
        let s = self.sin.narrow(0, 0, t)?.unsqueeze(0)?;
        let r0 = (x0.broadcast_mul(&c)? - x1.broadcast_mul(&s)?)?;
        let r1 = (x0.broadcast_mul(&s)? + x1.broadcast_mul(&c)?)?;
        Ok(Tensor::cat(&[r0, r1], 4)?.reshape((b, t, h, hd))?)
    }

    /// Logits (B, T, vocab) for token ids (B, T).
    pub fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let cfg = &self.cfg;
        let (b, t) = ids.dims2()?;
        let (d, nh, hd) = (cfg.dim, cfg.heads, cfg.head_dim());
        let embd = fake_q8_0(self.embd.as_tensor())?;
        let mut x = embd
            .index_select(&ids.flatten_all()?, 0)?
            .reshape((b, t, d))?;
        let mask: Vec<f32> = (0..t * t)
            .map(|i| if i % t > i / t { -1e30 } else { 0.0 })
            .collect();
        let mask = Tensor::from_vec(mask, (t, t), &Device::Cpu)?;
        let scale = 1.0 / (hd as f64).sqrt();
        for l in &self.layers {
            let h = rmsnorm(&x, l.attn_norm.as_tensor(), cfg.eps)?;
            let q = gemv(&h, &l.wq)?.reshape((b, t, nh, hd))?;
            let k = gemv(&h, &l.wk)?.reshape((b, t, nh, hd))?;
            let v = gemv(&h, &l.wv)?.reshape((b, t, nh, hd))?;
            let q = self.rope(&q)?.transpose(1, 2)?.contiguous()?;
            let k = fake_f16(&self.rope(&k)?)?.transpose(1, 2)?.contiguous()?;
            let v = fake_f16(&v)?.transpose(1, 2)?.contiguous()?;
            let s = (q.matmul(&k.t()?)? * scale)?.broadcast_add(&mask)?;
            let p = candle_nn::ops::softmax(&s, D::Minus1)?;
            let a = p.matmul(&v)?.transpose(1, 2)?.reshape((b, t, d))?;
            x = (x + gemv(&a, &l.wo)?)?;
            let h = rmsnorm(&x, l.ffn_norm.as_tensor(), cfg.eps)?;
            let g = gemv(&h, &l.gate)?;
            let u = gemv(&h, &l.up)?;
            let silu = (&g * (g.neg()?.exp()? + 1.0)?.recip()?)?;
            x = (x + gemv(&(silu * u)?, &l.down)?)?;
        }
        let h = rmsnorm(&x, self.out_norm.as_tensor(), cfg.eps)?;
        gemv(&h, &self.output)
    }
}

/// The float values of a var, row-major.
pub fn values(v: &Var) -> Result<Vec<f32>> {
    Ok(v.as_tensor().flatten_all()?.to_vec1::<f32>()?)
}

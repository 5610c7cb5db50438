//! The trainer's fused operations (candle custom ops): each does in one pass over its tensor
//! what would otherwise be a dozen candle operations, each allocating a tensor of the same size
//! (at these tiny widths candle's per-operation cost, not arithmetic, set the step time).
//!
//! * [`fake_q8_0`]: Q8_0 rounding of the last dimension's blocks of 32, with the gradient of
//!   the identity (straight through). The rounding is `ssnail_format::ggml::quantize_block_q8_0`
//!   (llama.cpp's `quantize_row_q8_0_ref`: d = amax/127, q = round(x/d), d stored as F16), the
//!   same function that writes the GGUF's weights, and the same arithmetic as the hardware's
//!   GEMV input quantiser (spec §5.3; emu/core/src/gemv.rs).
//! * [`fake_f16`]: rounding to F16 (the KV cache), straight through.
//! * [`causal_softmax`]: softmax(scale · s) over the last dimension with the positions after
//!   the row's own (row index modulo the last-but-one dimension) left out, and its gradient.
//! * [`rope`]: llama.cpp's normal-mode rotation of adjacent pairs, and its gradient (the
//!   rotation back).

use candle_core::{bail, CpuStorage, CustomOp1, Layout, Result, Shape, Tensor, D};
use ssnail_format::ggml::{f16_to_f32, f32_to_f16, quantize_block_q8_0};

fn contiguous_f32<'a>(s: &'a CpuStorage, l: &Layout, what: &str) -> Result<&'a [f32]> {
    let CpuStorage::F32(v) = s else {
        bail!("{what}: not F32")
    };
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&v[a..b]),
        None => bail!("{what}: not contiguous"),
    }
}

struct FakeQ8_0;

impl CustomOp1 for FakeQ8_0 {
    fn name(&self) -> &'static str {
        "fake-q8_0"
    }
    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(s, l, "fake-q8_0")?;
        if l.dims().last().is_none_or(|&n| n % 32 != 0) {
            bail!(
                "fake-q8_0: the last dimension of {:?} is not whole blocks of 32",
                l.dims()
            );
        }
        let mut out = vec![0f32; x.len()];
        for (o, blk) in out.chunks_exact_mut(32).zip(x.chunks_exact(32)) {
            let (d, q) = quantize_block_q8_0(blk);
            let d = f16_to_f32(d);
            for (o, q) in o.iter_mut().zip(q) {
                *o = q as f32 * d;
            }
        }
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }
    fn bwd(&self, _arg: &Tensor, _res: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        Ok(Some(grad.clone()))
    }
}

struct FakeF16;

impl CustomOp1 for FakeF16 {
    fn name(&self) -> &'static str {
        "fake-f16"
    }
    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(s, l, "fake-f16")?;
        let out = x.iter().map(|&v| f16_to_f32(f32_to_f16(v))).collect();
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }
    fn bwd(&self, _arg: &Tensor, _res: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        Ok(Some(grad.clone()))
    }
}

struct CausalSoftmax {
    scale: f32,
}

impl CustomOp1 for CausalSoftmax {
    fn name(&self) -> &'static str {
        "causal-softmax"
    }
    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(s, l, "causal-softmax")?;
        let dims = l.dims();
        let (rows, t) = match dims {
            [.., r, t] if r == t => (*r, *t),
            _ => bail!("causal-softmax: {dims:?} is not (…, T, T)"),
        };
        let mut out = vec![0f32; x.len()];
        for (n, (o, r)) in out.chunks_exact_mut(t).zip(x.chunks_exact(t)).enumerate() {
            let i = n % rows;
            let m = r[..=i].iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let mut sum = 0f32;
            for (o, &v) in o[..=i].iter_mut().zip(&r[..=i]) {
                *o = ((v - m) * self.scale).exp();
                sum += *o;
            }
            for o in &mut o[..=i] {
                *o /= sum;
            }
        }
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }
    fn bwd(&self, _arg: &Tensor, res: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        // y = softmax(scale·x): dx = scale · y · (g − Σ g·y); the left-out positions have y = 0
        let s = (grad * res)?.sum_keepdim(D::Minus1)?;
        Ok(Some(
            (res * grad.broadcast_sub(&s)?)?.affine(self.scale as f64, 0.0)?,
        ))
    }
}

struct Rope {
    /// cos and sin of each (position, pair), position-major.
    cos: std::sync::Arc<Vec<f32>>,
    sin: std::sync::Arc<Vec<f32>>,
    /// +1 forwards, −1 the rotation back (the gradient).
    sign: f32,
}

impl CustomOp1 for Rope {
    fn name(&self) -> &'static str {
        "rope"
    }
    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let x = contiguous_f32(s, l, "rope")?;
        let [_, t, h, hd] = l.dims() else {
            bail!("rope: {:?} is not (B, T, heads, head size)", l.dims())
        };
        let (t, h, half) = (*t, *h, hd / 2);
        if self.cos.len() < t * half {
            bail!("rope: {t} positions, more than the table's");
        }
        let mut out = vec![0f32; x.len()];
        for (n, (o, r)) in out.chunks_exact_mut(2).zip(x.chunks_exact(2)).enumerate() {
            let p = (n / (half * h)) % t;
            let i = n % half;
            let (c, s) = (self.cos[p * half + i], self.sign * self.sin[p * half + i]);
            o[0] = r[0] * c - r[1] * s;
            o[1] = r[0] * s + r[1] * c;
        }
        Ok((CpuStorage::F32(out), l.shape().clone()))
    }
    fn bwd(&self, _arg: &Tensor, _res: &Tensor, grad: &Tensor) -> Result<Option<Tensor>> {
        let back = Rope {
            cos: self.cos.clone(),
            sin: self.sin.clone(),
            sign: -self.sign,
        };
        Ok(Some(grad.contiguous()?.apply_op1_no_bwd(&back)?))
    }
}

/// Straight through: the forward value is Q8_0's, the gradient is the identity's.
pub fn fake_q8_0(x: &Tensor) -> Result<Tensor> {
    x.contiguous()?.apply_op1(FakeQ8_0)
}

/// Straight through: the forward value is F16's, the gradient is the identity's.
pub fn fake_f16(x: &Tensor) -> Result<Tensor> {
    x.contiguous()?.apply_op1(FakeF16)
}

/// Softmax of `scale · s` (…, T, T) over the last dimension, row i seeing positions 0..=i.
pub fn causal_softmax(s: &Tensor, scale: f32) -> Result<Tensor> {
    s.contiguous()?.apply_op1(CausalSoftmax { scale })
}

/// The rotation tables for `ctx` positions and head size `hd` (pair i of a head turns by
/// pos·base^(−2i/hd), as llama.cpp and the converter's table compute it).
pub struct RopeTable {
    cos: std::sync::Arc<Vec<f32>>,
    sin: std::sync::Arc<Vec<f32>>,
}

impl RopeTable {
    pub fn new(ctx: usize, hd: usize, base: f32) -> RopeTable {
        let (mut c, mut s) = (Vec::new(), Vec::new());
        for p in 0..ctx {
            for i in 0..hd / 2 {
                let a = p as f32 * base.powf(-2.0 * i as f32 / hd as f32);
                c.push(a.cos());
                s.push(a.sin());
            }
        }
        RopeTable {
            cos: std::sync::Arc::new(c),
            sin: std::sync::Arc::new(s),
        }
    }
    /// (B, T, heads, hd) turned pairwise by position.
    pub fn apply(&self, x: &Tensor) -> Result<Tensor> {
        x.contiguous()?.apply_op1(Rope {
            cos: self.cos.clone(),
            sin: self.sin.clone(),
            sign: 1.0,
        })
    }
}

//! Independent reference forward passes in f64, written directly from the
//! GGUF tensors and metadata — never through an SSNAIL image or script — so
//! that the converter and the emulator can be checked against them.
//!
//! * llama: RMSNorm, adjacent-pair RoPE with θ = pos·base^(−2j/hd), GQA
//!   softmax attention, SwiGLU, tied or untied classifier.
//! * gpt2: pre-LN, fused qkv with bias, GELU (tanh form), final LN, tied or untied.
//! * bert: post-LN, token type row 0, non-causal attention, mean or CLS pooling.
//!
//! Weights are dequantised with the shared ggml routines (so quantised
//! models are compared on the same weights) and held as f32, which is exact
//! for every format; all arithmetic is f64. [`RefOpts::repack`] mimics a
//! converter `--wtype` repack (dequantise → quantise → dequantise) so a
//! reference can follow an image whose matrices were converted.

use ssnail_format::dequant::dequantize;
use ssnail_format::ggml::{quantize_native, GgmlType};
use ssnail_gguf::Gguf;

/// Options for building a reference model.
#[derive(Clone, Copy, Debug, Default)]
pub struct RefOpts {
    /// Store every matrix (≥ 2-D tensor) as this format first, as the
    /// converter does for `--wtype f32|f16|bf16|q8_0|q4_0` (F16 when the row
    /// length is not a whole number of blocks).
    pub repack: Option<GgmlType>,
}

/// A tensor as f32 values, rows × cols (1-D tensors: one row).
pub struct Mat {
    pub rows: usize,
    pub cols: usize,
    pub w: Vec<f32>,
}

impl Mat {
    pub fn row(&self, r: usize) -> &[f32] {
        &self.w[r * self.cols..(r + 1) * self.cols]
    }
    /// y = W·x in f64.
    pub fn mv(&self, x: &[f64]) -> Vec<f64> {
        (0..self.rows)
            .map(|r| self.row(r).iter().zip(x).map(|(&w, &v)| w as f64 * v).sum())
            .collect()
    }
    fn vec64(&self) -> Vec<f64> {
        self.w.iter().map(|&v| v as f64).collect()
    }
}

fn load(g: &Gguf, name: &str, opts: RefOpts) -> Result<Mat, String> {
    let t = g
        .tensor(name)
        .ok_or_else(|| format!("{}: no tensor {name}", g.path.display()))?;
    let (rows, cols) = t.rows_cols();
    let mut w = vec![0f32; rows * cols];
    if !dequantize(t.ty, g.data(t), &mut w) {
        return Err(format!(
            "{}: cannot dequantise {name} ({})",
            g.path.display(),
            t.ty.name()
        ));
    }
    if let (Some(to), true) = (opts.repack, t.shape.len() >= 2) {
        let to = if cols % to.block_len() == 0 {
            to
        } else {
            GgmlType::F16
        };
        let mut bytes = Vec::new();
        for row in w.chunks_exact(cols) {
            quantize_native(to, row, &mut bytes);
        }
        dequantize(to, &bytes, &mut w);
    }
    Ok(Mat { rows, cols, w })
}

fn rmsnorm(x: &[f64], g: &[f64], eps: f64) -> Vec<f64> {
    let ms = x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64;
    let r = 1.0 / (ms + eps).sqrt();
    x.iter().zip(g).map(|(v, g)| v * r * g).collect()
}

fn layernorm(x: &[f64], g: &[f64], b: &[f64], eps: f64) -> Vec<f64> {
    let n = x.len() as f64;
    let mu = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / n;
    let r = 1.0 / (var + eps).sqrt();
    x.iter()
        .zip(g.iter().zip(b))
        .map(|(v, (g, b))| (v - mu) * r * g + b)
        .collect()
}

fn gelu(v: f64) -> f64 {
    0.5 * v * (1.0 + (0.7978845608028654 * (v + 0.044715 * v * v * v)).tanh())
}

fn silu(v: f64) -> f64 {
    v / (1.0 + (-v).exp())
}

fn add(a: &mut [f64], b: &[f64]) {
    a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
}

/// Multi-head attention of one query over rows `keys`/`vals` (kv_dim each):
/// head h reads KV head h / (n_heads / n_kv_heads).
fn attend(
    q: &[f64],
    keys: &[Vec<f64>],
    vals: &[Vec<f64>],
    n_heads: usize,
    n_kv: usize,
) -> Vec<f64> {
    let hd = q.len() / n_heads;
    let group = n_heads / n_kv;
    let mut out = vec![0f64; q.len()];
    for h in 0..n_heads {
        let g = h / group;
        let qh = &q[h * hd..(h + 1) * hd];
        let s: Vec<f64> = keys
            .iter()
            .map(|k| {
                qh.iter()
                    .zip(&k[g * hd..(g + 1) * hd])
                    .map(|(a, b)| a * b)
                    .sum::<f64>()
                    / (hd as f64).sqrt()
            })
            .collect();
        let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = s.iter().map(|v| (v - m).exp()).collect();
        let z: f64 = e.iter().sum();
        for (t, v) in vals.iter().enumerate() {
            for j in 0..hd {
                out[h * hd + j] += e[t] / z * v[g * hd + j];
            }
        }
    }
    out
}

struct Meta {
    arch: String,
    n_layers: usize,
    n_heads: usize,
    n_kv: usize,
    eps: f64,
    rope_base: f64,
    pooling: u64,
}

fn meta(g: &Gguf) -> Result<Meta, String> {
    let arch = g
        .architecture()
        .ok_or("no general.architecture")?
        .to_string();
    let u = |k: &str| g.get_u64(&format!("{arch}.{k}"));
    let n_heads = u("attention.head_count").ok_or("no head_count")? as usize;
    let eps_key = if arch == "llama" {
        "attention.layer_norm_rms_epsilon"
    } else {
        "attention.layer_norm_epsilon"
    };
    Ok(Meta {
        n_layers: u("block_count").ok_or("no block_count")? as usize,
        n_heads,
        n_kv: u("attention.head_count_kv").unwrap_or(n_heads as u64) as usize,
        eps: g.get_f64(&format!("{arch}.{eps_key}")).unwrap_or(1e-5),
        rope_base: g
            .get_f64(&format!("{arch}.rope.freq_base"))
            .unwrap_or(10000.0),
        pooling: u("pooling_type").unwrap_or(1),
        arch,
    })
}

/// Rotate adjacent pairs (2j, 2j+1) of every head by θ = pos·base^(−2j/hd).
fn rope(v: &mut [f64], hd: usize, pos: usize, base: f64) {
    for head in v.chunks_exact_mut(hd) {
        for j in 0..hd / 2 {
            let theta = pos as f64 * base.powf(-2.0 * j as f64 / hd as f64);
            let (c, s) = (theta.cos(), theta.sin());
            let (a, b) = (head[2 * j], head[2 * j + 1]);
            head[2 * j] = a * c - b * s;
            head[2 * j + 1] = a * s + b * c;
        }
    }
}

/// Decoder logits at every position of `tokens` (llama or gpt2).
pub fn decoder_logits(g: &Gguf, tokens: &[u32], opts: RefOpts) -> Result<Vec<Vec<f64>>, String> {
    let m = meta(g)?;
    let ld = |n: &str| load(g, n, opts);
    let embd = ld("token_embd.weight")?;
    let cls = if g.tensor("output.weight").is_some() {
        ld("output.weight")?
    } else {
        ld("token_embd.weight")?
    };
    let mut kcache: Vec<Vec<Vec<f64>>> = vec![Vec::new(); m.n_layers];
    let mut vcache: Vec<Vec<Vec<f64>>> = vec![Vec::new(); m.n_layers];
    let mut out = Vec::new();
    match m.arch.as_str() {
        "llama" => {
            let layers: Vec<[Mat; 9]> = (0..m.n_layers)
                .map(|l| {
                    let n = |s: &str| ld(&format!("blk.{l}.{s}.weight"));
                    Ok([
                        n("attn_norm")?,
                        n("attn_q")?,
                        n("attn_k")?,
                        n("attn_v")?,
                        n("attn_output")?,
                        n("ffn_norm")?,
                        n("ffn_gate")?,
                        n("ffn_up")?,
                        n("ffn_down")?,
                    ])
                })
                .collect::<Result<_, String>>()?;
            let norm = ld("output_norm.weight")?.vec64();
            let hd = embd.cols / m.n_heads;
            for (pos, &tok) in tokens.iter().enumerate() {
                let mut x: Vec<f64> = embd.row(tok as usize).iter().map(|&v| v as f64).collect();
                for (l, w) in layers.iter().enumerate() {
                    let xb = rmsnorm(&x, &w[0].vec64(), m.eps);
                    let mut q = w[1].mv(&xb);
                    let mut k = w[2].mv(&xb);
                    let v = w[3].mv(&xb);
                    rope(&mut q, hd, pos, m.rope_base);
                    rope(&mut k, hd, pos, m.rope_base);
                    kcache[l].push(k);
                    vcache[l].push(v);
                    let att = attend(&q, &kcache[l], &vcache[l], m.n_heads, m.n_kv);
                    add(&mut x, &w[4].mv(&att));
                    let xb = rmsnorm(&x, &w[5].vec64(), m.eps);
                    let gate = w[6].mv(&xb);
                    let up = w[7].mv(&xb);
                    let h: Vec<f64> = gate.iter().zip(&up).map(|(a, b)| silu(*a) * b).collect();
                    add(&mut x, &w[8].mv(&h));
                }
                out.push(cls.mv(&rmsnorm(&x, &norm, m.eps)));
            }
        }
        "gpt2" => {
            let wpe = ld("position_embd.weight")?;
            let d = embd.cols;
            let v = |n: String| ld(&n).map(|t| t.vec64());
            for (pos, &tok) in tokens.iter().enumerate() {
                let mut x: Vec<f64> = embd
                    .row(tok as usize)
                    .iter()
                    .zip(wpe.row(pos))
                    .map(|(&a, &b)| a as f64 + b as f64)
                    .collect();
                for l in 0..m.n_layers {
                    let p = format!("blk.{l}");
                    let xb = layernorm(
                        &x,
                        &v(format!("{p}.attn_norm.weight"))?,
                        &v(format!("{p}.attn_norm.bias"))?,
                        m.eps,
                    );
                    let mut qkv = ld(&format!("{p}.attn_qkv.weight"))?.mv(&xb);
                    add(&mut qkv, &v(format!("{p}.attn_qkv.bias"))?);
                    kcache[l].push(qkv[d..2 * d].to_vec());
                    vcache[l].push(qkv[2 * d..].to_vec());
                    let att = attend(&qkv[..d], &kcache[l], &vcache[l], m.n_heads, m.n_heads);
                    add(&mut x, &ld(&format!("{p}.attn_output.weight"))?.mv(&att));
                    add(&mut x, &v(format!("{p}.attn_output.bias"))?);
                    let xb = layernorm(
                        &x,
                        &v(format!("{p}.ffn_norm.weight"))?,
                        &v(format!("{p}.ffn_norm.bias"))?,
                        m.eps,
                    );
                    let mut h = ld(&format!("{p}.ffn_up.weight"))?.mv(&xb);
                    add(&mut h, &v(format!("{p}.ffn_up.bias"))?);
                    let h: Vec<f64> = h.into_iter().map(gelu).collect();
                    add(&mut x, &ld(&format!("{p}.ffn_down.weight"))?.mv(&h));
                    add(&mut x, &v(format!("{p}.ffn_down.bias"))?);
                }
                let xn = layernorm(
                    &x,
                    &v("output_norm.weight".into())?,
                    &v("output_norm.bias".into())?,
                    m.eps,
                );
                out.push(cls.mv(&xn));
            }
        }
        a => {
            return Err(format!(
                "{}: decoder reference for {a} not available",
                g.path.display()
            ))
        }
    }
    Ok(out)
}

/// BERT pooled embedding (mean or CLS per `bert.pooling_type`, no normalisation).
pub fn bert_embedding(g: &Gguf, tokens: &[u32], opts: RefOpts) -> Result<Vec<f64>, String> {
    let m = meta(g)?;
    let ld = |n: &str| load(g, n, opts);
    let v = |n: String| ld(&n).map(|t| t.vec64());
    let embd = ld("token_embd.weight")?;
    let pos = ld("position_embd.weight")?;
    let types = if g.tensor("token_types.weight").is_some() {
        Some(ld("token_types.weight")?)
    } else {
        None
    };
    let (eg, eb) = (
        v("token_embd_norm.weight".into())?,
        v("token_embd_norm.bias".into())?,
    );
    let mut xs: Vec<Vec<f64>> = tokens
        .iter()
        .enumerate()
        .map(|(t, &tok)| {
            let mut x: Vec<f64> = embd
                .row(tok as usize)
                .iter()
                .zip(pos.row(t))
                .map(|(&a, &b)| a as f64 + b as f64)
                .collect();
            if let Some(ty) = &types {
                add(
                    &mut x,
                    &ty.row(0).iter().map(|&v| v as f64).collect::<Vec<_>>(),
                );
            }
            layernorm(&x, &eg, &eb, m.eps)
        })
        .collect();
    for l in 0..m.n_layers {
        let p = format!("blk.{l}");
        let lin = |name: &str, x: &[f64]| -> Result<Vec<f64>, String> {
            let mut y = ld(&format!("{p}.{name}.weight"))?.mv(x);
            add(&mut y, &v(format!("{p}.{name}.bias"))?);
            Ok(y)
        };
        let qs: Vec<Vec<f64>> = xs
            .iter()
            .map(|x| lin("attn_q", x))
            .collect::<Result<_, _>>()?;
        let ks: Vec<Vec<f64>> = xs
            .iter()
            .map(|x| lin("attn_k", x))
            .collect::<Result<_, _>>()?;
        let vs: Vec<Vec<f64>> = xs
            .iter()
            .map(|x| lin("attn_v", x))
            .collect::<Result<_, _>>()?;
        let (g1, b1) = (
            v(format!("{p}.attn_output_norm.weight"))?,
            v(format!("{p}.attn_output_norm.bias"))?,
        );
        let (g2, b2) = (
            v(format!("{p}.layer_output_norm.weight"))?,
            v(format!("{p}.layer_output_norm.bias"))?,
        );
        for (t, x) in xs.iter_mut().enumerate() {
            let att = attend(&qs[t], &ks, &vs, m.n_heads, m.n_heads);
            add(x, &lin("attn_output", &att)?);
            *x = layernorm(x, &g1, &b1, m.eps);
            let h: Vec<f64> = lin("ffn_up", x)?.into_iter().map(gelu).collect();
            add(x, &lin("ffn_down", &h)?);
            *x = layernorm(x, &g2, &b2, m.eps);
        }
    }
    if m.pooling == 2 {
        Ok(xs[0].clone())
    } else {
        let n = xs.len() as f64;
        Ok((0..xs[0].len())
            .map(|c| xs.iter().map(|x| x[c]).sum::<f64>() / n)
            .collect())
    }
}

/// max |a − b| / max |b| over all values (b is the reference).
pub fn rel_error(a: &[f32], b: &[f64]) -> f64 {
    let d = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x as f64 - y).abs())
        .fold(0.0, f64::max);
    d / b.iter().map(|y| y.abs()).fold(0.0, f64::max)
}

/// Index of the first maximum.
pub fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

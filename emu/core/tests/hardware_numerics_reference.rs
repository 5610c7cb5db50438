//! Hardware numerics on a whole model, bit for bit: an independent llama
//! forward pass written here from spec §5.3 and the §3.7 script order alone
//! (its own tables, Q8_0 input quantiser, block sums, norms and attention —
//! nothing from `ssnail_core`), reading weights from the GGUF, compared
//! with the emulator's `Numerics::Hardware` logits at every position.

use ssnail_core::{Host, Machine, Numerics, Ssnail};
use ssnail_format::ggml::{f16_to_f32, f32_to_f16, GgmlType};
use ssnail_gguf::Gguf;
use ssnail_testkit::models::{self, ModelOpts};

/// A 256-segment chord table built from the §5.3 text.
struct Chords {
    lo: f32,
    hi: f32,
    k: f32,
    c0: Vec<f32>,
    c1: Vec<f32>,
}

fn chords(lo: f64, hi: f64, f: fn(f64) -> f64) -> Chords {
    let xs: Vec<f64> = (0..=256)
        .map(|k| lo + k as f64 * (hi - lo) / 256.0)
        .collect();
    let ys: Vec<f64> = xs.iter().map(|&x| f(x)).collect();
    let c1d: Vec<f64> = (0..256)
        .map(|i| (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]))
        .collect();
    Chords {
        lo: lo as f32,
        hi: hi as f32,
        k: (256.0 / (hi - lo)) as f32,
        c0: (0..256).map(|i| (ys[i] - c1d[i] * xs[i]) as f32).collect(),
        c1: c1d.iter().map(|&v| v as f32).collect(),
    }
}

impl Chords {
    fn at(&self, x: f32, below: f32, above: Option<f32>) -> f32 {
        if x < self.lo {
            return below;
        }
        if x >= self.hi {
            return above.unwrap_or(x);
        }
        let i = (((x - self.lo) * self.k).floor() as i64).clamp(0, 255) as usize;
        self.c0[i] + self.c1[i] * x
    }
}

/// llama.cpp quantize_row_q8_0 on one block: (scale as single, int8 values).
fn q8_block(x: &[f32]) -> (f32, Vec<i32>) {
    let mut amax = 0.0f32;
    for v in x {
        amax = amax.max(v.abs());
    }
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    // C roundf = half away from zero, on the exact single product.
    let q = x.iter().map(|v| (v * id).round() as i32).collect();
    (f16_to_f32(f32_to_f16(d)), q)
}

struct QMat {
    rows: usize,
    cols: usize,
    ty: GgmlType,
    bytes: Vec<u8>,
}

impl QMat {
    fn get(g: &Gguf, name: &str) -> QMat {
        let t = g.tensor(name).unwrap();
        let (rows, cols) = t.rows_cols();
        QMat {
            rows,
            cols,
            ty: t.ty,
            bytes: g.data(t).to_vec(),
        }
    }
    /// Block b of row r: (scale, 32 integer weights).
    fn block(&self, r: usize, b: usize) -> (f32, [i32; 32]) {
        let bb = if self.ty == GgmlType::Q8_0 { 34 } else { 18 };
        let off = r * (self.cols / 32) * bb + b * bb;
        let blk = &self.bytes[off..off + bb];
        let d = f16_to_f32(u16::from_le_bytes([blk[0], blk[1]]));
        let mut q = [0i32; 32];
        for j in 0..32 {
            q[j] = if self.ty == GgmlType::Q8_0 {
                blk[2 + j] as i8 as i32
            } else {
                let byte = blk[2 + j % 16];
                (if j < 16 { byte & 15 } else { byte >> 4 }) as i32 - 8
            };
        }
        (d, q)
    }
    fn row_f32(&self, r: usize) -> Vec<f32> {
        if self.ty == GgmlType::F16 {
            let row = &self.bytes[r * self.cols * 2..(r + 1) * self.cols * 2];
            return row
                .chunks(2)
                .map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]])))
                .collect();
        }
        (0..self.cols / 32)
            .flat_map(|b| {
                let (d, q) = self.block(r, b);
                q.map(|v| d * v as f32)
            })
            .collect()
    }
    fn gemv(&self, x: &[f32]) -> Vec<f32> {
        if self.ty == GgmlType::F16 {
            // Exact products, exact sum (Shewchuk partials), rounded: to double
            // by msum, then to single (double rounding only in vanishingly rare ties).
            return (0..self.rows)
                .map(|r| {
                    msum(
                        self.row_f32(r)
                            .iter()
                            .zip(x)
                            .map(|(w, v)| *w as f64 * *v as f64),
                    ) as f32
                })
                .collect();
        }
        let xq: Vec<(f32, Vec<i32>)> = x.chunks(32).map(q8_block).collect();
        (0..self.rows)
            .map(|r| {
                let mut acc = 0.0f32;
                for (b, (dx, qx)) in xq.iter().enumerate() {
                    let (dw, qw) = self.block(r, b);
                    let isum: i32 = (0..32).map(|j| qw[j] * qx[j]).sum();
                    acc += isum as f32 * (dw * dx);
                }
                acc
            })
            .collect()
    }
}

/// Exactly rounded double sum (Shewchuk's non-overlapping partials, as Python's math.fsum).
fn msum(it: impl Iterator<Item = f64>) -> f64 {
    let mut partials: Vec<f64> = Vec::new();
    for mut x in it {
        let mut i = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let hi = x + y;
            let lo = y - (hi - x);
            if lo != 0.0 {
                partials[i] = lo;
                i += 1;
            }
            x = hi;
        }
        partials.truncate(i);
        partials.push(x);
    }
    // Sum from the top with the half-way correction of fsum.
    let mut n = partials.len();
    if n == 0 {
        return 0.0;
    }
    n -= 1;
    let mut hi = partials[n];
    let mut lo = 0.0;
    while n > 0 {
        let x = hi;
        n -= 1;
        let y = partials[n];
        hi = x + y;
        let yr = hi - x;
        lo = y - yr;
        if lo != 0.0 {
            break;
        }
    }
    if n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0)) {
        let y = lo * 2.0;
        let x = hi + y;
        if y == x - hi {
            hi = x;
        }
    }
    hi
}

fn vec_f32(g: &Gguf, name: &str) -> Vec<f32> {
    g.data(g.tensor(name).unwrap())
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn rmsnorm(x: &[f32], g: &[f32], eps: f32) -> Vec<f32> {
    let mut ss = 0.0f32;
    for v in x {
        ss += v * v;
    }
    let m = ss * (1.0 / x.len() as f32);
    let r = 1.0 / (m + eps).sqrt();
    x.iter().zip(g).map(|(v, g)| (v * r) * g).collect()
}

fn f16r(v: f32) -> f32 {
    f16_to_f32(f32_to_f16(v))
}

/// Hardware-numerics llama logits (Q8_0/Q4_0/F16 weights, F16 KV cache) per position.
fn llama_hw(g: &Gguf, tokens: &[u32]) -> Vec<Vec<f32>> {
    let u = |k: &str| g.get_u64(&format!("llama.{k}")).unwrap() as usize;
    let (nl, nh) = (u("block_count"), u("attention.head_count"));
    let nkv = u("attention.head_count_kv");
    let eps = g.get_f64("llama.attention.layer_norm_rms_epsilon").unwrap() as f32;
    let base = g.get_f64("llama.rope.freq_base").unwrap_or(10000.0) as f32 as f64;
    let silu = chords(-12.0, 12.0, |x| x / (1.0 + (-x).exp()));
    let exp = chords(-16.0, 0.0, f64::exp);
    let embd = QMat::get(g, "token_embd.weight");
    let cls = if g.tensor("output.weight").is_some() {
        QMat::get(g, "output.weight")
    } else {
        QMat::get(g, "token_embd.weight")
    };
    let dim = embd.cols;
    let hd = dim / nh;
    let group = nh / nkv;
    let mut kc: Vec<Vec<Vec<f32>>> = vec![vec![]; nl];
    let mut vc: Vec<Vec<Vec<f32>>> = vec![vec![]; nl];
    let mut out = vec![];
    for (pos, &tok) in tokens.iter().enumerate() {
        let rope: Vec<(f32, f32)> = (0..hd / 2)
            .map(|j| {
                let th = pos as f64 * base.powf(-2.0 * j as f64 / hd as f64);
                (th.cos() as f32, th.sin() as f32)
            })
            .collect();
        let rot = |v: &mut [f32]| {
            for i in 0..v.len() / 2 {
                let (c, s) = rope[i % (hd / 2)];
                let (a, b) = (v[2 * i], v[2 * i + 1]);
                v[2 * i] = a * c - b * s;
                v[2 * i + 1] = a * s + b * c;
            }
        };
        let mut x = embd.row_f32(tok as usize);
        for l in 0..nl {
            let m = |s: &str| QMat::get(g, &format!("blk.{l}.{s}.weight"));
            let xb = rmsnorm(&x, &vec_f32(g, &format!("blk.{l}.attn_norm.weight")), eps);
            let mut q = m("attn_q").gemv(&xb);
            let mut k = m("attn_k").gemv(&xb);
            let v: Vec<f32> = m("attn_v").gemv(&xb).into_iter().map(f16r).collect();
            rot(&mut q);
            rot(&mut k);
            kc[l].push(k.into_iter().map(f16r).collect());
            vc[l].push(v);
            let mut att = vec![0f32; dim];
            let scale = 1.0 / (hd as f32).sqrt();
            for h in 0..nh {
                let gk = h / group;
                let s: Vec<f32> = kc[l]
                    .iter()
                    .map(|kr| {
                        let mut acc = 0.0f32;
                        for i in 0..hd {
                            acc += q[h * hd + i] * kr[gk * hd + i];
                        }
                        acc * scale
                    })
                    .collect();
                let mx = s.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e: Vec<f32> = s.iter().map(|&v| exp.at(v - mx, 0.0, Some(1.0))).collect();
                let mut z = 0.0f32;
                for v in &e {
                    z += v;
                }
                let rz = 1.0 / z;
                for (t, vr) in vc[l].iter().enumerate() {
                    let w = e[t] * rz;
                    for i in 0..hd {
                        att[h * hd + i] += w * vr[gk * hd + i];
                    }
                }
            }
            let o = m("attn_output").gemv(&att);
            x = x.iter().zip(&o).map(|(a, b)| a + b).collect();
            let xb = rmsnorm(&x, &vec_f32(g, &format!("blk.{l}.ffn_norm.weight")), eps);
            let gate = m("ffn_gate").gemv(&xb);
            let up = m("ffn_up").gemv(&xb);
            let hb: Vec<f32> = gate
                .iter()
                .zip(&up)
                .map(|(a, b)| silu.at(*a, 0.0, None) * b)
                .collect();
            let d = m("ffn_down").gemv(&hb);
            x = x.iter().zip(&d).map(|(a, b)| a + b).collect();
        }
        out.push(cls.gemv(&rmsnorm(&x, &vec_f32(g, "output_norm.weight"), eps)));
    }
    out
}

struct Logits(Vec<Vec<f32>>);
impl Host for Logits {
    fn on_argmax(&mut self, l: &[f32], _m: &Machine) -> Option<u32> {
        self.0.push(l.to_vec());
        None
    }
}

#[test]
fn hardware_mode_is_bit_exact_to_an_independent_reading_of_the_rules() {
    for (t, tied) in [
        (GgmlType::Q8_0, false),
        (GgmlType::Q4_0, true),
        (GgmlType::F16, false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.gguf");
        models::write(
            &path,
            &models::build(&ModelOpts::llama().with_wtype(t).with_tied(tied)),
        );
        let g = Gguf::open(&path).unwrap();
        // The full pass at every position (`--all-logits`): every prompt position's logits
        // are compared too.
        let opts = ssnail_convert::Options {
            ctx: Some(32),
            all_logits: true,
            ..Default::default()
        };
        let image = ssnail_convert::convert(&g, &opts).unwrap().image;
        let (mut dev, _) = Ssnail::load_bytes(&image, None).unwrap();
        dev.machine.numerics = Numerics::Hardware;
        let prompt = [1u32, 300, 301, 302, 303, 304, 305, 306];
        let mut cap = Logits(vec![]);
        let gen = dev.generate(&prompt, 6, &mut cap).unwrap();
        let all: Vec<u32> = prompt.iter().chain(&gen.tokens).copied().collect();
        let want = llama_hw(&g, &all[..cap.0.len()]);
        for (p, (a, b)) in cap.0.iter().zip(&want).enumerate() {
            let differ = a
                .iter()
                .zip(b)
                .filter(|(x, y)| x.to_bits() != y.to_bits())
                .count();
            assert_eq!(
                differ,
                0,
                "{} position {p}: {differ} logits differ (e.g. {} vs {})",
                t.name(),
                a[0],
                b[0]
            );
        }
        // And the float mode really differs (the comparison can fail).
        let (mut f, _) = Ssnail::load_bytes(&image, None).unwrap();
        let mut capf = Logits(vec![]);
        f.generate(&prompt, 1, &mut capf).unwrap();
        assert_ne!(capf.0[0], want[0]);
    }
}

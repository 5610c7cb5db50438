//! The trainer's fused operations (src/ops.rs) against what they replace: the Q8_0 rounding is
//! the GGUF writer's (llama.cpp's reference quantiser) dequantised, the F16 rounding is F16's,
//! and the causal softmax and ROPE give the values and gradients of the same computation
//! written with candle's own operations.

use candle_core::{Device, Tensor, Var, D};
use ssnail_format::ggml::{dequantize_native, quantize_native, GgmlType};
use ssnail_train::ops::{causal_softmax, fake_f16, fake_q8_0, RopeTable};

fn randn(shape: &[usize], seed: u64) -> Vec<f32> {
    let mut r = ssnail_train::rng::Rng::new(seed);
    (0..shape.iter().product::<usize>())
        .map(|_| r.normal() as f32 * 1.7)
        .collect()
}

fn close(a: &Tensor, b: &Tensor, what: &str) {
    let a = a.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    let b = b.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-5 * (1.0 + y.abs()),
            "{what}: element {i}: {x} vs {y}"
        );
    }
}

#[test]
fn fake_q8_0_is_the_gguf_writers_quantisation_dequantised_and_passes_the_gradient_through() {
    let v = randn(&[4, 64], 1);
    let x = Var::from_tensor(&Tensor::from_vec(v.clone(), (4, 64), &Device::Cpu).unwrap()).unwrap();
    let q = fake_q8_0(&x).unwrap();
    let mut bytes = Vec::new();
    quantize_native(GgmlType::Q8_0, &v, &mut bytes);
    let mut want = vec![0f32; v.len()];
    dequantize_native(GgmlType::Q8_0, &bytes, &mut want);
    assert_eq!(q.flatten_all().unwrap().to_vec1::<f32>().unwrap(), want);
    let g = (q * 3.0).unwrap().sum_all().unwrap().backward().unwrap();
    let gx = g
        .get(&x)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    assert!(gx.iter().all(|&d| d == 3.0));
}

#[test]
fn fake_f16_rounds_to_f16() {
    let v = randn(&[3, 32], 2);
    let x = Tensor::from_vec(v.clone(), (3, 32), &Device::Cpu).unwrap();
    let want: Vec<f32> = v.iter().map(|&x| half::f16::from_f32(x).to_f32()).collect();
    assert_eq!(
        fake_f16(&x)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap(),
        want
    );
}

#[test]
fn causal_softmax_gives_the_values_and_gradients_of_the_masked_softmax() {
    let (b, h, t) = (2, 3, 5);
    let v = randn(&[b, h, t, t], 3);
    let x = Var::from_tensor(&Tensor::from_vec(v, (b, h, t, t), &Device::Cpu).unwrap()).unwrap();
    let w = Tensor::from_vec(randn(&[b, h, t, t], 4), (b, h, t, t), &Device::Cpu).unwrap();
    let scale = 0.35f32;
    let fused = causal_softmax(&x, scale).unwrap();
    let mask: Vec<f32> = (0..t * t)
        .map(|i| if i % t > i / t { -1e30 } else { 0.0 })
        .collect();
    let mask = Tensor::from_vec(mask, (t, t), &Device::Cpu).unwrap();
    let plain = candle_nn::ops::softmax(
        &(x.as_tensor() * scale as f64)
            .unwrap()
            .broadcast_add(&mask)
            .unwrap(),
        D::Minus1,
    )
    .unwrap();
    close(&fused, &plain, "values");
    let gf = (&fused * &w)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    let gp = (&plain * &w)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    close(gf.get(&x).unwrap(), gp.get(&x).unwrap(), "gradients");
}

#[test]
fn rope_gives_the_values_and_gradients_of_the_pairwise_rotation() {
    let (b, t, h, hd) = (2, 7, 2, 16);
    let x = Tensor::from_vec(randn(&[b, t, h, hd], 5), (b, t, h, hd), &Device::Cpu).unwrap();
    let x = Var::from_tensor(&x).unwrap();
    let w = Tensor::from_vec(randn(&[b, t, h, hd], 6), (b, t, h, hd), &Device::Cpu).unwrap();
    let fused = RopeTable::new(16, hd, 10000.0).apply(&x).unwrap();
    // pair i of a head turns by pos·10000^(−2i/hd)
    let (mut c, mut s) = (Vec::new(), Vec::new());
    for p in 0..t {
        for i in 0..hd / 2 {
            let a = p as f32 * 10000f32.powf(-2.0 * i as f32 / hd as f32);
            c.push(a.cos());
            s.push(a.sin());
        }
    }
    let c = Tensor::from_vec(c, (1, t, 1, hd / 2, 1), &Device::Cpu).unwrap();
    let s = Tensor::from_vec(s, (1, t, 1, hd / 2, 1), &Device::Cpu).unwrap();
    let xr = x.reshape((b, t, h, hd / 2, 2)).unwrap();
    let x0 = xr.narrow(4, 0, 1).unwrap();
    let x1 = xr.narrow(4, 1, 1).unwrap();
    let r0 = (x0.broadcast_mul(&c).unwrap() - x1.broadcast_mul(&s).unwrap()).unwrap();
    let r1 = (x0.broadcast_mul(&s).unwrap() + x1.broadcast_mul(&c).unwrap()).unwrap();
    let plain = Tensor::cat(&[r0, r1], 4)
        .unwrap()
        .reshape((b, t, h, hd))
        .unwrap();
    close(&fused, &plain, "values");
    let gf = (&fused * &w)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    let gp = (&plain * &w)
        .unwrap()
        .sum_all()
        .unwrap()
        .backward()
        .unwrap();
    close(gf.get(&x).unwrap(), gp.get(&x).unwrap(), "gradients");
}

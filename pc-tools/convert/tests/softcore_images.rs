//! Images made for the software core (`--core soft`, spec §4.4), on a GGUF
//! of llama2.c stories260K's exact shape as llama.cpp's
//! `convert-llama2c-to-ggml` writes it: every matrix F32, the tied
//! classifier written out as a copy of the embedding, hidden 172 (not whole
//! 32-element blocks). The references here are written from the spec's
//! text, not from the converter's or the core's code.

mod common;

use ssnail_convert::{convert, Converted, Core, Options, Policy};
use ssnail_core::gemv::{gemv_hw, gemv_hw_definition};
use ssnail_core::rowpool::RowPool;
use ssnail_core::{Kernels, NoHost, Numerics, Ssnail};
use ssnail_format::ggml::GgmlType;
use ssnail_format::isa::{Instr, Op, INSTR_LEN};
use ssnail_gguf::Gguf;
use ssnail_testkit::models::{self, ModelOpts};

fn stories260k() -> (tempfile::TempDir, Gguf) {
    common::open_named(
        &models::build(&ModelOpts::stories260k()),
        "stories260K.gguf",
    )
}

fn made_for(core: Core, g: &Gguf) -> Converted {
    let o = Options {
        policy: Policy::Auto,
        core,
        ..Options::default()
    };
    convert(g, &o).unwrap()
}

/// The script's instructions (§3.1), up to the first NOP after the code.
fn script(img: &[u8]) -> Vec<Instr> {
    let h = ssnail_format::image::Header::parse(img).unwrap();
    let mut v = Vec::new();
    let mut a = h.code;
    while a < h.data {
        let i = Instr::decode(common::bytes_at(img, a, 16));
        if i.op() == Some(Op::Nop) {
            break;
        }
        v.push(i);
        a += INSTR_LEN;
    }
    v
}

fn f32s(g: &Gguf, name: &str) -> Vec<f32> {
    let t = g.tensor(name).unwrap();
    assert_eq!(t.ty, GgmlType::F32);
    g.data(t)
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn the_stories260k_shape_made_for_the_software_core_has_only_block_formats_one_classifier_and_fits_the_d81(
) {
    let (_d, g) = stories260k();
    let c = made_for(Core::Soft, &g);
    let code = script(&c.image);
    let gemvs: Vec<&Instr> = code.iter().filter(|i| i.op() == Some(Op::Gemv)).collect();
    // Seven matrices a layer in five GEMVs (q with k, v, output, gate with up,
    // down), the last layer's k apart from its moved query, the classifier.
    assert_eq!(
        gemvs.len(),
        5 * 5 + 1 + 1,
        "five GEMVs a layer, the last layer's k and the classifier"
    );
    for i in &gemvs {
        let f = GgmlType::from_u32(i.a as u32).unwrap();
        assert!(
            matches!(f, GgmlType::Q8_0 | GgmlType::Q4_0),
            "a GEMV over {} weights at ${:X}",
            f.name(),
            i.x
        );
    }
    // The classifier is the embedding: one copy, the DEQROW's and the last GEMV's address.
    let deq = code.iter().find(|i| i.op() == Some(Op::DeqRow)).unwrap();
    let lea_embd = code
        .iter()
        .find(|i| i.op() == Some(Op::Lea) && i.a == 1)
        .unwrap();
    assert_eq!(
        deq.a, gemvs[26].a,
        "embedding and classifier share a format"
    );
    assert_eq!(
        lea_embd.x, gemvs[26].x,
        "the classifier reads the embedding"
    );
    assert!(
        !c.report.stored.iter().any(|s| s.name == "output.weight"),
        "output.weight stored once, as token_embd"
    );
    // 512 rows of 64 as Q8_0 once: 34,816 bytes, not twice.
    let weights: usize = c.report.stored.iter().map(|s| s.bytes).sum();
    assert!(weights < 340_000, "{weights} bytes of weights");
    // On the D81 beside the program: 3160 blocks of 254 bytes on an empty disk.
    let blocks = ssnail_disk::D81::blocks_for(c.image.len());
    assert!(
        blocks <= ssnail_disk::EMPTY_DISK_FREE_BLOCKS / 2,
        "{} bytes = {blocks} blocks",
        c.image.len()
    );
    // The FPGA core's image keeps the GGUF's F32 and stores the copy (upstream's layout).
    let f = made_for(Core::Fpga, &g);
    assert!(f.report.stored.iter().any(|s| s.name == "output.weight"));
    assert!(script(&f.image)
        .iter()
        .filter(|i| i.op() == Some(Op::Gemv))
        .all(|i| i.a == GgmlType::F32 as u8));
    assert!(
        ssnail_disk::D81::blocks_for(f.image.len()) > ssnail_disk::EMPTY_DISK_FREE_BLOCKS,
        "today's default image of stories260K does not fit the D81"
    );
}

/// A short-or-full Q8_0 block of `x` by §4.2 (llama.cpp's reference
/// quantiser): d = max|x|/127 as F16, q = round-half-away(x·(1/d)).
fn q8_block(x: &[f32]) -> (f32, Vec<i32>) {
    let amax = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let q = x.iter().map(|v| (v * id).round() as i32).collect();
    (half::f16::from_f32(d).to_f32(), q)
}

/// The row math of §5.3 on the unpadded row and input: blocks of 32 and a
/// last block of what is left; acc = acc + single(isum)·(dw·dx).
fn unpadded_row(w: &[f32], x: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for (wb, xb) in w.chunks(32).zip(x.chunks(32)) {
        let (dw, qw) = q8_block(wb);
        let (dx, qx) = q8_block(xb);
        let isum: i32 = qw.iter().zip(&qx).map(|(a, b)| a * b).sum();
        acc += isum as f32 * (dw * dx);
    }
    acc
}

#[test]
fn the_padded_q8_0_ffn_down_gives_the_unpadded_row_math_bit_for_bit() {
    let (_d, g) = stories260k();
    let c = made_for(Core::Soft, &g);
    let code = script(&c.image);
    // Layer 0's ffn_down: the GEMV with ACC after SILUMUL, over hidden 192 (172 padded).
    let at = code
        .iter()
        .position(|i| i.op() == Some(Op::SiluMul))
        .unwrap();
    let down = code[at + 1..]
        .iter()
        .find(|i| i.op() == Some(Op::Gemv))
        .unwrap();
    let setn = code[..at]
        .iter()
        .rev()
        .find(|i| i.op() == Some(Op::SetN))
        .unwrap();
    assert_eq!(setn.x, 172, "SILUMUL over the model's hidden size");
    assert_eq!(down.a, GgmlType::Q8_0 as u8);
    let (rows, cols, hidden) = (64usize, 192usize, 172usize);
    let w = common::bytes_at(&c.image, down.x, rows * cols / 32 * 34);
    let w_ref = f32s(&g, "blk.0.ffn_down.weight");
    // Inputs as the script leaves them: 172 values from SILUMUL, then the
    // COPY's +0 (and −0, which the earlier padded gate rows left).
    let mut rng = 12345u64;
    for trial in 0..50 {
        let mut x = vec![0.0f32; cols];
        for v in &mut x[..hidden] {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (rng >> 40) as f32 / (1u64 << 24) as f32;
            *v = (u - 0.5) * if trial % 5 == 0 { 1e-3 } else { 4.0 };
        }
        for (j, v) in x[hidden..].iter_mut().enumerate() {
            *v = if (trial + j) % 2 == 0 { 0.0 } else { -0.0 };
        }
        let mut y_def = vec![0.0f32; rows];
        gemv_hw_definition(GgmlType::Q8_0, w, rows, &x, &mut y_def);
        let mut y_fast = vec![0.0f32; rows];
        let mut pool = RowPool::new(1);
        gemv_hw(
            Kernels::best(),
            GgmlType::Q8_0,
            w,
            &x,
            &mut y_fast,
            &mut pool,
        );
        for r in 0..rows {
            let want = unpadded_row(&w_ref[r * hidden..(r + 1) * hidden], &x[..hidden]);
            assert_eq!(
                y_def[r].to_bits(),
                want.to_bits(),
                "trial {trial}, row {r}: definition {} vs unpadded {want}",
                y_def[r]
            );
            assert_eq!(
                y_fast[r].to_bits(),
                want.to_bits(),
                "trial {trial}, row {r}: kernel"
            );
        }
    }
}

#[test]
fn the_ffn_activations_tail_is_zero_even_when_scratch_starts_as_junk() {
    // Gate and up have the model's 172 rows and SILUMUL runs over 172, so
    // nothing computes hb's elements 172-191, which ffn_down reads: the
    // script copies zeros there once a job. Scratch need not be cleared
    // (§1.1), so it starts here as bytes $4F (singles of 3.5e9, which would
    // set the last input block's scale of ffn_down; a NaN would not): the
    // tokens, the logits and hb's tail must be those of a run on cleared
    // scratch.
    let (_d, g) = stories260k();
    let c = made_for(Core::Soft, &g);
    let code = script(&c.image);
    let silu: Vec<&Instr> = code
        .iter()
        .filter(|i| i.op() == Some(Op::SiluMul))
        .collect();
    assert_eq!(silu.len(), 5);
    let hb = silu[0].z;
    let copies: Vec<&Instr> = code.iter().filter(|i| i.op() == Some(Op::Copy)).collect();
    assert_eq!(copies.len(), 1, "one COPY a job");
    assert_eq!((copies[0].y, copies[0].z), (hb + 4 * 172, 4 * 20));
    let h = ssnail_format::image::Header::parse(&c.image).unwrap();
    let off = |a: u32| (a - ssnail_format::image::BASE) as usize;
    let run = |junk: bool| {
        let (mut dev, _) = Ssnail::load_bytes(&c.image, None).unwrap();
        dev.machine.numerics = Numerics::Hardware;
        if junk {
            dev.machine.mem_mut()[off(h.scratch)..].fill(0x4F);
        }
        let g2 = dev.generate(&[1, 259, 82, 273], 4, &mut NoHost).unwrap();
        assert_eq!(g2.tokens.len(), 4);
        let mem = dev.machine.mem();
        let logits = mem[off(h.output)..off(h.output) + 4 * 512].to_vec();
        let tail = mem[off(hb) + 4 * 172..off(hb) + 4 * 192].to_vec();
        (g2.tokens, logits, tail)
    };
    let (clean, junk) = (run(false), run(true));
    assert_eq!(clean.0, junk.0, "tokens");
    assert!(clean.1 == junk.1, "logits");
    for (j, c4) in junk.2.chunks_exact(4).enumerate() {
        let v = u32::from_le_bytes(c4.try_into().unwrap());
        assert_eq!(v, 0, "hb[{}] after the last layer", 172 + j);
    }
}

#[test]
fn auto_for_the_software_core_tries_q8_0_then_mixed_then_q4_0_and_keeps_block_formats() {
    let (_d, g) = stories260k();
    let opts = |mem_mb: f64| Options {
        mem_mb,
        ..Options {
            policy: Policy::Auto,
            core: Core::Soft,
            ..Options::default()
        }
    };
    let s = ssnail_convert::Sizer::new(&g, &opts(8.0)).unwrap();
    let need = |p: Policy| s.need(p, 256).unwrap() as f64 / (1 << 20) as f64;
    let (q8, mixed, q4) = (
        need(Policy::All(GgmlType::Q8_0)),
        need(Policy::Mixed),
        need(Policy::All(GgmlType::Q4_0)),
    );
    assert!(q4 < mixed && mixed < q8, "{q4} {mixed} {q8}");
    for (mb, want) in [
        (8.0, Policy::All(GgmlType::Q8_0)),
        ((mixed + q8) / 2.0, Policy::Mixed),
        ((q4 + mixed) / 2.0, Policy::All(GgmlType::Q4_0)),
    ] {
        let p = ssnail_convert::plan(&g, &opts(mb)).unwrap();
        assert_eq!(p.policy, want, "{mb} MB");
        // Every matrix in a block format, whatever the policy.
        assert!(p
            .stored
            .iter()
            .filter(|t| t.matrix)
            .all(|t| t.dst.block_len() == 32));
    }
    // A GGUF already in Q4_0 stays as it is (keep): nothing repacked.
    let (_d4, g4) = common::open(&models::build(
        &ModelOpts::llama().with_wtype(GgmlType::Q4_0),
    ));
    let p = ssnail_convert::plan(&g4, &opts(8.0)).unwrap();
    assert_eq!(p.policy, Policy::Keep);
    assert!(p.stored.iter().all(|t| !t.repacked()));
}

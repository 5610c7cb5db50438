//! Weight policies (§4.2, §4.3), memory limits (§1.9), the too-big message
//! (§1.11) and bad input through the library.

mod common;
use common::*;
use ssnail_convert::{convert, plan, ErrorKind, Interface, Options, Policy};
use ssnail_format::ggml::GgmlType;
use ssnail_gguf::writer::{GgufWriter, MetaValue};
use ssnail_gguf::{Gguf, TensorInfo};
use ssnail_testkit::models::{self, ModelOpts};

fn auto_gpt2(wtype: GgmlType) -> ModelOpts {
    ModelOpts {
        dim: 256,
        hidden: 1024,
        ..ModelOpts::gpt2().with_wtype(wtype)
    }
}

fn o(policy: Policy, mem_mb: f64) -> Options {
    Options {
        ctx: Some(32),
        policy,
        mem_mb,
        ..Options::default()
    }
}

/// §10.4: keep > q8_0 > mixed > q4_0 in size, for F16 and Q8_0 sources.
#[test]
fn policy_sizes_order() {
    for src in [GgmlType::F16, GgmlType::Q8_0] {
        let (_d, g) = open(&models::build(&auto_gpt2(src)));
        let size = |p| convert(&g, &o(p, 8.0)).unwrap().image.len();
        let s = [
            size(Policy::Keep),
            size(Policy::All(GgmlType::Q8_0)),
            size(Policy::Mixed),
            size(Policy::All(GgmlType::Q4_0)),
        ];
        if src == GgmlType::F16 {
            assert!(s[0] > s[1], "{s:?}");
        } else {
            assert_eq!(s[0], s[1], "a Q8_0 source kept is Q8_0");
        }
        assert!(s[1] > s[2] && s[2] > s[3], "{src:?}: {s:?}");
    }
}

#[test]
fn auto_picks_the_first_that_fits_and_tracks_loss() {
    let (_d, g) = open(&models::build(&auto_gpt2(GgmlType::F16)));
    // Everything fits in 8 MB: keep wins.
    let p = plan(&g, &o(Policy::Auto, 8.0)).unwrap();
    assert!(p.auto);
    assert_eq!(p.policy, Policy::Keep);
    // 1.5 MB: only Q4_0 fits; an F16 source never counts as lossy.
    let p = plan(&g, &o(Policy::Auto, 1.5)).unwrap();
    assert_eq!(p.policy, Policy::All(GgmlType::Q4_0));
    assert!(p.stored.iter().all(|s| !s.lossy()));
    let out = p.build(&|_| {});
    assert_eq!(
        out.report.lines()[0],
        "auto: using --wtype q4_0 (every matrix Q4_0, 4.5 bits per weight)"
    );
    // A Q8_0 source: Q4_0 loses bits on every matrix.
    let (_d, g) = open(&models::build(&auto_gpt2(GgmlType::Q8_0)));
    let p = plan(&g, &o(Policy::Auto, 1.5)).unwrap();
    assert_eq!(p.policy, Policy::All(GgmlType::Q4_0));
    let lossy = p.stored.iter().filter(|s| s.lossy()).count();
    assert_eq!(lossy, p.stored.iter().filter(|s| s.matrix).count());
    let w = ssnail_convert::report::lossy_warning(&g, &p).unwrap();
    assert!(w.starts_with("WARNING: model fits in 1.5 MB only as --wtype q4_0, which loses precision on 100.0% of the weights (Q8_0 -> Q4_0)."), "{w}");
    assert!(w.contains("--wtype q4_0"));
    // Nothing fits: the too-big message says so.
    let e = plan(&g, &o(Policy::Auto, 0.5)).err().unwrap();
    assert_eq!(e.kind, ErrorKind::TooBig);
    assert!(
        e.msg
            .starts_with("model does not fit in 0.5 MB even with Q4_0 weights."),
        "{}",
        e.msg
    );
}

/// Lossy rule (§4.3): a non-float source stored with fewer bits per weight.
#[test]
fn lossy_rule() {
    let lossy = |src: GgmlType, policy: Policy| {
        let (_d, g) = open(&models::build(
            &ModelOpts::llama().with_wtype(src).with_tied(true),
        ));
        let out = convert(
            &g,
            &Options {
                ctx: Some(16),
                policy,
                ..Options::default()
            },
        )
        .unwrap();
        let n = out.report.stored.iter().filter(|s| s.lossy()).count();
        let note = out
            .report
            .lines()
            .iter()
            .any(|l| l.starts_with("note: ") && l.contains("lost precision"));
        assert_eq!(n > 0, note, "the report notes lost precision");
        n
    };
    assert_eq!(
        lossy(GgmlType::Q8_0, Policy::All(GgmlType::Q4_0)),
        15,
        "Q8_0 8.5 -> Q4_0 4.5"
    );
    assert_eq!(
        lossy(GgmlType::Q4K, Policy::All(GgmlType::Q4_0)),
        0,
        "Q4_K 4.5 -> Q4_0 4.5"
    );
    assert_eq!(
        lossy(GgmlType::Q4K, Policy::Keep),
        0,
        "Q4_K -> Q8_0 fallback"
    );
    assert_eq!(
        lossy(GgmlType::F32, Policy::All(GgmlType::Q4_0)),
        0,
        "float sources never"
    );
    assert_eq!(
        lossy(GgmlType::Q8_0, Policy::Mixed),
        1,
        "only the tied embedding goes to Q4_0"
    );
}

/// The too-big text: what was asked and what it needs, then only what the
/// converter's layout says fits, in the words of the interface in use.
#[test]
fn too_big_message_suggests_only_what_fits() {
    let (_d, g) = open_named(&models::build(&auto_gpt2(GgmlType::F16)), "fp.gguf");
    let e = plan(&g, &o(Policy::All(GgmlType::F16), 0.0)).err().unwrap();
    assert_eq!(e.kind, ErrorKind::TooBig);
    let lines: Vec<&str> = e.msg.lines().collect();
    assert_eq!(lines[0], "fp does not fit in 0 MB.");
    assert!(
        lines[1].starts_with("  it needs ") && lines[1].contains("--wtype f16"),
        "{}",
        lines[1]
    );
    // Nothing fits 0 MB, whatever the format or context; 8 MB (every
    // board) fits F16 as asked, so the larger boards add nothing.
    assert!(!e.msg.contains("--ctx") && !e.msg.contains("weight formats fit"));
    assert_eq!(lines[2], "A larger memory size fits:");
    assert!(
        lines[3].starts_with("  --mem-mb 8 (") && lines[3].ends_with(" MB with f16; any board)"),
        "{}",
        lines[3]
    );
    assert_eq!(lines.len(), 4, "{}", e.msg);
    // Each suggestion is true: converting with it works.
    let need: f64 = lines[3]
        .split(" (")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let p = plan(&g, &o(Policy::All(GgmlType::F16), 8.0)).unwrap();
    assert_eq!(
        format!("{need:.2}"),
        format!("{:.2}", p.mem_needed as f64 / (1 << 20) as f64)
    );

    // Just below what F16 needs: Q8_0 and smaller fit here, and auto picks the first.
    let mb = p.mem_needed as f64 / (1 << 20) as f64 - 0.01;
    let e = plan(&g, &o(Policy::All(GgmlType::F16), mb)).err().unwrap();
    let lines: Vec<&str> = e.msg.lines().collect();
    assert_eq!(
        lines[2],
        "In ".to_string()
            + &format!("{mb}")
            + " MB with the 32-token context, these weight formats fit:"
    );
    assert!(
        lines[3].starts_with("  --wtype keep") || lines[3].starts_with("  --wtype q8_0"),
        "{}",
        e.msg
    );
    assert!(
        e.msg.contains("  or --wtype auto, which picks "),
        "{}",
        e.msg
    );
    // Make's words when the Makefile converts.
    let e = plan(
        &g,
        &Options {
            interface: Interface::Make,
            ..o(Policy::All(GgmlType::F16), mb)
        },
    )
    .err()
    .unwrap();
    assert!(
        e.msg.contains("  WTYPE=q8_0 (") && e.msg.contains("or WTYPE=auto"),
        "{}",
        e.msg
    );
    assert!(
        !e.msg.contains("--"),
        "no command-line flags under make: {}",
        e.msg
    );

    let e = plan(&g, &o(Policy::All(GgmlType::F32), 8.0 * 0.1))
        .err()
        .unwrap();
    assert!(e.msg.starts_with("fp does not fit in 0.8 MB."));
    let e = plan(&g, &o(Policy::All(GgmlType::F32), 1.0)).err().unwrap();
    assert!(!e.msg.contains("(the size that works on every board)"));
}

/// A shorter context is suggested at the longest one that fits (found by
/// laying the model out), never a context that does not fit.
#[test]
fn too_big_message_gives_the_longest_context_that_fits() {
    let (_d, g) = open_named(
        &models::build(&ModelOpts::llama().with_wtype(GgmlType::Q4_0)),
        "q4.gguf",
    );
    let at = |ctx: u32, mb: f64| {
        plan(
            &g,
            &Options {
                ctx: Some(ctx),
                ..o(Policy::All(GgmlType::Q4_0), mb)
            },
        )
    };
    let need = |ctx| at(ctx, 128.0).unwrap().mem_needed as f64 / (1 << 20) as f64;
    // A size between what 100 and 101 positions need.
    let mb = (need(100) + need(101)) / 2.0;
    let e = at(1000, mb).err().unwrap();
    assert!(
        e.msg.contains("In ") && e.msg.contains("a shorter context fits:"),
        "{}",
        e.msg
    );
    assert!(e.msg.contains("\n  --ctx 100 ("), "{}", e.msg);
    assert!(at(100, mb).is_ok() && at(101, mb).is_err());
    // Below what one position needs, no context is offered.
    let e = at(1000, need(1) - 0.01).err().unwrap();
    assert!(!e.msg.contains("--ctx"), "{}", e.msg);
}

/// A Q4_0 model of ~100M FFN weights: 2 layers of dim 256 with an FFN of
/// `hidden` (tensor data zero; the converter's plan never reads it).
fn wide_ffn(hidden: u64, wtype: GgmlType) -> Vec<u8> {
    let (_d, g) = open(&models::build(&ModelOpts::llama().with_wtype(wtype)));
    let mut w = GgufWriter::new();
    for (k, v) in &g.metadata {
        if k == "llama.feed_forward_length" {
            w.meta(k, MetaValue::U32(hidden as u32));
        } else {
            w.meta(k, MetaValue::from(v));
        }
    }
    for t in &g.tensors {
        let shape: Vec<u64> = if t.shape.len() < 2 {
            t.shape.clone()
        } else if t.name.contains("ffn_down") {
            vec![hidden, t.shape[1]]
        } else if t.name.contains("ffn_") {
            vec![t.shape[0], hidden]
        } else {
            t.shape.clone()
        };
        let n: u64 = shape.iter().product();
        let bytes = n as usize / t.ty.block_len() * t.ty.block_bytes();
        w.tensor(&t.name, &shape, t.ty, vec![0u8; bytes]).unwrap();
    }
    w.to_bytes().unwrap()
}

/// Too big for every board: the message says so plainly, offers the
/// emulator's size, and how many weights a board could hold; never a size
/// smaller than the one asked for.
#[test]
fn too_big_for_every_board_says_so_and_what_would_fit() {
    let (_d, g) = open_named(&wide_ffn(100_000, GgmlType::Q4_0), "wide.gguf");
    let e = plan(&g, &o(Policy::Auto, 8.0)).err().unwrap();
    assert!(
        e.msg.contains(
            "No MEGA65 board can run wide: even --wtype q4_0 with a 1-token context needs "
        ),
        "{}",
        e.msg
    );
    assert!(
        e.msg.contains("more than the 72 MB of an R4-R6"),
        "{}",
        e.msg
    );
    assert!(
        e.msg.contains("A smaller model would: 72 MB holds about "),
        "{}",
        e.msg
    );
    assert!(e.msg.contains("runs in the emulator only"), "{}", e.msg);
    let emu: f64 = e
        .msg
        .split("--mem-mb ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(emu > 72.0 && emu <= 128.0, "{}", e.msg);
    assert!(
        !e.msg.contains("--mem-mb 64") && !e.msg.contains("--mem-mb 72"),
        "{}",
        e.msg
    );
    assert!(
        !e.msg.contains("--ctx"),
        "no context makes it fit 8 MB: {}",
        e.msg
    );
    assert!(
        plan(&g, &o(Policy::Auto, emu)).is_ok(),
        "the emulator size fits"
    );
    assert!(plan(&g, &o(Policy::Auto, 72.0)).is_err());
}

/// The lossy warning suggests a larger memory size only when one exists
/// above the asked size where a lossless policy fits.
#[test]
fn lossy_warning_never_suggests_a_smaller_memory_size() {
    // Q8_0 source: Q8_0 needs > 100 MB, Q4_0 (lossy) about 60 MB.
    let (_d, g) = open_named(&wide_ffn(70_016, GgmlType::Q8_0), "q8wide.gguf");
    let p = plan(&g, &o(Policy::Auto, 100.0)).unwrap();
    assert_eq!(p.policy, Policy::All(GgmlType::Q4_0));
    let w = ssnail_convert::report::lossy_warning(&g, &p).unwrap();
    assert!(
        !w.contains("--mem-mb"),
        "nothing larger than 100 MB is a board: {w}"
    );
    assert!(
        w.contains("To accept without being asked: --wtype q4_0."),
        "{w}"
    );
    // The small Q8_0 model at 1.5 MB: 8 MB holds it without loss.
    let (_d, g) = open(&models::build(&auto_gpt2(GgmlType::Q8_0)));
    let p = plan(&g, &o(Policy::Auto, 1.5)).unwrap();
    let w = ssnail_convert::report::lossy_warning(&g, &p).unwrap();
    assert!(
        w.contains("a larger memory size (--mem-mb 8: keep without loss, any board)"),
        "{w}"
    );
}

/// §1.9: the limit is $8000000 + size·1 MiB exactly.
#[test]
fn memory_limit_is_exact() {
    let (_d, g) = open(&models::build(&ModelOpts::gpt2()));
    let need = plan(&g, &o(Policy::Keep, 8.0)).unwrap().mem_needed;
    let mb = need as f64 / (1 << 20) as f64;
    assert!(plan(&g, &o(Policy::Keep, mb)).is_ok(), "fits exactly");
    let e = plan(&g, &o(Policy::Keep, mb - 1e-6)).err().unwrap();
    assert_eq!(e.kind, ErrorKind::TooBig);
}

/// Rows that are not whole blocks of the asked format are stored as F16,
/// and the report names the tensor and why.
#[test]
fn f16_instead_when_rows_are_not_whole_blocks() {
    let m = ModelOpts {
        dim: 48,
        n_heads: 4,
        n_kv_heads: 2,
        hidden: 64,
        ..ModelOpts::llama()
    };
    let (_d, g) = open(&models::build(&m));
    let out = convert(
        &g,
        &Options {
            ctx: Some(16),
            policy: Policy::All(GgmlType::Q8_0),
            ..Options::default()
        },
    )
    .unwrap();
    let st = |n: &str| {
        out.report
            .stored
            .iter()
            .find(|s| s.name == n)
            .unwrap()
            .clone()
    };
    assert_eq!(st("blk.0.attn_q.weight").dst, GgmlType::F16, "48 columns");
    assert_eq!(
        st("blk.0.ffn_down.weight").dst,
        GgmlType::Q8_0,
        "64 columns"
    );
    assert!(out.report.lines().iter().any(|l| l
        == "  blk.0.attn_q.weight: stored as F16 instead of Q8_0: rows of 48 are not a multiple of its 32-element block"));
}

#[test]
fn context_limits() {
    let (_d, g) = open(&models::build(&ModelOpts::llama()));
    let err = |ctx| {
        plan(
            &g,
            &Options {
                ctx: Some(ctx),
                ..Options::default()
            },
        )
        .err()
        .unwrap()
    };
    let e = err(5000);
    assert_eq!(e.kind, ErrorKind::Options);
    assert!(
        e.msg.contains("token buffer holds 4095 tokens"),
        "{}",
        e.msg
    );
    assert!(e.msg.starts_with(&g.path.display().to_string()));
    assert!(plan(
        &g,
        &Options {
            ctx: Some(4095),
            mem_mb: 64.0,
            ..Options::default()
        }
    )
    .is_ok());
    assert_eq!(err(4096).kind, ErrorKind::Options);
    // Default: min(context_length, 256) for decoders.
    assert_eq!(plan(&g, &Options::default()).unwrap().ctx, 128);
    let (_d, g) = open(&models::build(&ModelOpts::gpt2()));
    let e = plan(
        &g,
        &Options {
            ctx: Some(65),
            ..Options::default()
        },
    )
    .err()
    .unwrap();
    assert!(
        e.msg.contains("64 positions of position_embd.weight"),
        "{}",
        e.msg
    );
}

#[test]
fn memory_beyond_the_address_space_is_refused() {
    let (_d, g) = open(&models::build(&ModelOpts::gpt2()));
    let e = plan(&g, &o(Policy::Keep, 129.0)).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Options);
    assert!(e.msg.contains("28-bit"), "{}", e.msg);
    assert!(plan(&g, &o(Policy::Keep, 128.0)).is_ok());
    // Between 72 and 128 MB: an emulator-only image, and the report says so
    // when it needs more than 72 MB.
    let big = ModelOpts {
        dim: 1024,
        hidden: 4096,
        n_heads: 8,
        n_kv_heads: 8,
        n_layers: 3,
        ..ModelOpts::gpt2().with_wtype(GgmlType::F16)
    };
    let (_d, g) = open(&models::build(&big));
    let p = plan(
        &g,
        &Options {
            ctx: Some(64),
            mem_mb: 100.0,
            ..Options::default()
        },
    );
    let lines = p.unwrap().build(&|_| {}).report.lines().to_vec();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("runs only in the emulator")),
        "{lines:?}"
    );
}

/// Copy a GGUF's metadata and tensors; `edit` may drop a tensor (None)
/// or replace its (shape, type, bytes).
fn rewrite(
    g: &Gguf,
    edit: impl Fn(&TensorInfo) -> Option<(Vec<u64>, GgmlType, Vec<u8>)>,
) -> Vec<u8> {
    let mut w = GgufWriter::new();
    for (k, v) in &g.metadata {
        w.meta(k, MetaValue::from(v));
    }
    for t in &g.tensors {
        if let Some((shape, ty, data)) = edit(t) {
            w.tensor(&t.name, &shape, ty, data).unwrap();
        }
    }
    w.to_bytes().unwrap()
}

fn same_tensor(g: &Gguf, t: &TensorInfo) -> Option<(Vec<u64>, GgmlType, Vec<u8>)> {
    Some((t.shape.clone(), t.ty, g.data(t).to_vec()))
}

#[test]
fn missing_and_misshaped_tensors() {
    let (_d, g) = open(&models::build(&ModelOpts::llama()));
    let (_d2, g2) = open(&rewrite(&g, |t| {
        (t.name != "blk.1.ffn_up.weight")
            .then(|| same_tensor(&g, t))
            .flatten()
    }));
    let e = convert(&g2, &Options::default()).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Model);
    assert_eq!(
        e.msg,
        format!("{}: missing tensor blk.1.ffn_up.weight", g2.path.display())
    );
    // attn_k stored as [128, 256] instead of [256, 128] (same byte count).
    let (_d3, g3) = open(&rewrite(&g, |t| {
        let (s, ty, d) = same_tensor(&g, t)?;
        Some((
            if t.name == "blk.0.attn_k.weight" {
                vec![128, 256]
            } else {
                s
            },
            ty,
            d,
        ))
    }));
    let e = convert(&g3, &Options::default()).err().unwrap();
    assert_eq!(
        e.msg,
        format!(
            "{}: tensor blk.0.attn_k.weight has shape [128, 256], expected [256, 128]",
            g3.path.display()
        )
    );
}

#[test]
fn unsupported_architecture_and_tensor_type() {
    let mut w = GgufWriter::new();
    w.meta_str("general.architecture", "mamba");
    let (_d, g) = open(&w.to_bytes().unwrap());
    let e = convert(&g, &Options::default()).err().unwrap();
    assert!(
        e.msg
            .ends_with("unsupported architecture 'mamba' (supported: llama, gpt2, bert)"),
        "{}",
        e.msg
    );
    // An IQ2_XXS matrix cannot be read, so it cannot be repacked.
    let (_d, g) = open(&models::build(&ModelOpts::llama()));
    let iq = GgmlType::Iq2Xxs;
    let (_d2, g2) = open(&rewrite(&g, |t| {
        if t.name == "blk.0.attn_q.weight" {
            let n = t.n_elements() as usize / iq.block_len() * iq.block_bytes();
            Some((t.shape.clone(), iq, vec![0; n]))
        } else {
            same_tensor(&g, t)
        }
    }));
    let e = convert(&g2, &Options::default()).err().unwrap();
    assert_eq!(e.kind, ErrorKind::Model);
    assert!(
        e.msg.ends_with(
            "tensor blk.0.attn_q.weight has type IQ2_XXS, which the converter cannot read"
        ),
        "{}",
        e.msg
    );
}

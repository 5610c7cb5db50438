//! The work limit (spec §6.1): a bound on the bytes a job moves, for hosts
//! that run images they do not trust with a time bound. It faults like the
//! instruction limit (error code 4), before an instruction once the work
//! since load has reached it, and at an ATTN whose per-head reads would take
//! it past; it is off by default and does not change a run that stays below.

mod common;

use ssnail_core::{FaultKind, HostError, Machine, NoHost, Ssnail};
use ssnail_format::image::BASE;
use ssnail_format::isa::{AttnBlock, Instr, Op, KV_F16};
use ssnail_format::registers::error;
use ssnail_gguf::Gguf;
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_tokenizer::ImageTokenizer;

const CODE: u32 = BASE + 0x1000;
const BLK: u32 = BASE + 0x100;
const DATA: u32 = BASE + 0x10_0000;

#[test]
fn the_work_limit_is_off_by_default() {
    assert_eq!(Machine::new(1 << 20).work_limit, u64::MAX);
}

#[test]
fn a_loop_of_large_gemvs_stops_at_the_work_limit_with_error_code_4() {
    // 256 rows × 1024 F32 columns: 1 MiB of weights per GEMV, in an endless
    // loop (what a mutated script did: 200,000 instructions of these took
    // the fuzzer's image target 13 s).
    let (cols, rows) = (1024u32, 256u32);
    let w = DATA;
    let x = DATA + 4 * cols * rows;
    let y = x + 4 * cols;
    let prog = [
        Instr::new(Op::SetN, 0, 0, cols, rows, 0),
        Instr::new(Op::Gemv, 0, 0, w, x, y),
        Instr::new(Op::Beq, 15, 15, CODE + 16, 0, 0),
    ];
    let mut m = common::machine_with(4 << 20, CODE, &prog);
    let limit = 16u64 << 20;
    m.work_limit = limit;
    // A backstop: without the work limit this stops after 500 GEMVs.
    m.instr_limit = 1000;
    let f = m.run(CODE, &mut NoHost).unwrap_err();
    assert_eq!(f.kind, FaultKind::WorkLimit(limit), "{f}");
    assert_eq!(f.code(), error::INSTR_LIMIT);
    assert_eq!(f.code(), 4);
    assert!(
        f.to_string().contains("work limit of 16777216 bytes"),
        "{f}"
    );
    // Stopped at the first instruction after the work reached the limit:
    // less than one loop iteration beyond it.
    let gemv_traffic = 16 + 4 * (cols * rows + cols + rows) as u64;
    let iteration = gemv_traffic + 16;
    assert!(m.work() >= limit, "{}", m.work());
    assert!(m.work() < limit + iteration, "{}", m.work());
    assert_eq!(m.work(), m.traffic.total(), "a GEMV's work is its traffic");
    let gemvs = (m.instructions - 1).div_ceil(2);
    assert_eq!(
        gemvs,
        limit.div_ceil(iteration),
        "{} instructions",
        m.instructions
    );
}

#[test]
fn an_attn_whose_heads_times_rows_is_huge_faults_before_it_computes() {
    // 65,536 heads of dimension 1 sharing one KV head, over 65,536 F16 rows:
    // 768 KiB of operands, but 2^32 scores (seconds of work) in one
    // instruction, which a check before each instruction cannot stop.
    let heads = 1u32 << 16;
    let q = DATA;
    let out = q + 4 * heads;
    let k = out + 4 * heads;
    let v = k + 2 * heads;
    let blk = AttnBlock {
        n_heads: heads,
        n_kv_heads: 1,
        head_dim: 1,
        kv_format: KV_F16,
        k_cache: k,
        v_cache: v,
    };
    let prog = [
        Instr::new(Op::Li, 1, 0, 0, 0, heads - 1),
        Instr::new(Op::Attn, 1, 0, BLK, q, out),
        Instr::new(Op::Halt, 0, 0, 0, 0, 0),
    ];
    let mut m = common::machine_with(2 << 20, CODE, &prog);
    assert!(m.write_bytes(BLK as u64, &blk.encode()));
    let marker = vec![0xA5u8; 4 * heads as usize];
    assert!(m.write_bytes(out as u64, &marker));
    m.work_limit = 1 << 30;
    let f = m.run(CODE, &mut NoHost).unwrap_err();
    assert_eq!(f.kind, FaultKind::WorkLimit(1 << 30), "{f}");
    assert_eq!((f.pc, f.code()), (CODE + 16, 4));
    assert_eq!(f.instr.map(|i| i.op()), Some(Some(Op::Attn)));
    assert_eq!(
        m.bytes(out as u64, 4 * heads as u64).unwrap(),
        &marker[..],
        "nothing written"
    );
    // Counted: 8 bytes per head, row and head dimension.
    assert!(m.work() >= 8 << 32, "{}", m.work());
}

/// A small llama converted to an image, and a prompt for it.
fn tiny_llama() -> (Vec<u8>, Vec<u32>) {
    let g = Gguf::from_bytes("m.gguf", models::build(&ModelOpts::llama())).unwrap();
    let opts = ssnail_convert::Options {
        ctx: Some(32),
        ..Default::default()
    };
    let image = ssnail_convert::convert(&g, &opts).unwrap().image;
    let (dev, _) = Ssnail::load_bytes(&image, None).unwrap();
    let prompt = ImageTokenizer::new(dev.machine.mem())
        .unwrap()
        .encode("Once upon a time", true);
    (image, prompt)
}

#[test]
fn a_model_run_within_the_work_limit_is_unaffected_and_one_below_its_work_faults() {
    let (image, prompt) = tiny_llama();
    let run = |limit: u64| {
        let (mut dev, _) = Ssnail::load_bytes(&image, None).unwrap();
        dev.machine.work_limit = limit;
        let r = dev.generate(&prompt, 8, &mut NoHost);
        (r, dev.machine.work(), dev.machine.instructions)
    };
    let (free, work, instructions) = run(u64::MAX);
    let free = free.unwrap();
    assert_eq!(free.tokens.len(), 8);
    // The same job with the limit at exactly its work: same tokens, same count.
    let (limited, w, n) = run(work);
    let limited = limited.unwrap();
    assert_eq!(limited.tokens, free.tokens);
    assert_eq!((w, n), (work, instructions));
    // With half of it: a fault with code 4, reported through the host API.
    match run(work / 2).0 {
        Err(HostError::Fault(f)) => {
            assert_eq!(f.kind, FaultKind::WorkLimit(work / 2));
            assert_eq!(f.code(), 4);
        }
        other => panic!("expected a work-limit fault, got {other:?}"),
    }
}

//! The software SSNAIL core (mega65/softcore/*.c: the C the 45GS02 runs when no SSNAIL FPGA core
//! is present) built for the PC with its real single arithmetic (softfloat.c, exactsum.c), against
//! the Rust core emulator in hardware numerics (ssnail_core::Machine, Numerics::Hardware): from the
//! same memory, the same memory afterwards, error code and fault PC, bit for bit.
//!
//! Every case runs in two C builds: the default near-memory buffer sizes and tiny ones
//! (softcore_int.h SC_*), so that the chunked streaming crosses every chunk boundary.
//! (a) Instruction level: every opcode of docs/spec/isa.md §3.4 on random operands (mixed
//! magnitudes, odd lengths, unaligned rows, in-place use, relative addresses), and every fault.
//! (b) Whole images: llama, gpt2 and bert with several prompts, weight and KV formats, run to HALT.
//! NaN: the C arithmetic returns one canonical NaN, x86 keeps payloads. Only the special-values
//! test produces NaN on purpose; there, and only in the output words it names, two NaNs (f32 or
//! F16) count as equal. Everywhere else memory must be byte-identical.
//!
//! The jobs are in softcore_jobs/ (shared with the headless-MEGA65 test); this file builds the C
//! core with gcc and runs a job in it (softhost).

mod softcore_jobs;

use softcore_jobs::{check_limits, compare, run_image, rust_core, NanOk, Outcome, PROMPTS};
use ssnail_format::ggml::GgmlType;
use ssnail_mega65_program as common;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// The C core on the PC.

/// The tiny buffer sizes: 6-element vector chunks, 64 quantised GEMV columns, 3 row sums, 5 kept
/// ATTN scores, float GEMV chunks of 7 (F16, BF16) and 5 (F32) elements (the defaults are in softcore_int.h).
const TINY: &[&str] = &[
    "-DSC_VEC=6",
    "-DSC_GEMV_COLS=64",
    "-DSC_GEMV_ROWS=3",
    "-DSC_ATTN_T=5",
    "-DSC_GF_N16=7",
    "-DSC_GF_N32=5",
];

struct Builds {
    _dir: tempfile::TempDir,
    exes: Vec<(&'static str, PathBuf)>,
}

/// softhost (the software core's C with a PC driver and `defines`), made by build.mk into
/// `dir/name`.
fn build(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    let defs = defines.join(" ");
    common::make_for_test(&dir.join(name), "mega65-softhost", &defs, "softhost")
}

fn builds() -> &'static Builds {
    static B: OnceLock<Builds> = OnceLock::new();
    B.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let exes = vec![
            ("default buffers", build(dir.path(), "softhost", &[])),
            ("tiny buffers", build(dir.path(), "softhost_tiny", TINY)),
        ];
        Builds { _dir: dir, exes }
    })
}

fn c_core(exe: &Path, mem: &[u8], job: u32) -> Outcome {
    c_core_limited(exe, mem, job, &[])
}

/// `c_core` with softhost's limits: the instruction limit, then the work limit (0 = none).
fn c_core_limited(exe: &Path, mem: &[u8], job: u32, limits: &[u64]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let (inp, outp) = (dir.path().join("in.bin"), dir.path().join("out.bin"));
    std::fs::write(&inp, mem).unwrap();
    let out = Command::new(exe)
        .arg(&inp)
        .arg(format!("{job:#x}"))
        .arg(&outp)
        .args(limits.iter().map(|l| l.to_string()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "softhost failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).unwrap();
    let f: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(f.len(), 4, "softhost printed {line:?}");
    let outcome = Outcome {
        mem: std::fs::read(&outp).unwrap(),
        error: f[1].parse().unwrap(),
        fault_pc: u32::from_str_radix(f[2].trim_start_matches("0x"), 16).unwrap(),
        syncs: f[3].parse().unwrap(),
    };
    assert_eq!(f[0] == "fault", outcome.error != 0, "{line}");
    outcome
}

/// Runs `mem` from `job` in the Rust core and in both C builds and compares; the Rust outcome.
fn check(what: &str, mem: &[u8], job: u32, nan_ok: &[NanOk]) -> Outcome {
    let rust = rust_core(mem, job);
    for (build, exe) in &builds().exes {
        let c = c_core(exe, mem, job);
        compare(what, build, &rust, &c, nan_ok);
    }
    rust
}

// The instruction-level tests are softcore_jobs' #[test] functions, run through `check`.

// ---------------------------------------------------------------------------------------------
// (b) Whole images.

/// A testkit model converted with context `ctx` and the KV cache format.
fn image(opts: ssnail_testkit::models::ModelOpts, ctx: u32, kv_f16: bool) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    ssnail_testkit::models::write(&path, &ssnail_testkit::models::build(&opts));
    let g = ssnail_gguf::Gguf::open(&path).unwrap();
    let o = ssnail_convert::Options {
        ctx: Some(ctx),
        kv_f16,
        ..ssnail_convert::Options::default()
    };
    ssnail_convert::convert(&g, &o).unwrap().image
}

#[test]
fn llama_images_run_to_halt_with_the_same_memory_as_the_rust_core() {
    use ssnail_testkit::models::ModelOpts;
    let small = ModelOpts {
        dim: 64,
        n_heads: 4,
        n_kv_heads: 2,
        hidden: 128,
        ..ModelOpts::llama()
    };
    run_image(
        "llama Q4_0, F16 KV (the MEGA65 test image)",
        &common::test_images::llama(),
        &PROMPTS,
        6,
    );
    run_image(
        "llama Q8_0, F32 KV",
        &image(small.clone().with_wtype(GgmlType::Q8_0), 32, false),
        &PROMPTS,
        5,
    );
    run_image(
        "llama F16, F16 KV",
        &image(small.clone().with_wtype(GgmlType::F16), 32, true),
        &PROMPTS[..2],
        4,
    );
    run_image(
        "llama BF16 tied, F32 KV",
        &image(
            small.clone().with_wtype(GgmlType::Bf16).with_tied(true),
            32,
            false,
        ),
        &PROMPTS[..1],
        3,
    );
    run_image(
        "llama F32, F16 KV",
        &image(small.with_wtype(GgmlType::F32), 32, true),
        &PROMPTS[..1],
        3,
    );
}

#[test]
fn gpt2_images_run_to_halt_with_the_same_memory_as_the_rust_core() {
    use ssnail_testkit::models::ModelOpts;
    run_image(
        "gpt2 Q8_0, F16 KV (the MEGA65 test image)",
        &common::test_images::gpt2(),
        &PROMPTS,
        6,
    );
    run_image(
        "gpt2 Q4_0, F32 KV",
        &image(ModelOpts::gpt2().with_wtype(GgmlType::Q4_0), 32, false),
        &PROMPTS[..2],
        5,
    );
    run_image(
        "gpt2 F16, F16 KV",
        &image(ModelOpts::gpt2().with_wtype(GgmlType::F16), 32, true),
        &PROMPTS[..1],
        3,
    );
}

#[test]
fn bert_images_run_to_halt_with_the_same_memory_as_the_rust_core() {
    use ssnail_testkit::models::ModelOpts;
    run_image(
        "bert Q8_0, F16 KV (the MEGA65 test image)",
        &common::test_images::bert(),
        &PROMPTS,
        0,
    );
    run_image(
        "bert F16 CLS pooling, F32 KV",
        &image(
            ModelOpts::bert().with_wtype(GgmlType::F16).with_pooling(2),
            32,
            false,
        ),
        &PROMPTS[..2],
        0,
    );
    run_image(
        "bert Q4_0, F16 KV",
        &image(ModelOpts::bert().with_wtype(GgmlType::Q4_0), 32, true),
        &PROMPTS[..2],
        0,
    );
}

// ---------------------------------------------------------------------------------------------
// (c) The instruction and work limits (spec §6.1): code 4 where the Rust core gives it.

/// The instruction limit at several points of a whole job, and the work limit exactly at the
/// work before an instruction of every opcode the job has (one byte of traffic counted wrong
/// anywhere before it moves the fault to another instruction), one byte above it, and inside
/// each ATTN's own work: the C core faults with code 4 at the Rust core's PC and leaves the same
/// memory. Without limits both run to HALT.
#[test]
fn the_instruction_and_work_limits_fault_with_code_4_where_the_rust_core_does() {
    let images = [
        ("llama", common::test_images::llama()),
        ("gpt2", common::test_images::gpt2()),
        ("bert", common::test_images::bert()),
    ];
    let names: Vec<&str> = builds().exes.iter().map(|(build, _)| *build).collect();
    for (name, img) in &images {
        check_limits(name, img, &names, |build, mem, job, limits, _| {
            let exe = &builds().exes.iter().find(|(b, _)| *b == build).unwrap().1;
            c_core_limited(exe, mem, job, &limits)
        });
    }
}

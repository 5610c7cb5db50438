//! The software SSNAIL core (mega65/softcore: the interpreter and its single arithmetic) compiled
//! by cc65 into the softcore_test PRG (mega65/testprg/softcore_test.c) and run by the 45GS02 in the headless
//! MEGA65 without an SSNAIL device: each job's SSNAIL memory is poked into attic RAM at $8000000,
//! the PRG does GO and soft_run to HALT or a fault, and all of SSNAIL memory, the error code, the
//! fault PC and the SYNC count must equal ssnail_core::Machine's in hardware numerics, bit for bit.
//! The jobs are softcore_jobs/'s (the same as on the PC): every opcode on random operands, every
//! fault, special values, and the MEGA65 test images (llama Q4_0, gpt2 Q8_0, bert Q8_0) run to
//! HALT with several prompts (the decoders also a second turn on the same KV cache).

mod softcore_jobs;
mod softcore_test_prg;

use softcore_jobs::{check_limits, compare, run_image, rust_core, NanOk, Outcome, PROMPTS};
use ssnail_mega65_program as common;
use std::cell::Cell;
use std::sync::OnceLock;

/// A build's name and PRG.
type Prg = (&'static str, softcore_test_prg::Prg);

/// The PRGs, built once per test binary: the default build (the Q8_0/Q4_0 GEMV and the input
/// quantiser in softgemv65.s) and the C definition of them (-DSC_C_GEMV).
fn prgs() -> &'static [Prg] {
    static PRGS: OnceLock<(tempfile::TempDir, Vec<Prg>)> = OnceLock::new();
    &PRGS
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let build = |sub: &str, defs: &str| {
                softcore_test_prg::build(&dir.path().join(sub), defs)
                    .unwrap_or_else(|e| panic!("{e}"))
            };
            let prgs = vec![
                ("cc65 build with softgemv65.s", build("asm", "")),
                ("cc65 build with the C GEMV", build("c", "-DSC_C_GEMV")),
            ];
            (dir, prgs)
        })
        .1
}

thread_local! {
    /// Whole images run in the default build only (the C GEMV takes five times as long).
    static DEFAULT_ONLY: Cell<bool> = const { Cell::new(false) };
}

/// Runs `mem` from `job` in the Rust core and in the headless MEGA65 (each PRG) and compares;
/// the Rust outcome.
fn check(what: &str, mem: &[u8], job: u32, nan_ok: &[NanOk]) -> Outcome {
    let rust = rust_core(mem, job);
    let n = if DEFAULT_ONLY.get() { 1 } else { prgs().len() };
    for (build, prg) in &prgs()[..n] {
        let r = softcore_test_prg::run(prg, mem, job, 600)
            .unwrap_or_else(|e| panic!("{what} ({build}): {e}"));
        assert!(
            matches!(
                r.state,
                softcore_test_prg::SOFT_HALT | softcore_test_prg::SOFT_FAULT
            ),
            "{what} ({build}): soft_run returned {}",
            r.state
        );
        assert_eq!(
            r.state == softcore_test_prg::SOFT_FAULT,
            r.error != 0,
            "{what} ({build})"
        );
        let c = Outcome {
            mem: r.mem,
            error: r.error,
            fault_pc: r.fault_pc,
            syncs: r.syncs as u64,
        };
        compare(what, build, &rust, &c, nan_ok);
    }
    rust
}

// The instruction-level tests are softcore_jobs' #[test] functions, run through `check`.

#[test]
fn the_llama_test_image_runs_to_halt_with_the_same_memory_as_the_rust_core() {
    DEFAULT_ONLY.set(true);
    let img = common::test_images::llama();
    run_image("llama Q4_0, F16 KV", &img, &PROMPTS, 6);
}

#[test]
fn the_gpt2_test_image_runs_to_halt_with_the_same_memory_as_the_rust_core() {
    DEFAULT_ONLY.set(true);
    let img = common::test_images::gpt2();
    run_image("gpt2 Q8_0, F16 KV", &img, &PROMPTS[..2], 6);
}

#[test]
fn the_bert_test_image_runs_to_halt_with_the_same_memory_as_the_rust_core() {
    DEFAULT_ONLY.set(true);
    let img = common::test_images::bert();
    run_image("bert Q8_0, F16 KV", &img, &PROMPTS, 0);
}

/// The instruction and work limits (spec §6.1) in the cc65 builds, whose checks before each fetch
/// are softstep65.s's in the default build: at each of softcore_jobs' limits of a llama job the
/// PRG faults with code 4 at the Rust core's PC and leaves the same memory, and with the limits
/// just above what the job needs both run to HALT.
#[test]
fn the_instruction_and_work_limits_fault_with_code_4_where_the_rust_core_does() {
    let names: Vec<&str> = prgs().iter().map(|(build, _)| *build).collect();
    check_limits(
        "llama",
        &common::test_images::llama(),
        &names,
        |build, mem, job, limits, what| {
            let prg = &prgs().iter().find(|(b, _)| *b == build).unwrap().1;
            let limits = limits.map(|l| l as u32);
            let r =
                softcore_test_prg::run_limited(ssnail_core::Board::R3, prg, mem, job, limits, 600)
                    .unwrap_or_else(|e| panic!("{what} ({build}): {e}"));
            Outcome {
                mem: r.mem,
                error: r.error,
                fault_pc: r.fault_pc,
                syncs: r.syncs as u64,
            }
        },
    );
}

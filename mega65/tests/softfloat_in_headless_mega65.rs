//! The software SSNAIL core's single-precision arithmetic compiled by cc65 (16-bit int, the 6502
//! code the 45GS02 runs) into a small test PRG (mega65/host/sfm65.c, sfm65_crt0.s, sfm65.cfg) and
//! run in the headless MEGA65 on operation records poked into its memory: the results equal Rust
//! bit for bit, with the hardware multiplier ($D770) and with the portable C multiplication.
//! Also measures the cycles of each operation on the 45GS02 (docs/FINDINGS.md, "Software core:
//! single-precision arithmetic on the 45GS02").

mod softfloat_common;

use softfloat_common::{self as sf, op, rec, with_exp, Rng};
use ssnail_mega65::{Machine, StopReason, CPU_HZ};
use ssnail_mega65_program as common;
use std::process::Command;

/// Where sfm65.c takes its records (sfm65.cfg): the count, then 12-byte records.
const COUNT_AT: u32 = 0x6FFE;
const RECS_AT: u32 = 0x7000;
const MAX_RECS: usize = 2048;

/// The test PRG; `portable_mul` builds softfloat.c with SF_PORTABLE_MUL (no hardware multiplier).
fn build(portable_mul: bool) -> Vec<u8> {
    let m = common::mega65_dir();
    let dir = tempfile::tempdir().unwrap();
    let run = |cmd: &mut Command| {
        let out = cmd.output().unwrap_or_else(|e| {
            panic!("cannot run {cmd:?} ({e}): install cc65, see tools/debian-packages.txt")
        });
        assert!(
            out.status.success(),
            "{cmd:?}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // cc65 then ca65 with every file in the temporary directory (cl65 -c would write its
    // intermediate .s next to the source, where tests running in parallel would collide)
    let mut objs = Vec::new();
    for src in [
        "softcore/softfloat.c",
        "softcore/exactsum.c",
        "host/sfops.c",
        "host/sfm65.c",
    ] {
        let asm = dir.path().join(format!("{}.s", objs.len()));
        let obj = dir.path().join(format!("{}.o", objs.len()));
        let mut cmd = Command::new("cc65");
        cmd.args(["-t", "none", "--cpu", "6502", "-O", "-I"])
            .arg(m.join("softcore"))
            .arg("-I")
            .arg(m.join("host"))
            .arg("-I")
            .arg(m.join("include"));
        if portable_mul {
            cmd.arg("-DSF_PORTABLE_MUL");
        }
        run(cmd.arg("-o").arg(&asm).arg(m.join(src)));
        run(Command::new("ca65")
            .args(["-t", "none", "-o"])
            .arg(&obj)
            .arg(&asm));
        objs.push(obj);
    }
    let crt0 = dir.path().join("crt0.o");
    run(Command::new("cl65")
        .args(["-t", "none", "-c", "-o"])
        .arg(&crt0)
        .arg(m.join("host/sfm65_crt0.s")));
    let prg = dir.path().join("sfm65.prg");
    run(Command::new("cl65")
        .args(["-t", "none", "-C"])
        .arg(m.join("host/sfm65.cfg"))
        .arg("-o")
        .arg(&prg)
        .arg(&crt0)
        .args(&objs)
        .arg("none.lib"));
    std::fs::read(&prg).unwrap()
}

/// Runs one batch (at most MAX_RECS records) on a fresh machine: the results and the cycles
/// from SYS to the exit.
fn run_batch(prg: &[u8], recs: &[sf::Rec]) -> (Vec<u32>, u64) {
    assert!(recs.len() <= MAX_RECS);
    let mut m = Machine::new();
    let (_, entry) = m.load_prg(prg, None).unwrap();
    m.poke_phys(COUNT_AT, &(recs.len() as u16).to_le_bytes());
    m.poke_phys(RECS_AT, &sf::encode(recs));
    m.start_at(entry);
    let start = m.cycles;
    assert_eq!(
        m.run(60 * CPU_HZ),
        StopReason::Exit(0),
        "the PRG did not finish"
    );
    let out = m.peek_phys(RECS_AT, 12 * recs.len());
    let results = out
        .chunks_exact(12)
        .map(|c| u32::from_le_bytes(c[..4].try_into().unwrap()))
        .collect();
    (results, m.cycles - start)
}

/// All records, in batches cut only where no exact sum is under way.
fn run_all(prg: &[u8], recs: &[sf::Rec]) -> Vec<u32> {
    let mut results = Vec::with_capacity(recs.len());
    let mut start = 0;
    while start < recs.len() {
        let mut end = (start + MAX_RECS).min(recs.len());
        if end < recs.len() {
            while matches!(recs[end].op, op::XS_ADD | op::XS_ADD_F16 | op::XS_ROUND) {
                end -= 1;
            }
        }
        results.extend(run_batch(prg, &recs[start..end]).0);
        start = end;
    }
    results
}

/// The edge values, all pairs for the binary operations; 400 generated operands per function; 60
/// exact sums of up to 300 products; F16/BF16 widenings on random and edge halves.
fn check(portable_mul: bool) {
    let prg = build(portable_mul);
    let recs = sf::test_set(0x4565_0265, sf::EDGE, 400, false, 60, 300);
    let got = run_all(&prg, &recs);
    match sf::compare(&recs, &got) {
        Ok(n) => println!("{n} records agree: {}", sf::census(&recs)),
        Err(e) => panic!("cc65 build (portable_mul = {portable_mul}): {e}"),
    }
}

#[test]
fn the_cc65_build_with_the_hardware_multiplier_equals_rust() {
    check(false);
}

#[test]
fn the_cc65_build_with_portable_multiplication_equals_rust() {
    check(true);
}

/// Operands like a model's: activations (exponent 127 ± 10), weights (120 ± 8), random signs.
fn activation(r: &mut Rng) -> u32 {
    with_exp(r.sign(), 127 + r.range(-10, 10), r.u32())
}

/// Cycles of one operation on typical operands: (batch of n − batch of n NOPs) / n.
fn cycles_per_op(prg: &[u8], recs: &[sf::Rec]) -> u64 {
    let nops = vec![rec(op::NOP, 0, 0); recs.len()];
    let (_, with) = run_batch(prg, recs);
    let (_, without) = run_batch(prg, &nops);
    (with - without) / recs.len() as u64
}

/// The records of each measured operation, with its ceiling in cycles (hardware multiplier):
/// about 20 % above what docs/FINDINGS.md records, so a slower change fails here.
fn measured_operations() -> Vec<(&'static str, Vec<sf::Rec>, u64)> {
    let n = 1000;
    let mut r = Rng::new(45);
    let binary = |r: &mut Rng, o| {
        (0..n)
            .map(|_| rec(o, activation(r), activation(r)))
            .collect()
    };
    let unary = |r: &mut Rng, o, mask| (0..n).map(|_| rec(o, activation(r) & mask, 0)).collect();
    let mut products = vec![rec(op::XS_CLEAR, 0, 0)];
    for _ in 0..n - 2 {
        let w = with_exp(r.sign(), 120 + r.range(-8, 8), r.u32());
        products.push(rec(op::XS_ADD, w, activation(&mut r)));
    }
    products.push(rec(op::XS_ROUND, 0, 0));
    let mut f16_products = vec![rec(op::XS_CLEAR, 0, 0)];
    for _ in 0..n - 2 {
        let w = r.below(0x10000) & 0x8000 | (15 + r.range(-8, 0) as u32) << 10 | r.below(0x400);
        f16_products.push(rec(op::XS_ADD_F16, w, activation(&mut r)));
    }
    f16_products.push(rec(op::XS_ROUND, 0, 0));
    let mut rounds = vec![rec(op::XS_CLEAR, 0, 0)];
    rounds.extend(&products[1..33]);
    rounds.resize(n, rec(op::XS_ROUND, 0, 0));
    let ints = (0..n)
        .map(|_| rec(op::FROM_I32, r.u32() >> r.below(24), 0))
        .collect();
    let halves = (0..n)
        .map(|_| rec(op::FROM_F16, 0x3C00 + r.below(0x800) - 0x400, 0))
        .collect();
    let floors = (0..n)
        .map(|_| {
            rec(
                op::FLOOR_I32,
                with_exp(r.sign(), 127 + r.range(-4, 8), r.u32()),
                0,
            )
        })
        .collect();
    vec![
        ("sf_add", binary(&mut r, op::ADD), 2200),
        ("sf_mul", binary(&mut r, op::MUL), 1600),
        ("sf_div", binary(&mut r, op::DIV), 4400),
        ("sf_sqrt", unary(&mut r, op::SQRT, 0x7FFF_FFFF), 24500),
        ("sf_from_i32", ints, 1200),
        ("sf_from_f16", halves, 1000),
        ("sf_to_f16", unary(&mut r, op::TO_F16, !0), 1500),
        ("sf_floor_i32", floors, 1500),
        ("xs_add_product", products, 2200),
        ("xs_add_product_f16", f16_products, 2200),
        ("xs_round", rounds, 14700),
    ]
}

#[test]
fn cycles_per_operation_on_the_45gs02() {
    let (hw, portable) = (build(false), build(true));
    println!("cycles per operation (40.5 MHz): hardware multiplier / portable C multiplication");
    let mut over = Vec::new();
    for (name, recs, ceiling) in measured_operations() {
        let (h, p) = (cycles_per_op(&hw, &recs), cycles_per_op(&portable, &recs));
        println!("| {name} | {h} | {p} |");
        if h > ceiling {
            over.push(format!("{name}: {h} cycles, more than {ceiling}"));
        }
    }
    assert!(over.is_empty(), "slower than recorded: {over:?}");
}

//! The software SSNAIL core's single-precision arithmetic (mega65/softcore/softfloat.c and
//! exactsum.c, the C the 45GS02 runs) built for the PC with mega65/host/softfloat_host.c, against Rust bit
//! for bit: f32 arithmetic for add/sub/mul/div/sqrt/conversions/comparisons,
//! ssnail_core::vector::{recip, rsqrt}, the `half` crate for F16, ssnail_format's BF16 widening,
//! and ssnail_core::exact::ExactSum for the exact sums. Where Rust's result is a NaN the C must
//! give its one documented NaN (softfloat.h SF_NAN / SF_F16_NAN).

mod softfloat_common;

use softfloat_common::{self as sf, op, rec};
use ssnail_mega65_program as common;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// softfloat_host (the software core's C + the record driver), made by build.mk into `dir`.
fn build_softfloat_host(dir: &Path) -> PathBuf {
    common::make_for_test(dir, "mega65-softfloat-host", "", "softfloat_host")
}

/// softfloat_host with `input` on stdin (written from a thread, so a full stdout pipe cannot block it).
fn run_raw(exe: &Path, input: Vec<u8>) -> Output {
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // softfloat_host stops reading at a bad record; a broken pipe is then expected
        let _ = stdin.write_all(&input);
    });
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Output { stdout, ..out }
}

fn run(exe: &Path, recs: &[sf::Rec]) -> Vec<u32> {
    let out = run_raw(exe, sf::encode(recs));
    assert!(
        out.status.success(),
        "softfloat_host: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn check(recs: &[sf::Rec]) {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_softfloat_host(dir.path());
    let got = run(&exe, recs);
    match sf::compare(recs, &got) {
        Ok(n) => println!("{n} records agree: {}", sf::census(recs)),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn every_function_equals_rust_on_edge_pairs_and_random_operands() {
    // all pairs of the edge values, 150,000 generated operands (pairs) per function, every F16
    // and BF16 bit pattern
    check(&sf::test_set(0x5EED_F10A7, sf::EDGE, 150_000, true, 0, 0));
}

#[test]
fn exact_sums_equal_ssnail_core_exact_on_random_vectors() {
    // 8,000 vectors of 1-300 products: activations, every magnitude, cancellation, subnormal
    // and overflowing products, ties, inf/NaN/zeros; each rounded in the middle and at the end
    let mut r = sf::Rng::new(0xE8AC7);
    let mut recs = Vec::new();
    for _ in 0..8000 {
        sf::exact_sum_case(&mut r, 300, &mut recs);
    }
    check(&recs);
}

#[test]
fn exact_sums_hold_long_rows_and_the_extremes() {
    // 2^14 largest products (no overflow of the accumulator's headroom, result inf), the same
    // with alternating signs (exactly 0 → +0), 2^14 smallest products (2^−298 each: rounds to 0),
    // and a row whose sum is exactly the largest single
    let mut recs = vec![rec(op::XS_CLEAR, 0, 0)];
    let max = 0x7F7F_FFFF;
    (0..1 << 14).for_each(|_| recs.push(rec(op::XS_ADD, max, max)));
    recs.push(rec(op::XS_ROUND, 0, 0));
    recs.push(rec(op::XS_CLEAR, 0, 0));
    (0..1 << 14).for_each(|i| recs.push(rec(op::XS_ADD, max, max ^ (i & 1) << 31)));
    recs.push(rec(op::XS_ROUND, 0, 0));
    recs.push(rec(op::XS_CLEAR, 0, 0));
    (0..1 << 14).for_each(|_| recs.push(rec(op::XS_ADD, 1, 1)));
    recs.push(rec(op::XS_ROUND, 0, 0));
    recs.push(rec(op::XS_CLEAR, 0, 0));
    recs.push(rec(op::XS_ADD, max, 0x3F80_0000));
    recs.push(rec(op::XS_ADD, 1, 1));
    recs.push(rec(op::XS_ROUND, 0, 0));
    check(&recs);
}

#[test]
fn bad_records_give_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_softfloat_host(dir.path());
    let mut short = sf::encode(&[rec(op::ADD, 0, 0)]);
    short.extend_from_slice(&[1, 0, 0]);
    let unknown = sf::encode(&[rec(99, 0, 0)]);
    for (input, says) in [
        (
            short,
            "softfloat_host: stdin: 3 bytes after record 1 (records are 12 bytes)\n",
        ),
        (
            unknown,
            "softfloat_host: stdin: record 0: unknown operation 99\n",
        ),
    ] {
        let out = run_raw(&exe, input);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(String::from_utf8_lossy(&out.stderr), says);
    }
}

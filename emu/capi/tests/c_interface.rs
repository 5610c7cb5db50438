//! The C interface as a C host uses it: tests/c/header_check.c compiled against include/ssnail.h
//! and the static library (`make -f emu/build.mk capi-header-check`), run, and its output
//! checked against the register map (ID) and the attic window rules ($D7FE SELSDRAM on R4-R6;
//! R3 ignores it).

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn a_c_program_reads_the_id_and_reaches_the_memory_the_d7fe_bit_selects() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("make")
        .arg("-s")
        .arg("-f")
        .arg(repo().join("emu/build.mk"))
        .arg(format!("SSNAIL_BUILD={}", dir.path().display()))
        .arg("capi-header-check")
        .output()
        .expect("running make capi-header-check");
    assert!(
        out.status.success(),
        "make capi-header-check: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = dir.path().join("capi/header_check");
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    let text = String::from_utf8_lossy(&run.stdout);
    let id = format!("{:02x}", ssnail_core::device::ID_VALUE);
    assert_eq!(
        text,
        format!(
            "id {id} {id}\nsize {} {}\nr4 aa bb\nr4 beyond ff\nr3 cc cc\njobs 0\n",
            8u64 << 20,
            72u64 << 20
        )
    );
}

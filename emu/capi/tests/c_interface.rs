//! The C interface as a C host uses it: tests/c/header_check.c compiled with `cc` against
//! include/ssnail.h and the static library, run, and its output checked against the register
//! map (ID) and the attic window rules ($D7FE SELSDRAM on R4-R6; R3 ignores it).

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn a_c_program_reads_the_id_and_reaches_the_memory_the_d7fe_bit_selects() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "-q", "-p", "ssnail-capi"])
        .current_dir(repo())
        .status()
        .unwrap();
    assert!(status.success());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"));
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("header_check");
    let out = Command::new("cc")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(repo().join("emu/capi/include"))
        .arg(repo().join("emu/capi/tests/c/header_check.c"))
        .arg(target.join("release/libssnail_capi.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .expect("running cc");
    assert!(
        out.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
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

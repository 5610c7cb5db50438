//! What the tests run, built once per test binary with the project's own make rules: the PRG,
//! where its code is, the software core, the `ssnail` binary, and the D81s made of them.

use ssnail_disk::{FileType, D81};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A folder for one build of this process, removed once its files are read.
fn build_dir(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("ssnail-mega65-{what}-{}", std::process::id()))
}

/// The PRG, its chat overlay and what of them is code ([`crate::ProgramCode`]; none when
/// SSNAIL_MEGA65_PRG names the PRG).
fn built_prg() -> &'static (Vec<u8>, Vec<u8>, Option<crate::ProgramCode>) {
    static PRG: OnceLock<(Vec<u8>, Vec<u8>, Option<crate::ProgramCode>)> = OnceLock::new();
    PRG.get_or_init(|| {
        if let Ok(path) = std::env::var("SSNAIL_MEGA65_PRG") {
            let prg = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let ovl = crate::overlay_beside(Path::new(&path)).unwrap_or_else(|e| panic!("{e}"));
            return (prg, ovl, None);
        }
        let out = build_dir("prg");
        let prg = crate::build_prg(&out).unwrap_or_else(|e| panic!("{e}"));
        let ovl = crate::built_overlay(&out).unwrap_or_else(|e| panic!("{e}"));
        let code = crate::program_code(&out).unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&out);
        (prg, ovl, Some(code))
    })
}

/// The PRG, built once (`make mega65-prg`: cc65, linker/mega65.cfg), or the one named by
/// SSNAIL_MEGA65_PRG (to run the tests against another build, e.g. an older one).
pub fn prg() -> &'static [u8] {
    &built_prg().0
}

/// [`prg`]'s chat overlay (`ssnail.ovl`, the same link's), which the program needs beside it on
/// its D81 or SD card; with SSNAIL_MEGA65_PRG the `.ovl` beside that file.
pub fn ovl() -> &'static [u8] {
    &built_prg().1
}

/// What of [`prg`] and its overlays nothing may change ([`crate::program_code`]); none when
/// SSNAIL_MEGA65_PRG names the PRG.
pub fn prg_code() -> Option<&'static crate::ProgramCode> {
    built_prg().2.as_ref()
}

/// An SD card folder holding [`ovl`] as `SSNAIL.OVL` (the program looks beside itself, in any
/// letter case) and `files` (paths relative to the folder, e.g. `SSNAIL/M.SSNAIL`).
pub fn sd_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("SSNAIL.OVL"), ovl()).unwrap();
    for (name, data) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, data).unwrap();
    }
    dir
}

/// The software core's file and where its function tables lie in chip RAM with their bytes (none
/// when SSNAIL_MEGA65_CORE names the file).
type BuiltCore = (Vec<u8>, Option<Vec<(usize, Vec<u8>)>>);

fn built_core() -> &'static BuiltCore {
    static CORE: OnceLock<BuiltCore> = OnceLock::new();
    CORE.get_or_init(|| {
        if let Ok(path) = std::env::var("SSNAIL_MEGA65_CORE") {
            return (
                std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
                None,
            );
        }
        let out = build_dir("core");
        let core = crate::build_core(&out).unwrap_or_else(|e| panic!("{e}"));
        let tables = crate::core_tables(&out, &core).unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::remove_dir_all(&out);
        (core, Some(tables))
    })
}

/// The software core, built once (`make mega65-core`), or the one named by SSNAIL_MEGA65_CORE
/// (e.g. a build with one rounding rule changed, to see the tests fail).
pub fn soft_core() -> &'static [u8] {
    &built_core().0
}

/// Where [`soft_core`]'s function tables go in chip RAM (physical addresses) and the bytes the
/// program must load there and nothing may change ([`crate::core_tables`]); none when
/// SSNAIL_MEGA65_CORE names the core.
pub fn soft_core_tables() -> Option<&'static [(usize, Vec<u8>)]> {
    built_core().1.as_deref()
}

/// `cargo build --release -q -p PACKAGE ARGS` in this workspace, once per artefact: the one place
/// the tests and examples of this crate build another crate's artefact. The path of `file` in
/// the release folder of the target directory.
fn workspace_artefact(package: &str, args: &[&str], file: &str) -> PathBuf {
    let root = crate::mega65_dir().join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let st = Command::new(cargo)
        .args(["build", "--release", "-q", "-p", package])
        .args(args)
        .current_dir(&root)
        .status()
        .unwrap_or_else(|e| panic!("cargo build -p {package}: {e}"));
    assert!(st.success(), "building {package} failed");
    std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target"))
        .join("release")
        .join(file)
}

/// The `ssnail` binary of this workspace, built once (release, as `make test` has it).
pub fn ssnail_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| workspace_artefact("ssnail", &["--bin", "ssnail"], "ssnail"))
}

/// The core emulator's C library (`ssnail-capi`'s libssnail_capi.a, which the xemu patch links),
/// built once (release).
pub fn capi_lib() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| workspace_artefact("ssnail-capi", &[], "libssnail_capi.a"))
}

/// A D81 named SSNAIL with `prg` as `ssnail` (and again as `autoboot.c65` when `autoboot`, as
/// `make disk` writes it), the chat overlay [`ovl`] (`prg` is [`prg`] or a build of the same
/// link), then `files` as SEQ files in this order.
pub fn program_disk(prg: &[u8], autoboot: bool, files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut d = D81::new("SSNAIL", *b"65").unwrap();
    d.add_file("ssnail", FileType::Prg, prg).unwrap();
    if autoboot {
        d.add_file("autoboot.c65", FileType::Prg, prg).unwrap();
    }
    d.add_file(crate::OVERLAY_FILE, FileType::Seq, ovl())
        .unwrap();
    for (name, data) in files {
        d.add_file(name, FileType::Seq, data)
            .unwrap_or_else(|e| panic!("{name} ({} bytes) on the D81: {e}", data.len()));
    }
    d.into_bytes()
}

/// [`program_disk`] with the software core ([`soft_core`], as `ssnail.core`) before `files`, as
/// `make disk` writes it when `autoboot`.
pub fn soft_core_disk(autoboot: bool, files: &[(&str, &[u8])]) -> Vec<u8> {
    let files = [&[(crate::SOFT_CORE_FILE, soft_core())][..], files].concat();
    program_disk(prg(), autoboot, &files)
}

/// `target` made by mega65/build.mk into `out_dir` with `defs` ([`crate::make_target`]); the
/// path of the file `name` it made there (`out_dir/mega65/name`). Panics with make's message.
pub fn make_for_test(out_dir: &Path, target: &str, defs: &str, name: &str) -> PathBuf {
    crate::make_target(out_dir, target, defs).unwrap_or_else(|e| panic!("{e}"));
    out_dir.join("mega65").join(name)
}

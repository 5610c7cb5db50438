//! The MEGA65 program's test harness, shared by its tests and the m65bench example: where the
//! MEGA65 sources are, and the PRG built with the project's own make rule.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The MEGA65 program's folder (C, assembler, host test sources, build.mk).
pub fn mega65_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// `make mega65-prg` (cc65, linker/mega65.cfg) with its output under
/// `out_dir`; the PRG's bytes.
pub fn build_prg(out_dir: &Path) -> Result<Vec<u8>, String> {
    let out = Command::new("make")
        .args(["-s", "-C"])
        .arg(mega65_dir())
        .arg("mega65-prg")
        .arg(format!("SSNAIL_BUILD={}", out_dir.display()))
        .output()
        .map_err(|e| format!("running make (needs make and cc65): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the MEGA65 program (make mega65-prg, needs cc65): {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let prg = out_dir.join("mega65/ssnail.prg");
    std::fs::read(&prg).map_err(|e| format!("{}: {e}", prg.display()))
}

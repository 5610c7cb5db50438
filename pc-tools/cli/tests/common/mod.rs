//! Shared by the tests that run the top-level Makefile as a user would.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Write `dir/ssnail-tool`, a one-line wrapper around this test build's
/// `ssnail`, so that touching "the tool" never touches the real binary.
pub fn tool_wrapper(dir: &Path) -> PathBuf {
    let tool = dir.join("ssnail-tool");
    std::fs::write(
        &tool,
        format!(
            "#!/bin/sh\nexec '{}' \"$@\"\n",
            env!("CARGO_BIN_EXE_ssnail")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    tool
}

/// `make -f <repo>/Makefile SSNAIL=<tool> RUST_SOURCES=` in `dir`:
/// RUST_SOURCES= keeps make from rebuilding the tool with cargo, and the
/// environment is a user's, not a sub-make's of `make test` (which would add
/// "Entering directory" lines and inherit flags).
pub fn make(dir: &Path, tool: &Path) -> Command {
    let makefile = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Makefile");
    let mut c = Command::new("make");
    c.arg("-f")
        .arg(makefile)
        .arg(format!("SSNAIL={}", tool.display()))
        .arg("RUST_SOURCES=")
        .env_remove("MAKEFLAGS")
        .env_remove("MAKELEVEL")
        .env_remove("MFLAGS")
        .current_dir(dir);
    c
}

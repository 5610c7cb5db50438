//! Shared by this crate's tests: the real `ssnail` binary (as a command, run
//! to completion, with a cache, as `chat` with input), converted test
//! images, and the top-level Makefile run as a user would.
//! Each test file uses only some of these helpers.
#![allow(dead_code)]

use ssnail_testkit::models::{self, ModelOpts};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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

/// This test build's `ssnail`, to be given arguments.
pub fn ssnail_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ssnail"))
}

/// `ssnail ARGS`, run to completion (stdin is not a terminal: no question
/// is answered yes).
pub fn ssnail(args: &[&str]) -> Output {
    ssnail_command().args(args).output().unwrap()
}

/// `ssnail ARGS` with `cache` as SSNAIL_CACHE.
pub fn ssnail_cached(cache: &Path, args: &[&str]) -> Output {
    ssnail_command()
        .args(args)
        .env("SSNAIL_CACHE", cache)
        .output()
        .unwrap()
}

/// How a run of `ssnail` ended: exit code (-1 for a signal), stdout, stderr.
pub struct Run {
    pub code: i32,
    pub out: String,
    pub err: String,
}

/// [`ssnail`] as a [`Run`].
pub fn ssnail_run(args: &[&str]) -> Run {
    let o = ssnail(args);
    let (out, err) = text(&o);
    Run {
        code: o.status.code().unwrap_or(-1),
        out,
        err,
    }
}

/// `ssnail chat IMAGE ARGS` with `input` on stdin.
pub fn chat(img: &Path, args: &[&str], input: &str) -> Output {
    output_with_stdin(ssnail_command().arg("chat").arg(img).args(args), input)
}

/// Run `cmd` to completion with `input` on its stdin.
pub fn output_with_stdin(cmd: &mut Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Stdout and stderr as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The test model `opts` written as `dir/NAME.gguf` and converted with
/// `ctx` to `dir/NAME.ssnail`.
pub fn image(dir: &Path, name: &str, opts: &ModelOpts, ctx: u32) -> PathBuf {
    let gguf = dir.join(format!("{name}.gguf"));
    models::write(&gguf, &models::build(opts));
    let g = ssnail_gguf::Gguf::open(&gguf).unwrap();
    let conv = ssnail_convert::convert(
        &g,
        &ssnail_convert::Options {
            ctx: Some(ctx),
            ..Default::default()
        },
    )
    .unwrap();
    let out = dir.join(format!("{name}.ssnail"));
    std::fs::write(&out, conv.image).unwrap();
    out
}

/// Everything `child` writes to its (piped) stdout, collected by a thread as it arrives: the
/// shared buffer to watch, and the thread to join once the child has exited.
pub fn collect_stdout(
    child: &mut std::process::Child,
) -> (
    std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    std::thread::JoinHandle<()>,
) {
    let raw = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut out = child.stdout.take().expect("stdout piped");
    let sink = raw.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = std::io::Read::read(&mut out, &mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    (raw, reader)
}

//! The top-level Makefile's workflow (spec §11), run as a user would, from
//! another directory with `make -f <repo>/Makefile`, on a small test GGUF.
//!
//! The tool is this test build's `ssnail`, reached through a one-line
//! wrapper script (`SSNAIL=` on the make command line), so touching "the
//! tool" never touches the real binary; `RUST_SOURCES=` keeps make from
//! rebuilding it with cargo.

mod common;

use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::{self, ModelOpts};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

struct Workdir {
    dir: tempfile::TempDir,
    tool: PathBuf,
}

impl Workdir {
    /// A temporary directory holding foo.gguf (the §10.1 llama, Q8_0) and the tool wrapper.
    fn new() -> Workdir {
        let dir = tempfile::tempdir().unwrap();
        models::write(
            dir.path().join("foo.gguf"),
            &models::build(&ModelOpts::llama().with_wtype(GgmlType::Q8_0)),
        );
        let tool = common::tool_wrapper(dir.path());
        Workdir { dir, tool }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn make(&self, args: &[&str]) -> Output {
        common::make(self.dir.path(), &self.tool)
            .args(args)
            .output()
            .expect("make is needed for the Makefile tests")
    }

    /// `make` that must succeed; returns stdout and stderr.
    fn ok(&self, args: &[&str]) -> (String, String) {
        let o = self.make(args);
        let (out, err) = (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        );
        assert!(o.status.success(), "make {args:?} failed:\n{out}\n{err}");
        (out, err)
    }

    /// Set a file's modification time to `secs` seconds ago.
    fn age(&self, name: &str, secs: u64) {
        std::fs::File::options()
            .write(true)
            .open(self.path(name))
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(secs))
            .unwrap();
    }
}

/// The header of an image file.
fn header(path: &Path) -> ssnail_format::image::Header {
    let bytes = std::fs::read(path).unwrap();
    ssnail_format::image::Header::parse(&bytes[..256]).unwrap()
}

#[test]
fn images_build_and_rebuild_when_the_tool_is_newer() {
    let w = Workdir::new();
    let (out, _) = w.ok(&["foo.ssnail"]);
    assert!(out.contains("convert foo.gguf -o foo.ssnail"), "{out}");
    assert!(out.contains("--mem-mb 8"), "{out}");
    assert!(out.contains("wrote foo.ssnail"), "{out}");
    let h = header(&w.path("foo.ssnail"));
    assert!(h.mem_needed <= 8 << 20);
    // Identical to the converter run by hand with the Makefile's defaults.
    let by_hand = w.path("hand.ssnail");
    let o = Command::new(env!("CARGO_BIN_EXE_ssnail"))
        .args(["convert", "foo.gguf", "-o"])
        .arg(&by_hand)
        .args(["--wtype", "auto", "--fallback", "q8_0", "--mem-mb", "8"])
        .current_dir(w.dir.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(
        std::fs::read(w.path("foo.ssnail")).unwrap(),
        std::fs::read(&by_hand).unwrap()
    );

    // Up to date: nothing runs.
    let (out, _) = w.ok(&["foo.ssnail"]);
    assert!(out.contains("is up to date"), "{out}");

    // A newer tool rebuilds the image (the GGUF being older than both) ...
    w.age("foo.gguf", 120);
    w.age("foo.ssnail", 60);
    w.age("ssnail-tool", 30);
    let (out, _) = w.ok(&["foo.ssnail"]);
    assert!(out.contains("wrote foo.ssnail"), "{out}");
    let (out, _) = w.ok(&["foo.ssnail"]);
    assert!(out.contains("is up to date"), "{out}");
    // ... and so does a newer GGUF (the tool being older than both).
    w.age("ssnail-tool", 120);
    w.age("foo.ssnail", 60);
    w.age("foo.gguf", 30);
    let (out, _) = w.ok(&["foo.ssnail"]);
    assert!(out.contains("wrote foo.ssnail"), "{out}");
    // Neither newer: nothing to do.
    w.age("foo.ssnail", 10);
    let (out, _) = w.ok(&["foo.ssnail"]);
    assert!(out.contains("is up to date"), "{out}");

    // Variables reach the converter: CONTEXT_WINDOW and TYPE.
    let (out, _) = w.ok(&["foo.8mb.ssnail", "CONTEXT_WINDOW=32", "TYPE=Story"]);
    assert!(out.contains("--mem-mb 8"), "{out}");
    let h = header(&w.path("foo.8mb.ssnail"));
    assert_eq!(h.max_ctx, 32);
    assert!(h.description().contains("Story"), "{}", h.description());
}

#[test]
fn all_sizes_info_and_tokcheck() {
    let w = Workdir::new();
    w.ok(&["foo.all"]);
    for (name, mb) in [
        ("foo.8mb.ssnail", 8),
        ("foo.64mb.ssnail", 64),
        ("foo.72mb.ssnail", 72),
    ] {
        assert!(w.path(name).exists(), "{name} missing");
        // The same model at three memory sizes: each converted for its size.
        let o = Command::new(env!("CARGO_BIN_EXE_ssnail"))
            .args([
                "convert",
                "foo.gguf",
                "-o",
                "hand.ssnail",
                "--wtype",
                "auto",
            ])
            .args(["--mem-mb", &mb.to_string()])
            .current_dir(w.dir.path())
            .output()
            .unwrap();
        assert!(o.status.success());
        assert_eq!(
            std::fs::read(w.path(name)).unwrap(),
            std::fs::read(w.path("hand.ssnail")).unwrap(),
            "{name}"
        );
    }
    // The plain image was not asked for.
    assert!(!w.path("foo.ssnail").exists());

    // A model too big for 8 MB (28 layers, 10.9 MB even as Q4_0): that size
    // is skipped with the converter's message, the others are built, make succeeds.
    let mut big = ModelOpts::llama().with_wtype(GgmlType::Q8_0);
    big.n_layers = 28;
    models::write(w.path("big.gguf"), &models::build(&big));
    let (_, err) = w.ok(&["big.all"]);
    assert!(err.contains("big does not fit in 8 MB"), "{err}");
    assert!(!w.path("big.8mb.ssnail").exists());
    assert!(w.path("big.64mb.ssnail").exists() && w.path("big.72mb.ssnail").exists());

    let (out, _) = w.ok(&["foo.info"]);
    assert!(
        out.contains("foo.gguf: GGUF v3, architecture llama"),
        "{out}"
    );
    assert!(out.contains("8 MB: auto uses"), "{out}");

    // tokcheck builds foo.ssnail first, then compares the image tokenizer with the GGUF's.
    let (out, _) = w.ok(&["foo.tokcheck"]);
    assert!(out.contains("wrote foo.ssnail"), "{out}");
    assert!(out.contains("lines identical"), "{out}");
    let text = w.path("lines.txt");
    std::fs::write(&text, "the cat sat on the mat\nonce upon a time\n").unwrap();
    let (out, _) = w.ok(&["foo.tokcheck", &format!("TEXT={}", text.display())]);
    assert!(out.contains("2/2 lines identical"), "{out}");
}

#[test]
fn run_and_chat_targets() {
    let w = Workdir::new();
    let chat = |args: &[&str]| -> (String, String) {
        let o = Command::new(env!("CARGO_BIN_EXE_ssnail"))
            .arg("chat")
            .args(args)
            .current_dir(w.dir.path())
            .output()
            .unwrap();
        assert!(o.status.success());
        (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    // .run converts first, then prints what `ssnail chat --greedy --prompt` prints.
    let (out, err) = w.ok(&["foo.run", "PROMPT=the cat sat", "TOKENS=5", "TEMP=0"]);
    assert!(out.contains("wrote foo.ssnail"), "{out}");
    let (direct, direct_err) = chat(&[
        "foo.ssnail",
        "-n",
        "5",
        "--greedy",
        "--prompt",
        "the cat sat",
    ]);
    assert!(out.ends_with(&direct), "{out}\nvs\n{direct}");
    assert!(direct.contains("greedy, as the v1 hardware"), "{direct}");
    assert!(direct.contains(" the cat sat"), "{direct}");
    assert!(err.contains("[8 positions in "), "{err}");
    assert!(direct_err.contains("[8 positions in "), "{direct_err}");

    // TEMP other than 0 samples; HW=1 gives hardware numerics; default prompt.
    let (out, _) = w.ok(&["foo.run", "TOKENS=3", "TEMP=0.5", "HW=1"]);
    assert!(
        out.contains(
            "[hardware numerics; sampling: temperature 0.5, top-k 40, repetition penalty 1.15]"
        ),
        "{out}"
    );
    assert!(out.contains("--prompt \"Once upon a time\""), "{out}");

    // .chat reads lines from stdin (here none: the banner only).
    let (out, _) = w.ok(&["foo.chat", "TEMP=0"]);
    assert!(
        out.contains("[llama decoder, context 128, vocab 400]"),
        "{out}"
    );
}

#[test]
fn fetch_without_url_prints_usage_and_fails() {
    let w = Workdir::new();
    let o = w.make(&["fetch"]);
    assert!(!o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("usage: make fetch URL="), "{out}");
    // Nothing was downloaded or created.
    let mut names: Vec<String> = std::fs::read_dir(w.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["foo.gguf", "ssnail-tool"]);
}

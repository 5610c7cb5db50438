//! The top-level Makefile's workflow (spec §11), run as a user would, from
//! another directory with `make -f <repo>/Makefile`, on a small test GGUF.
//!
//! The tool is this test build's `ssnail`, reached through a one-line
//! wrapper script (`SSNAIL=` on the make command line), so touching "the
//! tool" never touches the real binary; `RUST_SOURCES=` keeps make from
//! rebuilding it with cargo.

mod common;

use common::ssnail_command;
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::{self, ModelOpts};
use std::path::{Path, PathBuf};
use std::process::Output;
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
    let o = ssnail_command()
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
    // (the stamp of the flags, .foo.ssnail.flags, is older than all of them)
    w.age(".foo.ssnail.flags", 200);
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
    let (out, _) = w.ok(&["foo.all"]);
    // foo fits 8 MB without loss: the 64 and 72 MB images would be the same bytes, so only
    // the 8 MB one is written.
    assert!(
        out.contains(
            "foo.all: built (or up to date): foo.8mb.ssnail; not written: 64, 72 MB would be \
             the same image as foo.8mb.ssnail"
        ),
        "{out}"
    );
    assert!(!w.path("foo.64mb.ssnail").exists() && !w.path("foo.72mb.ssnail").exists());
    for mb in [8, 64, 72] {
        // The same model at three memory sizes, converted by hand: one image, byte for byte.
        let o = ssnail_command()
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
            std::fs::read(w.path("foo.8mb.ssnail")).unwrap(),
            std::fs::read(w.path("hand.ssnail")).unwrap(),
            "{mb} MB"
        );
    }
    // The plain image was not asked for.
    assert!(!w.path("foo.ssnail").exists());

    // A model too big for 8 MB (28 layers, 10.9 MB even as Q4_0): that size
    // is skipped with the converter's message, the others are built, make succeeds.
    let mut big = ModelOpts::llama().with_wtype(GgmlType::Q8_0);
    big.n_layers = 28;
    models::write(w.path("big.gguf"), &models::build(&big));
    let (out, err) = w.ok(&["big.all"]);
    assert!(err.contains("big does not fit in 8 MB"), "{err}");
    assert!(!err.contains("Error") && !err.contains("ignored"), "{err}");
    assert!(
        out.contains(
            "big.all: built (or up to date): big.64mb.ssnail; does not fit: 8 MB; not written: \
             72 MB would be the same image as big.64mb.ssnail"
        ),
        "{out}"
    );
    assert!(!w.path("big.8mb.ssnail").exists());
    assert!(w.path("big.64mb.ssnail").exists() && !w.path("big.72mb.ssnail").exists());
    // The plain image of that model: the advice in make's words.
    let o = w.make(&["big.ssnail"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("ATTICRAM=64 (or make big.64mb.chat)"), "{err}");
    assert!(
        !err.contains("--mem-mb") && !err.contains("--wtype"),
        "{err}"
    );

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
        let o = ssnail_command()
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
            "[hardware numerics; sampling: temperature 0.5, top-k 40, repeat penalty 1.15]"
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

/// `make foo.ssnail CORE=soft` makes what `ssnail convert --core soft` makes; CORE=fpga is the
/// default, the same image as without CORE.
#[test]
fn core_soft_makes_the_software_cores_image_and_core_fpga_is_the_default() {
    let w = Workdir::new();
    models::write(
        w.path("foo.gguf"),
        &models::build(&ModelOpts::stories260k()),
    );
    let (out, _) = w.ok(&["foo.ssnail", "CORE=soft"]);
    assert!(out.contains("for the software core"), "{out}");
    let o = common::ssnail(&[
        "convert",
        w.path("foo.gguf").to_str().unwrap(),
        "-o",
        w.path("direct.ssnail").to_str().unwrap(),
        "--core",
        "soft",
    ]);
    assert!(o.status.success());
    let soft = std::fs::read(w.path("foo.ssnail")).unwrap();
    assert!(soft == std::fs::read(w.path("direct.ssnail")).unwrap());
    let (out, _) = w.ok(&["foo.ssnail", "CORE=fpga"]);
    assert!(out.contains("wrote foo.ssnail"), "{out}");
    let (out, _) = w.ok(&["foo.ssnail"]);
    assert!(
        out.contains("is up to date"),
        "CORE=fpga is the default: {out}"
    );
    assert!(std::fs::read(w.path("foo.ssnail")).unwrap().len() > 3 * soft.len());
}

#[test]
fn changing_a_conversion_variable_rebuilds_the_image() {
    let w = Workdir::new();
    let built = |args: &[&str]| w.ok(args).0.contains("wrote foo.ssnail");
    assert!(built(&["foo.ssnail"]));
    assert!(!built(&["foo.ssnail"]), "nothing changed");
    for var in [
        "WTYPE=q4_0",
        "CONTEXT_WINDOW=32",
        "ATTICRAM=64",
        "FALLBACK=f16",
        "TYPE=Story",
        "CORE=soft",
    ] {
        assert!(built(&["foo.ssnail", var]), "{var} rebuilds");
        assert!(!built(&["foo.ssnail", var]), "{var} again: up to date");
        // Nothing given: the image is kept as it was converted.
        assert!(
            !built(&["foo.ssnail"]),
            "after {var}, a plain make keeps the image"
        );
        let default = match var.split('=').next().unwrap() {
            "WTYPE" => "WTYPE=auto",
            "CONTEXT_WINDOW" => "CONTEXT_WINDOW=",
            "ATTICRAM" => "ATTICRAM=8",
            "FALLBACK" => "FALLBACK=q8_0",
            _ => "TYPE=",
        };
        assert!(built(&["foo.ssnail", default]), "{default} given rebuilds");
    }
    // The board-size images have their own memory size: ATTICRAM does not touch them.
    w.ok(&["foo.64mb.ssnail"]);
    let (out, _) = w.ok(&["foo.64mb.ssnail", "ATTICRAM=72"]);
    assert!(out.contains("is up to date"), "{out}");
    let h = header(&w.path("foo.ssnail"));
    assert_eq!(h.max_ctx, 128);
}

#[test]
fn all_fails_when_nothing_fits_and_a_missing_gguf_is_named() {
    let w = Workdir::new();
    // 2 layers of dim 256 with a 100,000-wide FFN, Q4_0: 86 MB of weights
    // (zero bytes: the converter's plan does not read them).
    let (_d, small) = {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.gguf");
        models::write(
            &p,
            &models::build(&ModelOpts::llama().with_wtype(GgmlType::Q4_0)),
        );
        let g = ssnail_gguf::Gguf::open(&p).unwrap();
        (d, g)
    };
    let hidden = 100_000u64;
    let mut wr = ssnail_gguf::writer::GgufWriter::new();
    for (k, v) in &small.metadata {
        if k == "llama.feed_forward_length" {
            wr.meta(k, ssnail_gguf::writer::MetaValue::U32(hidden as u32));
        } else {
            wr.meta(k, ssnail_gguf::writer::MetaValue::from(v));
        }
    }
    for t in &small.tensors {
        let shape: Vec<u64> = match (t.shape.len(), t.name.as_str()) {
            (2, n) if n.contains("ffn_down") => vec![hidden, t.shape[1]],
            (2, n) if n.contains("ffn_") => vec![t.shape[0], hidden],
            _ => t.shape.clone(),
        };
        let n: u64 = shape.iter().product();
        let bytes = n as usize / t.ty.block_len() * t.ty.block_bytes();
        wr.tensor(&t.name, &shape, t.ty, vec![0u8; bytes]).unwrap();
    }
    std::fs::write(w.path("huge.gguf"), wr.to_bytes().unwrap()).unwrap();
    let o = w.make(&["huge.all"]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    );
    assert!(!o.status.success(), "{out}{err}");
    assert!(
        err.contains("huge.all: nothing built: huge.gguf fits no board (8, 64 or 72 MB)"),
        "{err}"
    );
    assert!(err.contains("No MEGA65 board can run huge"), "{err}");
    assert!(
        err.contains("ATTICRAM="),
        "the emulator's size in make's words: {err}"
    );
    for mb in [8, 64, 72] {
        assert!(!w.path(&format!("huge.{mb}mb.ssnail")).exists());
    }

    // A GGUF that is not there: said in words, for images, .all and .run.
    for target in [
        "nothere.ssnail",
        "nothere.all",
        "nothere.64mb.run",
        "nothere.chat",
    ] {
        let o = w.make(&[target]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(
            err.contains("nothere.gguf: no such file"),
            "{target}: {err}"
        );
        assert!(!err.contains("No rule to make target"), "{target}: {err}");
    }
}

#[test]
fn every_board_size_has_run_chat_and_tokcheck_targets() {
    let w = Workdir::new();
    for mb in [8, 64, 72] {
        let (out, _) = w.ok(&[&format!("foo.{mb}mb.tokcheck")]);
        assert!(
            out.contains(&format!("tokcheck foo.{mb}mb.ssnail foo.gguf")),
            "{out}"
        );
        assert!(out.contains("lines identical"), "{out}");
        let (out, _) = w.ok(&[
            &format!("foo.{mb}mb.run"),
            "PROMPT=once upon",
            "TOKENS=3",
            "TEMP=0",
        ]);
        assert!(
            out.contains(&format!("chat foo.{mb}mb.ssnail -n 3 --greedy")),
            "{out}"
        );
        assert!(out.contains(" once upon"), "{out}");
    }
}

#[test]
fn a_plain_make_after_converting_with_variables_reuses_that_image_and_says_so() {
    // big: 28 layers, 10.9 MB even as Q4_0: the defaults (8 MB) cannot convert it.
    let w = Workdir::new();
    let mut big = ModelOpts::llama().with_wtype(GgmlType::Q8_0);
    big.n_layers = 28;
    models::write(w.path("big.gguf"), &models::build(&big));
    let (out, _) = w.ok(&["big.run", "WTYPE=q4_0", "ATTICRAM=64", "TOKENS=4"]);
    assert!(out.contains("wrote big.ssnail"), "{out}");
    let (out, err) = w.ok(&["big.run", "TOKENS=4"]);
    assert!(
        !out.contains("wrote big.ssnail"),
        "not converted again: {out}"
    );
    assert!(
        err.contains(
            "big.ssnail: kept as converted with --wtype q4_0 --fallback q8_0 --mem-mb 64 \
             (give WTYPE=, ATTICRAM=, ... to convert it otherwise)"
        ),
        "{err}"
    );
    // A newer tool converts it again, with the flags it was made with.
    w.age("big.ssnail", 60);
    let (out, _) = w.ok(&["big.run", "TOKENS=4"]);
    assert!(
        out.contains("convert big.gguf -o big.ssnail --wtype q4_0 --fallback q8_0 --mem-mb 64"),
        "{out}"
    );
}

#[test]
fn disk_takes_an_image_made_by_ssnail_convert_without_its_gguf() {
    let w = Workdir::new();
    let o = ssnail_command()
        .args(["convert", "foo.gguf", "-o", "mymodel.ssnail"])
        .current_dir(w.dir.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    let before = std::fs::read(w.path("mymodel.ssnail")).unwrap();
    let build = w.path("build");
    let (_, err) = w.ok(&[
        "disk",
        "IMAGES=mymodel.ssnail",
        &format!("SSNAIL_BUILD={}", build.display()),
    ]);
    assert!(!err.contains("no such file"), "{err}");
    assert!(build.join("ssnail.d81").exists());
    let on_sd = std::fs::read_dir(build.join("sdcard/SSNAIL"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_uppercase())
        .collect::<Vec<_>>();
    assert!(on_sd.contains(&"MYMODEL.SSNAIL".to_string()), "{on_sd:?}");
    assert_eq!(std::fs::read(w.path("mymodel.ssnail")).unwrap(), before);
    // Without the image either, the GGUF it would come from is named.
    let o = w.make(&["disk", "IMAGES=other.ssnail"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("other.gguf: no such file"));
}

//! `ssnail convert` and `ssnail info` through the real binary: upstream's
//! test_auto and test_desc (§10.4, §10.6), and bad input (one clear error
//! line, non-zero exit, no output file left behind).

mod common;

use common::{ssnail_run, Run};
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::h;
use ssnail_testkit::models::{self, ModelOpts};
use std::path::{Path, PathBuf};
use std::process::Command;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_string()
}

/// The directory holds exactly these file names.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn auto_gpt2(wtype: GgmlType) -> Vec<u8> {
    models::build(&ModelOpts {
        dim: 256,
        hidden: 1024,
        ..ModelOpts::gpt2().with_wtype(wtype)
    })
}

/// A failed run: exit 1, one stderr line `ssnail: <file>: <problem>`, no output file.
fn fails_cleanly(r: &Run, dir: &Path, expect_files: &[&str], needle: &str) {
    assert_eq!(r.code, 1, "stderr: {}", r.err);
    assert_eq!(r.err.lines().count(), 1, "one line: {:?}", r.err);
    assert!(r.err.starts_with("ssnail: "), "{}", r.err);
    assert!(
        r.err.contains(needle),
        "{:?} does not say {needle:?}",
        r.err
    );
    assert!(!r.err.contains("panicked"));
    assert_eq!(files(dir), expect_files, "no output or temporary file left");
}

#[test]
fn auto_as_upstream_test_auto() {
    let d = tempfile::tempdir().unwrap();
    let fp = write(d.path(), "fp.gguf", &auto_gpt2(GgmlType::F16));
    let q8 = write(d.path(), "q8.gguf", &auto_gpt2(GgmlType::Q8_0));
    let out = |n: &str| d.path().join(n).to_str().unwrap().to_string();

    // F16 source, auto, 1.5 MB: Q4_0 fits and loses nothing.
    let r = ssnail_run(&[
        "convert",
        &fp,
        "-o",
        &out("fp.ssnail"),
        "--wtype",
        "auto",
        "--ctx",
        "32",
        "--mem-mb",
        "1.5",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("auto: using --wtype q4_0"), "{}", r.out);
    assert!(!r.err.contains("WARNING") && !r.out.contains("WARNING"));
    assert!(
        r.out.lines().last().unwrap().starts_with("wrote ")
            && r.out.ends_with(": load at $8000000\n")
    );

    // Q8_0 source: only lossy Q4_0 fits; stdin is no terminal, so no.
    let r = ssnail_run(&[
        "convert",
        &q8,
        "-o",
        &out("q8.ssnail"),
        "--wtype",
        "auto",
        "--ctx",
        "32",
        "--mem-mb",
        "1.5",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.contains("WARNING")
            && r.err
                .contains("To accept without being asked: --wtype q4_0.")
            && r.err.contains("Not converted"),
        "{}",
        r.err
    );
    assert!(r.err.contains("not a terminal"));
    assert!(!Path::new(&out("q8.ssnail")).exists());

    // An explicit --wtype is consent.
    let r = ssnail_run(&[
        "convert",
        &q8,
        "-o",
        &out("q8.ssnail"),
        "--wtype",
        "q4_0",
        "--ctx",
        "32",
        "--mem-mb",
        "1.5",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(!r.err.contains("WARNING"));
    assert!(
        r.out.contains("note: "),
        "lost precision is noted: {}",
        r.out
    );

    // Nothing fits in 0 MB: the computed suggestions, as command-line flags.
    let r = ssnail_run(&[
        "convert",
        &fp,
        "-o",
        &out("zero.ssnail"),
        "--wtype",
        "auto",
        "--ctx",
        "32",
        "--mem-mb",
        "0",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.contains("A larger memory size fits:\n  --mem-mb 8 ("),
        "{}",
        r.err
    );
    for s in ["ATTICRAM", "CONTEXT_WINDOW", "WTYPE", "make "] {
        assert!(!r.err.contains(s), "{s} (make's words) in {}", r.err);
    }
    assert!(!Path::new(&out("zero.ssnail")).exists());
    assert_eq!(
        files(d.path()),
        ["fp.gguf", "fp.ssnail", "q8.gguf", "q8.ssnail"]
    );
}

fn description(image: &Path) -> String {
    let b = std::fs::read(image).unwrap();
    let d = &b[h::DESC..h::DESC + h::DESC_LEN];
    String::from_utf8(d[..d.iter().position(|c| *c == 0).unwrap()].to_vec()).unwrap()
}

#[test]
fn descriptions_as_upstream_test_desc() {
    let d = tempfile::tempdir().unwrap();
    let m = write(d.path(), "m.gguf", &models::llama(GgmlType::Q8_0, false));
    let named = write(
        d.path(),
        "n.gguf",
        &models::build(&ModelOpts::llama().with_name("TinyTest")),
    );
    let o = d.path().join("o.ssnail");
    let os = o.to_str().unwrap();
    assert_eq!(
        ssnail_run(&["convert", &m, "-o", os, "--ctx", "16"]).code,
        0
    );
    assert_eq!(description(&o), "llama 256d 2L 8H [General]");
    assert_eq!(
        ssnail_run(&["convert", &m, "-o", os, "--ctx", "16", "--type", "Code"]).code,
        0
    );
    assert_eq!(description(&o), "llama 256d 2L 8H [Code]");
    assert_eq!(
        ssnail_run(&["convert", &named, "-o", os, "--ctx", "16", "--type", "Story"]).code,
        0
    );
    assert_eq!(description(&o), "TinyTest (llama) [Story]");
    // The image is an ordinary readable file, replaced whole.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&o).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }
}

#[test]
fn bad_input_fails_cleanly() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let good = models::gpt2(GgmlType::Q8_0, true);
    let out = dir.join("out.ssnail");
    let os = out.to_str().unwrap();

    // Truncated: the header promises tensor data the file does not have.
    let trunc = write(dir, "trunc.gguf", &good[..good.len() - 1000]);
    let r = ssnail_run(&["convert", &trunc, "-o", os]);
    fails_cleanly(&r, dir, &["trunc.gguf"], "trunc.gguf: truncated");
    // Cut inside the metadata.
    let cut = write(dir, "cut.gguf", &good[..200]);
    let r = ssnail_run(&["convert", &cut, "-o", os]);
    fails_cleanly(
        &r,
        dir,
        &["cut.gguf", "trunc.gguf"],
        // The header's counts promise more than 200 bytes can hold.
        "cut.gguf: key count is 14, more than the header can hold",
    );
    std::fs::remove_file(&cut).unwrap();
    std::fs::remove_file(&trunc).unwrap();

    // Wrong magic.
    let mut bad = good.clone();
    bad[0..4].copy_from_slice(b"GGUX");
    let magic = write(dir, "magic.gguf", &bad);
    fails_cleanly(
        &ssnail_run(&["convert", &magic, "-o", os]),
        dir,
        &["magic.gguf"],
        "magic.gguf: not a GGUF file",
    );
    std::fs::remove_file(&magic).unwrap();

    // Missing file.
    let gone = dir.join("gone.gguf");
    fails_cleanly(
        &ssnail_run(&["convert", gone.to_str().unwrap(), "-o", os]),
        dir,
        &[],
        "gone.gguf: cannot open",
    );

    // Context that the token buffer cannot hold.
    let m = write(dir, "m.gguf", &good);
    let r = ssnail_run(&["convert", &m, "-o", os, "--ctx", "5000"]);
    fails_cleanly(
        &r,
        dir,
        &["m.gguf"],
        "m.gguf: context 5000 is too large: the token buffer holds 4095 tokens",
    );

    // Memory beyond the 28-bit address space: refused before any work.
    let r = ssnail_run(&["convert", &m, "-o", os, "--mem-mb", "200"]);
    fails_cleanly(&r, dir, &["m.gguf"], "28 bits");

    // Unwritable output: a missing directory, or a directory in the way.
    let nodir: PathBuf = dir.join("no/such/dir/x.ssnail");
    let r = ssnail_run(&["convert", &m, "-o", nodir.to_str().unwrap()]);
    fails_cleanly(&r, dir, &["m.gguf"], "does not exist");
    std::fs::create_dir(dir.join("taken.ssnail")).unwrap();
    let taken = dir.join("taken.ssnail");
    let r = ssnail_run(&["convert", &m, "-o", taken.to_str().unwrap(), "--ctx", "16"]);
    fails_cleanly(
        &r,
        dir,
        &["m.gguf", "taken.ssnail"],
        "taken.ssnail: is a directory",
    );
    assert!(std::fs::read_dir(&taken).unwrap().next().is_none());

    // Unsupported --wtype.
    let r = ssnail_run(&["convert", &m, "-o", os, "--wtype", "q4_k"]);
    fails_cleanly(&r, dir, &["m.gguf", "taken.ssnail"], "--wtype q4_k");
}

#[test]
fn info_lists_the_model_and_the_sizes_that_fit() {
    let d = tempfile::tempdir().unwrap();
    let m = write(d.path(), "m.gguf", &models::llama(GgmlType::Q8_0, false));
    let r = ssnail_run(&["info", &m]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out.contains("architecture llama, tokenizer llama"),
        "{}",
        r.out
    );
    assert!(r.out.contains("llama.attention.head_count_kv"));
    let line = r
        .out
        .lines()
        .find(|l| l.trim_start().starts_with("blk.0.attn_k.weight"))
        .unwrap();
    assert!(
        line.contains("Q8_0") && line.contains("[256, 128]"),
        "{line}"
    );
    // Every policy fits 8 MB at the default 128-token context; keep is auto's choice.
    let keep = r
        .out
        .lines()
        .find(|l| l.trim_start().starts_with("keep "))
        .unwrap();
    assert_eq!(keep.matches("fits").count(), 4, "{keep}");
    assert!(r.out.contains("8 MB: auto uses --wtype keep"), "{}", r.out);
    // info on a non-GGUF: the same one-line error.
    let bad = write(d.path(), "x.gguf", b"not a gguf at all");
    let r = ssnail_run(&["info", &bad]);
    assert_eq!(r.code, 1);
    assert_eq!(r.err.lines().count(), 1);
}

/// The lossy-consent question on a real terminal (a pty made by util-linux
/// `script`; skipped where that is not installed): y/yes converts, anything
/// else or end of input declines with "Not converted." and no file.
#[test]
fn consent_prompt_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux script(1) not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let q8 = write(d.path(), "q8.gguf", &auto_gpt2(GgmlType::Q8_0));
    let answer = |input: &str, out: &str| {
        let cmd = format!(
            "'{}' convert '{}' -o '{}' --wtype auto --ctx 32 --mem-mb 1.5",
            env!("CARGO_BIN_EXE_ssnail"),
            q8,
            d.path().join(out).display()
        );
        let o = common::output_with_stdin(
            Command::new("script").args(["-qec", &cmd, "/dev/null"]),
            input,
        );
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let (code, text) = answer("YES\n", "yes.ssnail");
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("Convert anyway? [y/N]") && text.contains("auto: using --wtype q4_0"),
        "{text}"
    );
    for (input, out) in [
        ("n\n", "no.ssnail"),
        ("", "eof.ssnail"),
        ("maybe\n", "maybe.ssnail"),
    ] {
        let (code, text) = answer(input, out);
        assert_eq!(code, 1, "{input:?}: {text}");
        assert!(text.contains("Not converted."), "{text}");
    }
    assert_eq!(files(d.path()), ["q8.gguf", "yes.ssnail"]);
}

/// The options on an advice line ("  --mem-mb 80 --wtype q4_0 (79.11 MB with q4_0)").
fn advice_options(line: &str) -> Vec<String> {
    let opts = line.trim().split(" (").next().unwrap();
    opts.split_whitespace().map(String::from).collect()
}

#[test]
fn the_too_big_advice_names_options_that_convert_as_typed_without_a_question() {
    // SmolLM2-135M (Q4_1/Q8_0): only lossy Q4_0 fits anywhere, in the emulator's 80 MB.
    let gguf = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    let d = tempfile::tempdir().unwrap();
    let model = d.path().join("smol.gguf");
    std::os::unix::fs::symlink(&gguf, &model).unwrap();
    let model = model.to_str().unwrap();
    let r = ssnail_run(&["convert", model]);
    assert_eq!(r.code, 1, "{}", r.err);
    let lines: Vec<&str> = r.err.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("More memory than any MEGA65 board"))
        .unwrap_or_else(|| panic!("{}", r.err));
    let opts = advice_options(lines[i + 1]);
    assert_eq!(opts, ["--mem-mb", "80", "--wtype", "q4_0"], "{}", r.err);
    // ssnail_convert::advised (what `ssnail run -m smol.gguf` converts with) picks the same.
    let g = ssnail_gguf::Gguf::open(model).unwrap();
    let base = ssnail_convert::Options {
        policy: ssnail_convert::Policy::Auto,
        ..Default::default()
    };
    let picked = ssnail_convert::advised(&g, &base).unwrap();
    assert_eq!(
        (picked.mem_mb, picked.policy.name()),
        (80.0, "q4_0".to_string())
    );
    // Typed as given, with stdin no terminal: it converts.
    let mut args = vec!["convert", model];
    args.extend(opts.iter().map(String::as_str));
    let r = ssnail_run(&args);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(!r.err.contains("WARNING"), "{}", r.err);
    assert!(d.path().join("smol.ssnail").exists());
}

#[test]
fn without_a_terminal_the_lossy_question_is_one_line_saying_what_to_pass() {
    let d = tempfile::tempdir().unwrap();
    let q8 = write(d.path(), "q8.gguf", &auto_gpt2(GgmlType::Q8_0));
    let args = ["convert", &q8, "--ctx", "32", "--mem-mb", "1.5"];
    let r = ssnail_run(&args);
    assert_eq!(r.code, 1, "{}", r.err);
    let last = r.err.lines().last().unwrap();
    assert_eq!(
        last,
        "ssnail: q8: Not converted: stdin is not a terminal to ask; add --wtype q4_0 to convert anyway."
    );
    assert!(!r.err.contains("[y/N]"), "{}", r.err);
    assert_eq!(files(d.path()), ["q8.gguf"]);
    let mut with = args.to_vec();
    with.extend(["--wtype", "q4_0"]);
    let r = ssnail_run(&with);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(files(d.path()), ["q8.gguf", "q8.ssnail"]);
}

#[test]
fn convert_without_o_writes_the_models_name_with_ssnail_beside_it() {
    let d = tempfile::tempdir().unwrap();
    let fp = write(d.path(), "tiny.model.gguf", &auto_gpt2(GgmlType::F16));
    let r = ssnail_run(&["convert", &fp, "--ctx", "32"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let want = d.path().join("tiny.model.ssnail");
    assert!(
        r.out
            .contains(&format!("wrote {}: load at", want.display())),
        "{}",
        r.out
    );
    assert_eq!(files(d.path()), ["tiny.model.gguf", "tiny.model.ssnail"]);
}

/// The SHA-256 of a file, as `sha256sum` prints it.
fn sha256(path: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `--core fpga` is the default and makes the same images as no `--core`,
/// byte for byte, on the same GGUF (stories260K's shape, F32): pinned hashes,
/// with and without `--all-logits` (the full pass at every prompt position;
/// the default script skips the last layer's tail at prompt positions before
/// the last, spec §3.7). They were pinned when `--core` came and moved once
/// since, when attn_k came to follow attn_q and ffn_up ffn_gate with one GEMV
/// for each pair (spec §1.8, §1.9, §3.7).
#[test]
fn core_fpga_is_the_default_and_makes_the_same_bytes_as_no_core_option() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = write(
        dir.path(),
        "stories260K.gguf",
        &models::build(&ModelOpts::stories260k()),
    );
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let full_f32 = "524367589bc7038d6f4fa11d2ea3cef210cf806910bf121c76e29cae0f68da6c";
    let skip_f32 = "6e16c05da7862b27165ae538d920faede10b7b2c007157b3419b8cd5cf0e9f8c";
    for (args, want) in [
        (vec!["convert", &gguf, "-o", &d("a.ssnail")], skip_f32),
        (
            vec!["convert", &gguf, "-o", &d("b.ssnail"), "--core", "fpga"],
            skip_f32,
        ),
        (
            vec!["convert", &gguf, "-o", &d("f.ssnail"), "--all-logits"],
            full_f32,
        ),
        (
            vec![
                "convert",
                &gguf,
                "-o",
                &d("g.ssnail"),
                "--core",
                "fpga",
                "--all-logits",
            ],
            full_f32,
        ),
        (
            vec![
                "convert",
                &gguf,
                "-o",
                &d("c.ssnail"),
                "--wtype",
                "q8_0",
                "--core",
                "fpga",
                "--all-logits",
            ],
            "dec8be7db5a0a8890c6c9b54675bc23f39f4fbebae2764b1317d61c32fa8c7ae",
        ),
    ] {
        let r = ssnail_run(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.err);
        assert_eq!(sha256(args[3]), want, "{args:?}");
    }
    // The software core's image is another one, and says why.
    let r = ssnail_run(&["convert", &gguf, "-o", &d("s.ssnail"), "--core", "soft"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("for the software core"), "{}", r.out);
    assert!(
        r.out.contains("hidden 172 padded with zeros to 192"),
        "{}",
        r.out
    );
    assert!(r
        .out
        .contains("output.weight: the same values as token_embd.weight, stored once"));
    let r = ssnail_run(&["convert", &gguf, "-o", &d("x.ssnail"), "--core", "cpu"]);
    assert_ne!(r.code, 0);
    assert!(r.err.contains("--core"), "{}", r.err);
}

//! What a llama.cpp user types works the same here: llama-cli's option
//! names next to ours, timing lines after `run`, and one set of defaults
//! (`--wtype auto`, memory sizes in MiB) in every command.

mod common;

use common::{image, ssnail, text};
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::{self, ModelOpts};

fn llama(dir: &std::path::Path) -> String {
    let img = image(
        dir,
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    img.to_str().unwrap().to_string()
}

#[test]
fn run_accepts_llama_cli_names_and_gives_the_same_output() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let ours = ssnail(&[
        "run",
        &img,
        "--prompt",
        "once upon a time",
        "-n",
        "6",
        "--threads",
        "1",
    ]);
    let theirs = ssnail(&[
        "run",
        "-m",
        &img,
        "-p",
        "once upon a time",
        "--n-predict",
        "6",
        "-t",
        "1",
    ]);
    assert!(
        ours.status.success() && theirs.status.success(),
        "{}",
        text(&theirs).1
    );
    assert_eq!(ours.stdout, theirs.stdout);
    assert!(!text(&ours).0.is_empty());
    // Both spellings of the image at once is a usage error, not a guess.
    let both = ssnail(&["run", &img, "-m", &img, "-p", "x"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn run_prints_llama_cpp_timing_lines_and_the_stop_reason_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let o = ssnail(&["run", &img, "-p", "once upon a time", "-n", "5"]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("stop reason: count,"), "{err}");
    assert!(!err.contains("stop reason 1"), "{err}");
    let prompt = err
        .lines()
        .find(|l| l.starts_with("prompt eval time = "))
        .unwrap();
    // " once upon a time" is BOS + 4 tokens in the test vocabulary.
    let n: usize = prompt
        .split(" / ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let ids = ssnail(&["tokenize", &img, "once upon a time", "--ids"]);
    assert_eq!(n, text(&ids).0.trim().split(',').count(), "{err}");
    assert!(
        prompt.contains(" ms per token,") && prompt.ends_with(" tokens per second)"),
        "{prompt}"
    );
    let eval = err
        .lines()
        .find(|l| l.starts_with("       eval time = "))
        .unwrap();
    assert!(
        eval.contains(" /     4 runs "),
        "5 tokens: the first ends prompt eval, 4 runs: {eval}"
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with("      total time = ") && l.ends_with(" /     9 tokens")),
        "{err}"
    );
}

#[test]
fn chat_accepts_llama_cli_sampling_names() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let run = |args: &[&str]| {
        let mut all = vec!["chat"];
        all.extend_from_slice(args);
        let o = ssnail(&all);
        assert!(o.status.success(), "{}", text(&o).1);
        text(&o).0
    };
    let ours = run(&[
        &img,
        "--prompt",
        "once upon a time",
        "-n",
        "8",
        "--temp",
        "0.9",
        "--topk",
        "20",
        "--penalty",
        "1.3",
        "--seed",
        "5",
    ]);
    let theirs = run(&[
        "-m",
        &img,
        "-p",
        "once upon a time",
        "--n-predict",
        "8",
        "--temp",
        "0.9",
        "--top-k",
        "20",
        "--repeat-penalty",
        "1.3",
        "--repeat-last-n",
        "64",
        "-s",
        "5",
    ]);
    assert_eq!(ours, theirs);
    // --repeat-last-n takes any window of at least one token; 0 is refused.
    let short = run(&[
        "-m",
        &img,
        "-p",
        "once upon a time",
        "-n",
        "8",
        "--temp",
        "0.9",
        "--top-k",
        "20",
        "--repeat-penalty",
        "1.3",
        "--repeat-last-n",
        "1",
        "-s",
        "5",
    ]);
    assert!(short.contains("\n once upon a time"), "{short}");
    let zero = ssnail(&["chat", &img, "-p", "x", "--repeat-last-n", "0"]);
    assert_eq!(zero.status.code(), Some(2));
}

#[test]
fn convert_defaults_to_auto_as_the_makefile_and_takes_ctx_size() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("m.gguf");
    models::write(
        &gguf,
        &models::build(&ModelOpts::llama().with_wtype(GgmlType::Q8_0)),
    );
    let out = dir.path().join("m.ssnail");
    let o = ssnail(&[
        "convert",
        gguf.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--ctx-size",
        "16",
    ]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(stdout.starts_with("auto: using --wtype keep"), "{stdout}");
    assert!(stdout.contains("ctx 16"), "{stdout}");
    let help = text(&ssnail(&["convert", "--help"])).0;
    assert!(help.contains("[default: auto]"), "{help}");
    assert!(
        help.contains("-c, --ctx <CTX>") && help.contains("ctx-size"),
        "{help}"
    );
}

/// `--mem-mb` is MiB in convert, run and chat: an image converted into
/// exactly X MiB loads with run's `--mem-mb X` and not with less.
#[test]
fn mem_mb_is_the_same_unit_in_convert_run_and_chat() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let need = u32::from_le_bytes(std::fs::read(&img).unwrap()[0x38..0x3C].try_into().unwrap());
    let exact = need as f64 / 1048576.0;
    let gguf = dir.path().join("llama.gguf");
    let conv = dir.path().join("exact.ssnail");
    let mb = format!("{:.6}", exact + 1e-6);
    let o = ssnail(&[
        "convert",
        gguf.to_str().unwrap(),
        "-o",
        conv.to_str().unwrap(),
        "-c",
        "32",
        "--mem-mb",
        &mb,
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let img2 = conv.to_str().unwrap();
    for cmd in ["run", "chat"] {
        let ok = ssnail(&[cmd, img2, "-p", "once", "-n", "1", "--mem-mb", &mb]);
        assert!(ok.status.success(), "{cmd}: {}", text(&ok).1);
        let less = format!("{:.6}", exact - 0.01);
        let short = ssnail(&[cmd, img2, "-p", "once", "-n", "1", "--mem-mb", &less]);
        assert_eq!(short.status.code(), Some(1), "{cmd}: {}", text(&short).1);
    }
    let help = text(&ssnail(&["run", "--help"])).0;
    assert!(help.contains("MiB (1 MB = 1,048,576 bytes"), "{help}");
}

#[test]
fn tokenize_accepts_llama_tokenize_names() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let gguf = dir.path().join("llama.gguf");
    let g = gguf.to_str().unwrap();
    let ours = ssnail(&["tokenize", g, "once upon a time", "--ids"]);
    assert!(ours.status.success(), "{}", text(&ours).1);
    for args in [
        vec!["tokenize", "-m", g, "-p", "once upon a time", "--ids"],
        vec!["tokenize", "--model", g, "once upon a time", "--ids"],
    ] {
        let theirs = ssnail(&args);
        assert_eq!(theirs.stdout, ours.stdout, "{args:?}: {}", text(&theirs).1);
    }
    // The image's own tokenizer through -m too.
    let o = ssnail(&["tokenize", "-m", &img, "-p", "once upon a time", "--ids"]);
    assert_eq!(o.stdout, ours.stdout);
    let twice = ssnail(&["tokenize", g, "-m", g, "x"]);
    assert_eq!(twice.status.code(), Some(1));
    assert!(text(&twice).1.contains("the model is given twice"));
}

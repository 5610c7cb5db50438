//! What a llama.cpp user types works the same here: llama-cli's option
//! names next to ours, timing lines after `run`, and one set of defaults
//! (`--wtype auto`, memory sizes in MiB) in every command.

mod common;

use common::{image, ssnail, ssnail_cached, text};
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

#[test]
fn run_on_a_gguf_converts_it_once_into_the_cache_with_the_advised_settings_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let gguf = img.replace(".ssnail", ".gguf");
    let cache = dir.path().join("cache");
    let args = ["run", "-m", &gguf, "-p", "once upon a time", "-n", "6"];
    let first = ssnail_cached(&cache, &args);
    let (out, err) = text(&first);
    assert!(first.status.success(), "{err}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("is a GGUF")).collect();
    assert_eq!(said.len(), 1, "{err}");
    let command = format!("ssnail convert {gguf} --mem-mb 8 --wtype keep --ctx 128");
    assert!(said[0].contains(&format!("as {command} would]")), "{err}");
    let converted: Vec<_> = std::fs::read_dir(cache.join("converted"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(converted.len(), 1);
    assert!(said[0].contains(&converted[0].display().to_string()));
    // The same text as the image `ssnail convert` makes with those settings.
    let by_hand = dir.path().join("by-hand.ssnail");
    let c = ssnail(&[
        "convert",
        &gguf,
        "-o",
        by_hand.to_str().unwrap(),
        "--mem-mb",
        "8",
        "--wtype",
        "keep",
        "--ctx",
        "128",
    ]);
    assert!(c.status.success(), "{}", text(&c).1);
    assert_eq!(
        std::fs::read(&by_hand).unwrap(),
        std::fs::read(&converted[0]).unwrap()
    );
    let direct = ssnail(&[
        "run",
        by_hand.to_str().unwrap(),
        "-p",
        "once upon a time",
        "-n",
        "6",
    ]);
    assert_eq!(text(&direct).0, out);
    // The second run uses the cached image and says so.
    let again = ssnail_cached(&cache, &args);
    let (out2, err2) = text(&again);
    assert_eq!(out2, out);
    assert!(err2.contains("using its conversion"), "{err2}");
    // -c converts with that context.
    let c64 = ssnail_cached(
        &cache,
        &["run", "-m", &gguf, "-p", "once", "-n", "2", "-c", "64"],
    );
    assert!(text(&c64).1.contains("--ctx 64 would]"), "{}", text(&c64).1);
}

#[test]
fn run_samples_with_llama_cli_temp_top_k_seed_top_p_and_min_p() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let run = |extra: &[&str]| {
        let mut all = vec![
            "run",
            "-m",
            &img,
            "-p",
            "once upon a time",
            "-n",
            "24",
            "--ids",
        ];
        all.extend_from_slice(extra);
        let o = ssnail(&all);
        assert!(o.status.success(), "{extra:?}: {}", text(&o).1);
        text(&o).0
    };
    let greedy = run(&[]);
    assert_eq!(run(&["--temp", "0"]), greedy);
    let hot = ["--temp", "1.5", "--repeat-penalty", "1"];
    let a = run(&[&hot[..], &["-s", "5"]].concat());
    assert_eq!(
        a,
        run(&[&hot[..], &["--seed", "5"]].concat()),
        "same seed, same tokens"
    );
    assert_ne!(a, greedy, "sampling at temperature 1.5 changes the text");
    assert_ne!(
        a,
        run(&[&hot[..], &["-s", "6"]].concat()),
        "another seed, other tokens"
    );
    // Each cut that keeps only the most probable token gives the greedy tokens back.
    for only_the_top in [
        &["--top-k", "1"][..],
        &["--top-p", "0.000001"][..],
        &["--min-p", "1"][..],
    ] {
        let args = [&hot[..], only_the_top, &["-s", "5"]].concat();
        assert_eq!(run(&args), greedy, "{only_the_top:?}");
    }
    // A looser top-p / min-p still samples.
    assert_ne!(
        run(&[&hot[..], &["--top-p", "0.99", "-s", "5"]].concat()),
        greedy
    );
    let bad = ssnail(&["run", &img, "-p", "x", "--top-p", "1.5"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn c_up_to_the_images_context_is_accepted_and_more_is_refused_naming_the_convert_command() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path()); // a 32-token context
    for cmd in ["run", "chat"] {
        let o = ssnail(&[cmd, &img, "-p", "once upon a time", "-n", "4", "-c", "33"]);
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "ssnail: -c 33: {img} has a 32-token context, fixed when converting: \
                 ssnail convert MODEL.gguf --ctx 33 makes an image with 33"
            )
        );
        let o = ssnail(&[cmd, &img, "-p", "once upon a time", "-n", "4", "-c", "32"]);
        assert!(o.status.success(), "{cmd} -c 32: {}", text(&o).1);
    }
    // A smaller context ends the run there: "once upon a time" is 5 tokens with BOS.
    let o = ssnail(&[
        "run",
        &img,
        "-p",
        "once upon a time",
        "-n",
        "20",
        "-c",
        "8",
        "--ids",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let generated = out
        .lines()
        .find_map(|l| l.strip_prefix("generated: "))
        .unwrap();
    assert_eq!(generated.split(',').count(), 3, "{out}");
    assert!(err.contains("stop reason: context full (-c 8)"), "{err}");
    let o = ssnail(&[
        "chat",
        &img,
        "-p",
        "once upon a time",
        "-n",
        "20",
        "-c",
        "8",
        "--greedy",
    ]);
    assert!(
        text(&o).0.contains("[context full at 8 tokens (-c)"),
        "{}",
        text(&o).0
    );
}

#[test]
fn ngl_is_accepted_with_a_note_that_it_has_no_effect() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let plain = ssnail(&["run", "-m", &img, "-p", "once upon a time", "-n", "6"]);
    for ngl in [
        &["-ngl", "99"][..],
        &["-ngl=99"][..],
        &["--n-gpu-layers", "99"][..],
    ] {
        let args = [
            &["run", "-m", &img, "-p", "once upon a time", "-n", "6"][..],
            ngl,
        ]
        .concat();
        let o = ssnail(&args);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{ngl:?}: {err}");
        assert_eq!(out, text(&plain).0);
        assert!(err.contains("[-ngl 99: no effect here"), "{err}");
    }
    let o = ssnail(&["chat", &img, "-p", "once", "-n", "2", "-ngl", "99"]);
    assert!(
        text(&o).1.contains("[-ngl 99: no effect here"),
        "{}",
        text(&o).1
    );
}

#[test]
fn help_of_run_and_chat_says_where_defaults_differ_from_llama_cpp() {
    for cmd in ["run", "chat"] {
        let o = ssnail(&[cmd, "--help"]);
        let out = text(&o).0;
        assert!(
            out.contains("Defaults that differ from llama.cpp's:"),
            "{out}"
        );
        assert!(
            out.contains("--repeat-penalty 1.15 (llama.cpp: 1.0, off)"),
            "{out}"
        );
        assert!(out.contains("--top-p 1.0 and --min-p 0, both off (llama.cpp: 0.95 and 0.05)"));
        for flag in [
            "--temp",
            "--top-k",
            "--seed",
            "--top-p",
            "--min-p",
            "--ctx-size",
            "-ngl",
        ] {
            assert!(out.contains(flag), "{cmd} --help lacks {flag}");
        }
    }
}

#[test]
fn the_mega65_sampler_refuses_top_p_and_min_p_it_does_not_have() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    for (flag, v) in [("--top-p", "0.9"), ("--min-p", "0.05")] {
        let o = ssnail(&["chat", &img, "-p", "x", "--sampler", "mega65", flag, v]);
        let err = text(&o).1;
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!(
                "{flag} {v}: the MEGA65 program's sampler (--sampler mega65"
            )),
            "{err}"
        );
    }
}

#[test]
fn run_labels_its_time_as_time_on_this_pc_not_emulated_time() {
    let dir = tempfile::tempdir().unwrap();
    let img = llama(dir.path());
    let o = ssnail(&["run", &img, "-p", "once upon a time", "-n", "4"]);
    let err = text(&o).1;
    let summary = err.lines().find(|l| l.contains("stop reason")).unwrap();
    assert!(summary.ends_with("s on this PC]"), "{summary}");
    assert!(!err.contains("emulated"), "{err}");
}

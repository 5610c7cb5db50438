//! `ssnail chat --sampler mega65` (spec §7.6): the real binary against the
//! MEGA65 program's way of sampling, done here independently of the chat code:
//! one job per generated token through the plain host protocol, the logits
//! read from `H_OUTPUT` after each job, the token chosen with
//! `ssnail_format::sampler` and written over the ARGMAX's before the next job.

mod common;

use common::{chat, image};
use ssnail_core::{runtime, NoHost, Numerics, Ssnail};
use ssnail_format::image::stop;
use ssnail_format::sampler::{window_start, Sampler, Settings};
use ssnail_testkit::models::ModelOpts;
use ssnail_tokenizer::{AsciiFolder, ImageTokenizer};
use std::path::Path;

/// The MEGA65 program's loop (spec §7.6 "The MEGA65 program's side"): the
/// text after the prompt and the closing line.
fn job_per_token(img: &Path, prompt: &str, n: u32, s: Settings, seed: u32) -> (String, String) {
    let mut dev = Ssnail::load_file(img, None).unwrap().0;
    dev.machine.numerics = Numerics::Hardware;
    let hd = dev.header();
    let toks = ImageTokenizer::new(dev.machine.mem())
        .unwrap()
        .encode(prompt, true);
    let mut sampler = Sampler::new(s, seed);
    let mut folder = AsciiFolder::new();
    let mut text = String::new();
    let mut g = dev.generate(&toks, 1, &mut NoHost).unwrap();
    let mut made = 0;
    let end = loop {
        if g.stop_reason == stop::CONTEXT_FULL {
            break "[context full";
        }
        let pos = runtime(&dev.machine).pos;
        let logits = dev
            .machine
            .peek_f32s(hd.output as u64, hd.out_dim as usize)
            .unwrap();
        let q = pos - 1;
        let from = window_start(q, &s);
        let recent = ssnail_core::read_tokens(&dev.machine, from, q - from + 1);
        let t = sampler.choose(&logits, &recent).unwrap();
        dev.write_tokens(pos, &[t]).unwrap();
        folder.push(&dev.vocab_piece(t), &mut text);
        made += 1;
        if t == hd.eos {
            break "[end of text]";
        }
        if made == n {
            break "";
        }
        g = dev.continue_generation(&[], 1, &mut NoHost).unwrap();
    };
    (text, end.to_string())
}

#[test]
fn the_mega65_sampler_in_chat_chooses_what_one_job_per_token_chooses() {
    let dir = tempfile::tempdir().unwrap();
    for (arch, opts) in [("llama", ModelOpts::llama()), ("gpt2", ModelOpts::gpt2())] {
        let img = image(dir.path(), arch, &opts, 40);
        let prompt = "once upon a time";
        for (seed, temp, topk, n) in [
            (1u32, "0.8", 40, 20),
            (7, "1.5", 5, 30),
            (123456, "0.3", 64, 50),
        ] {
            let s = Settings::from_decimal(temp.parse().unwrap(), topk, 1.15, 64).unwrap();
            let (want, end) = job_per_token(&img, prompt, n, s, seed);
            let o = chat(
                &img,
                &[
                    "--sampler",
                    "mega65",
                    "--hw",
                    "--seed",
                    &seed.to_string(),
                    "--temp",
                    temp,
                    "--topk",
                    &topk.to_string(),
                    "-n",
                    &n.to_string(),
                    "-p",
                    prompt,
                ],
                "",
            );
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let out = String::from_utf8(o.stdout).unwrap();
            // The mode line may take two lines (80 columns; the second starts with a space).
            let mut lines: Vec<&str> = out.lines().collect();
            if lines[3].starts_with(' ') {
                lines.remove(3);
            }
            assert!(
                lines[2].contains("sampling as the MEGA65 (fixed point)"),
                "{out}"
            );
            // Line 3: the prompt's echo, then the answer.
            assert!(
                lines[3].ends_with(&want),
                "{arch} seed {seed}:\n{out}\nwant …{want}"
            );
            assert!(!want.is_empty());
            if !end.is_empty() {
                assert!(lines[4].starts_with(&end), "{arch} seed {seed}: {out}");
            }
        }
    }
}

#[test]
fn another_seed_gives_other_tokens_and_bad_settings_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "llama", &ModelOpts::llama(), 64);
    let run = |seed: &str| {
        let o = chat(
            &img,
            &[
                "--sampler",
                "mega65",
                "--seed",
                seed,
                "-n",
                "24",
                "-p",
                "the cat",
            ],
            "",
        );
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap()
    };
    assert_eq!(run("5"), run("5"));
    assert_ne!(run("5"), run("6"));
    for (args, msg) in [
        (
            vec!["--seed", "4294967296"],
            "seed 4294967296: the mega65 sampler takes 0 to 4294967295",
        ),
        (
            vec!["--topk", "0"],
            "top-k 0: the mega65 sampler takes 1 to 64",
        ),
        (
            vec!["--penalty", "0.5"],
            "penalty 0.5: the mega65 sampler takes 1 to 60",
        ),
    ] {
        let mut a = vec!["--sampler", "mega65", "-p", "the cat"];
        a.extend(args);
        let o = chat(&img, &a, "");
        assert!(!o.status.success());
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains(msg) && err.lines().count() == 1, "{err}");
    }
}

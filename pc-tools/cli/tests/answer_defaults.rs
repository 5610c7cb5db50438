//! An image's answer defaults (header $58, spec §1.4): `ssnail convert --default-greedy
//! --default-tokens N` writes them, and `ssnail run` and `ssnail chat` take them where the
//! command line chooses nothing, exactly as if the flags had been typed; without them the image
//! is the plain conversion's, byte for byte.

mod common;

use common::{chat, ssnail, text};
use ssnail_format::image::{h, ANSWER_GREEDY};
use ssnail_testkit::models::{self, ModelOpts};
use std::path::{Path, PathBuf};

fn convert(dir: &Path, gguf: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args = vec![
        "convert",
        gguf.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(["--ctx", "64"]);
    args.extend(flags);
    let o = ssnail(&args);
    assert!(o.status.success(), "{:?}", text(&o));
    out
}

fn stdout(args: &[&str]) -> String {
    let o = ssnail(args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{args:?}: {err}");
    out
}

#[test]
fn an_images_answer_defaults_are_what_run_and_chat_do_when_the_command_line_says_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("llama.gguf");
    models::write(&gguf, &models::build(&ModelOpts::llama()));
    let plain = convert(dir.path(), &gguf, "plain.ssnail", &[]);
    let tuned = convert(
        dir.path(),
        &gguf,
        "tuned.ssnail",
        &["--default-greedy", "--default-tokens", "5"],
    );
    let (p, t) = (
        std::fs::read(&plain).unwrap(),
        std::fs::read(&tuned).unwrap(),
    );
    let word = |b: &[u8]| u32::from_le_bytes(b[h::ANSWER..h::ANSWER + 4].try_into().unwrap());
    assert_eq!(word(&p), 0, "a plain conversion has no answer defaults");
    assert_eq!(word(&t), ANSWER_GREEDY | 5);
    let mut t0 = t.clone();
    t0[h::ANSWER..h::ANSWER + 4].fill(0);
    assert!(t0 == p, "the defaults change only header $58");

    // run: 5 tokens, as -n 5 on the plain image (run is greedy either way)
    let (tp, pp) = (tuned.to_str().unwrap(), plain.to_str().unwrap());
    let run_tuned = stdout(&["run", tp, "--prompt", "the cat sat on", "--ids"]);
    let run_plain = stdout(&["run", pp, "--prompt", "the cat sat on", "--ids", "-n", "5"]);
    assert_eq!(run_tuned, run_plain);
    assert_ne!(
        run_tuned,
        stdout(&["run", pp, "--prompt", "the cat sat on", "--ids"]),
        "run's own default is not 5 tokens"
    );

    // chat: greedy and 5 tokens a turn, as --greedy -n 5 on the plain image; --temp still chooses
    let line = "the cat sat on\n";
    let (chat_tuned, _) = text(&chat(&tuned, &[], line));
    let (chat_plain, _) = text(&chat(&plain, &["--greedy", "-n", "5"], line));
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert!(chat_tuned.contains("greedy"), "{chat_tuned}");
    assert_eq!(body(&chat_tuned), body(&chat_plain));
    let (sampled, _) = text(&chat(&tuned, &["--temp", "0.8", "--seed", "1"], line));
    assert!(sampled.contains("temperature 0.8"), "{sampled}");
    let (own, _) = text(&chat(&plain, &[], line));
    assert!(own.contains("temperature 0.8"), "{own}");
}

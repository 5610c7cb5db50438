//! `ssnail chat`'s slash commands at their edges: bad arguments are errors
//! naming the command, encoders refuse decoder settings, /tokens and
//! /models as on the MEGA65; `tokcheck` shows the pieces of a differing line.

mod common;

use common::{image, ssnail_command, text};
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::ModelOpts;
use std::process::Command;

fn chat(img: &std::path::Path, input: &str) -> (String, String) {
    let o = common::chat(img, &["--seed", "1", "-n", "3"], input);
    assert!(o.status.success(), "{}", text(&o).1);
    text(&o)
}

#[test]
fn a_bad_slash_command_argument_is_an_error_not_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    let (out, _) = chat(
        &img,
        "/n abc\n/n 0\n/temp hot\n/topk -1\n/penalty 0\n/seed x\n/frobnicate\n/n 7\n",
    );
    for want in [
        "[/n abc: needs a whole number of tokens, at least 1]",
        "[/n 0: needs a whole number of tokens, at least 1]",
        "[/temp hot: needs a temperature (a number; 0 = greedy)]",
        "[/topk -1: needs a whole number (0 = off)]",
        "[/penalty 0: needs a number > 0 (1 = off)]",
        "[/seed x: needs a whole number]",
        "[unknown command /frobnicate: /help lists the commands]",
        "[7 tokens per turn]",
    ] {
        assert!(out.contains(want), "{want:?} missing from\n{out}");
    }
    assert!(
        !out.contains("/tokens TEXT"),
        "the list only on /help: {out}"
    );
    let (out, _) = chat(&img, "/help\n");
    assert!(
        out.contains("/tokens TEXT") && out.contains("/models [N]"),
        "{out}"
    );
}

#[test]
fn encoders_refuse_settings_that_only_decoders_have() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "bert", &ModelOpts::bert(), 16);
    let (out, _) = chat(&img, "/n 5\n/temp 0.5\n/help\n");
    assert!(
        out.contains("[/n: this is an encoder; it embeds each line whole and generates nothing]"),
        "{out}"
    );
    assert!(out.contains("[/temp: this is an encoder"), "{out}");
    assert!(!out.contains("/n N  tokens per turn"), "{out}");
}

#[test]
fn tokens_shows_ids_and_pieces_and_models_switches_image() {
    let dir = tempfile::tempdir().unwrap();
    let llama = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    image(dir.path(), "gpt2", &ModelOpts::gpt2(), 16);
    let ids = common::ssnail(&["tokenize", llama.to_str().unwrap(), "once upon", "--ids"]);
    let ids: Vec<String> = text(&ids).0.trim().split(',').map(String::from).collect();
    let (out, _) = chat(&llama, "/tokens once upon\n/models\n/models 1\n/models 7\n");
    assert!(
        out.contains(&format!(
            "[3 tokens: {} (begin), {} \" once\", {} \" upon\"]",
            ids[0], ids[1], ids[2]
        )),
        "{out}"
    );
    // Listed by name with description and size; the current one starred.
    assert!(
        out.contains("  1  gpt2.ssnail  [gpt2 128d 2L 4H [General]]"),
        "{out}"
    );
    assert!(
        out.contains("  2* llama.ssnail  [llama 256d 2L 8H [General]]"),
        "{out}"
    );
    // /models 1 continues with gpt2: its banner.
    assert!(
        out.contains("[gpt2 decoder, context 16, vocab 320]"),
        "{out}"
    );
    assert!(
        out.contains("[/models 7: needs an image number, 1 to 2]"),
        "{out}"
    );
}

#[test]
fn tokcheck_shows_the_pieces_and_says_when_only_non_ascii_differs() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    let lines = dir.path().join("lines.txt");
    std::fs::write(&lines, "the café\nonce upon a time\n").unwrap();
    let o = common::ssnail(&[
        "tokcheck",
        img.to_str().unwrap(),
        dir.path().join("llama.gguf").to_str().unwrap(),
        lines.to_str().unwrap(),
    ]);
    let (out, _) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(out.contains("DIFFER: the café"), "{out}");
    let image_line = out.lines().find(|l| l.starts_with("  image: ")).unwrap();
    assert!(
        image_line.contains(":\" the\"") && image_line.contains(":\"?\""),
        "{image_line}"
    );
    assert!(out.contains("  gguf:  1:\"<s>\""), "{out}");
    assert!(
        out.contains("(ASCII only: the image reads \"the caf?\""),
        "{out}"
    );
    assert!(out.contains("1/2 lines identical"), "{out}");
}

/// On a terminal, a line typed while SmolLM2 is still answering is neither
/// echoed into the answer nor lost: it runs as the next turn, shown after "> ".
#[test]
fn a_line_typed_during_an_answer_runs_next_and_is_not_echoed_into_it() {
    use std::io::Write;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux script(1) not installed");
        return;
    }
    let gguf = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("smol.ssnail");
    let o = common::ssnail(&[
        "convert",
        gguf.to_str().unwrap(),
        "-o",
        img.to_str().unwrap(),
        "--wtype",
        "q4_0",
        "--mem-mb",
        "100",
        // Continued text runs long enough to type ahead (a chat turn may end at once).
        "--no-template",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    // 200 tokens take a second or more: time to type the next line meanwhile.
    let cmd = format!(
        "'{}' chat '{}' --greedy -n 200",
        env!("CARGO_BIN_EXE_ssnail"),
        img.display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (raw, reader) = common::collect_stdout(&mut child);
    let prompts = |raw: &[u8]| raw.windows(8).filter(|w| w == b"\x1b[?2004h").count();
    let deadline = Instant::now() + Duration::from_secs(120);
    let wait_for = |n: usize| {
        while prompts(&raw.lock().unwrap()) < n {
            assert!(Instant::now() < deadline, "no prompt: {:?}", raw.lock());
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    wait_for(1);
    stdin.write_all(b"Once upon a time\r").unwrap();
    stdin.flush().unwrap();
    // Typed while the answer streams.
    std::thread::sleep(Duration::from_millis(300));
    stdin.write_all(b"The cat\r").unwrap();
    stdin.flush().unwrap();
    // The second line runs without a prompt of the line editor; the next one is the second.
    wait_for(2);
    stdin.write_all(b"/quit\r").unwrap();
    stdin.flush().unwrap();
    let status = child.wait().unwrap();
    drop(stdin);
    reader.join().unwrap();
    assert!(status.success());
    let out = String::from_utf8_lossy(&raw.lock().unwrap()).replace('\r', "");
    let first = out
        .split("Once upon a time")
        .nth(1)
        .expect("the first line");
    let (answer, rest) = first
        .split_once("positions in ")
        .expect("the first speed line");
    assert!(
        !answer.contains("The cat"),
        "echoed into the answer: {answer:?}"
    );
    assert!(
        rest.contains("\n> The cat\n"),
        "run next, after '> ': {rest:?}"
    );
    assert!(
        rest.matches("positions in ").count() >= 1,
        "and answered: {rest:?}"
    );
}

/// The chat on a terminal (util-linux `script`) with `keys` written at the first prompt in one
/// go, then `/quit` once it has printed `done` and shown a prompt again; everything it printed
/// (CR removed).
fn chat_on_a_terminal(img: &std::path::Path, args: &[&str], keys: &[u8], done: &str) -> String {
    use std::io::Write;
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let cmd = format!(
        "'{}' chat '{}' {}",
        env!("CARGO_BIN_EXE_ssnail"),
        img.display(),
        args.join(" ")
    );
    let mut child = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (raw, reader) = common::collect_stdout(&mut child);
    let prompts = |raw: &[u8]| raw.windows(8).filter(|w| w == b"\x1b[?2004h").count();
    let deadline = Instant::now() + Duration::from_secs(60);
    let wait_for = |what: &str| {
        let seen = |raw: &[u8]| {
            let text = String::from_utf8_lossy(raw);
            text.split_once(what)
                .is_some_and(|(_, after)| prompts(after.as_bytes()) > 0)
        };
        while !seen(&raw.lock().unwrap()) {
            let text = String::from_utf8_lossy(&raw.lock().unwrap()).into_owned();
            assert!(Instant::now() < deadline, "no {what:?} and prompt: {text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let mut stdin = child.stdin.take().unwrap();
    wait_for("quits]");
    stdin.write_all(keys).unwrap();
    stdin.flush().unwrap();
    wait_for(done);
    stdin.write_all(b"/quit\r").unwrap();
    stdin.flush().unwrap();
    let status = child.wait().unwrap();
    drop(stdin);
    reader.join().unwrap();
    assert!(status.success());
    let out = String::from_utf8_lossy(&raw.lock().unwrap()).replace('\r', "");
    out
}

/// Lines pasted together at the prompt (with or without the terminal's bracketed paste) all
/// run, one turn each, in order: none is lost (docs/chat.md).
#[test]
fn lines_pasted_together_at_the_prompt_all_run_one_turn_each() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux script(1) not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = common::image(
        dir.path(),
        "llama",
        &ssnail_testkit::models::ModelOpts::llama(),
        64,
    );
    for keys in [
        &b"/n 2\r/tokens two\r/tokens three\r"[..],
        &b"\x1b[200~/n 2\r/tokens two\r/tokens three\x1b[201~\r"[..],
    ] {
        let out = chat_on_a_terminal(&img, &["--greedy"], keys, "[5 tokens: 1 (begin)");
        let n = out
            .find("[2 tokens per turn]")
            .unwrap_or_else(|| panic!("{keys:?}: {out}"));
        // The test model's pieces: "two" is 4 tokens with BOS, "three" 5.
        let two = out
            .find("[4 tokens: 1 (begin)")
            .unwrap_or_else(|| panic!("{keys:?}: {out}"));
        let three = out
            .find("[5 tokens: 1 (begin)")
            .unwrap_or_else(|| panic!("{keys:?}: {out}"));
        assert!(n < two && two < three, "{keys:?}: {out}");
    }
}

/// On a terminal the answer (here the echoed one-shot prompt and its continuation) wraps at
/// words to 80 columns: no word is cut across lines ("very b/ad"), no line is longer.
#[test]
fn output_on_a_terminal_wraps_at_words() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux script(1) not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let img = common::image(
        dir.path(),
        "llama",
        &ssnail_testkit::models::ModelOpts::llama(),
        128,
    );
    let prompt = "the cat sat on the mat and looked at the bird ".repeat(5);
    let cmd = format!(
        "'{}' chat '{}' --greedy -n 1 -p '{}'",
        env!("CARGO_BIN_EXE_ssnail"),
        img.display(),
        prompt.trim_end()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("TERM", "xterm")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).replace('\r', "");
    let start = out.find("the cat").unwrap_or_else(|| panic!("{out}"));
    let answer: Vec<&str> = out[start..]
        .lines()
        .take_while(|l| !l.starts_with('['))
        .collect();
    assert!(answer.len() >= 3, "wrapped into lines: {out}");
    for l in &answer {
        assert!(l.chars().count() <= 80, "{l:?} in {out}");
    }
    // Joined at the breaks, the words are the prompt's: none was cut.
    let words: Vec<&str> = answer.iter().flat_map(|l| l.split_whitespace()).collect();
    let want: Vec<&str> = prompt.split_whitespace().collect();
    assert_eq!(&words[..want.len()], &want[..], "{out}");
}

/// The banner, the hint, the mode line and the speed lines fit an 80-column terminal.
#[test]
fn the_banner_mode_hint_and_speed_lines_fit_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let img = common::image(
        dir.path(),
        "llama",
        &ssnail_testkit::models::ModelOpts::llama(),
        128,
    );
    // A long description (the header holds up to 127 characters).
    let desc = "A rather long description of a tiny llama model, written to see that the banner \
                wraps at words [General]";
    let bytes = ssnail_testkit::images::with_description(&std::fs::read(&img).unwrap(), desc);
    std::fs::write(&img, &bytes).unwrap();
    for args in [
        &["--float", "--sampler", "mega65", "--seed", "1"][..],
        &[
            "--float", "--top-p", "0.95", "--min-p", "0.05", "--seed", "1",
        ][..],
    ] {
        let mut cmd = ssnail_command();
        cmd.arg("chat").arg(&img).args(args).args(["-n", "4"]);
        let o = common::output_with_stdin(&mut cmd, "once upon a time\n/stats\n");
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert!(out.contains("wraps at words"), "{out}");
        for l in out.lines().chain(err.lines()) {
            assert!(
                l.chars().count() <= 80,
                "{} columns: {l:?}",
                l.chars().count()
            );
        }
    }
}

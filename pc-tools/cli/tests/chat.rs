//! `ssnail chat` end to end: the real binary with piped stdin on converted
//! test models (and the real all-MiniLM-L6-v2 for the encoder). References
//! come from the core emulator's plain host protocol (one greedy `generate`,
//! no chat code), `ssnail run`, and the image tokenizer.

mod common;

use common::{chat, image, ssnail, ssnail_command};
use ssnail_core::{NoHost, Numerics, Ssnail};
use ssnail_format::ggml::GgmlType;
use ssnail_testkit::models::ModelOpts;
use ssnail_tokenizer::{AsciiFolder, ImageTokenizer};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The image loaded as the chat loads it, for references (a decoder in
/// hardware numerics, the chat's default).
struct Reference {
    dev: Ssnail,
}

impl Reference {
    fn new(img: &Path) -> Reference {
        let mut dev = Ssnail::load_file(img, None).unwrap().0;
        if !dev.header().is_encoder() {
            dev.machine.numerics = Numerics::Hardware;
        }
        Reference { dev }
    }
    fn encode(&self, text: &str, first: bool) -> Vec<u32> {
        ImageTokenizer::new(self.dev.machine.mem())
            .unwrap()
            .encode(text, first)
    }
    /// Greedy generation from position 0 in one run of the plain host protocol.
    fn greedy(&mut self, prompt: &[u32], n: u32) -> (Vec<u32>, u32) {
        let g = self.dev.generate(prompt, n, &mut NoHost).unwrap();
        (g.tokens, g.stop_reason)
    }
    fn bytes(&self, ids: &[u32]) -> Vec<u8> {
        ids.iter().flat_map(|&t| self.dev.vocab_piece(t)).collect()
    }
}

/// The banner lines (§7.2) before any turn output.
fn banner(desc: &str, kind: &str, ctx: u32, mode: &str) -> String {
    format!("[{desc}]\n[{kind}, context {ctx}, vocab 400]\n[{mode}]\n")
}

const LLAMA_DESC: &str = "llama 256d 2L 8H [General]";
const HW_GREEDY: &str = "hardware numerics; greedy, as the v1 hardware";

#[test]
fn decoder_turns_continue_and_reset() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        64,
    );
    let mut r = Reference::new(&img);
    let prompt = r.encode("once upon a time", true);
    // One 12-token run = turn 1 (6 tokens) + an empty line (6 more).
    let (twelve, reason) = r.greedy(&prompt, 12);
    assert_eq!(
        (twelve.len(), reason),
        (12, 1),
        "the test needs no early EOS"
    );
    // After /reset: turn 1 again, then "the cat" appended to the context.
    let mut ctx: Vec<u32> = prompt.clone();
    ctx.extend(&twelve[..6]);
    ctx.extend(r.encode("the cat", false));
    let (after_cat, reason) = r.greedy(&ctx, 6);
    assert_eq!((after_cat.len(), reason), (6, 1));

    let o = chat(
        &img,
        &["--greedy", "-n", "6"],
        "once upon a time\n\n/reset\nonce upon a time\nthe cat\n/quit\nnot read\n",
    );
    let out = stdout(&o);
    let mut f = AsciiFolder::new();
    let turn = |ids: &[u32], f: &mut AsciiFolder| {
        let mut s = String::new();
        f.push(&r.bytes(ids), &mut s);
        s + "\n"
    };
    let mut expect = banner(LLAMA_DESC, "llama decoder", 64, HW_GREEDY);
    expect += &turn(&twelve[..6], &mut f);
    expect += &turn(&twelve[6..], &mut f);
    expect += "[context cleared]\n";
    let mut f = AsciiFolder::new();
    expect += &turn(&twelve[..6], &mut f);
    expect += &turn(&after_cat, &mut f);
    assert_eq!(out, expect);
    // Each turn reports its speed on this PC and the modelled hardware speed.
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    // Positions processed: prompt + 5 (the 6th token is not processed yet), then 6, ...
    let p = prompt.len();
    let cat = ctx.len() - p - 6;
    for (line, positions) in lines.iter().zip([p + 5, 6, p + 5, cat + 6]) {
        assert!(
            line.starts_with(&format!("[{positions} positions in ")),
            "{line}"
        );
        assert!(
            line.contains(" tokens/s on this PC; ~")
                && line.ends_with(" at 130 MB/s]")
                && line.chars().count() <= 80,
            "{line}"
        );
    }
}

#[test]
fn greedy_equals_ssnail_run() {
    let dir = tempfile::tempdir().unwrap();
    let llama = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q4_0),
        64,
    );
    let gpt2 = image(dir.path(), "gpt2", &ModelOpts::gpt2(), 64);
    for img in [&llama, &gpt2] {
        let i = img.to_str().unwrap();
        let r = Reference::new(img);
        for hw in [false, true] {
            let mut run_args = vec!["run", i, "--prompt", "the cat sat on", "-n", "16", "--ids"];
            let mut chat_args = vec!["--greedy", "-n", "16"];
            if !hw {
                run_args.push("--float");
                chat_args.push("--float");
            }
            let ran = stdout(&ssnail(&run_args));
            let ids = |key: &str| -> Vec<u32> {
                let line = ran.lines().find(|l| l.starts_with(key)).unwrap();
                line[key.len()..]
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse().unwrap())
                    .collect()
            };
            let (prompt, generated) = (ids("prompt: "), ids("generated: "));
            assert_eq!(prompt, r.encode("the cat sat on", true));
            let eos = r.dev.header().eos;
            let stopped_at_eos = generated.last() == Some(&eos);
            assert!(generated.len() == 16 || stopped_at_eos);

            // --prompt: the prompt's text, then the generated text.
            let mut args = chat_args.clone();
            args.extend(["--prompt", "the cat sat on"]);
            let out = stdout(&chat(img, &args, ""));
            let text =
                AsciiFolder::fold_all(&r.bytes(&[prompt.clone(), generated.clone()].concat()));
            let end = if stopped_at_eos {
                "[end of text]\n"
            } else {
                ""
            };
            let tail = format!("{text}\n{end}");
            assert!(out.ends_with(&tail), "{out:?} vs {tail:?}");
            let mode = if hw {
                "[hardware numerics; greedy, as the v1 hardware]"
            } else {
                "[float reference numerics; greedy, as the v1 hardware]"
            };
            assert_eq!(out.lines().nth(2), Some(mode));

            // The /greedy command (sampling settings before it) in a piped session.
            let sampling: Vec<&str> = chat_args[1..].to_vec();
            let out = stdout(&chat(img, &sampling, "/greedy\nthe cat sat on\n"));
            let text = AsciiFolder::fold_all(&r.bytes(&generated));
            assert!(
                out.ends_with(&format!(
                    "[greedy (temperature 0, penalty 1.0), as the v1 hardware; \
                     /temp T samples again]\n{text}\n{end}"
                )),
                "{out:?}"
            );
        }
    }
}

#[test]
fn seed_reproduces_samples() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(dir.path(), "llama", &ModelOpts::llama(), 64);
    let sample = |extra: &[&str], input: &str| {
        let mut args = vec!["-n", "24"];
        args.extend(extra);
        let out = stdout(&chat(&img, &args, input));
        // Drop the banner.
        out.lines().skip(3).collect::<Vec<_>>().join("\n")
    };
    let one = sample(&["--seed", "1", "--prompt", "once upon a time"], "");
    let again = sample(&["--seed", "1", "--prompt", "once upon a time"], "");
    let two = sample(&["--seed", "2", "--prompt", "once upon a time"], "");
    let greedy = sample(&["--greedy", "--prompt", "once upon a time"], "");
    assert_eq!(one, again);
    assert_ne!(one, two);
    assert_ne!(one, greedy);
    assert_ne!(two, greedy);
    // /seed gives a fresh generator: same text as --seed 1 (without the prompt echo).
    let reseeded = sample(&["--seed", "99"], "/seed 1\nonce upon a time\n");
    let echo = AsciiFolder::fold_all(
        &Reference::new(&img).bytes(&Reference::new(&img).encode("once upon a time", true)),
    );
    assert_eq!(
        reseeded,
        format!("[seed 1]\n{}", one.strip_prefix(&echo).unwrap())
    );
    // The sampling settings appear in the banner.
    let out = stdout(&chat(
        &img,
        &["--temp", "1.5", "--topk", "7", "--penalty", "1"],
        "",
    ));
    assert_eq!(
        out.lines().nth(2),
        Some("[hardware numerics; sampling: temperature 1.5, top-k 7, repeat penalty 1.0]")
    );
}

#[test]
fn context_full_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        16,
    );
    let mut r = Reference::new(&img);
    let prompt = r.encode("once upon a time", true);
    let (generated, reason) = r.greedy(&prompt, 100);
    assert_eq!(reason, 3);
    let full = "[context full at 16 tokens: /reset to start again]";
    let o = chat(
        &img,
        &["--greedy", "-n", "100"],
        "once upon a time\nthe cat\n/reset\nonce upon a time\n",
    );
    let out = stdout(&o);
    let text = AsciiFolder::fold_all(&r.bytes(&generated));
    let expect = format!(
        "{}{text}\n{full}\n\n{full}\n[context cleared]\n{text}\n{full}\n",
        banner(LLAMA_DESC, "llama decoder", 16, HW_GREEDY)
    );
    assert_eq!(out, expect);
}

#[test]
fn commands_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        32,
    );
    let mut r = Reference::new(&img);
    let prompt = r.encode("once", true);
    let (generated, reason) = r.greedy(&prompt, 4);
    assert_eq!((generated.len(), reason), (4, 1));
    let out = stdout(&chat(
        &img,
        &["--seed", "3"],
        "/n 4\n/temp 0.5\n/topk 5\n/penalty 1.3\n/hw\n/hw\n/eos\n/eos\n/temp\n/what\n/help\n/stats\n/greedy\nonce\n/stats\n",
    ));
    let lines: Vec<&str> = out.lines().skip(3).collect();
    assert_eq!(
        lines[..10],
        [
            "[4 tokens per turn]",
            "[hardware numerics; sampling: temperature 0.5, top-k 40, repeat penalty 1.15]",
            "[hardware numerics; sampling: temperature 0.5, top-k 5, repeat penalty 1.15]",
            "[hardware numerics; sampling: temperature 0.5, top-k 5, repeat penalty 1.3]",
            "[float reference numerics]",
            "[hardware numerics]",
            "[EOS display on: <EOS n%> before a token when P(end of text) >= 5%]",
            "[EOS display off]",
            // A bad argument and an unknown command: errors, not the list.
            "[/temp (nothing): needs a temperature (a number; 0 = greedy)]",
            "[unknown command /what: /help lists the commands]",
        ]
    );
    // /help: the list, five lines for a decoder.
    assert!(lines[10].starts_with("[/reset  new conversation"), "{out}");
    assert!(lines[14].ends_with("leave]"), "{out}");
    assert_eq!(lines[15], "[0 instructions, 0.0 MB RAM traffic, pos 0]");
    assert_eq!(lines[16], "[0 positions in 0.00s: no positions processed]");
    // After one greedy turn of 4 tokens: the text, then cumulative counters and pos (prompt + 3).
    let text = AsciiFolder::fold_all(&r.bytes(&generated));
    let tail = lines[17..].join("\n");
    let (said, traffic) = tail.rsplit_once("\n[").unwrap();
    let (said, stats) = said.rsplit_once("\n[").unwrap();
    let (said, stats1) = said.rsplit_once("\n[").unwrap();
    assert!(
        traffic.starts_with("RAM traffic ") && traffic.ends_with(" tokens/s at 130 MB/s]"),
        "{traffic}"
    );
    assert!(said.ends_with(&text), "{out}");
    let positions = prompt.len() + 3;
    assert!(
        stats1.ends_with(&format!(" MB RAM traffic, pos {positions}]")),
        "{stats1}"
    );
    assert!(!stats1.starts_with("0 instructions"), "{stats1}");
    assert!(
        stats.starts_with(&format!("{positions} positions in "))
            && stats.ends_with(" at 130 MB/s]"),
        "{stats}"
    );

    // Bad input: one line naming the file, exit 1.
    let missing = dir.path().join("missing.ssnail");
    let o = chat(&missing, &[], "");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("missing.ssnail"), "{err}");
    let junk = dir.path().join("junk.ssnail");
    std::fs::write(&junk, b"not an image at all").unwrap();
    let o = chat(&junk, &[], "");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("junk.ssnail"), "{err}");
    let o = chat(&img, &["--prompt", ""], "");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.ends_with("llama.ssnail: the prompt gives no tokens\n"),
        "{err}"
    );
    let o = chat(&img, &["--penalty", "0"], "");
    assert_eq!(o.status.code(), Some(2), "clap rejects a zero penalty");
}

/// A cached image is used while it is newer than the `ssnail` under test
/// (a rebuilt converter converts again).
fn is_fresh(cached: &Path) -> bool {
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (
        mtime(cached),
        mtime(Path::new(env!("CARGO_BIN_EXE_ssnail"))),
    ) {
        (Some(image), Some(tool)) => image > tool,
        _ => false,
    }
}

/// The real all-MiniLM-L6-v2 (test-data cache) imported and converted once
/// per build of the tool.
fn minilm_image() -> PathBuf {
    let cached = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chat-minilm-q8_0-ctx64.ssnail");
    if is_fresh(&cached) {
        return cached;
    }
    let minilm = ssnail_testkit::cache::minilm();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let gguf = dir.path().join("minilm.gguf");
    let img = dir.path().join("minilm.ssnail");
    let (m, g, i) = (
        minilm.to_str().unwrap(),
        gguf.to_str().unwrap(),
        img.to_str().unwrap(),
    );
    stdout(&ssnail(&["import", m, "-o", g, "--outtype", "q8_0"]));
    stdout(&ssnail(&[
        "convert", g, "-o", i, "--mem-mb", "64", "--ctx", "64",
    ]));
    // Rename into place: a concurrent or interrupted build never leaves half a file.
    std::fs::rename(&img, &cached).unwrap();
    cached
}

#[test]
fn encoder_ranks_a_paraphrase_above_an_unrelated_line() {
    let img = minilm_image();
    let long = "the quick brown fox jumps over the lazy dog ".repeat(10);
    let n_long = Reference::new(&img).encode(&long, true).len();
    assert!(n_long > 64);
    let input = format!(
        "A man is playing a guitar.\n\nThe weather is lovely today.\n{long}\n\
         Someone plays the guitar.\n/reset\nIt is sunny and warm outside.\n"
    );
    let o = chat(&img, &[], &input);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    // stderr: one speed line per embedded line (4), none for the too-long one.
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 4, "{err}");
    for l in err.lines() {
        assert!(
            l.contains(" ms on this PC, ~") && l.ends_with(" ms at 130 MB/s]"),
            "{l}"
        );
    }
    assert_eq!(lines[0], "[all-MiniLM-L6-v2 (bert) [General]]");
    assert_eq!(lines[1], "[bert encoder, context 64, vocab 30522]");
    assert_eq!(lines[2], "  [384-dimensional embedding stored]");
    // The weather line: only the guitar line to compare with.
    assert!(lines[3].ends_with("  A man is playing a guitar."), "{out}");
    assert_eq!(lines[4], format!("[too long: {n_long} tokens, maximum 64]"));
    // The paraphrase: the guitar line first, well above the weather line.
    let score = |l: &str| -> f64 { l.trim_start()[..6].parse().unwrap() };
    assert!(lines[5].ends_with("  A man is playing a guitar."), "{out}");
    assert!(
        lines[6].ends_with("  The weather is lovely today."),
        "{out}"
    );
    assert!(lines[5].starts_with("  +0."), "{out}");
    assert!(
        score(lines[5]) > 0.6 && score(lines[5]) > score(lines[6]) + 0.4,
        "{out}"
    );
    // /reset forgets the stored lines.
    assert_eq!(lines[7], "[context cleared]");
    assert_eq!(lines[8], "  [384-dimensional embedding stored]");
    assert_eq!(lines.len(), 9, "{out}");
}

/// Text of a terminal session: escape sequences and carriage returns removed.
fn screen_text(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters final-letter.
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() || d == '~' {
                        break;
                    }
                }
            }
        } else if c != '\r' {
            out.push(c);
        }
    }
    out
}

/// On a terminal (a pseudo-terminal from util-linux `script`): the line
/// editor shows the hint and the `> ` prompt, and Up recalls the last line.
/// Each key sequence is sent only once the prompt is back.
#[test]
fn terminal_session_with_line_editor_and_history() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        64,
    );
    let mut r = Reference::new(&img);
    let prompt = r.encode("once upon a time", true);
    let (first, _) = r.greedy(&prompt, 4);
    let mut ctx = prompt.clone();
    ctx.extend(&first);
    ctx.extend(r.encode("once upon a time", false));
    let (second, _) = r.greedy(&ctx, 4);

    let cmd = format!(
        "'{}' chat '{}' --greedy -n 4",
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
        .expect("util-linux `script` provides the pseudo-terminal");
    let (raw, reader) = common::collect_stdout(&mut child);
    let mut stdin = child.stdin.take().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    // Enter is CR on a terminal; ESC [ A is the Up key.
    for (i, keys) in ["once upon a time\r", "\x1b[A\r", "/quit\r"]
        .iter()
        .enumerate()
    {
        // Each readline starts by enabling bracketed paste (ESC [ ? 2004 h).
        let prompts = |raw: &[u8]| raw.windows(8).filter(|w| w == b"\x1b[?2004h").count();
        while prompts(&raw.lock().unwrap()) <= i {
            assert!(Instant::now() < deadline, "no prompt: {:?}", raw.lock());
            std::thread::sleep(Duration::from_millis(20));
        }
        stdin.write_all(keys.as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("chat did not quit: {:?}", screen_text(&raw.lock().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stdin);
    reader.join().unwrap();
    let text = screen_text(&raw.lock().unwrap());
    assert!(
        text.contains("[type text and Enter; an empty line continues"),
        "{text}"
    );
    let mut f = AsciiFolder::new();
    let (mut t1, mut t2) = (String::new(), String::new());
    f.push(&r.bytes(&first), &mut t1);
    f.push(&r.bytes(&second), &mut t2);
    // The line, the text, the speed line (stderr is the terminal too), twice.
    let turns: Vec<&str> = text.split("> once upon a time\n").collect();
    assert_eq!(turns.len(), 3, "{text}");
    assert!(turns[1].starts_with(&format!("{t1}\n[")), "{text}");
    assert!(turns[2].starts_with(&format!("{t2}\n[")), "{text}");
    assert!(turns[2].contains("> /quit"), "{text}");
}

/// The real SmolLM2-135M (test-data cache) converted once per target directory.
fn smollm2_image() -> PathBuf {
    let cached = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chat-smollm2-q4_0-ctx64-raw.ssnail");
    if is_fresh(&cached) {
        return cached;
    }
    let gguf = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let img = dir.path().join("smol.ssnail");
    let (g, i) = (gguf.to_str().unwrap(), img.to_str().unwrap());
    stdout(&ssnail(&[
        "convert",
        g,
        "-o",
        i,
        "--wtype",
        "q4_0",
        "--mem-mb",
        "128",
        "--ctx",
        "64",
        // These tests continue text: the instruct model's chat template stays out.
        "--no-template",
    ]));
    std::fs::rename(&img, &cached).unwrap();
    cached
}

/// `--eos` on a real model whose greedy answer ends with end-of-text: the
/// text is `ssnail run`'s, with `<EOS 100%>` exactly before the end (greedy:
/// P(EOS) is 1 where EOS is the argmax, else 0).
#[test]
fn eos_display_on_smollm2() {
    let img = smollm2_image();
    let i = img.to_str().unwrap();
    let prompt = "Q: What is 2+2?\nA:";
    let ran = stdout(&ssnail(&[
        "run", i, "--prompt", prompt, "-n", "40", "--ids",
    ]));
    let ids = |key: &str| -> Vec<u32> {
        let line = ran.lines().find(|l| l.starts_with(key)).unwrap();
        line[key.len()..]
            .split(',')
            .map(|s| s.parse().unwrap())
            .collect()
    };
    let r = Reference::new(&img);
    let (p, g) = (ids("prompt: "), ids("generated: "));
    assert_eq!(
        g.last(),
        Some(&r.dev.header().eos),
        "greedy answer should end: {g:?}"
    );
    let text = AsciiFolder::fold_all(&r.bytes(&[p, g].concat()));
    let out = stdout(&chat(
        &img,
        &["--greedy", "--eos", "-n", "40", "--prompt", prompt],
        "",
    ));
    assert!(
        out.ends_with(&format!("\n{text}<EOS 100%>\n[end of text]\n")),
        "{out:?}\n{text:?}"
    );
    assert_eq!(out.matches("<EOS").count(), 1, "{out}");
    // Without --eos: no marker.
    let out = stdout(&chat(
        &img,
        &["--greedy", "-n", "40", "--prompt", prompt],
        "",
    ));
    assert!(
        out.ends_with(&format!("\n{text}\n[end of text]\n")),
        "{out:?}"
    );
}

/// `--gguf` (the README's examples): the model's own reference tokenizer for
/// the input. Plain ASCII tokenizes as the image does; other text keeps its
/// characters (the image tokenizer, like the MEGA65 keyboard, sees '?'); a
/// GGUF of another model is refused.
#[test]
fn gguf_tokenizer_option() {
    let dir = tempfile::tempdir().unwrap();
    let img = image(
        dir.path(),
        "llama",
        &ModelOpts::llama().with_wtype(GgmlType::Q8_0),
        64,
    );
    let gguf = dir.path().join("llama.gguf");
    let g = gguf.to_str().unwrap();
    let args = ["--greedy", "-n", "8", "--prompt", "the cat sat on the mat"];
    let plain = stdout(&chat(&img, &args, ""));
    let with_gguf = stdout(&chat(&img, &[&["--gguf", g][..], &args].concat(), ""));
    assert_eq!(plain, with_gguf);
    // Piped turns and continuation use it too.
    let input = "once upon a time\nthe dog was happy\n";
    assert_eq!(
        stdout(&chat(&img, &["--greedy", "-n", "5"], input)),
        stdout(&chat(&img, &["--greedy", "-n", "5", "--gguf", g], input))
    );

    let other = image(dir.path(), "gpt2", &ModelOpts::gpt2(), 64);
    let o = chat(
        &img,
        &["--gguf", other.with_extension("gguf").to_str().unwrap()],
        "",
    );
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("gpt2.gguf") && err.contains("not this image's model"),
        "{err}"
    );

    // Real SmolLM2: accented letters reach the model through --gguf.
    let smol = smollm2_image();
    let smol_gguf = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    let args = ["--greedy", "-n", "1", "--prompt", "Le café est très bon"];
    let out = stdout(&chat(&smol, &args, ""));
    assert!(out.contains("\nLe caf? est tr?s bon"), "{out}");
    let out = stdout(&chat(
        &smol,
        &[&["--gguf", smol_gguf.to_str().unwrap()][..], &args].concat(),
        "",
    ));
    assert!(out.contains("\nLe cafe est tres bon"), "{out}");
}

/// Ctrl-C (SIGINT) while a decoder generates: the script is asked to stop
/// (stop_request, reason 4) after the current token and the session goes on;
/// Ctrl-C while waiting for input quits with status 130.
#[test]
fn interrupt_stops_the_generation_then_quits() {
    use std::time::{Duration, Instant};
    let img = smollm2_image();
    let mut child = ssnail_command()
        .arg("chat")
        .arg(&img)
        .args(["--greedy", "-n", "60", "--threads", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (raw, reader) = common::collect_stdout(&mut child);
    let text = || String::from_utf8_lossy(&raw.lock().unwrap()).into_owned();
    let wait_for = |what: &dyn Fn(&str) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !what(&text()) {
            assert!(Instant::now() < deadline, "timed out: {}", text());
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    let interrupt = |pid: u32| {
        let ok = Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap();
        assert!(ok.success());
    };
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"Once upon a time\n").unwrap();
    stdin.flush().unwrap();
    // The banner is 3 lines; interrupt once the first generated text shows.
    wait_for(&|t| t.lines().count() > 3 || (t.matches('\n').count() == 3 && !t.ends_with('\n')));
    interrupt(child.id());
    wait_for(&|t| t.contains("[stopped]\n"));
    // The session goes on: /stats answers, with pos short of 60 new tokens.
    stdin.write_all(b"/stats\n").unwrap();
    stdin.flush().unwrap();
    wait_for(&|t| t.contains(" MB RAM traffic, pos "));
    let out = text();
    let pos: u32 = out
        .split(", pos ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(pos < 4 + 59, "{out}");
    // Waiting for input: Ctrl-C quits.
    interrupt(child.id());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    drop(stdin);
    reader.join().unwrap();
}

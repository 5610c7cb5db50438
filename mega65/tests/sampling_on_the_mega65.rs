//! Sampling on the MEGA65 (spec §7.6): the MEGA65 program (cc65 build) in the headless MEGA65
//! with a fixed seed prints exactly the tokens `ssnail chat --sampler mega65 --seed S` prints
//! (the real binary, hardware numerics as the headless core), for llama and gpt2 test images,
//! several seeds, temperatures and top-k, on both boards; another seed changes the MEGA65's
//! answer.

use ssnail_mega65_program as common;
use ssnail_mega65_program::test_images::{gpt2, llama};

use ssnail_core::{Board, Machine as Core, Numerics, Ssnail};
use ssnail_disk::{FileType, D81};
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn prg() -> &'static [u8] {
    &files().0
}

/// The PRG's chat overlay, beside it on the disk.
fn ovl() -> &'static [u8] {
    &files().1
}

fn files() -> &'static (Vec<u8>, Vec<u8>) {
    static PRG: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    PRG.get_or_init(|| {
        let out_dir =
            std::env::temp_dir().join(format!("ssnail-mega65-sampling-{}", std::process::id()));
        common::program_files(&out_dir).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// The `ssnail` binary of this workspace, built (release) if needed.
fn ssnail_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let root = common::mega65_dir().join("..");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args([
                "build",
                "--release",
                "-q",
                "-p",
                "ssnail",
                "--bin",
                "ssnail",
            ])
            .current_dir(&root)
            .status()
            .expect("cargo build -p ssnail");
        assert!(st.success(), "building ssnail failed");
        let target = std::env::var("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join("target"));
        target.join("release/ssnail")
    })
}

const BOARDS: [(usize, &str); 2] = [(8, "R3"), (72, "R4-R6")];

/// The program from a D81 holding `img`, keys typed at once; the transcript once `times`
/// answers have ended (the tokens/s line) or 300 s of MEGA65 time passed.
fn mega65(img: &[u8], mib: usize, keys: &str, times: usize) -> String {
    let mut d = D81::new("SSNAIL", *b"65").unwrap();
    d.add_file("ssnail", FileType::Prg, prg()).unwrap();
    d.add_file(common::OVERLAY_FILE, FileType::Seq, ovl())
        .unwrap();
    d.add_file("model.ssnail", FileType::Seq, img).unwrap();
    let mut m = Machine::new();
    let mut core = Core::new(mib << 20);
    core.numerics = Numerics::Hardware;
    let board = if mib <= 8 { Board::R3 } else { Board::R4 };
    m.attach_ssnail(Ssnail::with_board(core, board));
    m.mount_d81(d.into_bytes());
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys.schedule(&KeyScript::parse(keys).unwrap(), 0);
    m.start_at(entry);
    for _ in 0..3000 {
        m.run(CPU_HZ / 10);
        if String::from_utf8_lossy(&m.serial)
            .matches("tokens/s]")
            .count()
            >= times
        {
            break;
        }
    }
    let t = String::from_utf8_lossy(&m.serial).into_owned();
    // Keep failure messages readable: a runaway answer is cut.
    t.chars().take(20_000).collect()
}

/// The text after the echoed prompt line up to the program's next `[` line.
fn answer<'a>(transcript: &'a str, prompt: &str) -> &'a str {
    let start = transcript
        .find(&format!("> {prompt}\n"))
        .unwrap_or_else(|| panic!("prompt not echoed:\n{transcript}"))
        + prompt.len()
        + 3;
    let rest = &transcript[start..];
    &rest[..rest
        .find("\n[")
        .unwrap_or_else(|| panic!("no end of answer:\n{transcript}"))]
}

/// `ssnail chat IMG --sampler mega65 --hw --seed S --temp T --topk K -n N -p PROMPT`: the
/// answer after the prompt's echo (the chat's first text line).
fn pc(img: &[u8], run: &Run, n: u32, prompt: &str) -> String {
    let (seed, temp, topk, penalty) = *run;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.ssnail");
    std::fs::write(&path, img).unwrap();
    let o = Command::new(ssnail_bin())
        .arg("chat")
        .arg(&path)
        .args(["--sampler", "mega65", "--hw", "--seed", &seed.to_string()])
        .args([
            "--temp",
            temp,
            "--topk",
            &topk.to_string(),
            "--penalty",
            penalty,
            "-n",
            &n.to_string(),
        ])
        .args(["-p", prompt])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    // Status lines are bracketed and may go on over more 80-column lines (until the "]").
    let mut in_status = false;
    let line = out
        .lines()
        .find(|l| {
            let status = in_status || l.starts_with('[');
            in_status = status && !l.ends_with(']');
            !status
        })
        .unwrap_or_else(|| panic!("no text: {out}"));
    line.to_string()
}

/// The MEGA65's answers for these settings (one per seed, in one session per board).
/// Seed, temperature, top-k, repetition penalty.
type Run = (u32, &'static str, u32, &'static str);

fn check(img: &[u8], name: &str, prompt: &str, runs: &[Run], n: u32) {
    for (mib, board) in BOARDS {
        let mut keys = format!("{{RETURN}}/n {n}{{RETURN}}");
        for (seed, temp, topk, penalty) in runs {
            keys += &format!(
                "/reset{{RETURN}}/seed {seed}{{RETURN}}/temp {temp}{{RETURN}}/topk {topk}{{RETURN}}\
                 /penalty {penalty}{{RETURN}}{prompt}{{RETURN}}"
            );
        }
        let t = mega65(img, mib, &keys, runs.len());
        let mut rest = t.as_str();
        let mut answers = Vec::new();
        for run in runs {
            let (seed, temp, topk, _) = run;
            let at = rest.find(&format!("; seed {seed}]")).unwrap();
            rest = &rest[at..];
            let a = answer(rest, prompt).to_string();
            rest = &rest[rest.find("tokens/s]").unwrap()..];
            let want = pc(img, run, n, prompt);
            eprintln!("{name} {board} seed {seed} temp {temp} top-k {topk}: {a:?}");
            assert!(!a.trim().is_empty(), "{t}");
            assert!(
                want.ends_with(&a),
                "{name} {board} seed {seed}: the MEGA65 printed\n{a:?}\nssnail chat printed\n{want:?}\n{t}"
            );
            answers.push(a);
        }
        // The gate: the first two runs differ only in the seed, and their answers differ.
        assert_ne!(
            answers[0], answers[1],
            "{name} {board}: another seed, the same text"
        );
    }
}

#[test]
fn llama_samples_on_the_mega65_exactly_as_ssnail_chat_sampler_mega65() {
    let runs = [
        (1, "0.8", 40, "1.15"),
        (2, "0.8", 40, "1.15"),
        (77, "1.5", 5, "1"),
        (4000000000, "0.3", 64, "2.5"),
    ];
    check(&llama(), "llama", "the cat sat on the mat", &runs, 16);
}

#[test]
fn gpt2_samples_on_the_mega65_exactly_as_ssnail_chat_sampler_mega65() {
    let runs = [
        (5, "40", 40, "1.15"),
        (6, "40", 40, "1.15"),
        (9, "0.7", 1, "1"),
        (123, "60", 64, "3"),
    ];
    check(&gpt2(), "gpt2", "Once upon a time", &runs, 16);
}

#[test]
fn sampled_answers_end_at_end_of_text_or_the_full_context_as_ssnail_chat_and_run_stop_stops_them() {
    let img = llama();
    let prompt = "the cat sat on the mat";
    // Context 64 and /n 100: each answer ends with end of text or the full context, on the
    // MEGA65 at the same token and with the same line as ssnail chat.
    let seeds = [3u32, 4, 5, 6, 7, 8];
    let mut keys = "{RETURN}/n 100{RETURN}".to_string();
    for seed in seeds {
        keys += &format!("/reset{{RETURN}}/seed {seed}{{RETURN}}{prompt}{{RETURN}}");
    }
    let t = mega65(&img, 8, &keys, seeds.len());
    let mut rest = t.as_str();
    let mut ends = Vec::new();
    for seed in seeds {
        rest = &rest[rest.find(&format!("; seed {seed}]")).unwrap()..];
        let a = answer(rest, prompt);
        let after =
            &rest[rest.find(&format!("> {prompt}\n")).unwrap() + prompt.len() + 3 + a.len() + 1..];
        let end = after.lines().next().unwrap().to_string();
        let o = Command::new(ssnail_bin())
            .args([
                "chat",
                "--sampler",
                "mega65",
                "--hw",
                "--seed",
                &seed.to_string(),
            ])
            .arg({
                let dir = std::env::temp_dir()
                    .join(format!("ssnail-sampling-{}-{seed}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                let p = dir.join("m.ssnail");
                std::fs::write(&p, &img).unwrap();
                p
            })
            .args(["-n", "100", "-p", prompt])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let out = String::from_utf8(o.stdout).unwrap();
        // After the banner: the echo and the answer (which may hold newlines), then the end line.
        let body = &out[out.find("]\n ").map_or(0, |i| i + 2)..];
        let cut = body.rfind("\n[").unwrap_or(body.len());
        let (text, closing) = (&body[..cut], body[cut..].trim_start_matches('\n'));
        assert!(
            text.ends_with(a),
            "seed {seed}: the MEGA65 printed\n{a:?}\nssnail chat printed\n{out}"
        );
        assert_eq!(
            closing.lines().next().unwrap_or(""),
            end,
            "seed {seed}: {out}\n{t}"
        );
        rest = &rest[rest.find("tokens/s]").unwrap()..];
        ends.push(end);
    }
    assert!(ends.iter().any(|e| e == "[end of text]"), "{ends:?}");
    assert!(
        ends.iter()
            .any(|e| e == "[context full at 64 tokens: /reset to start again]"),
        "{ends:?}"
    );
    // RUN/STOP during a long sampled answer: "[stopped]" after fewer tokens than asked.
    let t = mega65(
        &img,
        8,
        &format!("{{RETURN}}/seed 3{{RETURN}}/penalty 1{{RETURN}}/topk 64{{RETURN}}/temp 9{{RETURN}}/n 100{{RETURN}}{prompt}{{RETURN}}{{WAIT 3}}{{STOP}}"),
        1,
    );
    assert!(t.contains("\n[stopped]\n"), "{t}");
}

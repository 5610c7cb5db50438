//! The MEGA65 program (build/mega65/ssnail.prg, built here with cc65) run in the headless MEGA65
//! (ssnail_mega65) with the SSNAIL device attached, driven by typed keys, compared with the
//! PC tools: the text a greedy `ssnail run` prints, the PC image tokenizer, the load port's
//! checks. The program's transcript is read from the serial-monitor trap ($D643), which gets
//! every character the program prints (the 25-line screen only shows the end).

use ssnail_mega65_program as common;
use ssnail_mega65_program::test_images::{bert, gpt2, image, llama, with_one_weight_byte_flipped};
use ssnail_mega65_program::{
    answer, ovl, prg, prg_code, program_disk, reference, sd_with, soft_core,
};
use ssnail_testkit::images::{with_description, with_mem_needed_mb};

use ssnail_convert::Options;
use ssnail_core::{Board, Machine as Core, NoHost, Numerics, Ssnail};
use ssnail_disk::{FileType, D81};
use ssnail_format::ggml::GgmlType;
use ssnail_mega65::{KeyScript, Machine, StopReason, CPU_HZ};
use ssnail_testkit::llama_vocab;
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_tokenizer::image::{image_memory, tables_only_image};
use ssnail_tokenizer::{AsciiFolder, ImageTables, ImageTokenizer, Vocab};
use std::path::Path;
use std::sync::OnceLock;

#[derive(Default)]
struct Setup {
    d81: Option<Vec<u8>>,
    sd: Option<tempfile::TempDir>,
    /// SSNAIL memory in MiB; None = no SSNAIL core.
    ssnail_mib: Option<usize>,
    /// SSNAIL memory bandwidth (MB/s) when not the default 130.
    bandwidth_mbs: Option<f64>,
    /// A hung core: jobs never finish (ssnail_mega65's fault injection).
    hang: bool,
    /// Drive 0 is a real drive (sectors only under the head) holding `d81`, or empty.
    real_drive: bool,
}

/// Run the program until `until` appears in its transcript (after the last key was typed) or
/// `seconds` of emulated time pass; returns the transcript.
fn run(setup: &Setup, keys: &str, until: &str, seconds: f64) -> String {
    run_n(setup, keys, until, 1, seconds)
}

/// As `run`, until `until` has appeared `times` times.
fn run_n(setup: &Setup, keys: &str, until: &str, times: usize, seconds: f64) -> String {
    let m = run_machine(setup, keys, until, times, seconds);
    String::from_utf8_lossy(&m.serial).into_owned()
}

/// As `run_n`; the machine afterwards.
fn run_machine(setup: &Setup, keys: &str, until: &str, times: usize, seconds: f64) -> Machine {
    let mut m = Machine::new();
    if let Some(mib) = setup.ssnail_mib {
        let mut core = Core::new(mib << 20);
        core.numerics = Numerics::Hardware;
        // As `ssnail mega65 --ssnail-mib`: up to 8 MiB an R3 board (HyperRAM only), more an
        // R4-R6 board (SDRAM at $8000000, HyperRAM at SSNAIL's $C000000), where the CPU sees
        // SDRAM only with $D7FE.4 set (ssnail_mega65::attic).
        let board = if mib <= 8 { Board::R3 } else { Board::R4 };
        m.attach_ssnail(Ssnail::with_board(core, board));
    }
    if let Some(b) = setup.bandwidth_mbs {
        m.ssnail.bandwidth = b * 1e6;
    }
    m.ssnail.hang = setup.hang;
    if setup.real_drive {
        m.mount_real_drive(setup.d81.clone());
    } else if let Some(d) = &setup.d81 {
        m.mount_d81(d.clone());
    }
    if let Some(sd) = &setup.sd {
        m.set_sd_dir(sd.path().to_path_buf());
    } else if setup.d81.is_none() {
        m.set_sd_dir(overlay_only_sd().to_path_buf());
    }
    // Start the program the way the user does: the PRG from the disk when there is one.
    let program = match setup.d81.as_ref().filter(|_| !setup.real_drive) {
        Some(d) => D81::from_bytes(d.clone())
            .unwrap()
            .read_file("ssnail")
            .unwrap(),
        None => prg().to_vec(),
    };
    let (_, entry) = m.load_prg(&program, None).unwrap();
    m.keys.schedule(&KeyScript::parse(keys).unwrap(), 0);
    m.start_at(entry);
    let step = CPU_HZ / 10;
    let mut t = 0.0;
    while t < seconds {
        m.run(step);
        t += 0.1;
        let s = String::from_utf8_lossy(&m.serial);
        if !until.is_empty() && s.matches(until).count() >= times {
            break;
        }
    }
    m
}

/// An SD card with nothing but the program's overlay, for runs without a disk or SD folder.
fn overlay_only_sd() -> &'static Path {
    static SD: OnceLock<tempfile::TempDir> = OnceLock::new();
    SD.get_or_init(|| sd_with(&[])).path()
}

/// The program disk as `make disk` writes it (the PRG twice), with `files`.
fn disk_with(files: &[(&str, &[u8])]) -> Vec<u8> {
    program_disk(prg(), true, files)
}

/// The two boards the e2e tests run on: an R3 (8 MiB of HyperRAM) and an R4-R6 with 72 MiB
/// (SDRAM + HyperRAM), where the program must select SDRAM for the CPU ($D7FE.4) and keep the
/// attic line cache from serving stale tokens.
const BOARDS: [(usize, &str); 2] = [(8, "R3: HyperRAM"), (72, "R4-R6: SDRAM + HyperRAM")];

#[test]
fn llama_from_the_d81_prints_what_ssnail_run_prints() {
    let img = llama();
    let prompt = "the cat sat on the mat";
    for (mib, board) in BOARDS {
        let setup = Setup {
            d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
            sd: None,
            ssnail_mib: Some(mib),
            ..Default::default()
        };
        // All keys typed at once: the ones after RETURN wait in the queue while the model loads.
        let t = run(
            &setup,
            &format!("{{RETURN}}/temp 0{{RETURN}}/n 24{{RETURN}}{prompt}{{RETURN}}"),
            "tokens/s]",
            120.0,
        );
        assert!(t.contains(&format!("MB ({board})")), "{t}");
        assert!(t.contains("Loaded tinyllama.ssnail"), "{board}: {t}");
        // The conversation's banner: the description and the file's name.
        assert!(
            t.contains("\n[TinyLlama (llama) [General]] tinyllama.ssnail\n"),
            "{board}: {t}"
        );
        for l in t
            .lines()
            .filter(|l| l.starts_with("Loaded") || l.contains("tokens/s]"))
        {
            eprintln!("llama, D81, {board}: {l}");
        }
        assert!(t.contains("[24 tokens per answer]"), "{t}");
        assert_eq!(
            answer(&t, prompt),
            reference(&img, prompt, 24),
            "{board}: {t}"
        );
    }
}

/// An image with answer defaults (header $58: greedy, 6 tokens per answer, as `ssnail convert
/// --default-greedy --default-tokens 6` writes them) answers with no /temp or /n typed exactly
/// as `ssnail run --hw` greedy with 6 tokens, and says so under its banner; the sampler's
/// default (temperature 0.8) would choose other tokens.
#[test]
fn an_images_answer_defaults_are_the_programs_without_a_command() {
    let mut img = llama();
    let at = ssnail_format::image::h::ANSWER;
    img[at..at + 4].copy_from_slice(&(ssnail_format::image::ANSWER_GREEDY | 6).to_le_bytes());
    let prompt = "the cat sat on the mat";
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        ssnail_mib: Some(8),
        ..Default::default()
    };
    let t = run(
        &setup,
        &format!("{{RETURN}}{prompt}{{RETURN}}/stats{{RETURN}}"),
        "[answer:",
        120.0,
    );
    assert!(
        t.contains("[this image's defaults: greedy, 6 tokens per answer]"),
        "{t}"
    );
    assert_eq!(answer(&t, prompt), reference(&img, prompt, 6), "{t}");
}

#[test]
fn gpt2_from_the_sd_card_prints_what_ssnail_run_prints() {
    let img = gpt2();
    let prompt = "Once upon a time";
    for (mib, board) in BOARDS {
        let setup = Setup {
            d81: Some(disk_with(&[])),
            sd: Some(sd_with(&[("SSNAIL/TINYGPT.SSNAIL", &img)])),
            ssnail_mib: Some(mib),
            ..Default::default()
        };
        let t = run(
            &setup,
            &format!("{{RETURN}}/temp 0{{RETURN}}/n 20{{RETURN}}{prompt}{{RETURN}}"),
            "tokens/s]",
            120.0,
        );
        let mb = if mib == 8 { 8 } else { 72 };
        assert!(
            t.contains(&format!("SSNAIL core v1 found, {mb} MB ({board})")),
            "{t}"
        );
        assert!(t.contains("Loaded TINYGPT.SSNAIL"), "{board}: {t}");
        for l in t
            .lines()
            .filter(|l| l.starts_with("Loaded") || l.contains("tokens/s]"))
        {
            eprintln!("gpt2, SD, {board}: {l}");
        }
        assert_eq!(
            answer(&t, prompt),
            reference(&img, prompt, 20),
            "{board}: {t}"
        );
    }
}

/// Lines typed on the MEGA65 keyboard for the tokenizer check (printable ASCII, no `{`).
const TYPED_LINES: &[&str] = &[
    "the cat sat on the mat",
    "The Cat Sat On The Mat",
    "once upon a time",
    "Once upon a time, there was a dog.",
    "a",
    "I",
    "it's the cat's toy, isn't it?",
    "we'll see what they've done, I'm sure",
    "DON'T STOP",
    "numbers 1 22 333 4444 55555",
    "3.14159 and 2,718",
    "x=1+2*3/4-5",
    "foo_bar baz_qux __init__",
    "e-mail: a.b@example.com",
    "path/to/file.txt",
    "C:\\dir\\file",
    "(round) [square] <angle>",
    "!!! ??? ...",
    "hello   world",
    "  leading",
    "trailing  ",
    "many    spaces    here",
    "mixed123abc 4you",
    "quotes \"x\" and 'y'",
    "#tag @who $5 50% ^ & * ~ `",
    "the the the the",
    "cats dogs and mice",
    "running jumped playing",
    "happy sad angry",
    "The quick brown fox jumps over the lazy dog",
    "sunny day in the park",
    "tree house on the hill",
    "what is this?",
    "where are you going",
    "Yes. No. Maybe.",
    "one, two, three",
    "a-b-c-d",
    "semi;colon:colon",
    "CamelCaseWords",
    "lower upper LOWER UPPER",
    "zzz qqq xxx",
    "antidisestablishmentarianism",
    "supercalifragilistic",
    "ab cd ef gh ij kl",
    "tab-free line with end.",
    "the end",
    "once",
    "upon",
    "time time time",
    "little girl named lily",
    "big red ball",
    "-5 +7 =2",
    "spaces  42 before   2024 digits",
];

fn tokens_on_the_mega65(img: &[u8], lines: &[&str]) -> Vec<String> {
    let setup = Setup {
        d81: Some(disk_with(&[])),
        sd: Some(sd_with(&[("MODEL.SSNAIL", img)])),
        ssnail_mib: Some(64),
        ..Default::default()
    };
    let mut keys = String::from("{RETURN}");
    for l in lines {
        keys.push_str(&format!("/tokens {l}{{RETURN}}"));
    }
    keys.push_str("/stats{RETURN}");
    let t = run(&setup, &keys, "[core: ", 600.0);
    lines
        .iter()
        .map(|l| {
            let echo = format!("> /tokens {l}\n");
            let at = t
                .find(&echo)
                .unwrap_or_else(|| panic!("{l:?} not typed:\n{t}"))
                + echo.len();
            t[at..].lines().next().unwrap().to_string()
        })
        .collect()
}

/// A typed line may fill the 150-byte buffer: it wraps over screen rows, DEL goes back across
/// the wrap, and TAB is typed text. The ids /tokens prints for it are the PC tokenizer's.
#[test]
fn typed_lines_wrap_up_to_the_buffer_with_del_across_the_wrap_and_tab_as_text() {
    let img = gpt2();
    let setup = Setup {
        d81: Some(disk_with(&[])),
        sd: Some(sd_with(&[("MODEL.SSNAIL", &img)])),
        ssnail_mib: Some(72),
        ..Default::default()
    };
    // "> /tokens " takes 10 columns: 80 more characters end on the second row at column 10;
    // 15 DELs go back to column 75 of the first row.
    let typed: String = (0..80).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let keys = format!(
        "{{RETURN}}/tokens {typed}{}xyz{{TAB}}end of the line{{RETURN}}",
        "{DEL}".repeat(15)
    );
    let text = format!("{}xyz\tend of the line", &typed[..65]);
    let t = run(&setup, &keys, "]\n> ", 60.0);
    let echo = format!("> /tokens {text}\n");
    let at = t
        .find(&echo)
        .unwrap_or_else(|| panic!("{text:?} not typed:\n{t}"))
        + echo.len();
    let mem = image_memory(&img).unwrap();
    let want = ImageTokenizer::new(&mem).unwrap().encode(&text, true);
    let want = format!(
        "[{}]",
        want.iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    assert_eq!(t[at..].lines().next().unwrap(), want, "{t}");
    assert!(text.len() + 8 > 80, "the line is longer than a row");
}

fn check_tokenizer(img: &[u8]) {
    assert!(TYPED_LINES.len() >= 50);
    let mem = image_memory(img).unwrap();
    let tok = ImageTokenizer::new(&mem).unwrap();
    let got = tokens_on_the_mega65(img, TYPED_LINES);
    for (line, got) in TYPED_LINES.iter().zip(got) {
        let want: Vec<String> = tok
            .encode(line, true)
            .iter()
            .map(|t| t.to_string())
            .collect();
        assert_eq!(got, format!("[{}]", want.join(",")), "{line:?}");
    }
}

#[test]
fn mega65_tokenizer_equals_the_pc_image_tokenizer_spm() {
    check_tokenizer(&llama());
}

#[test]
fn mega65_tokenizer_equals_the_pc_image_tokenizer_bpe() {
    check_tokenizer(&gpt2());
}

#[test]
fn mega65_tokenizer_equals_the_pc_image_tokenizer_wordpiece() {
    check_tokenizer(&bert());
}

/// An image file with only a header and the tokenizer tables of a real vocabulary (the program
/// loads it like any image; `/tokens` needs nothing else).
fn tables_image(gguf: &Path) -> Vec<u8> {
    let g = ssnail_gguf::Gguf::open(gguf).unwrap();
    tables_only_image(&ImageTables::build(&Vocab::from_gguf(&g).unwrap()))
}

/// The real vocabularies (32,000-50,257 tokens) exercise the 45GS02 search (tokfind.s) on deep
/// indices, long tokens and 32-bit table addresses, which the PC build of the C does not run.
#[test]
fn mega65_tokenizer_equals_the_pc_image_tokenizer_on_real_vocabularies() {
    for v in ["llama-spm", "gpt-2", "bert-bge"] {
        check_tokenizer(&tables_image(&llama_vocab::gguf(v)));
    }
}

/// SmolLM2's vocabulary: digits-first pre-tokenizer (fix 4), read from the tables on the MEGA65.
#[test]
fn mega65_tokenizer_equals_the_pc_image_tokenizer_on_smollm2() {
    let p = ssnail_testkit::cache::require(ssnail_testkit::cache::SMOLLM2);
    check_tokenizer(&tables_image(&p));
}

#[test]
fn bert_shows_the_three_most_similar_earlier_lines_with_their_cosine() {
    let img = bert();
    let lines = [
        "the cat sat",
        "the dog ran",
        "a happy cat",
        "the cat sat on the mat",
        "dogs run",
    ];
    let setup = Setup {
        d81: Some(disk_with(&[("tinybert.ssnail", &img)])),
        sd: None,
        ssnail_mib: Some(64),
        ..Default::default()
    };
    let mut keys = String::from("{RETURN}");
    for l in lines {
        keys.push_str(&format!("{l}{{RETURN}}"));
    }
    keys.push_str("/stats{RETURN}");
    let t = run(&setup, &keys, "[lines kept: ", 120.0);
    assert!(t.contains("[bert encoder, context 32"), "{t}");
    // PC reference: the core emulator's embeddings, unit length, dot products in f64.
    let (mut dev, _) = Ssnail::load_bytes(&img, None).unwrap();
    dev.machine.numerics = Numerics::Hardware;
    let mem = image_memory(&img).unwrap();
    let tok = ImageTokenizer::new(&mem).unwrap();
    let mut stored: Vec<(String, Vec<f64>)> = Vec::new();
    let mut worst = 0f64;
    for l in lines {
        let e = dev.encode(&tok.encode(l, true), &mut NoHost).unwrap();
        let norm = e
            .output
            .iter()
            .map(|&x| x as f64 * x as f64)
            .sum::<f64>()
            .sqrt();
        let v: Vec<f64> = e.output.iter().map(|&x| x as f64 / norm).collect();
        let echo = format!("> {l}\n");
        let at = t.find(&echo).unwrap_or_else(|| panic!("{l:?}:\n{t}")) + echo.len();
        let shown: Vec<&str> = t[at..]
            .lines()
            .take_while(|x| x.starts_with("  "))
            .filter(|x| !x.contains(" embedded in "))
            .collect();
        if stored.is_empty() {
            assert_eq!(
                shown,
                vec![format!("  [{}-dimensional embedding stored]", v.len())]
            );
        } else {
            let mut want: Vec<(f64, &str)> = stored
                .iter()
                .map(|(s, w)| (v.iter().zip(w).map(|(a, b)| a * b).sum::<f64>(), s.as_str()))
                .collect();
            want.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap().then(b.1.cmp(a.1)));
            assert_eq!(shown.len(), want.len().min(3), "{t}");
            let third = want[shown.len() - 1].0;
            let mut previous = f64::INFINITY;
            for line in &shown {
                // "  +0.873  text": integer unit vectors on the MEGA65 (cosine.c), stated
                // precision 0.005. Lines whose PC scores are that close may swap places.
                let (num, text) = line.trim_start().split_once("  ").unwrap();
                let score = want.iter().find(|w| w.1 == text).unwrap().0;
                let got: f64 = num.parse().unwrap();
                assert!((got - score).abs() <= 0.005, "{line}: PC {score:.4}\n{t}");
                assert!(score >= third - 0.01, "{line} is not among the top 3\n{t}");
                assert!(got <= previous, "{line}: not in order\n{t}");
                previous = got;
                worst = worst.max((got - score).abs());
            }
        }
        stored.push((l.to_string(), v));
    }
    eprintln!("largest cosine difference MEGA65 vs PC: {worst:.4}");
}

/// Every bad image gives its message and the program goes on: the last, good one still loads.
#[test]
fn bad_images_give_clear_messages_and_the_program_keeps_working() {
    let good = gpt2();
    let mut bad_magic = good.clone();
    bad_magic[0..4].copy_from_slice(b"XXXX");
    let truncated = good[..good.len() - 1000].to_vec();
    let mut too_big = good.clone();
    too_big[0x38..0x3C].copy_from_slice(&(100u32 << 20).to_le_bytes());
    let setup = Setup {
        d81: Some(disk_with(&[(
            "short.ssnail",
            &truncated[..truncated.len() / 2],
        )])),
        sd: Some(sd_with(&[
            ("A_MAGIC.SSNAIL", &bad_magic),
            ("B_BIG.SSNAIL", &too_big),
            ("C_TRUNC.SSNAIL", &truncated),
            ("SSNAIL/D_GOOD.SSNAIL", &good),
        ])),
        ssnail_mib: Some(64),
        ..Default::default()
    };
    // List order: SD root (sorted), SD /SSNAIL, D81. Try each from the top, the good one last.
    let keys = "{UP}{UP}{UP}{UP}{UP}{RETURN}{DOWN}{RETURN}{DOWN}{RETURN}{DOWN}{DOWN}{RETURN}\
                {UP}{RETURN}/stats{RETURN}";
    let t = run(&setup, keys, "[pos ", 120.0);
    assert!(
        t.contains("A_MAGIC.SSNAIL: not an SSNAIL image (no SSNL magic)"),
        "{t}"
    );
    assert!(
        t.contains("B_BIG.SSNAIL: needs 100 MB, this board has 72 MB"),
        "{t}"
    );
    let (n, h) = (truncated.len(), good.len() - 256);
    assert!(
        t.contains(&format!(
            "C_TRUNC.SSNAIL: file is {n} bytes, header says 256 + {h}: truncated"
        )),
        "{t}"
    );
    assert!(t.contains("short.ssnail: file is "), "{t}");
    assert!(t.contains("Loaded D_GOOD.SSNAIL"), "{t}");
    assert!(t.contains("[pos 0 of 64"), "{t}");
}

#[test]
fn a_load_port_error_is_reported_and_the_program_keeps_working() {
    // 1 MiB of SSNAIL memory behind a core that reports the R4-R6 capabilities: the payload runs
    // past the end, the port sets ERROR.
    let big = image(ModelOpts::llama().with_wtype(GgmlType::Q8_0), 64);
    assert!(big.len() > 1 << 20);
    let setup = Setup {
        d81: Some(disk_with(&[])),
        sd: Some(sd_with(&[("BIG.SSNAIL", &big)])),
        ssnail_mib: Some(1),
        ..Default::default()
    };
    let t = run_n(&setup, "{RETURN}{WAIT 5}r", "RETURN: load", 2, 120.0);
    assert!(t.contains("BIG.SSNAIL: load port reported ERROR"), "{t}");
    assert_eq!(t.matches("Looking for models").count(), 2, "{t}");
}

#[test]
fn without_the_ssnail_core_the_program_says_so_and_still_lists_models() {
    let img = llama();
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        sd: None,
        ssnail_mib: None,
        ..Default::default()
    };
    let t = run_n(&setup, "{RETURN}{WAIT 1}r", "RETURN: load", 2, 30.0);
    assert!(
        t.contains("SSNAIL core not found: $FFD7500 reads $ff, expected $53."),
        "{t}"
    );
    assert!(t.contains("tinyllama.ssnail"), "{t}");
    assert!(
        t.contains("tinyllama.ssnail: no SSNAIL core, cannot load"),
        "{t}"
    );
    assert_eq!(t.matches("Looking for models").count(), 2, "{t}");
    // The browser's verdict says why, instead of calling every model too big.
    let row = t
        .lines()
        .find(|l| l.starts_with("tinyllama.ssnail "))
        .unwrap();
    assert!(row.ends_with("MB  no core"), "{row}");
    assert!(row.len() <= 80, "one screen row: {row}");
    assert!(!t.contains("too big"), "{t}");
}

/// /quit (and Q in the browser) gives the machine back to BASIC: the program restores what it
/// changed and returns from BASIC's SYS. In the headless MEGA65 that RTS lands in the KERNAL-area
/// stub that ends the run with status 0, which needs the SYS map (KERNAL at $E000), BASIC's stack
/// and B back; the registers and screen are checked against the state RUN left.
#[test]
fn quit_restores_the_machine_and_returns_to_basic() {
    let img = llama();
    for keys in ["{RETURN}/quit{RETURN}", "{WAIT 1}q"] {
        let mut m = Machine::new();
        let io = |m: &mut Machine, r: u32| m.read_phys(0xFFD_3000 + r);
        let before: Vec<u8> = [
            0x20, 0x21, 0x30, 0x31, 0x54, 0x58, 0x5E, 0x60, 0x61, 0x68, 0x69, 0x6A, 0x7B,
        ]
        .iter()
        .map(|&r| io(&mut m, r))
        .collect();
        let screen = m.peek_phys(0x800, 2000);
        let colours = m.peek_phys(0xFF8_0000, 2000);
        let port = m.read_phys(1);
        let mut core = Core::new(72 << 20);
        core.numerics = Numerics::Hardware;
        m.attach_ssnail(Ssnail::new(core));
        m.mount_d81(disk_with(&[("tinyllama.ssnail", &img)]));
        let (_, entry) = m.load_prg(prg(), None).unwrap();
        m.keys.schedule(&KeyScript::parse(keys).unwrap(), 0);
        m.start_at(entry);
        let mut reason = StopReason::Budget;
        for _ in 0..300 {
            reason = m.run(CPU_HZ / 10);
            if reason != StopReason::Budget {
                break;
            }
        }
        let t = String::from_utf8_lossy(&m.serial).into_owned();
        assert_eq!(reason, StopReason::Exit(0), "{keys}: {t}");
        let after: Vec<u8> = [
            0x20, 0x21, 0x30, 0x31, 0x54, 0x58, 0x5E, 0x60, 0x61, 0x68, 0x69, 0x6A, 0x7B,
        ]
        .iter()
        .map(|&r| io(&mut m, r))
        .collect();
        assert_eq!(after, before, "{keys}: VIC-IV and speed registers");
        assert_eq!(m.read_phys(1), port, "{keys}: $01");
        assert_eq!(m.peek_phys(0x800, 2000), screen, "{keys}: the screen");
        assert_eq!(m.peek_phys(0xFF8_0000, 2000), colours, "{keys}: colour RAM");
        assert_eq!(m.read_phys(0xFFD_37FE), 0x04, "{keys}: $D7FE as at reset");
    }
}

/// The key help after loading and after /help: every line fits the 80-column screen, so none is
/// broken in the middle of a word; /quit is listed.
#[test]
fn the_help_lines_fit_the_80_column_screen() {
    let img = llama();
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        ssnail_mib: Some(72),
        ..Default::default()
    };
    let t = run(&setup, "{RETURN}/help{RETURN}", "> /help\n", 60.0);
    let help: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with('/') || l.starts_with("RUN/STOP"))
        .collect();
    assert!(help.len() >= 3, "{t}");
    for l in &help {
        assert!(l.len() <= 80, "{} characters: {l}", l.len());
    }
    assert!(help.iter().any(|l| l.contains("/quit")), "{t}");
}

/// A job that never finishes (a hung core, injected) does not hang the program: after 30 s it
/// says how to stop it, and when RUN/STOP does not end it either, it says so and goes back to the
/// model list.
#[test]
fn a_job_that_stays_busy_gives_a_message_and_a_way_back_to_the_list() {
    let img = llama();
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        ssnail_mib: Some(72),
        hang: true,
        ..Default::default()
    };
    let t = run_n(
        &setup,
        "{RETURN}the cat{RETURN}{WAIT 32}{STOP}",
        "Looking for models",
        2,
        60.0,
    );
    assert!(
        t.contains("[SSNAIL busy 30 s without a result: RUN/STOP stops it]"),
        "{t}"
    );
    let gave_up = t
        .find("[SSNAIL did not stop: the core hangs. Back to the model list;")
        .unwrap_or_else(|| panic!("{t}"));
    assert!(t[gave_up..].contains("Looking for models"), "{t}");
}

#[test]
fn flipping_one_weight_byte_changes_the_screen_output() {
    let img = llama();
    let prompt = "the cat";
    let original = reference(&img, prompt, 16);
    // A byte in the middle of the weights whose flip changes the greedy text on the PC.
    let flipped = with_one_weight_byte_flipped(&img, |f| reference(f, prompt, 16) != original);
    let flipped_text = reference(&flipped, prompt, 16);
    let keys = format!("{{RETURN}}/temp 0{{RETURN}}/n 16{{RETURN}}{prompt}{{RETURN}}");
    let on = |img: &[u8]| {
        let setup = Setup {
            d81: Some(disk_with(&[("m.ssnail", img)])),
            sd: None,
            ssnail_mib: Some(64),
            ..Default::default()
        };
        run(&setup, &keys, "tokens/s]", 120.0)
    };
    let (a, b) = (on(&img), on(&flipped));
    assert_eq!(answer(&a, prompt), original);
    assert_eq!(answer(&b, prompt), flipped_text);
    assert_ne!(answer(&a, prompt), answer(&b, prompt));
}

fn reference_turns(img: &[u8], turns: &[(&str, u32)]) -> Vec<(String, u32)> {
    let mem = image_memory(img).unwrap();
    let tok = ImageTokenizer::new(&mem).unwrap();
    let (mut dev, _) = Ssnail::load_bytes(img, None).unwrap();
    dev.machine.numerics = Numerics::Hardware;
    let mut out = Vec::new();
    for (i, (prompt, n)) in turns.iter().enumerate() {
        let g = if i == 0 {
            dev.generate(&tok.encode(prompt, true), *n, &mut NoHost)
                .unwrap()
        } else {
            dev.continue_generation(&tok.encode(prompt, false), *n, &mut NoHost)
                .unwrap()
        };
        let mut text = String::new();
        let mut f = AsciiFolder::new();
        for t in g.tokens {
            f.push(&dev.vocab_piece(t), &mut text);
        }
        out.push((text, g.stop_reason));
    }
    out
}

#[test]
fn turns_continue_the_context_until_it_is_full_then_reset_starts_again() {
    let img = gpt2();
    let turns = [
        ("Once upon a time", 12),
        (" the dog", 12),
        ("", 10),
        (" and then", 60),
    ];
    let want = reference_turns(&img, &turns);
    assert_eq!(want[3].1, 3, "the last turn must fill the 64-token context");
    let setup = Setup {
        d81: Some(disk_with(&[("tinygpt.ssnail", &img)])),
        ssnail_mib: Some(64),
        ..Default::default()
    };
    let mut keys = String::from("{RETURN}");
    for (p, n) in turns {
        keys.push_str(&format!("/n {n}{{RETURN}}{p}{{RETURN}}"));
    }
    keys.push_str(
        "/reset{RETURN}/temp 0{RETURN}/n 12{RETURN}Once upon a time{RETURN}/models{RETURN}{RETURN}",
    );
    let t = run_n(&setup, &keys, "Loaded", 2, 120.0);
    for (i, (p, _)) in turns.iter().enumerate() {
        let at = t.find(&format!("> {p}\n")).unwrap();
        assert_eq!(answer(&t[at..], p), want[i].0, "turn {i}:\n{t}");
    }
    assert!(
        t.contains("[context full at 64 tokens: /reset to start again]"),
        "{t}"
    );
    assert!(t.contains("[context cleared]"), "{t}");
    let last = t.rfind("> Once upon a time\n").unwrap();
    assert_eq!(answer(&t[last..], "Once upon a time"), want[0].0, "{t}");
    // /models goes back to the list; RETURN loads the model again.
    assert!(t[last..].contains("Looking for models"), "{t}");
}

#[test]
fn run_stop_ends_an_answer_early() {
    let img = llama();
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        ssnail_mib: Some(64),
        // Slow memory so that the answer takes seconds of emulated time.
        bandwidth_mbs: Some(2.0),
        ..Default::default()
    };
    let t = run(
        &setup,
        // (the load ends about 4 s in: the program reads its overlay first)
        "{RETURN}/temp 0{RETURN}/n 60{RETURN}the cat{RETURN}{WAIT 5}{STOP}",
        "tokens/s]",
        300.0,
    );
    assert!(t.contains("[stopped]"), "{t}");
    let stats = &t[t.rfind("[answer: ").unwrap() + 9..];
    let n: u32 = stats.split_whitespace().next().unwrap().parse().unwrap();
    assert!(n > 0 && n < 60, "{t}");
    // What was printed is the start of the full answer.
    let full = reference(&img, "the cat", 60);
    assert!(full.starts_with(answer(&t, "the cat")), "{t}");
}

/// RUN/STOP typed after other keys (type-ahead) still stops the answer: the program reads the
/// RUN/STOP key in the keyboard matrix ($D613/$D614), not only at the head of the $D610 queue;
/// the keys typed before it are the next line.
#[test]
fn run_stop_stops_an_answer_even_behind_typed_ahead_keys_which_are_kept() {
    let img = llama();
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        ssnail_mib: Some(72),
        bandwidth_mbs: Some(2.0),
        ..Default::default()
    };
    let t = run(
        &setup,
        "{RETURN}/temp 0{RETURN}/n 60{RETURN}the cat{RETURN}{WAIT 4}the dog{WAIT 1}{STOP}{WAIT 1}{RETURN}",
        "> the dog\n",
        300.0,
    );
    let first = &t[t.find("> the cat\n").unwrap_or_else(|| panic!("{t}"))..];
    let first = &first[..first.find("> the dog\n").unwrap_or_else(|| panic!("{t}"))];
    assert!(first.contains("[stopped]"), "{t}");
    let stats = &first[first.rfind("[answer: ").unwrap() + 9..];
    let n: u32 = stats.split_whitespace().next().unwrap().parse().unwrap();
    assert!(n > 0 && n < 60, "{t}");
}

/// A real floppy drive finds a sector only under the head (mega65-core mfm_decoder.vhdl: the
/// track in the sector header must equal $D084), so the program steps the head to the track
/// (from track 0, found by stepping out until TK0) before each read. With the previous program
/// the directory on track 40 was never found.
#[test]
fn from_a_real_drive_the_program_seeks_the_track_and_loads_the_model() {
    let img = llama();
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        ssnail_mib: Some(72),
        real_drive: true,
        ..Default::default()
    };
    let prompt = "the cat sat on the mat";
    let t = run(
        &setup,
        &format!("{{RETURN}}/temp 0{{RETURN}}/n 4{{RETURN}}{prompt}{{RETURN}}"),
        "tokens/s]",
        120.0,
    );
    assert!(t.contains("Loaded tinyllama.ssnail"), "{t}");
    assert_eq!(answer(&t, prompt), reference(&img, prompt, 4), "{t}");
}

/// No disk: an empty image drive says so at once (DSKIN = 0); an empty real drive after its
/// ~2.5 s read timeout (RNF); either way the SD card's models are listed.
#[test]
fn without_a_disk_the_browser_says_so_and_lists_the_sd_card() {
    let img = gpt2();
    for (real_drive, note) in [
        (false, "; no disk in drive 0"),
        (true, "; disk in drive 0 unreadable"),
    ] {
        let setup = Setup {
            sd: Some(sd_with(&[("SSNAIL/TINYGPT.SSNAIL", &img)])),
            ssnail_mib: Some(72),
            real_drive,
            ..Default::default()
        };
        let t = run(&setup, "", "RETURN: load", 30.0);
        let row = t
            .lines()
            .find(|l| l.starts_with("1 model"))
            .unwrap_or_else(|| panic!("{t}"));
        assert_eq!(row, format!("1 model{note}"), "{t}");
        assert!(t.contains("TINYGPT.SSNAIL "), "{t}");
    }
}

/// An encoder session keeps the last 16 lines to compare with and says so when the 17th comes.
#[test]
fn an_encoder_session_says_how_many_lines_it_keeps() {
    let img = bert();
    let setup = Setup {
        d81: Some(disk_with(&[("tinybert.ssnail", &img)])),
        ssnail_mib: Some(72),
        ..Default::default()
    };
    let mut keys = String::from("{RETURN}");
    for i in 0..18 {
        keys.push_str(&format!("line {i}{{RETURN}}"));
    }
    let t = run(&setup, &keys, "> line 17\n", 120.0);
    let note = "  [the last 16 lines are kept: each new one replaces the oldest]";
    assert_eq!(t.matches(note).count(), 1, "{t}");
    let at = t.find(note).unwrap();
    assert!(
        t[..at].contains("> line 16\n") && !t[..at].contains("> line 17"),
        "{t}"
    );
}

/// RUN/STOP during an SD load (the loader checks it between its 16-sector batches) stops the
/// load with its message; the program goes on and loads the image in full on the next RETURN.
#[test]
fn run_stop_stops_a_load_and_the_next_load_completes() {
    let img = tables_image(&llama_vocab::gguf("gpt-2"));
    let setup = Setup {
        d81: Some(disk_with(&[])),
        sd: Some(sd_with(&[("MODEL.SSNAIL", &img)])),
        ssnail_mib: Some(64),
        ..Default::default()
    };
    let t = run(
        &setup,
        "{RETURN}{WAIT 0.2}{STOP}{WAIT 1}{RETURN}",
        "Loaded MODEL.SSNAIL",
        60.0,
    );
    let stopped = t
        .find("MODEL.SSNAIL: load stopped (RUN/STOP)")
        .unwrap_or_else(|| panic!("{t}"));
    let loaded = t
        .find("Loaded MODEL.SSNAIL")
        .unwrap_or_else(|| panic!("{t}"));
    assert!(stopped < loaded, "{t}");
    assert!(
        t.contains(&format!("Loaded MODEL.SSNAIL: {} bytes", img.len())),
        "{t}"
    );
}

#[test]
fn config_txt_chooses_the_default_model() {
    let small = gpt2();
    let large = llama();
    let sd = |config: Option<&str>| {
        let mut files: Vec<(&str, &[u8])> =
            vec![("SMALL.SSNAIL", &small), ("LARGE.SSNAIL", &large)];
        if let Some(c) = config {
            files.push(("SSNAIL/CONFIG.TXT", c.as_bytes()));
        }
        Setup {
            d81: Some(disk_with(&[])),
            sd: Some(sd_with(&files)),
            ssnail_mib: Some(64),
            ..Default::default()
        }
    };
    let needed = |img: &[u8]| u32::from_le_bytes(img[0x38..0x3C].try_into().unwrap());
    let (biggest, other) = if needed(&small) > needed(&large) {
        ("SMALL.SSNAIL", "LARGE.SSNAIL")
    } else {
        ("LARGE.SSNAIL", "SMALL.SSNAIL")
    };
    // CONFIG.TXT's first line names the default. (The runs stop at the whole "Loaded NAME":
    // stopping at "Loaded" could catch the line half printed.)
    let t = run(
        &sd(Some(&format!("{other}\r\nignored\n"))),
        "{RETURN}",
        &format!("Loaded {other}"),
        60.0,
    );
    assert!(t.contains(&format!("Loaded {other}")), "{t}");
    // Without CONFIG.TXT: the one needing the most memory that fits.
    let t = run(&sd(None), "{RETURN}", &format!("Loaded {biggest}"), 60.0);
    assert!(t.contains(&format!("Loaded {biggest}")), "{t}");
}

/// With a CONFIG.TXT default the program loads it by itself after a 5-second countdown (so
/// AUTOBOOT.C65 can start a model unattended); any key stops the countdown and leaves the
/// choice to the user.
#[test]
fn config_txt_loads_its_model_after_a_countdown_that_any_key_cancels() {
    let img = gpt2();
    let setup = || Setup {
        sd: Some(sd_with(&[
            ("SSNAIL/A.SSNAIL", &img),
            ("SSNAIL/B.SSNAIL", &img),
            ("SSNAIL/CONFIG.TXT", b"b.ssnail\n"),
        ])),
        ssnail_mib: Some(72),
        ..Default::default()
    };
    let t = run(&setup(), "", "Loaded", 20.0);
    assert!(
        t.contains("Loading B.SSNAIL in 5 s (CONFIG.TXT): any key to choose"),
        "{t}"
    );
    assert!(t.contains("Loaded B.SSNAIL"), "{t}");
    let t = run(&setup(), "{WAIT 1}{UP}", "Loaded", 10.0);
    assert!(!t.contains("Loaded"), "{t}");
    assert!(t.contains("Loading B.SSNAIL in 5 s"), "{t}");
}

/// Seconds from GO to the end of the answer to `prompt`: the prompt's ("[prompt: N tokens in S s
/// (R tokens/s)]") and the answer's after its first token ("[answer: N tokens, M after the first
/// in S s, R tokens/s]").
fn answer_seconds(t: &str, prompt: &str) -> f64 {
    let at = t.find(&format!("> {prompt}\n")).unwrap();
    let secs = |start: &str| -> f64 {
        let line = t[at..].lines().find(|l| l.starts_with(start)).unwrap();
        let s = line.split(" in ").nth(1).unwrap();
        s[..s.find(" s").unwrap()].parse().unwrap()
    };
    secs("[prompt: ") + secs("[answer: ")
}

#[test]
fn tokens_per_second_follow_the_ssnail_memory_bandwidth() {
    let img = gpt2();
    let time_at = |mbs: f64| {
        let setup = Setup {
            d81: Some(disk_with(&[("tinygpt.ssnail", &img)])),
            ssnail_mib: Some(64),
            bandwidth_mbs: Some(mbs),
            ..Default::default()
        };
        let t = run(
            &setup,
            "{RETURN}/temp 0{RETURN}/n 20{RETURN}Once upon a time{RETURN}",
            "tokens/s]",
            120.0,
        );
        answer_seconds(&t, "Once upon a time")
    };
    let (fast, slow) = (time_at(100.0), time_at(10.0));
    // The CIA timer measures emulated time: 10x less bandwidth, close to 10x longer answers.
    let ratio = slow / fast;
    assert!(
        (8.0..=10.5).contains(&ratio),
        "{fast} s at 100 MB/s, {slow} s at 10 MB/s"
    );
}

#[test]
fn an_r3_board_offers_8_mb_and_marks_bigger_images_too_big() {
    let img = gpt2();
    let mut big = img.clone();
    big[0x38..0x3C].copy_from_slice(&(9u32 << 20).to_le_bytes());
    let mut m = Machine::new();
    let mut core = Core::new(8 << 20);
    core.numerics = Numerics::Hardware;
    m.attach_ssnail(Ssnail::with_board(core, ssnail_core::Board::R3));
    let sd = sd_with(&[("A_NINE.SSNAIL", &big), ("B_SMALL.SSNAIL", &img)]);
    m.set_sd_dir(sd.path().to_path_buf());
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys
        .schedule(&KeyScript::parse("{UP}{RETURN}{DOWN}{RETURN}").unwrap(), 0);
    m.start_at(entry);
    m.run(CPU_HZ * 20);
    let t = String::from_utf8_lossy(&m.serial);
    assert!(
        t.contains("SSNAIL core v1 found, 8 MB (R3: HyperRAM)"),
        "{t}"
    );
    assert!(t.contains("needs   9 MB  too big"), "{t}");
    assert!(
        t.contains("A_NINE.SSNAIL: needs 9 MB, this board has 8 MB"),
        "{t}"
    );
    assert!(t.contains("Loaded B_SMALL.SSNAIL"), "{t}");
}

/// Start of the HyperRAM on R4-R6 boards: 64 MiB above SSNAIL's memory base.
const HYPERRAM_START: u32 = 0xC00_0000;

/// A 72 MB-layout image (the payload runs past $C000000, so the converter moves the matrix that
/// would straddle it to start exactly there), built once per test run: an F32 llama of five
/// 13 MiB layers, about 67 MB.
fn image_72mb() -> &'static [u8] {
    static IMG: OnceLock<Vec<u8>> = OnceLock::new();
    IMG.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.gguf");
        let opts = ModelOpts {
            dim: 512,
            n_layers: 5,
            hidden: 1728,
            ..ModelOpts::llama()
        };
        models::write(&path, &models::build(&opts.with_name("Big72")));
        let g = ssnail_gguf::Gguf::open(&path).unwrap();
        let o = Options {
            ctx: Some(64),
            mem_mb: 72.0,
            ..Options::default()
        };
        let plan = ssnail_convert::plan(&g, &o).unwrap();
        // The layout moved a blob: the one before it ends short of the boundary (more than
        // the 32-byte alignment) and this one starts exactly on it.
        let blobs = &plan.layout.blobs;
        let at = blobs
            .iter()
            .position(|b| b.addr == HYPERRAM_START)
            .expect("a blob starts at $C000000");
        let before = &blobs[at - 1];
        let gap = HYPERRAM_START as u64 - (before.addr as u64 + before.len as u64);
        assert!(gap >= 32, "{} was not moved (gap {gap})", blobs[at].name);
        eprintln!(
            "72 MB layout: {} ({} bytes) moved to $C000000, {gap} bytes of padding",
            blobs[at].name, blobs[at].len
        );
        let image = plan.build(&|_| {}).image;
        let h = ssnail_format::image::Header::parse(&image).unwrap();
        assert!(h.mem_needed > 64 << 20 && h.mem_needed <= 72 << 20);
        image
    })
}

/// The 72 MB-layout image from the SD card, the program started from the D81: it loads on a
/// 72 MB board (the bytes past $C000000 land in the HyperRAM part) and answers exactly as the
/// core emulator does; an R3 board (8 MB) refuses it before loading.
#[test]
fn a_72_mb_layout_image_loads_from_the_sd_card_on_a_72_mb_board() {
    let img = image_72mb();
    let setup = Setup {
        d81: Some(disk_with(&[])),
        sd: Some(sd_with(&[("SSNAIL/BIG72.SSNAIL", img)])),
        ssnail_mib: Some(72),
        ..Default::default()
    };
    let prompt = "the cat sat";
    let t = run(
        &setup,
        &format!("{{RETURN}}/temp 0{{RETURN}}/n 4{{RETURN}}{prompt}{{RETURN}}"),
        "tokens/s]",
        200.0,
    );
    assert!(t.contains("SSNAIL core v1 found, 72 MB"), "{t}");
    assert!(
        t.contains(&format!("Loaded BIG72.SSNAIL: {} bytes", img.len())),
        "{t}"
    );
    for l in t
        .lines()
        .filter(|l| l.starts_with("Loaded") || l.contains("tokens/s]"))
    {
        eprintln!("72 MB layout, SD: {l}");
    }
    assert_eq!(answer(&t, prompt), reference(img, prompt, 4), "{t}");

    // R3: the same file is refused with the size check, before any byte is loaded.
    let mut m = Machine::new();
    m.attach_ssnail(Ssnail::with_board(
        Core::new(8 << 20),
        ssnail_core::Board::R3,
    ));
    let sd = sd_with(&[("SSNAIL/BIG72.SSNAIL", img)]);
    m.set_sd_dir(sd.path().to_path_buf());
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys.schedule(&KeyScript::parse("{RETURN}").unwrap(), 0);
    m.start_at(entry);
    m.run(CPU_HZ * 5);
    let t = String::from_utf8_lossy(&m.serial);
    let needs =
        (ssnail_format::image::Header::parse(img).unwrap().mem_needed + (1 << 20) - 1) >> 20;
    assert!(
        t.contains(&format!(
            "BIG72.SSNAIL: needs {needs} MB, this board has 8 MB"
        )),
        "{t}"
    );
    assert!(!t.contains("Loaded"), "{t}");
}

/// `img` with another description and `mem_needed` in MB.
fn described(img: &[u8], desc: &str, mem_mb: u32) -> Vec<u8> {
    with_mem_needed_mb(&with_description(img, desc), mem_mb)
}

/// The browser finds an `Ssnail` folder in any letter case, lists any number of models (here 23,
/// more than the 16 it used to keep), starts on the CONFIG.TXT default even past the 16th (the
/// file named in any case, config.txt too), pages with the left/right keys, shows a long name
/// shortened instead of skipping it, and skips macOS "._" files, saying how many.
#[test]
fn the_browser_scans_any_case_pages_through_many_models_and_says_what_it_left_out() {
    let img = gpt2();
    let long = "a-model-with-a-name-longer-than-the-column.ssnail";
    let mut files: Vec<(String, Vec<u8>)> = (0..22)
        .map(|i| {
            let desc = format!("Model {i}");
            (format!("Ssnail/M{i:02}.SSNAIL"), described(&img, &desc, 1))
        })
        .collect();
    files.push((format!("Ssnail/{long}"), described(&img, "Long", 1)));
    files.push(("Ssnail/._M00.SSNAIL".into(), vec![0; 4096]));
    files.push(("Ssnail/._M01.SSNAIL".into(), vec![0; 4096]));
    files.push(("Ssnail/config.txt".into(), b"m20.ssnail\n".to_vec()));
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    let mut m = Machine::new();
    m.attach_ssnail(Ssnail::new(Core::new(72 << 20)));
    let sd = sd_with(&refs);
    m.set_sd_dir(sd.path().to_path_buf());
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.keys.schedule(
        &KeyScript::parse("{WAIT 2}{DOWN}{WAIT 1}{LEFT}{LEFT}{LEFT}{WAIT 1}{RIGHT}{RIGHT}{RIGHT}")
            .unwrap(),
        0,
    );
    m.start_at(entry);
    m.run(CPU_HZ * 18 / 10);
    let rows: Vec<String> = m.screen_text().lines().map(String::from).collect();
    let all = rows.join("\n");
    assert_eq!(
        rows[3], "23 models, 12-21 shown; 2 \"._\" files skipped; no disk in drive 0",
        "{all}"
    );
    // The default (M20, the 21st) is highlighted; {DOWN} moved on to M21, scrolling one row.
    m.run(CPU_HZ);
    let codes = m.screen_codes();
    let rows: Vec<String> = m.screen_text().lines().map(String::from).collect();
    let all = rows.join("\n");
    assert!(rows[3].starts_with("23 models, 13-22 shown"), "{all}");
    let sel = rows
        .iter()
        .position(|r| r.starts_with("M21.SSNAIL "))
        .unwrap();
    assert!(codes[sel].iter().all(|c| c & 0x80 != 0), "{all}");
    // The emulator's cells see the highlight (the entry's two rows, main.c) as reverse video,
    // as ssnail mega65 --interactive draws it, and nothing else on the screen.
    let cells = m.screen_cells();
    let reversed: Vec<usize> = (0..cells.len())
        .filter(|&i| cells[i].iter().any(|&(_, r)| r))
        .collect();
    assert_eq!(reversed, [sel, sel + 1], "{all}");
    assert!(cells[sel].iter().all(|&(_, r)| r), "{all}");
    // Three pages up: the first page.
    m.run(CPU_HZ);
    let rows: Vec<String> = m.screen_text().lines().map(String::from).collect();
    assert!(
        rows[3].starts_with("23 models, 1-10 shown"),
        "{}",
        rows.join("\n")
    );
    // Three pages down: the last page, with the long name shortened to 32 columns.
    m.run(CPU_HZ);
    let rows: Vec<String> = m.screen_text().lines().map(String::from).collect();
    let all = rows.join("\n");
    assert!(rows[3].starts_with("23 models, 14-23 shown"), "{all}");
    let shown = format!("{}...{}", &long[..22], &long[long.len() - 7..]);
    assert_eq!(shown.len(), 32);
    assert!(
        rows.iter()
            .any(|r| r.starts_with(&format!("{shown} SD /SSNAIL"))),
        "{all}"
    );
}

/// More images than the list holds: the first 200 are listed and the rest counted.
#[test]
fn more_models_than_the_list_holds_are_counted_not_dropped_silently() {
    let files: Vec<(String, Vec<u8>)> = (0..203)
        .map(|i| (format!("X{i:03}.SSNAIL"), b"not an image".repeat(30)))
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    let setup = Setup {
        sd: Some(sd_with(&refs)),
        ssnail_mib: Some(72),
        ..Default::default()
    };
    let t = run(&setup, "", "RETURN: load", 60.0);
    assert!(
        t.contains("200 models, 1-10 shown; 3 more not listed (at most 200)"),
        "{t}"
    );
}

/// Every printable ASCII character looks like itself on the screen: the program brings its own
/// 8x8 ASCII character set and points CHARPTR ($D068-$D06A) at it; the headless MEGA65 draws the
/// glyphs from CHARPTR + memory (the ROM's PETSCII set has no _ { } | ~ \\ `, so before, a name
/// like LLAMA-Q4_0 showed a graphics glyph).
#[test]
fn every_printable_ascii_character_shows_as_itself_on_the_screen() {
    let img = gpt2();
    let ascii: String = (b' '..=b'~').map(|c| c as char).collect();
    let (lo, hi) = ascii.split_at(48);
    let sd = sd_with(&[
        ("SSNAIL/llama-q4_0.ssnail", &described(&img, lo, 1)),
        ("SSNAIL/m2.ssnail", &described(&img, hi, 1)),
    ]);
    let setup = Setup {
        sd: Some(sd),
        ssnail_mib: Some(72),
        ..Default::default()
    };
    let mut m = Machine::new();
    let mut core = Core::new(72 << 20);
    core.numerics = Numerics::Hardware;
    m.attach_ssnail(Ssnail::new(core));
    m.set_sd_dir(setup.sd.as_ref().unwrap().path().to_path_buf());
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    m.start_at(entry);
    m.run(CPU_HZ * 2);
    let screen = m.screen_text();
    assert!(screen.contains("\nllama-q4_0.ssnail "), "{screen}");
    assert!(screen.contains(&format!("\n    {lo}\n")), "{screen}");
    assert!(screen.contains(&format!("\n    {hi}\n")), "{screen}");
    assert!(!screen.contains('▒'), "{screen}");
    // The PNG draws the program's glyph bytes: in the '_' cell of the name (column 8) only
    // pixel row 6 has ink (reversed or not, it differs from the other rows).
    let row = screen
        .lines()
        .position(|l| l.starts_with("llama-q4_0.ssnail "))
        .unwrap();
    let png = m.screen_png();
    let mut dec = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    let mut px = vec![0; dec.output_buffer_size().unwrap()];
    let info = dec.next_frame(&mut px).unwrap();
    let at = |x: usize, y: usize| {
        let i = (y * info.width as usize + x) * 3;
        [px[i], px[i + 1], px[i + 2]]
    };
    let (x0, y0) = (16 + 8 * 8, 16 + 8 * row);
    for y in 0..8 {
        let ink_in_row = (1..6).any(|x| at(x0 + x, y0 + y) != at(x0, y0));
        assert_eq!(ink_in_row, y == 6, "pixel row {y} of the '_' cell");
    }
}

/// The browser: for every model its name, where it is, its size, the memory it needs, whether
/// it fits this board and its description (cut with "..." to one 80-column row); twelve
/// models do not fit on one page, so the cursor keys scroll the list.
#[test]
fn the_model_browser_shows_each_models_description_size_and_fit_and_scrolls() {
    let img = gpt2();
    let long = "A description longer than one screen row: it goes on and on, past the 76 \
                characters shown under the name";
    assert!(long.len() > 76 && long.len() < 128);
    let mut sd_files: Vec<(String, Vec<u8>, String)> = Vec::new();
    for i in 0..10u32 {
        let desc = format!("Model number {i}, a small gpt2 for the browser test");
        let mb = if i == 3 { 100 } else { 1 + i };
        sd_files.push((
            format!("SSNAIL/M{i:02}.SSNAIL"),
            described(&img, &desc, mb),
            desc,
        ));
    }
    sd_files.push((
        "SSNAIL/M10.SSNAIL".into(),
        described(&img, long, 2),
        format!("{}...", &long[..73]),
    ));
    sd_files.push((
        "SSNAIL/M11.SSNAIL".into(),
        b"not an image".repeat(30),
        String::new(),
    ));
    let on_disk = described(&img, "On the floppy", 3);
    let files: Vec<(&str, &[u8])> = sd_files
        .iter()
        .map(|(n, d, _)| (n.as_str(), d.as_slice()))
        .collect();
    let sd = sd_with(&files);
    let mut m = Machine::new();
    let mut core = Core::new(64 << 20);
    core.numerics = Numerics::Hardware;
    m.attach_ssnail(Ssnail::new(core));
    m.set_sd_dir(sd.path().to_path_buf());
    m.mount_d81(disk_with(&[("floppy.ssnail", &on_disk)]));
    let (_, entry) = m.load_prg(prg(), None).unwrap();
    // Nothing typed for 3 s, then down to the last model, then back up to the first.
    let keys = format!(
        "{{WAIT 3}}{}{{WAIT 3}}{}",
        "{DOWN}".repeat(12),
        "{UP}".repeat(12)
    );
    m.keys.schedule(&KeyScript::parse(&keys).unwrap(), 0);
    m.start_at(entry);
    let screen =
        |m: &mut Machine| -> Vec<String> { m.screen_text().lines().map(String::from).collect() };
    let reversed =
        |m: &mut Machine, row: usize| m.screen_codes()[row].iter().all(|c| c & 0x80 != 0);
    // Name, size, need and verdict on the first row, the description on the second.
    let check_entry = |rows: &[String], name: &str, data: &[u8], desc: &str| -> usize {
        let r = rows
            .iter()
            .position(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not shown:\n{}", rows.join("\n")));
        let line = &rows[r];
        assert!(line.len() <= 80 && rows[r + 1].len() <= 80);
        assert!(
            line.contains(&format!(" {} KB  ", data.len() >> 10)),
            "{line}"
        );
        if desc.is_empty() {
            assert!(line.ends_with("not an SSNAIL image"), "{line}");
            assert_eq!(rows[r + 1], "    (no description)");
        } else {
            let mb = u32::from_le_bytes(data[0x38..0x3C].try_into().unwrap()) >> 20;
            let verdict = if mb <= 72 { "fits" } else { "too big" };
            assert!(
                line.ends_with(&format!("needs {mb:3} MB  {verdict}")),
                "{line}"
            );
            assert_eq!(rows[r + 1], format!("    {desc}"));
        }
        r
    };
    m.run(CPU_HZ * 2);
    let first = screen(&mut m);
    assert_eq!(first[3], "13 models, 1-10 shown", "{}", first.join("\n"));
    for (name, data, desc) in &sd_files[..10] {
        let name = name.trim_start_matches("SSNAIL/");
        let r = check_entry(&first, name, data, desc);
        // The default is the largest that fits: M09 (10 MB).
        assert_eq!(reversed(&mut m, r), name == "M09.SSNAIL", "{name}");
    }
    assert!(!first.iter().any(|l| l.starts_with("M10.SSNAIL")));
    assert!(
        first[24].starts_with("Up/down: choose  Left/right: page  RETURN: load"),
        "{}",
        first.join("\n")
    );
    m.run(CPU_HZ * 3);
    let last = screen(&mut m);
    assert_eq!(last[3], "13 models, 4-13 shown", "{}", last.join("\n"));
    for (name, data, desc) in &sd_files[3..] {
        check_entry(&last, name.trim_start_matches("SSNAIL/"), data, desc);
    }
    let r = check_entry(&last, "floppy.ssnail", &on_disk, "On the floppy");
    assert!(last[r].contains(" D81 "), "{}", last[r]);
    assert!(reversed(&mut m, r) && reversed(&mut m, r + 1));
    assert_eq!(r, 4 + 2 * 9, "the last model on the last two list rows");
    m.run(CPU_HZ * 3);
    let back = screen(&mut m);
    assert_eq!(back[3], "13 models, 1-10 shown");
    assert!(back[4].starts_with("M00.SSNAIL ") && reversed(&mut m, 4) && reversed(&mut m, 5));
}

/// `img` with the u32 at header offset `at` set to `v`.
fn with_u32(img: &[u8], at: usize, v: u32) -> Vec<u8> {
    let mut out = img.to_vec();
    out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    out
}

/// Every address the program takes from an image is checked against the image's memory
/// ($8000000 + header $38) before it reads or writes there: on the FPGA core (whose load port
/// alone would refuse less) and on the software core (whose DMA would write anywhere: a token
/// buffer at $0000800 put the prompt on the screen's top row, one in the program's code broke
/// the program). Each hostile image gets one line in the model list, nothing else changes (the
/// screen's top row, the program's code), and the next image loads and answers as `ssnail run`.
#[test]
fn addresses_an_image_gives_outside_its_memory_are_refused_in_one_line_on_both_cores() {
    use ssnail_format::image::{h, Header, BASE};
    let img = llama();
    let hd = Header::parse(&img).unwrap();
    let end = BASE + hd.mem_needed;
    let hostile: Vec<(String, Vec<u8>, &str)> = vec![
        (
            "A_SCREEN",
            with_u32(&img, h::TOKENS, 0x800),
            "token buffer (header $14, $20)",
        ),
        (
            "B_CODE",
            with_u32(&img, h::TOKENS, 0x2100),
            "token buffer (header $14, $20)",
        ),
        (
            "C_CTX",
            with_u32(&img, h::MAXCTX, 5000),
            "token buffer (header $14, $20)",
        ),
        (
            "D_IO",
            with_u32(&img, h::OUTPUT, 0xFFD_3000),
            "output vector (header $30, $34)",
        ),
        (
            "E_SCRIPT",
            with_u32(&img, h::DATA, end + 16),
            "script (header $08, $0C)",
        ),
        (
            "F_VOCAB",
            with_u32(&img, h::VOCAB, end - 64),
            "tokenizer tables (header $78)",
        ),
        (
            "G_TOKBLOCK",
            with_u32(&img, h::TOKENIZER, 0x800),
            "tokenizer tables (header $78)",
        ),
        (
            "H_PAYLOAD",
            with_u32(&img, h::LOAD_BASE, end - 256),
            "payload (header $64, $2C)",
        ),
    ]
    .into_iter()
    .map(|(n, b, w)| (format!("{n}.SSNAIL"), b, w))
    .collect();
    let prompt = "the cat sat on the mat";
    for soft in [false, true] {
        let which = if soft { "software core" } else { "FPGA core" };
        // On the SD card, listed by name: the hostile ones, then Z_GOOD.SSNAIL.
        let mut files: Vec<(&str, &[u8])> = hostile
            .iter()
            .map(|(n, b, _)| (n.as_str(), b.as_slice()))
            .collect();
        files.push(("Z_GOOD.SSNAIL", &img));
        let core: &[(&str, &[u8])] = if soft {
            &[(common::SOFT_CORE_FILE, soft_core())]
        } else {
            &[]
        };
        let setup = Setup {
            d81: Some(disk_with(core)),
            sd: Some(sd_with(&files)),
            ssnail_mib: (!soft).then_some(8),
            ..Default::default()
        };
        // Each hostile image in turn (RETURN, then DOWN to the next), the last one refused.
        let keys = "{RETURN}{DOWN}".repeat(hostile.len());
        let mut m = run_machine(
            &setup,
            &keys,
            "lies outside the image's memory",
            hostile.len(),
            60.0,
        );
        let t = String::from_utf8_lossy(&m.serial).into_owned();
        for (name, _, what) in &hostile {
            let line = format!("{name}: {what} lies outside the image's memory ($38)");
            assert!(t.contains(&line), "{which}: no line {line:?}:\n{t}");
        }
        assert!(!t.contains("[load port error"), "{which}: {t}");
        // Nothing outside the image's memory changed: the screen's top row is the browser's
        // title, the program's code and read-only data are the PRG's bytes.
        let top = m.peek_phys(0x800, 25);
        assert_eq!(&top[..], b"SSNAIL for MEGA65: models", "{which}: {t}");
        if let Some(code) = prg_code() {
            let ram = m.peek_phys(0, 0x6_0000);
            assert_eq!(code.changed(&ram), None, "{which}");
        }
        // The list is still there: the good image loads and answers.
        m.keys.schedule(
            &KeyScript::parse(&format!(
                "{{RETURN}}/temp 0{{RETURN}}/n 4{{RETURN}}{prompt}{{RETURN}}"
            ))
            .unwrap(),
            m.cycles,
        );
        for _ in 0..3000 {
            m.run(CPU_HZ / 10);
            if String::from_utf8_lossy(&m.serial).contains("tokens/s]") {
                break;
            }
        }
        let t = String::from_utf8_lossy(&m.serial).into_owned();
        assert!(t.contains("Loaded Z_GOOD.SSNAIL"), "{which}: {t}");
        assert_eq!(
            answer(&t, prompt),
            reference(&img, prompt, 4),
            "{which}: {t}"
        );
    }
}

/// Sizes that do not fit 32 bits once rounded or added to are printed with their true numbers:
/// `mem_needed` $FFFFFFFF is 4096 MB (it was "needs 0 MB"), a payload of $FFFFFF00 bytes is
/// 256 + 4294967040 (it was "header says 0").
#[test]
fn sizes_near_4_gb_in_a_header_are_reported_with_their_true_numbers() {
    let img = llama();
    let setup = Setup {
        sd: Some(sd_with(&[
            ("A_HUGE.SSNAIL", &with_u32(&img, 0x38, 0xFFFF_FFFF)),
            ("B_LONG.SSNAIL", &with_u32(&img, 0x2C, 0xFFFF_FF00)),
        ])),
        ssnail_mib: Some(8),
        ..Default::default()
    };
    let t = run(
        &setup,
        "{UP}{RETURN}{DOWN}{RETURN}",
        "truncated or damaged",
        60.0,
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with("A_HUGE.SSNAIL") && l.ends_with("needs 4096 MB  too big")),
        "{t}"
    );
    assert!(
        t.contains("A_HUGE.SSNAIL: needs 4096 MB, this board has 8 MB"),
        "{t}"
    );
    let n = img.len();
    assert!(
        t.contains(&format!(
            "B_LONG.SSNAIL: file is {n} bytes, header says 256 + 4294967040: truncated or damaged"
        )),
        "{t}"
    );
}

/// `/n` takes 1 to 4095 (the largest context): anything else gets one line with the range, as
/// the sampling commands do (`/n 70000` was taken as 4464, `/n -1` printed the whole help).
#[test]
fn n_outside_1_to_4095_gets_one_line_with_the_range() {
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &llama())])),
        ssnail_mib: Some(8),
        ..Default::default()
    };
    let keys =
        "{RETURN}/n 70000{RETURN}/n -1{RETURN}/n 99999999{RETURN}/n 0{RETURN}/n 4096{RETURN}\
                /n 4095{RETURN}/n 12{RETURN}/stats{RETURN}";
    let t = run(&setup, keys, ", 12 tokens per answer]", 60.0);
    assert_eq!(
        t.matches("[tokens per answer: /n 1-4095]\n").count(),
        5,
        "{t}"
    );
    assert!(t.contains("[4095 tokens per answer]"), "{t}");
    assert!(t.contains("[12 tokens per answer]"), "{t}");
    assert!(t.contains(", 12 tokens per answer]"), "{t}");
    assert!(!t.contains("[4464 tokens per answer]"), "{t}");
    // The help only once: when the model was loaded.
    assert_eq!(t.matches("/tokens TEXT  token ids").count(), 1, "{t}");
}

/// A long name the hypervisor's directory record cuts (it holds 63 bytes of it) is still
/// recognised by its 8.3 extension, listed shortened, and loads; it was left out of the list,
/// neither shown nor counted.
#[test]
fn an_image_with_a_150_character_name_is_listed_shortened_and_loads() {
    let img = llama();
    let name = format!("{}XYZ.SSNAIL", "LONG".repeat(35));
    assert_eq!(name.len(), 150);
    let setup = Setup {
        sd: Some(sd_with(&[(&name, &img)])),
        ssnail_mib: Some(8),
        ..Default::default()
    };
    let t = run(&setup, "{RETURN}/stats{RETURN}", "[pos ", 60.0);
    let cut = &name[..63];
    let shown = format!("{}...{}", &cut[..22], &cut[63 - 7..]);
    assert!(t.contains("1 model;"), "{t}");
    assert!(
        t.lines().any(|l| l.starts_with(&format!("{shown} SD /"))),
        "{shown}: {t}"
    );
    assert!(
        t.contains(&format!("Loaded {cut}: {} bytes", img.len())),
        "{t}"
    );
}

/// The program's chat overlay (`ssnail.ovl`, linker/mega65.cfg) missing from the disk and the SD
/// card, cut short, with one byte changed, or of another build (a longer overlay, its header
/// saying so): one line names the file and the problem, and any key, RUN/STOP too, gives the
/// machine back to BASIC as RUN left it (status 0, the screen restored). Found on the SD card
/// in another letter case (the program started from the card), the same file is used.
#[test]
fn a_missing_or_damaged_overlay_file_is_named_in_one_line_and_any_key_returns_to_basic() {
    use ssnail_format::mega65::overlay;
    let good = ovl().to_vec();
    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x01;
    let cut = good[..good.len() - 100].to_vec();
    let mut longer = good.clone();
    longer.extend_from_slice(&[0xEA; 16]);
    let len = (longer.len() - overlay::HEADER_LEN) as u16;
    longer[overlay::LEN..overlay::LEN + 2].copy_from_slice(&len.to_le_bytes());
    let missing = "ssnail.ovl: not on the disk in drive 0 or the SD card (any key: BASIC)";
    let damaged = "ssnail.ovl: damaged or not of this build of the program (any key: BASIC)";
    let img = llama();
    let cases: [(Option<&[u8]>, &str); 4] = [
        (None, missing),
        (Some(&flipped), damaged),
        (Some(&cut), damaged),
        (Some(&longer), damaged),
    ];
    for (file, line) in cases {
        for key in ["x", "{STOP}"] {
            let mut d = D81::new("SSNAIL", *b"65").unwrap();
            d.add_file("ssnail", FileType::Prg, prg()).unwrap();
            if let Some(f) = file {
                d.add_file(common::OVERLAY_FILE, FileType::Seq, f).unwrap();
            }
            d.add_file("tinyllama.ssnail", FileType::Seq, &img).unwrap();
            let empty_sd = tempfile::tempdir().unwrap();
            let mut m = Machine::new();
            let screen = m.peek_phys(0x800, 2000);
            m.attach_ssnail(Ssnail::new(Core::new(8 << 20)));
            m.mount_d81(d.into_bytes());
            m.set_sd_dir(empty_sd.path().to_path_buf());
            let (_, entry) = m.load_prg(prg(), None).unwrap();
            m.keys
                .schedule(&KeyScript::parse(&format!("{{WAIT 2}}{key}")).unwrap(), 0);
            m.start_at(entry);
            let mut reason = StopReason::Budget;
            for _ in 0..100 {
                reason = m.run(CPU_HZ / 10);
                if reason != StopReason::Budget {
                    break;
                }
            }
            let t = String::from_utf8_lossy(&m.serial).into_owned();
            assert_eq!(reason, StopReason::Exit(0), "{line} ({key}): {t}");
            assert_eq!(t, format!("{line}\n"), "{key}");
            assert_eq!(
                m.peek_phys(0x800, 2000),
                screen,
                "{line} ({key}): the screen"
            );
        }
    }
    // The overlay only on the SD card, in another letter case: the program runs.
    let sd = tempfile::tempdir().unwrap();
    std::fs::write(sd.path().join("Ssnail.Ovl"), &good).unwrap();
    std::fs::write(sd.path().join("TINY.SSNAIL"), &img).unwrap();
    let setup = Setup {
        sd: Some(sd),
        ssnail_mib: Some(8),
        ..Default::default()
    };
    let prompt = "the cat sat";
    let keys = format!("{{RETURN}}/temp 0{{RETURN}}/n 4{{RETURN}}{prompt}{{RETURN}}");
    let t = run(&setup, &keys, "tokens/s]", 60.0);
    assert_eq!(answer(&t, prompt), reference(&img, prompt, 4), "{t}");
}

/// What the tests and the fuzz target take as the program's code (harness `program_code`, from
/// the ld65 map and label file) holds the overlays: the region holds the browser's overlay in the
/// browser, the chat's in a conversation and the browser's again after /models, and one byte
/// changed in the region, in either overlay's chip RAM copy or in the resident code is caught.
#[test]
fn the_programs_code_is_its_resident_code_and_both_overlays_wherever_they_are() {
    let Some(code) = prg_code() else {
        return; // another build (SSNAIL_MEGA65_PRG): no map of it here
    };
    let img = llama();
    let setup = Setup {
        d81: Some(disk_with(&[("tinyllama.ssnail", &img)])),
        ssnail_mib: Some(8),
        ..Default::default()
    };
    let holds = |m: &mut Machine| {
        let ram = m.peek_phys(0, 0x6_0000);
        assert_eq!(code.changed(&ram), None);
        let r = code.region;
        code.overlays
            .iter()
            .position(|o| ram[r..r + o.len()] == o[..])
    };
    let mut m = run_machine(&setup, "", "RETURN: load", 1, 30.0);
    assert_eq!(
        holds(&mut m),
        Some(0),
        "the browser's overlay in the browser"
    );
    let step = |m: &mut Machine, keys: &str, until: &str| {
        let from = m.serial.len();
        m.keys.schedule(&KeyScript::parse(keys).unwrap(), m.cycles);
        for _ in 0..600 {
            m.run(CPU_HZ / 10);
            if String::from_utf8_lossy(&m.serial[from..]).contains(until) {
                return;
            }
        }
        panic!("no {until:?}: {}", String::from_utf8_lossy(&m.serial));
    };
    step(
        &mut m,
        "{RETURN}/temp 0{RETURN}/n 2{RETURN}the cat{RETURN}",
        "tokens/s]",
    );
    assert_eq!(
        holds(&mut m),
        Some(1),
        "the chat's overlay in a conversation"
    );
    step(&mut m, "/models{RETURN}", "RETURN: load");
    assert_eq!(
        holds(&mut m),
        Some(0),
        "the browser's overlay after /models"
    );
    let region = code.region as u32;
    let chat_copy = code.fixed[code.fixed.len() - 1].0 as u32;
    let resident = code.fixed[0].0 as u32;
    for (what, at) in [
        ("the region", region + 100),
        ("the chat overlay's copy", chat_copy + 100),
        ("the resident code", resident + 100),
    ] {
        let was = m.peek_phys(at, 1)[0];
        m.poke_phys(at, &[was ^ 0x20]);
        let ram = m.peek_phys(0, 0x6_0000);
        assert!(
            code.changed(&ram).is_some(),
            "{what}: a changed byte not caught"
        );
        m.poke_phys(at, &[was]);
    }
}

/// A plain-text chat template over the small SentencePiece vocabulary: "Q: line\nA:" a turn,
/// the reply ended by EOS.
const QA_TEMPLATE: &str = "{% for m in messages %}{% if m.role == 'user' %}{{ 'Q: ' + m.content + '\n' }}\
{% else %}{{ 'A:' + m.content + eos_token }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'A:' }}{% endif %}";

/// What `ssnail run` answers to each line as a turn of the image's chat template (spec §2.6):
/// FIRST or the rest of the last reply's END and PREFIX, the line, SUFFIX.
fn reference_chat(img: &[u8], lines: &[&str], n: u32) -> Vec<String> {
    let mem = image_memory(img).unwrap();
    let tok = ImageTokenizer::new(&mem).unwrap();
    let (mut dev, _) = Ssnail::load_bytes(img, None).unwrap();
    dev.machine.numerics = Numerics::Hardware;
    let chat = dev.chat_block().expect("a chat block").unwrap();
    let mut out = Vec::new();
    let mut ended = false;
    for (i, line) in lines.iter().enumerate() {
        let mut turn = chat.before_turn(i == 0, ended);
        turn.extend(tok.encode(line, false));
        turn.extend_from_slice(&chat.suffix);
        let g = if i == 0 {
            dev.generate(&turn, n, &mut NoHost).unwrap()
        } else {
            dev.continue_generation(&turn, n, &mut NoHost).unwrap()
        };
        ended = g.tokens.last() == Some(&chat.stop_token());
        let mut text = String::new();
        let mut f = AsciiFolder::new();
        for t in g.tokens {
            f.push(&dev.vocab_piece(t), &mut text);
        }
        out.push(text);
    }
    out
}

/// An image with a chat block (spec §2.6): the banner names the template, and each typed line
/// is a turn (FIRST, or the rest of the last reply's END and PREFIX, the line, SUFFIX) whose
/// answer is what `ssnail run` answers to the same turns, on the FPGA core and the software
/// core; the turn changes the answer (the plain continuation differs).
#[test]
fn a_templated_image_answers_both_turns_as_ssnail_run_does() {
    let opts = ModelOpts {
        dim: 128,
        n_heads: 4,
        n_kv_heads: 2,
        hidden: 256,
        chat_template: Some(QA_TEMPLATE.into()),
        ..ModelOpts::llama()
    };
    let img = image(opts.with_wtype(GgmlType::Q8_0).with_name("TinyChat"), 64);
    let lines = ["the cat sat", "a dog"];
    let want = reference_chat(&img, &lines, 8);
    let plain = reference(&img, lines[0], 8);
    assert_ne!(
        want[0], plain,
        "the turn must change the answer for this test to mean anything"
    );
    let d81 = program_disk(
        prg(),
        false,
        &[
            (common::SOFT_CORE_FILE, soft_core()),
            ("tinychat.ssnail", &img),
        ],
    );
    for fpga in [Some(8), None] {
        let setup = Setup {
            d81: Some(d81.clone()),
            ssnail_mib: fpga,
            ..Default::default()
        };
        let keys = "{RETURN}/temp 0{RETURN}/n 8{RETURN}the cat sat{RETURN}a dog{RETURN}";
        let t = run_n(&setup, keys, "tokens/s]", 2, 600.0);
        assert!(
            t.contains("[chat template template: each line is a turn]"),
            "{t}"
        );
        for (line, want) in lines.iter().zip(&want) {
            assert_eq!(answer(&t, line), want, "{fpga:?} {line}:\n{t}");
        }
    }
}

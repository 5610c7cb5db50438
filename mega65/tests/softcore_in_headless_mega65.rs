//! The MEGA65 program with the software SSNAIL core: the PRG and `ssnail.core` (both
//! built with cc65) on a D81 in the headless MEGA65 *without* the SSNAIL device, on an R3 board
//! (8 MiB of HyperRAM at $8000000) and an R4-R6 board (64 MiB of SDRAM there with $D7FE
//! SELSDRAM). The answers must be exactly what a greedy `ssnail run --hw` prints, and after the
//! run the emulator's attic RAM — the image, runtime block, token buffer, KV cache, activations
//! and logits the 45GS02 computed — must equal, bit for bit, the memory of ssnail_core's Machine
//! in hardware numerics after the same jobs.

use ssnail_mega65_program as common;
use ssnail_mega65_program::test_images::{bert, gpt2, image, llama};
use ssnail_mega65_program::{
    answer, nth_answer, prg, program_disk, reference_conversation, soft_core, soft_core_disk,
    soft_core_tables, transcript,
};

use ssnail_core::{Board, Machine as CoreMachine, NoHost, Numerics, Ssnail};
use ssnail_disk::D81;
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{Header, BASE};
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};
use ssnail_testkit::models::ModelOpts;
use ssnail_tokenizer::image::image_memory;
use ssnail_tokenizer::ImageTokenizer;

/// Which SSNAIL core the machine has: none (the software core must run the jobs) on an R3 or
/// R4-R6 board, or the FPGA device with this many MiB (up to 8: R3, else R4-R6 with 72).
#[derive(Clone, Copy)]
enum Cores {
    SoftOnly(Board),
    Fpga(usize),
}

/// The machine with `cores`, the program started from `d81` with `keys` typed; runs until `until`
/// has appeared `times` times or `seconds` of emulated time pass.
fn run(cores: Cores, d81: Vec<u8>, keys: &str, until: &str, times: usize, seconds: f64) -> Machine {
    let mut m = Machine::new();
    match cores {
        Cores::SoftOnly(board) => m.set_board(board),
        Cores::Fpga(mib) => {
            let mut core = CoreMachine::new(mib << 20);
            core.numerics = Numerics::Hardware;
            let board = if mib <= 8 { Board::R3 } else { Board::R4 };
            m.attach_ssnail(Ssnail::with_board(core, board));
        }
    }
    let program = D81::from_bytes(d81.clone())
        .unwrap()
        .read_file("ssnail")
        .unwrap();
    m.mount_d81(d81);
    let (_, entry) = m.load_prg(&program, None).unwrap();
    m.keys.schedule(&KeyScript::parse(keys).unwrap(), 0);
    m.start_at(entry);
    let step = CPU_HZ / 10;
    let mut t = 0.0;
    while t < seconds {
        m.run(step);
        t += 0.1;
        if String::from_utf8_lossy(&m.serial).matches(until).count() >= times {
            break;
        }
    }
    m
}

/// As `run` on a board without the device, with `sd` as the SD card.
fn run_with_sd(
    board: Board,
    d81: Vec<u8>,
    sd: &std::path::Path,
    keys: &str,
    until: &str,
) -> Machine {
    let mut m = Machine::new();
    m.set_board(board);
    m.set_sd_dir(sd.to_path_buf());
    let program = D81::from_bytes(d81.clone())
        .unwrap()
        .read_file("ssnail")
        .unwrap();
    m.mount_d81(d81);
    let (_, entry) = m.load_prg(&program, None).unwrap();
    m.keys.schedule(&KeyScript::parse(keys).unwrap(), 0);
    m.start_at(entry);
    for _ in 0..1200 {
        m.run(CPU_HZ / 10);
        if String::from_utf8_lossy(&m.serial).contains(until) {
            break;
        }
    }
    m
}

/// SSNAIL memory as the MEGA65 left it equals the reference device's, byte for byte, over the
/// image's `mem_needed`; on failure the first differing address and the span of differences.
fn assert_memory_equal(m: &mut Machine, dev: &Ssnail, what: &str) {
    let want = dev.machine.mem();
    let h = Header::parse(want).unwrap();
    let len = (h.mem_needed as usize).min(want.len());
    let got = m.peek_phys(BASE, len);
    if got[..] != want[..len] {
        let diff: Vec<usize> = (0..len).filter(|&i| got[i] != want[i]).collect();
        panic!(
            "{what}: {} bytes of SSNAIL memory differ, first at ${:07X} (MEGA65 {:02X}, core {:02X}), last at ${:07X}",
            diff.len(),
            BASE as usize + diff[0],
            got[diff[0]],
            want[diff[0]],
            BASE as usize + diff[diff.len() - 1]
        );
    }
}

/// The core's function tables are in chip RAM where its link put them (exp and SiLU at 0.D000,
/// GELU's at 5.B800: the program loaded them there and nothing it ran changed them).
fn assert_tables_in_place(m: &mut Machine, what: &str) {
    for (at, want) in soft_core_tables().unwrap_or_default() {
        let got = m.peek_phys(*at as u32, want.len());
        if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
            panic!(
                "{what}: the core's table byte at ${:05X} is not the file's",
                at + i
            );
        }
    }
}

const BOARDS: [(Board, &str); 2] = [(Board::R3, "R3"), (Board::R4, "R4-R6")];

/// A conversation typed on the MEGA65: greedy, `n` tokens, each turn after the first either a new
/// one (/reset) or a continuation; the keys and the turns for `reference`.
fn conversation(turns: &[(&str, bool)], n: u32) -> String {
    let mut keys = format!("{{RETURN}}/temp 0{{RETURN}}/n {n}{{RETURN}}");
    for (i, (prompt, first)) in turns.iter().enumerate() {
        if *first && i > 0 {
            keys.push_str("/reset{RETURN}");
        }
        keys.push_str(&format!("{prompt}{{RETURN}}"));
    }
    keys
}

fn check_decoder(name: &str, img: &[u8], turns: &[(&str, bool)], n: u32) {
    let (want, dev) = reference_conversation(img, turns, n);
    for (board, board_name) in BOARDS {
        let d81 = soft_core_disk(true, &[(name, img)]);
        let mut m = run(
            Cores::SoftOnly(board),
            d81,
            &conversation(turns, n),
            "tokens/s]",
            turns.len(),
            3600.0,
        );
        let t = transcript(&m);
        assert!(t.contains(&format!("Loaded {name}")), "{board_name}: {t}");
        let mut seen = std::collections::HashMap::new();
        for (i, (prompt, _)) in turns.iter().enumerate() {
            let k = seen.entry(*prompt).or_insert(0);
            assert_eq!(
                nth_answer(&t, prompt, *k),
                want[i],
                "{name}, {board_name}, turn {i}: {t}"
            );
            *k += 1;
        }
        for l in t.lines().filter(|l| l.contains("tokens/s]")) {
            eprintln!("{name}, {board_name}: {l}");
        }
        assert_memory_equal(&mut m, &dev, &format!("{name}, {board_name}"));
    }
}

#[test]
fn llama_prints_what_ssnail_run_hw_prints_and_leaves_the_same_memory() {
    check_decoder(
        "tinyllama.ssnail",
        &llama(),
        &[
            ("the cat sat on the mat", true),
            ("and then", false),
            ("Once upon a time", true),
        ],
        12,
    );
}

#[test]
fn gpt2_prints_what_ssnail_run_hw_prints_and_leaves_the_same_memory() {
    check_decoder(
        "tinygpt.ssnail",
        &gpt2(),
        &[
            ("Once upon a time", true),
            ("there was", false),
            ("the dog", true),
        ],
        12,
    );
}

/// The encoder view from the first typed line to /stats: each line, then its stored note or the
/// three most similar earlier lines with their cosines (from the embeddings the core computed);
/// not the time each embedding took.
fn encoder_view(t: &str, first: &str) -> String {
    let start = t
        .find(&format!("> {first}\n"))
        .unwrap_or_else(|| panic!("{t}"));
    let end = t.find("[lines kept: ").unwrap_or_else(|| panic!("{t}"));
    t[start..end]
        .lines()
        .filter(|l| !l.contains(" embedded in "))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn bert_ranks_earlier_lines_as_with_the_fpga_core_and_leaves_the_same_memory() {
    let img = bert();
    let lines = [
        "the cat sat",
        "the dog ran",
        "a happy cat",
        "the cat sat on the mat",
        "dogs run",
    ];
    let mut keys = String::from("{RETURN}");
    for l in lines {
        keys.push_str(&format!("{l}{{RETURN}}"));
    }
    keys.push_str("/stats{RETURN}");
    let d81 = soft_core_disk(true, &[("tinybert.ssnail", &img)]);
    let fpga = transcript(&run(
        Cores::Fpga(8),
        d81.clone(),
        &keys,
        "[lines kept: ",
        1,
        600.0,
    ));
    let want = encoder_view(&fpga, lines[0]);
    let want = want.as_str();
    assert_eq!(
        want.matches("  +").count() + want.matches("  -").count(),
        9,
        "{fpga}"
    );

    let mem = image_memory(&img).unwrap();
    let tok = ImageTokenizer::new(&mem).unwrap();
    let (mut dev, _) = Ssnail::load_bytes(&img, None).unwrap();
    dev.machine.numerics = Numerics::Hardware;
    for l in lines {
        dev.encode(&tok.encode(l, true), &mut NoHost).unwrap();
    }
    for (board, board_name) in BOARDS {
        let mut m = run(
            Cores::SoftOnly(board),
            d81.clone(),
            &keys,
            "[lines kept: ",
            1,
            3600.0,
        );
        let t = transcript(&m);
        assert_eq!(encoder_view(&t, lines[0]), want, "{board_name}: {t}");
        assert_memory_equal(&mut m, &dev, &format!("bert, {board_name}"));
        assert_tables_in_place(&mut m, &format!("bert, {board_name}"));
    }
}

/// With the FPGA core present the software core is chosen by /core soft; both work on the same
/// SSNAIL memory, so one conversation can move between them and goes on as one core alone.
#[test]
fn with_the_fpga_core_present_core_soft_and_core_fpga_take_turns_in_one_conversation() {
    let img = llama();
    let turns = [
        ("the cat sat", true),
        ("and then", false),
        ("the end", false),
    ];
    let (want, dev) = reference_conversation(&img, &turns, 6);
    let keys = "{RETURN}/temp 0{RETURN}/n 6{RETURN}/core soft{RETURN}the cat sat{RETURN}\
                /core fpga{RETURN}and then{RETURN}/core soft{RETURN}/stats{RETURN}the end{RETURN}";
    let mut m = run(
        Cores::Fpga(72),
        soft_core_disk(true, &[("tinyllama.ssnail", &img)]),
        keys,
        "tokens/s]",
        3,
        3600.0,
    );
    let t = transcript(&m);
    assert!(t.contains("SSNAIL core v1 found, 72 MB"), "{t}");
    assert!(t.contains("/core soft|fpga  which core"), "{t}");
    assert_eq!(
        t.matches("[core: software (45GS02)]").count(),
        3,
        "two /core soft and /stats: {t}"
    );
    assert_eq!(t.matches("[core: FPGA v1]").count(), 1, "{t}");
    for (i, (prompt, _)) in turns.iter().enumerate() {
        assert_eq!(answer(&t, prompt), want[i], "turn {i}: {t}");
    }
    assert_memory_equal(&mut m, &dev, "llama, cores taking turns");
}

/// Sampling (one job per token), the full context and RUN/STOP end answers on the software core
/// exactly as on the FPGA core: the same sampled tokens, the same end.
#[test]
fn sampling_context_full_and_run_stop_work_on_the_software_core_as_on_the_fpga_core() {
    // Context 16, so that a continuation fills it after a few tokens.
    let img = image(
        ModelOpts::gpt2()
            .with_wtype(GgmlType::Q8_0)
            .with_name("TinyGpt16"),
        16,
    );
    let keys = "{RETURN}/temp 0.8{RETURN}/topk 8{RETURN}/seed 7{RETURN}/n 4{RETURN}Once{RETURN}\
                /temp 0{RETURN}/n 30{RETURN}there{RETURN}";
    let d81 = soft_core_disk(true, &[("tinygpt16.ssnail", &img)]);
    let fpga = transcript(&run(
        Cores::Fpga(8),
        d81.clone(),
        keys,
        "tokens/s]",
        2,
        600.0,
    ));
    let soft = transcript(&run(
        Cores::SoftOnly(Board::R3),
        d81,
        keys,
        "tokens/s]",
        2,
        3600.0,
    ));
    for t in [&fpga, &soft] {
        assert!(t.contains("[sampling: temperature 0.8, top-k 8,"), "{t}");
        assert!(
            t.contains("[context full at 16 tokens: /reset to start again]"),
            "{t}"
        );
    }
    for prompt in ["Once", "there"] {
        let a = answer(&soft, prompt);
        assert_eq!(a, answer(&fpga, prompt), "{prompt}: {soft}");
    }
    assert!(!answer(&soft, "there").is_empty(), "{soft}");

    // RUN/STOP: 60 tokens take about 36 s on the 45GS02, so the answer stops part-way.
    let img = llama();
    let mut m = run(
        Cores::SoftOnly(Board::R3),
        soft_core_disk(true, &[("tinyllama.ssnail", &img)]),
        "{RETURN}/temp 0{RETURN}/n 60{RETURN}the cat{RETURN}{WAIT 20}{STOP}",
        "tokens/s]",
        1,
        3600.0,
    );
    let t = transcript(&m);
    assert!(t.contains("[stopped]"), "{t}");
    let shown = answer(&t, "the cat");
    let (full, _) = reference_conversation(&img, &[("the cat", true)], 60);
    assert!(
        !shown.is_empty() && full[0].starts_with(shown) && shown.len() < full[0].len(),
        "{shown:?} / {:?}",
        full[0]
    );
    m.run(CPU_HZ);
    assert!(transcript(&m).ends_with("> "), "ready for the next line");
}

/// An image with `mem_needed` set to `mb` MB (the file unchanged).
fn needing(img: &[u8], mb: u32) -> Vec<u8> {
    let mut v = img.to_vec();
    let at = ssnail_format::image::h::MEM_NEEDED;
    v[at..at + 4].copy_from_slice(&(mb << 20).to_le_bytes());
    v
}

#[test]
fn images_the_software_core_cannot_run_are_refused_before_any_job_with_the_reason() {
    let img = llama();
    // 9 MB: more than an R3's 8 MB of attic RAM; an R4-R6 board has 64 MB of SDRAM.
    let big = needing(&img, 9);
    let d81 = soft_core_disk(true, &[("big.ssnail", &big)]);
    let t = transcript(&run(
        Cores::SoftOnly(Board::R3),
        d81.clone(),
        "{RETURN}",
        // (the whole line: the serial output arrives a character at a time)
        "the software core has 8 MB",
        1,
        60.0,
    ));
    assert!(
        t.contains("The software core runs models up to 8 MB on the 45GS02"),
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with("big.ssnail ") && l.ends_with("needs   9 MB  too big")),
        "{t}"
    );
    assert!(
        t.contains("big.ssnail: needs 9 MB, the software core has 8 MB"),
        "{t}"
    );
    let t = transcript(&run(
        Cores::SoftOnly(Board::R4),
        d81,
        "",
        "RETURN: load",
        1,
        60.0,
    ));
    assert!(
        t.contains("The software core runs models up to 64 MB on the 45GS02"),
        "{t}"
    );
    assert!(
        t.lines()
            .any(|l| l.starts_with("big.ssnail ") && l.ends_with("needs   9 MB  fits")),
        "{t}"
    );

    // A GEMV whose weight format no SSNAIL core runs (12, Q4_K): said at the start and for each
    // line, and no job runs (it would fault with code 5 mid-answer).
    let h = Header::parse(&img).unwrap();
    let mut odd = img.to_vec();
    let script = (h.code - h.load_base) as usize + ssnail_format::image::HEADER_LEN;
    let gemv = (0..)
        .map(|i| script + 16 * i)
        .find(|&at| odd[at] == 0x10)
        .unwrap();
    odd[gemv + 1] = 12;
    let t = transcript(&run(
        Cores::SoftOnly(Board::R3),
        soft_core_disk(true, &[("odd.ssnail", &odd)]),
        "{RETURN}the cat{RETURN}",
        "which SSNAIL cannot run",
        2,
        120.0,
    ));
    let at = h.code as usize + 16 * ((gemv - script) / 16);
    let msg = format!(
        "[the GEMV at ${at:07x} uses weight format 12, which SSNAIL cannot run: convert the model again]"
    );
    assert_eq!(t.matches(&msg).count(), 2, "{t}");
    assert!(
        !t.contains("tokens/s]") && !t.contains("SSNAIL error"),
        "{t}"
    );
}

#[test]
fn a_core_file_from_another_build_is_named_and_not_run() {
    let img = llama();
    let mut other = soft_core().to_vec();
    other[4] ^= 0xFF; // the ABI version after "SNLC"
    let d81 = program_disk(
        prg(),
        false,
        &[(common::SOFT_CORE_FILE, &other), ("tinyllama.ssnail", &img)],
    );
    let t = transcript(&run(
        Cores::SoftOnly(Board::R3),
        d81,
        "{RETURN}",
        "cannot load",
        1,
        60.0,
    ));
    assert!(
        t.contains("ssnail.core on the disk is not this program's software core."),
        "{t}"
    );
    assert!(
        t.contains("tinyllama.ssnail: no SSNAIL core, cannot load"),
        "{t}"
    );
    assert!(t.lines().all(|l| l.len() <= 80), "{t}");
}

/// `ssnail.core` is checked before any of it runs: every length in its header against the file
/// and the window, and the whole file's check sums (written into the header by the build). A
/// core with a window part of 7 bytes, 4 KB of scrambled code, BSS reaching its stack or one
/// changed byte of either table part gets one line in the browser, which still lists the models ("no core"
/// without the FPGA core); with the FPGA core the models run there and `/core soft` names the
/// damaged file.
#[test]
fn a_damaged_core_file_gets_one_line_and_the_models_are_still_listed_or_run_on_the_fpga_core() {
    let img = llama();
    let good = soft_core();
    // the tables after the window part: exp and SiLU (4 KB), then GELU's (2 KB)
    let tables = good.len() - 6144;
    let mut short = good[..7].to_vec();
    short[5] = 7; // the window part's length (header +5)
    short[6] = 0;
    short.extend_from_slice(&good[tables..]);
    let mut scrambled = good.to_vec();
    for (i, b) in scrambled[0x1000..0x2000].iter_mut().enumerate() {
        *b = b.rotate_left(3) ^ i as u8;
    }
    let mut into_stack = good.to_vec();
    into_stack[17..19].copy_from_slice(&0x9C01u16.to_le_bytes()); // window bytes used (+17)
    let mut table_byte = good.to_vec();
    table_byte[tables + 100] ^= 1;
    let mut gelu_byte = good.to_vec();
    gelu_byte[tables + 4096 + 100] ^= 1;
    let bad: [(&str, &[u8]); 5] = [
        ("a 7-byte window part", &short),
        ("4 KB of code scrambled", &scrambled),
        ("BSS into the stack", &into_stack),
        ("a table byte changed", &table_byte),
        ("a byte of GELU's table changed", &gelu_byte),
    ];
    let disk_with_core = |core: &[u8]| {
        program_disk(
            prg(),
            false,
            &[(common::SOFT_CORE_FILE, core), ("tinyllama.ssnail", &img)],
        )
    };
    for (what, core) in bad {
        let t = transcript(&run(
            Cores::SoftOnly(Board::R3),
            disk_with_core(core),
            "{RETURN}",
            "cannot load",
            1,
            60.0,
        ));
        assert!(
            t.contains(
                "ssnail.core on the disk is not this program's software core. Models are listed."
            ),
            "{what}: {t}"
        );
        assert!(
            t.lines()
                .any(|l| l.starts_with("tinyllama.ssnail") && l.ends_with("no core")),
            "{what}: {t}"
        );
        assert!(
            t.contains("tinyllama.ssnail: no SSNAIL core, cannot load"),
            "{what}: {t}"
        );
        assert!(t.lines().all(|l| l.len() <= 80), "{what}: {t}");
    }
    // The FPGA core runs the model; the software core is not offered.
    let prompt = "the cat";
    let t = transcript(&run(
        Cores::Fpga(8),
        disk_with_core(&scrambled),
        &format!("{{RETURN}}/temp 0{{RETURN}}/n 4{{RETURN}}{prompt}{{RETURN}}/core soft{{RETURN}}/stats{{RETURN}}"),
        "[core: ",
        1,
        60.0,
    ));
    let (want, _) = reference_conversation(&img, &[(prompt, true)], 4);
    assert_eq!(answer(&t, prompt), want[0], "{t}");
    assert!(
        t.contains("[ssnail.core on the disk is damaged or of another build: not run]\n"),
        "{t}"
    );
    assert!(t.contains("[core: FPGA v1]"), "{t}");
}

/// The SD loader's fast path sends 16 sectors per call by DMA straight into attic RAM, moving the
/// job's destination on by each sector (bank and megabyte carries): a 5.3 MB image lands byte
/// for byte where ssnail_core's load port puts it. A payload address past the memory is refused.
#[test]
fn an_sd_image_of_several_megabytes_loads_straight_into_attic_ram_byte_for_byte() {
    let img = image(
        ModelOpts::llama()
            .with_wtype(GgmlType::F32)
            .with_name("BigLlama"),
        64,
    );
    assert!(
        img.len() > 5 << 20,
        "{} bytes: several megabyte carries",
        img.len()
    );
    let (dev, _) = Ssnail::load_bytes(&img, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("SSNAIL")).unwrap();
    std::fs::write(dir.path().join("SSNAIL/BIG.SSNAIL"), &img).unwrap();
    for (board, board_name) in BOARDS {
        let mut m = run_with_sd(
            board,
            soft_core_disk(true, &[]),
            dir.path(),
            "{RETURN}",
            "Loaded BIG.SSNAIL",
        );
        let t = transcript(&m);
        assert!(
            t.contains(&format!("Loaded BIG.SSNAIL: {} bytes", img.len())),
            "{board_name}: {t}"
        );
        assert_memory_equal(&mut m, &dev, &format!("BIG.SSNAIL loaded, {board_name}"));
    }

    // The payload 242,176 bytes below the end of an R3's 8 MB, past the image's memory: refused
    // before any byte moves.
    let mut high = llama();
    let payload = (high.len() - ssnail_format::image::HEADER_LEN) as u32;
    let at = ssnail_format::image::h::LOAD_BASE;
    high[at..at + 4].copy_from_slice(&(BASE + (8 << 20) - payload + 16).to_le_bytes());
    let t = transcript(&run(
        Cores::SoftOnly(Board::R3),
        soft_core_disk(true, &[("high.ssnail", &high)]),
        "{RETURN}",
        "lies outside the image's memory",
        1,
        60.0,
    ));
    assert!(
        t.contains("high.ssnail: payload (header $64, $2C) lies outside the image's memory ($38)"),
        "{t}"
    );
}

/// `/core` names a core that is not there and keeps the one that runs.
#[test]
fn core_commands_name_a_missing_core_and_keep_the_current_one() {
    let img = llama();
    // The FPGA core, and a disk without ssnail.core.
    let d81 = program_disk(prg(), false, &[("tinyllama.ssnail", &img)]);
    let t = transcript(&run(
        Cores::Fpga(8),
        d81,
        "{RETURN}/core soft{RETURN}/stats{RETURN}",
        "[core: ",
        1,
        60.0,
    ));
    assert!(
        t.contains("[no software core: ssnail.core is not on the disk]\n"),
        "{t}"
    );
    assert!(t.contains("[core: FPGA v1]"), "{t}");
    // The software core alone.
    let t = transcript(&run(
        Cores::SoftOnly(Board::R3),
        soft_core_disk(true, &[("tinyllama.ssnail", &img)]),
        "{RETURN}/core fpga{RETURN}/core gpu{RETURN}/stats{RETURN}",
        "[core: ",
        1,
        60.0,
    ));
    assert!(t.contains("[no SSNAIL FPGA core in this MEGA65]\n"), "{t}");
    assert!(t.contains("[/core soft or /core fpga]\n"), "{t}");
    assert!(t.contains("[core: software (45GS02)]"), "{t}");
}

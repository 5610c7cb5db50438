//! What the MEGA65 program does while it works, in the headless MEGA65: RUN/STOP ends the work
//! within one emulated second wherever the program or the software core spends time (inside one
//! ATTN instruction that would run for hours, in a script that loops without SYNC), progress is
//! drawn while a prompt is processed, and the answer's figures give the prompt and the generation
//! separately. The FPGA device's behaviour for the same looping script is checked too (its
//! instruction limit, error code 4).

use ssnail_mega65_program as common;
use ssnail_mega65_program::test_images::{huge_attn, llama, with_script};
use ssnail_mega65_program::{prg, program_disk, soft_core, soft_core_disk, transcript};

use ssnail_core::{Board, Machine as CoreMachine, Numerics, Ssnail};
use ssnail_disk::D81;
use ssnail_format::image::{Header, BASE, HEADER_LEN};
use ssnail_format::isa::{Instr, Op};
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};

/// The program disk with the software core and `img` as `name`.
fn disk(name: &str, img: &[u8]) -> Vec<u8> {
    soft_core_disk(false, &[(name, img)])
}

/// The program started from `d81` on an R3 board: without the SSNAIL device (the software core
/// runs the jobs) or with the FPGA device (8 MiB).
fn start(d81: Vec<u8>, fpga: bool) -> Machine {
    let mut m = Machine::new();
    if fpga {
        let mut core = CoreMachine::new(8 << 20);
        core.numerics = Numerics::Hardware;
        m.attach_ssnail(Ssnail::with_board(core, Board::R3));
    } else {
        m.set_board(Board::R3);
    }
    let program = D81::from_bytes(d81.clone())
        .unwrap()
        .read_file("ssnail")
        .unwrap();
    m.mount_d81(d81);
    let (_, entry) = m.load_prg(&program, None).unwrap();
    m.start_at(entry);
    m
}

/// Types `keys` now.
fn type_keys(m: &mut Machine, keys: &str) {
    let now = (m.seconds() * CPU_HZ as f64) as u64;
    m.keys.schedule(&KeyScript::parse(keys).unwrap(), now);
}

/// Runs in 1/20 s steps until the transcript holds `text` `times` times; the emulated seconds
/// that took, or a panic after `max` seconds.
fn run_until(m: &mut Machine, text: &str, times: usize, max: f64) -> f64 {
    let t0 = m.seconds();
    while m.seconds() - t0 < max {
        m.run(CPU_HZ / 20);
        if transcript(m).matches(text).count() >= times {
            return m.seconds() - t0;
        }
    }
    panic!(
        "{text:?} ({times}x) not seen within {max} s:\n{}",
        transcript(m)
    );
}

/// A script that counts in R1 forever: no SYNC, no HALT.
fn looping() -> Vec<u8> {
    let h = Header::parse(&llama()).unwrap();
    with_script(
        &[
            Instr::new(Op::AddI, 1, 1, 0, 0, 1),
            Instr::new(Op::Beq, 15, 15, h.code, 0, 0),
        ],
        &[],
        h.code,
    )
}

/// RUN/STOP typed `after` seconds into the job started by typing `prompt`; the emulated seconds
/// from the key to "[stopped]", and the machine.
fn stop_after(img: &[u8], prompt: &str, after: f64) -> (f64, Machine) {
    let mut m = start(disk("job.ssnail", img), false);
    type_keys(&mut m, "{RETURN}");
    run_until(&mut m, "RUN/STOP stops", 1, 120.0);
    type_keys(&mut m, &format!("{prompt}{{RETURN}}"));
    run_until(&mut m, &format!("> {prompt}\n"), 1, 10.0);
    m.run((after * CPU_HZ as f64) as u64);
    assert!(!transcript(&m).contains("[stopped]"), "{}", transcript(&m));
    type_keys(&mut m, "{STOP}");
    let took = run_until(&mut m, "[stopped]", 1, 30.0);
    (took, m)
}

#[test]
fn run_stop_ends_a_software_core_job_inside_one_huge_attn_within_a_second() {
    let (took, mut m) = stop_after(&huge_attn(), "the cat", 5.0);
    assert!(took <= 1.0, "RUN/STOP took {took:.2} s: {}", transcript(&m));
    m.run(CPU_HZ / 2);
    let t = transcript(&m);
    assert!(t.ends_with("> "), "back at the prompt: {t}");
    assert!(!t.contains("Back to the model list"), "{t}");
}

#[test]
fn a_looping_script_shows_the_30_s_hint_and_run_stop_ends_it_within_a_second() {
    let img = looping();
    let (took, m) = stop_after(&img, "the cat", 31.0);
    let t = transcript(&m);
    assert!(
        t.contains("[SSNAIL busy 30 s without a result: RUN/STOP stops it]"),
        "{t}"
    );
    assert!(took <= 1.0, "RUN/STOP took {took:.2} s: {t}");
    assert!(!t.contains("Back to the model list"), "{t}");

    // The FPGA device runs the same script into its instruction limit: error code 4.
    let mut m = start(disk("job.ssnail", &img), true);
    type_keys(&mut m, "{RETURN}the cat{RETURN}");
    run_until(&mut m, "[SSNAIL error $04 at $", 1, 120.0);
}

#[test]
fn progress_is_drawn_every_second_while_a_long_prompt_is_processed_and_not_logged() {
    let mut m = start(disk("tinyllama.ssnail", &llama()), false);
    type_keys(&mut m, "{RETURN}/n 1{RETURN}");
    run_until(&mut m, "[1 token per answer]", 1, 120.0);
    let prompt = "once upon a time there was a little cat who sat on the mat and looked at the dog";
    type_keys(&mut m, &format!("{prompt}{{RETURN}}"));
    run_until(&mut m, &format!("> {prompt}\n"), 1, 10.0);
    let mut seen: Vec<String> = Vec::new();
    let mut unchanged = 0.0;
    while !transcript(&m).contains("tokens/s]") {
        m.run(CPU_HZ / 10);
        let line = m
            .screen_text()
            .lines()
            .find(|l| l.starts_with("[prompt: "))
            .map(str::to_string);
        match line {
            Some(l) if seen.last() != Some(&l) => {
                seen.push(l);
                unchanged = 0.0;
            }
            _ => unchanged += 0.1,
        }
        assert!(
            seen.is_empty() || transcript(&m).contains("tokens/s]") || unchanged <= 2.0,
            "the progress line stayed {:?} for over 2 s",
            seen.last()
        );
        assert!(m.seconds() < 600.0, "{}", transcript(&m));
    }
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(
        seen.iter()
            .any(|l| l.contains(" of ") && l.ends_with(" s]")),
        "{seen:?}"
    );
    let t = transcript(&m);
    assert!(
        !t.contains("[prompt: ") || !t.contains(" s]\n[prompt:"),
        "{t}"
    );
    assert!(
        !t.lines()
            .any(|l| l.contains(" of ") && l.starts_with("[prompt: ")),
        "progress is not in the transcript: {t}"
    );
    // The answer's figures: the prompt, then the answer's tokens after the first.
    let p = t.lines().find(|l| l.starts_with("[prompt: ")).unwrap();
    assert!(p.ends_with(" tokens/s)]"), "{p}");
    let a = t.lines().find(|l| l.starts_with("[answer: ")).unwrap();
    assert!(
        a.starts_with("[answer: 1 token, 0 after the first in "),
        "{a}"
    );
    type_keys(&mut m, "/stats{RETURN}");
    run_until(&mut m, "[last answer: ", 1, 10.0);
    let t = transcript(&m);
    assert!(t.contains("[pos "), "{t}");
    assert!(t.contains("[last prompt: "), "{t}");
}

/// The program's C stack is 384 bytes at $CE80-$CFFF (linker/mega65.cfg). A session that takes
/// every path with deep calls — the browser, loading, a greedy and a sampled answer with
/// /stats and /tokens, the software core's jobs, an encoder ranking lines — uses less than half
/// of it: the bytes below the deepest point still hold the pattern written before the start.
#[test]
fn the_c_stack_stays_within_half_of_its_384_bytes() {
    const STACK: u32 = 0xCE80;
    const SIZE: usize = 384;
    let img = llama();
    let bert = ssnail_mega65_program::test_images::bert();
    let d81 = program_disk(
        prg(),
        false,
        &[
            (common::SOFT_CORE_FILE, soft_core()),
            ("tinyllama.ssnail", &img),
            ("tinybert.ssnail", &bert),
        ],
    );
    let mut m = start(d81, false);
    m.poke_phys(STACK, &[0xA5; SIZE]);
    // the browser's default is the larger image, the encoder
    type_keys(
        &mut m,
        "{RETURN}the cat sat{RETURN}a dog ran{RETURN}the cat sat down{RETURN}/stats{RETURN}\
         /models{RETURN}",
    );
    run_until(&mut m, "Looking for models", 2, 600.0);
    assert!(
        transcript(&m).contains("[lines kept: 3 of 16"),
        "{}",
        transcript(&m)
    );
    type_keys(
        &mut m,
        "{UP}{RETURN}/temp 0{RETURN}/n 3{RETURN}the cat sat{RETURN}/temp 0.8{RETURN}/seed 3{RETURN}\
         and then{RETURN}/stats{RETURN}/tokens the dog{RETURN}/help{RETURN}",
    );
    run_until(&mut m, "[last answer: ", 1, 600.0);
    run_until(&mut m, "/temp X (0 = greedy)", 2, 60.0);
    let t = transcript(&m);
    assert!(
        t.contains("Loaded tinyllama.ssnail") && t.contains("Loaded tinybert.ssnail"),
        "{t}"
    );
    let stack = m.peek_phys(STACK, SIZE);
    let used = SIZE - stack.iter().take_while(|&&b| b == 0xA5).count();
    eprintln!("C stack: {used} of {SIZE} bytes used");
    assert!(used < SIZE / 2, "{used} bytes of the C stack used");
}

/// Bytes each even vocab entry of `flood` claims.
const FLOOD: u32 = 100 << 10;

/// The llama test image whose vocab offsets alternate between offset[0] and offset[0] + FLOOD,
/// so that every even token claims FLOOD bytes and every odd one none; the bytes after the
/// tokenizer's tables up to there (weights) are made `x`, which also makes the model's sums
/// overflow, so that it answers with token 0. With `far_index` the sorted index (the table after
/// the vocab table, spec §2.1) is said to start 7 MiB in, so that the vocab table seems to reach
/// that far. Returns the image and the length of the real vocab table.
fn flood(far_index: bool) -> (Vec<u8>, u32) {
    let mut img = llama();
    let h = Header::parse(&img).unwrap();
    let file = |addr: u32| (addr - h.load_base) as usize + HEADER_LEN;
    let rd = |img: &[u8], at: usize| u32::from_le_bytes(img[at..at + 4].try_into().unwrap());
    let v = file(h.vocab);
    let first = rd(&img, v);
    for t in 1..=h.n_vocab as usize {
        let o = first + (t as u32 % 2) * FLOOD;
        img[v + 4 * t..v + 4 * t + 4].copy_from_slice(&o.to_le_bytes());
    }
    let blk = file(rd(&img, ssnail_format::image::h::TOKENIZER));
    let index = rd(&img, blk + 8);
    let end = v + (first + FLOOD) as usize;
    assert!(
        blk + 36 < end && end + (40 << 10) < img.len(),
        "the flood reads the weights"
    );
    img[blk + 36..end].fill(b'x');
    if far_index {
        img[blk + 8..blk + 12].copy_from_slice(&(BASE + (7 << 20)).to_le_bytes());
        // inside the image's memory, which it says is the whole 8 MB (header $38)
        let m = ssnail_format::image::h::MEM_NEEDED;
        img[m..m + 4].copy_from_slice(&(8u32 << 20).to_le_bytes());
    }
    (img, index - h.vocab)
}

/// A token's printed text is at most what the vocab table holds: entries that claim 100 KB print
/// at most the table's bytes, not 100,000 characters per token.
#[test]
fn a_vocab_entry_claiming_100_kb_prints_at_most_the_vocab_table() {
    let (img, table) = flood(false);
    let mut m = start(disk("flood.ssnail", &img), true);
    type_keys(&mut m, "{RETURN}/temp 0{RETURN}/n 4{RETURN}the cat{RETURN}");
    run_until(&mut m, "tokens/s]", 1, 600.0);
    let t = transcript(&m);
    let at = t.find("> the cat\n").unwrap() + 10;
    let shown = &t[at..at + t[at..].find("\n[prompt: ").unwrap()];
    assert!(
        shown.len() <= 4 * table as usize,
        "{} bytes shown for 4 tokens, the vocab table has {table}",
        shown.len()
    );
}

/// RUN/STOP while a token prints 100 KB (the vocab table seems to reach 7 MiB far) stops the
/// printing and the answer within a second.
#[test]
fn run_stop_stops_the_printing_of_a_flood_token_within_a_second() {
    let (img, _) = flood(true);
    let mut m = start(disk("flood.ssnail", &img), true);
    type_keys(&mut m, "{RETURN}/temp 0{RETURN}/n 30{RETURN}");
    run_until(&mut m, "[30 tokens per answer]", 1, 120.0);
    type_keys(&mut m, "the cat{RETURN}");
    run_until(&mut m, "> the cat\n", 1, 10.0);
    m.run(CPU_HZ);
    let before = transcript(&m).len();
    let echo = transcript(&m).find("> the cat\n").unwrap();
    assert!(
        before - echo > 2000,
        "no flood printing yet: {}",
        transcript(&m)
    );
    assert!(
        !transcript(&m).contains("[stopped]"),
        "{}",
        &transcript(&m)[..before.min(3000)]
    );
    type_keys(&mut m, "{STOP}");
    let took = run_until(&mut m, "[stopped]", 1, 60.0);
    assert!(took <= 1.0, "RUN/STOP took {took:.2} s");
    let t = transcript(&m);
    assert!(
        t.len() - before < 100_000,
        "{} bytes more after RUN/STOP",
        t.len() - before
    );
}

/// An encoder on the software core: its help has no decoder commands, a long sentence's
/// embedding draws its progress (tokens, how far through the script, seconds) at least every
/// 2 s, the time follows the result, /stats speaks of lines and embeddings, and RUN/STOP stops
/// an embedding within a second.
#[test]
fn an_encoder_shows_embedding_progress_its_time_and_encoder_wording_and_run_stop_stops_it() {
    let bert = ssnail_mega65_program::test_images::bert();
    let mut m = start(disk("tinybert.ssnail", &bert), false);
    type_keys(&mut m, "{RETURN}");
    run_until(&mut m, "RUN/STOP stops", 1, 120.0);
    let line = "the cat sat on the mat and the dog ran to the red ball in the big green park";
    type_keys(&mut m, &format!("{line}{{RETURN}}"));
    run_until(&mut m, &format!("> {line}\n"), 1, 10.0);
    let mut seen: Vec<String> = Vec::new();
    let mut unchanged = 0.0;
    while !transcript(&m).contains(" embedded in ") {
        m.run(CPU_HZ / 10);
        let l = m
            .screen_text()
            .lines()
            .find(|l| l.starts_with("[embedding "))
            .map(str::to_string);
        match l {
            Some(l) if seen.last() != Some(&l) => {
                seen.push(l);
                unchanged = 0.0;
            }
            _ => unchanged += 0.1,
        }
        assert!(
            seen.is_empty() || transcript(&m).contains(" embedded in ") || unchanged <= 2.0,
            "the progress line stayed {:?} for over 2 s",
            seen.last()
        );
        assert!(m.seconds() < 900.0, "{}", transcript(&m));
    }
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(seen.iter().all(|l| l.contains("%, ")), "{seen:?}");
    type_keys(&mut m, "/stats{RETURN}");
    run_until(&mut m, "[lines kept: 1 of 16, context 32 tokens]", 1, 10.0);
    run_until(&mut m, " embedded in ", 2, 10.0);
    let t = transcript(&m);
    assert!(
        !t.contains("/n N") && !t.contains("/temp") && !t.contains("/topk"),
        "{t}"
    );
    assert!(
        !t.contains("tokens per answer") && !t.contains("[pos "),
        "{t}"
    );
    assert!(
        !t.contains("[embedding "),
        "progress is not in the transcript: {t}"
    );

    let before = t.matches("[stopped]").count();
    type_keys(&mut m, &format!("{line}{{RETURN}}"));
    run_until(&mut m, &format!("> {line}\n"), 2, 10.0);
    m.run(3 * CPU_HZ);
    type_keys(&mut m, "{STOP}");
    let took = run_until(&mut m, "[stopped]", before + 1, 30.0);
    assert!(took <= 1.0, "RUN/STOP took {took:.2} s");
}

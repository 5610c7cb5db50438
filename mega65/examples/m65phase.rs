//! m65phase: where the MEGA65 program's time per generated token goes on the software core, in
//! emulated 40.5 MHz cycles of the headless MEGA65.
//!
//!     cargo run --release -p ssnail-mega65-program --example m65phase -- IMAGE.ssnail
//!         [--keys KEYS] [--tokens N]
//!
//! The PRG, its chat overlay and `ssnail.core` (built with cc65 now) run from a D81 on an R4–R6
//! board without the SSNAIL device; the keys (default: greedy, the image's default answer length,
//! "what is the mega65?") are typed. The machine is stepped one instruction at a time. A token's
//! span runs from one rise of the runtime block's `generated` count (the script writes it just
//! before its SYNC) to the next, i.e. one position's job and what the program does around it;
//! the first span starts at GO (with sampling, one job per token, the span also holds the
//! sampler's choice, the token's printing and the next GO). Each span's cycles are split into:
//!
//! * **core**: inside `soft_call`'s call of the core's entry (softcall.s: between its JSR and the
//!   instruction after it), i.e. the SSNAIL instructions themselves;
//! * **call**: the rest of `soft_call` (mapping the window in and out);
//! * **program**: everything else, by the object file whose code the PC is in (ld65's map; the
//!   runtime library's modules by name, e.g. udiv32.o).
//!
//! The core's part grows with the position only through ATTN (the one instruction whose work
//! depends on it), so its slope over the positions is ATTN's cost per cached row.

use anyhow::{bail, Context, Result};
use ssnail_core::Board;
use ssnail_disk::{FileType, D81};
use ssnail_format::image::{rt, BASE};
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};
use ssnail_mega65_program as common;
use std::collections::HashMap;
use std::path::Path;

/// The runtime block's `pos`, `prompt_len` and `generated`.
const RB_POS: u32 = BASE + rt::POS;
const RB_PROMPT_LEN: u32 = BASE + rt::PROMPT_LEN;
const RB_GENERATED: u32 = BASE + rt::GENERATED;

fn u32_at(m: &mut Machine, addr: u32) -> u32 {
    let b = m.peek_phys(addr, 4);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// The program's code by object file: (start, file) for each module's CODE part (ld65 map,
/// "Modules list" offsets from the CODE segment's start in "Segment list"), sorted; and where
/// `_soft_call` is ("Exports list by name").
fn modules(map: &Path) -> Result<(Vec<(u16, String)>, u16)> {
    let text = std::fs::read_to_string(map).with_context(|| map.display().to_string())?;
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    let code = text
        .lines()
        .skip_while(|l| !l.starts_with("Segment list:"))
        .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["CODE", start, ..] => hex(start),
            _ => None,
        })
        .context("no CODE segment in the map")?;
    let mut v = vec![(0u16, "below CODE (LOWRAM, STARTUP)".to_string())];
    let mut module = String::new();
    for l in text
        .lines()
        .skip_while(|l| !l.starts_with("Modules list:"))
        .take_while(|l| !l.starts_with("Segment list:"))
    {
        if !l.starts_with(' ') && l.ends_with(':') {
            module = l
                .trim_end_matches(':')
                .rsplit('/')
                .next()
                .unwrap_or(l)
                .to_string();
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if let ["CODE", offs, size, ..] = f[..] {
            let (o, n) = (
                offs.strip_prefix("Offs=").and_then(hex),
                size.strip_prefix("Size=").and_then(hex),
            );
            if let (Some(o), Some(n)) = (o, n) {
                if n > 0 {
                    v.push(((code + o) as u16, module.clone()));
                }
            }
        }
    }
    v.sort();
    let soft_call = text
        .lines()
        .skip_while(|l| !l.starts_with("Exports list by name"))
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.chunks(3)
                .find(|c| c[0] == "_soft_call")
                .and_then(|c| c.get(1).and_then(|a| hex(a)))
        })
        .context("no _soft_call in the map")?;
    Ok((v, soft_call as u16))
}

#[derive(Default, Clone)]
struct Span {
    pos: u32,
    total: u64,
    core: u64,
    call: u64,
    program: HashMap<usize, u64>,
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut image = None;
    let mut keys = "{RETURN}/temp 0{RETURN}what is the mega65?{RETURN}".to_string();
    let mut tokens = u32::MAX;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--keys" if i + 1 < args.len() => {
                keys = args[i + 1].clone();
                i += 1;
            }
            "--tokens" if i + 1 < args.len() => {
                tokens = args[i + 1].parse()?;
                i += 1;
            }
            a if !a.starts_with("--") && image.is_none() => image = Some(a.to_string()),
            a => bail!("m65phase: unknown argument {a:?} (IMAGE, --keys KEYS, --tokens N)"),
        }
        i += 1;
    }
    let image = image.context("m65phase: an image file is needed")?;
    let img = std::fs::read(&image).with_context(|| image.clone())?;
    let dir = tempfile::tempdir()?;
    let prg = common::build_prg(dir.path()).map_err(anyhow::Error::msg)?;
    let ovl = common::built_overlay(dir.path()).map_err(anyhow::Error::msg)?;
    let core = common::build_core(dir.path()).map_err(anyhow::Error::msg)?;
    let (funcs, soft_call) = modules(&dir.path().join("mega65/ssnail.map"))?;

    let mut d = D81::new("SSNAIL", *b"65")?;
    d.add_file("ssnail", FileType::Prg, &prg)?;
    d.add_file(common::OVERLAY_FILE, FileType::Seq, &ovl)?; // the chat's overlay, as make disk
    d.add_file(common::SOFT_CORE_FILE, FileType::Seq, &core)?;
    d.add_file("model.ssnail", FileType::Seq, &img)?;
    let mut m = Machine::new();
    m.set_board(Board::R4);
    m.mount_d81(d.into_bytes());
    let (_, entry) = m.load_prg(&prg, None).map_err(anyhow::Error::msg)?;
    m.keys
        .schedule(&KeyScript::parse(&keys).map_err(anyhow::Error::msg)?, 0);
    m.start_at(entry);

    // until GO: the program has written prompt_len
    while u32_at(&mut m, RB_PROMPT_LEN) == 0 {
        m.run(100_000);
        if m.cycles > 600 * CPU_HZ {
            bail!("m65phase: no job in 10 minutes of emulated time");
        }
    }
    let go = m.cycles;
    let mut spans: Vec<Span> = Vec::new();
    let mut cur = Span {
        pos: u32_at(&mut m, RB_POS),
        ..Span::default()
    };
    let mut gen = u32_at(&mut m, RB_GENERATED);
    let (mut in_core, mut ret_at) = (false, 0u16);
    let mut last_check = m.cycles;
    loop {
        let pc = m.pc;
        let op = m.peek_phys(pc as u32, 1)[0];
        let before = m.cycles;
        if m.run_one().is_some() {
            bail!("m65phase: the program exited");
        }
        let c = m.cycles - before;
        cur.total += c;
        if in_core {
            cur.core += c;
            if m.pc == ret_at {
                in_core = false;
            }
        } else if (soft_call..soft_call + 0x60).contains(&pc) {
            cur.call += c;
            // softcall.s: the JSR to the core's entry, self-modified, the only JSR in soft_call
            if op == 0x20 {
                in_core = true;
                ret_at = pc.wrapping_add(3);
            }
        } else {
            let i = funcs.partition_point(|(a, _)| *a <= pc).saturating_sub(1);
            *cur.program.entry(i).or_default() += c;
        }
        if m.cycles - last_check >= 2_000 {
            last_check = m.cycles;
            let g = u32_at(&mut m, RB_GENERATED);
            // (sampling runs one job per token, each from generated = 0)
            if g < gen {
                gen = g;
            }
            if g > gen && !in_core {
                gen = g;
                let pos = u32_at(&mut m, RB_POS);
                spans.push(std::mem::take(&mut cur));
                cur.pos = pos;
                if spans.len() as u32 > tokens {
                    break;
                }
            }
            if String::from_utf8_lossy(&m.serial).contains("tokens/s]\n[")
                || String::from_utf8_lossy(&m.serial).contains("answer:")
            {
                break;
            }
            if m.cycles - go > 3600 * CPU_HZ {
                bail!("m65phase: no answer in an hour of emulated time");
            }
        }
    }
    println!(
        "m65phase: {image}, {} spans from GO ({:.2} s emulated)",
        spans.len(),
        (m.cycles - go) as f64 / CPU_HZ as f64
    );
    println!("| span | pos after | cycles | core | call | program | program's largest files |");
    println!("|---:|---:|---:|---:|---:|---:|---|");
    for (k, s) in spans.iter().enumerate() {
        let prog: u64 = s.program.values().sum();
        let mut v: Vec<(usize, u64)> = s.program.iter().map(|(&i, &c)| (i, c)).collect();
        v.sort_by_key(|&(_, c)| std::cmp::Reverse(c));
        let top: Vec<String> = v
            .iter()
            .take(4)
            .map(|&(i, c)| format!("{} {c}", funcs[i].1))
            .collect();
        println!(
            "| {k} | {} | {} | {} | {} | {prog} | {} |",
            s.pos,
            s.total,
            s.core,
            s.call,
            top.join(", ")
        );
    }
    Ok(())
}

//! m65soft: the software SSNAIL core's speed in the headless MEGA65, in emulated 45GS02
//! cycles at 40.5 MHz, on the program's test images.
//!
//!     cargo run --release -p ssnail-mega65-program --example m65soft [-- --core FILE]
//!
//! The PRG and `ssnail.core` (built with cc65 now, or `--core` for another core build) run from a
//! D81 on an R3 board without the SSNAIL device, greedy, the prompt below. The machine runs in
//! slices of 100,000 cycles (2.5 ms) and reads the runtime block in attic RAM after each: the
//! job starts when the program has written `prompt_len` (just before GO), and each generated
//! token is counted when `generated` goes up (the script writes it just before its SYNC). So:
//!
//! * **first token**: GO to the first token — every prompt position, then the first output;
//! * **per token**: the mean of the later token-to-token times (one position each);
//! * **bert**: GO to the embedding line on the serial transcript (one job over the prompt).
//!
//! The emulator charges flat `[zp],Z` and DMA accesses to attic RAM like chip RAM (xemu's
//! measured 40.5 MHz table, 2 cycles per DMA byte); the real HyperRAM/SDRAM is slower, so these
//! are lower bounds for the memory-bound parts (docs/FINDINGS.md).

use anyhow::{bail, Result};
use ssnail_core::Board;
use ssnail_disk::{FileType, D81};
use ssnail_format::image::BASE;
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};
use ssnail_mega65_program as common;
use ssnail_mega65_program::test_images::{bert, gpt2, llama};
use ssnail_tokenizer::image::image_memory;
use ssnail_tokenizer::ImageTokenizer;

const SLICE: u64 = 100_000;
const PROMPT: &str = "the cat sat on the mat";
const TOKENS: u32 = 8;

fn u32_at(m: &mut Machine, addr: u32) -> u32 {
    let b = m.peek_phys(addr, 4);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// The program's chat overlay, beside it on the disk.
static OVL: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

fn machine(prg: &[u8], core: &[u8], img: &[u8], keys: &str) -> Result<Machine> {
    let mut d = D81::new("SSNAIL", *b"65")?;
    d.add_file("ssnail", FileType::Prg, prg)?;
    d.add_file(
        common::OVERLAY_FILE,
        FileType::Seq,
        OVL.get().ok_or_else(|| anyhow::anyhow!("no overlay"))?,
    )?;
    d.add_file(common::SOFT_CORE_FILE, FileType::Seq, core)?;
    d.add_file("model.ssnail", FileType::Seq, img)?;
    let mut m = Machine::new();
    m.set_board(Board::R3);
    m.mount_d81(d.into_bytes());
    let (_, entry) = m.load_prg(prg, None).map_err(anyhow::Error::msg)?;
    m.keys
        .schedule(&KeyScript::parse(keys).map_err(anyhow::Error::msg)?, 0);
    m.start_at(entry);
    Ok(m)
}

fn decoder(name: &str, prg: &[u8], core: &[u8], img: &[u8]) -> Result<()> {
    let keys = format!("{{RETURN}}/temp 0{{RETURN}}/n {TOKENS}{{RETURN}}{PROMPT}{{RETURN}}");
    let mut m = machine(prg, core, img, &keys)?;
    let mem = image_memory(img).map_err(anyhow::Error::msg)?;
    let n_prompt = ImageTokenizer::new(&mem)
        .map_err(anyhow::Error::msg)?
        .encode(PROMPT, true)
        .len();
    let (mut start, mut stamps) = (None, Vec::new());
    while stamps.len() < TOKENS as usize {
        m.run(SLICE);
        if m.cycles > 3600 * CPU_HZ {
            bail!("{name}: no answer in an hour of emulated time");
        }
        if start.is_none() && u32_at(&mut m, BASE + 0x44) != 0 {
            start = Some(m.cycles);
        }
        if start.is_some() && u32_at(&mut m, BASE + 0x4C) as usize > stamps.len() {
            stamps.push(m.cycles);
        }
    }
    let start = start.unwrap_or(0);
    let first = stamps[0] - start;
    let later: Vec<u64> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
    let per = later.iter().sum::<u64>() / later.len() as u64;
    let vocab = ssnail_format::image::Header::parse(img)?.n_vocab;
    println!(
        "{name}, vocab {vocab}: {n_prompt}-token prompt to the first token {first} cycles ({:.2} s, {} per position); \
         then {per} cycles per token ({:.2} s; min {}, max {}) = {:.3} tokens/s",
        first as f64 / CPU_HZ as f64,
        first / n_prompt as u64,
        per as f64 / CPU_HZ as f64,
        later.iter().min().unwrap(),
        later.iter().max().unwrap(),
        CPU_HZ as f64 / per as f64
    );
    Ok(())
}

fn encoder(prg: &[u8], core: &[u8], img: &[u8]) -> Result<()> {
    let mut m = machine(prg, core, img, &format!("{{RETURN}}{PROMPT}{{RETURN}}"))?;
    let mem = image_memory(img).map_err(anyhow::Error::msg)?;
    let n = ImageTokenizer::new(&mem)
        .map_err(anyhow::Error::msg)?
        .encode(PROMPT, true)
        .len();
    let mut start = None;
    loop {
        m.run(SLICE);
        if m.cycles > 3600 * CPU_HZ {
            bail!("bert: no embedding in an hour of emulated time");
        }
        if start.is_none() && u32_at(&mut m, BASE + 0x44) != 0 {
            start = Some(m.cycles);
        }
        if String::from_utf8_lossy(&m.serial).contains("embedding stored") {
            break;
        }
    }
    let c = m.cycles - start.unwrap_or(0);
    println!(
        "bert: embedding of a {n}-token line {c} cycles ({:.2} s, {} per token)",
        c as f64 / CPU_HZ as f64,
        c / n as u64
    );
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = tempfile::tempdir()?;
    let prg = common::build_prg(dir.path()).map_err(anyhow::Error::msg)?;
    let _ = OVL.set(common::built_overlay(dir.path()).map_err(anyhow::Error::msg)?);
    let core = match args.iter().position(|a| a == "--core") {
        Some(i) => {
            let path = args
                .get(i + 1)
                .ok_or_else(|| anyhow::anyhow!("--core needs a file"))?;
            std::fs::read(path).map_err(|e| anyhow::anyhow!("{path}: {e}"))?
        }
        None => common::build_core(dir.path()).map_err(anyhow::Error::msg)?,
    };
    decoder("llama (Q4_0, dim 128)", &prg, &core, &llama())?;
    decoder("gpt2 (Q8_0)", &prg, &core, &gpt2())?;
    encoder(&prg, &core, &bert())
}

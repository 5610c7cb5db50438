//! m65bench: the MEGA65 program's speed in emulated 45GS02 cycles (40.5 MHz), per family.
//!
//!     cargo run --release -p ssnail-mega65-program --example m65bench [-- --smollm2] [--prg FILE]
//!         [--sampling]
//!
//! (`--prg` measures a given build of the program instead of building mega65/ now; the time
//! inside `smp_choose` is shown when the build's ld65 map lies beside it, FILE with .map;
//! `--sampling` measures only the sampling.)
//! The PRG (built with cc65 by `make -C mega65`) runs in the headless MEGA65 one instruction at a
//! time, so every figure is read from the emulator's cycle counter at the instruction where it
//! happens:
//!
//! * load: cycles per 512-byte sector outside the hypervisor, i.e. from the first to the last
//!   readfile trap (`STA $D640` with A = $1A), minus the cycles of the trap instructions
//!   themselves, divided by the sectors in between. Everything the program does per sector counts
//!   (load port READY poll, DMA into the port, progress bar, RUN/STOP check).
//! * tokenize: from the newline that ends the echo of `/tokens LINE` to the `[` that starts the
//!   ids, on tables-only images of the real vocabularies (llama.cpp's llama-spm, gpt-2,
//!   bert-bge; with `--smollm2` also SmolLM2's from the cache). The printed ids must equal the
//!   PC image tokenizer's, else the run fails.
//! * generate: for each token the core publishes (its generated count in the runtime block goes
//!   up), the cycles until the program has read the new count, printed the token and is back at
//!   its RUN/STOP check (`LDA $D610`), on the test models. Encoders generate no tokens.
//! * sampling: for each sampled token (spec §7.6), the cycles from the end of its job to the start
//!   of the next, for 512, 32,000 and 49,152 output rows.

use ssnail_mega65_program as common;

use anyhow::{bail, Context, Result};
use ssnail_convert::{convert, Options};
use ssnail_core::{Machine as Core, Numerics, Ssnail};
use ssnail_format::ggml::GgmlType;
use ssnail_format::image::{rt, BASE};
use ssnail_mega65::{KeyScript, Machine, CPU_HZ};
use ssnail_testkit::llama_vocab;
use ssnail_testkit::models::{self, ModelOpts};
use ssnail_tokenizer::image::{image_memory, tables_only_image};
use ssnail_tokenizer::{ImageTables, ImageTokenizer, Vocab};
use std::path::{Path, PathBuf};

/// 60-character lines (and the 59-character line of the first measurement).
const LINES: &[&str] = &[
    "The quick brown fox jumps over the lazy dog, and it's 2024.",
    "The quick brown fox jumps over the lazy dog, and it is 2024.",
    "Once upon a time, there was a little girl named Lily. She lo",
    "What is the capital of France? Tell me in one short sentence",
    "I'm sure we'll see 3 dragons at 10:45 near the old mill, ok?",
];

const FLAT_PTR: u32 = 0xF0; // hw.s keeps its 32-bit flat pointer here

/// An image file holding only a header and the tokenizer tables of a vocabulary.
fn tables_image(gguf: &Path) -> Result<Vec<u8>> {
    let g = ssnail_gguf::Gguf::open(gguf).with_context(|| format!("{}", gguf.display()))?;
    let vocab = Vocab::from_gguf(&g).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(tables_only_image(&ImageTables::build(&vocab)))
}

fn test_model(opts: ModelOpts) -> Result<Vec<u8>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("m.gguf");
    models::write(&path, &models::build(&opts));
    let g = ssnail_gguf::Gguf::open(&path)?;
    let o = Options {
        ctx: Some(64),
        ..Options::default()
    };
    Ok(convert(&g, &o)?.image)
}

/// The program's chat overlay, beside it on the SD card of every run.
static OVL: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

/// The MEGA65 with the program started, `img` as the only model on the SD card, keys scheduled.
struct Run {
    m: Machine,
    _sd: tempfile::TempDir,
}

impl Run {
    fn new(prg: &[u8], img: &[u8], keys: &str) -> Result<Run> {
        let sd = tempfile::tempdir()?;
        std::fs::write(sd.path().join("MODEL.SSNAIL"), img)?;
        std::fs::write(
            sd.path().join("SSNAIL.OVL"),
            OVL.get().context("no overlay")?,
        )?;
        let mut m = Machine::new();
        let mut core = Core::new(64 << 20);
        core.numerics = Numerics::Hardware;
        m.attach_ssnail(Ssnail::new(core));
        m.set_sd_dir(sd.path().to_path_buf());
        let (_, entry) = m.load_prg(prg, None).map_err(|e| anyhow::anyhow!("{e}"))?;
        m.keys.schedule(
            &KeyScript::parse(keys).map_err(|e| anyhow::anyhow!("{e}"))?,
            0,
        );
        m.start_at(entry);
        Ok(Run { m, _sd: sd })
    }

    /// The instruction bytes at PC (the program runs unmapped in bank 0).
    fn insn(&mut self) -> [u8; 3] {
        let pc = self.m.pc as u32;
        let b = self.m.peek_phys(pc, 3);
        [b[0], b[1], b[2]]
    }

    /// One instruction; returns its cycles.
    fn step(&mut self) -> u64 {
        let c = self.m.cycles;
        self.m.run(1);
        self.m.cycles - c
    }

    fn serial(&self) -> &[u8] {
        &self.m.serial
    }

    fn generated(&self) -> u32 {
        ssnail_core::runtime(&self.m.ssnail.device.as_ref().unwrap().machine).generated
    }

    fn flat_ptr(&mut self) -> u32 {
        u32::from_le_bytes(self.m.peek_phys(FLAT_PTR, 4).try_into().unwrap())
    }

    fn guard(&self, limit_s: f64, what: &str) -> Result<()> {
        if self.m.seconds() > limit_s {
            bail!(
                "{what}: not done after {limit_s} emulated seconds; transcript:\n{}",
                String::from_utf8_lossy(self.serial())
            );
        }
        Ok(())
    }

    /// Steps through the load; returns (cycles per sector outside the hypervisor, sectors
    /// measured). The window runs from the readfile a tenth into the file to the last one, so
    /// reads before the load (CONFIG.TXT) and its start are left out; the progress row redraws
    /// (a few per second) are in.
    fn load(&mut self) -> Result<(f64, u64)> {
        // (cycle at the readfile, trap cycles before it)
        let mut reads: Vec<(u64, u64)> = Vec::new();
        let mut trap_cycles = 0u64;
        while !String::from_utf8_lossy(self.serial()).contains("Loaded") {
            self.guard(300.0, "load")?;
            let trap = self.insn() == [0x8D, 0x40, 0xD6];
            if trap && self.m.a == 0x1A {
                reads.push((self.m.cycles, trap_cycles));
            }
            let c = self.step();
            if trap {
                trap_cycles += c;
            }
        }
        if reads.len() < 20 {
            bail!(
                "only {} readfile calls: file too small to measure",
                reads.len()
            );
        }
        let (c0, t0) = reads[reads.len() / 10];
        let (c1, t1) = reads[reads.len() - 1];
        let sectors = (reads.len() - 1 - reads.len() / 10) as u64;
        Ok((((c1 - c0) - (t1 - t0)) as f64 / sectors as f64, sectors))
    }

    /// Steps until `text` has appeared `n` times in the transcript; returns the cycle at which the
    /// n-th one's last byte was written.
    fn until(&mut self, text: &str, n: usize, limit_s: f64) -> Result<u64> {
        loop {
            let s = String::from_utf8_lossy(self.serial());
            if s.matches(text).count() >= n {
                return Ok(self.m.cycles);
            }
            drop(s);
            self.guard(limit_s, text)?;
            self.step();
        }
    }
}

fn tokenize_bench(prg: &[u8], img: &[u8]) -> Result<((f64, u64), Vec<u64>)> {
    let mut keys = String::from("{RETURN}");
    for l in LINES {
        keys.push_str(&format!("/tokens {l}{{RETURN}}"));
    }
    let mut r = Run::new(prg, img, &keys)?;
    let load = r.load()?;
    let mut cycles = Vec::new();
    let mem = image_memory(img).map_err(|e| anyhow::anyhow!("{e}"))?;
    let reference = ImageTokenizer::new(&mem).map_err(|e| anyhow::anyhow!("{e}"))?;
    for l in LINES {
        let echo = format!("> /tokens {l}\n");
        let t0 = r.until(&echo, 1, 600.0)?;
        let n = String::from_utf8_lossy(r.serial()).matches("\n[").count();
        let t1 = r.until("\n[", n + 1, 600.0)?;
        cycles.push(t1 - t0);
        // The figure counts only if the ids are the PC image tokenizer's.
        let n = String::from_utf8_lossy(r.serial()).matches("]\n").count();
        r.until("]\n", n + 1, 600.0)?;
        let s = String::from_utf8_lossy(r.serial()).into_owned();
        let at = s.rfind(&echo).unwrap() + echo.len();
        let got = s[at..].lines().next().unwrap_or("");
        let want: Vec<String> = reference
            .encode(l, true)
            .iter()
            .map(|t| t.to_string())
            .collect();
        if got != format!("[{}]", want.join(",")) {
            bail!("{l:?}: the MEGA65 printed {got}, the PC image tokenizer gives {want:?}");
        }
    }
    Ok((load, cycles))
}

/// Per generated token: cycles from the publication (count goes up) to the program being back at
/// its RUN/STOP check after reading the count and printing.
fn generate_bench(prg: &[u8], img: &[u8]) -> Result<Vec<u64>> {
    let keys = "{RETURN}/temp 0{RETURN}/n 24{RETURN}the cat sat on the mat{RETURN}";
    let mut r = Run::new(prg, img, keys)?;
    r.until("[24 tokens per answer]", 1, 300.0)?;
    let mut last = r.generated();
    let mut out = Vec::new();
    // (publication cycle, count seen by the program's far read)
    let mut pending: Option<(u64, bool)> = None;
    while !String::from_utf8_lossy(r.serial()).contains("tokens/s]") {
        r.guard(400.0, "generation")?;
        let i = r.insn();
        if let Some((t_pub, seen)) = pending {
            // [zp],Z read (EA prefix + LDA (zp),Z) of the runtime block's generated count
            if !seen && i[0] == 0xEA && i[1] == 0xB2 && (r.flat_ptr() & !3) == BASE + rt::GENERATED
            {
                pending = Some((t_pub, true));
            } else if seen && i == [0xAD, 0x10, 0xD6] {
                out.push(r.m.cycles - t_pub);
                pending = None;
            }
        }
        let before = r.m.cycles;
        r.step();
        let g = r.generated();
        if g != last {
            last = g;
            if pending.is_none() {
                pending = Some((before, false));
            }
        }
    }
    Ok(out)
}

/// Sampling (spec §7.6), per sampled token: the cycles from the end of one job (the program sees
/// STATUS idle) to the start of the next (the GO write), i.e. choosing the token over V logits,
/// writing it, showing it and starting the job. The llama test model's header is given V output
/// rows: its own 400 logits and after them V - 400 fixed logits (uniform in -6..6, xorshift32)
/// written into SSNAIL memory once the model is loaded, so the scan reads V values. Default
/// settings (temperature 0.8, top-k 40, penalty 1.15 over 64 tokens), seed 7.
fn sampling_bench(prg: &[u8], v: u32, choose_at: Option<u16>) -> Result<(Vec<u64>, Vec<u64>)> {
    let mut img = test_model(
        ModelOpts {
            dim: 128,
            n_heads: 4,
            n_kv_heads: 2,
            hidden: 256,
            ..ModelOpts::llama()
        }
        .with_wtype(GgmlType::Q4_0),
    )?;
    let out = ssnail_format::rd_u32(&img, ssnail_format::image::h::OUTPUT);
    let real = ssnail_format::rd_u32(&img, ssnail_format::image::h::OUTDIM);
    ssnail_format::wr_u32(&mut img, ssnail_format::image::h::OUTDIM, v);
    let n = 9;
    let keys =
        format!("{{RETURN}}/seed 7{{RETURN}}/n {n}{{RETURN}}the cat sat on the mat{{RETURN}}");
    let mut r = Run::new(prg, &img, &keys)?;
    r.until(&format!("[{n} tokens per answer]"), 1, 300.0)?;
    let dev = r.m.ssnail.device.as_mut().context("no SSNAIL device")?;
    let mut x = 12345u32;
    for i in real..v {
        x = ssnail_format::sampler::xorshift32(x);
        let f = (x >> 8) as f32 / 16_777_216.0 * 12.0 - 6.0;
        dev.machine
            .write_bytes((out + 4 * i) as u64, &f.to_le_bytes());
    }
    let mut cycles = Vec::new();
    let mut choose = Vec::new();
    // (return address, cycle) of a running smp_choose call
    let mut call: Option<(u16, u64)> = None;
    let (mut jobs, mut was_busy, mut end) = (r.m.ssnail.jobs, false, None);
    while !String::from_utf8_lossy(r.serial()).contains("tokens/s]") {
        r.guard(600.0, "sampling")?;
        if Some(r.m.pc) == choose_at {
            // JSR left the address of its last byte on the stack (low byte first, page $01)
            let st = r.m.peek_phys(0x100 + (r.m.sp as u32 & 0xFF) + 1, 2);
            call = Some((
                u16::from_le_bytes([st[0], st[1]]).wrapping_add(1),
                r.m.cycles,
            ));
        } else if let Some((ret, t0)) = call {
            if r.m.pc == ret {
                choose.push(r.m.cycles - t0);
                call = None;
            }
        }
        r.step();
        let busy = r.m.ssnail.busy();
        if was_busy && !busy {
            end = Some(r.m.cycles);
        }
        if r.m.ssnail.jobs != jobs {
            jobs = r.m.ssnail.jobs;
            if let Some(e) = end.take() {
                cycles.push(r.m.cycles - e);
            }
        }
        was_busy = busy;
    }
    Ok((cycles, choose))
}

/// The address of `_smp_choose` in the ld65 map file next to the PRG.
fn choose_address(map: &Path) -> Option<u16> {
    let text = std::fs::read_to_string(map).ok()?;
    let line = text.lines().find(|l| l.starts_with("_smp_choose "))?;
    u16::from_str_radix(line.split_whitespace().nth(1)?.trim_start_matches("00"), 16).ok()
}

fn stats(v: &[u64]) -> String {
    let max = v.iter().max().copied().unwrap_or(0);
    let mean = v.iter().sum::<u64>() as f64 / v.len().max(1) as f64;
    format!(
        "mean {mean:.0}, max {max} cycles ({:.3} ms max) over {} tokens",
        max as f64 * 1e3 / CPU_HZ as f64,
        v.len()
    )
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sampling_only = args.iter().any(|a| a == "--sampling");
    let smollm2 = args.iter().any(|a| a == "--smollm2");
    let dir = tempfile::tempdir()?;
    // The ld65 map (for smp_choose's address): beside the given PRG as .map, or the build's.
    let (prg, map) = match args.iter().position(|a| a == "--prg") {
        Some(i) => {
            let path = args.get(i + 1).context("--prg needs a file")?;
            let prg = std::fs::read(path).with_context(|| format!("{path}: cannot read"))?;
            let ovl = common::overlay_beside(Path::new(path)).map_err(anyhow::Error::msg)?;
            let _ = OVL.set(ovl);
            (prg, Path::new(path).with_extension("map"))
        }
        None => {
            let prg = common::build_prg(dir.path()).map_err(anyhow::Error::msg)?;
            let _ = OVL.set(common::built_overlay(dir.path()).map_err(anyhow::Error::msg)?);
            (prg, dir.path().join("mega65/ssnail.map"))
        }
    };
    let cache = ssnail_testkit::cache::dir();
    let mut families: Vec<(&str, PathBuf)> = vec![
        ("llama (llama-spm, SPM)", llama_vocab::gguf("llama-spm")),
        ("gpt2 (gpt-2, BPE)", llama_vocab::gguf("gpt-2")),
        ("bert (bert-bge, WordPiece)", llama_vocab::gguf("bert-bge")),
    ];
    if smollm2 {
        families.push((
            "gpt2 (SmolLM2, BPE digits first)",
            cache.join(ssnail_testkit::cache::SMOLLM2),
        ));
    }
    println!("MEGA65 program, emulated 45GS02 at {CPU_HZ} Hz (cycles)");
    if !sampling_only {
        for (name, gguf) in &families {
            let img = tables_image(gguf)?;
            let ((per_sector, sectors), tok) = tokenize_bench(&prg, &img)?;
            println!("{name}:");
            println!(
                "  load: {per_sector:.0} cycles per 512-byte sector outside the hypervisor ({sectors} sectors)"
            );
            for (l, c) in LINES.iter().zip(&tok) {
                println!(
                    "  tokenize {:>2} chars: {c:>9} cycles ({:.4} s)  {l:?}",
                    l.len(),
                    *c as f64 / CPU_HZ as f64
                );
            }
        }
        let llama = ModelOpts {
            dim: 128,
            n_heads: 4,
            n_kv_heads: 2,
            hidden: 256,
            ..ModelOpts::llama()
        };
        for (name, opts) in [
            ("llama", llama.with_wtype(GgmlType::Q4_0)),
            ("gpt2", ModelOpts::gpt2().with_wtype(GgmlType::Q8_0)),
        ] {
            let img = test_model(opts)?;
            let per_token = generate_bench(&prg, &img)?;
            println!(
                "{name} test model: host cycles per generated token (publication -> shown): {}",
                stats(&per_token)
            );
        }
        println!("bert: an encoder, no generated tokens");
    }
    let choose_at = choose_address(&map);
    for v in [512, 32_000, 49_152] {
        let (c, choose) = sampling_bench(&prg, v, choose_at)?;
        println!(
            "sampling, vocabulary {v}: cycles per sampled token on top of the job (job end -> next GO): {}",
            stats(&c)
        );
        if !choose.is_empty() {
            println!(
                "  of which choosing the token (smp_choose): {}",
                stats(&choose)
            );
        }
    }
    Ok(())
}

//! softbench: the software SSNAIL core's speed on the 45GS02, in emulated 40.5 MHz cycles of the
//! headless MEGA65 (the softcore_test PRG: mega65/testprg/softcore_test.c, the whole core built by cc65).
//!
//!     cargo run --release -p ssnail-mega65-program --example softbench [-- --defs "-D…"]
//!         [--only gemv|tokens|stories] [--profile gemv|gemv-q8-RxC|gemv-q4-RxC|gemv-f16|gemv-f16-64|gemv-f32|gemv-bf16|token|token-q4|stories|stories-prompt|stories-late]
//!         [--image FILE.ssnail ...] [--sentence TEXT [--profile sentence]]
//!
//! * GEMV: one GEMV of 64 rows × 512 columns (8 rows for F16/F32/BF16) per weight format, Q8_0 at
//!   stories260K's and MiniLM's shapes (192 × 64, 64 × 192, 64 × 64; 384 × 384, 1536 × 384,
//!   384 × 1536), Q4_0 at 192 × 64 and 384 × 384, F16 and F32 at stories260K's shapes (64 × 64,
//!   64 × 172; F16 also 64 × 192, 192 × 64) and F16 at 384 × 384, as a job `SETN; GEMV; HALT`,
//!   minus the same job without the GEMV, divided by the weights.
//! * tokens: llama images of about 260 K, 1 M and 5 M parameters (ssnail-synthetic models converted
//!   at Q8_0 and Q4_0, context 64): the prompt's script run with 1 and with 3 generated tokens;
//!   cycles per token = the difference / 2, tokens/s at 40.5 MHz. Beside elya-snes's 6.88 tokens/s
//!   for 102,400 weights on a 2.68 MHz 65816 (/work/shared/seeds/elya-snes-README.txt).
//! * stories: stories260K's shape as the software-core image held it (Q8_0, hidden padded to 192,
//!   vocabulary 512, tied): cycles per generated token as above and per prompt token ((a prompt of
//!   10 − a prompt of 2) / 8, each generating 1); and per generated token at positions 40-41 of
//!   its context of 64 (after a prompt of 40), with the cycles each position adds (ATTN's slope).
//! * --profile gemv|gemv-f16|gemv-f32|gemv-bf16|token|stories: the Q8_0 (F16, F32, BF16) GEMV above
//!   (gemv-f16-64: F16 at 64 × 64; gemv-q8-ROWSxCOLS, gemv-q4-ROWSxCOLS: Q8_0, Q4_0 at that shape) or
//!   one token of the 260 K Q8_0 model (or of stories260K's shape; stories-prompt: its prompt of
//!   10; stories-late: of 40, where ATTN's growth with the position shows) stepped an instruction at a time, the cycles spent in each function (its own code, not its callees),
//!   from the ld65 debug and label files (each instruction's functions down to 2 % of it, or
//!   0.1 % with SOFTBENCH_ALL=1 in the environment).
//!   SOFTBENCH_CALLERS=pusheax,ldeaxysp,... adds those functions' cycles and calls by their caller
//!   (the function whose JSR reached them: where cc65's runtime helpers are paid for).
//!
//! * --image FILE: cycles per token and tokens/s of a decoder image of one's own instead of the
//!   synthetic models (several: a table, e.g. one `ssnail convert` made with and one without
//!   `--core soft`); with `--profile token`, where one position of the first image goes.
//! * --sentence TEXT with --image FILE (an encoder, e.g. all-MiniLM-L6-v2 `--core soft --mem-mb
//!   64`): the cycles of the whole job for TEXT as the image's tokenizer encodes it (on an R4
//!   board when the image needs more than an R3's 8 MiB); with `--profile sentence`, where they go.
//!
//! Every job's SSNAIL memory afterwards must equal ssnail_core's (hardware numerics), or the
//! benchmark stops: a faster core that computes something else is not measured.

#[path = "../tests/softcore_test_prg/mod.rs"]
mod softcore_test_prg;

use anyhow::{bail, Context, Result};
use ssnail_core::{Board, Host, Machine as Core, Numerics, Ssnail};
use ssnail_format::ggml::{quantize_native, GgmlType};
use ssnail_format::image::{rt, Header, BASE};
use ssnail_format::isa::{Instr, Op};
use ssnail_mega65::{Machine, StopReason, CPU_HZ};
use ssnail_mega65_program as common;
use ssnail_testkit::models::ModelOpts;
use ssnail_testkit::rng::Rng;
use std::collections::HashMap;
use std::path::Path;

/// elya-snes: 102,400 weights, 6.88 tokens/s (SlowROM, engine with the game) on a 2.68 MHz 65816.
const ELYA_WEIGHTS: f64 = 102_400.0;
const ELYA_TOKENS_PER_S: f64 = 6.88;

struct CountSyncs(u32);
impl Host for CountSyncs {
    fn on_sync(&mut self, _m: &mut Core) {
        self.0 += 1;
    }
}

/// `mem` after `job` in the Rust core, hardware numerics, and its SYNC count.
fn reference(mem: &[u8], job: u32) -> Result<(Vec<u8>, u32)> {
    let mut m = Core::new(mem.len());
    m.numerics = Numerics::Hardware;
    m.mem_mut().copy_from_slice(mem);
    let mut host = CountSyncs(0);
    if let Err(f) = m.run(job, &mut host) {
        bail!("the Rust core faulted: {f:?}");
    }
    Ok((m.mem().to_vec(), host.0))
}

/// Runs a job on the 45GS02, checks it against the Rust core; the cycles and the memory after.
fn measured(
    prg: &softcore_test_prg::Prg,
    mem: &[u8],
    job: u32,
    what: &str,
) -> Result<(u64, Vec<u8>)> {
    let r = softcore_test_prg::run_on(board_for(mem), prg, mem, job, 3600)
        .map_err(anyhow::Error::msg)?;
    if r.state == softcore_test_prg::SOFT_FAULT {
        bail!(
            "{what}: the software core faulted (error {} at ${:07X})",
            r.error,
            r.fault_pc
        );
    }
    if r.state != softcore_test_prg::SOFT_HALT {
        bail!("{what}: soft_run ended with {}", r.state);
    }
    let (want, syncs) = reference(mem, job)?;
    if r.mem != want || r.syncs != syncs {
        let d: Vec<usize> = (0..want.len()).filter(|&i| r.mem[i] != want[i]).collect();
        let first = d.first().map_or(String::new(), |&i| {
            let o = i & !3;
            format!(
                ", {} bytes, the first at ${:07X}: {:02X?} instead of {:02X?}",
                d.len(),
                BASE as usize + i,
                &r.mem[o..o + 4],
                &want[o..o + 4]
            )
        });
        bail!("{what}: SSNAIL memory or the SYNC count differs from the Rust core's{first}");
    }
    Ok((r.cycles, r.mem))
}

const PROG: u32 = BASE + 0x100;

/// The board that holds `mem`: an R3 (8 MiB of HyperRAM at $8000000) when it fits, else an R4
/// (64 MiB of SDRAM there).
fn board_for(mem: &[u8]) -> Board {
    if mem.len() > 8 << 20 {
        Board::R4
    } else {
        Board::R3
    }
}

fn put(mem: &mut [u8], a: u32, b: &[u8]) {
    let o = (a - BASE) as usize;
    mem[o..o + b.len()].copy_from_slice(b);
}

/// A GEMV job: `rows` random rows of `cols` in `fmt` (scaled as a model's), a random input, and
/// the script `SETN; GEMV; HALT` at PROG (without the GEMV when `with_gemv` is false).
fn gemv_job(fmt: GgmlType, rows: u32, cols: u32, with_gemv: bool) -> Vec<u8> {
    let mut rng = Rng::new(7);
    let mut mem = vec![0u8; 1 << 20];
    let x: Vec<u8> = (0..cols)
        .flat_map(|_| (rng.normal() as f32).to_le_bytes())
        .collect();
    let mut w = Vec::new();
    for _ in 0..rows {
        let row: Vec<f32> = (0..cols)
            .map(|_| (rng.normal() / (cols as f64).sqrt()) as f32)
            .collect();
        quantize_native(fmt, &row, &mut w);
    }
    // (the weights above y's 4 bytes a row: MiniLM's 1536 rows need more than 4 KB)
    let wa = BASE + 0x4000 + (4 * rows).max(0x1000).next_multiple_of(0x1000);
    let (xa, za) = (BASE + 0x1000, BASE + 0x4000);
    put(&mut mem, xa, &x);
    put(&mut mem, wa, &w);
    let mut prog = vec![Instr::new(Op::SetN, 0, 0, cols, rows, 0)];
    if with_gemv {
        prog.push(Instr::new(Op::Gemv, fmt as u8, 0, wa, xa, za));
    }
    prog.push(Instr::new(Op::Halt, 0, 0, 0, 0, 0));
    let code: Vec<u8> = prog.iter().flat_map(|i| i.encode()).collect();
    put(&mut mem, PROG, &code);
    mem
}

/// One GEMV: (cycles of `SETN; GEMV; HALT` − cycles of `SETN; HALT`) / weights.
fn gemv_cycles_per_weight(
    prg: &softcore_test_prg::Prg,
    fmt: GgmlType,
    rows: u32,
    cols: u32,
) -> Result<f64> {
    let mut cycles = Vec::new();
    for with_gemv in [false, true] {
        let mem = gemv_job(fmt, rows, cols, with_gemv);
        cycles.push(measured(prg, &mem, PROG, &format!("GEMV {}", fmt.name()))?.0);
    }
    Ok((cycles[1] - cycles[0]) as f64 / (rows * cols) as f64)
}

/// A llama of these shapes (the §10.1 vocabulary of 400 tokens, untied), converted at context 64.
fn llama(dim: usize, layers: usize, hidden: usize, heads: usize, wtype: GgmlType) -> Vec<u8> {
    let opts = ModelOpts {
        dim,
        n_layers: layers,
        n_heads: heads,
        n_kv_heads: heads,
        hidden,
        ..ModelOpts::llama()
    };
    common::test_images::image(opts.with_wtype(wtype), 64)
}

/// stories260K's shape as the software-core image held it before its gate and up kept their 172
/// rows (spec §4.4; `--image` of a converted stand-in times today's layout, 12,800 weights a
/// token fewer): dim 64, 5 layers, 8 heads, 4 KV heads, hidden 192 (172 zero-padded, so every
/// matrix is whole Q8_0 blocks), vocabulary 512,
/// the classifier tied to the embedding; context 64. Random weights of a model's scale (N(0,1)/√cols,
/// the embedding N(0,1), gains 1 + 0.1·N(0,1)) and the §10.1 SentencePiece vocabulary with
/// fillers up to 512 tokens, written as a GGUF and converted at `wtype`.
fn stories260k(wtype: GgmlType) -> Vec<u8> {
    use ssnail_gguf::writer::GgufWriter;
    let (dim, layers, heads, kv_heads, hidden, vocab) = (64usize, 5, 8, 4, 192, 512);
    let mut v = ssnail_testkit::vocab::spm();
    let mut i = 0;
    while v.tokens.len() < vocab {
        let t = format!("▁v{i}");
        if !v.tokens.contains(&t) {
            v.scores.push(t.chars().count() as f32);
            v.types.push(1);
            v.tokens.push(t);
        }
        i += 1;
    }
    let opts = ModelOpts {
        dim,
        n_layers: layers,
        n_heads: heads,
        n_kv_heads: kv_heads,
        hidden,
        context_length: 64,
        tied: true,
        ..ModelOpts::llama()
    };
    let mut w = GgufWriter::new();
    w.meta_str("general.architecture", "llama")
        .meta_u32("llama.context_length", 64)
        .meta_u32("llama.embedding_length", dim as u32)
        .meta_u32("llama.block_count", layers as u32)
        .meta_u32("llama.feed_forward_length", hidden as u32)
        .meta_u32("llama.attention.head_count", heads as u32)
        .meta_u32("llama.attention.head_count_kv", kv_heads as u32)
        .meta_f32("llama.attention.layer_norm_rms_epsilon", 1e-5)
        .meta_f32("llama.rope.freq_base", 10000.0);
    v.write(&mut w, &opts);
    let mut rng = Rng::new(260);
    let mut tensor = |w: &mut GgufWriter, name: &str, rows: usize, cols: usize, kind: u8| {
        let x: Vec<f32> = (0..rows * cols)
            .map(|_| match kind {
                0 => (rng.normal() / (cols as f64).sqrt()) as f32,
                1 => rng.normal() as f32,
                _ => (1.0 + 0.1 * rng.normal()) as f32,
            })
            .collect();
        let (t, shape) = if kind == 2 {
            (GgmlType::F32, vec![cols as u64])
        } else {
            (wtype, vec![cols as u64, rows as u64])
        };
        let mut bytes = Vec::new();
        quantize_native(t, &x, &mut bytes);
        w.tensor(name, &shape, t, bytes)
            .expect("a stories260K tensor");
    };
    let kvd = kv_heads * (dim / heads);
    tensor(&mut w, "token_embd.weight", vocab, dim, 1);
    for l in 0..layers {
        let p = format!("blk.{l}");
        tensor(&mut w, &format!("{p}.attn_norm.weight"), 1, dim, 2);
        tensor(&mut w, &format!("{p}.attn_q.weight"), dim, dim, 0);
        tensor(&mut w, &format!("{p}.attn_k.weight"), kvd, dim, 0);
        tensor(&mut w, &format!("{p}.attn_v.weight"), kvd, dim, 0);
        tensor(&mut w, &format!("{p}.attn_output.weight"), dim, dim, 0);
        tensor(&mut w, &format!("{p}.ffn_norm.weight"), 1, dim, 2);
        tensor(&mut w, &format!("{p}.ffn_gate.weight"), hidden, dim, 0);
        tensor(&mut w, &format!("{p}.ffn_up.weight"), hidden, dim, 0);
        tensor(&mut w, &format!("{p}.ffn_down.weight"), dim, hidden, 0);
    }
    tensor(&mut w, "output_norm.weight", 1, dim, 2);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("stories260k.gguf");
    w.write(&path).expect("the stories260K GGUF");
    let g = ssnail_gguf::Gguf::open(&path).expect("the stories260K GGUF reads back");
    let o = ssnail_convert::Options {
        ctx: Some(64),
        ..ssnail_convert::Options::default()
    };
    ssnail_convert::convert(&g, &o)
        .expect("stories260K converts")
        .image
}

/// stories260K's weights per token: its matrices once each, the classifier once.
const STORIES260K_WEIGHTS: usize = 5 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 64 * 192) + 512 * 64;

/// The image's parameters: every weight the converter stored (its tensors' element counts).
fn parameters(dim: usize, layers: usize, hidden: usize) -> usize {
    layers * (4 * dim * dim + 3 * dim * hidden + 2 * dim) + dim + 2 * 400 * dim
}

/// SSNAIL memory with `prompt` in the token buffer and the runtime block set for `n_generate`.
fn with_prompt(img: &[u8], prompt: &[u32], n_generate: u32) -> Result<(Vec<u8>, u32)> {
    let (dev, _) = Ssnail::load_bytes(img, None).context("loading the image")?;
    let h: Header = dev.header();
    let mut mem = dev.machine.mem().to_vec();
    if mem.len() > 64 << 20 {
        bail!(
            "the image needs {} bytes of SSNAIL memory, more than an R4 board's 64 MiB of SDRAM",
            mem.len()
        );
    }
    let mut poke = |addr: u32, v: u32| {
        let o = (addr - BASE) as usize;
        mem[o..o + 4].copy_from_slice(&v.to_le_bytes());
    };
    for (i, &t) in prompt.iter().enumerate() {
        poke(h.tokens + 4 * i as u32, t);
    }
    poke(BASE + rt::POS, 0);
    poke(BASE + rt::PROMPT_LEN, prompt.len() as u32);
    poke(BASE + rt::N_GENERATE, n_generate);
    Ok((mem, h.code))
}

/// SSNAIL memory and job for `text` as the image's own tokenizer encodes it (an encoder: the
/// whole sentence is the prompt, nothing generated).
fn with_sentence(img: &[u8], text: &str) -> Result<(Vec<u8>, u32, usize)> {
    let (dev, _) = Ssnail::load_bytes(img, None).context("loading the image")?;
    let tok = ssnail_tokenizer::ImageTokenizer::new(dev.machine.mem())
        .map_err(|e| anyhow::anyhow!("the image's tokenizer: {e}"))?;
    let ids = tok.encode(text, true);
    let (mem, job) = with_prompt(img, &ids, 0)?;
    Ok((mem, job, ids.len()))
}

/// Cycles per token: (run with 3 generated − run with 1) / the tokens the second made more
/// (the runtime block's count: a model may stop at its end token), after a 2-token prompt: the
/// generated tokens at positions 2 and 3.
fn cycles_per_token(prg: &softcore_test_prg::Prg, img: &[u8], what: &str) -> Result<f64> {
    cycles_per_token_after(prg, img, &[1, 15], what)
}

/// The same after `prompt`: the generated tokens at positions prompt.len() and prompt.len() + 1.
fn cycles_per_token_after(
    prg: &softcore_test_prg::Prg,
    img: &[u8],
    prompt: &[u32],
    what: &str,
) -> Result<f64> {
    let mut c = Vec::new();
    for n in [1, 3] {
        let (mem, job) = with_prompt(img, prompt, n)?;
        let (cycles, after) = measured(prg, &mem, job, what)?;
        let o = rt::GENERATED as usize;
        c.push((cycles, u32::from_le_bytes(after[o..o + 4].try_into()?)));
    }
    if c[1].1 <= c[0].1 {
        bail!("{what}: no more tokens with n_generate 3 than with 1 ({c:?})");
    }
    Ok((c[1].0 - c[0].0) as f64 / (c[1].1 - c[0].1) as f64)
}

/// Cycles per prompt token: (a prompt of 10 − a prompt of 2, each generating 1) / 8.
fn cycles_per_prompt_token(prg: &softcore_test_prg::Prg, img: &[u8], what: &str) -> Result<f64> {
    let mut c = Vec::new();
    for prompt in [&[1u32, 15][..], &[1, 15, 40, 41, 42, 43, 44, 45, 46, 47]] {
        let (mem, job) = with_prompt(img, prompt, 1)?;
        c.push(measured(prg, &mem, job, what)?.0);
    }
    Ok((c[1] - c[0]) as f64 / 8.0)
}

/// The PRG's functions: (start, name), from ld65's label file (everything exported, the
/// runtime library too) and debug file (the C files' static functions), sorted.
fn functions(out: &Path) -> Result<Vec<(u16, String)>> {
    let mut f: HashMap<u16, String> = HashMap::new();
    let lbl = std::fs::read_to_string(out.join("mega65/softcore_test.lbl"))?;
    for l in lbl.lines() {
        let p: Vec<&str> = l.split_whitespace().collect();
        if let [_, a, n] = p[..] {
            // cc65's local labels (L01A2) and ca65's cheap locals are not functions
            let n = n.trim_start_matches('.');
            let local = n.starts_with('@')
                || (n.len() == 5
                    && n.starts_with('L')
                    && n[1..].chars().all(|c| c.is_ascii_hexdigit()));
            if !local {
                f.insert(u16::from_str_radix(a, 16)?, n.into());
            }
        }
    }
    let dbg = std::fs::read_to_string(out.join("mega65/softcore_test.dbg"))?;
    for l in dbg.lines().filter(|l| l.starts_with("sym\t")) {
        let field = |k: &str| {
            l.split([',', '\t'])
                .find_map(|kv| kv.strip_prefix(k).map(|v| v.trim_matches('"').to_string()))
        };
        if let (Some(name), Some(val), Some("lab")) =
            (field("name="), field("val=0x"), field("type=").as_deref())
        {
            if name.starts_with('_') && field("size=").is_some() {
                f.insert(u16::from_str_radix(&val, 16)?, name);
            }
        }
    }
    let mut v: Vec<(u16, String)> = f.into_iter().collect();
    v.sort();
    Ok(v)
}

/// The job `what` stepped instruction by instruction: cycles per function, most first.
fn profile(
    prg: &softcore_test_prg::Prg,
    out: &Path,
    what: &str,
    mem: &[u8],
    job: u32,
) -> Result<()> {
    let funcs = functions(out)?;
    let mut m = Machine::new();
    softcore_test_prg::set_board(&mut m, board_for(mem));
    let entry = softcore_test_prg::load(&mut m, prg).map_err(anyhow::Error::msg)?;
    m.poke_phys(BASE, mem);
    m.poke_phys(0x400, &job.to_le_bytes());
    m.poke_phys(0x404, &(BASE + mem.len() as u32).to_le_bytes());
    m.start_at(entry);
    let mut per: HashMap<usize, u64> = HashMap::new();
    let mut calls: HashMap<usize, u64> = HashMap::new();
    // softcore.c's sc_ins[0]: the opcode being executed, for cycles per SSNAIL instruction
    let dbg = std::fs::read_to_string(out.join("mega65/softcore_test.dbg"))?;
    let ins = dbg
        .lines()
        .filter(|l| l.starts_with("sym\t") && l.contains("name=\"_sc_ins\""))
        .find_map(|l| l.split(',').find_map(|f| f.strip_prefix("val=0x")))
        .map(|v| u32::from_str_radix(v, 16))
        .context("no _sc_ins in the debug file")??;
    let mut per_op: HashMap<u8, u64> = HashMap::new();
    let mut per_op_fn: HashMap<(u8, usize), u64> = HashMap::new();
    // SOFTBENCH_CALLERS=f,g,...: the cycles and calls of those functions (cc65's runtime helpers
    // such as pusheax) by the function that called them, the JSR's return address on the stack
    // (page 1: cc65's programs run with the 6502 stack) giving the caller
    let helpers: Vec<usize> = std::env::var("SOFTBENCH_CALLERS")
        .map(|v| {
            v.split(',')
                .filter_map(|n| funcs.iter().position(|(_, f)| f == n))
                .collect()
        })
        .unwrap_or_default();
    let mut by_caller: HashMap<(usize, usize), (u64, u64)> = HashMap::new();
    let mut inside: Option<(usize, usize, u16)> = None;
    loop {
        let pc = m.pc;
        let before = m.cycles;
        let fi = funcs.partition_point(|(a, _)| *a <= pc).saturating_sub(1);
        if inside.is_none() && funcs[fi].0 == pc && helpers.contains(&fi) {
            let s = m.sp;
            let r = m.peek_phys(0x100 | u32::from(s.wrapping_add(1) & 0xFF), 1)[0] as u16
                | (m.peek_phys(0x100 | u32::from(s.wrapping_add(2) & 0xFF), 1)[0] as u16) << 8;
            let ret = r.wrapping_add(1);
            let caller = funcs
                .partition_point(|(a, _)| *a <= ret.wrapping_sub(3))
                .saturating_sub(1);
            by_caller.entry((fi, caller)).or_default().1 += 1;
            inside = Some((fi, caller, ret));
        }
        let stop = m.run_one();
        if let Some((h, c, ret)) = inside {
            by_caller.entry((h, c)).or_default().0 += m.cycles - before;
            if m.pc == ret {
                inside = None;
            }
        }
        let i = funcs.partition_point(|(a, _)| *a <= pc).saturating_sub(1);
        *per.entry(i).or_default() += m.cycles - before;
        let op = m.peek_phys(ins, 1)[0];
        *per_op.entry(op).or_default() += m.cycles - before;
        *per_op_fn.entry((op, i)).or_default() += m.cycles - before;
        if funcs[i].0 == pc {
            *calls.entry(i).or_default() += 1;
        }
        match stop {
            Some(StopReason::Exit(0)) => break,
            Some(r) => bail!("the PRG stopped with {r:?}"),
            None => {}
        }
    }
    let total: u64 = per.values().sum();
    let mut ops: Vec<(u8, u64)> = per_op.into_iter().collect();
    ops.sort_by_key(|&(_, c)| std::cmp::Reverse(c));
    println!("| SSNAIL instruction | cycles | share |");
    println!("|---|---:|---:|");
    for &(op, c) in &ops {
        let name = Op::from_u8(op).map_or("?", |o| o.name());
        println!(
            "| {name} | {c} | {:.1} % |",
            100.0 * c as f64 / total as f64
        );
    }
    // the functions of the instructions above 2 % of the job, each down to 2 % of its own (0.1 %
    // with SOFTBENCH_ALL set)
    let all = std::env::var_os("SOFTBENCH_ALL").is_some();
    println!("| SSNAIL instruction: its functions (cycles) |");
    println!("|---|");
    for &(op, c) in &ops {
        if c * 50 < total && !all {
            break;
        }
        let mut f: Vec<(usize, u64)> = per_op_fn
            .iter()
            .filter(|((o, _), _)| *o == op)
            .map(|(&(_, i), &c)| (i, c))
            .collect();
        f.sort_by_key(|&(_, c)| std::cmp::Reverse(c));
        let list: Vec<String> = f
            .iter()
            .take_while(|&&(_, fc)| fc * 50 >= c || (all && fc * 1000 >= c))
            .map(|&(i, fc)| format!("{} {fc}", funcs[i].1))
            .collect();
        let name = Op::from_u8(op).map_or("?", |o| o.name());
        println!("| {name}: {} |", list.join(", "));
    }
    if !helpers.is_empty() {
        let mut v: Vec<((usize, usize), (u64, u64))> = by_caller.into_iter().collect();
        v.sort_by_key(|&(_, (c, _))| std::cmp::Reverse(c));
        println!("| helper | caller | cycles | calls |");
        println!("|---|---|---:|---:|");
        for ((h, c), (cy, n)) in v.into_iter().take(40) {
            println!("| {} | {} | {cy} | {n} |", funcs[h].1, funcs[c].1);
        }
    }
    let mut v: Vec<(usize, u64)> = per.into_iter().collect();
    v.sort_by_key(|&(_, c)| std::cmp::Reverse(c));
    println!("profile: {what}, {total} cycles");
    println!("| function | cycles | share | entries |");
    println!("|---|---:|---:|---:|");
    for (i, c) in v.into_iter().take(40) {
        println!(
            "| {} | {c} | {:.1} % | {} |",
            funcs[i].1,
            100.0 * c as f64 / total as f64,
            calls.get(&i).unwrap_or(&0)
        );
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut defs = String::new();
    let mut only = None;
    let mut prof = None;
    let mut images: Vec<String> = Vec::new();
    let mut sentence = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--defs" if i + 1 < args.len() => {
                defs = args[i + 1].clone();
                i += 1;
            }
            "--only" if i + 1 < args.len() => {
                only = Some(args[i + 1].clone());
                i += 1;
            }
            "--profile" if i + 1 < args.len() => {
                prof = Some(args[i + 1].clone());
                i += 1;
            }
            "--image" if i + 1 < args.len() => {
                images.push(args[i + 1].clone());
                i += 1;
            }
            "--sentence" if i + 1 < args.len() => {
                sentence = Some(args[i + 1].clone());
                i += 1;
            }
            a => bail!(
                "softbench: unknown argument {a:?} (--defs STR, --only gemv|tokens|stories, --profile gemv|gemv-q8-RxC|gemv-q4-RxC|gemv-f16|gemv-f32|gemv-bf16|token|token-q4|stories|stories-prompt|stories-late|sentence, --image FILE, --sentence TEXT)"
            ),
        }
        i += 1;
    }
    let dir = tempfile::tempdir()?;
    let prg = softcore_test_prg::build(dir.path(), &defs).map_err(anyhow::Error::msg)?;
    println!(
        "softcore_test PRG: {} bytes and {} from $E000, DEFS = {defs:?}",
        prg.bytes.len(),
        prg.hi.len()
    );
    if let Some(text) = &sentence {
        let f = images
            .first()
            .context("--sentence needs --image FILE (an encoder image)")?;
        let img = std::fs::read(f).with_context(|| format!("{f}: cannot read"))?;
        let (mem, job, n) = with_sentence(&img, text)?;
        let what = format!("{text:?} ({n} tokens) through {f}");
        if prof.as_deref() == Some("sentence") {
            return profile(&prg, dir.path(), &what, &mem, job);
        }
        let (c, _) = measured(&prg, &mem, job, &what)?;
        println!(
            "{what}: {c} cycles, {:.2} s at 40.5 MHz",
            c as f64 / CPU_HZ as f64
        );
        return Ok(());
    }
    if let (Some(f), Some("token")) = (images.first(), prof.as_deref()) {
        let img = std::fs::read(f).with_context(|| format!("{f}: cannot read"))?;
        let (mem, job) = with_prompt(&img, &[1], 1)?;
        let what = format!("one token (prompt of 1) of {f}");
        return profile(&prg, dir.path(), &what, &mem, job);
    }
    if !images.is_empty() {
        println!("| image | bytes | cycles per token | tokens/s |");
        println!("|---|---:|---:|---:|");
        for f in &images {
            let img = std::fs::read(f).with_context(|| format!("{f}: cannot read"))?;
            let c = cycles_per_token(&prg, &img, f)?;
            println!(
                "| {f} | {} | {c:.0} | {:.3} |",
                img.len(),
                CPU_HZ as f64 / c
            );
        }
        return Ok(());
    }
    let small = (64, 4, 192, 4);
    match prof.as_deref() {
        Some("gemv") => {
            let mem = gemv_job(GgmlType::Q8_0, 64, 512, true);
            return profile(&prg, dir.path(), "GEMV Q8_0 64 × 512", &mem, PROG);
        }
        Some(q) if q.starts_with("gemv-q8-") || q.starts_with("gemv-q4-") => {
            // gemv-q8-ROWSxCOLS, gemv-q4-ROWSxCOLS: a Q8_0 or Q4_0 GEMV of that shape
            let fmt = if q.starts_with("gemv-q8-") {
                GgmlType::Q8_0
            } else {
                GgmlType::Q4_0
            };
            let shape: Vec<u32> = q[8..]
                .split('x')
                .map(|n| n.parse::<u32>())
                .collect::<Result<Vec<u32>, _>>()
                .ok()
                .filter(|v| v.len() == 2 && v[0] > 0 && v[1] % 32 == 0)
                .with_context(|| format!("softbench: --profile {q}: ROWSxCOLS, COLS a multiple of 32"))?;
            let mem = gemv_job(fmt, shape[0], shape[1], true);
            let what = format!("GEMV {} {} × {}", fmt.name(), shape[0], shape[1]);
            return profile(&prg, dir.path(), &what, &mem, PROG);
        }
        Some(f @ ("gemv-f16" | "gemv-f32" | "gemv-bf16" | "gemv-f16-64")) => {
            let (fmt, rows, cols) = match f {
                "gemv-f16" => (GgmlType::F16, 8, 512),
                "gemv-f16-64" => (GgmlType::F16, 64, 64),
                "gemv-f32" => (GgmlType::F32, 8, 512),
                _ => (GgmlType::Bf16, 8, 512),
            };
            let mem = gemv_job(fmt, rows, cols, true);
            let what = format!("GEMV {} {rows} × {cols}", fmt.name());
            return profile(&prg, dir.path(), &what, &mem, PROG);
        }
        Some("stories") => {
            let (mem, job) = with_prompt(&stories260k(GgmlType::Q8_0), &[1], 1)?;
            let what = "one token (prompt of 1) of stories260K's shape, Q8_0";
            return profile(&prg, dir.path(), what, &mem, job);
        }
        Some("stories-prompt") => {
            let prompt = [1, 15, 40, 41, 42, 43, 44, 45, 46, 47];
            let (mem, job) = with_prompt(&stories260k(GgmlType::Q8_0), &prompt, 1)?;
            let what = "a prompt of 10 (positions 0-9) of stories260K's shape, Q8_0";
            return profile(&prg, dir.path(), what, &mem, job);
        }
        Some("stories-late") => {
            let prompt: Vec<u32> = [1, 15].into_iter().chain(40..78).collect();
            let (mem, job) = with_prompt(&stories260k(GgmlType::Q8_0), &prompt, 1)?;
            let what = "a prompt of 40 (positions 0-39) of stories260K's shape, Q8_0";
            return profile(&prg, dir.path(), what, &mem, job);
        }
        Some(t @ ("token" | "token-q4")) => {
            let (d, l, h, n) = small;
            let wtype = if t == "token" {
                GgmlType::Q8_0
            } else {
                GgmlType::Q4_0
            };
            let (mem, job) = with_prompt(&llama(d, l, h, n, wtype), &[1], 1)?;
            let what = format!(
                "one token (prompt of 1) of the 260 K {} llama",
                wtype.name()
            );
            return profile(&prg, dir.path(), &what, &mem, job);
        }
        Some(p) => bail!(
            "softbench: --profile {p:?}: gemv, gemv-q8-ROWSxCOLS, gemv-q4-ROWSxCOLS, gemv-f16, gemv-f32, gemv-bf16, token, token-q4, stories, stories-prompt or stories-late"
        ),
        None => {}
    }
    if only.is_none() || only.as_deref() == Some("stories") {
        let img = stories260k(GgmlType::Q8_0);
        let what = "stories260K's shape, Q8_0";
        let g = cycles_per_token(&prg, &img, what)?;
        let p = cycles_per_prompt_token(&prg, &img, what)?;
        // a later position of its 64: generated tokens at positions 40-41 after a prompt of 40
        let long: Vec<u32> = [1, 15].into_iter().chain(40..78).collect();
        let g40 = cycles_per_token_after(&prg, &img, &long, what)?;
        let w = STORIES260K_WEIGHTS as f64;
        println!(
            "stories260K's shape (dim 64, 5 layers, 8/4 heads, hidden 192, vocab 512, tied), Q8_0, {w} weights a token:"
        );
        println!(
            "  generated: {g:.0} cycles a token, {:.2} tokens/s, {:.0} weights/s; prompt: {p:.0} cycles a token, {:.2} tokens/s",
            CPU_HZ as f64 / g,
            CPU_HZ as f64 / g * w,
            CPU_HZ as f64 / p
        );
        println!(
            "  generated at positions 40-41: {g40:.0} cycles a token, {:.2} tokens/s; {:.0} cycles more a position than at 2-3",
            CPU_HZ as f64 / g40,
            (g40 - g) / 38.0
        );
    }
    if only.as_deref() == Some("stories") {
        return Ok(());
    }
    if only.as_deref() != Some("tokens") {
        println!("| GEMV weights | rows × cols | cycles per weight |");
        println!("|---|---|---:|");
        // (float weights also at stories260K's shapes: dim 64, and ffn_down's 172 columns, which an
        // image without the software core's padding stores as F16; its FFN as the software-core
        // image pads it, 64 × 192 and 192 × 64; MiniLM's 384 × 384)
        for (fmt, rows, cols) in [
            (GgmlType::Q8_0, 64, 512),
            (GgmlType::Q4_0, 64, 512),
            // stories260K's ffn_gate/ffn_up (192 × 64) and ffn_down (64 × 192); MiniLM's
            // attention (384 × 384), ffn up (1536 × 384) and ffn down (384 × 1536)
            (GgmlType::Q8_0, 192, 64),
            (GgmlType::Q8_0, 64, 192),
            (GgmlType::Q8_0, 64, 64),
            (GgmlType::Q8_0, 384, 384),
            (GgmlType::Q8_0, 1536, 384),
            (GgmlType::Q8_0, 384, 1536),
            (GgmlType::Q4_0, 192, 64),
            (GgmlType::Q4_0, 384, 384),
            (GgmlType::F16, 8, 512),
            (GgmlType::F32, 8, 512),
            (GgmlType::Bf16, 8, 512),
            (GgmlType::F16, 64, 64),
            (GgmlType::F16, 64, 172),
            (GgmlType::F32, 64, 64),
            (GgmlType::F16, 64, 192),
            (GgmlType::F16, 192, 64),
            (GgmlType::F16, 384, 384),
        ] {
            let c = gemv_cycles_per_weight(&prg, fmt, rows, cols)?;
            println!("| {} | {rows} × {cols} | {c:.1} |", fmt.name());
        }
    }
    if only.as_deref() != Some("gemv") {
        println!(
            "elya-snes: {ELYA_WEIGHTS} weights at {ELYA_TOKENS_PER_S} tokens/s = {:.0} weights/s",
            ELYA_WEIGHTS * ELYA_TOKENS_PER_S
        );
        println!("| llama | parameters | weights | memory | cycles per token | tokens/s | weights/s | × elya-snes |");
        println!("|---|---:|---|---:|---:|---:|---:|---:|");
        for (d, l, h, n) in [small, (128, 4, 384, 4), (256, 6, 704, 8)] {
            for wtype in [GgmlType::Q8_0, GgmlType::Q4_0] {
                let img = llama(d, l, h, n, wtype);
                let p = parameters(d, l, h);
                let what = format!("llama dim {d}, {l} layers, hidden {h}, {}", wtype.name());
                let c = cycles_per_token(&prg, &img, &what)?;
                let tps = CPU_HZ as f64 / c;
                let mem = Header::parse(&img)?.mem_needed as f64 / (1 << 20) as f64;
                println!(
                    "| dim {d}, {l} layers, hidden {h} | {p} | {} | {mem:.2} MiB | {c:.0} | {tps:.3} | {:.0} | {:.2} |",
                    wtype.name(),
                    tps * p as f64,
                    tps * p as f64 / (ELYA_WEIGHTS * ELYA_TOKENS_PER_S)
                );
            }
        }
    }
    Ok(())
}

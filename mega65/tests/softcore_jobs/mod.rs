//! The software SSNAIL core's test jobs, shared by the tests that run its C (mega65/softcore) on
//! the PC (softcore_on_the_pc.rs: gcc, two buffer-size builds) and on the 45GS02
//! (softcore_interpreter_in_headless_mega65.rs: cc65, in the headless MEGA65).
//!
//! Each job is SSNAIL memory (random bytes, so a stray write shows anywhere) with a script at
//! PROG, run by the Rust core emulator in hardware numerics (ssnail_core::Machine,
//! Numerics::Hardware) and by the C core from the same memory: the same memory afterwards, error
//! code, fault PC and SYNC count, bit for bit.
//! (a) Instruction level (this module's `#[test]` functions, so each including file runs them
//! through its own `check`): every opcode of docs/spec/isa.md §3.4 on random
//! operands (mixed magnitudes, odd lengths, unaligned rows, in-place use, relative addresses), and
//! every fault. (b) Whole images (`run_image`): a prompt's script run to HALT, and a second turn.
//! NaN: the C arithmetic returns one canonical NaN, x86 keeps payloads. Only the special-values
//! test produces NaN on purpose; there, and only in the output words it names, two NaNs (f32 or
//! F16) count as equal. Everywhere else memory must be byte-identical.
//!
//! The including test file provides, at its root, the C side:
//! `fn check(what: &str, mem: &[u8], job: u32, nan_ok: &[NanOk]) -> Outcome`, which runs the job
//! in `rust_core` and in its C build(s), `compare`s, and returns the Rust outcome.

use crate::check;
use ssnail_core::{Host, Machine, Numerics, Ssnail};
use ssnail_format::ggml::{self, GgmlType};
use ssnail_format::image::{rt, BASE};
use ssnail_format::isa::{areg, AttnBlock, Instr, Op, GEMV_ACC, GEMV_F16OUT, KV_F16, KV_F32};
use ssnail_testkit::rng::Rng;

// ---------------------------------------------------------------------------------------------
// Running a job in the Rust core and comparing.

/// What a job left behind.
#[derive(Debug)]
pub struct Outcome {
    pub mem: Vec<u8>,
    pub error: u8,
    pub fault_pc: u32,
    pub syncs: u64,
}

pub struct CountSyncs(u64);
impl Host for CountSyncs {
    fn on_sync(&mut self, _m: &mut Machine) {
        self.0 += 1;
    }
}

/// The Rust core, hardware numerics, GO at `job` (fresh registers, as §9.2's GO).
pub fn rust_core(mem: &[u8], job: u32) -> Outcome {
    let mut m = Machine::new(mem.len());
    m.numerics = Numerics::Hardware;
    m.mem_mut().copy_from_slice(mem);
    let mut host = CountSyncs(0);
    let (error, fault_pc) = match m.run(job, &mut host) {
        Ok(()) => (0, 0),
        Err(f) => (f.code(), f.pc),
    };
    Outcome {
        mem: m.mem().to_vec(),
        error,
        fault_pc,
        syncs: host.0,
    }
}

/// The Rust core with `instr_limit` and `work_limit` (`u64::MAX`: none), as `rust_core`.
pub fn rust_core_limited(mem: &[u8], job: u32, instr_limit: u64, work_limit: u64) -> Outcome {
    let mut m = ssnail_core::Machine::new(mem.len());
    m.numerics = ssnail_core::Numerics::Hardware;
    m.instr_limit = instr_limit;
    m.work_limit = work_limit;
    m.mem_mut().copy_from_slice(mem);
    struct Syncs(u64);
    impl ssnail_core::Host for Syncs {
        fn on_sync(&mut self, _m: &mut ssnail_core::Machine) {
            self.0 += 1;
        }
    }
    let mut host = Syncs(0);
    let (error, fault_pc) = match m.run(job, &mut host) {
        Ok(()) => (0, 0),
        Err(f) => (f.code(), f.pc),
    };
    Outcome {
        mem: m.mem().to_vec(),
        error,
        fault_pc,
        syncs: host.0,
    }
}

/// A prompt's job on `img`: its memory and the job pointer.
pub fn prompt_job(img: &[u8], prompt: &[u32], n_generate: u32) -> (Vec<u8>, u32) {
    use ssnail_format::image::{rt, BASE};
    let (dev, _) = ssnail_core::Ssnail::load_bytes(img, None).unwrap();
    let h = dev.header();
    let mut m = dev.machine.mem().to_vec();
    let mut poke = |addr: u32, v: u32| {
        let o = (addr - BASE) as usize;
        m[o..o + 4].copy_from_slice(&v.to_le_bytes());
    };
    for (i, &t) in prompt.iter().enumerate() {
        poke(h.tokens + 4 * i as u32, t % h.n_vocab);
    }
    poke(BASE + rt::POS, 0);
    poke(BASE + rt::PROMPT_LEN, prompt.len() as u32);
    poke(BASE + rt::N_GENERATE, n_generate);
    (m, h.code)
}

/// The work (Machine::work) before each instruction of the job, with its opcode, and at HALT.
pub fn work_trace(mem: &[u8], job: u32) -> Vec<(u64, u8)> {
    let mut m = ssnail_core::Machine::new(mem.len());
    m.numerics = ssnail_core::Numerics::Hardware;
    m.mem_mut().copy_from_slice(mem);
    m.regs.pc = job;
    let mut trace = Vec::new();
    loop {
        let pc = m.regs.pc as usize - ssnail_format::image::BASE as usize;
        trace.push((m.work(), m.mem()[pc]));
        if m.step(&mut ssnail_core::NoHost).unwrap() == ssnail_core::Step::Halt {
            return trace;
        }
    }
}

/// A job on `img` (a 4-token prompt, 3 generated) run by `core` at limits that stop it, each
/// against the Rust core at the same limits (which must stop there with code 4): the instruction
/// limit at 1, a third and all but one of its instructions; the work limit exactly at the work
/// before the first instruction after each opcode's first occurrence (one byte of traffic counted
/// wrong anywhere before it moves the fault to another instruction) and one byte above it, and
/// inside each ATTN's own work; then at the job's own instruction count and 16 bytes above its
/// work at HALT, where both run to HALT. `core(mem, job, [instruction limit, work limit], what)`
/// is a C build's outcome, the limits as softcore.h takes them (0: none).
pub fn check_limits(
    name: &str,
    img: &[u8],
    builds: &[&str],
    mut core: impl FnMut(&str, &[u8], u32, [u64; 2], &str) -> Outcome,
) {
    let (mem, job) = prompt_job(img, &[1, 17, 30, 5], 3);
    let trace = work_trace(&mem, job);
    let n = trace.len() as u64;
    let mut cases: Vec<(u64, u64, String)> = [1, n / 3, n - 1]
        .iter()
        .map(|&l| (l, u64::MAX, format!("{name}: instruction limit {l} of {n}")))
        .collect();
    let mut seen = std::collections::HashSet::new();
    for (k, &(w, op)) in trace.iter().enumerate() {
        // the first instruction of each opcode after its first occurrence, so the work of
        // every opcode before it is in the count
        if k > 0 && seen.insert(trace[k - 1].1 as u16) {
            // (one byte above the work before HALT lets HALT run)
            let above = if op == ssnail_format::isa::Op::Halt as u8 {
                w
            } else {
                w + 1
            };
            for l in [w, above] {
                cases.push((
                    u64::MAX,
                    l,
                    format!("{name}: work limit {l} before #{k} (${op:02X})"),
                ));
            }
        }
        if op == ssnail_format::isa::Op::Attn as u8 && seen.insert(0x100 + op as u16) {
            let next = trace[k + 1].0;
            for l in [next - 1, next - 2 * 4 * 128, w + 48] {
                cases.push((
                    u64::MAX,
                    l,
                    format!("{name}: work limit {l} inside ATTN #{k}"),
                ));
            }
        }
    }
    let halt_work = trace[trace.len() - 1].0;
    for (instr, work, what) in &cases {
        let rust = rust_core_limited(&mem, job, *instr, *work);
        assert_eq!(
            rust.error, 4,
            "{what}: the Rust core did not stop at the limit"
        );
        let limits = [
            (*instr).min(u32::MAX as u64),
            if *work == u64::MAX { 0 } else { *work },
        ];
        for build in builds {
            compare(
                what,
                build,
                &rust,
                &core(build, &mem, job, limits, what),
                &[],
            );
        }
    }
    let rust = rust_core_limited(&mem, job, n, halt_work + 16);
    assert_eq!(rust.error, 0, "{name}: {n} instructions run to HALT");
    let what = format!("{name} within its limits");
    for build in builds {
        let c = core(build, &mem, job, [n, halt_work + 16], &what);
        compare(&what, build, &rust, &c, &[]);
    }
}

/// A region whose f32 (size 4) or F16 (size 2) words may hold NaN: two NaNs there are equal.
#[derive(Clone, Copy)]
pub struct NanOk {
    pub addr: u32,
    pub count: u32,
    pub size: u32,
}

pub fn is_nan_word(b: &[u8]) -> bool {
    match b.len() {
        4 => f32::from_le_bytes(b.try_into().unwrap()).is_nan(),
        _ => {
            let h = u16::from_le_bytes(b.try_into().unwrap());
            h & 0x7C00 == 0x7C00 && h & 0x3FF != 0
        }
    }
}

/// Panics with the first difference unless `c` equals `rust`.
pub fn compare(what: &str, build: &str, rust: &Outcome, c: &Outcome, nan_ok: &[NanOk]) {
    assert_eq!(
        (c.error, c.fault_pc, c.syncs),
        (rust.error, rust.fault_pc, rust.syncs),
        "{what} ({build}): (error, fault PC, SYNCs) of the C core vs the Rust core"
    );
    let mut cm = c.mem.clone();
    for r in nan_ok {
        for i in 0..r.count {
            let o = (r.addr - BASE + i * r.size) as usize;
            let s = r.size as usize;
            if o + s <= cm.len() && is_nan_word(&cm[o..o + s]) && is_nan_word(&rust.mem[o..o + s]) {
                cm[o..o + s].copy_from_slice(&rust.mem[o..o + s]);
            }
        }
    }
    assert_eq!(cm.len(), rust.mem.len());
    if let Some(first) = (0..cm.len()).find(|&i| cm[i] != rust.mem[i]) {
        let n = (0..cm.len()).filter(|&i| cm[i] != rust.mem[i]).count();
        let w = first & !3;
        let end = (w + 16).min(cm.len());
        panic!(
            "{what} ({build}): {n} bytes differ, the first at ${:07X}\n  Rust {:02X?}\n  C    {:02X?}",
            BASE as usize + first,
            &rust.mem[w..end],
            &cm[w..end]
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Jobs built from random operands.

/// The job's instructions start here; operands are allocated from PROG + $2000 on.
pub const PROG: u32 = BASE + 0x100;

pub struct Case {
    name: String,
    rng: Rng,
    mem: Vec<u8>,
    prog: Vec<Instr>,
    next: u32,
    nan_ok: Vec<NanOk>,
    /// The next address register operand() sets (1-14 in turn, so operands never share one).
    next_a: u8,
}

impl Case {
    /// `size` bytes of memory filled with random bytes (so a stray write shows anywhere).
    fn new(name: String, seed: u64, size: usize) -> Case {
        let mut rng = Rng::new(seed);
        let mem = (0..size).map(|_| rng.next_u64() as u8).collect();
        Case {
            name,
            rng,
            mem,
            prog: Vec::new(),
            next: PROG + 0x2000,
            nan_ok: Vec::new(),
            next_a: 1,
        }
    }

    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    fn end(&self) -> u32 {
        BASE + self.mem.len() as u32
    }

    /// `bytes` of memory after the last allocation, 4-byte aligned or at any byte.
    fn alloc(&mut self, bytes: u32, aligned: bool) -> u32 {
        let slack = self.below(64) as u32;
        let a = if aligned {
            (self.next + slack + 3) & !3
        } else {
            self.next + slack
        };
        self.next = a + bytes;
        assert!(
            self.next <= self.end(),
            "{}: operands exceed memory",
            self.name
        );
        a
    }

    fn put(&mut self, addr: u32, b: &[u8]) {
        let o = (addr - BASE) as usize;
        self.mem[o..o + b.len()].copy_from_slice(b);
    }

    fn bytes(&mut self, b: &[u8], aligned: bool) -> u32 {
        let a = self.alloc(b.len() as u32, aligned);
        self.put(a, b);
        a
    }

    fn f32s(&mut self, v: &[f32]) -> u32 {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let aligned = self.below(4) != 0;
        self.bytes(&b, aligned)
    }

    /// A random single of mixed magnitude: ±0, tiny, or normal·10^[−3, 3].
    fn value(&mut self) -> f32 {
        match self.below(20) {
            0 => 0.0,
            1 => -0.0,
            2 => (self.rng.normal() * 1e-30) as f32,
            _ => (self.rng.normal() * 10f64.powf(self.rng.uniform() * 6.0 - 3.0)) as f32,
        }
    }

    fn vector(&mut self, n: u32) -> Vec<f32> {
        (0..n).map(|_| self.value()).collect()
    }

    /// Uniform values in [lo, hi) (for the table functions' ranges).
    fn spread(&mut self, n: u32, lo: f64, hi: f64) -> Vec<f32> {
        (0..n)
            .map(|_| (lo + (hi - lo) * self.rng.uniform()) as f32)
            .collect()
    }

    /// An address operand for `addr`: absolute with random bits 28–30 (ignored), or relative to
    /// an address register set by LEA just before (offset 0 or a small one).
    fn operand(&mut self, addr: u32) -> u32 {
        match self.below(3) {
            0 => addr | ((self.below(8) as u32) << 28),
            1 => addr,
            _ => {
                let reg = self.next_a;
                self.next_a = self.next_a % 14 + 1;
                let off = self.below(4) as u32 * 4;
                let base = addr - off;
                self.lea(reg, base);
                areg(reg, off)
            }
        }
    }

    fn i(&mut self, op: Op, a: u8, b: u8, x: u32, y: u32, z: u32) {
        self.prog.push(Instr::new(op, a, b, x, y, z));
    }
    fn setn(&mut self, n0: u32, n1: u32, n2: u32) {
        self.i(Op::SetN, 0, 0, n0, n1, n2);
    }
    fn li(&mut self, r: u8, v: u32) {
        self.i(Op::Li, r, 0, 0, 0, v);
    }
    fn lea(&mut self, a: u8, addr: u32) {
        self.i(Op::Lea, a, 15, addr, 0, 0);
    }
    /// ATTN with `blk` (its 24 bytes 32-byte aligned) and q at `qa` over positions 0..t: the
    /// output allocated after the block, the position in register `reg` or one drawn at random
    /// (after the output), and with `nan_ok` any NaN in the output counts as the reference's.
    fn attn(&mut self, blk: &AttnBlock, qa: u32, t: u32, reg: Option<u8>, nan_ok: bool) {
        let ba = (self.alloc(64, true) + 31) & !31;
        self.put(ba, &blk.encode()[..24]);
        let n = blk.n_heads * blk.head_dim;
        let za = self.alloc(4 * n, true);
        if nan_ok {
            self.nan_ok(za, n, 4);
        }
        let reg = reg.unwrap_or_else(|| self.below(15) as u8);
        self.li(reg, t - 1);
        let (bo, qo, zo) = (self.operand(ba), self.operand(qa), self.operand(za));
        self.i(Op::Attn, reg, 0, bo, qo, zo);
    }

    /// GEMV in `fmt` of the weights `w` (`rows` rows of `cols` columns, 32-byte aligned) on x at
    /// `xa`: y allocated after them, SETN and the GEMV; with `nan_ok` any NaN in y counts as the
    /// reference's.
    fn gemv(&mut self, fmt: GgmlType, w: &[u8], xa: u32, cols: u32, rows: u32, nan_ok: bool) {
        let wa = self.bytes(w, false);
        let za = self.alloc(4 * rows, true);
        if nan_ok {
            self.nan_ok(za, rows, 4);
        }
        self.setn(cols, rows, 0);
        self.i(Op::Gemv, fmt as u8, 0, wa, xa, za);
    }

    /// ROPE of the singles `x` (N0 = its length) by the (cos, sin) table `cs` (N1 = its length),
    /// both placed and addressed by random operand forms, x rotated in place; with `nan_ok` any
    /// NaN in x afterwards counts as the reference's.
    fn rope(&mut self, x: &[f32], cs: &[f32], nan_ok: bool) {
        let (n0, n1) = (x.len() as u32, cs.len() as u32);
        let xa = self.f32s(x);
        let ca = self.f32s(cs);
        if nan_ok {
            self.nan_ok(xa, n0, 4);
        }
        let (xo, co) = (self.operand(xa), self.operand(ca));
        self.setn(n0, n1, 0);
        self.i(Op::Rope, 0, 0, xo, co, 0);
    }

    fn nan_ok(&mut self, addr: u32, count: u32, size: u32) {
        self.nan_ok.push(NanOk { addr, count, size });
    }

    /// HALT, the program at PROG, run everywhere and compare.
    fn run(mut self) -> Outcome {
        self.i(Op::Halt, 0, 0, 0, 0, 0);
        assert!(PROG + 16 * self.prog.len() as u32 <= PROG + 0x2000);
        let code: Vec<u8> = self.prog.iter().flat_map(|i| i.encode()).collect();
        self.put(PROG, &code);
        check(&self.name, &self.mem, PROG, &self.nan_ok)
    }
}

/// Weight rows of `fmt`: quantised from random values, plus (Q formats, one row in four) rows of
/// random bytes under sane scales.
pub fn weight_rows(c: &mut Case, fmt: GgmlType, rows: u32, cols: u32) -> Vec<u8> {
    let mut w = Vec::new();
    for _ in 0..rows {
        let row = c.vector(cols);
        let raw = matches!(fmt, GgmlType::Q8_0 | GgmlType::Q4_0) && c.below(4) == 0;
        if raw {
            for _ in 0..cols / 32 {
                let d = ggml::f32_to_f16((c.rng.normal() * 0.01) as f32);
                w.extend(d.to_le_bytes());
                for _ in 2..fmt.block_bytes() {
                    w.push(c.rng.next_u64() as u8);
                }
            }
        } else {
            ggml::quantize_native(fmt, &row, &mut w);
        }
    }
    assert_eq!(w.len(), rows as usize * fmt.row_bytes(cols as usize));
    w
}

pub const FORMATS: [GgmlType; 5] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::Bf16,
    GgmlType::Q8_0,
    GgmlType::Q4_0,
];

/// A random length for format `fmt`: any for floats (odd ones often), whole blocks for Q.
pub fn cols_for(c: &mut Case, fmt: GgmlType, max_blocks: u64) -> u32 {
    if fmt.block_len() == 32 {
        32 * (1 + c.below(max_blocks) as u32)
    } else {
        1 + c.below(32 * max_blocks) as u32
    }
}

// ---------------------------------------------------------------------------------------------
// (a) Instruction level.

/// Q8_0/Q4_0 GEMVs after GEMVs in one job, the later ones' first block columns taking the
/// definition's slow path or a zero isum: input blocks all zero (dx = 0), weight scales ±0,
/// subnormal or tiny, quants all zero. The near buffer of row sums still holds the earlier GEMV's
/// sums, and a row chunk's first block column must start from +0 all the same.
#[test]
fn gemv_after_gemv_with_special_first_blocks_agrees() {
    for (fi, fmt) in [GgmlType::Q8_0, GgmlType::Q4_0].into_iter().enumerate() {
        for k in 0..6u64 {
            let mut c = Case::new(
                format!("GEMV {} after GEMV, special first blocks #{k}", fmt.name()),
                7500 + 10 * fi as u64 + k,
                1 << 20,
            );
            for g in 0..3u32 {
                let cols = 32 * (1 + c.below(4) as u32);
                let rows = 1 + c.below(70) as u32;
                let mut x = c.spread(cols, -3.0, 3.0);
                if g > 0 && c.below(2) == 0 {
                    for v in &mut x[..32] {
                        *v = 0.0;
                    }
                }
                let xa = c.f32s(&x);
                let mut w = weight_rows(&mut c, fmt, rows, cols);
                let rb = fmt.row_bytes(cols as usize);
                if g > 0 {
                    for r in 0..rows as usize {
                        // the row's first block: a special scale, or all-zero quants
                        let b = &mut w[r * rb..r * rb + fmt.block_bytes()];
                        match c.below(5) {
                            0 => b[..2].copy_from_slice(&[0x00, 0x00]),
                            1 => b[..2].copy_from_slice(&[0x00, 0x80]),
                            2 => b[..2].copy_from_slice(&[0x37, 0x02]), // subnormal
                            3 => {
                                for q in &mut b[2..] {
                                    *q = if fmt == GgmlType::Q8_0 { 0 } else { 0x88 };
                                }
                            }
                            _ => {}
                        }
                    }
                }
                let wa = c.bytes(&w, true);
                let flags = if c.below(2) == 0 { GEMV_ACC } else { 0 };
                let za = if flags & GEMV_ACC != 0 {
                    let old = c.spread(rows, -1.0, 1.0);
                    c.f32s(&old)
                } else {
                    c.alloc(4 * rows, true)
                };
                let (wo, xo, zo) = (c.operand(wa), c.operand(xa), c.operand(za));
                c.setn(cols, rows, 0);
                c.i(Op::Gemv, fmt as u8, flags, wo, xo, zo);
            }
            c.run();
        }
    }
}

/// Q8_0/Q4_0 GEMVs of one input in a row, with what may change the input or the near buffers in
/// between: the 45GS02 keeps the quantised input for the next Q GEMV of the same x and columns
/// (sc_keep), so each of these must quantise again: an output that overlaps x's first word (f32
/// rows; F16 rows by two bytes; an output that ends where x starts keeps it), an STR or a COPY into x, a VADD
/// over x, a float GEMV (its buffers overlay the quants) and a Q GEMV of the same x with fewer
/// columns, besides SETN, LEA and LI between (which keep it) and a Q4_0 GEMV after a Q8_0 one.
#[test]
fn gemv_after_gemv_of_the_same_input_quantises_it_again_where_it_may_have_changed_agrees() {
    for k in 0..4u64 {
        let mut c = Case::new(
            format!("GEMV after GEMV of the same input #{k}"),
            7600 + k,
            1 << 20,
        );
        let cols = 32 * (2 + c.below(3) as u32);
        let mut x = c.spread(cols, -3.0, 3.0);
        x[0] = 3.5; // the first block's largest: what changes it changes d
        let xa = c.bytes(
            &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
            true,
        );
        // (za 0: an output of its own, so every GEMV's result stays to be compared)
        let gemv = |c: &mut Case, fmt: GgmlType, flags: u8, rows: u32, cols: u32, za: u32| {
            let za = if za == 0 { c.alloc(4 * rows, true) } else { za };
            let w = weight_rows(c, fmt, rows, cols);
            let wa = c.bytes(&w, true);
            let (wo, xo, zo) = (c.operand(wa), c.operand(xa), c.operand(za));
            c.setn(cols, rows, 0);
            c.li(13, 7);
            c.i(Op::Gemv, fmt as u8, flags, wo, xo, zo);
        };
        let rows = 1 + c.below(20) as u32;
        let z1 = c.alloc(4 * rows, true);
        gemv(&mut c, GgmlType::Q8_0, 0, rows, cols, z1);
        gemv(&mut c, GgmlType::Q4_0, 0, rows, cols, 0);
        // an f32 output whose last word is x's first, then one that ends where x starts
        gemv(&mut c, GgmlType::Q8_0, 0, 3, cols, xa + 4 - 12);
        gemv(&mut c, GgmlType::Q8_0, 0, rows, cols, 0);
        gemv(&mut c, GgmlType::Q8_0, 0, 3, cols, xa - 12);
        gemv(&mut c, GgmlType::Q8_0, 0, rows, cols, 0);
        // an F16 output whose last half is x's first two bytes
        gemv(&mut c, GgmlType::Q4_0, GEMV_F16OUT, 2, cols, xa + 2 - 4);
        gemv(&mut c, GgmlType::Q8_0, 0, rows, cols, 0);
        // a word of x changed by STR, bytes of x by COPY, x by VADD
        c.li(12, 0x4049_0FDB);
        let at = xa + 4 * c.below(cols as u64) as u32;
        c.i(Op::Str, 12, 0, at, 0, 0);
        gemv(&mut c, GgmlType::Q8_0, 0, rows, cols, 0);
        let src = c.f32s(&[1.5, -2.25, 0.125]);
        let at = xa + 4 * c.below(cols as u64 - 3) as u32;
        c.i(Op::Copy, 0, 0, src, at, 12);
        gemv(&mut c, GgmlType::Q4_0, 0, rows, cols, 0);
        let y = c.spread(cols, -1.0, 1.0);
        let ya = c.f32s(&y);
        c.setn(cols, 0, 0);
        c.i(Op::VAdd, 0, 0, xa, ya, xa);
        gemv(&mut c, GgmlType::Q8_0, 0, rows, cols, 0);
        // a float GEMV of other data between, then fewer columns of the same x
        let fx = c.spread(40, -1.0, 1.0);
        let fxa = c.f32s(&fx);
        let fw = weight_rows(&mut c, GgmlType::F16, 9, 40);
        let fwa = c.bytes(&fw, true);
        let fz = c.alloc(36, true);
        c.setn(40, 9, 0);
        c.i(Op::Gemv, GgmlType::F16 as u8, 0, fwa, fxa, fz);
        gemv(&mut c, GgmlType::Q8_0, 0, rows, cols, 0);
        gemv(&mut c, GgmlType::Q8_0, 0, rows, cols - 32, 0);
        gemv(&mut c, GgmlType::Q8_0, GEMV_ACC, rows, cols, z1);
        c.run();
    }
}

#[test]
fn gemv_in_every_weight_format_and_flag_combination_agrees_bit_for_bit() {
    let mut n = 0;
    for (fi, &fmt) in FORMATS.iter().enumerate() {
        for flags in [0, GEMV_ACC, GEMV_F16OUT, GEMV_ACC | GEMV_F16OUT] {
            for k in 0..4u64 {
                let seed = 1000 + 100 * fi as u64 + 10 * flags as u64 + k;
                let mut c = Case::new(
                    format!("GEMV {} flags {flags} #{k}", fmt.name()),
                    seed,
                    1 << 20,
                );
                let cols = cols_for(&mut c, fmt, if k == 3 { 12 } else { 5 });
                let rows = 1 + c.below(if k == 0 { 3 } else { 40 }) as u32;
                let x = c.vector(cols);
                let xa = c.f32s(&x);
                let w = weight_rows(&mut c, fmt, rows, cols);
                let unaligned = c.below(2) == 0;
                let wa = c.bytes(&w, !unaligned);
                let za = if flags & GEMV_ACC != 0 {
                    let old = c.vector(rows);
                    c.f32s(&old)
                } else {
                    c.alloc(4 * rows, true)
                };
                let (wo, xo, zo) = (c.operand(wa), c.operand(xa), c.operand(za));
                let n2 = c.rng.next_u64() as u32;
                c.setn(cols, rows, n2);
                c.i(Op::Gemv, fmt as u8, flags, wo, xo, zo);
                c.run();
                n += 1;
            }
        }
    }
    assert_eq!(n, 80);
}

/// Q8_0/Q4_0 isums of chosen values at the term's negation edges (softgemv65.s `term_neg`):
/// −1, −255 and −256 (a low byte of 0), −65,280 (two bytes, low byte 0), −65,535, −65,536 (three
/// bytes from a two-byte pattern), −65,537, −2^18 and the largest negatives, with positive twins
/// (Q4_0 reaches |isum| < 2^15 only). The input block is 24 × 127 then 8 × 1 (scale 1, quants the
/// values), so a row's isum is 127 · (the sum of its first 24 weights) + the sum of the last 8.
#[test]
fn gemv_isums_at_the_negations_edges_agree() {
    let targets = [
        -1, -255, -256, -257, -512, -32_512, -65_280, -65_535, -65_536, -65_537, -65_792, -262_144,
        -390_000, 1, 256, 65_536, 65_537,
    ];
    for fmt in [GgmlType::Q8_0, GgmlType::Q4_0] {
        let (lo, hi) = if fmt == GgmlType::Q8_0 {
            (-128, 127)
        } else {
            (-8, 7)
        };
        // a block's 32 quants for isum t, if its weights can make it: the first 24 (under inputs
        // 127) summing to t less its remainder mod 127 in [−63, 63], the last 8 (under 1s) to that
        let quants = |t: i32| -> Option<Vec<i32>> {
            let r = (t % 127 + 127 + 63) % 127 - 63;
            let spread = |mut s: i32, n: usize| -> (Vec<i32>, i32) {
                let q = (0..n)
                    .map(|_| {
                        let v = s.clamp(lo, hi);
                        s -= v;
                        v
                    })
                    .collect();
                (q, s)
            };
            let (mut q, s0) = spread((t - r) / 127, 24);
            let (q8, s1) = spread(r, 8);
            q.extend(q8);
            (s0 == 0 && s1 == 0).then_some(q)
        };
        let ts: Vec<Vec<i32>> = targets.iter().filter_map(|&t| quants(t)).collect();
        assert_eq!(ts.len(), if fmt == GgmlType::Q8_0 { 17 } else { 7 });
        let name = format!("GEMV {} isums at the negation's edges", fmt.name());
        let mut c = Case::new(name, 9990, 1 << 18);
        let xb = [&[127.0f32; 24][..], &[1.0; 8]].concat();
        let x = [&xb[..], &xb].concat();
        let xa = c.f32s(&x);
        // every target in the first and in the second block column
        let mut w = Vec::new();
        let n = ts.len();
        for i in 0..2 * n {
            let pair = if i < n {
                [i, (i + 1) % n]
            } else {
                [(i + 1) % n, i - n]
            };
            for k in pair {
                let q = &ts[k];
                let d = ggml::f32_to_f16((c.rng.normal() * 0.02) as f32);
                w.extend(d.to_le_bytes());
                if fmt == GgmlType::Q8_0 {
                    w.extend(q.iter().map(|&v| v as i8 as u8));
                } else {
                    w.extend((0..16).map(|j| ((q[j] + 8) | (q[j + 16] + 8) << 4) as u8));
                }
            }
        }
        let rows = 2 * n as u32;
        c.gemv(fmt, &w, xa, 64, rows, false);
        c.run();
    }
}

/// Q8_0 rows of exactly two blocks (64 columns), which softgemv65.s runs row by row with both
/// blocks (`rows2`: one 68-byte job a row, the first block's isum and term in `q8sumA` and `TA`,
/// its product stored as W, then the second block's isum and term added to it): one row, odd row
/// counts, a row chunk's most rows (255) and one more, with and without GEMV_ACC. Every row kind
/// in both block columns: scales ±0, subnormal, ±inf, NaN, the largest and smallest normal F16;
/// zero quants (isum 0); terms that cancel exactly or all but a last place (equal input blocks,
/// the second block the first's quants under the negated scale); either term far the larger;
/// sums at rounding ties and just off them (the input block 127, 1, 1, .. makes dx = 1 and the
/// quants the inputs: a first term 16,129·(1 + 2^-10), odd in its last place 2^-10, and a second
/// of ±1 or ±3 times 2^-11, 2^-11·(1 + 2^-10) or just below 2^-11). And input blocks whose scale
/// is no normal F16 (zero, tiny, huge: the columns one by one instead).
#[test]
fn q8_0_rows_of_two_blocks_run_row_by_row_agree_at_their_edges() {
    let (max, min) = (0x7BFFu16, 0x0400u16);
    for (k, &rows) in [1u32, 3, 255, 256, 301].iter().enumerate() {
        for flags in [0, GEMV_ACC] {
            let name = format!("GEMV Q8_0 {rows} rows of two blocks, flags {flags}");
            let seed = 9900 + 2 * k as u64 + (flags != 0) as u64;
            let mut c = Case::new(name, seed, 1 << 19);
            // (scale, quants) of a row's two blocks
            type Row = [(u16, Vec<i8>); 2];
            let rand_q =
                |c: &mut Case| -> Vec<i8> { (0..32).map(|_| c.below(256) as u8 as i8).collect() };
            let rand_d = |c: &mut Case| ggml::f32_to_f16((c.rng.normal() * 0.02) as f32);
            let one = |pos: usize, v: i8| -> Vec<i8> {
                let mut q = vec![0i8; 32];
                q[pos] = v;
                q
            };
            let run =
                |c: &mut Case, x: &[f32], kinds: &dyn Fn(&mut Case, u32) -> Row, nan_ok: bool| {
                    let xa = c.f32s(x);
                    let mut w = Vec::new();
                    for r in 0..rows {
                        for (d, q) in kinds(c, r) {
                            w.extend(d.to_le_bytes());
                            w.extend(q.iter().map(|&v| v as u8));
                        }
                    }
                    let wa = c.bytes(&w, false);
                    let za = if flags & GEMV_ACC != 0 {
                        let old = c.vector(rows);
                        c.f32s(&old)
                    } else {
                        c.alloc(4 * rows, true)
                    };
                    if nan_ok {
                        c.nan_ok(za, rows, 4);
                    }
                    c.setn(64, rows, 0);
                    c.i(Op::Gemv, GgmlType::Q8_0 as u8, flags, wa, xa, za);
                };
            // (a) two different input blocks; specials in either block column
            let b0: Vec<f32> = (0..32).map(|_| c.rng.normal() as f32).collect();
            let b1: Vec<f32> = (0..32).map(|_| (c.rng.normal() * 1e3) as f32).collect();
            let specials = [
                0x0000,
                0x8000,
                0x0001,
                0x83FF,
                0x7C00,
                0xFC00,
                0x7E00,
                0xFE01,
                max,
                min | 0x8000,
            ];
            let kinds_a = |c: &mut Case, r: u32| -> Row {
                let mut row: Row = [(rand_d(c), rand_q(c)), (rand_d(c), rand_q(c))];
                let r = if rows == 1 { c.below(32) as u32 } else { r };
                match r % 32 {
                    s @ 0..=9 => row[0].0 = specials[s as usize],
                    s @ 10..=19 => row[1].0 = specials[s as usize - 10],
                    20 => row[0].1 = vec![0; 32],
                    21 => row[1].1 = vec![0; 32],
                    22 => {
                        row[0].1 = vec![0; 32];
                        row[1] = (row[1].0 | 0x8000, vec![0; 32]);
                    }
                    23 => (row[0].0, row[1].0) = (max, min),
                    24 => (row[0].0, row[1].0) = (min, max | 0x8000),
                    25 => (row[0].0, row[1].0) = (0x7000, 0x0800),
                    26 => (row[0].0, row[1].0) = (0x0800, 0xF000),
                    27 => row[0] = (0x7C00, vec![0; 32]),
                    28 => row[1] = (0xFE00, vec![0; 32]),
                    29 => row[0].1 = one(c.below(32) as usize, 1),
                    30 => row[1].1 = one(c.below(32) as usize, -1),
                    _ => {}
                }
                row
            };
            let x = [&b0[..], &b1].concat();
            run(&mut c, &x, &kinds_a, true);
            // (b) equal input blocks 127, 1, 1, ..: cancellation and ties
            let mut bt = vec![1.0f32; 32];
            bt[0] = 127.0;
            let x = [&bt[..], &bt].concat();
            let kinds_b = |c: &mut Case, r: u32| -> Row {
                let (q, d) = (rand_q(c), rand_d(c));
                let big = (0x3C01u16, one(0, 127));
                let halves = [0x1000u16, 0x1001, 0x0FFF];
                let r = if rows == 1 { c.below(16) as u32 } else { r };
                match r % 16 {
                    0 => [(d, q.clone()), (d ^ 0x8000, q)],
                    1 => [(d, q.clone()), ((d ^ 0x8000) + 1, q)],
                    2 => [(d + 1, q.clone()), (d ^ 0x8000, q)],
                    s @ 3..=11 => {
                        let v = [1i8, -1, 3, -3][s as usize % 4];
                        let small = (halves[s as usize % 3], one(1 + c.below(31) as usize, v));
                        if s % 2 == 0 {
                            [big, small]
                        } else {
                            [small, big]
                        }
                    }
                    12 => [(d, q.clone()), (d, q)],
                    _ => [(d, q), (rand_d(c), rand_q(c))],
                }
            };
            run(&mut c, &x, &kinds_b, false);
            // (c) an input block whose scale is no normal F16: zero, tiny, huge
            if k < 2 {
                let z = [0.0f32; 32];
                let tiny: Vec<f32> = b0.iter().map(|v| v * 1e-38).collect();
                let huge: Vec<f32> = b0.iter().map(|v| v * 1e7).collect();
                for x in [
                    [&z[..], &b1].concat(),
                    [&b0[..], &z].concat(),
                    [&tiny[..], &b1].concat(),
                    [&b0[..], &huge].concat(),
                ] {
                    run(&mut c, &x, &kinds_a, true);
                }
            }
            c.run();
        }
    }
}

/// Q8_0 rows of two blocks (`rows2`: one 68-byte job a row) across a bank boundary ($8010000)
/// and a megabyte boundary ($8100000), the boundary at bytes 1, 33, 34, 35 and 67 of a row (in
/// the first block, at the second's start, in the second), so that the job's source carries out
/// of its 16 bits between rows or the job itself crosses it.
#[test]
fn q8_0_rows_of_two_blocks_across_a_bank_or_megabyte_boundary_anywhere_agree() {
    for (k, (boundary, at)) in [
        (0x1_0000u32, 1u32),
        (0x1_0000, 34),
        (0x1_0000, 67),
        (0x10_0000, 1),
        (0x10_0000, 33),
        (0x10_0000, 34),
        (0x10_0000, 35),
        (0x10_0000, 67),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!(
            "GEMV Q8_0 of two blocks a row with ${:X} at byte {at} of row 2",
            BASE + boundary
        );
        let c = Case::new(name, 9930 + k as u64, 2 << 20);
        gemv_with_rows_placed(c, GgmlType::Q8_0, 5, 64, |w| {
            let row = w.len() as u32 / 5;
            BASE + boundary - (2 * row + at)
        });
    }
}

/// Q8_0 terms whose product rounds up only for bits far below its round bit (softgemv65.s
/// `bcall`, `term_n2`, `r_tie`): the exact product R = |isum|·mw·mx has its round bit set, the
/// next 7 bits clear and something below them, under an even significand, so that a term that
/// lost those low bits would take a tie to even and round down. The term reads the product of
/// a two-byte |isum| from the multiplier's bytes 1-4 with byte 0 below it, and that of a
/// three-byte one (≥ 2^16) from bytes 2-5 with bytes 0-1 jammed into its guard byte. The input
/// block is 24 × 127·d then 8 × d with d = 1 + 2^-10 (mx = 1025, odd, so the low bits reach byte
/// 0), quants 127 and 1, as in `gemv_isums_at_the_negations_edges_agree`.
#[test]
fn gemv_terms_whose_rounding_hangs_on_the_products_lowest_bytes_agree() {
    let quants = |t: i32| -> Option<Vec<i32>> {
        let r = (t % 127 + 127 + 63) % 127 - 63;
        let spread = |mut s: i32, n: usize| -> (Vec<i32>, i32) {
            let q = (0..n)
                .map(|_| {
                    let v = s.clamp(-128, 127);
                    s -= v;
                    v
                })
                .collect();
            (q, s)
        };
        let (mut q, s0) = spread((t - r) / 127, 24);
        let (q8, s1) = spread(r, 8);
        q.extend(q8);
        (s0 == 0 && s1 == 0).then_some(q)
    };
    // (|isum|, mw) whose product with mx = 1025 rounds up on bits below the guard byte only
    let hangs = |n: u64, mw: u64| -> bool {
        let r = n * mw * 1025;
        let s = 64 - r.leading_zeros() - 24;
        let rem = r & ((1 << s) - 1);
        let half = 1u64 << (s - 1);
        s >= 9 && rem > half && rem - half < 1 << (s - 8) && (r >> s) & 1 == 0
    };
    let mut c = Case::new(
        "GEMV Q8_0 terms rounded on the low bytes".into(),
        9996,
        1 << 18,
    );
    let mut cases = Vec::new();
    // two-byte and three-byte |isum|, both signs
    for (start, step) in [
        (2_100u64, 37u64),
        (30_001, 53),
        (65_536, 41),
        (150_001, 97),
        (300_001, 29),
    ] {
        let mut n = start;
        let mut found = 0;
        while found < 4 {
            for mw in (1024..2048).step_by(7) {
                if hangs(n, mw) {
                    let t = if found % 2 == 0 {
                        n as i32
                    } else {
                        -(n as i32)
                    };
                    if let Some(q) = quants(t) {
                        cases.push((q, 0x3C00 | (mw as u16 - 1024)));
                        found += 1;
                        break;
                    }
                }
            }
            n += step;
        }
    }
    let d = ggml::f16_to_f32(0x3C01);
    let xb = [&[127.0 * d; 24][..], &[d; 8]].concat();
    let x = [&xb[..], &xb].concat();
    let xa = c.f32s(&x);
    // each case in the first and in the second block column (the other block a random term)
    let mut w = Vec::new();
    let n = cases.len();
    for i in 0..2 * n {
        for b in 0..2 {
            let (q, dw) = if (i < n) == (b == 0) {
                cases[i % n].clone()
            } else {
                let q = (0..32).map(|_| c.below(256) as i32 - 128).collect();
                (q, ggml::f32_to_f16((c.rng.normal() * 0.02) as f32))
            };
            w.extend(dw.to_le_bytes());
            w.extend(q.iter().map(|&v| v as i8 as u8));
        }
    }
    let rows = 2 * n as u32;
    c.gemv(GgmlType::Q8_0, &w, xa, 64, rows, false);
    c.run();
}

/// Q8_0 rows whose isum code meets the largest weight code (c = 255: w = 127 under x ≥ 0, −128
/// under x < 0) in every odd column, while the running sum passes zero at pairs 7-15
/// (softgemv65.s: the register A an ADCQ adds byte 2 and the carry to holds that c, so a carry
/// out of the sum would reach X; the sum is biased by 2^23 so that it never carries). The input
/// is 32 × 127 then 32 × −127 (quants ±127); each row's even columns hold one weight v (−128 to
/// 127, v = −127 makes the isum 0 exactly) or random weights; the scales random normal F16, and
/// every third row's first one subnormal (the term by the C, after the isum summed again).
#[test]
fn gemv_with_the_largest_weight_codes_after_the_sum_passes_zero_agrees() {
    let mut c = Case::new("GEMV Q8_0 largest weight codes".into(), 9994, 1 << 18);
    let x = [&[127.0f32; 32][..], &[-127.0; 32]].concat();
    let xa = c.f32s(&x);
    let mut w = Vec::new();
    let mut rows = 0u32;
    let evens: Vec<Option<i32>> = (-128..128)
        .step_by(5)
        .map(Some)
        .chain([Some(-127), Some(127)])
        .chain((0..24).map(|_| None))
        .collect();
    for (r, v) in evens.into_iter().enumerate() {
        for odd in [127i32, -128] {
            // every third row's first block under a subnormal scale: its terms by sgq_slow, which
            // sums the isum again
            let d = if r % 3 == 2 && odd == 127 {
                1 + c.below(0x3FF) as u16
            } else {
                ggml::f32_to_f16((c.rng.normal() * 0.02) as f32)
            };
            w.extend(d.to_le_bytes());
            for k in 0..32 {
                let q = if k % 2 == 1 {
                    odd
                } else {
                    v.unwrap_or_else(|| c.below(256) as i32 - 128)
                };
                w.push(q as i8 as u8);
            }
        }
        rows += 1;
    }
    c.gemv(GgmlType::Q8_0, &w, xa, 64, rows, false);
    c.run();
}

/// Q8_0/Q4_0 GEMVs whose row chunks are as large as the buffer leaves room for beside the input
/// chunk (softgemv.c GQ_LAYOUT: 200 rows beside a wide input's 512 columns, 232 beside 384, 136
/// beside 768, 255 beside 32), each with one row more than whole chunks, so that the last chunk
/// has a single row and the sums of every full chunk end at the buffer's end.
#[test]
fn gemv_with_row_chunks_as_large_as_the_input_chunk_leaves_room_for_agrees() {
    let shapes = [(1088, 401), (384, 465), (800, 201), (768, 137), (32, 256)];
    for (k, &(cols, rows)) in shapes.iter().enumerate() {
        let fmt = if k == 1 {
            GgmlType::Q4_0
        } else {
            GgmlType::Q8_0
        };
        let name = format!("GEMV {} {rows} x {cols} in large row chunks", fmt.name());
        let mut c = Case::new(name, 9995 + k as u64, 1 << 20);
        let x = c.vector(cols);
        let xa = c.f32s(&x);
        let w = weight_rows(&mut c, fmt, rows, cols);
        let wa = c.bytes(&w, false);
        let old = c.vector(rows);
        let za = c.f32s(&old);
        c.setn(cols, rows, 0);
        c.i(
            Op::Gemv,
            fmt as u8,
            if k % 2 == 0 { GEMV_ACC } else { 0 },
            wa,
            xa,
            za,
        );
        c.run();
    }
}

#[test]
fn gemv_with_inputs_wider_than_the_quantised_buffer_and_many_rows_agrees() {
    // 1088 columns: 17 chunks of the tiny build's 64 and two of the default 768; 140 rows: 47
    // row chunks of the tiny build's 3 and two of the default 128 (whose 512 bytes of sums pass
    // the end's low address byte at row 64 before they end).
    for (k, fmt) in [GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::F16]
        .into_iter()
        .enumerate()
    {
        let mut c = Case::new(format!("wide GEMV {}", fmt.name()), 77 + k as u64, 1 << 20);
        let (cols, rows) = (1088, 140);
        let x = c.vector(cols);
        let xa = c.f32s(&x);
        let w = weight_rows(&mut c, fmt, rows, cols);
        let wa = c.bytes(&w, false);
        let old = c.vector(rows);
        let za = c.f32s(&old);
        c.setn(cols, rows, 0);
        c.i(Op::Gemv, fmt as u8, GEMV_ACC, wa, xa, za);
        c.run();
    }
}

/// Q8_0/Q4_0 block terms at their edges, for the fast paths that leave the odd cases to the
/// definition (softgemv65.s). Special scales: input blocks all zero (scale 0), huge (scale beyond
/// F16: inf) and tiny (an F16-subnormal scale); weight scales ±0, subnormal, ±inf and NaN (NaN
/// may differ in its bits only). Exact arithmetic: rows whose terms cancel to +0 (a block and
/// its copy under a negated scale), whose quants are all zero (isum 0, with a negative scale),
/// all at the low or the high end, and whose terms lie 26 and more binades apart both ways.
#[test]
fn gemv_block_terms_at_their_edges_agree() {
    for (k, fmt) in [GgmlType::Q8_0, GgmlType::Q4_0].into_iter().enumerate() {
        for flags in [0, GEMV_ACC] {
            for exact in [false, true] {
                let seed = 9960 + 10 * k as u64 + 2 * flags as u64 + exact as u64;
                let name = format!(
                    "GEMV {} {} edges, flags {flags}",
                    fmt.name(),
                    if exact { "exact" } else { "special" }
                );
                let mut c = Case::new(name, seed, 1 << 18);
                edge_case(&mut c, fmt, flags, exact);
                c.run();
            }
        }
    }
}

fn edge_case(c: &mut Case, fmt: GgmlType, flags: u8, exact: bool) {
    let block = |c: &mut Case, scale: f64| -> Vec<f32> {
        (0..32).map(|_| (c.rng.normal() * scale) as f32).collect()
    };
    // six input blocks; the copies make equal isums
    let x: Vec<f32> = if exact {
        let b0 = block(c, 1.0);
        let (b2, b3, b4) = (block(c, 1e-3), block(c, 1e3), block(c, 1.0));
        [&b0[..], &b0, &b2, &b3, &b4, &b4].concat()
    } else {
        let b0 = block(c, 1.0);
        let (huge, tiny, b5) = (block(c, 1e7), block(c, 1e-5), block(c, 1.0));
        [&b0[..], &b0, &[0.0; 32], &huge, &tiny, &b5].concat()
    };
    let xa = c.f32s(&x);
    let nq = fmt.block_bytes() - 2;
    // quant bytes: weight 0, all −128 (Q4_0: −8), all 127 (7)
    let (zero, low, high) = if fmt == GgmlType::Q8_0 {
        (0x00, 0x80, 0x7F)
    } else {
        (0x88, 0x00, 0xFF)
    };
    let (max, min) = (0x7BFF, 0x0400); // the largest and smallest normal F16
                                       // per row, per block: (scale bits, quants: None = random, copies of the row's first block
                                       // where `copy`)
    type Blk = (u16, Option<u8>);
    let mut rows: Vec<(Vec<Blk>, [bool; 6])> = Vec::new();
    for r in 0..10 {
        let mut row: Vec<Blk> = (0..6)
            .map(|_| (ggml::f32_to_f16((c.rng.normal() * 0.02) as f32), None))
            .collect();
        let mut copy = [false; 6];
        match (exact, r) {
            (true, 1) => {
                // zero terms, then block 5 cancels block 4: +0
                row[..4].iter_mut().for_each(|b| b.1 = Some(zero));
                row[5].0 = row[4].0 ^ 0x8000;
                copy = [false, false, false, false, true, true];
            }
            (true, 2) => {
                row[1].0 = row[0].0 ^ 0x8000;
                copy = [true, true, false, false, false, false];
            }
            (true, 3) => {
                row.iter_mut().for_each(|b| b.0 = min);
                row[0].0 = max;
            }
            (true, 4) => {
                row.iter_mut().for_each(|b| b.0 = min);
                row[5].0 = max | 0x8000;
            }
            (true, 5) => row[0] = (row[0].0 | 0x8000, Some(zero)),
            (true, 6) => row.iter_mut().for_each(|b| b.1 = Some(low)),
            (true, 7) => row.iter_mut().for_each(|b| b.1 = Some(high)),
            (true, 8) => {
                row.iter_mut().for_each(|b| b.1 = Some(zero));
                row[5].0 |= 0x8000;
            }
            (false, 1) => (row[0].0, row[1].0) = (0x0000, 0x8000),
            (false, 2) => (row[0].0, row[5].0) = (0x0001, 0x03FF),
            (false, 3) => (row[0].0, row[5].0) = (0x7C00, 0xFC00),
            (false, 4) => row[1].0 = 0x7E00,
            (false, 5) => (row[0].0, row[5].0) = (max, min),
            (false, 6) => row.iter_mut().for_each(|b| b.1 = Some(low)),
            (false, 7) => row[0].1 = Some(zero),
            // an infinite or NaN scale over zero weights (isum 0): 0·inf is NaN, not acc + 0
            (false, 8) => row[0] = (0x7C00, Some(zero)),
            (false, 9) => row[1] = (0xFE00, Some(zero)),
            _ => {}
        }
        rows.push((row, copy));
    }
    let mut w = Vec::new();
    for (row, copy) in &rows {
        let first: Vec<u8> = (0..nq).map(|_| c.rng.next_u64() as u8).collect();
        for (b, &(d, q)) in row.iter().enumerate() {
            w.extend(d.to_le_bytes());
            match q {
                Some(v) => w.extend(std::iter::repeat_n(v, nq)),
                None if copy[b] => w.extend(&first),
                None => w.extend((0..nq).map(|_| c.rng.next_u64() as u8)),
            }
        }
    }
    let n = rows.len() as u32;
    let wa = c.bytes(&w, false);
    let za = if flags & GEMV_ACC != 0 {
        let old = c.vector(n);
        c.f32s(&old)
    } else {
        c.alloc(4 * n, true)
    };
    if !exact {
        c.nan_ok(za, n, 4);
    }
    c.setn(6 * 32, n, 0);
    c.i(Op::Gemv, fmt as u8, flags, wa, xa, za);
}

/// The input quantiser's two roundings (§5.3: q = round half away from zero of single(x·id)):
/// inputs whose single product x·id is a half-integer though the exact product is not (the
/// rounding to a single decides), exact ties, and their neighbours, under block maxima that make
/// id inexact. A weight row of ones sums the quants, so any quant that differs shows.
#[test]
fn quantisation_at_half_way_points_agrees() {
    let mut c = Case::new("quantisation at half-way points".into(), 9980, 1 << 18);
    let mut x = Vec::new();
    let (mut doubles, mut ties) = (0, 0);
    for amax in [100.0f32, 3.0, 0.7, 1e-3, 12345.0, 127.0, 0.3, 55.5] {
        let d = amax / 127.0;
        let id = 1.0 / d;
        x.push(if c.below(2) == 0 { amax } else { -amax });
        for _ in 0..31 {
            let k = c.below(126) as f64 + 0.5;
            let x0 = (k / id as f64) as f32;
            // a neighbour of x0 whose single product is the half-way point, if there is one
            let mut v = x0;
            for step in 0..16u32 {
                let cand = f32::from_bits(x0.to_bits() - 8 + step);
                if (cand * id) as f64 == k {
                    v = cand;
                    if cand as f64 * id as f64 != k {
                        doubles += 1;
                    } else {
                        ties += 1;
                    }
                    break;
                }
            }
            x.push(if c.below(2) == 0 { v } else { -v });
        }
    }
    assert!(
        doubles > 20 && ties > 5,
        "{doubles} double roundings, {ties} ties"
    );
    let cols = x.len() as u32;
    let xa = c.f32s(&x);
    let mut w = Vec::new();
    for _ in 0..cols / 32 {
        w.extend(0x3C00u16.to_le_bytes()); // scale 1
        w.extend([1u8; 32]);
    }
    let wa = c.bytes(&w, false);
    let za = c.alloc(4, true);
    c.setn(cols, 1, 0);
    c.i(Op::Gemv, GgmlType::Q8_0 as u8, 0, wa, xa, za);
    c.run();
}

/// The input quantiser's shift (§5.3; the 45GS02 shifts the product's top byte right by s, the
/// exponent below the block maximum's binade plus one, 0 to 9, and takes q = 0 from s = 10 on):
/// elements in every binade from the maximum's down to 12 below it, each a random significand,
/// the value nearest a half-integer quant (either side of it) or the largest below a binade, under
/// maxima of random significands, with id exact (maximum 127·2^k) and at the F16 scale's ends; a
/// block of ±0 (amax 0) and a block whose maximum is the smallest the fast path takes. A weight
/// row of ones sums the quants, a second row of powers of two weighs them apart.
#[test]
fn quantisation_at_every_shift_agrees() {
    let mut c = Case::new("quantisation at every shift".into(), 9981, 1 << 18);
    let mut x: Vec<f32> = Vec::new();
    for amax in [
        100.0f32, 3.0, 0.7, 1e-3, 12345.0, 127.0, 0.3, 55.5, 1.0, 63.5, 0.0079, 8.0e6, 2.5e-2,
    ] {
        let d = (amax / 127.0) as f64;
        x.push(if c.below(2) == 0 { amax } else { -amax });
        for e in 1..32u32 {
            let k = (e % 13) as i32;
            let top = amax as f64 * 2f64.powi(-k);
            let v = match c.below(4) {
                0 => (top * (0.5 + c.below(1 << 20) as f64 / (1u64 << 21) as f64)) as f32,
                1 | 2 => {
                    // a half-integer quant in this binade, then a neighbour
                    let n = ((top / d).floor() as i64).max(1) as f64;
                    let h = (c.below(n as u64) as f64 + 0.5).min(top / d);
                    let v = (h * d) as f32;
                    f32::from_bits(v.to_bits().wrapping_add(c.below(3) as u32).wrapping_sub(1))
                }
                _ => f32::from_bits((top as f32).to_bits() - 1),
            };
            let v = if v.abs() > amax { amax } else { v };
            x.push(if c.below(2) == 0 { v } else { -v });
        }
    }
    for i in 0..32 {
        x.push(if i % 3 == 0 { -0.0 } else { 0.0 });
    }
    for i in 0..32 {
        let v = f32::from_bits(0x3C01_0000 + c.below(1 << 16) as u32) / 8.0;
        x.push(if i == 7 {
            0.0079
        } else if i % 2 == 0 {
            v
        } else {
            -v
        });
    }
    let cols = x.len() as u32;
    let xa = c.f32s(&x);
    let mut w = Vec::new();
    for _ in 0..cols / 32 {
        w.extend(0x3C00u16.to_le_bytes()); // scale 1
        w.extend([1u8; 32]);
    }
    for _ in 0..cols / 32 {
        w.extend(0x3C00u16.to_le_bytes());
        w.extend((0..32).map(|j| 1u8 << (j % 7)));
    }
    let wa = c.bytes(&w, false);
    let za = c.alloc(8, true);
    c.setn(cols, 2, 0);
    c.i(Op::Gemv, GgmlType::Q8_0 as u8, 0, wa, xa, za);
    c.run();
}

/// Weight rows, or the input, straddling $8100000: a DMA without the megabyte-crossing option
/// wraps inside its megabyte (gs4510.vhdl; the headless MEGA65 models it), a block read would
/// take the wrong bytes.
#[test]
fn gemv_with_rows_or_input_across_a_megabyte_boundary_agrees() {
    for (k, fmt) in [GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::F16]
        .into_iter()
        .enumerate()
    {
        for input_across in [false, true] {
            let mut c = Case::new(
                format!("GEMV {} across $8100000 (input {input_across})", fmt.name()),
                9950 + 2 * k as u64 + input_across as u64,
                2 << 20,
            );
            let (cols, rows) = (96, 9);
            let x = c.vector(cols);
            let w = weight_rows(&mut c, fmt, rows, cols);
            let straddle =
                |c: &mut Case, len: usize| c.next = BASE + 0x10_0000 - len as u32 / 2 - 5;
            let (wa, xa) = if input_across {
                let wa = c.bytes(&w, false);
                straddle(&mut c, 4 * cols as usize);
                (wa, c.f32s(&x))
            } else {
                let xa = c.f32s(&x);
                straddle(&mut c, w.len());
                (c.bytes(&w, false), xa)
            };
            let za = c.alloc(4 * rows, true);
            c.setn(cols, rows, 0);
            c.i(Op::Gemv, fmt as u8, 0, wa, xa, za);
            c.run();
        }
    }
}

/// One GEMV job of `rows` × `cols` random weights of `fmt` put where `place` says (given the rows'
/// bytes), the input and output allocated before them.
fn gemv_with_rows_placed(
    mut c: Case,
    fmt: GgmlType,
    rows: u32,
    cols: u32,
    place: impl FnOnce(&[u8]) -> u32,
) {
    let x = c.vector(cols);
    let xa = c.f32s(&x);
    let za = c.alloc(4 * rows, true);
    let w = weight_rows(&mut c, fmt, rows, cols);
    let wa = place(&w);
    c.put(wa, &w);
    c.setn(cols, rows, 0);
    c.i(Op::Gemv, fmt as u8, 0, wa, xa, za);
    c.run();
}

/// Row strides just below and just above 256 bytes (Q8_0 7 and 8 blocks, Q4_0 14 and 15), the
/// rows straddling the 64 KB bank boundary at $8010000: below 256 bytes softgemv65.s steps a block
/// source's high byte only when its low byte carries, and its bank only when the 16 bits wrap.
#[test]
fn gemv_with_row_strides_either_side_of_256_bytes_across_a_bank_boundary_agrees() {
    for (k, (fmt, cols)) in [
        (GgmlType::Q8_0, 224u32),
        (GgmlType::Q8_0, 256),
        (GgmlType::Q4_0, 448),
        (GgmlType::Q4_0, 480),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("GEMV {} of {cols} columns across $8010000", fmt.name());
        let c = Case::new(name, 9970 + k as u64, 1 << 18);
        gemv_with_rows_placed(c, fmt, 40, cols, |w| {
            BASE + 0x1_0000 - w.len() as u32 / 2 - 7
        });
    }
}

/// A row's block comes by one DMA entry (softgemv65.s), whose source crosses the megabyte as
/// option $01 lets it: the megabyte boundary at every kind of place inside a block of the middle
/// row (its first bytes, the middle of a Q8_0 block, its last byte; Q4_0 likewise).
#[test]
fn gemv_with_a_block_split_by_a_megabyte_boundary_anywhere_agrees() {
    for (k, (fmt, at)) in [
        (GgmlType::Q8_0, 1u32),
        (GgmlType::Q8_0, 17),
        (GgmlType::Q8_0, 18),
        (GgmlType::Q8_0, 19),
        (GgmlType::Q8_0, 33),
        (GgmlType::Q4_0, 9),
        (GgmlType::Q4_0, 17),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("GEMV {} with $8100000 at byte {at} of a block", fmt.name());
        let c = Case::new(name, 9960 + k as u64, 2 << 20);
        let rows = 3;
        gemv_with_rows_placed(c, fmt, rows, 96, |w| {
            // row 1's block 1 starts `at` bytes below the boundary
            let row = w.len() as u32 / rows;
            BASE + 0x10_0000 - (row + fmt.block_bytes() as u32 + at)
        });
    }
}

/// Q8_0/Q4_0 rows whose block scales have random signs and F16 exponents over the whole normal
/// range, against input blocks of magnitudes 2^-12 to 2^12: the single addition of each block
/// term to its row's sum (softgemv65.s) meets every exponent difference in both orders (the
/// product or the sum the larger, the smaller shifted by whole bytes and bits), equal
/// exponents, and differences of nearly equal values that renormalise by many places.
#[test]
fn gemv_sums_whose_terms_lie_any_number_of_binades_apart_agree() {
    for (k, fmt) in [GgmlType::Q8_0, GgmlType::Q4_0].into_iter().enumerate() {
        for flags in [0, GEMV_ACC] {
            let name = format!("GEMV {} terms binades apart, flags {flags}", fmt.name());
            let mut c = Case::new(name, 9990 + 2 * k as u64 + flags as u64, 1 << 18);
            let (blocks, rows) = (24u32, 40u32);
            let x: Vec<f32> = (0..blocks)
                .flat_map(|_| {
                    let m = 2f64.powi(c.below(25) as i32 - 12);
                    (0..32)
                        .map(|_| (c.rng.normal() * m) as f32)
                        .collect::<Vec<_>>()
                })
                .collect();
            let xa = c.f32s(&x);
            let nq = fmt.block_bytes() - 2;
            let mut w = Vec::new();
            let mut prev = Vec::new();
            for _ in 0..rows * blocks {
                // F16: sign, exponent 1-30, random fraction; now and then the previous block
                // again under the other sign, so the sum nearly cancels
                let again = !prev.is_empty() && c.below(6) == 0;
                let d = (c.below(2) as u16) << 15
                    | (1 + c.below(30) as u16) << 10
                    | c.below(1024) as u16;
                let q: Vec<u8> = if again {
                    prev[2..].to_vec()
                } else {
                    (0..nq).map(|_| c.rng.next_u64() as u8).collect()
                };
                let d = if again {
                    u16::from_le_bytes([prev[0], prev[1]]) ^ 0x8000 ^ c.below(2) as u16
                } else {
                    d
                };
                prev = [&d.to_le_bytes()[..], &q].concat();
                w.extend(&prev);
            }
            let wa = c.bytes(&w, false);
            let za = if flags & GEMV_ACC != 0 {
                let old = c.vector(rows);
                c.f32s(&old)
            } else {
                c.alloc(4 * rows, true)
            };
            c.nan_ok(za, rows, 4); // F16 scales up to 2^15 against inputs up to 2^12 may overflow
            c.setn(32 * blocks, rows, 0);
            c.i(Op::Gemv, fmt as u8, flags, wa, xa, za);
            c.run();
        }
    }
}

/// Rows 64 KB and more apart: softgemv65.s (and exactsum65.s's xr_load for float weights) moves
/// each row's DMA source by the stride's low 16 bits and, on a carry or a stride of 64 KB or more,
/// by its high bits.
#[test]
fn gemv_with_a_row_stride_of_64_kb_and_more_agrees() {
    // Q8_0: 1928 blocks of 34 bytes = 65,552; Q4_0: 3641 of 18 = 65,538; F16 1024 × 32 columns:
    // exactly 65,536 (no carry out of the low half); F32 513 × 32 · 4 = 65,664; BF16 65,600
    for (k, (fmt, blocks, rows)) in [
        (GgmlType::Q8_0, 1928u32, 3u32),
        (GgmlType::Q4_0, 3641, 2),
        (GgmlType::F16, 1024, 3),
        (GgmlType::F32, 513, 3),
        (GgmlType::Bf16, 1025, 2),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("GEMV {} with a 64 KB row stride", fmt.name());
        let mut c = Case::new(name, 9994 + k as u64, 1 << 20);
        let cols = 32 * blocks;
        let x = c.vector(cols);
        let xa = c.f32s(&x);
        let w = weight_rows(&mut c, fmt, rows, cols);
        assert!(w.len() as u32 / rows >= 1 << 16);
        c.gemv(fmt, &w, xa, cols, rows, false);
        c.run();
    }
}

#[test]
fn deqrow_of_q_blocks_with_every_quant_and_special_scales_agrees() {
    // The 45GS02 makes each quant a single by bit work and multiplies it with its fast single
    // product: every Q8_0 quant (−128..127) and Q4_0 nibble under scales ±0, subnormal, the
    // smallest and largest normals, ±1, ±inf and NaN.
    let scales: [u16; 12] = [
        0x0000, 0x8000, 0x0001, 0x83FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x7C00, 0xFC00,
        0x7E01,
    ];
    for fmt in [GgmlType::Q8_0, GgmlType::Q4_0] {
        let mut c = Case::new(
            format!("DEQROW {} quants and scales", fmt.name()),
            2090,
            1 << 18,
        );
        let mut w = Vec::new();
        let mut blocks = 0u32;
        for &d in &scales {
            for part in 0..8u32 {
                w.extend(d.to_le_bytes());
                if fmt == GgmlType::Q8_0 {
                    w.extend((0..32u32).map(|j| (part * 32 + j) as u8));
                } else {
                    w.extend((0..16u32).map(|j| (((j + part) % 16) | ((15 - j) << 4)) as u8));
                }
                blocks += 1;
            }
        }
        let n0 = 32 * blocks;
        let wa = c.bytes(&w, false);
        let za = c.alloc(4 * n0, true);
        // NaN scales and ±inf times a zero quant make NaNs, whose bits may differ (any NaN)
        c.nan_ok(za, n0, 4);
        let (wo, zo) = (c.operand(wa), c.operand(za));
        c.setn(n0, 0, 0);
        c.i(Op::DeqRow, fmt as u8, 0, wo, 0, zo);
        c.run();
    }
}

#[test]
fn deqrow_in_every_weight_format_agrees_bit_for_bit() {
    for (fi, &fmt) in FORMATS.iter().enumerate() {
        for k in 0..4u64 {
            let mut c = Case::new(
                format!("DEQROW {} #{k}", fmt.name()),
                2000 + 10 * fi as u64 + k,
                1 << 18,
            );
            let n0 = cols_for(&mut c, fmt, 6);
            let w = weight_rows(&mut c, fmt, 1, n0);
            let wa = c.bytes(&w, false);
            let za = c.alloc(4 * n0, true);
            let (wo, zo) = (c.operand(wa), c.operand(za));
            c.setn(n0, 0, 0);
            c.i(Op::DeqRow, fmt as u8, 0, wo, 0, zo);
            c.run();
        }
    }
}

/// The eps values of the converter's models, zero and a random one (N2's bit pattern).
pub fn eps(c: &mut Case) -> u32 {
    match c.below(5) {
        0 => 0x3727_C5AC,
        1 => 0x3586_37BD,
        2 => 0x2B8C_BCCC,
        3 => 0,
        _ => ((c.rng.uniform() * 1e-3) as f32).to_bits(),
    }
}

/// A length: tiny, small, around the chunk sizes, or long.
pub fn length(c: &mut Case, k: u64) -> u32 {
    match k % 4 {
        0 => 1 + c.below(6) as u32,
        1 => 1 + c.below(40) as u32,
        2 => 1 + c.below(300) as u32,
        _ => [6, 12, 32, 64][c.below(4) as usize],
    }
}

#[test]
fn elementwise_ops_norms_and_function_tables_agree_bit_for_bit() {
    let ops = [
        Op::VAdd,
        Op::VMul,
        Op::RmsNorm,
        Op::LayerNorm,
        Op::SiluMul,
        Op::Gelu,
        Op::Cvt16,
    ];
    for (oi, &op) in ops.iter().enumerate() {
        for k in 0..12u64 {
            let mut c = Case::new(
                format!("{} #{k}", op.name()),
                3000 + 100 * oi as u64 + k,
                1 << 18,
            );
            let n0 = length(&mut c, k);
            let x = match op {
                // the tables' ranges and beyond: below lo, inside, at and above hi
                Op::SiluMul => c.spread(n0, -14.0, 14.0),
                Op::Gelu => c.spread(n0, -7.0, 7.0),
                _ => c.vector(n0),
            };
            let xa = c.f32s(&x);
            let y_len = match op {
                Op::LayerNorm => 2 * n0,
                Op::Gelu | Op::Cvt16 => 0,
                _ => n0,
            };
            let y = c.vector(y_len);
            let ya = if y_len > 0 { c.f32s(&y) } else { 0 };
            let in_place = c.below(3) == 0;
            let za = if in_place {
                xa
            } else {
                let aligned = c.below(4) != 0;
                c.alloc(4 * n0, aligned)
            };
            let (xo, zo) = (c.operand(xa), c.operand(za));
            let yo = if y_len > 0 { c.operand(ya) } else { 0 };
            let e = eps(&mut c);
            let n1 = c.below(3) as u32;
            c.setn(n0, n1, e);
            c.i(op, 0, 0, xo, yo, zo);
            c.run();
        }
    }
}

#[test]
fn function_tables_agree_at_every_segment_and_at_their_edges() {
    // Every segment's start, middle and last single, and the edges lo and hi themselves.
    for (op, lo, hi) in [(Op::SiluMul, -12.0f32, 12.0f32), (Op::Gelu, -6.0, 6.0)] {
        let mut x = Vec::new();
        for i in 0..256 {
            let a = lo + (hi - lo) * i as f32 / 256.0;
            let b = lo + (hi - lo) * (i + 1) as f32 / 256.0;
            x.extend([a, (a + b) / 2.0, b.next_down()]);
        }
        x.extend([lo, hi, lo.next_up(), hi.next_down()]);
        let n0 = x.len() as u32;
        let mut c = Case::new(format!("{} table", op.name()), 3900, 1 << 18);
        let xa = c.f32s(&x);
        let ones = vec![1.0f32; n0 as usize];
        let ya = c.f32s(&ones);
        let za = c.alloc(4 * n0, true);
        c.setn(n0, 0, 0);
        c.i(op, 0, 0, xa, ya, za);
        c.run();
    }
}

/// GELU at each of its 255 segment changes: the first single x where floor(single(single(x + 6)·k))
/// reaches the next segment (found on the singles' order here, in the definition's f32
/// arithmetic), its neighbours on both sides, and x near 0 (where x + 6 ≈ 6 gives t ≈ 128, just
/// above an integer), ±0, subnormals and the ends ±6. An index taken in fixed point without its
/// margin from the integers, or with too small a margin, takes a neighbour's segment here.
#[test]
fn gelu_agrees_at_every_segment_change() {
    let (lo, k) = (-6.0f32, f32::from_bits(0x41AA_AAAB));
    let seg = |x: f32| (((x - lo) * k).floor() as i32).clamp(0, 255);
    let key = |f: f32| {
        let b = f.to_bits();
        if b >> 31 == 1 {
            !b
        } else {
            b | 0x8000_0000
        }
    };
    let from_key = |kk: u32| f32::from_bits(if kk >> 31 == 1 { kk & 0x7FFF_FFFF } else { !kk });
    let mut x = Vec::new();
    for i in 1..256 {
        // the least key whose segment is i or more, between -6 and 6
        let (mut a, mut b) = (key(lo), key(6.0f32));
        while b - a > 1 {
            let m = a + (b - a) / 2;
            if seg(from_key(m)) >= i {
                b = m;
            } else {
                a = m;
            }
        }
        let t = from_key(b);
        x.extend([t, t.next_down(), t.next_up()]);
    }
    x.extend([
        0.0,
        -0.0,
        1e-40,
        -1e-40,
        1e-7,
        -1e-7,
        3e-6,
        -3e-6,
        lo,
        lo.next_up(),
        6.0f32.next_down(),
    ]);
    let n0 = x.len() as u32;
    let mut c = Case::new("GELU segment changes".into(), 3950, 1 << 18);
    let xa = c.f32s(&x);
    let za = c.alloc(4 * n0, true);
    c.setn(n0, 0, 0);
    c.i(Op::Gelu, 0, 0, xa, 0, za);
    c.run();
}

#[test]
fn silumul_segments_near_the_roundings_edges_agree() {
    // The 45GS02's SILUMUL takes a segment from the exact (x − lo)·k when it is at least 2^-8
    // clear of an integer and the definition's two roundings otherwise: around every segment
    // edge the 8 singles each side and the points 2^-8 (and 2^-8 ± 2^-12) from the edge on both
    // sides, tiny and zero x of both signs, and the window's ends.
    let k = f64::from(f32::from_bits(0x412A_AAAB));
    let mut x: Vec<f32> = Vec::new();
    for n in 0..=256u32 {
        let edge = (n as f64 / k - 12.0) as f32;
        let mut v = edge;
        for _ in 0..8 {
            v = v.next_down();
        }
        for _ in 0..17 {
            x.push(v);
            v = v.next_up();
        }
        for off in [
            1.0 / 256.0,
            1.0 / 256.0 - 1.0 / 4096.0,
            1.0 / 256.0 + 1.0 / 4096.0,
        ] {
            for sgn in [-1.0, 1.0] {
                let p = ((n as f64 + sgn * off) / k - 12.0) as f32;
                x.extend([p.next_down(), p, p.next_up()]);
            }
        }
    }
    for e in 0..48 {
        let t = 2f32.powi(-e);
        x.extend([t, -t, t.next_up(), -t.next_down()]);
    }
    x.extend([
        0.0,
        -0.0,
        12f32.next_down(),
        -12f32.next_down(),
        11.999,
        -11.999,
    ]);
    x.retain(|v| v.abs() < 12.0);
    let n0 = x.len() as u32;
    let mut c = Case::new("SILUMUL near segment edges".into(), 3950, 1 << 19);
    let xa = c.f32s(&x);
    let y = c.vector(n0);
    let ya = c.f32s(&y);
    let za = c.alloc(4 * n0, true);
    c.setn(n0, 0, 0);
    c.i(Op::SiluMul, 0, 0, xa, ya, za);
    c.run();
}

#[test]
fn silumul_and_rmsnorm_products_kept_unpacked_agree_at_every_exponent_and_special_operand() {
    // The 45GS02's SILUMUL takes x of exponents 107..129 through the multiplier once (the
    // segment's shift by d = 130 − e as a byte offset and d mod 8 places) and keeps c1·x and the
    // sum unpacked into the product with y; RMSNORM keeps x·r unpacked into the product with g.
    // x at every exponent 100..135 and both signs, y and g at every exponent (the products'
    // exponents through the range's ends both ways), zeros, subnormals, infinities and NaN among
    // them and normal elements right after each special one.
    let specials = [
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        -f32::MIN_POSITIVE,
        1e-45,
        -3e-42,
        0.0,
        -0.0,
    ];
    let mut c = Case::new("SILUMUL and RMSNORM unpacked".into(), 4170, 1 << 19);
    let frac = |c: &mut Case| c.rng.next_u64() as u32 & 0x7F_FFFF;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for e in 100..=135u32 {
        for neg in [false, true] {
            for _ in 0..2 {
                x.push(fields(neg, e, frac(&mut c)));
                y.push(c.value());
            }
        }
    }
    for e in 0..=255u32 {
        // SiLU's exponents 126, 128, 124, 124; with the largest significand the product carries
        // into the next binade right at the range's top and bottom
        for (j, xv) in [1.0f32, 2.9, -2.0, 0.3].into_iter().enumerate() {
            let f = if j == 1 { 0x7F_FFFF } else { frac(&mut c) };
            x.push(xv);
            y.push(fields(j % 2 == 1, e, f));
        }
    }
    for (k, &s) in specials.iter().enumerate() {
        x.extend([s, 1.5, -0.75]);
        y.extend([c.value(), specials[(k + 3) % specials.len()], 2.0]);
    }
    // SiLU's segments 127 and 128 (|x| < 0.09375) have c0 = +0: c1·x alone, rounded to the A
    // form, times y at every exponent and the specials, x of both signs from 2^-20 up to the
    // segments' ends, after and before elements of other segments
    for e in 0..=255u32 {
        let xe = 107 + e % 16;
        let f = if e % 3 == 0 { 0x7F_FFFF } else { frac(&mut c) };
        x.extend([
            fields(e % 2 == 0, xe, frac(&mut c)),
            0.09375f32.next_down(),
            -0.09375,
        ]);
        y.extend([
            fields(e % 4 >= 2, e, f),
            fields(e % 2 == 1, e, f),
            c.value(),
        ]);
    }
    for &s in specials.iter() {
        x.extend([0.05, -3e-6, -0.09]);
        y.extend([s, s, c.value()]);
    }
    let n0 = x.len() as u32;
    let xa = c.f32s(&x);
    let ya = c.f32s(&y);
    let za = c.alloc(4 * n0, true);
    c.nan_ok(za, n0, 4);
    c.setn(n0, 0, 0);
    c.i(Op::SiluMul, 0, 0, xa, ya, za);
    // RMSNORM: normal x (and a zero and a subnormal), g at every exponent and the specials
    let m0 = 263u32;
    let mut xr: Vec<f32> = (0..m0).map(|_| (c.rng.normal() * 3.0) as f32).collect();
    xr[17] = 0.0;
    xr[18] = -1e-40;
    xr[19] = 1e-30;
    let mut g: Vec<f32> = (0..m0)
        .map(|e| fields(e % 2 == 1, e % 256, frac(&mut c)))
        .collect();
    for (k, &s) in specials.iter().enumerate() {
        g[40 + 7 * k] = s;
    }
    let xra = c.f32s(&xr);
    let ga = c.f32s(&g);
    let zr = c.alloc(4 * m0, true);
    c.nan_ok(zr, m0, 4);
    c.setn(m0, 0, 0x3727_C5AC);
    c.i(Op::RmsNorm, 0, 0, xra, ga, zr);
    c.run();
}

#[test]
fn rope_with_cos_sin_tables_shorter_and_longer_than_a_chunk_agrees() {
    // The 45GS02 reads a (cos, sin) table of at most a chunk (64 singles) once and starts it
    // again every N1/2 pairs inside its kernel, and a longer one in runs per chunk: tables of
    // one pair, of a chunk less a pair, of a chunk, of a chunk and a pair and of two and more,
    // over vectors that end inside a chunk and in an odd element.
    for (k, (n0, n1)) in [
        (131u32, 2u32),
        (259, 62),
        (200, 64),
        (260, 66),
        (301, 130),
        (64, 128),
        (97, 6),
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = Case::new(format!("ROPE N0 {n0} N1 {n1}"), 4050 + k as u64, 1 << 18);
        let cs: Vec<f32> = (0..n1 / 2)
            .flat_map(|_| {
                let t = c.rng.uniform() * 40.0;
                [t.cos() as f32, t.sin() as f32]
            })
            .collect();
        let x = c.vector(n0);
        c.rope(&x, &cs, false);
        c.run();
    }
}

#[test]
fn rope_products_from_zero_page_agree_at_their_edges() {
    // The 45GS02's ROPE takes a product from the operands in zero page when both are normal and
    // the product's exponent is in sv_mul's range, else sv_mul: v and (c, s) at exponents where
    // the products leave the range both ways (and the largest fractions carry into the next
    // binade there), short fractions (ties), both signs, zeros, subnormals, infinities and NaN
    // in either operand of either product, x − x cancellations, lengths ending inside a chunk
    // and in an odd element.
    for k in 0..10u64 {
        let mut c = Case::new(format!("ROPE edges #{k}"), 9980 + k, 1 << 18);
        let n1 = 2 * (1 + c.below(40) as u32);
        let n0 = 1 + c.below(150) as u32;
        let specials = [0.0f32, -0.0, 1e-41, -2e-39, f32::INFINITY, f32::NAN];
        let pick = |c: &mut Case, small: bool| -> f32 {
            match c.below(12) {
                0 => specials[c.below(specials.len() as u64) as usize],
                1..=3 => {
                    let keep = c.below(24) as u32;
                    let e = edge_exponent(c);
                    let f = if c.below(3) == 0 {
                        0x7F_FFFF
                    } else {
                        short_fraction(c, keep)
                    };
                    fields(c.below(2) == 0, e, f)
                }
                _ if small => {
                    let t = c.rng.uniform() * 40.0;
                    t.sin() as f32
                }
                _ => c.value(),
            }
        };
        let cs: Vec<f32> = (0..n1).map(|_| pick(&mut c, true)).collect();
        let mut x: Vec<f32> = (0..n0).map(|_| pick(&mut c, false)).collect();
        for i in (1..n0 as usize).step_by(2) {
            if c.below(6) == 0 {
                x[i] = x[i - 1]; // v0·c − v1·s cancels where c = s
            }
        }
        c.rope(&x, &cs, true);
        c.run();
    }
}

/// ROPE's sums of two rounded products kept unpacked (softvec65.s's `_sv_k_rope`): the product
/// with s rounds into the A form (v1·s with its sign turned for v0'), the product with c into
/// fadd, and s = ±0 (position 0) gives v0·c and v1·c alone. The pairs put the second product
/// 0-31 binades below or up to 8 above the first (either half), exactly its negative (x − x =
/// +0), a few last places off it (cancellation, near the bottom of the range into subnormals),
/// on ties (short fractions), and products or sums that round to infinity (all-ones fractions
/// at the range's top, in the A form's product or in fadd's); tables at position 0 ((1, ±0),
/// (c, ±0)), with subnormal, infinite or NaN c or s, and zeros, subnormals, infinities and NaN
/// in v; head_dim 2, 8, 64 and 6 or 14 (N1 of 1-32 pairs), an odd N0 leaving its last element.
#[test]
fn rope_sums_of_products_kept_unpacked_agree_at_their_edges() {
    let specials = [
        0.0f32,
        -0.0,
        1e-41,
        -3e-45,
        2e-39,
        f32::INFINITY,
        -f32::INFINITY,
        f32::NAN,
    ];
    for k in 0..32u64 {
        let mut c = Case::new(format!("ROPE unpacked sums #{k}"), 9900 + k, 1 << 18);
        let h = [1u32, 4, 32, 3, 7][(k % 5) as usize];
        let pos0 = k % 4 == 1;
        let cs: Vec<f32> = (0..h)
            .flat_map(|_| {
                let sign = |c: &mut Case| c.below(2) == 0;
                let one = |c: &mut Case| -> f32 {
                    match c.below(10) {
                        0 => specials[c.below(specials.len() as u64) as usize],
                        1 => fields(sign(c), 254 - c.below(3) as u32, 0x7F_FFFF),
                        2 => fields(sign(c), 1 + c.below(3) as u32, 0x7F_FFFF),
                        3 | 4 => {
                            let keep = c.below(24) as u32;
                            let f = short_fraction(c, keep);
                            let e = edge_exponent(c);
                            fields(sign(c), e, f)
                        }
                        _ => (c.rng.uniform() * 40.0).sin() as f32,
                    }
                };
                let cc = if pos0 && c.below(2) == 0 {
                    1.0
                } else {
                    one(&mut c)
                };
                let ss = if pos0 {
                    match c.below(8) {
                        0 => specials[c.below(specials.len() as u64) as usize],
                        1 => f32::from_bits(1 + c.below(3) as u32), // subnormal, low bits only
                        2 | 3 => -0.0,
                        _ => 0.0,
                    }
                } else {
                    one(&mut c)
                };
                [cc, ss]
            })
            .collect();
        let pairs = 1 + c.below(90) as u32;
        let mut x = Vec::new();
        for i in 0..pairs {
            let j = (i % h) as usize;
            let (cc, ss) = (cs[2 * j] as f64, cs[2 * j + 1] as f64);
            let ecb = |v: f64| ((v as f32).to_bits() >> 23 & 0xFF) as i32;
            // v0: its product with c in the middle, at the bottom or at the top of the range
            let keep = c.below(24) as u32;
            let f0 = if c.below(6) == 0 {
                0x7F_FFFF
            } else {
                short_fraction(&mut c, keep)
            };
            let target = match c.below(6) {
                0 => 2 + c.below(6) as i32,
                1 => 254 - c.below(3) as i32,
                _ => 107 + c.below(40) as i32,
            };
            let e0 = (target - ecb(cc) + 127).clamp(1, 254) as u32;
            let v0 = match c.below(16) {
                0 => specials[c.below(specials.len() as u64) as usize],
                _ => fields(c.below(2) == 0, e0, f0),
            };
            // v1 so that its product is the other's (in v0' or v1') scaled by 2^-d, perturbed
            let half1 = c.below(2) == 0;
            let t = if half1 {
                v0 as f64 * cc / ss
            } else {
                v0 as f64 * ss / cc
            };
            let d = c.below(40) as i32 - 8;
            let base = (t * 2f64.powi(-d)) as f32;
            let v1 = match c.below(12) {
                0 => specials[c.below(specials.len() as u64) as usize],
                1 => fields(c.below(2) == 0, 254 - c.below(2) as u32, 0x7F_FFFF),
                2..=4 if base.is_finite() && base != 0.0 => {
                    let u = c.below(7) as i32 - 3;
                    f32::from_bits((base.to_bits() as i32 + u) as u32)
                }
                5 | 6 if base.is_finite() => {
                    let keep = c.below(24) as u32;
                    let f = short_fraction(&mut c, keep);
                    let e = (base.to_bits() >> 23 & 0xFF).max(1);
                    fields(c.below(2) == 0, e, f)
                }
                _ => {
                    if c.below(2) == 0 {
                        -base
                    } else {
                        base
                    }
                }
            };
            x.extend([v0, v1]);
        }
        if k % 3 == 0 {
            x.push(c.value()); // an odd last element, left as it is
        }
        c.rope(&x, &cs, true);
        c.run();
    }
}

#[test]
fn rope_meanrows_and_argmax_agree_bit_for_bit() {
    for k in 0..16u64 {
        // ROPE: any N0 (an odd last element stays), N1 even, one (cos, sin) row for every head
        let mut c = Case::new(format!("ROPE #{k}"), 4000 + k, 1 << 18);
        let n0 = length(&mut c, k);
        let n1 = 2 * (1 + c.below(24) as u32);
        let cs: Vec<f32> = (0..n1 / 2)
            .flat_map(|_| {
                let t = c.rng.uniform() * 40.0;
                [t.cos() as f32, t.sin() as f32]
            })
            .collect();
        let x = c.vector(n0);
        c.rope(&x, &cs, false);
        c.run();

        // MEANROWS of 1-9 rows
        let mut c = Case::new(format!("MEANROWS #{k}"), 4100 + k, 1 << 18);
        let n0 = length(&mut c, k);
        let rows = 1 + c.below(9) as u32;
        let x = c.vector(rows * n0);
        let xa = c.f32s(&x);
        let za = c.alloc(4 * n0, true);
        let reg = c.below(15) as u8;
        c.li(reg, rows);
        let (xo, zo) = (c.operand(xa), c.operand(za));
        c.setn(n0, 0, 0);
        c.i(Op::MeanRows, reg, 0, xo, 0, zo);
        c.run();

        // ARGMAX with ties of the maximum (the lowest index wins), the result stored
        let mut c = Case::new(format!("ARGMAX #{k}"), 4200 + k, 1 << 18);
        let n0 = if k == 0 { 0 } else { length(&mut c, k) };
        let mut x = c.vector(n0);
        if n0 > 2 && k % 2 == 0 {
            let m = x.iter().copied().fold(f32::MIN, f32::max);
            for _ in 0..3 {
                let i = c.below(n0 as u64) as usize;
                x[i] = m;
            }
        }
        let xa = c.f32s(&x);
        let out = c.alloc(4, true);
        let reg = c.below(15) as u8;
        c.li(reg, 0xDEAD_BEEF);
        let xo = c.operand(xa);
        c.setn(n0, 0, 0);
        c.i(Op::ArgMax, reg, 0, xo, 0, 0);
        c.i(Op::Str, reg, 0, out, 0, 0);
        c.run();
    }
}

/// An ATTN job: `nh` heads over `nkv` KV heads of `hd`, rows 0..t, KV format `kv`; q and K
/// scaled by `mag`.
pub fn attn_case(name: String, seed: u64, shape: (u32, u32, u32, u32), kv: u32, mag: f64) -> Case {
    let mut c = Case::new(name, seed, 1 << 20);
    add_attn(&mut c, shape, kv, mag);
    c
}

/// The ATTN instruction of `attn_case` (with its operands) appended to `c`'s job.
fn add_attn(c: &mut Case, (nh, nkv, hd, t): (u32, u32, u32, u32), kv: u32, mag: f64) {
    let kvd = nkv * hd;
    let q: Vec<f32> = (0..nh * hd)
        .map(|_| (c.rng.normal() * mag) as f32)
        .collect();
    let cache = |c: &mut Case, scale: f64| -> u32 {
        let v: Vec<f32> = (0..t * kvd)
            .map(|_| (c.rng.normal() * scale) as f32)
            .collect();
        let b: Vec<u8> = if kv == KV_F16 {
            v.iter()
                .flat_map(|x| ggml::f32_to_f16(*x).to_le_bytes())
                .collect()
        } else {
            v.iter().flat_map(|x| x.to_le_bytes()).collect()
        };
        c.bytes(&b, true)
    };
    let ka = cache(c, mag);
    let va = cache(c, 1.0);
    let qa = c.f32s(&q);
    let blk = AttnBlock {
        k_cache: ka,
        v_cache: va,
        n_heads: nh,
        n_kv_heads: nkv,
        head_dim: hd,
        kv_format: kv,
    };
    c.attn(&blk, qa, t, None, false);
}

/// Several ATTN, RMSNORM, LAYERNORM and MEANROWS instructions of different sizes in one job: what
/// the core keeps from one instruction for the next (ATTN's rsqrt(head_dim), the norms' recip(N))
/// must be what the new sizes give.
#[test]
fn attention_and_norms_of_several_sizes_in_one_job_agree() {
    for k in 0..4u64 {
        let mut c = Case::new(format!("sizes in one job #{k}"), 7700 + k, 1 << 20);
        for (i, shape) in [(8, 4, 8, 3), (4, 2, 16, 2), (8, 4, 8, 4), (2, 1, 5, 1)]
            .into_iter()
            .enumerate()
        {
            let kv = if (i as u64 + k).is_multiple_of(2) {
                KV_F16
            } else {
                KV_F32
            };
            add_attn(&mut c, shape, kv, 1.0);
        }
        for (i, n0) in [64u32, 48, 64, 17, 3].into_iter().enumerate() {
            let op = [Op::RmsNorm, Op::LayerNorm][(i + k as usize) % 2];
            let x = c.spread(n0, -4.0, 4.0);
            let xa = c.f32s(&x);
            let y_len = if op == Op::LayerNorm { 2 * n0 } else { n0 };
            let y = c.spread(y_len, -2.0, 2.0);
            let ya = c.f32s(&y);
            let za = c.alloc(4 * n0, true);
            let e = eps(&mut c);
            let (xo, yo, zo) = (c.operand(xa), c.operand(ya), c.operand(za));
            c.setn(n0, 0, e);
            c.i(op, 0, 0, xo, yo, zo);
        }
        for (n0, rows) in [(16u32, 3u32), (16, 5), (7, 3)] {
            let x = c.spread(rows * n0, -4.0, 4.0);
            let xa = c.f32s(&x);
            let za = c.alloc(4 * n0, true);
            let (xo, zo) = (c.operand(xa), c.operand(za));
            c.li(9, rows);
            c.setn(n0, 0, 0);
            c.i(Op::MeanRows, 9, 0, xo, 0, zo);
        }
        c.run();
    }
}

/// RMSNORM's square root at its edges: with x about 1e-23 every x² rounds to +0, so the radicand
/// is eps itself (any bits, SETN's N2) and the output x·rsqrt(eps)·g shows the root: exact
/// squares, both exponent parities, significands all ones (roots that round up into the next
/// binade) and all zeros, the smallest and largest normals, subnormals, ±0, +inf, a negative
/// (NaN: any NaN counts there) and random bits.
#[test]
fn rmsnorm_square_roots_at_their_edges_agree() {
    let mut eps: Vec<u32> = vec![
        0x4110_0000, // 9
        0x4010_0000, // 2.25
        0x4080_0000, // 4
        0x3E80_0000, // 0.25
        0x4000_0000, // 2
        0x3F80_0000, // 1
        0x407F_FFFF,
        0x3F7F_FFFF,
        0x3FFF_FFFF,
        0x4000_0001,
        0x3F80_0001,
        0x0080_0000,
        0x0080_0001,
        0x00FF_FFFF,
        0x7F7F_FFFF,
        0x7F00_0000,
        0x0000_0001,
        0x007F_FFFF,
        0x0000_0000,
        0x8000_0000,
        0x7F80_0000,
        0xBF80_0000,
    ];
    let mut rng = Rng::new(7600);
    for _ in 0..40 {
        // normal radicands of any exponent from 20 to 234 (the roots' reciprocals stay visible)
        let e = 20 + (rng.next_u64() % 215) as u32;
        eps.push(e << 23 | (rng.next_u64() as u32 & 0x7F_FFFF));
    }
    for (k, chunk) in eps.chunks(8).enumerate() {
        let mut c = Case::new(format!("RMSNORM roots #{k}"), 7600 + k as u64, 1 << 18);
        for &e in chunk {
            let n0 = 1 + c.below(4) as u32;
            let x: Vec<f32> = (0..n0).map(|_| (c.rng.normal() * 1e-23) as f32).collect();
            let xa = c.f32s(&x);
            let g = c.spread(n0, 0.5, 2.0);
            let ga = c.f32s(&g);
            let za = c.alloc(4 * n0, true);
            c.nan_ok(za, n0, 4);
            let (xo, go, zo) = (c.operand(xa), c.operand(ga), c.operand(za));
            c.setn(n0, 0, e);
            c.i(Op::RmsNorm, 0, 0, xo, go, zo);
        }
        c.run();
    }
}

/// RMSNORM's square root near its ties, of both exponent parities: for a 25-bit odd q (a root
/// whose 25th bit, the guard, is 1) q² has 50 bits, so the singles just below and just above it
/// (its top 24 bits, and one more) have roots just below and just above q, which round down
/// and up (the remainder's sticky bit decides: a root is never exactly a tie). q² below 2^49
/// gives an odd biased exponent (radicand m·2^25), above it an even one (m·2^26). Also exact
/// squares (no remainder), significands whose lowest bit enters the root's last steps (odd m,
/// odd exponent), and +0, −0, subnormals, +inf, NaN and a negative. x about 1e-23 makes every
/// x² +0, so the radicand is eps itself.
#[test]
fn rmsnorm_square_roots_near_their_ties_at_either_exponent_parity_agree() {
    let mut eps: Vec<u32> = vec![
        0x4B7F_E001, // 4095², exact
        0x4A80_0002,
        0x3F80_0003,
        0x4000_0003,
        0x0000_0000,
        0x8000_0000,
        0x0000_0003,
        0x007F_FFFF,
        0x7F80_0000,
        0x7FC0_0000,
        0xC080_0000,
    ];
    let mut rng = Rng::new(7640);
    let mut qs: Vec<u64> = vec![(1 << 24) + 1, (1 << 25) - 1, (1 << 24) + 3, 0x016A_09E7];
    for _ in 0..14 {
        qs.push((1 << 24) | (rng.next_u64() & 0xFF_FFFF) | 1);
    }
    for (i, &q) in qs.iter().enumerate() {
        let s = q * q;
        // m·2^25 (odd exponent) or m·2^26 (even): m the top 24 bits of q², below q²
        let (m, odd) = if s < 1 << 49 {
            (s >> 25, true)
        } else {
            (s >> 26, false)
        };
        let e = [101u32, 127, 151, 75][i % 4] + if odd { 0 } else { 1 };
        for m in [m, m + 1] {
            if m < 1 << 24 {
                eps.push(e << 23 | (m as u32 & 0x7F_FFFF));
            }
        }
        // an odd significand at an odd exponent: its lowest bit is the radicand's last pair's
        let eo = if odd { e } else { e - 1 };
        eps.push(eo << 23 | (rng.next_u64() as u32 & 0x7F_FFFF) | 1);
    }
    for (k, chunk) in eps.chunks(8).enumerate() {
        let mut c = Case::new(
            format!("RMSNORM roots near ties #{k}"),
            7640 + k as u64,
            1 << 18,
        );
        for &e in chunk {
            let n0 = 1 + c.below(3) as u32;
            let x: Vec<f32> = (0..n0).map(|_| (c.rng.normal() * 1e-23) as f32).collect();
            let xa = c.f32s(&x);
            let g = c.spread(n0, 0.5, 2.0);
            let ga = c.f32s(&g);
            let za = c.alloc(4 * n0, true);
            c.nan_ok(za, n0, 4);
            let (xo, go, zo) = (c.operand(xa), c.operand(ga), c.operand(za));
            c.setn(n0, 0, e);
            c.i(Op::RmsNorm, 0, 0, xo, go, zo);
        }
        c.run();
    }
}

/// VADD, VMUL, GELU, CVT16 and LAYERNORM at lengths around the assembler build's chunks (192
/// elements for the elementwise ops, 63 in LAYERNORM's last pass, SC_VEC = 32 elsewhere) and
/// their multiples, in place and not.
#[test]
fn elementwise_ops_and_layernorm_across_the_large_chunks_agree() {
    let ops = [
        Op::VAdd,
        Op::VMul,
        Op::Gelu,
        Op::Cvt16,
        Op::LayerNorm,
        Op::SiluMul,
    ];
    for (k, n0) in [62u32, 63, 64, 126, 127, 191, 192, 193, 384, 385, 577]
        .into_iter()
        .enumerate()
    {
        let mut c = Case::new(format!("large chunks #{k}"), 7950 + k as u64, 1 << 19);
        for (oi, &op) in ops.iter().enumerate() {
            let x = if op == Op::Gelu || op == Op::SiluMul {
                c.spread(n0, -7.0, 7.0)
            } else {
                c.vector(n0)
            };
            let xa = c.f32s(&x);
            let y_len = match op {
                Op::LayerNorm => 2 * n0,
                Op::Gelu | Op::Cvt16 => 0,
                _ => n0,
            };
            let y = c.vector(y_len);
            let ya = if y_len > 0 { c.f32s(&y) } else { 0 };
            let za = if (k + oi) % 2 == 0 && op != Op::Cvt16 {
                xa
            } else {
                c.alloc(4 * n0, true)
            };
            let (xo, yo, zo) = (c.operand(xa), c.operand(ya), c.operand(za));
            c.setn(n0, 0, 0x3727_C5AC);
            c.i(op, 0, 0, xo, yo, zo);
        }
        c.run();
    }
}

/// LAYERNORM at its edges: x of one value (with pairs ±1/4 around it in even lengths, so the sum
/// stays exact), where d = x − mu is exactly zero whenever N and the sum make mu exact (N = 1, 2,
/// 32, 64) and tiny otherwise (31, 33, 63, 65, 384 elements: around the chunks and MiniLM's
/// dimension); the variance is then 0 or tiny, r = rsqrt(eps) or huge. Biases of ±0 show a zero
/// d's sign (x − mu is +0; −(mu − x) would be −0, and −0 + −0 stays −0), gains and biases also
/// ±0, subnormals, ±inf, NaN and the smallest normal; in place and not.
#[test]
fn layernorm_at_its_edges_agrees() {
    let specials = [
        0.0f32,
        -0.0,
        1e-40,
        -1e-42,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
    ];
    for (k, n0) in [1u32, 2, 31, 32, 33, 63, 64, 65, 384]
        .into_iter()
        .enumerate()
    {
        let mut c = Case::new(format!("LAYERNORM edges #{k}"), 7800 + k as u64, 1 << 18);
        let mut x = vec![1.5f32; n0 as usize];
        if n0.is_multiple_of(2) {
            for i in (0..n0 as usize / 2).step_by(3) {
                x[2 * i] += 0.25;
                x[2 * i + 1] -= 0.25;
            }
        }
        let xa = c.f32s(&x);
        let mut gb = c.spread(2 * n0, 0.5, 2.0);
        for i in 0..n0 as usize {
            // the bias: ±0 mostly, else a special value or the random one
            gb[n0 as usize + i] = match c.below(8) {
                0..=2 => 0.0,
                3..=5 => -0.0,
                6 => specials[c.below(specials.len() as u64) as usize],
                _ => gb[n0 as usize + i],
            };
            if c.below(8) == 0 {
                gb[i] = specials[c.below(specials.len() as u64) as usize];
            } else if c.below(4) == 0 {
                gb[i] = -gb[i];
            }
        }
        let ga = c.f32s(&gb);
        let za = if k % 3 == 1 {
            xa
        } else {
            c.alloc(4 * n0, true)
        };
        c.nan_ok(za, n0, 4);
        let e = [0x3727_C5AC, 0x2B8C_BCCC, 0][k % 3];
        let (xo, go, zo) = (c.operand(xa), c.operand(ga), c.operand(za));
        c.setn(n0, 0, e);
        c.i(Op::LayerNorm, 0, 0, xo, go, zo);
        c.run();
    }
}

/// Steps of a running sum that each meet an edge of the rounding, as sequences of terms: a tie
/// to even that stays, one that rounds up, a carry into the next binade (2 − 2^-23 plus 2^-24,
/// and plus 2^-23), a sum past the largest single (inf) and on, cancellation to +0 and a sum
/// that starts again from it, −0 terms on a zero sum, a difference below the normal range (a
/// subnormal sum, exact) and back, terms far apart (sticky bits), NaN and ±inf terms.
const SUM_EDGES: [[f32; 4]; 13] = [
    [1.0, 5.960_464_5e-8, 5.960_464_5e-8, 5.960_464_5e-8],
    [1.000_000_1, 5.960_464_5e-8, 1.0, -2.0],
    [1.999_999_9, 5.960_464_5e-8, -1.0, 1.192_092_9e-7],
    [1.999_999_9, 1.192_092_9e-7, 3.0, -1.0],
    [1.7e38, 1.7e38, 1.7e38, -1.0],
    [1.25, -1.25, 3.5e-3, -7.0],
    [-0.0, -0.0, 2.0, -2.0],
    [
        1.763_241_2e-38,
        -1.175_494_4e-38,
        1.175_494_4e-38,
        -1.763_241_2e-38,
    ],
    [1.0, 1e-30, -1.0, 1e-30],
    [1.0, f32::NAN, 2.0, 3.0],
    [f32::INFINITY, 1.0, f32::NEG_INFINITY, 1.0],
    [-3.0, 1.5, 1.5, 2.5e-20],
    [1.175_494_4e-38, -1.175_494_2e-38, 6.0, -6.0],
];

/// The running sums the assembler keeps unpacked between their steps (ATTN's scores and weighted
/// sums, LAYERNORM's mean, RMSNORM's sum of squares) through `SUM_EDGES`: every step rounds to
/// single as the definition's, so each result must agree bit for bit (NaN anywhere then).
/// ATTN: K rows 0 and 1 all +0 and all 1, so a head's score over q's four terms is their sum
/// (times 1/2) and the weights show it; with four equal K rows each weight is 1/4 exactly and
/// V's columns hold four times the terms, so each output is their sum.
#[test]
fn running_sums_kept_unpacked_agree_at_ties_carries_overflow_subnormals_and_cancellation() {
    let terms: Vec<f32> = SUM_EDGES.iter().flatten().copied().collect();
    for (k, kv) in [KV_F32, KV_F16, KV_F32].into_iter().enumerate() {
        let mut c = Case::new(format!("unpacked sums #{k}"), 8100 + k as u64, 1 << 20);
        let nh = SUM_EDGES.len() as u32;
        let enc = |c: &mut Case, v: &[f32]| -> u32 {
            let b: Vec<u8> = if kv == KV_F16 {
                v.iter()
                    .flat_map(|x| ggml::f32_to_f16(*x).to_le_bytes())
                    .collect()
            } else {
                v.iter().flat_map(|x| x.to_le_bytes()).collect()
            };
            c.bytes(&b, true)
        };
        // scores: q = the terms (head h the sequence h), K rows 0 = +0 and 1 = 1, head_dim 4
        let mut kc = vec![0.0f32; 4];
        kc.extend([1.0f32; 4]);
        let va: Vec<f32> = (0..8).map(|_| c.rng.normal() as f32).collect();
        let blk = AttnBlock {
            k_cache: enc(&mut c, &kc),
            v_cache: enc(&mut c, &va),
            n_heads: nh,
            n_kv_heads: 1,
            head_dim: 4,
            kv_format: kv,
        };
        let qa = c.f32s(&terms);
        c.attn(&blk, qa, 2, None, true);
        // weighted sums: 4 equal K rows (weights 1/4), V row t column j = 4 · sequence j's term t
        // (F16 caches: the terms an F16 holds, times 4, scaled into its range)
        let cols = SUM_EDGES.len();
        let mut vc = vec![0.0f32; 4 * cols];
        for (j, s) in SUM_EDGES.iter().enumerate() {
            for t in 0..4 {
                let x = if kv == KV_F16 && s[t].is_finite() {
                    ggml::f16_to_f32(ggml::f32_to_f16(s[t].clamp(-8000.0, 8000.0)))
                } else {
                    s[t]
                };
                vc[t * cols + j] = 4.0 * x;
            }
        }
        let qz = vec![0.0f32; cols];
        let blk = AttnBlock {
            k_cache: enc(&mut c, &vec![0.5f32; 4 * cols]),
            v_cache: enc(&mut c, &vc),
            n_heads: 1,
            n_kv_heads: 1,
            head_dim: cols as u32,
            kv_format: kv,
        };
        let qa = c.f32s(&qz);
        c.attn(&blk, qa, 4, None, true);
        // LAYERNORM's mean and RMSNORM's sum of squares over the terms, in chunks of 4 and whole
        for n0 in [4u32, terms.len() as u32] {
            for (i, xs) in terms.chunks(n0 as usize).enumerate() {
                let op = [Op::LayerNorm, Op::RmsNorm][(i + k) % 2];
                let xa = c.f32s(xs);
                let y_len = if op == Op::LayerNorm { 2 * n0 } else { n0 };
                let y = c.spread(y_len, 0.5, 2.0);
                let ya = c.f32s(&y);
                let za = c.alloc(4 * n0, true);
                c.nan_ok(za, n0, 4);
                let (xo, yo, zo) = (c.operand(xa), c.operand(ya), c.operand(za));
                c.setn(n0, 0, 0);
                c.i(op, 0, 0, xo, yo, zo);
            }
        }
        c.run();
    }
}

/// MEANROWS at its edges: columns of −0 only (the sums start at +0, so their mean is +0), columns
/// that cancel exactly, columns with ±inf (a NaN mean where both meet), NaN, subnormals and the
/// largest singles (a sum that overflows), over 1, 2, 3, 10 and 255 rows and lengths around the
/// chunks and MiniLM's 384.
#[test]
fn meanrows_at_its_edges_agrees() {
    let cells = [
        -0.0f32,
        0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-40,
        -3e-42,
        f32::MAX,
        1.0,
        -1.0,
    ];
    for (k, (n0, rows)) in [(33u32, 1u32), (31, 2), (64, 3), (384, 10), (65, 255)]
        .into_iter()
        .enumerate()
    {
        let mut c = Case::new(format!("MEANROWS edges #{k}"), 7900 + k as u64, 1 << 18);
        let mut x = c.vector(rows * n0);
        for col in 0..n0 as usize {
            let kind = c.below(6);
            for r in 0..rows as usize {
                let v = &mut x[r * n0 as usize + col];
                match kind {
                    0 => *v = -0.0,
                    1 => *v = if r % 2 == 0 { 2.5 } else { -2.5 },
                    2 | 3 if c.below(3) == 0 => *v = cells[c.below(cells.len() as u64) as usize],
                    _ => {}
                }
            }
        }
        let xa = c.f32s(&x);
        let za = c.alloc(4 * n0, true);
        c.nan_ok(za, n0, 4);
        c.li(3, rows);
        let (xo, zo) = (c.operand(xa), c.operand(za));
        c.setn(n0, 0, 0);
        c.i(Op::MeanRows, 3, 0, xo, 0, zo);
        c.run();
    }
}

/// ATTN's running maximum of the scores (sf_lt's order, which the assembler's row loop keeps):
/// K rows whose scores are NaN (a NaN, or an infinity times a zero q), +inf, -inf, both zeros,
/// equal scores and negative scores of every size, in F16 and F32 caches. An infinite score is
/// the maximum (+inf − +inf makes its weight and the head's outputs NaN; an assembler that passed
/// over infinities as over NaN gave finite outputs), the negative score nearest zero beats the
/// others. A NaN score makes the head's sum of exp values NaN whatever the maximum, so outputs
/// that are NaN in both count as equal.
#[test]
fn attention_scores_with_nans_infinities_zeros_and_ties_take_the_definitions_maximum() {
    let specials = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1.0,
        -1.0,
        -1.5,
        -2.0,
        -0.75,
        -1024.0,
        -6e-8,
        3.5,
        65504.0,
        -65504.0,
    ];
    for k in 0..24u64 {
        let kv = if k % 2 == 0 { KV_F16 } else { KV_F32 };
        let (nh, hd) = if k % 3 == 0 { (2u32, 2u32) } else { (2, 1) };
        let t = 3 + (k % 5) as u32 * 3;
        let mut c = Case::new(format!("ATTN score maxima #{k} kv {kv}"), 7900 + k, 1 << 20);
        // q: mostly one sign, sometimes zero (0·inf = NaN), so the scores keep the K values' order
        let q: Vec<f32> = (0..nh * hd)
            .map(|i| match (k + i as u64) % 4 {
                0 => 0.0,
                1 => -1.0,
                _ => 1.25,
            })
            .collect();
        // scores only NaN and negatives in some jobs (the maximum among negatives), mixed in others
        let neg_only = k % 4 == 1;
        let cache = |c: &mut Case, special: bool| -> u32 {
            let v: Vec<f32> = (0..t * hd)
                .map(|_| {
                    if special && c.below(3) != 0 {
                        let x = specials[c.below(specials.len() as u64) as usize];
                        if neg_only && !x.is_nan() {
                            -x.abs()
                        } else {
                            x
                        }
                    } else {
                        c.rng.normal() as f32
                    }
                })
                .collect();
            let b: Vec<u8> = if kv == KV_F16 {
                v.iter()
                    .flat_map(|x| ggml::f32_to_f16(*x).to_le_bytes())
                    .collect()
            } else {
                v.iter().flat_map(|x| x.to_le_bytes()).collect()
            };
            c.bytes(&b, true)
        };
        let ka = cache(&mut c, true);
        let va = cache(&mut c, false);
        let qa = c.f32s(&q);
        let blk = AttnBlock {
            k_cache: ka,
            v_cache: va,
            n_heads: nh,
            n_kv_heads: 1,
            head_dim: hd,
            kv_format: kv,
        };
        c.attn(&blk, qa, t, Some(3), true);
        c.run();
    }
}

/// ATTN over F16 caches whose halves sit at the F16 edges (±0, the smallest and largest
/// subnormals, the smallest normals, ±65504, odd low fraction bits) against q from 1e-38 to
/// 1e33, so products leave the single's normal range both ways: the assembler's
/// product with a half (no widened single made) at the edges of its fast path. Outputs may be NaN
/// (inf − inf in the softmax) and then any NaN counts. (Scores that small cannot be seen in the
/// output: exp(s − m) of a difference that tiny is 1 either way.)
#[test]
fn attention_softmax_arguments_near_the_exp_tables_segment_edges_agree() {
    // With head_dim 4 (scale 0.5 exactly), q = (2, 0, 0, 0) and an F32 cache a score is k_t,0
    // itself, and row 0's 0 is the maximum, so the exp table's argument is k_t,0 exactly: around
    // every segment edge −16 + j/16 the 4 singles each side and the points 2^-12 (2^-8 of a
    // segment: the 45GS02's fixed-point margin) away, tiny negatives and −16's neighbours; the
    // output's weighted sum over the rows shows any exp value that differs.
    let mut x: Vec<f32> = Vec::new();
    for j in 1..256u32 {
        let edge = -16.0 + j as f32 / 16.0;
        let mut v = edge;
        for _ in 0..4 {
            v = v.next_down();
        }
        for _ in 0..9 {
            x.push(v);
            v = v.next_up();
        }
        for off in [-1.0f32 / 4096.0, 1.0 / 4096.0] {
            let p = edge + off;
            x.extend([p.next_down(), p, p.next_up()]);
        }
    }
    for e in 0..40 {
        x.push(-(2f32.powi(-e)));
    }
    x.extend([(-16f32).next_up(), -15.999, -0.0]);
    let mut c = Case::new("ATTN exp table edges".into(), 5150, 1 << 20);
    let qa = c.f32s(&[2.0, 0.0, 0.0, 0.0]);
    for rows in x.chunks(255) {
        let t = rows.len() as u32 + 1;
        let mut k = vec![0.0f32; 4];
        let mut v: Vec<f32> = (0..4).map(|_| c.rng.normal() as f32).collect();
        for &s in rows {
            k.push(s);
            for _ in 0..3 {
                k.push(c.rng.normal() as f32);
            }
            for _ in 0..4 {
                v.push(c.rng.normal() as f32);
            }
        }
        let ka = c.f32s(&k);
        let va = c.f32s(&v);
        let blk = AttnBlock {
            k_cache: ka,
            v_cache: va,
            n_heads: 1,
            n_kv_heads: 1,
            head_dim: 4,
            kv_format: KV_F32,
        };
        c.attn(&blk, qa, t, None, false);
    }
    c.run();
}

#[test]
fn attention_over_f16_caches_at_the_halfs_edges_agrees() {
    let halves: [u16; 16] = [
        0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x8401, 0x07FF, 0x0800, 0x0C03, 0x7BFF, 0xFBFF,
        0x3C00, 0x3C07, 0xBC01, 0x1FFF, 0x5A5A,
    ];
    // 1e-34 .. 5e-36 with the small normal halves: products at the bottom of the normal range
    let mags = [1e-38f64, 1e-34, 2e-35, 5e-36, 1e-30, 1e-8, 1.0, 1e12, 1e33];
    // head_dim 1 (scale 1): a score is one product, so which of the T is the largest, which the
    // softmax makes visible, rests on each product's last bits
    for (k, &(nh, nkv, hd, t)) in [
        (2u32, 1u32, 8u32, 5u32),
        (4, 2, 5, 3),
        (1, 1, 3, 7),
        (4, 4, 1, 2),
        (8, 8, 1, 3),
    ]
    .iter()
    .enumerate()
    {
        for (mi, &mag) in mags.iter().enumerate() {
            let mut c = Case::new(
                format!("ATTN F16 edges {:?} q·{mag:e}", (nh, nkv, hd, t)),
                7800 + 10 * k as u64 + mi as u64,
                1 << 20,
            );
            let kvd = nkv * hd;
            let q: Vec<f32> = (0..nh * hd)
                .map(|_| (c.rng.normal() * mag) as f32)
                .collect();
            let cache = |c: &mut Case| -> u32 {
                let b: Vec<u8> = (0..t * kvd)
                    .flat_map(|_| {
                        let h = if c.below(3) == 0 {
                            ggml::f32_to_f16(c.rng.normal() as f32)
                        } else {
                            halves[c.below(halves.len() as u64) as usize]
                        };
                        h.to_le_bytes()
                    })
                    .collect();
                c.bytes(&b, true)
            };
            let ka = cache(&mut c);
            let va = cache(&mut c);
            let qa = c.f32s(&q);
            let blk = AttnBlock {
                k_cache: ka,
                v_cache: va,
                n_heads: nh,
                n_kv_heads: nkv,
                head_dim: hd,
                kv_format: KV_F16,
            };
            c.attn(&blk, qa, t, Some(3), true);
            c.run();
        }
    }
}

/// ATTN's F16 dot products where the assembler's own product and addition (`hdot`) hand over to
/// the general ones: running sums near the bottom and the top of its range (the sum's exponent
/// 40..245) whose next term cancels all but a few bits (a difference that would be subnormal) or
/// carries (a sum that would overflow), terms 6-9 binades above and below the sum, equal
/// exponents with the signs differing, terms half an ulp of the sum away (ties), q's exponent
/// either side of 15..238 against the smallest and largest normal halves; V random, T 1-5.
#[test]
fn attention_f16_dot_products_where_the_assemblers_fast_path_ends_agree() {
    // the sums' binade (unbiased): near 2^-87 (exponent 40) and below it, where a cancellation
    // of 24 bits makes a subnormal, near 2^118 (245) and up to 2^127, and the middle
    let bases = [
        -114i32, -110, -106, -100, -90, -87, -85, 116, 118, 120, 124, 126, 127, -3, 4,
    ];
    for (k, &base) in bases.iter().enumerate() {
        let (nh, nkv, hd, t) = [
            (4u32, 2u32, 3u32, 2u32),
            (2, 1, 5, 3),
            (4, 4, 8, 1),
            (2, 2, 9, 5),
        ][k % 4];
        let mut c = Case::new(
            format!("ATTN F16 hdot edges 2^{base}"),
            8300 + k as u64,
            1 << 20,
        );
        let kvd = (nkv * hd) as usize;
        // K: halves of exponents -3..3 (a few at the half's ends), random signs; for the range's
        // ends large halves (2^15..65504) at the top and small ones (2^-13..2^-7) at the bottom,
        // so that q = term / k keeps an exponent the assembler's product takes (15..238)
        let halves: Vec<u16> = (0..t as usize * kvd)
            .map(|_| {
                let v = match c.below(8) {
                    _ if base > 100 => (1.0 + 0.999 * c.rng.uniform()) * 32768.0,
                    _ if base < -95 => (1.0 + c.rng.uniform()) * 2f64.powi(-8 - c.below(6) as i32),
                    0 => 6.103_515_6e-5 * (1.0 + c.rng.uniform()), // 2^-14: the smallest normal
                    1 => 32768.0 * (1.0 + 0.999 * c.rng.uniform()),
                    _ => (1.0 + c.rng.uniform()) * 2f64.powi(c.below(7) as i32 - 3),
                };
                let v = if c.below(2) == 0 { -v } else { v };
                ggml::f32_to_f16(v as f32)
            })
            .collect();
        let kf: Vec<f64> = halves.iter().map(|&h| ggml::f16_to_f32(h) as f64).collect();
        // q: per head, terms q_i·k_i (k of the last row) meant to be the sum so far changed as
        // drawn; q_i = term / k_i as a single (so the product is the term within an ulp)
        let group = (nh / nkv) as usize;
        let last = (t as usize - 1) * kvd;
        let mut q = Vec::new();
        for h in 0..nh as usize {
            let kh = &kf[last + (h / group) * hd as usize..][..hd as usize];
            let mut sum = 0f64;
            for (i, &kv) in kh.iter().enumerate() {
                let unit = 2f64.powi(base);
                let term = if i == 0 || sum == 0.0 {
                    // at random, or just above the binade's bottom (where a term a little
                    // smaller, one binade down, cancels all but a few bits)
                    if base < -95 {
                        unit * (1.0 + 2f64.powi(-30) * c.rng.uniform())
                    } else if c.below(2) == 0 {
                        unit * (1.0 + c.rng.uniform())
                    } else {
                        unit * (1.0 + 2f64.powi(-(c.below(20) as i32) - 4) * c.rng.uniform())
                    }
                } else {
                    let kind = if base < -95 && i == 1 { 1 } else { c.below(7) };
                    match kind {
                        // cancel all but 0-24 bits (the same binade or one down; at the bottom
                        // of the range 12-24 bits from one binade down, a difference that is
                        // subnormal)
                        1 if base < -95 => -sum * (1.0 - 2f64.powi(-12 - c.below(12) as i32)),
                        0 => -sum * (1.0 + 2f64.powi(-(c.below(25) as i32))),
                        1 => -sum * (1.0 - 2f64.powi(-(c.below(24) as i32) - 1)),
                        2 => -sum,
                        3 => sum * (1.0 + c.rng.uniform()), // a carry
                        4 => sum * 2f64.powi(c.below(4) as i32 + 6) * (1.0 + c.rng.uniform()),
                        5 => sum * 2f64.powi(-(c.below(4) as i32) - 6) * (1.0 + c.rng.uniform()),
                        _ => sum * 2f64.powi(-24), // half an ulp of the sum
                    }
                };
                let term = if i > 0 || c.below(2) == 0 {
                    term
                } else {
                    -term
                };
                let x = if c.below(12) == 0 {
                    // q's exponent at 14/15 or 238/239 (unbiased -113/-112, 111/112)
                    let e = [-113, -112, 111, 112][c.below(4) as usize];
                    (1.0 + c.rng.uniform()) * 2f64.powi(e)
                } else {
                    term / kv
                };
                let x = (x as f32).clamp(-3e38, 3e38);
                q.push(x);
                sum += x as f64 * kv;
            }
        }
        let ka = c.bytes(
            &halves
                .iter()
                .flat_map(|h| h.to_le_bytes())
                .collect::<Vec<u8>>(),
            true,
        );
        let vb: Vec<u8> = (0..t as usize * kvd)
            .flat_map(|_| ggml::f32_to_f16(c.rng.normal() as f32).to_le_bytes())
            .collect();
        let va = c.bytes(&vb, true);
        let qa = c.f32s(&q);
        let blk = AttnBlock {
            k_cache: ka,
            v_cache: va,
            n_heads: nh,
            n_kv_heads: nkv,
            head_dim: hd,
            kv_format: KV_F16,
        };
        c.attn(&blk, qa, t, None, true);
        c.run();
    }
}

/// ATTN's weighted sums carried from one block of V rows to the next (the assembler reads as many
/// V rows as fit after the kept weights, 11 or 23 of a 32-element chunk here, and keeps each output
/// in a running sum over a block): 32 equal scores (K all +0), and V columns whose sums are +0,
/// +inf, NaN, subnormal (then products near the normal range's end), overflowing, cancelled to +0
/// or +inf meeting -inf at a block's end, in
/// F32 and F16 caches, over 32 rows (blocks of 11, 11, 10 and 23, 9) and 300 rows (more than the
/// 256 kept scores: a row at a time).
#[test]
fn attention_weighted_sums_carried_across_blocks_of_v_rows_agree_at_zeros_infinities_nans_and_subnormals(
) {
    for (k, (kv, t)) in [(KV_F32, 32u32), (KV_F16, 32), (KV_F16, 300), (KV_F32, 257)]
        .into_iter()
        .enumerate()
    {
        let mut c = Case::new(format!("ATTN V blocks #{k}"), 8300 + k as u64, 1 << 20);
        let hd = 32usize;
        let big = if kv == KV_F16 { 65504.0f32 } else { f32::MAX };
        let tiny = if kv == KV_F16 { 6e-8f32 } else { 1e-39 };
        // (F32: products just above the normal range, which a subnormal sum still changes)
        let near = if kv == KV_F16 { 1e-4f32 } else { 5e-37 };
        let mut vc = vec![0.0f32; t as usize * hd];
        for r in 0..t as usize {
            for j in 0..hd {
                let x = c.rng.normal() as f32;
                vc[r * hd + j] = match j {
                    0 if r < 23 => 0.0,
                    1 if r == 3 => f32::INFINITY,
                    2 if r == 5 => f32::NAN,
                    3 if r < 22 => tiny * (1 + r % 3) as f32,
                    3 => near * (1 + r % 3) as f32,
                    4 if r == 9 || r == 10 => big,
                    5 if r < 9 => 0.0,
                    5 if r == 9 => 0.75,
                    5 if r == 10 => -0.75,
                    6 if r == 2 => f32::INFINITY,
                    6 if r == 12 || r == 24 => f32::NEG_INFINITY,
                    7 if r == 10 || r == 22 => -big,
                    7 if r == 11 || r == 23 => big,
                    _ => x,
                };
            }
        }
        let enc = |c: &mut Case, v: &[f32]| -> u32 {
            let b: Vec<u8> = if kv == KV_F16 {
                v.iter()
                    .flat_map(|x| ggml::f32_to_f16(*x).to_le_bytes())
                    .collect()
            } else {
                v.iter().flat_map(|x| x.to_le_bytes()).collect()
            };
            c.bytes(&b, true)
        };
        let blk = AttnBlock {
            k_cache: enc(&mut c, &vec![0.0f32; t as usize * hd]),
            v_cache: enc(&mut c, &vc),
            n_heads: 1,
            n_kv_heads: 1,
            head_dim: hd as u32,
            kv_format: kv,
        };
        let q: Vec<f32> = (0..hd).map(|_| c.rng.normal() as f32).collect();
        let qa = c.f32s(&q);
        c.attn(&blk, qa, t, None, true);
        c.run();
    }
}

#[test]
fn attention_with_grouped_query_heads_and_f16_and_f32_caches_agrees_bit_for_bit() {
    let shapes = [
        (1, 1, 1, 1),
        (1, 1, 4, 2),
        (4, 2, 8, 5),
        (4, 2, 8, 6),
        (8, 2, 16, 17),
        (6, 3, 7, 9),
        (4, 4, 33, 40),
        (2, 1, 12, 64),
        (2, 1, 32, 3), // the longest head whose q is one chunk (softattn.c's inlined score loop)
    ];
    let mut k = 0;
    for &shape in &shapes {
        for kv in [KV_F32, KV_F16] {
            for mag in [1.0, 4.0] {
                let name = format!("ATTN {shape:?} kv {kv} mag {mag}");
                attn_case(name, 5000 + k, shape, kv, mag).run();
                k += 1;
            }
        }
    }
}

/// ATTN's head loop in softvec65.s (sv_k_attn: the scores kept, q one chunk, at most 255 heads):
/// the scores' softmax in one chunk of 128 and in two (T = 128, 129, 200, 256), T = 1 and 2, one
/// to four query heads a KV head and 255 heads of 5 KV heads (the heads' and the KV heads' steps),
/// and 256 heads, which take softattn.c's loop.
#[test]
fn attention_heads_in_one_call_with_one_and_two_chunks_of_scores_agree() {
    let shapes = [
        (2, 1, 8, 128),
        (2, 1, 8, 129),
        (3, 1, 2, 200),
        (4, 2, 4, 256),
        (4, 1, 3, 2),
        (3, 3, 5, 1),
        (255, 5, 1, 2),
        (256, 2, 1, 2),
    ];
    let mut k = 0;
    for &shape in &shapes {
        for kv in [KV_F16, KV_F32] {
            let name = format!("ATTN heads in one call {shape:?} kv {kv}");
            attn_case(name, 8600 + k, shape, kv, 2.0).run();
            k += 1;
        }
    }
}

/// ATTN's F16 dot products whose running sum meets products of its own exponent and the other
/// sign: q of ±1 and ±1.5, K halves in [1, 2) of alternating signs, some rows cancelling exactly
/// (+0, then a sum that starts again), some with the product larger by an ulp or a top byte, some
/// with the sum larger; weighted sums over V rows of the same kind. The larger magnitude less the
/// other is exact; equal magnitudes give +0.
#[test]
fn attention_f16_dot_products_with_equal_exponents_and_differing_signs_agree() {
    for (k, (nh, nkv, hd, t)) in [(1u32, 1u32, 8u32, 9u32), (2, 1, 12, 17), (4, 2, 33, 5)]
        .into_iter()
        .enumerate()
    {
        let mut c = Case::new(
            format!("ATTN equal exponents #{k}"),
            8500 + k as u64,
            1 << 20,
        );
        let n = (t * nkv * hd) as usize;
        let half = |c: &mut Case, i: usize, prev: f32| -> f32 {
            let sign = if i.is_multiple_of(2) { 1.0 } else { -1.0 };
            match c.below(4) {
                0 => -prev,                                        // exact cancellation
                1 => -prev * (1.0 + sign / 1024.0),                // an ulp apart
                _ => sign * (1.0 + c.below(1024) as f32 / 1024.0), // [1, 2)
            }
        };
        let mut kc = Vec::with_capacity(n);
        let mut prev = 1.0f32;
        for i in 0..n {
            let x = half(&mut c, i, prev);
            let x = if (1.0..2.0).contains(&x.abs()) {
                x
            } else {
                1.25
            };
            kc.push(x);
            prev = x;
        }
        let mut vc = Vec::with_capacity(n);
        for i in 0..n {
            let x = half(&mut c, i, prev);
            let x = if (1.0..2.0).contains(&x.abs()) {
                x
            } else {
                -1.75
            };
            vc.push(x);
            prev = x;
        }
        let enc = |c: &mut Case, v: &[f32]| -> u32 {
            let b: Vec<u8> = v
                .iter()
                .flat_map(|x| ggml::f32_to_f16(*x).to_le_bytes())
                .collect();
            c.bytes(&b, true)
        };
        let ka = enc(&mut c, &kc);
        let va = enc(&mut c, &vc);
        let q: Vec<f32> = (0..nh * hd)
            .map(|_| [1.0f32, -1.0, 1.5, -1.5][c.below(4) as usize])
            .collect();
        let qa = c.f32s(&q);
        let blk = AttnBlock {
            k_cache: ka,
            v_cache: va,
            n_heads: nh,
            n_kv_heads: nkv,
            head_dim: hd,
            kv_format: KV_F16,
        };
        c.attn(&blk, qa, t, None, false);
        c.run();
    }
}

/// ATTN's K and V rows read across a 64 KB bank and across the megabyte boundary at $8100000, with
/// row strides below 64 KB (stories260K's shape) and at or above it (one KV head of 16,400: the
/// stride's own bank bits), so that the row job's source steps carry from its low 16 bits into the
/// bank and from the bank into the megabyte: a wrong carry reads another row.
#[test]
fn attention_with_k_and_v_rows_across_banks_and_a_megabyte_boundary_agrees() {
    let shapes = [(8u32, 4u32, 8u32, 41u32), (2, 1, 16400, 3)];
    let mut k = 0;
    for &(nh, nkv, hd, t) in &shapes {
        for kv in [KV_F16, KV_F32] {
            for v_across_the_megabyte in [false, true] {
                let name = format!(
                    "ATTN {:?} kv {kv} across banks (V across $8100000: {v_across_the_megabyte})",
                    (nh, nkv, hd, t)
                );
                let mut c = Case::new(name, 8400 + k, 2 << 20);
                k += 1;
                let esz = if kv == KV_F16 { 2 } else { 4 };
                let len = (t * nkv * hd * esz) as usize;
                let q: Vec<f32> = (0..nh * hd).map(|_| c.rng.normal() as f32).collect();
                let qa = c.f32s(&q);
                let cache = |c: &mut Case, at: u32| -> u32 {
                    let v: Vec<f32> = (0..t * nkv * hd).map(|_| c.rng.normal() as f32).collect();
                    let b: Vec<u8> = if kv == KV_F16 {
                        v.iter()
                            .flat_map(|x| ggml::f32_to_f16(*x).to_le_bytes())
                            .collect()
                    } else {
                        v.iter().flat_map(|x| x.to_le_bytes()).collect()
                    };
                    c.next = at - len as u32 / 2 - 5;
                    c.bytes(&b, true)
                };
                let (bank, mb) = (
                    BASE + 0x6_0000 + ((len as u32 / 2 + 0xFFFF) & !0xFFFF),
                    BASE + 0x10_0000,
                );
                let (ka, va) = if v_across_the_megabyte {
                    let ka = cache(&mut c, bank);
                    (ka, cache(&mut c, mb))
                } else {
                    let va = cache(&mut c, bank);
                    (cache(&mut c, mb), va)
                };
                c.next = BASE + 0x18_0000;
                let blk = AttnBlock {
                    k_cache: ka,
                    v_cache: va,
                    n_heads: nh,
                    n_kv_heads: nkv,
                    head_dim: hd,
                    kv_format: kv,
                };
                c.attn(&blk, qa, t, None, false);
                c.run();
            }
        }
    }
}

#[test]
fn registers_loads_stores_lea_and_sync_agree_with_the_rust_core() {
    for k in 0..24u64 {
        let mut c = Case::new(format!("scalar #{k}"), 6000 + k, 1 << 16);
        let dump = c.alloc(4 * 64, true);
        let window = c.alloc(0x800, false);
        for r in 0..16u8 {
            let v = match c.below(4) {
                0 => c.below(8) as u32,
                1 => u32::MAX - c.below(4) as u32,
                _ => c.rng.next_u64() as u32,
            };
            c.li(r, v);
        }
        for _ in 0..12 {
            let (a, b, z) = (
                c.below(16) as u8,
                c.below(16) as u8,
                c.rng.next_u64() as u32,
            );
            c.i(Op::AddI, a, b, 0, 0, z);
        }
        // LEA with a product that wraps: addr(X) + R[b]·Z lands at `target` modulo 2²⁸
        for n in 1..8u8 {
            let target = window + c.below(0x700) as u32;
            let (v, z) = (c.rng.next_u64() as u32, c.rng.next_u64() as u32);
            let b = 1 + c.below(14) as u8;
            c.li(b, v);
            let x = target.wrapping_sub(v.wrapping_mul(z)) & 0x0FFF_FFFF;
            let high = (c.below(8) as u32) << 28;
            c.i(Op::Lea, n, b, x | high, 0, z);
            // a relative LEA on top: A[n + 7] = A[n] + offset
            let off = c.below(0x40) as u32;
            let junk = c.rng.next_u64() as u32;
            c.i(Op::Lea, n + 7, 15, areg(n, off), 0, junk);
            // loads and stores through both, at any byte
            let (r1, r2) = (c.below(15) as u8, c.below(15) as u8);
            let (o1, o2) = (c.below(0x40) as u32, c.below(0x40) as u32);
            c.i(Op::Ldr, r1, 0, areg(n, o1), 0, 0);
            c.i(Op::Str, r2, 0, areg(n + 7, o2), 0, 0);
            if c.below(3) == 0 {
                c.i(Op::Sync, 0, 0, 0, 0, 0);
            }
        }
        c.i(Op::Nop, 0, 0, 0, 0, 0);
        let n0 = c.rng.next_u64() as u32;
        c.setn(n0, 7, 9);
        for r in 0..16u8 {
            c.i(Op::Str, r, 0, dump + 4 * r as u32, 0, 0);
        }
        c.run();
    }
}

#[test]
fn branches_and_a_counted_loop_agree_with_the_rust_core() {
    for k in 0..24u64 {
        let mut c = Case::new(format!("branches #{k}"), 7000 + k, 1 << 16);
        let marks = c.alloc(4 * 64, true);
        let vals = [0u32, 1, 2, 0x7FFF_FFFF, 0x8000_0000, u32::MAX];
        for r in 0..15u8 {
            let v = vals[c.below(vals.len() as u64) as usize];
            c.li(r, v);
        }
        // A6 = PROG, for relative branch targets
        c.lea(6, PROG);
        for m in 0..24u32 {
            let op = [Op::Beq, Op::Bne, Op::Blt][c.below(3) as usize];
            let (a, b) = (c.below(16) as u8, c.below(16) as u8);
            let target = 16 * (c.prog.len() as u32 + 2);
            let x = if c.below(2) == 0 {
                PROG + target
            } else {
                areg(6, target)
            };
            c.i(op, a, b, x, 0, 0);
            c.li(14, 0x100 + m);
            c.i(Op::Str, 14, 0, marks + 4 * m, 0, 0);
        }
        // counted loop with a SYNC per pass: R1 = 0..n, each value stored at A3, A3 += 4
        let n = 1 + c.below(20) as u32;
        c.li(1, 0);
        c.li(2, n);
        c.lea(3, marks + 4 * 32);
        let top = PROG + 16 * c.prog.len() as u32;
        c.i(Op::AddI, 1, 1, 0, 0, 1);
        c.i(Op::Str, 1, 0, areg(3, 0), 0, 0);
        c.i(Op::Lea, 3, 15, areg(3, 4), 0, 0);
        c.i(Op::Sync, 0, 0, 0, 0, 0);
        c.i(Op::Blt, 1, 2, top, 0, 0);
        let out = c.run();
        assert_eq!(out.syncs, n as u64, "the loop ran {n} times");
    }
}

#[test]
fn copy_of_any_length_and_overlap_agrees_with_the_rust_core() {
    for k in 0..24u64 {
        let mut c = Case::new(format!("COPY #{k}"), 8000 + k, 1 << 18);
        let len = match k % 4 {
            0 => c.below(8) as u32,
            1 => c.below(700) as u32,
            2 => 0xFFFF - c.below(3) as u32,
            _ => 1500 + c.below(3000) as u32,
        };
        let src = c.alloc(len + 0x2000, false);
        let dst = match c.below(3) {
            0 => src + c.below(len as u64 + 1) as u32, // overlapping, forwards
            1 => src + 0x1000 - c.below(0x1000) as u32, // overlapping or not
            _ => c.alloc(len, false),
        };
        let (so, d_o) = (c.operand(src + 0x1000), c.operand(dst));
        let high = c.rng.next_u64() as u32 & 0xFFFF_0000;
        c.i(Op::Copy, 0, 0, so, d_o, len | high);
        c.run();
    }
}

// ---------------------------------------------------------------------------------------------
// Faults: the same code and PC, and nothing written.

#[test]
fn every_illegal_opcode_faults_with_code_1_at_its_pc() {
    let mut n = 0;
    for op in 0..=255u8 {
        if Op::from_u8(op).is_some() {
            continue;
        }
        let mut c = Case::new(format!("opcode ${op:02X}"), 9000 + op as u64, 1 << 14);
        c.i(Op::Nop, 0, 0, 0, 0, 0);
        c.prog.push(Instr {
            opcode: op,
            a: 1,
            b: 2,
            x: BASE,
            y: BASE,
            z: 16,
        });
        let out = c.run();
        assert_eq!((out.error, out.fault_pc), (1, PROG + 16));
        n += 1;
    }
    assert_eq!(n, 256 - Op::ALL.len());
}

#[test]
fn misaligned_and_out_of_memory_pcs_fault_as_in_the_rust_core() {
    let size = 1u32 << 14;
    let end = BASE + size;
    let nop = Instr::new(Op::Nop, 0, 0, 0, 0, 0).encode();
    let mut mem = vec![0u8; size as usize];
    // NOPs at the last two slots: a job there runs off the end of memory
    mem[size as usize - 32..size as usize - 16].copy_from_slice(&nop);
    mem[size as usize - 16..].copy_from_slice(&nop);
    let jobs = [
        (PROG + 1, 2),
        (PROG + 8, 2),
        (PROG + 15, 2),
        (end - 32, 3),
        (end - 16, 3),
        (end, 3),
        (BASE - 16, 3),
        (0, 3),
        (!15u32, 3),
    ];
    for (job, code) in jobs {
        let out = check(&format!("job ${job:08X}"), &mem, job, &[]);
        let pc = if job >= end - 32 && job < end {
            end
        } else {
            job
        };
        assert_eq!((out.error, out.fault_pc), (code, pc), "job ${job:08X}");
    }
    // branches to a misaligned target and past memory (relative: A + $FFFFFF)
    for (k, (x, code)) in [
        (PROG + 0x28, 2),
        (areg(5, 0xFF_FFF0), 3),
        (areg(5, 0xFF_FFF8), 2),
    ]
    .into_iter()
    .enumerate()
    {
        let mut c = Case::new(format!("branch #{k}"), 9500 + k as u64, size as usize);
        c.lea(5, PROG);
        c.i(Op::Beq, 15, 15, x, 0, 0);
        let out = c.run();
        assert_eq!(out.error, code);
    }
}

/// Jobs with one operand just outside memory (or below $8000000): each must fault with code 3
/// at the instruction, having written nothing.
#[test]
fn out_of_range_operands_fault_with_code_3_and_write_nothing() {
    let size = 1u32 << 16;
    let end = BASE + size;
    // (name, setup, instruction) with `far` = an address whose range passes the end
    let mut n = 0;
    for k in 0..64u64 {
        let mut c = Case::new(format!("range #{k}"), 9600 + k, size as usize);
        let v = c.alloc(4096, true);
        let n0 = 64u32;
        let past = end - 4 * n0 + 4 * (1 + c.below(8) as u32); // f32[64] runs past the end
        let below = BASE - 4 * (1 + c.below(8) as u32);
        // past the end, just below $8000000, address 0, the top of the 28-bit space
        let bad = [past, below, 0, 0x0FFF_FFF0][c.below(4) as usize];
        let which = c.below(3);
        let r4 = c.below(4) as u32;
        let pick = |i: u64| if i == which { bad } else { v };
        c.setn(n0, 64, 0x3727_C5AC);
        let op = k % 16;
        match op {
            0 => c.i(Op::VAdd, 0, 0, pick(0), pick(1), pick(2)),
            1 => c.i(Op::VMul, 0, 0, pick(0), pick(1), pick(2)),
            2 => c.i(Op::RmsNorm, 0, 0, pick(0), pick(1), pick(2)),
            3 => c.i(Op::LayerNorm, 0, 0, pick(0), pick(1), pick(2)),
            4 => c.i(Op::SiluMul, 0, 0, pick(0), pick(1), pick(2)),
            5 => c.i(Op::Gelu, 0, 0, pick(0), 0, if which == 0 { v } else { bad }),
            6 => {
                let bad16 = if bad == past { end - 2 * n0 + 2 } else { bad };
                c.i(
                    Op::Cvt16,
                    0,
                    0,
                    pick(0),
                    0,
                    if which == 0 { v } else { bad16 },
                )
            }
            7 => c.i(Op::ArgMax, 3, 0, bad, 0, 0),
            8 => c.i(Op::Rope, 0, 0, pick(0), if which == 0 { v } else { bad }, 0),
            9 => {
                c.li(3, 2);
                c.i(
                    Op::MeanRows,
                    3,
                    0,
                    pick(0),
                    0,
                    if which == 0 { v } else { bad },
                )
            }
            10 => c.i(
                Op::Gemv,
                8,
                GEMV_ACC * (k as u8 & 1),
                pick(0),
                pick(1),
                pick(2),
            ),
            11 => c.i(
                Op::DeqRow,
                2,
                0,
                pick(0),
                0,
                if which == 0 { v } else { bad },
            ),
            12 => c.i(
                Op::Copy,
                0,
                0,
                pick(0),
                if which == 0 { v } else { bad },
                256,
            ),
            13 => c.i(Op::Ldr, 1, 0, end - r4, 0, 0),
            14 => c.i(Op::Str, 1, 0, BASE - 1 - r4, 0, 0),
            _ => {
                // ATTN: the block, q, the output, K or V outside
                let blk = (v + 31) & !31;
                let which = c.below(5);
                let kv = |i: u64| if i == which { bad } else { v + 256 };
                let b = AttnBlock {
                    k_cache: kv(3),
                    v_cache: kv(4),
                    n_heads: 2,
                    n_kv_heads: 1,
                    head_dim: 32,
                    kv_format: KV_F16,
                };
                c.put(blk, &b.encode());
                c.li(2, 3);
                c.i(
                    Op::Attn,
                    2,
                    0,
                    if which == 0 { end - 16 } else { blk },
                    kv(1),
                    kv(2),
                )
            }
        }
        let pc = PROG + 16 * (c.prog.len() as u32 - 1);
        let out = c.run();
        assert_eq!((out.error, out.fault_pc), (3, pc), "{k}");
        n += 1;
    }
    assert_eq!(n, 64);
    // Zero lengths: an address at the end of memory is fine, one below $8000000 is not.
    for (k, (x, code)) in [(end, 0), (BASE - 4, 3)].into_iter().enumerate() {
        let mut c = Case::new(format!("zero length #{k}"), 9700 + k as u64, size as usize);
        c.setn(0, 0, 0);
        c.i(Op::VAdd, 0, 0, x, x, x);
        c.i(Op::Gemv, 8, 0, x, x, x);
        assert_eq!(c.run().error, code);
    }
}

/// Writes one instruction's setup and the instruction, given an address `v` with room.
pub type Setup = Box<dyn Fn(&mut Case, u32)>;

#[test]
fn bad_operands_fault_with_code_5_and_write_nothing() {
    let size = 1u32 << 16;
    let cases: Vec<(&str, Setup)> = vec![
        (
            "GEMV format 3",
            Box::new(|c, v| {
                c.setn(32, 2, 0);
                c.i(Op::Gemv, 3, 0, v, v, v)
            }),
        ),
        (
            "GEMV format 255",
            Box::new(|c, v| {
                c.setn(32, 2, 0);
                c.i(Op::Gemv, 255, 0, v, v, v)
            }),
        ),
        (
            "GEMV Q8_0 of 48 columns",
            Box::new(|c, v| {
                c.setn(48, 2, 0);
                c.i(Op::Gemv, 8, 0, v, v, v)
            }),
        ),
        (
            "DEQROW Q4_0 of 33",
            Box::new(|c, v| {
                c.setn(33, 0, 0);
                c.i(Op::DeqRow, 2, 0, v, 0, v)
            }),
        ),
        (
            "DEQROW format 6",
            Box::new(|c, v| {
                c.setn(32, 0, 0);
                c.i(Op::DeqRow, 6, 0, v, 0, v)
            }),
        ),
        (
            "ROPE N1 odd",
            Box::new(|c, v| {
                c.setn(8, 3, 0);
                c.i(Op::Rope, 0, 0, v, v, 0)
            }),
        ),
        (
            "ROPE N1 0",
            Box::new(|c, v| {
                c.setn(8, 0, 0);
                c.i(Op::Rope, 0, 0, v, v, 0)
            }),
        ),
        (
            "MEANROWS rows·N0 overflows",
            Box::new(|c, v| {
                c.li(4, 0x1_0000);
                c.setn(0x1_0000, 0, 0);
                c.i(Op::MeanRows, 4, 0, v, 0, v)
            }),
        ),
    ];
    let attn = [
        ("ATTN 0 heads", [0, 1, 8, 1], 0),
        ("ATTN 0 KV heads", [2, 0, 8, 1], 0),
        ("ATTN head_dim 0", [2, 1, 0, 1], 0),
        ("ATTN KV heads > heads", [2, 4, 8, 1], 0),
        ("ATTN heads not a multiple", [6, 4, 8, 1], 0),
        ("ATTN KV format 2", [2, 1, 8, 2], 0),
        (
            "ATTN KV bytes overflow 64 bits",
            [0x8000_0000, 0x8000_0000, 0x8000_0000, 1],
            5,
        ),
        (
            "ATTN KV bytes overflow with 2³² rows",
            [0xFFFF_FFFF, 0xFFFF_FFFF, 1, 0],
            u32::MAX,
        ),
    ];
    let mut k = 0;
    for (name, f) in &cases {
        let mut c = Case::new(name.to_string(), 9800 + k, size as usize);
        let v = c.alloc(4096, true);
        f(&mut c, v);
        let pc = PROG + 16 * (c.prog.len() as u32 - 1);
        let out = c.run();
        assert_eq!((out.error, out.fault_pc), (5, pc), "{name}");
        k += 1;
    }
    for (name, [nh, nkv, hd, fmt], last) in attn {
        let mut c = Case::new(name.to_string(), 9800 + k, size as usize);
        let v = c.alloc(4096, true);
        let b = AttnBlock {
            k_cache: v,
            v_cache: v,
            n_heads: nh,
            n_kv_heads: nkv,
            head_dim: hd,
            kv_format: fmt,
        };
        c.put(v, &b.encode());
        c.li(7, last);
        c.i(Op::Attn, 7, 0, v, v, v);
        let pc = PROG + 16 * (c.prog.len() as u32 - 1);
        let out = c.run();
        assert_eq!((out.error, out.fault_pc), (5, pc), "{name}");
        k += 1;
    }
}

/// Byte counts of 2³² and more (N0 elements of 4 or 2 bytes, GEMV rows of F32 weights) must
/// fault as out of range, not wrap to a small count that fits: the cores saturate the products
/// (softcore.c `sc_mul_sat`; on the 45GS02 by the hardware multiplier's high half).
#[test]
fn byte_counts_beyond_32_bits_fault_with_code_3_instead_of_wrapping() {
    let size = 1u32 << 16;
    // (name, N0, N1, instruction, a, b); 4·0x4000_0001 and 2·0x8000_0001 wrap to 4 and 2
    let q8 = GgmlType::Q8_0 as u8;
    let cases: [(&str, u32, u32, Op, u8, u8); 12] = [
        ("VADD N0 = 2^30 + 1", 0x4000_0001, 0, Op::VAdd, 0, 0),
        ("SILUMUL N0 = 2^30 + 1", 0x4000_0001, 0, Op::SiluMul, 0, 0),
        ("RMSNORM N0 = 2^30 + 1", 0x4000_0001, 0, Op::RmsNorm, 0, 0),
        ("CVT16 N0 = 2^31 + 1", 0x8000_0001, 0, Op::Cvt16, 0, 0),
        ("ARGMAX N0 = 2^30 + 1", 0x4000_0001, 0, Op::ArgMax, 3, 0),
        ("GEMV F32 of 2^30 + 1 rows", 1, 0x4000_0001, Op::Gemv, 0, 0),
        (
            "GEMV F32 of 2^30 + 1 columns",
            0x4000_0001,
            1,
            Op::Gemv,
            0,
            0,
        ),
        // x's, the old y's and y's 4-byte spans (W's is 0 bytes without columns)
        (
            "GEMV Q8_0 of 2^30 + 32 columns",
            0x4000_0020,
            1,
            Op::Gemv,
            q8,
            0,
        ),
        (
            "GEMV Q8_0 of no columns, 2^30 + 1 rows",
            0,
            0x4000_0001,
            Op::Gemv,
            q8,
            0,
        ),
        (
            "GEMV Q8_0 ACC of no columns, 2^30 + 1 rows",
            0,
            0x4000_0001,
            Op::Gemv,
            q8,
            GEMV_ACC,
        ),
        (
            "GEMV Q8_0 F16OUT of no columns, 2^31 + 1 rows",
            0,
            0x8000_0001,
            Op::Gemv,
            q8,
            GEMV_F16OUT,
        ),
        (
            "DEQROW Q8_0 N0 = 2^30 + 32",
            0x4000_0020,
            0,
            Op::DeqRow,
            q8,
            0,
        ),
    ];
    for (k, (name, n0, n1, op, ra, rb)) in cases.into_iter().enumerate() {
        let mut c = Case::new(name.to_string(), 9900 + k as u64, size as usize);
        let v = c.alloc(4096, true);
        c.setn(n0, n1, 0);
        c.i(op, ra, rb, v, v, v);
        let pc = PROG + 16 * (c.prog.len() as u32 - 1);
        let out = c.run();
        assert_eq!((out.error, out.fault_pc), (3, pc), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Special values.

#[test]
fn infinities_nans_and_subnormals_agree_with_any_nan_for_nan() {
    let specials = [
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        -3e-42,
        65504.0,
        65520.0,
        6e-8,
        0.0,
        -0.0,
    ];
    for k in 0..40u64 {
        let mut c = Case::new(format!("special #{k}"), 9900 + k, 1 << 18);
        let n0 = 32 * (1 + c.below(3) as u32);
        let mut x = c.vector(n0);
        for _ in 0..1 + c.below(4) {
            let i = c.below(n0 as u64) as usize;
            x[i] = specials[c.below(specials.len() as u64) as usize];
        }
        let xa = c.f32s(&x);
        let y = c.vector(2 * n0);
        let ya = c.f32s(&y);
        let za = c.alloc(4 * n0, true);
        c.nan_ok(za, n0, 4);
        c.nan_ok(za, 2 * n0, 2);
        let op = k % 10;
        c.setn(n0, 2, 0x3727_C5AC);
        match op {
            0 => c.i(Op::VAdd, 0, 0, xa, ya, za),
            1 => c.i(Op::VMul, 0, 0, xa, ya, za),
            2 => c.i(Op::RmsNorm, 0, 0, xa, ya, za),
            3 => c.i(Op::LayerNorm, 0, 0, xa, ya, za),
            4 => c.i(Op::SiluMul, 0, 0, xa, ya, za),
            5 => c.i(Op::Gelu, 0, 0, xa, 0, za),
            6 => c.i(Op::Cvt16, 0, 0, xa, 0, za),
            7 => {
                c.i(Op::ArgMax, 1, 0, xa, 0, 0);
                c.i(Op::Str, 1, 0, za, 0, 0)
            }
            8 => {
                // GEMV of the special input in a float and a Q format (2 rows)
                let fmt = [GgmlType::F32, GgmlType::F16, GgmlType::Q8_0][c.below(3) as usize];
                let w = weight_rows(&mut c, fmt, 2, n0);
                let wa = c.bytes(&w, false);
                c.i(Op::Gemv, fmt as u8, 0, wa, xa, za)
            }
            _ => {
                // MEANROWS of 0 rows: 0·recip(0) = NaN in every column
                c.li(2, 0);
                c.i(Op::MeanRows, 2, 0, xa, 0, za)
            }
        }
        c.run();
    }
}

/// A single from raw fields: sign, biased exponent, the 23 fraction bits.
fn fields(neg: bool, e: u32, frac: u32) -> f32 {
    f32::from_bits((neg as u32) << 31 | e << 23 | (frac & 0x7F_FFFF))
}

/// A fraction with only its top `keep` bits random (0-23): products and sums of such singles
/// land exactly on half a last place, or exactly on one, far more often than random bits do.
fn short_fraction(c: &mut Case, keep: u32) -> u32 {
    let r = c.rng.next_u64() as u32 & 0x7F_FFFF;
    if keep >= 23 {
        r
    } else {
        r & !((1u32 << (23 - keep)) - 1)
    }
}

/// A biased exponent: usually near 127, sometimes at the ends of the normal range (1-3,
/// 251-254), sometimes 0 or 255 (zeros, subnormals, infinities, NaNs).
fn edge_exponent(c: &mut Case) -> u32 {
    match c.below(10) {
        0 => c.below(4) as u32,
        1 => 251 + c.below(5) as u32,
        2 => 63 + c.below(8) as u32,
        3 => 185 + c.below(8) as u32,
        _ => 120 + c.below(16) as u32,
    }
}

/// ROPE with (c, s) chosen so that it computes single products and sums of chosen operands:
/// (c, s) = (1, 1) gives v0 − v1 and v0 + v1; (c_j, 0) gives v0·c_j and v1·c_j (each minus or
/// plus a signed zero). The operands sit at the fast paths' edges (softvec65.s): halfway
/// roundings (short fractions), carries into the next binade and to infinity, products and
/// cancellations at the bottom of the normal range, alignments of 0-40 places, signed zeros
/// and x − x, and the special values the fast paths hand to the C.
#[test]
fn vector_arithmetic_at_rounding_ties_range_ends_and_signed_zeros_agree() {
    for k in 0..24u64 {
        let mut c = Case::new(format!("ROPE arithmetic edges #{k}"), 9600 + k, 1 << 18);
        let pairs = 8 + c.below(60) as u32;
        let sums = k % 2 == 0;
        let mut x = Vec::new();
        let mut cs = Vec::new();
        for _ in 0..pairs {
            let keep = c.below(24) as u32;
            let (e0, f0) = (edge_exponent(&mut c), short_fraction(&mut c, keep));
            let neg0 = c.below(2) == 0;
            let v0 = fields(neg0, e0, f0);
            let keep = c.below(24) as u32;
            let f1 = short_fraction(&mut c, keep);
            let neg1 = c.below(2) == 0;
            let v1 = if sums {
                // the second addend 0-40 binades below the first (or the same magnitude)
                match c.below(8) {
                    0 => -v0,
                    1 => fields(neg1, e0, f0 ^ 1),
                    2 => [0.0, -0.0][c.below(2) as usize],
                    _ => fields(neg1, e0.saturating_sub(c.below(41) as u32), f1),
                }
            } else {
                fields(neg1, edge_exponent(&mut c), f1)
            };
            x.extend([v0, v1]);
            if sums {
                cs.extend([1.0f32, 1.0]);
            } else {
                // the factor: with an exponent that puts the product near either end of the range
                let e = match c.below(4) {
                    0 => (254 + 127 - e0.min(254))
                        .clamp(1, 254)
                        .saturating_sub(c.below(3) as u32),
                    1 => 129u32.saturating_sub(e0).clamp(1, 254) + c.below(3) as u32,
                    _ => edge_exponent(&mut c),
                };
                let keep = c.below(24) as u32;
                let f = short_fraction(&mut c, keep);
                let neg = c.below(2) == 0;
                cs.extend([fields(neg, e, f), 0.0]);
            }
        }
        let n0 = 2 * pairs;
        let n1 = if sums { 2 } else { n0 };
        let xa = c.f32s(&x);
        let ca = c.f32s(&cs);
        c.nan_ok(xa, n0, 4);
        c.setn(n0, n1, 0);
        c.i(Op::Rope, 0, 0, xa, ca, 0);
        c.run();
    }
}

/// CVT16, ARGMAX, VADD and VMUL at the edges of softvec65.s's kernels. CVT16: exponents around
/// the F16 normals (110-145: the fast path is 113-142), fractions whose 13 dropped bits are
/// exactly half (ties to even), just off half, or all ones (rounding into the next binade and,
/// at the top, to infinity), both signs, zeros. ARGMAX: NaNs (also first), ±0 and ±infinity,
/// equal maxima on both sides of the 32-element chunks, all-negative vectors. VADD/VMUL: the
/// ROPE edge operands (short fractions, range ends, x − x, signed zeros, specials).
#[test]
fn cvt16_argmax_vadd_and_vmul_at_their_edges_agree() {
    for k in 0..24u64 {
        let mut c = Case::new(format!("CVT16 edges #{k}"), 9700 + k, 1 << 18);
        let n0 = 1 + c.below(100) as u32;
        let x: Vec<f32> = (0..n0)
            .map(|_| {
                let e = match c.below(8) {
                    0 => edge_exponent(&mut c),
                    1 => [112, 113, 142, 143][c.below(4) as usize],
                    _ => 110 + c.below(36) as u32,
                };
                let keep = c.below(24) as u32;
                let top = short_fraction(&mut c, keep) & !0x1FFF;
                let low = match c.below(6) {
                    0 => 0x1000,
                    1 => 0x0FFF,
                    2 => 0x1001,
                    3 => 0x1FFF,
                    4 => 0,
                    _ => c.rng.next_u64() as u32 & 0x1FFF,
                };
                let frac = if c.below(10) == 0 {
                    0x7F_FFFF
                } else {
                    top | low
                };
                fields(c.below(2) == 0, e, frac)
            })
            .collect();
        let xa = c.f32s(&x);
        let aligned = c.below(2) == 0;
        let za = c.alloc(2 * n0, aligned);
        c.nan_ok(za, n0, 2);
        c.setn(n0, 0, 0);
        c.i(Op::Cvt16, 0, 0, xa, 0, za);
        c.run();

        let mut c = Case::new(format!("ARGMAX edges #{k}"), 9750 + k, 1 << 18);
        let n0 = 1 + c.below(120) as u32;
        let mut x = c.vector(n0);
        if k % 3 == 0 {
            x.iter_mut().for_each(|v| *v = -v.abs());
        }
        let specials = [
            f32::NAN,
            -f32::NAN,
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        for _ in 0..c.below(6) {
            let i = c.below(n0 as u64) as usize;
            x[i] = specials[c.below(specials.len() as u64) as usize];
        }
        if k % 4 == 1 {
            x[0] = f32::NAN;
        }
        if n0 > 40 && k % 2 == 0 {
            // the maximum (or a zero of the other sign) again, both sides of a chunk edge
            let m = x
                .iter()
                .copied()
                .filter(|v| !v.is_nan())
                .fold(f32::NEG_INFINITY, f32::max);
            let m2 = if m == 0.0 { -m } else { m };
            for i in [31usize, 32, 33, (n0 - 1) as usize] {
                if c.below(2) == 0 {
                    x[i] = m2;
                }
            }
        }
        let xa = c.f32s(&x);
        let out = c.alloc(4, true);
        let reg = c.below(15) as u8;
        c.li(reg, 0xDEAD_BEEF);
        c.setn(n0, 0, 0);
        c.i(Op::ArgMax, reg, 0, xa, 0, 0);
        c.i(Op::Str, reg, 0, out, 0, 0);
        c.run();

        let mut c = Case::new(format!("VADD/VMUL edges #{k}"), 9800 + k, 1 << 18);
        let n0 = 1 + c.below(80) as u32;
        let sums = k % 2 == 0;
        let mut x = Vec::new();
        let mut y = Vec::new();
        for _ in 0..n0 {
            let keep = c.below(24) as u32;
            let (e0, f0) = (edge_exponent(&mut c), short_fraction(&mut c, keep));
            let v0 = fields(c.below(2) == 0, e0, f0);
            let keep = c.below(24) as u32;
            let f1 = short_fraction(&mut c, keep);
            let neg1 = c.below(2) == 0;
            let v1 = match c.below(8) {
                0 if sums => -v0,
                1 => fields(neg1, e0, f0 ^ 1),
                2 => [0.0, -0.0][c.below(2) as usize],
                3 if !sums => fields(neg1, (254 + 127 - e0.min(254)).clamp(1, 254), f1),
                4 if !sums => fields(neg1, 129u32.saturating_sub(e0).clamp(1, 254), f1),
                _ if sums => fields(neg1, e0.saturating_sub(c.below(41) as u32), f1),
                _ => fields(neg1, edge_exponent(&mut c), f1),
            };
            x.push(v0);
            y.push(v1);
        }
        let xa = c.f32s(&x);
        let ya = c.f32s(&y);
        let za = if c.below(2) == 0 {
            xa
        } else {
            c.alloc(4 * n0, true)
        };
        c.nan_ok(za, n0, 4);
        c.setn(n0, 0, 0);
        c.i(if sums { Op::VAdd } else { Op::VMul }, 0, 0, xa, ya, za);
        c.run();
    }
}

/// RMSNORM's sum of squares and ARGMAX's compare at the edges of softvec65.s's fast paths.
/// RMSNORM: short vectors (so each square shows in r and every output) whose elements have the
/// exponents where x² leaves sv_mul's range (2e − 127 below 1 or above 253: e 63-65, 190-192)
/// with the largest, smallest and random fractions (the square carrying into the next binade),
/// both signs, zeros, subnormals, infinities and NaN; lengths 1-5 and around the 64-element
/// chunk. ARGMAX: values that share the best's top two bytes (the compare's first step) and
/// differ below them both ways, both signs, ±0 after each other, NaNs, lengths around one and
/// two chunks.
#[test]
fn rmsnorm_squares_and_argmax_compares_at_their_fast_paths_edges_agree() {
    let edge = [
        62u32, 63, 64, 65, 66, 189, 190, 191, 192, 0, 1, 127, 254, 255,
    ];
    for k in 0..8u64 {
        let mut c = Case::new(format!("RMSNORM squares #{k}"), 9900 + k, 1 << 18);
        for j in 0..24u64 {
            let n0 = match (j + k) % 6 {
                0 => 63 + c.below(3) as u32,
                1 => 128 + c.below(4) as u32,
                _ => 1 + c.below(5) as u32,
            };
            let mut x: Vec<f32> = (0..n0)
                .map(|_| {
                    fields(
                        c.below(2) == 0,
                        64 + c.below(6) as u32,
                        c.rng.next_u64() as u32,
                    )
                })
                .collect();
            for _ in 0..1 + c.below(3) {
                let i = c.below(n0 as u64) as usize;
                let e = edge[c.below(edge.len() as u64) as usize];
                let f = match c.below(4) {
                    0 => 0x7F_FFFF,
                    1 => 0,
                    _ => c.rng.next_u64() as u32,
                };
                x[i] = fields(c.below(2) == 0, e, f);
            }
            if c.below(2) == 0 {
                // scaled up: the sum of the other squares in the upper range
                for v in x.iter_mut() {
                    if v.is_finite() && v.abs() < 1e-10 && v.abs() > 1e-30 {
                        *v = fields(*v < 0.0, 188 + c.below(3) as u32, v.to_bits());
                    }
                }
            }
            let g: Vec<f32> = (0..n0).map(|_| c.value()).collect();
            let xa = c.f32s(&x);
            let ga = c.f32s(&g);
            let za = c.alloc(4 * n0, true);
            c.nan_ok(za, n0, 4);
            let e = [0, 0x3727_C5AC, 1][c.below(3) as usize];
            c.setn(n0, 0, e);
            c.i(Op::RmsNorm, 0, 0, xa, ga, za);
        }
        c.run();

        let mut c = Case::new(format!("ARGMAX compares #{k}"), 9950 + k, 1 << 18);
        let out = c.alloc(4 * 24, true);
        for j in 0..24u32 {
            let n0 = match j % 4 {
                0 => 1 + c.below(4) as u32,
                1 => 60 + c.below(10) as u32,
                2 => 125 + c.below(10) as u32,
                _ => 1 + c.below(200) as u32,
            };
            let neg = (j + k as u32).is_multiple_of(3);
            let top = fields(neg, 120 + c.below(12) as u32, c.rng.next_u64() as u32).to_bits();
            let mut x: Vec<f32> = (0..n0)
                .map(|_| match c.below(8) {
                    // the same top two bytes, any lower ones
                    0..=4 => f32::from_bits(top & 0xFFFF_0000 | (c.rng.next_u64() as u32 & 0xFFFF)),
                    // one step either way in the second byte or the top one
                    5 => f32::from_bits(top.wrapping_add(0x1_0000)),
                    6 => f32::from_bits(top.wrapping_sub(0x1_0000)),
                    // the other sign (in a negative vector only now and then: it wins)
                    _ if !neg || c.below(8) == 0 => f32::from_bits(top ^ 0x8000_0000),
                    _ => f32::from_bits(top.wrapping_sub(0x1_0000) | 0xFFFF),
                })
                .collect();
            for _ in 0..c.below(4) {
                let i = c.below(n0 as u64) as usize;
                x[i] = [
                    0.0,
                    -0.0,
                    f32::NAN,
                    -f32::NAN,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                ][c.below(6) as usize];
            }
            if j % 5 == 2 && n0 > 3 {
                // ±0 the largest: the first zero stays
                x.iter_mut().for_each(|v| *v = -v.abs());
                x[1] = [0.0, -0.0][c.below(2) as usize];
                x[2] = -x[1];
            }
            let xa = c.f32s(&x);
            let reg = 1 + c.below(14) as u8;
            c.li(reg, 0xDEAD_BEEF);
            c.setn(n0, 0, 0);
            c.i(Op::ArgMax, reg, 0, xa, 0, 0);
            c.i(Op::Str, reg, 0, out + 4 * j, 0, 0);
        }
        c.run();
    }
}

// ---------------------------------------------------------------------------------------------
// (b) Whole images.

/// Loads `img`, writes each prompt and the runtime block (§6.3: tokens from slot 0, pos 0,
/// prompt_len, n_generate) and runs the script in both cores from the same memory; then, for
/// decoders, continues the first conversation with two more tokens from where it stopped.
pub fn run_image(name: &str, img: &[u8], prompts: &[&[u32]], n_generate: u32) {
    let (dev, _) = Ssnail::load_bytes(img, None).unwrap();
    let h = dev.header();
    let mem = dev.machine.mem().to_vec();
    let poke = |mem: &mut [u8], addr: u32, v: u32| {
        let o = (addr - BASE) as usize;
        mem[o..o + 4].copy_from_slice(&v.to_le_bytes());
    };
    for (pi, prompt) in prompts.iter().enumerate() {
        let mut m = mem.clone();
        for (i, &t) in prompt.iter().enumerate() {
            poke(&mut m, h.tokens + 4 * i as u32, t % h.n_vocab);
        }
        for (off, v) in [
            (rt::POS, 0),
            (rt::PROMPT_LEN, prompt.len() as u32),
            (rt::N_GENERATE, n_generate),
        ] {
            poke(&mut m, BASE + off, v);
        }
        let what = format!("{name}, prompt {pi}");
        let out = check(&what, &m, h.code, &[]);
        assert_eq!(out.error, 0, "{what}: the Rust core faulted");
        let rd = |mem: &[u8], off: u32| {
            u32::from_le_bytes(mem[off as usize..off as usize + 4].try_into().unwrap())
        };
        let reason = rd(&out.mem, rt::STOP_REASON);
        if h.is_encoder() {
            assert_eq!(reason, 1, "{what}: the encoder did not finish");
        } else {
            assert!(rd(&out.mem, rt::GENERATED) > 0, "{what}: nothing generated");
            if pi == 0 {
                // a second turn on the same KV cache
                let mut m = out.mem.clone();
                let pos = rd(&m, rt::POS);
                poke(&mut m, h.tokens + 4 * (pos + 1), 5 % h.n_vocab);
                poke(&mut m, h.tokens + 4 * (pos + 2), 7 % h.n_vocab);
                for (off, v) in [
                    (rt::PROMPT_LEN, pos + 3),
                    (rt::N_GENERATE, n_generate),
                    (rt::GENERATED, 0),
                ] {
                    poke(&mut m, BASE + off, v);
                }
                check(&format!("{what}, second turn"), &m, h.code, &[]);
            }
        }
    }
}

/// GEMV with F32, F16 and BF16 weights where the exact sum (exactsum.c, exactsum65.s) is at its
/// edges: products at both ends of the accumulator (exponents 1-3 and 251-254 on both sides, so
/// the carry runs to the top byte), every bit offset of a product, sums that cross zero again and
/// again (a row's second half negates its first half's products, so borrows and carries run
/// through the sign bytes and out of the top), short fractions, and now and then a zero,
/// subnormal, inf or NaN operand in the middle of a chunk (the C's share).
#[test]
fn gemv_with_float_weights_at_the_exact_sums_edges_agrees() {
    for (k, fmt) in [GgmlType::F32, GgmlType::F16, GgmlType::Bf16]
        .into_iter()
        .cycle()
        .take(12)
        .enumerate()
    {
        let mut c = Case::new(
            format!("GEMV {} exact-sum edges #{k}", fmt.name()),
            9700 + k as u64,
            1 << 18,
        );
        let cols = 2 * (20 + c.below(40) as u32) + (k as u32 & 1);
        let rows = 3 + c.below(4) as u32;
        let special = k % 3 == 2;
        let mut xs = Vec::new();
        let mut w = Vec::new();
        for _ in 0..rows {
            let extreme = c.below(2) == 0;
            let half = cols / 2;
            let mut ws: Vec<u32> = Vec::new();
            for j in 0..cols {
                if j >= half && j < 2 * half {
                    // the first half's product, negated (sign of the weight flipped)
                    let flip = match fmt {
                        GgmlType::F32 => 1u32 << 31,
                        _ => 1 << 15,
                    };
                    ws.push(ws[(j - half) as usize] ^ flip);
                    continue;
                }
                let e = if extreme {
                    [1, 2, 3, 251, 252, 253, 254][c.below(7) as usize]
                } else {
                    edge_exponent(&mut c).clamp(1, 254)
                };
                let neg = c.below(2) == 0;
                let keep = c.below(24) as u32;
                let frac = short_fraction(&mut c, keep);
                let v = fields(neg, e, frac);
                let bits = match fmt {
                    GgmlType::F32 => v.to_bits(),
                    GgmlType::Bf16 => v.to_bits() >> 16,
                    _ => {
                        // F16: exponents 1-2 and 29-30 at the extremes, any normal otherwise
                        let e5 = if extreme {
                            [1, 2, 29, 30][c.below(4) as usize]
                        } else {
                            1 + c.below(30) as u32
                        };
                        (neg as u32) << 15 | e5 << 10 | (frac >> 13)
                    }
                };
                ws.push(bits);
            }
            if special {
                let j = c.below(cols as u64) as usize;
                ws[j] = match (fmt, c.below(4)) {
                    (GgmlType::F32, 0) => 0x8000_0000,
                    (GgmlType::F32, 1) => 0x0000_0123,
                    (GgmlType::F32, 2) => 0x7F80_0000,
                    (GgmlType::F32, _) => 0x7FC0_0000,
                    (_, 0) => 0x8000,
                    (_, 1) => 0x0003,
                    (_, 2) => 0x7C00 | ((fmt == GgmlType::Bf16) as u32 * 0x7F80),
                    _ => 0x7E00 | ((fmt == GgmlType::Bf16) as u32 * 0x7FC0),
                };
            }
            for b in ws {
                match fmt {
                    GgmlType::F32 => w.extend(b.to_le_bytes()),
                    _ => w.extend((b as u16).to_le_bytes()),
                }
            }
        }
        for j in 0..cols {
            let e = [1, 2, 3, 126, 127, 128, 252, 253, 254][c.below(9) as usize];
            let e = if c.below(3) == 0 {
                e
            } else {
                edge_exponent(&mut c).clamp(1, 254)
            };
            let neg = c.below(2) == 0;
            let keep = c.below(24) as u32;
            let frac = short_fraction(&mut c, keep);
            xs.push(if special && j % 17 == 5 {
                [0.0, -0.0, 1e-40, f32::INFINITY][c.below(4) as usize]
            } else {
                fields(neg, e, frac)
            });
        }
        let xa = c.f32s(&xs);
        c.gemv(fmt, &w, xa, cols, rows, true);
        c.run();
    }
}

/// The Q8_0 input quantiser (softquant65.s and the C it falls back to) at the edges of its
/// roundings, run through Q8_0 GEMV: block maxima of 127·2^k (d = 2^k exactly: the magic
/// multiply's significand is exactly 2^23), d exactly half-way between two F16 values (ties to
/// even, up and down), d that rounds up to F16 infinity (amax ≈ 8.3e6), amax significands of
/// 127·2^17 and more, elements whose single product |x·id| lies just below one half (and on it),
/// and x = ±amax. Two weight rows per block, ones and distinct values, so that any quant that
/// differs shows in a sum.
/// Q8_0 input blocks whose d's significand md makes the 32 fraction bits F of 2^24/md end in $00
/// or $FF, where the 45GS02's quantiser does not take the divider's F >> 8 as it is but checks
/// floor(2^48/md) with the multiplier (a divider's last bit one off would move it), and blocks
/// where F ends in $01 and $FE; each with amax, −amax and 30 values just below half-way points.
#[test]
fn q8_0_input_blocks_whose_reciprocals_fraction_ends_in_00_or_ff_agree() {
    let mut c = Case::new(
        "Q8_0 quantiser, 1/d at the divider's edges".into(),
        9670,
        1 << 18,
    );
    let mut want = [0u32; 4];
    let mut x = Vec::new();
    while want.iter().any(|&n| n < 6) {
        let amax = (c.rng.uniform() * 100.0 + 0.01) as f32;
        let d = amax / 127.0;
        let md = (d.to_bits() & 0x7F_FFFF) as u128 | 0x80_0000;
        if md == 0x80_0000 {
            continue;
        }
        let f = ((1u128 << 56) / md) as u32; // 2^24/md's fraction bits
        let k = match f & 0xFF {
            0x00 => 0,
            0xFF => 1,
            0x01 => 2,
            0xFE => 3,
            _ => continue,
        };
        if want[k] >= 6 {
            continue;
        }
        want[k] += 1;
        x.push(amax);
        x.push(-amax);
        let id = 1.0 / d;
        for _ in 0..30 {
            // the largest |x| whose single product with id is below a half-way point: an id one
            // place larger rounds many of them up
            let h = c.below(126) as f32 + 0.5;
            let mut v = h / id;
            while v * id >= h {
                v = f32::from_bits(v.to_bits() - 1);
            }
            while f32::from_bits(v.to_bits() + 1) * id < h {
                v = f32::from_bits(v.to_bits() + 1);
            }
            x.push(if c.below(2) == 0 { v } else { -v });
        }
    }
    let cols = x.len() as u32;
    let xa = c.f32s(&x);
    let w = weight_rows(&mut c, GgmlType::Q8_0, 3, cols);
    let wa = c.bytes(&w, true);
    let za = c.alloc(12, true);
    c.setn(cols, 3, 0);
    c.i(Op::Gemv, GgmlType::Q8_0 as u8, 0, wa, xa, za);
    c.run();
}

#[test]
fn q8_0_input_blocks_at_the_quantisers_edges_agree() {
    let mut c = Case::new("Q8_0 quantiser edges".into(), 9660, 1 << 18);
    let mut amaxes: Vec<f32> = Vec::new();
    for k in [-12, -1, 0, 3, 9, 14] {
        amaxes.push(127.0 * 2f32.powi(k));
    }
    for h in [0x3C01u16, 0x3C02, 0x4A37, 0x2001, 0x0400, 0x7BFE] {
        // d = an F16 value plus half its last place: an exact tie in sf_to_f16
        let f = ggml::f16_to_f32(h);
        let d = f + (ggml::f16_to_f32(h + 1) - f) / 2.0;
        let amax = d * 127.0;
        assert_eq!(amax / 127.0, d, "amax/127 is the tie");
        amaxes.push(amax);
    }
    amaxes.extend([65520.0 * 127.0, 8.3e6, 8_320_000.0, 65504.0 * 127.0]);
    for e in [-20, 0, 7] {
        amaxes.push((127 << 17) as f32 * 2f32.powi(e));
        amaxes.push(((127 << 17) + 1 + c.below(1 << 17) as i32) as f32 * 2f32.powi(e));
        amaxes.push(((1 << 24) - 1) as f32 * 2f32.powi(e));
    }
    let mut x = Vec::new();
    let mut below_half = 0;
    for &amax in &amaxes {
        let id = 1.0 / (amax / 127.0);
        let mut b = Vec::new();
        b.push(amax);
        b.push(-amax);
        for _ in 0..6 {
            // the largest |x| whose single product x·id is below one half, and the next one up
            let mut v = 0.5 / id;
            while v * id >= 0.5 {
                v = f32::from_bits(v.to_bits() - 1);
            }
            if v * id < 0.5 {
                below_half += 1;
            }
            let up = f32::from_bits(v.to_bits() + 1);
            let s = if c.below(2) == 0 { 1.0 } else { -1.0 };
            b.push(s * v);
            b.push(-s * up);
            let k = c.below(127) as f32;
            b.push(s * (k + 0.5) / id);
        }
        while b.len() < 32 {
            let u = (c.rng.uniform() * 2.0 - 1.0) as f32;
            b.push(u * amax);
        }
        // amax at a random place
        let p = c.below(32) as usize;
        b.swap(0, p);
        x.extend(b);
    }
    assert!(
        below_half >= amaxes.len(),
        "{below_half} just below one half"
    );
    let cols = x.len() as u32;
    let xa = c.f32s(&x);
    let mut w = Vec::new();
    for r in 0..2u32 {
        for _ in 0..cols / 32 {
            w.extend(0x3C00u16.to_le_bytes()); // scale 1
            for j in 0..32u32 {
                w.push(if r == 0 {
                    1
                } else {
                    (j * 37 % 255) as u8 ^ 0x80
                });
            }
        }
    }
    let wa = c.bytes(&w, false);
    let za = c.alloc(8, true);
    c.nan_ok(za, 2, 4);
    c.setn(cols, 2, 0);
    c.i(Op::Gemv, GgmlType::Q8_0 as u8, 0, wa, xa, za);
    c.run();
}

pub const PROMPTS: [&[u32]; 3] = [&[1, 15, 27, 99], &[1, 200], &[3, 4, 5, 6, 7, 8, 9, 10, 11]];

/// Float-weight GEMVs whose lengths sit at the edges of exactsum65.s's pieces (63 elements) and
/// of the driver's chunks (256 elements with F16 and BF16 weights, 192 with F32; the tiny PC
/// build's 7 and 5), with zero, subnormal, infinite and NaN weights and zero and subnormal inputs
/// just before and at each edge: those pairs go to the C (xs_slow), which must take the piece's
/// own elements, and the lengths end pieces and chunks at every place.
#[test]
fn gemv_with_float_weights_across_piece_and_chunk_edges_agrees() {
    let mut n = 0;
    for (fi, fmt) in [GgmlType::F32, GgmlType::F16, GgmlType::Bf16]
        .into_iter()
        .enumerate()
    {
        let chunk = if fmt == GgmlType::F32 { 192 } else { 256 };
        for (k, cols) in [62, 63, 64, 127, 191, 192, 193, 255, 256, 257, 385]
            .into_iter()
            .enumerate()
        {
            let mut c = Case::new(
                format!("GEMV {} piece and chunk edges, {cols} columns", fmt.name()),
                12_000 + 100 * fi as u64 + k as u64,
                1 << 18,
            );
            let rows = 2;
            let edges: Vec<u32> = (1..8)
                .map(|p| 63 * p)
                .chain([chunk, 2 * chunk])
                .filter(|&e| e < cols)
                .collect();
            let mut x = c.vector(cols);
            for &e in &edges {
                for i in [e - 1, e] {
                    if c.below(3) == 0 {
                        x[i as usize] = [0.0, -0.0, 1e-40, -3e-39][c.below(4) as usize];
                    }
                }
            }
            let xa = c.f32s(&x);
            let mut w = weight_rows(&mut c, fmt, rows, cols);
            let size = if fmt == GgmlType::F32 { 4 } else { 2 };
            for r in 0..rows {
                // row 0 keeps a finite sum (zeros, subnormals), row 1 gets infinities and NaNs too
                let specials: &[u32] = match (fmt, r) {
                    (GgmlType::F32, 0) => &[0, 0x8000_0000, 0x0000_0123, 0x807F_FFFF],
                    (GgmlType::F32, _) => &[0x7F80_0000, 0xFF80_0000, 0x7FC0_0001, 0],
                    (GgmlType::F16, 0) => &[0, 0x8000, 0x0001, 0x83FF],
                    (GgmlType::F16, _) => &[0x7C00, 0xFC00, 0x7E01, 0x0200],
                    (_, 0) => &[0, 0x8000, 0x0001, 0x807F],
                    (_, _) => &[0x7F80, 0xFF80, 0x7FC1, 0x0040],
                };
                for &e in &edges {
                    for i in [e - 1, e] {
                        if c.below(2) == 0 {
                            let v = specials[c.below(4) as usize];
                            let at = ((r * cols + i) * size) as usize;
                            w[at..at + size as usize]
                                .copy_from_slice(&v.to_le_bytes()[..size as usize]);
                        }
                    }
                }
            }
            c.gemv(fmt, &w, xa, cols, rows, true);
            c.run();
            n += 1;
        }
    }
    assert_eq!(n, 33);
}

/// One float-weight GEMV of `rows` × `cols` for the rows-inner tests: every exponent residue of x
/// (its shift b) against every residue of the weight's exponent, all-ones significands half the
/// time, a zero or subnormal weight in every row; with `special` an infinite or NaN input (the
/// 8th of every 23) and an infinite or NaN weight in every odd row; rows 2, 6, 10, ... with a
/// second half that cancels the first.
fn float_rows_job(mut c: Case, fmt: GgmlType, rows: u32, cols: u32, special: bool) {
    let mut x = Vec::new();
    for j in 0..cols {
        // every residue of x's exponent, all-ones or short significands
        let e = 100 + (j % 8) + 8 * c.below(4) as u32;
        let keep = c.below(24) as u32;
        let frac = if c.below(2) == 0 {
            0x7F_FFFF
        } else {
            short_fraction(&mut c, keep)
        };
        x.push(match (special, j % 23) {
            (true, 7) => [f32::INFINITY, f32::NEG_INFINITY, f32::NAN][c.below(3) as usize],
            (_, 11) => [0.0, -0.0, 1e-40, -3e-39][c.below(4) as usize],
            _ => fields(c.below(2) == 0, e, frac),
        });
    }
    let xa = c.f32s(&x);
    let mut w = Vec::new();
    for r in 0..rows {
        let mut ws: Vec<u32> = Vec::new();
        for _ in 0..cols {
            let neg = c.below(2) == 0;
            let bits = match fmt {
                GgmlType::F16 => {
                    // e5 over all residues, all-ones significands half the time
                    let e5 = 1 + c.below(30) as u32;
                    let m = if c.below(2) == 0 {
                        0x3FF
                    } else {
                        c.below(1024) as u32
                    };
                    (neg as u32) << 15 | e5 << 10 | m
                }
                GgmlType::Bf16 => {
                    let e = 100 + c.below(56) as u32;
                    let m = if c.below(2) == 0 {
                        0x7F
                    } else {
                        c.below(128) as u32
                    };
                    (neg as u32) << 15 | e << 7 | m
                }
                _ => {
                    let e = 100 + c.below(56) as u32;
                    let keep = c.below(24) as u32;
                    let m = if c.below(2) == 0 {
                        0x7F_FFFF
                    } else {
                        short_fraction(&mut c, keep)
                    };
                    fields(neg, e, m).to_bits()
                }
            };
            ws.push(bits);
        }
        // zeros and subnormals, and in some rows an infinity or a NaN
        let at = c.below(cols as u64) as usize;
        ws[at] = match fmt {
            GgmlType::F32 => [0, 0x8000_0000, 0x0000_0123, 0x807F_FFFF][c.below(4) as usize],
            GgmlType::F16 => [0, 0x8000, 0x0001, 0x83FF][c.below(4) as usize],
            _ => [0, 0x8000, 0x0001, 0x807F][c.below(4) as usize],
        };
        if special && r % 2 == 1 {
            let at = c.below(cols as u64) as usize;
            ws[at] = match (fmt, c.below(2)) {
                (GgmlType::F32, 0) => 0xFF80_0000,
                (GgmlType::F32, _) => 0x7FC0_0001,
                (GgmlType::F16, 0) => 0xFC00,
                (GgmlType::F16, _) => 0x7E01,
                (_, 0) => 0xFF80,
                (_, _) => 0x7FC1,
            };
        }
        if r % 4 == 2 {
            // the second half the first negated: a sum that cancels to what is left
            let flip = if fmt == GgmlType::F32 {
                1 << 31
            } else {
                1 << 15
            };
            for j in cols as usize / 2..cols as usize {
                ws[j] = ws[j - cols as usize / 2] ^ flip;
            }
        }
        for b in ws {
            match fmt {
                GgmlType::F32 => w.extend(b.to_le_bytes()),
                _ => w.extend((b as u16).to_le_bytes()),
            }
        }
    }
    c.gemv(fmt, &w, xa, cols, rows, true);
    c.run();
}

/// Float-weight GEMVs through exactsum65.s's rows-inner loop (cc65 builds: four rows at a time,
/// each x_j unpacked once for them, chunks of 64 elements, 45 for F32): row counts that leave
/// one to three rows in the last block, lengths around the chunk, every exponent residue of x
/// (its shift b = (e + 6) mod 8) against every residue of the weight's exponent (a = ea mod 8)
/// with all-ones significands (the largest products: F16's need a 7th byte exactly when a = b =
/// 7), subnormal and zero weights and inputs, infinite and NaN weights and inputs in the
/// middle of a block, and rows whose sums cancel (borrows through the accumulator).
#[test]
fn gemv_with_float_weights_rows_at_a_time_agrees() {
    let mut n = 0;
    for (fi, fmt) in [GgmlType::F16, GgmlType::Bf16, GgmlType::F32]
        .into_iter()
        .enumerate()
    {
        for (k, (rows, cols)) in [
            (1, 64),
            (3, 65),
            (4, 44),
            (5, 45),
            (6, 46),
            (9, 129),
            (7, 63),
        ]
        .into_iter()
        .enumerate()
        {
            let c = Case::new(
                format!("GEMV {} rows at a time, {rows} × {cols}", fmt.name()),
                13_000 + 100 * fi as u64 + k as u64,
                1 << 18,
            );
            float_rows_job(c, fmt, rows, cols, k % 2 == 1);
            n += 1;
        }
    }
    assert_eq!(n, 21);
}

/// Float-weight GEMVs in blocks of eight rows (cc65 builds: five row pages in the buffer union,
/// three at the bottom of the core's C stack, linked in that order; chunks of 64 elements, 44 for
/// F32): every row count 1-17 with F16 (blocks that end in the union's pages, in the stack's, and
/// a second and third block), lengths around the chunk, and with BF16 and F32 counts around the
/// block; infinities and NaNs, zero and subnormal weights and cancelling sums fall in the stack's
/// rows too (rows 5-7 of a block).
#[test]
fn gemv_with_float_weights_eight_rows_at_a_time_agrees() {
    let mut n = 0;
    let f16 = (1..=17).map(|rows| (GgmlType::F16, rows, [64, 65, 63, 129][rows as usize % 4]));
    let others = [
        (GgmlType::Bf16, 8, 64),
        (GgmlType::Bf16, 9, 65),
        (GgmlType::Bf16, 16, 129),
        (GgmlType::F32, 8, 44),
        (GgmlType::F32, 7, 45),
        (GgmlType::F32, 17, 89),
    ];
    for (k, (fmt, rows, cols)) in f16.chain(others).enumerate() {
        let c = Case::new(
            format!("GEMV {} eight rows at a time, {rows} × {cols}", fmt.name()),
            13_500 + k as u64,
            1 << 18,
        );
        float_rows_job(c, fmt, rows, cols, k % 3 == 0);
        n += 1;
    }
    assert_eq!(n, 23);
}

/// Float-weight GEMV rows whose exact sums test its one rounding (xs_round; exactsum65.s's
/// xs_top in cc65 builds): weights 1 (in every float format) times inputs chosen so that the sum is
/// a single plus exactly half its last place, alone (an exact tie, odd or even) or plus or minus a
/// remainder 1-70 places further down (the sticky byte and everything below it), negative sums (the magnitude taken by negating the
/// accumulator), sums that cancel to zero or to the remainder alone, and F32 products of
/// subnormals near the accumulator's lowest bytes (fewer than four bytes below the top one).
#[test]
fn gemv_with_float_weights_rounds_exact_sums_at_ties_and_sticky_bits_agree() {
    let two = |e: i32| 2f32.powi(e);
    for (k, fmt) in [GgmlType::F32, GgmlType::F16, GgmlType::Bf16]
        .into_iter()
        .cycle()
        .take(9)
        .enumerate()
    {
        let mut c = Case::new(
            format!("GEMV {} ties and sticky bits #{k}", fmt.name()),
            13_000 + k as u64,
            1 << 18,
        );
        let rows = 24u32;
        let cols = 5u32;
        let mut x = Vec::new();
        let mut w: Vec<u8> = Vec::new();
        for r in 0..rows {
            let s = c.below(2) as i32 * 2 - 1; // the sum's sign
            let m = c.below(60) as i32 - 30; // its binade
            let lead = s as f32 * two(m) * (1.0 + c.below(1 << 10) as f32 * two(-10));
            let d = 1 + c.below(70) as i32;
            let rest = if c.below(2) == 0 { 1.0 } else { -1.0 } * two(m - 24 - d);
            // an odd last place, so that an exact tie rounds away from the lead (to even)
            let odd = if c.below(2) == 0 {
                s as f32 * two(m - 23)
            } else {
                0.0
            };
            let row: [f32; 5] = match r % 4 {
                0 => [lead, odd, s as f32 * two(m - 24), 0.0, -0.0],
                1 => [lead, odd, s as f32 * two(m - 24), rest, -0.0],
                // cancelling: only the remainder (or nothing) is left
                2 => [
                    lead,
                    rest,
                    -lead,
                    if c.below(2) == 0 { -rest } else { 0.0 },
                    0.0,
                ],
                _ => [
                    lead,
                    -lead,
                    s as f32 * two(m - 24),
                    rest,
                    two(m - 24) * -s as f32,
                ],
            };
            x.extend(row);
            let ones = vec![1.0f32; cols as usize];
            ggml::quantize_native(fmt, &ones, &mut w);
        }
        // the input's rows are consecutive GEMVs of one row each (x moves on, W stays)
        let wa = c.bytes(&w, false);
        let xa = c.f32s(&x);
        let za = c.alloc(4 * rows, true);
        c.setn(cols, 1, 0);
        for r in 0..rows {
            c.i(Op::Gemv, fmt as u8, 0, wa, xa + 4 * cols * r, za + 4 * r);
        }
        if fmt == GgmlType::F32 {
            // products of subnormals: 2^-298 and a few more at the accumulator's bottom bytes
            let wsub: Vec<f32> = (0..cols).map(|j| f32::from_bits(1 + j * 7)).collect();
            let xsub: Vec<f32> = (0..cols)
                .map(|j| f32::from_bits((1 + j * 3) | ((j & 1) << 31)))
                .collect();
            let (wb, xb) = (c.f32s(&wsub), c.f32s(&xsub));
            let zb = c.alloc(4, true);
            c.i(Op::Gemv, fmt as u8, 0, wb, xb, zb);
        }
        c.run();
    }
}

/// Float-weight GEMV rows whose exact sums meet the shortcuts of its rounding's magnitude
/// (exactsum65.s's xs_top makes only the bytes from five below the sum's top byte t on, takes the
/// magnitude's top byte as t or t - 1, and the borrow and sticky bit from the first byte below
/// those that is not the bias): sums just under and just over a power of two in 16 consecutive
/// binades (so some lie just under a byte boundary of the accumulator, where the borrow clears
/// byte t), with the remainder 1-72 places down (at every byte below the kept ones, up to a long
/// run of bias bytes), of both signs; and F32 sums at the accumulator's bottom (products of
/// subnormals, t from 0 to 8), so that fewer than five bytes lie below t.
#[test]
fn gemv_with_float_weights_rounds_sums_whose_low_bytes_decide_the_borrow_agree() {
    let two = |e: i32| 2f32.powi(e);
    for (k, fmt) in [GgmlType::F32, GgmlType::F16, GgmlType::Bf16]
        .into_iter()
        .cycle()
        .take(6)
        .enumerate()
    {
        let mut c = Case::new(
            format!(
                "GEMV {} borrows below the rounding's bytes #{k}",
                fmt.name()
            ),
            13_900 + k as u64,
            1 << 18,
        );
        let rows = 32u32;
        let cols = 3u32;
        let mut x = Vec::new();
        let mut w: Vec<u8> = Vec::new();
        for r in 0..rows {
            let s = if r % 2 == 0 { 1.0f32 } else { -1.0 }; // the sum's sign
            let m = 8 * k as i32 - 24 + (r as i32 / 2) % 16; // 16 binades in a row
            let d = 1 + c.below(72) as i32;
            let under = c.below(2) == 0;
            let rest = if under { -s } else { s } * two(m - 24 - d);
            let third = if c.below(3) == 0 {
                s * two(m - 24)
            } else {
                0.0
            };
            x.extend([s * two(m), rest, third]);
            let ones = vec![1.0f32; cols as usize];
            ggml::quantize_native(fmt, &ones, &mut w);
        }
        let wa = c.bytes(&w, false);
        let xa = c.f32s(&x);
        let za = c.alloc(4 * rows, true);
        c.setn(cols, 1, 0);
        for r in 0..rows {
            c.i(Op::Gemv, fmt as u8, 0, wa, xa + 4 * cols * r, za + 4 * r);
        }
        if fmt == GgmlType::F32 {
            // the accumulator's bottom: w = 2^-149·(1..), x subnormal or tiny normal, t 0..8
            for t in 0..24u32 {
                let wsub: Vec<f32> = (0..cols)
                    .map(|j| f32::from_bits(1 + c.below(1 << (t % 9 + 1)) as u32 * (j + 1)))
                    .collect();
                let xsub: Vec<f32> = (0..cols)
                    .map(|j| {
                        let e = c.below(40) as i32 - 149;
                        let v = if e < -126 {
                            f32::from_bits(1 << (e + 149))
                        } else {
                            two(e)
                        };
                        if (j + t) % 3 == 1 {
                            -v
                        } else {
                            v
                        }
                    })
                    .collect();
                let (wb, xb) = (c.f32s(&wsub), c.f32s(&xsub));
                let zb = c.alloc(4, true);
                c.i(Op::Gemv, fmt as u8, 0, wb, xb, zb);
            }
        }
        c.run();
    }
}

/// RMSNORM's sum of squares by its adder for two positive normal numbers (softvec65.s's
/// sqadd): short vectors, eps 0 and g = 1 (so that r, and the sum under it, shows in every y)
/// whose squares lie 0-40 binades apart either way (the sum or the new square the larger:
/// shifts 0-7 by the LSRQ chain, 8-24 by the multiplier, 25 and more the larger alone),
/// fractions all ones (sums that carry into the next binade), zero (powers of two: exact ties at
/// a shift of 24 and at equal exponents) and short (ties after the shift), squares at the top of
/// the range whose sum overflows to infinity, and zeros, subnormals, infinities and NaN among
/// them; a few vectors around one and two chunks long. And the scaling's second product from
/// the registers (yreg): x·r from about 1 down to 2^-60 times g at the range's ends, zeros,
/// subnormals, infinities and NaN.
#[test]
fn rmsnorm_sums_of_squares_at_their_adders_edges_agree() {
    for k in 0..8u64 {
        let mut c = Case::new(format!("RMSNORM sums of squares #{k}"), 9800 + k, 1 << 18);
        for j in 0..96u64 {
            let n0 = match (j + k) % 12 {
                0 => 63 + c.below(4) as u32,
                1 => 127 + c.below(5) as u32,
                _ => 2 + c.below(3) as u32,
            };
            // the first x near the middle, or at the top where two squares overflow
            let top = c.below(10) == 0;
            let e0 = if top {
                189 + c.below(3) as u32
            } else {
                110 + c.below(30) as u32
            };
            let frac = |c: &mut Case| match c.below(5) {
                0 => 0x7F_FFFF,
                1 => 0,
                2 => {
                    let keep = c.below(8) as u32;
                    short_fraction(c, keep)
                }
                _ => c.rng.next_u64() as u32,
            };
            let mut x: Vec<f32> = Vec::new();
            let mut e = e0;
            for _ in 0..n0 {
                // the next square 0-20 binades of x (0-40 of the squares) above or below
                let d = match c.below(4) {
                    0 => c.below(3) as u32,
                    1 => 11 + c.below(3) as u32,
                    _ => c.below(21) as u32,
                };
                let up = c.below(3) == 0;
                let en = if up { e + d } else { e.saturating_sub(d) };
                let en = if top { en.min(191) } else { en.clamp(64, 190) };
                if c.below(2) == 0 {
                    e = en;
                }
                let f = frac(&mut c);
                x.push(fields(c.below(2) == 0, en, f));
            }
            x[0] = fields(c.below(2) == 0, e0, frac(&mut c));
            if c.below(6) == 0 {
                let i = c.below(n0 as u64) as usize;
                x[i] = match c.below(7) {
                    0 => 0.0,
                    1 => -0.0,
                    2 => fields(false, 0, c.rng.next_u64() as u32),
                    3 => fields(true, 2 + c.below(60) as u32, c.rng.next_u64() as u32),
                    4 => f32::INFINITY,
                    5 => f32::NEG_INFINITY,
                    _ => f32::NAN,
                };
            }
            if j % 2 == 1 {
                x = sqadd_pair(&mut c);
            }
            let n0 = x.len() as u32;
            let mut g = vec![1.0f32; n0 as usize];
            if j % 4 == 2 {
                // the scaling's second product (yreg): x·r from about 1 down to 2^-60, times g
                // at the ends of the range, zeros, subnormals, infinities and NaN
                x[0] = fields(
                    c.below(2) == 0,
                    127 + c.below(4) as u32,
                    c.rng.next_u64() as u32,
                );
                for v in x.iter_mut().skip(1) {
                    let e = 127 - c.below(62) as u32;
                    *v = fields(c.below(2) == 0, e, c.rng.next_u64() as u32);
                }
                for v in g.iter_mut() {
                    let (neg, f) = (c.below(2) == 0, c.rng.next_u64() as u32);
                    *v = match c.below(9) {
                        0 => f32::INFINITY,
                        1 => f32::NEG_INFINITY,
                        2 => f32::NAN,
                        3 => fields(neg, 0, 0),
                        4 => fields(neg, 0, f),
                        5 => fields(neg, 1 + c.below(3) as u32, f),
                        6 => fields(neg, 251 + c.below(4) as u32, f),
                        _ => c.value(),
                    };
                }
            }
            let xa = c.f32s(&x);
            let ga = c.f32s(&g);
            let za = c.alloc(4 * n0, true);
            c.nan_ok(za, n0, 4);
            c.setn(n0, 0, 0);
            c.i(Op::RmsNorm, 0, 0, xa, ga, za);
        }
        c.run();
    }
}

/// Two x whose squares are k binades apart, the smaller square exact with three bits set (x's
/// fraction a single bit 2^-j: (1 + 2^-j)² = 1 + 2^(1−j) + 2^-2j) and the larger near 2 or 4
/// (x's significand up to 16 places below √2 or 2: sums that carry, last bits of either parity). k = 25 − j puts the middle bit on half
/// the larger's last place with the low bit below the guard byte (a tie only without the bits
/// lost; the larger then a random one that does not carry), k = 31 − 2j the low bit alone in
/// the guard byte's bit 0 (what a carry shifts out);
/// either x first (the sum or the new square the larger).
fn sqadd_pair(c: &mut Case) -> Vec<f32> {
    let j = 2 + c.below(10) as u32;
    let case = c.below(3);
    let k = match case {
        0 => 25 - j,
        1 => (31 - 2 * j).max(1),
        _ => c.below(28) as u32,
    };
    // the larger's significand at or above √2 (its square in the upper binade) when k is odd:
    // for the tie under the bits lost one that does not carry (a carry moves the tie), else
    // just below √2 or 2 (square near 2 or 4: a carry)
    let odd = k & 1;
    let r = c.below(0x30_0000) as u32;
    let big_frac = match (case, odd) {
        (0, 0) => r,
        (0, _) => 0x3A_0000 + r,
        (_, 0) => 0x35_04F3 - (r & 15),
        _ => 0x7F_FFFF - (r & 15),
    };
    let small_frac = 1u32 << (23 - j);
    let es = 100 + c.below(30) as u32;
    let eb = es + (k - odd) / 2;
    let small = fields(c.below(2) == 0, es, small_frac);
    let big = fields(c.below(2) == 0, eb, big_frac);
    let (sq_s, sq_b) = ((small * small).to_bits() >> 23, (big * big).to_bits() >> 23);
    assert_eq!(sq_b - sq_s, k, "sqadd_pair's exponents");
    if c.below(2) == 0 {
        vec![small, big]
    } else {
        vec![big, small]
    }
}

/// The Q8_0 quantiser's block maximum and its quants' two signs: softquant65.s scans two elements
/// a step (the odd one first) with the maximum's top 16 bits as immediates, compares all four
/// bytes only at or above them, and quantises positive and negative elements in two copies of
/// its loop (each with its own shift row and P3 = $FF path). Blocks with the maximum at each of
/// the 32 places, either sign; a second element with the same top 16 bits and lower (or higher)
/// low bytes before or after it; the same magnitude with the other sign; a pair across a top-byte
/// boundary ($41000000 against $40FFFFFF) both ways round; magnitudes rising and falling with the
/// place (a new maximum at every step, or only the first); the same top 16 bits with byte 1 below
/// and byte 0 above, or one of them above, at odd and even places either side; all-equal magnitudes; ±0 blocks,
/// subnormals of both signs, an infinity or NaN at each of several places (the C's blocks); and
/// elements of both signs whose product's byte 3 is $FF at shifts 0-9 (found here from d and id
/// as the definition forms them). One GEMV of two blocks each, so a quant off by one shows.
#[test]
fn quantisation_with_the_maximum_at_every_place_and_elements_of_both_signs_agrees() {
    let mut c = Case::new("quantiser maximum and signs".into(), 9991, 1 << 18);
    let mut blocks: Vec<Vec<f32>> = Vec::new();
    let sg = |c: &mut Case, v: f32| if c.below(2) == 0 { v } else { -v };
    for p in 0..32usize {
        let m = (0.5 + c.rng.uniform() as f32) * 2f32.powi(c.below(20) as i32 - 10);
        let mut b: Vec<f32> = (0..32)
            .map(|_| (c.rng.uniform() * 2.0 - 1.0) as f32 * m * 0.5)
            .collect();
        b[p] = sg(&mut c, m);
        let q = (p + 1 + c.below(31) as usize) % 32;
        match p % 4 {
            // the same top 16 bits, low bytes below or above (then it is the maximum)
            0 => b[q] = f32::from_bits(m.to_bits() & !0xFFFF | c.below(1 << 16) as u32),
            1 => b[q] = -b[p],
            2 => b[q] = f32::from_bits(m.to_bits() ^ 0x80),
            _ => {}
        }
        blocks.push(b);
    }
    for (hi, lo) in [(0, 1), (1, 0), (30, 31), (31, 30), (5, 20), (20, 5)] {
        let mut b: Vec<f32> = (0..32).map(|i| i as f32 * 0.01).collect();
        b[hi] = f32::from_bits(0x4100_0000);
        b[lo] = -f32::from_bits(0x40FF_FFFF);
        blocks.push(b);
    }
    // the same top 16 bits, byte 1 below and byte 0 above the maximum's or byte 0 below, where
    // taking it as the maximum changes d: amax/127 an exact tie of d's F16 rounding (rounded up
    // to an even last place), the other just below it (rounded down)
    let mut shown = 0;
    for h in [0x3C01u16, 0x4A37, 0x2001, 0x3C03, 0x5555, 0x4001] {
        let f = ggml::f16_to_f32(h);
        let amax = (f + (ggml::f16_to_f32(h + 1) - f) / 2.0) * 127.0;
        let m = amax.to_bits();
        let (b1, b0) = ((m >> 8) & 0xFF, m & 0xFF);
        for low in [
            ((b1.max(1) - 1) << 8) | 0xFF,
            (b1 << 8) | b0.saturating_sub(1),
        ] {
            let tie = f32::from_bits(m & !0xFFFF | low);
            if ggml::f32_to_f16(tie / 127.0) == ggml::f32_to_f16(amax / 127.0) {
                continue;
            }
            shown += 1;
            for (p, q) in [(10, 3), (11, 4), (3, 10), (4, 11), (20, 21), (21, 20)] {
                let mut b: Vec<f32> = (0..32).map(|i| i as f32 * amax / 64.0).collect();
                b[p] = sg(&mut c, amax);
                b[q] = sg(&mut c, tie);
                blocks.push(b);
            }
        }
    }
    assert!(shown >= 4, "{shown} ties that change d");
    blocks.push((0..32).map(|i| 1.0 + i as f32 / 8.0).collect());
    blocks.push((0..32).map(|i| -(5.0 - i as f32 / 8.0)).collect());
    blocks.push(
        (0..32)
            .map(|i| if i % 3 == 0 { -2.5 } else { 2.5 })
            .collect(),
    );
    blocks.push(
        (0..32)
            .map(|i| if i % 2 == 0 { 0.0 } else { -0.0 })
            .collect(),
    );
    blocks.push(
        (0..32)
            .map(|i| f32::from_bits(c.below(1 << 23) as u32 | ((i as u32 & 1) << 31)))
            .collect(),
    );
    let mut b: Vec<f32> = (0..32).map(|i| (i as f32 - 15.5) * 0.3).collect();
    b[9] = -f32::from_bits(1);
    b[10] = f32::from_bits(0x007F_FFFF);
    blocks.push(b);
    for (p, v) in [
        (0, f32::INFINITY),
        (31, f32::NEG_INFINITY),
        (17, f32::NAN),
        (4, -f32::NAN),
    ] {
        let mut b: Vec<f32> = (0..32).map(|i| (i as f32 - 15.5) * 0.3).collect();
        b[p] = v;
        blocks.push(b);
    }
    // P3 = $FF: mid = id's significand, mx = x's; P = mx·mid, byte 3 of it
    let sig = |v: f32| (v.to_bits() & 0x7F_FFFF | 0x80_0000) as u64;
    for (i, m) in [3.0f32, 0.7, 100.0, 1.0, 12345.0, 0.02]
        .into_iter()
        .enumerate()
    {
        let d = ggml::f16_to_f32(ggml::f32_to_f16(m / 127.0));
        let mid = sig(1.0 / d);
        let mut b = vec![sg(&mut c, m)];
        for k in 0..10 {
            for neg in [false, true] {
                let top = m * 2f32.powi(-k);
                let v = loop {
                    let v = top * (0.5 + c.rng.uniform() as f32 * 0.5);
                    if v < m && ((sig(v) * mid) >> 24) & 0xFF == 0xFF {
                        break v;
                    }
                };
                b.push(if neg { -v } else { v });
            }
        }
        while b.len() < 32 {
            let u = (c.rng.uniform() * 2.0 - 1.0) as f32;
            b.push(u * m);
        }
        b.rotate_left(i);
        blocks.push(b);
    }
    if blocks.len() % 2 == 1 {
        blocks.push((0..32).map(|i| (i as f32 - 15.5) * -0.7).collect());
    }
    let rows = 3u32;
    let mut w = Vec::new();
    for r in 0..rows {
        for _ in 0..2 {
            w.extend(0x3C00u16.to_le_bytes()); // scale 1
            for j in 0..32u32 {
                w.push(match r {
                    0 => 1,
                    1 => 1u8 << (j % 7),
                    _ => c.below(256) as u8,
                });
            }
        }
    }
    let wa = c.bytes(&w, false);
    for pair in blocks.chunks(2) {
        let x: Vec<f32> = pair.concat();
        let xa = c.f32s(&x);
        let za = c.alloc(4 * rows, true);
        c.nan_ok(za, rows, 4);
        c.setn(64, rows, 0);
        c.i(Op::Gemv, GgmlType::Q8_0 as u8, 0, wa, xa, za);
    }
    c.run();
}

/// ATTN's scores scaled from the unpacked sum: softvec65.s's sv_k_scores leaves hdot's sum in the
/// A form and multiplies it by the scale there (ymul), the packed way only for a sum that is not
/// normal (±0, subnormal, infinite, NaN: and every F32 cache's) or a product out of ymul's
/// exponent range. Each head's q at its own magnitude (2^-140 .. 2^112 against halves up to
/// 65504, so sums from subnormal through the smallest normals, whose scaled scores are subnormal,
/// to the largest and infinity), some q elements ±0, inf or NaN; head_dim 1 (scale 1), 4 (0.5), 3
/// and 8; one, two and four query heads a KV head; T = 1, 64, 65 and 130 (the weights' and V
/// columns' pointers carrying into their high bytes in hdot's step); F16 and F32 caches.
#[test]
fn attention_scores_scaled_from_the_unpacked_sum_at_its_ends_agree() {
    let shapes = [
        (4u32, 4u32, 1u32, 65u32),
        (8, 4, 8, 64),
        (8, 2, 4, 130),
        (2, 1, 3, 1),
        (4, 1, 8, 65),
    ];
    let exps = [
        -140i32, -130, -127, -126, -125, -112, -100, 0, 100, 109, 110, 111, 112,
    ];
    let mut k = 0;
    for &(nh, nkv, hd, t) in &shapes {
        for kv in [KV_F16, KV_F32] {
            let mut c = Case::new(
                format!("ATTN scores scaled unpacked {:?} kv {kv}", (nh, nkv, hd, t)),
                8800 + k,
                1 << 20,
            );
            k += 1;
            let kvd = nkv * hd;
            let mut q = Vec::new();
            for h in 0..nh {
                let e = exps[(h as usize + k as usize * 3) % exps.len()];
                for _ in 0..hd {
                    q.push(match c.below(24) {
                        0 => 0.0,
                        1 => -0.0,
                        2 if c.below(4) == 0 => f32::INFINITY,
                        3 if c.below(6) == 0 => f32::NAN,
                        _ => (c.rng.normal() as f32) * 2f32.powi(e),
                    });
                }
            }
            let cache = |c: &mut Case, top: bool| -> u32 {
                let v: Vec<f32> = (0..t * kvd)
                    .map(|_| match c.below(16) {
                        0 if top => 65504.0,
                        1 if top => -65504.0,
                        2 => 0.0,
                        3 => 6.0e-8,
                        _ => (c.rng.normal() * if top { 3000.0 } else { 1.0 }) as f32,
                    })
                    .collect();
                let b: Vec<u8> = if kv == KV_F16 {
                    v.iter()
                        .flat_map(|x| ggml::f32_to_f16(*x).to_le_bytes())
                        .collect()
                } else {
                    v.iter().flat_map(|x| x.to_le_bytes()).collect()
                };
                c.bytes(&b, true)
            };
            let ka = cache(&mut c, true);
            let va = cache(&mut c, false);
            let qa = c.f32s(&q);
            let blk = AttnBlock {
                k_cache: ka,
                v_cache: va,
                n_heads: nh,
                n_kv_heads: nkv,
                head_dim: hd,
                kv_format: kv,
            };
            c.attn(&blk, qa, t, None, true); // (a NaN's sign and payload are not compared)
            c.run();
        }
    }
}

/// Address operands relative to an address register whose sum carries from the offset's bytes
/// into every byte of the base (a sum past memory faults there, at its PC), with bits 28–30 set
/// (ignored in both forms) and A15 among the bases: LDR, STR, COPY, VADD's three operands, a
/// relative LEA and a taken branch through them.
#[test]
fn address_operands_whose_relative_sums_carry_into_every_byte_agree() {
    let size = 1usize << 17;
    for k in 0..16u64 {
        let mut c = Case::new(format!("relative operands #{k}"), 9700 + k, size);
        let junk = |c: &mut Case| (c.below(8) as u32) << 28;
        // base = t − off with off past t's low 16 bits: the sum carries into bytes 1 and 2
        let rel = |c: &mut Case, n: u8, t: u32| {
            let off = (t & 0xFFFF) + 1 + c.below(0x8000) as u32;
            let j = junk(c);
            c.i(Op::Lea, n, 15, (t - off) | j, 0, 0);
            areg(n, off) | junk(c)
        };
        // targets either side of the 64 KB boundary at BASE + $10000
        let b = BASE + 0x1_0000;
        let t1 = b - 8 + c.below(16) as u32;
        let t2 = b - 8 + c.below(16) as u32 + 64;
        let regs = [15u8, 1 + c.below(14) as u8];
        let x1 = rel(&mut c, regs[0], t1);
        let (r1, r2) = (c.below(15) as u8, c.below(15) as u8);
        c.i(Op::Ldr, r1, 0, x1, 0, 0);
        let x2 = rel(&mut c, regs[1], t2);
        c.i(Op::Str, r2, 0, x2, 0, 0);
        // COPY across the boundary, source and destination relative
        let len = 1 + c.below(40) as u32;
        let (s, d) = (b - c.below(48) as u32, b + 0x100 - c.below(48) as u32);
        let (xs, xd) = (rel(&mut c, 3, s), rel(&mut c, 4, d));
        c.i(Op::Copy, 0, 0, xs, xd, len);
        // VADD of finite values at the boundary, all three operands relative
        let n = 1 + c.below(9) as u32;
        let (va, vb, vz) = (
            b - 4 * c.below(10) as u32,
            b + 0x200,
            b + 0x400 - 4 * c.below(10) as u32,
        );
        for (at, v) in [(va, c.vector(n)), (vb, c.vector(n))] {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            c.put(at, &bytes);
        }
        let (xa, xb, xz) = (rel(&mut c, 5, va), rel(&mut c, 6, vb), rel(&mut c, 7, vz));
        c.setn(n, 0, 0);
        c.i(Op::VAdd, 0, 0, xa, xb, xz);
        // absolute operands with bits 28-30 set (never all clear here)
        let x = (b - 2 + c.below(4) as u32) | (1 + c.below(7) as u32) << 28;
        c.i(Op::Ldr, 14, 0, x, 0, 0);
        let x = (b + 0x600 + c.below(4) as u32) | (1 + c.below(7) as u32) << 28;
        c.i(Op::Str, 14, 0, x, 0, 0);
        // a relative LEA: A8 = A[regs[1]] + offset (masked to 28 bits)
        let z = c.rng.next_u64() as u32;
        c.i(Op::Lea, 8, 15, x2, 0, z);
        c.i(Op::Ldr, 9, 0, areg(8, 0), 0, 0);
        // a taken branch to the next instruction but one, relative to an A whose low byte carries
        let to = PROG + 16 * (c.prog.len() as u32 + 3);
        let off = (to & 0xFF) + 1 + c.below(0x80) as u32;
        c.i(Op::Lea, 10, 15, to - off, 0, 0);
        let j = junk(&mut c);
        c.i(Op::Beq, 15, 15, areg(10, off) | j, 0, 0);
        c.li(11, 0xDEAD); // skipped
        c.li(12, 0xBEEF);
        for r in 0..16u8 {
            c.i(Op::Str, r, 0, PROG + 0x1000 + 4 * r as u32, 0, 0);
        }
        if k % 2 == 1 {
            // the sum carrying into the top byte: $9000000 and on lies past memory
            let off = 0x100 + c.below(0xFF_0000) as u32;
            let base = 0x0900_0000 - off + c.below(0x100) as u32;
            c.i(Op::Lea, 13, 15, base, 0, 0);
            let op = [Op::Ldr, Op::Str, Op::Copy, Op::VAdd][c.below(4) as usize];
            let fault_at = PROG + 16 * c.prog.len() as u32;
            c.i(op, 1, 0, areg(13, off), PROG + 0x1800, 8);
            let out = c.run();
            assert_eq!(
                (out.error, out.fault_pc),
                (3, fault_at),
                "{k}: the fault and its PC"
            );
        } else {
            c.run();
        }
    }
}

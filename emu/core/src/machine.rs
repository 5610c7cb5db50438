//! The SSNAIL core: memory from $8000000, registers, and the instruction
//! loop of ISA v1 (spec §3), with faults, traffic accounting (§6.4), trace and
//! host hooks (§6.1).

use super::gemv::{self, Kernels};
use super::rowpool::RowPool;
use super::vector::{self, AttnShape, Numerics};
use ssnail_format::ggml::{self, GgmlType};
use ssnail_format::image::BASE;
use ssnail_format::isa::{
    AttnBlock, Instr, Op, ADDR_MASK, ADDR_OFFSET, ADDR_REL, ATTN_BLOCK_LEN, GEMV_ACC, GEMV_F16OUT,
    INSTR_LEN, KV_F16, KV_F32, R_ZERO,
};
use ssnail_format::registers::error;
use std::fmt;

/// Default cumulative instruction limit (since load).
/// The machine's instruction limit since load unless set otherwise (spec §6.1).
pub use ssnail_format::registers::INSTR_LIMIT as DEFAULT_INSTR_LIMIT;

/// Why execution stopped abnormally.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    IllegalOpcode(u8),
    MisalignedPc,
    /// An access of `len` bytes at `addr` outside [$8000000, $8000000 + memory).
    Address {
        addr: u64,
        len: u64,
    },
    InstructionLimit(u64),
    /// The work since load reached the work limit (bytes, §6.1).
    WorkLimit(u64),
    /// An operand the instruction cannot execute (unknown weight format,
    /// length not a whole number of blocks, bad ATTN block …).
    BadOperand(String),
}

/// A fault, reported with the PC and the decoded instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub pc: u32,
    pub instr: Option<Instr>,
    pub kind: FaultKind,
    /// End of memory (for the message).
    pub mem_end: u64,
}

impl Fault {
    /// The error code the register block reports ($FFD7505, spec §9.2).
    pub fn code(&self) -> u8 {
        match self.kind {
            FaultKind::IllegalOpcode(_) => error::ILLEGAL_OPCODE,
            FaultKind::MisalignedPc => error::MISALIGNED_PC,
            FaultKind::Address { .. } => error::ADDRESS,
            // The same code: both are the emulator's bounds on one job.
            FaultKind::InstructionLimit(_) | FaultKind::WorkLimit(_) => error::INSTR_LIMIT,
            FaultKind::BadOperand(_) => error::BAD_OPERAND,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SSNAIL fault at PC ${:07X}", self.pc)?;
        if let Some(i) = &self.instr {
            write!(
                f,
                " ({})",
                i.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            )?;
        }
        match &self.kind {
            FaultKind::IllegalOpcode(o) => write!(f, ": illegal opcode ${o:02X}"),
            FaultKind::MisalignedPc => write!(f, ": PC not a multiple of 16"),
            FaultKind::Address { addr, len } => write!(
                f,
                ": access of {len} bytes at ${addr:07X} outside memory [${BASE:07X}, ${:07X})",
                self.mem_end
            ),
            FaultKind::InstructionLimit(n) => write!(f, ": instruction limit of {n} reached"),
            FaultKind::WorkLimit(n) => write!(f, ": work limit of {n} bytes reached"),
            FaultKind::BadOperand(s) => write!(f, ": {s}"),
        }
    }
}

impl std::error::Error for Fault {}

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Continue,
    Sync,
    Halt,
}

/// Host hooks: called at SYNC and at every ARGMAX.
pub trait Host {
    /// The script made its writes visible (a token and its count, or the end).
    /// The host may poke memory here (e.g. set stop_request).
    fn on_sync(&mut self, _m: &mut Machine) {}
    /// Sees the logits at every ARGMAX; returning Some(id) replaces the greedy
    /// choice (the chat front end's sampler, §7.3).
    fn on_argmax(&mut self, _logits: &[f32], _m: &Machine) -> Option<u32> {
        None
    }
}

/// No hooks: greedy ARGMAX.
pub struct NoHost;
impl Host for NoHost {}

/// Architectural registers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Regs {
    pub r: [u32; 16],
    pub a: [u32; 16],
    pub n: [u32; 3],
    pub pc: u32,
}

/// Bytes moved by instructions (§6.4); host pokes and the load are not counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub read: u64,
    pub written: u64,
}

impl Traffic {
    pub fn total(&self) -> u64 {
        self.read + self.written
    }
}

/// The SSNAIL core with its memory.
pub struct Machine {
    mem: Memory,
    pub regs: Regs,
    pub numerics: Numerics,
    /// Instructions executed since load (cumulative over runs).
    pub instructions: u64,
    pub instr_limit: u64,
    pub traffic: Traffic,
    /// Work limit in bytes (§6.1), `u64::MAX` (the default) for none: a
    /// bound on the time a job takes, which the instruction limit is not
    /// (one instruction may move up to all of memory).
    pub work_limit: u64,
    /// ATTN's work beyond its traffic (see [`Machine::work`]).
    attn_work: u64,
    /// Print every instruction to stderr.
    pub trace: bool,
    /// GEMV threads, the calling one included; 0 = one per core, counted
    /// when the pool starts (asking the system costs more than a small job).
    threads: usize,
    /// Started at the first GEMV (a machine that never runs one starts no thread).
    pool: Option<RowPool>,
    /// The GEMV kernels (default: the best this CPU runs; same bits for all).
    kernels: Kernels,
}

type R<T> = Result<T, FaultKind>;

/// Emulator memory, zeroed: on Linux an anonymous mapping the kernel is
/// asked to back with huge pages (GEMVs stream eight interleaved rows, and
/// with 4 KiB pages the TLB misses cost ~15% of a token, measured), else
/// (or if the mapping fails) a plain vector.
enum Memory {
    #[cfg(target_os = "linux")]
    Map(memmap2::MmapMut),
    Vec(Vec<u8>),
}

impl Memory {
    fn new(len: usize) -> Memory {
        #[cfg(target_os = "linux")]
        if len > 0 {
            if let Ok(m) = memmap2::MmapMut::map_anon(len) {
                // Advice only: without huge pages the mapping works the same.
                let _ = m.advise(memmap2::Advice::HugePage);
                return Memory::Map(m);
            }
        }
        Memory::Vec(vec![0; len])
    }
}

impl std::ops::Deref for Memory {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            #[cfg(target_os = "linux")]
            Memory::Map(m) => m,
            Memory::Vec(v) => v,
        }
    }
}

impl std::ops::DerefMut for Memory {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            #[cfg(target_os = "linux")]
            Memory::Map(m) => m,
            Memory::Vec(v) => v,
        }
    }
}

/// Little-endian bytes to singles: one copy into fresh, not zeroed, memory
/// on a little-endian host (the element loop did not vectorise and cost ~5%
/// of a token; zeroing it first, ~0.5%).
fn le_f32s(b: &[u8]) -> Vec<f32> {
    let n = b.len() / 4;
    #[cfg(target_endian = "little")]
    {
        let mut v = Vec::<f32>::with_capacity(n);
        // SAFETY: the capacity holds 4·n bytes, all filled from `b` (not
        // emulator memory's own allocation) before the length is set, and
        // every bit pattern is an f32.
        unsafe {
            std::ptr::copy_nonoverlapping(b.as_ptr(), v.as_mut_ptr() as *mut u8, 4 * n);
            v.set_len(n);
        }
        v
    }
    #[cfg(not(target_endian = "little"))]
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

impl Machine {
    /// A machine with `mem_bytes` of zeroed memory from $8000000 (at most the
    /// 128 MiB the 28-bit address space leaves).
    pub fn new(mem_bytes: usize) -> Machine {
        let max = (ssnail_format::image::ADDRESS_END - BASE as u64) as usize;
        Machine {
            mem: Memory::new(mem_bytes.min(max)),
            regs: Regs::default(),
            numerics: Numerics::Float,
            instructions: 0,
            instr_limit: DEFAULT_INSTR_LIMIT,
            traffic: Traffic::default(),
            work_limit: u64::MAX,
            attn_work: 0,
            trace: false,
            threads: 0,
            pool: None,
            kernels: Kernels::best(),
        }
    }

    /// Split GEMVs over `n` threads, this one included (default: all cores;
    /// 1: no helper thread). Results are the same bits for every `n`.
    pub fn set_threads(&mut self, n: usize) {
        self.threads = n.max(1);
        self.pool = None;
    }

    /// Use GEMV kernels `k` (for tests and measurements: every kernel set
    /// gives the same hardware-numerics bits). False, and no change, if this
    /// CPU cannot run them.
    pub fn set_kernels(&mut self, k: Kernels) -> bool {
        k.supported() && {
            self.kernels = k;
            true
        }
    }

    /// The GEMV kernels in use.
    pub fn kernels(&self) -> Kernels {
        self.kernels
    }

    pub fn mem_size(&self) -> usize {
        self.mem.len()
    }
    /// First address past memory.
    pub fn mem_end(&self) -> u64 {
        BASE as u64 + self.mem.len() as u64
    }
    /// All of memory ($8000000 is index 0).
    pub fn mem(&self) -> &[u8] {
        &self.mem
    }
    pub fn mem_mut(&mut self) -> &mut [u8] {
        &mut self.mem
    }

    /// Zero the statistics (after a load).
    pub fn reset_stats(&mut self) {
        self.instructions = 0;
        self.traffic = Traffic::default();
        self.attn_work = 0;
    }

    /// The work since load, in bytes (§6.1): the traffic (§6.4), and for
    /// ATTN the K and V values read per head (8 · n_heads · rows ·
    /// head_dim), as the heads of a group share rows the traffic counts once.
    pub fn work(&self) -> u64 {
        self.traffic
            .read
            .saturating_add(self.traffic.written)
            .saturating_add(self.attn_work)
    }

    fn range(&self, addr: u64, len: u64) -> R<std::ops::Range<usize>> {
        // Checked: lengths come from operands and parameter blocks.
        if addr >= BASE as u64 && addr.checked_add(len).is_some_and(|e| e <= self.mem_end()) {
            let s = (addr - BASE as u64) as usize;
            Ok(s..s + len as usize)
        } else {
            Err(FaultKind::Address { addr, len })
        }
    }

    /// Bytes at an SSNAIL address (host access, not counted as traffic).
    pub fn bytes(&self, addr: u64, len: u64) -> Option<&[u8]> {
        self.range(addr, len).ok().map(|r| &self.mem[r])
    }
    /// Host write (not counted).
    pub fn write_bytes(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.range(addr, data.len() as u64) {
            Ok(r) => {
                self.mem[r].copy_from_slice(data);
                true
            }
            Err(_) => false,
        }
    }
    pub fn peek_u32(&self, addr: u64) -> Option<u32> {
        self.bytes(addr, 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    }
    pub fn poke_u32(&mut self, addr: u64, v: u32) -> bool {
        self.write_bytes(addr, &v.to_le_bytes())
    }
    /// `n` f32 values at an address (host access).
    pub fn peek_f32s(&self, addr: u64, n: usize) -> Option<Vec<f32>> {
        self.bytes(addr, 4 * n as u64).map(le_f32s)
    }

    // Instruction-side accesses: fault outside memory, count traffic.
    fn rd(&mut self, addr: u64, len: u64) -> R<&[u8]> {
        let r = self.range(addr, len)?;
        self.traffic.read += len;
        Ok(&self.mem[r])
    }
    fn rd_f32s(&mut self, addr: u64, n: u32) -> R<Vec<f32>> {
        Ok(le_f32s(self.rd(addr, 4 * n as u64)?))
    }
    fn wr(&mut self, addr: u64, data: &[u8]) -> R<()> {
        let r = self.range(addr, data.len() as u64)?;
        self.traffic.written += data.len() as u64;
        self.mem[r].copy_from_slice(data);
        Ok(())
    }
    fn wr_f32s(&mut self, addr: u64, v: &[f32]) -> R<()> {
        let r = self.range(addr, 4 * v.len() as u64)?;
        self.traffic.written += 4 * v.len() as u64;
        let out = &mut self.mem[r];
        #[cfg(target_endian = "little")]
        // SAFETY: `out` is exactly 4·len bytes of emulator memory, `v` is not in it.
        unsafe {
            std::ptr::copy_nonoverlapping(v.as_ptr() as *const u8, out.as_mut_ptr(), out.len())
        }
        #[cfg(not(target_endian = "little"))]
        for (c, x) in out.chunks_exact_mut(4).zip(v) {
            c.copy_from_slice(&x.to_le_bytes());
        }
        Ok(())
    }

    /// addr(op): bit 31 clear → op & $0FFFFFFF; set → A[bits 27–24] + bits 23–0
    /// (the sum is not re-masked).
    pub fn addr(&self, op: u32) -> u64 {
        if op & ADDR_REL != 0 {
            self.regs.a[((op >> 24) & 0xF) as usize] as u64 + (op & ADDR_OFFSET) as u64
        } else {
            (op & ADDR_MASK) as u64
        }
    }

    fn reg(&self, n: u8) -> u32 {
        let n = (n & 15) as usize;
        if n == R_ZERO as usize {
            0
        } else {
            self.regs.r[n]
        }
    }
    fn set_reg(&mut self, n: u8, v: u32) {
        self.regs.r[(n & 15) as usize] = v;
        self.regs.r[R_ZERO as usize] = 0;
    }

    fn weight_format(a: u8) -> R<GgmlType> {
        GgmlType::from_u32(a as u32)
            .filter(|t| gemv::is_supported(*t))
            .ok_or_else(|| {
                FaultKind::BadOperand(format!(
                    "weight format {a} is not F32, F16, BF16, Q8_0 or Q4_0"
                ))
            })
    }

    /// Run from `start` until HALT (or a fault).
    pub fn run(&mut self, start: u32, host: &mut dyn Host) -> Result<(), Fault> {
        self.regs.pc = start;
        while self.step(host)? != Step::Halt {}
        Ok(())
    }

    /// Execute one instruction.
    pub fn step(&mut self, host: &mut dyn Host) -> Result<Step, Fault> {
        let pc = self.regs.pc;
        let fault = |m: &Machine, instr: Option<Instr>, kind: FaultKind| Fault {
            pc,
            instr,
            kind,
            mem_end: m.mem_end(),
        };
        if self.instructions >= self.instr_limit {
            return Err(fault(
                self,
                None,
                FaultKind::InstructionLimit(self.instr_limit),
            ));
        }
        if self.work() >= self.work_limit {
            return Err(fault(self, None, FaultKind::WorkLimit(self.work_limit)));
        }
        if !pc.is_multiple_of(INSTR_LEN) {
            return Err(fault(self, None, FaultKind::MisalignedPc));
        }
        let instr = match self.rd(pc as u64, 16) {
            Ok(b) => Instr::decode(b),
            Err(k) => return Err(fault(self, None, k)),
        };
        self.instructions += 1;
        if self.trace {
            eprintln!("{pc:07X} {instr}");
        }
        self.regs.pc = pc.wrapping_add(INSTR_LEN);
        self.exec(&instr, host)
            .map_err(|k| fault(self, Some(instr), k))
    }

    fn exec(&mut self, i: &Instr, host: &mut dyn Host) -> R<Step> {
        let op = i.op().ok_or(FaultKind::IllegalOpcode(i.opcode))?;
        let [n0, n1, n2] = self.regs.n;
        match op {
            Op::Nop => {}
            Op::Halt => return Ok(Step::Halt),
            Op::Sync => {
                host.on_sync(self);
                return Ok(Step::Sync);
            }
            Op::Copy => {
                // The whole source is read before anything is written (overlap-safe).
                let len = (i.z & 0xFFFF) as u64;
                let src = self.rd(self.addr(i.x), len)?.to_vec();
                self.wr(self.addr(i.y), &src)?;
            }
            Op::SetN => self.regs.n = [i.x, i.y, i.z],
            Op::Li => self.set_reg(i.a, i.z),
            Op::Ldr => {
                let b = self.rd(self.addr(i.x), 4)?;
                let v = u32::from_le_bytes(b.try_into().unwrap());
                self.set_reg(i.a, v);
            }
            Op::Str => {
                let v = self.reg(i.a);
                self.wr(self.addr(i.x), &v.to_le_bytes())?;
            }
            Op::AddI => {
                let v = self.reg(i.b).wrapping_add(i.z);
                self.set_reg(i.a, v);
            }
            Op::Lea => {
                let v = self
                    .addr(i.x)
                    .wrapping_add(self.reg(i.b) as u64 * i.z as u64);
                self.regs.a[(i.a & 15) as usize] = (v & ADDR_MASK as u64) as u32;
            }
            Op::Beq | Op::Bne | Op::Blt => {
                let (ra, rb) = (self.reg(i.a), self.reg(i.b));
                let taken = match op {
                    Op::Beq => ra == rb,
                    Op::Bne => ra != rb,
                    _ => ra < rb,
                };
                if taken {
                    // Absolute targets are 28 bits; a relative sum beyond that faults on fetch.
                    self.regs.pc = self.addr(i.x).min(u32::MAX as u64) as u32;
                }
            }
            Op::Gemv => self.gemv(i, n0, n1)?,
            Op::DeqRow => {
                let t = Self::weight_format(i.a)?;
                let rb = gemv::row_bytes(t, n0 as usize).ok_or_else(|| {
                    FaultKind::BadOperand(format!(
                        "DEQROW of {n0} {} elements (not whole blocks)",
                        t.name()
                    ))
                })?;
                // Both ranges are checked before the output is allocated.
                self.range(self.addr(i.z), 4 * n0 as u64)?;
                let src = self.rd(self.addr(i.x), rb as u64)?;
                let mut out = vec![0f32; n0 as usize];
                ggml::dequantize_native(t, src, &mut out);
                self.wr_f32s(self.addr(i.z), &out)?;
            }
            Op::ArgMax => {
                let v = self.rd_f32s(self.addr(i.x), n0)?;
                let choice = host.on_argmax(&v, self);
                let idx = choice.unwrap_or_else(|| vector::argmax(&v) as u32);
                self.set_reg(i.a, idx);
            }
            Op::VAdd | Op::VMul => {
                let x = self.rd_f32s(self.addr(i.x), n0)?;
                let y = self.rd_f32s(self.addr(i.y), n0)?;
                let z: Vec<f32> = if op == Op::VAdd {
                    x.iter().zip(&y).map(|(a, b)| a + b).collect()
                } else {
                    x.iter().zip(&y).map(|(a, b)| a * b).collect()
                };
                self.wr_f32s(self.addr(i.z), &z)?;
            }
            Op::RmsNorm => {
                let x = self.rd_f32s(self.addr(i.x), n0)?;
                let g = self.rd_f32s(self.addr(i.y), n0)?;
                let mut z = vec![0f32; n0 as usize];
                vector::rmsnorm(self.numerics, &x, &g, f32::from_bits(n2), &mut z);
                self.wr_f32s(self.addr(i.z), &z)?;
            }
            Op::LayerNorm => {
                let x = self.rd_f32s(self.addr(i.x), n0)?;
                let two = n0
                    .checked_mul(2)
                    .ok_or_else(|| FaultKind::BadOperand(format!("LAYERNORM of {n0} elements")))?;
                let gb = self.rd_f32s(self.addr(i.y), two)?;
                let (g, b) = gb.split_at(n0 as usize);
                let mut z = vec![0f32; n0 as usize];
                vector::layernorm(self.numerics, &x, g, b, f32::from_bits(n2), &mut z);
                self.wr_f32s(self.addr(i.z), &z)?;
            }
            Op::SiluMul => {
                let x = self.rd_f32s(self.addr(i.x), n0)?;
                let y = self.rd_f32s(self.addr(i.y), n0)?;
                let mut z = vec![0f32; n0 as usize];
                vector::silumul(self.numerics, &x, &y, &mut z);
                self.wr_f32s(self.addr(i.z), &z)?;
            }
            Op::Gelu => {
                let x = self.rd_f32s(self.addr(i.x), n0)?;
                let mut z = vec![0f32; n0 as usize];
                vector::gelu(self.numerics, &x, &mut z);
                self.wr_f32s(self.addr(i.z), &z)?;
            }
            Op::Rope => {
                if n1 == 0 || n1 % 2 != 0 {
                    return Err(FaultKind::BadOperand(format!(
                        "ROPE head dimension N1 = {n1} (must be even, > 0)"
                    )));
                }
                let mut v = self.rd_f32s(self.addr(i.x), n0)?;
                let cs = self.rd_f32s(self.addr(i.y), n1)?;
                vector::rope(&mut v, &cs);
                self.wr_f32s(self.addr(i.x), &v)?;
            }
            Op::Attn => self.attn(i)?,
            Op::MeanRows => {
                let rows = self.reg(i.a);
                let x = self.rd_f32s(
                    self.addr(i.x),
                    rows.checked_mul(n0).ok_or_else(|| {
                        FaultKind::BadOperand(format!("MEANROWS of {rows} rows × {n0}"))
                    })?,
                )?;
                // With 0 rows nothing is read: the destination bounds N0
                // before the output is allocated.
                self.range(self.addr(i.z), 4 * n0 as u64)?;
                let mut z = vec![0f32; n0 as usize];
                vector::meanrows(self.numerics, &x, rows as usize, n0 as usize, &mut z);
                self.wr_f32s(self.addr(i.z), &z)?;
            }
            Op::Cvt16 => {
                let x = self.rd_f32s(self.addr(i.x), n0)?;
                let b: Vec<u8> = x
                    .iter()
                    .flat_map(|v| ggml::f32_to_f16(*v).to_le_bytes())
                    .collect();
                self.wr(self.addr(i.z), &b)?;
            }
        }
        Ok(Step::Continue)
    }

    /// GEMV: N1 rows × N0 columns of format `a` at addr(X), x at addr(Y), y at addr(Z).
    fn gemv(&mut self, i: &Instr, cols: u32, rows: u32) -> R<()> {
        let t = Self::weight_format(i.a)?;
        let rb = gemv::row_bytes(t, cols as usize).ok_or_else(|| {
            FaultKind::BadOperand(format!(
                "GEMV with {cols} {} columns (not whole blocks)",
                t.name()
            ))
        })?;
        let x = self.rd_f32s(self.addr(i.y), cols)?;
        let acc = i.b & GEMV_ACC != 0;
        let old = if acc {
            Some(self.rd_f32s(self.addr(i.z), rows)?)
        } else {
            None
        };
        let w_range = self.range(self.addr(i.x), rows as u64 * rb as u64)?;
        // The destination is checked before y is allocated (with 0 columns
        // the weights take no bytes, so only this bounds `rows`).
        let out_size = if i.b & GEMV_F16OUT != 0 { 2 } else { 4 };
        self.range(self.addr(i.z), out_size * rows as u64)?;
        self.traffic.read += rows as u64 * rb as u64;
        let mut y = vec![0f32; rows as usize];
        {
            let w = &self.mem[w_range];
            let threads = self.threads;
            let pool = self.pool.get_or_insert_with(|| {
                RowPool::new(match threads {
                    0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
                    n => n,
                })
            });
            match self.numerics {
                Numerics::Hardware => gemv::gemv_hw(self.kernels, t, w, &x, &mut y, pool),
                Numerics::Float => gemv::gemv_float(self.kernels, t, w, &x, &mut y, pool),
            }
        }
        if let Some(old) = old {
            // One single addition after the row result.
            for (v, o) in y.iter_mut().zip(old) {
                *v += o;
            }
        }
        let z = self.addr(i.z);
        if i.b & GEMV_F16OUT != 0 {
            let b: Vec<u8> = y
                .iter()
                .flat_map(|v| ggml::f32_to_f16(*v).to_le_bytes())
                .collect();
            self.wr(z, &b)
        } else {
            self.wr_f32s(z, &y)
        }
    }

    /// ATTN over K/V rows 0..=R[a] with the parameter block at addr(X).
    fn attn(&mut self, i: &Instr) -> R<()> {
        let blk = AttnBlock::decode(self.rd(self.addr(i.x), ATTN_BLOCK_LEN as u64)?);
        let bad = |s: String| Err(FaultKind::BadOperand(s));
        if blk.n_heads == 0
            || blk.n_kv_heads == 0
            || blk.head_dim == 0
            || blk.n_kv_heads > blk.n_heads
            || !blk.n_heads.is_multiple_of(blk.n_kv_heads)
        {
            return bad(format!(
                "ATTN block: {} heads, {} KV heads, head_dim {}",
                blk.n_heads, blk.n_kv_heads, blk.head_dim
            ));
        }
        let esz = match blk.kv_format {
            KV_F32 => 4u64,
            KV_F16 => 2,
            f => return bad(format!("ATTN block: KV cache format {f} (0 F32, 1 F16)")),
        };
        let rows = self.reg(i.a) as u64 + 1;
        let (hd, nh) = (blk.head_dim as usize, blk.n_heads as usize);
        let kvd = blk.n_kv_heads as u64 * hd as u64;
        // Every size is checked (u64, no wrap) and every range read before
        // anything is allocated from these numbers.
        let q_len = blk.n_heads as u64 * blk.head_dim as u64;
        let kv_bytes = rows
            .checked_mul(kvd)
            .and_then(|n| n.checked_mul(esz))
            .ok_or_else(|| {
                FaultKind::BadOperand(format!("ATTN of {rows} rows × {kvd} KV values"))
            })?;
        let q_bytes = q_len.saturating_mul(4);
        let q_range = self.range(self.addr(i.y), q_bytes)?;
        self.range(self.addr(i.z), q_bytes)?;
        self.range(blk.k_cache as u64, kv_bytes)?;
        self.range(blk.v_cache as u64, kv_bytes)?;
        // The one instruction whose time grows faster than its traffic
        // (heads × rows): its work is counted, and checked, before it runs.
        let per_head_reads = q_len.saturating_mul(8).saturating_mul(rows);
        self.attn_work = self.attn_work.saturating_add(per_head_reads);
        if self.work() > self.work_limit {
            return Err(FaultKind::WorkLimit(self.work_limit));
        }
        self.traffic.read += q_bytes;
        let q = le_f32s(&self.mem[q_range]);
        let widen = |b: &[u8]| -> Vec<f32> {
            if esz == 4 {
                le_f32s(b)
            } else {
                let mut v = vec![0f32; b.len() / 2];
                gemv::widen_f16(b, &mut v);
                v
            }
        };
        let k = widen(self.rd(blk.k_cache as u64, kv_bytes)?);
        let v = widen(self.rd(blk.v_cache as u64, kv_bytes)?);
        let shape = AttnShape {
            n_heads: nh,
            n_kv_heads: blk.n_kv_heads as usize,
            head_dim: hd,
            rows: rows as usize,
        };
        let mut out = vec![0f32; nh * hd];
        vector::attention(self.numerics, &shape, &q, &k, &v, &mut out);
        self.wr_f32s(self.addr(i.z), &out)
    }
}

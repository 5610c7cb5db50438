//! In-process fuzzing on stable Rust (no nightly, no libFuzzer): a mutation
//! engine seeded from small valid inputs, run against every reader of
//! hostile files in the project, with three budgets per input — no panic
//! (`catch_unwind`), a time limit (measured per input; a watchdog aborts a
//! hang after saving the input) and a memory limit (a counting global
//! allocator, see [`alloc`], installed by the binary and the smoke test).
//!
//! Feedback without compiler coverage: each target reports how far an input
//! got (a depth) and, for a rejected input, the text of its error with the
//! numbers taken out. An input that reaches a new (depth, error) pair joins
//! the corpus, so the engine learns, for instance, which header fields pass
//! validation and then mutates past them.
//!
//! This crate sits at the top level (`fuzz/`), beside `format/`, because it
//! exercises every layer (PC tools, the core emulator, the headless
//! MEGA65, the disk tool) and belongs to none of them.

pub mod alloc;
pub mod targets;

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a target did with one input.
pub enum Outcome {
    /// Accepted; the depth says how far it went.
    Ok(u32),
    /// Rejected cleanly with this error (depth = where).
    Rejected(u32, String),
    /// A property that must hold did not (e.g. an error without the file
    /// name, or a converted image the image tokenizer refuses).
    Violation(String),
}

/// One fuzz target: seeds, and a run over one input.
pub trait Target: Send {
    fn name(&self) -> &'static str;
    /// Small valid inputs (deterministic).
    fn seeds(&self) -> Vec<Vec<u8>>;
    /// Where mutations matter most (header, script, tables), if known.
    fn focus(&self, _input: &[u8]) -> Option<std::ops::Range<usize>> {
        None
    }
    fn run(&mut self, input: &[u8]) -> Outcome;
    /// A mutation that knows the format (e.g. one instruction of an
    /// image's script rewritten with a valid opcode and plausible
    /// operands); false when the target has none or the input does not
    /// parse far enough. Tried on half of the inputs.
    fn mutate_structured(&self, _rng: &mut Rng, _input: &mut Vec<u8>) -> bool {
        false
    }
}

/// Budgets per input.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Wall time of one input.
    pub time: Duration,
    /// Heap growth of one input (peak minus the live bytes before it).
    pub memory: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            time: Duration::from_secs(2),
            memory: 512 << 20,
        }
    }
}

/// One failure: what happened and the input that did it.
#[derive(Clone, Debug)]
pub struct Failure {
    pub kind: &'static str,
    pub detail: String,
    pub input: Vec<u8>,
}

/// Totals of a campaign on one target.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub target: &'static str,
    pub executions: u64,
    pub seconds: f64,
    pub accepted: u64,
    pub corpus: usize,
    pub panics: u64,
    pub violations: u64,
    pub time_overruns: u64,
    pub memory_overruns: u64,
    pub slowest: Duration,
    pub peak_memory: usize,
    pub failures: Vec<Failure>,
}

impl Stats {
    pub fn clean(&self) -> bool {
        self.panics + self.violations + self.time_overruns + self.memory_overruns == 0
    }
    pub fn per_second(&self) -> f64 {
        self.executions as f64 / self.seconds.max(1e-9)
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:<10} {:>10} execs in {:>7.1} s = {:>8.0}/s, {} accepted, corpus {}, \
             {} panics, {} violations, {} time and {} memory overruns \
             (slowest {:.1} ms, peak {:.1} MB)",
            self.target,
            self.executions,
            self.seconds,
            self.per_second(),
            self.accepted,
            self.corpus,
            self.panics,
            self.violations,
            self.time_overruns,
            self.memory_overruns,
            self.slowest.as_secs_f64() * 1e3,
            self.peak_memory as f64 / 1e6
        )
    }
}

/// xorshift64*: fast, deterministic, good enough to choose mutations.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.next_u64().is_multiple_of(one_in)
    }
}

/// Values that break size arithmetic: zero, one, powers of two and their
/// neighbours, all ones, the sign bit.
pub const INTERESTING: [u64; 16] = [
    0,
    1,
    2,
    3,
    16,
    32,
    255,
    256,
    0x7FFF,
    0xFFFF,
    0x7FFF_FFFF,
    0x8000_0000,
    0xFFFF_FFFF,
    0x1_0000_0000,
    0x7FFF_FFFF_FFFF_FFFF,
    u64::MAX,
];

/// Mutate `b` in place: 1–4 stacked edits, mostly inside `focus`.
pub fn mutate(
    rng: &mut Rng,
    b: &mut Vec<u8>,
    focus: Option<std::ops::Range<usize>>,
    other: &[u8],
    max_len: usize,
) {
    let edits = 1 + rng.below(4);
    for _ in 0..edits {
        let len = b.len();
        let pos = |rng: &mut Rng| -> usize {
            match &focus {
                Some(r) if !rng.chance(8) && r.end <= len && r.start < r.end => {
                    r.start + rng.below(r.end - r.start)
                }
                _ => rng.below(len.max(1)),
            }
        };
        match rng.below(11) {
            0 | 1 if len > 0 => {
                let p = pos(rng).min(len - 1);
                b[p] ^= 1 << rng.below(8);
            }
            2 if len > 0 => {
                let p = pos(rng).min(len - 1);
                b[p] = rng.next_u64() as u8;
            }
            3..=5 if len > 0 => {
                // An interesting integer of 1, 2, 4 or 8 bytes, at an
                // aligned position half of the time (header fields are).
                let w = 1 << rng.below(4);
                let mut p = pos(rng).min(len.saturating_sub(1));
                if rng.chance(2) {
                    p &= !(w - 1);
                }
                let mut v = INTERESTING[rng.below(INTERESTING.len())];
                if rng.chance(4) {
                    v = v.wrapping_add(rng.below(9) as u64).wrapping_sub(4);
                }
                for (k, byte) in v.to_le_bytes().iter().take(w).enumerate() {
                    if p + k < len {
                        b[p + k] = *byte;
                    }
                }
            }
            6 if len > 0 => {
                // Add a small delta to a little-endian u32.
                let p = pos(rng).min(len.saturating_sub(4));
                if p + 4 <= len {
                    let v = u32::from_le_bytes(b[p..p + 4].try_into().unwrap_or_default());
                    let d = rng.below(33) as u32;
                    let v = if rng.chance(2) {
                        v.wrapping_add(d)
                    } else {
                        v.wrapping_sub(d)
                    };
                    b[p..p + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
            7 if len > 1 => {
                // Copy a chunk over another place.
                let n = 1 + rng.below(64.min(len - 1));
                let from = rng.below(len - n);
                let to = pos(rng).min(len - n);
                let chunk = b[from..from + n].to_vec();
                b[to..to + n].copy_from_slice(&chunk);
            }
            8 if len > 0 => {
                // Delete a chunk.
                let p = pos(rng).min(len - 1);
                let n = 1 + rng.below(64.min(len - p));
                b.drain(p..p + n);
            }
            9 if len < max_len => {
                // Insert random or repeated bytes.
                let p = pos(rng).min(len);
                let n = 1 + rng.below(32);
                let fill = rng.next_u64() as u8;
                let ins: Vec<u8> = (0..n)
                    .map(|_| {
                        if rng.chance(2) {
                            fill
                        } else {
                            rng.next_u64() as u8
                        }
                    })
                    .collect();
                b.splice(p..p, ins);
            }
            _ if !other.is_empty() => {
                // Splice from another corpus input (same place, its bytes).
                let p = pos(rng).min(len);
                let n = 1 + rng.below(256.min(other.len()));
                let from = p.min(other.len() - n);
                let end = (p + n).min(len);
                b.splice(p..end, other[from..from + n].iter().copied());
            }
            _ => {
                // Truncate.
                let p = rng.below(len + 1);
                b.truncate(p);
            }
        }
    }
    b.truncate(max_len);
}

/// A (depth, error) feature: the error text with digits removed, so
/// "tensor 7 has ..." and "tensor 9 has ..." count once.
fn feature(depth: u32, err: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    depth.hash(&mut h);
    for c in err.chars().filter(|c| !c.is_ascii_digit()).take(80) {
        c.hash(&mut h);
    }
    h.finish()
}

/// Seconds between progress lines on stderr during a campaign (0 = none).
pub static PROGRESS_SECS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How long to run.
#[derive(Clone, Copy, Debug)]
pub enum Length {
    Inputs(u64),
    Time(Duration),
}

/// Silence the default panic message while fuzzing (panics are counted and
/// reported, with the message, by the campaign), and capture no backtrace
/// for errors: with RUST_BACKTRACE set, anyhow captures one for every error
/// it makes (7% of the import target's time), and nothing shows them.
pub fn quiet_panics() {
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg} at {at}"));
    }));
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// CPU time of this thread: the time budget counts the work an input
/// causes, not the time the (niced, shared) process waited for a core.
/// The targets run on the calling thread (the core emulator with one GEMV
/// thread), so this is all of it.
#[cfg(unix)]
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Safety: a valid timespec to fill; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}
#[cfg(not(unix))]
pub fn thread_cpu_time() -> Duration {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed()
}

/// Run one input with the budgets; None when it stayed within them.
pub fn run_one(
    t: &mut dyn Target,
    input: &[u8],
    budget: Budget,
) -> (Outcome, Option<Failure>, Duration, usize) {
    let base = alloc::start_input(input);
    let t0 = thread_cpu_time();
    let r = catch_unwind(AssertUnwindSafe(|| t.run(input)));
    let took = thread_cpu_time().saturating_sub(t0);
    let grew = alloc::end_input(base);
    let fail = |kind, detail: String| Failure {
        kind,
        detail,
        input: input.to_vec(),
    };
    let (out, mut failure) = match r {
        Ok(Outcome::Violation(s)) => (Outcome::Violation(s.clone()), Some(fail("violation", s))),
        Ok(o) => (o, None),
        Err(_) => {
            let msg = LAST_PANIC.with(|p| p.borrow().clone());
            (Outcome::Violation(msg.clone()), Some(fail("panic", msg)))
        }
    };
    if failure.is_none() && took > budget.time {
        failure = Some(fail("time", format!("{:.2} s", took.as_secs_f64())));
    }
    if failure.is_none() && grew > budget.memory {
        failure = Some(fail("memory", format!("{:.1} MB", grew as f64 / 1e6)));
    }
    (out, failure, took, grew)
}

/// Fuzz one target.
pub fn campaign(t: &mut dyn Target, length: Length, budget: Budget, seed: u64) -> Stats {
    let mut rng = Rng::new(seed ^ t.name().len() as u64);
    let mut corpus: Vec<Vec<u8>> = t.seeds();
    assert!(!corpus.is_empty(), "{}: no seeds", t.name());
    let max_len = corpus.iter().map(Vec::len).max().unwrap_or(0) * 2 + 4096;
    let mut seen = HashSet::new();
    let mut st = Stats {
        target: t.name(),
        ..Stats::default()
    };
    let start = Instant::now();
    let done = |st: &Stats| match length {
        Length::Inputs(n) => st.executions >= n,
        Length::Time(d) => start.elapsed() >= d,
    };
    // Seeds first, unmutated: they must be accepted and clean.
    let seeds = corpus.clone();
    for s in &seeds {
        let (out, f, took, grew) = run_one(t, s, budget);
        st.executions += 1;
        record(&mut st, &mut seen, &out, f, took, grew, None);
    }
    let mut last_report = Instant::now();
    let every = Duration::from_secs(PROGRESS_SECS.load(std::sync::atomic::Ordering::Relaxed));
    while !done(&st) {
        if !every.is_zero() && st.executions.is_multiple_of(1024) && last_report.elapsed() >= every
        {
            last_report = Instant::now();
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "{}: {} execs in {:.0} s ({:.0}/s), {} panics, {} violations, {} overruns so far",
                st.target,
                st.executions,
                secs,
                st.executions as f64 / secs,
                st.panics,
                st.violations,
                st.time_overruns + st.memory_overruns
            );
        }
        let parent = &corpus[rng.below(corpus.len())];
        let other = &corpus[rng.below(corpus.len())];
        let mut input = parent.clone();
        if !(rng.chance(2) && t.mutate_structured(&mut rng, &mut input)) {
            let focus = t.focus(&input);
            mutate(&mut rng, &mut input, focus, other, max_len);
        }
        let (out, f, took, grew) = run_one(t, &input, budget);
        st.executions += 1;
        let mut keep = None;
        record(&mut st, &mut seen, &out, f, took, grew, Some(&mut keep));
        if keep.is_some() && corpus.len() < 512 {
            corpus.push(input);
        }
    }
    st.seconds = start.elapsed().as_secs_f64();
    st.corpus = corpus.len();
    st
}

fn record(
    st: &mut Stats,
    seen: &mut HashSet<u64>,
    out: &Outcome,
    f: Option<Failure>,
    took: Duration,
    grew: usize,
    keep: Option<&mut Option<()>>,
) {
    st.slowest = st.slowest.max(took);
    st.peak_memory = st.peak_memory.max(grew);
    let feat = match out {
        Outcome::Ok(d) => {
            st.accepted += 1;
            feature(*d, "")
        }
        Outcome::Rejected(d, e) => feature(*d, e),
        Outcome::Violation(_) => 0,
    };
    if let Some(f) = f {
        match f.kind {
            "panic" => st.panics += 1,
            "violation" => st.violations += 1,
            "time" => st.time_overruns += 1,
            _ => st.memory_overruns += 1,
        }
        if st.failures.len() < 20 {
            st.failures.push(f);
        }
        return;
    }
    if seen.insert(feat) {
        if let Some(k) = keep {
            *k = Some(());
        }
    }
}

/// Where failing inputs are kept as regression inputs: fuzz/testdata/crashes/<target>/.
pub fn crash_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/crashes")
        .join(target)
}

/// Save a failure's input under the crash folder (named by its content).
pub fn save(target: &str, f: &Failure) -> std::io::Result<PathBuf> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    f.input.hash(&mut h);
    let dir = crash_dir(target);
    std::fs::create_dir_all(&dir)?;
    let p = dir.join(format!("{}-{:016x}.bin", f.kind, h.finish()));
    std::fs::write(&p, &f.input)?;
    Ok(p)
}

/// The saved regression inputs of a target.
pub fn saved_inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(crash_dir(target))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .collect();
    v.sort();
    v
}

//! The GEMV thread pool: the calling thread and `threads − 1` helpers share
//! the row chunks of one GEMV.
//!
//! Why not rayon: a token is ~200 GEMVs of tens of µs each, and waking a
//! sleeping worker costs tens of µs, which made two threads slower than one.
//! Here a helper spins on one atomic word for a short while after its last
//! chunk (a run's GEMVs come back to back, so it is awake for the next one),
//! yielding now and then in case it shares a core with the caller, then
//! parks, so an idle emulator burns no CPU. Chunks are claimed from a
//! shared counter, so the caller never waits for a helper that has not
//! started: a late helper just finds no work left; one that lost its core
//! mid-chunk (other load) makes the caller work alone for a while. Nothing is
//! allocated per job. Which thread computes a chunk does not change its bits.

use std::hint::spin_loop;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long an idle helper spins before parking.
const SPIN: Duration = Duration::from_millis(2);

/// How long the caller works alone after a helper kept it waiting; doubled
/// (up to SOLO_MAX) each time the first shared job after a solo period
/// stalls again, back to SOLO once one does not: on a machine whose other
/// load keeps taking the helpers' cores, two threads then cost little more
/// than one instead of stalling every few tokens.
const SOLO: Duration = Duration::from_millis(50);
const SOLO_MAX: Duration = Duration::from_millis(1600);

/// Most chunks in one job (the count has 16 bits of the job word).
pub const MAX_CHUNKS: usize = 0xFFFF;

type Job<'a> = &'a (dyn Fn(usize) + Sync);

struct Shared {
    /// The current job: epoch (bits 32–63), chunk count (16–31), next
    /// unclaimed chunk (0–15). The epoch makes a stale claim fail.
    word: AtomicU64,
    /// Points at the current job's closure; valid while it has unfinished chunks.
    job: AtomicPtr<()>,
    /// Chunks of the current job finished by helpers.
    done: AtomicUsize,
    /// Helpers parked or about to park.
    sleeping: AtomicUsize,
    quit: AtomicBool,
    helper_panicked: AtomicBool,
}

impl Shared {
    /// Claim the next chunk of the current job, if one is left.
    fn claim(&self) -> Option<usize> {
        let mut w = self.word.load(Acquire);
        loop {
            let (n, next) = ((w >> 16) & 0xFFFF, w & 0xFFFF);
            if next >= n {
                return None;
            }
            match self.word.compare_exchange_weak(w, w + 1, AcqRel, Acquire) {
                Ok(_) => return Some(next as usize),
                Err(v) => w = v,
            }
        }
    }

    fn has_work(&self) -> bool {
        let w = self.word.load(SeqCst);
        w & 0xFFFF < (w >> 16) & 0xFFFF
    }
}

fn helper(s: Arc<Shared>) {
    let mut idle_since = Instant::now();
    let mut spins = 0u32;
    loop {
        if let Some(c) = s.claim() {
            // SAFETY: the job stays alive until all its chunks are done, and
            // this claimed chunk is not done yet (`RowPool::for_each` waits).
            let job = unsafe { *(s.job.load(Acquire) as *const Job) };
            if catch_unwind(AssertUnwindSafe(|| job(c))).is_err() {
                s.helper_panicked.store(true, Relaxed);
            }
            s.done.fetch_add(1, Release);
            idle_since = Instant::now();
            continue;
        }
        spin_loop();
        spins = spins.wrapping_add(1);
        if !spins.is_multiple_of(64) {
            continue;
        }
        // Every few µs: give way if the caller shares our core (other load on
        // the machine), else this spin would slow it down.
        thread::yield_now();
        if s.quit.load(Acquire) {
            return;
        }
        if idle_since.elapsed() < SPIN {
            continue;
        }
        // Announce the nap before the last look, so a job posted meanwhile
        // either is seen here or sees `sleeping` and unparks us.
        s.sleeping.fetch_add(1, SeqCst);
        if !s.has_work() && !s.quit.load(SeqCst) {
            thread::park();
        }
        s.sleeping.fetch_sub(1, SeqCst);
        idle_since = Instant::now();
    }
}

/// `threads` threads for GEMV rows, counting the caller (1: no helper thread).
pub struct RowPool {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
    /// Run jobs on the caller alone until then (helpers were descheduled).
    solo_until: Option<Instant>,
    /// The next solo period's length.
    solo_len: Duration,
}

impl RowPool {
    pub fn new(threads: usize) -> RowPool {
        let shared = Arc::new(Shared {
            word: AtomicU64::new(0),
            job: AtomicPtr::new(std::ptr::null_mut()),
            done: AtomicUsize::new(0),
            sleeping: AtomicUsize::new(0),
            quit: AtomicBool::new(false),
            helper_panicked: AtomicBool::new(false),
        });
        // A helper the system cannot start is not an error: the pool works
        // with the threads it got (at least the caller's).
        let helpers = (1..threads.max(1))
            .map_while(|i| {
                let s = shared.clone();
                thread::Builder::new()
                    .name(format!("ssnail-gemv-{i}"))
                    .spawn(move || helper(s))
                    .ok()
            })
            .collect();
        RowPool {
            shared,
            helpers,
            solo_until: None,
            solo_len: SOLO,
        }
    }

    /// Threads working on a job, the caller included.
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// Run `f(c)` once for every chunk `c` in `0..n` (n ≤ [`MAX_CHUNKS`]),
    /// on this thread and the helpers; returns when all are done.
    pub fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        let solo = self.solo_until.is_some_and(|t| Instant::now() < t);
        if self.helpers.is_empty() || n <= 1 || solo {
            return (0..n).for_each(f);
        }
        assert!(n <= MAX_CHUNKS, "{n} chunks in one job");
        let s = &*self.shared;
        // The previous job is finished, so no helper reads `job` or touches `done`.
        s.done.store(0, Relaxed);
        s.job.store(&f as *const Job as *mut (), Relaxed);
        let epoch = (s.word.load(Relaxed) >> 32).wrapping_add(1) & 0xFFFF_FFFF;
        s.word.store(epoch << 32 | (n as u64) << 16, SeqCst);
        if s.sleeping.load(SeqCst) > 0 {
            self.helpers.iter().for_each(|h| h.thread().unpark());
        }
        let mut mine = 0;
        let start = Instant::now();
        let ours = catch_unwind(AssertUnwindSafe(|| {
            while let Some(c) = s.claim() {
                mine += 1;
                f(c);
            }
        }));
        // Only chunks a helper is running now are left: spin, yielding if it
        // was descheduled. Even after a panic: they still use `f`.
        let waiting = Instant::now();
        let mut spins = 0u32;
        while mine + s.done.load(Acquire) < n {
            spins = spins.wrapping_add(1);
            if spins < 4096 {
                spin_loop();
            } else {
                thread::yield_now();
            }
        }
        // Waiting longer than our own share took means a helper lost its
        // core mid-chunk (other load on the machine): go solo for a while
        // rather than stall on every GEMV.
        let waited = waiting.elapsed();
        if waited > (waiting - start).max(Duration::from_micros(200)) {
            // The first stall after a good job: SOLO; a stall right after a
            // solo period: twice the last one.
            let len = if self.solo_until.is_some() {
                (self.solo_len * 2).min(SOLO_MAX)
            } else {
                SOLO
            };
            self.solo_len = len;
            self.solo_until = Some(Instant::now() + len);
        } else {
            self.solo_until = None;
        }
        if let Err(p) = ours {
            resume_unwind(p);
        }
        assert!(
            !s.helper_panicked.swap(false, Relaxed),
            "a GEMV helper thread panicked"
        );
    }

    /// Run `f(first_index, part)` over `out` cut into parts of `chunk`
    /// elements (the last may be shorter), split between the threads.
    pub fn split<T: Send>(
        &mut self,
        out: &mut [T],
        chunk: usize,
        f: impl Fn(usize, &mut [T]) + Sync,
    ) {
        let (len, chunk) = (out.len(), chunk.max(1));
        let base = SendPtr(out.as_mut_ptr());
        self.for_each(len.div_ceil(chunk), &|c| {
            let (i0, i1) = (c * chunk, (c * chunk + chunk).min(len));
            // SAFETY: every chunk index runs exactly once, so the parts are
            // disjoint, and `out` is borrowed until `for_each` returns.
            let part = unsafe { std::slice::from_raw_parts_mut(base.get().add(i0), i1 - i0) };
            f(i0, part);
        });
    }
}

impl Drop for RowPool {
    fn drop(&mut self) {
        self.shared.quit.store(true, SeqCst);
        for h in self.helpers.drain(..) {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// A pointer the chunks of one job share (they write disjoint parts).
struct SendPtr<T>(*mut T);
// SAFETY: only used by `split`, whose chunks never overlap.
unsafe impl<T: Send> Sync for SendPtr<T> {}
impl<T> SendPtr<T> {
    // A method, so closures capture the wrapper and not the raw field.
    fn get(&self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chunk_runs_once_across_many_jobs_and_naps() {
        for threads in [1, 2, 3] {
            let mut pool = RowPool::new(threads);
            assert_eq!(pool.threads(), threads);
            for job in 0..300usize {
                // Some jobs after the helpers have parked (wake-up path).
                if job % 100 == 99 {
                    thread::sleep(SPIN * 3);
                }
                let n = 1 + job % 37;
                let mut out = vec![0u32; n * 5 + job % 3];
                pool.split(&mut out, 5, |i0, part| {
                    for (k, v) in part.iter_mut().enumerate() {
                        *v += (i0 + k) as u32 + 1;
                    }
                });
                let want: Vec<u32> = (1..=out.len() as u32).collect();
                assert_eq!(out, want, "threads {threads} job {job}");
            }
        }
    }

    #[test]
    fn helpers_do_share_the_work() {
        let mut pool = RowPool::new(2);
        let caller = thread::current().id();
        let others = AtomicUsize::new(0);
        for _ in 0..50 {
            pool.solo_until = None;
            pool.for_each(64, &|_| {
                if thread::current().id() != caller {
                    others.fetch_add(1, Relaxed);
                }
                thread::sleep(Duration::from_micros(50));
            });
        }
        assert!(others.load(Relaxed) > 0, "the helper never ran a chunk");
    }

    #[test]
    fn a_helper_that_keeps_the_caller_waiting_is_left_out_for_a_while() {
        let mut pool = RowPool::new(2);
        let caller = thread::current().id();
        let on_helper = AtomicUsize::new(0);
        // A helper chunk 10 ms long, the caller's 0.3 ms: the caller waits.
        let job = |c: usize| {
            if thread::current().id() == caller {
                thread::sleep(Duration::from_micros(300));
            } else {
                on_helper.fetch_add(1, Relaxed);
                thread::sleep(Duration::from_millis(10));
            }
            let _ = c;
        };
        // Until a job stalls (the helper kept the caller waiting): on a loaded
        // machine the caller may itself be delayed, so one helper chunk does
        // not always make a stall. The wait has a deadline, not a hang.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while pool.solo_until.is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "no job stalled on the helper in 20 s"
            );
            pool.for_each(8, &job);
        }
        assert!(on_helper.load(Relaxed) > 0, "a stall without the helper");
        let before = on_helper.load(Relaxed);
        pool.for_each(8, &job);
        assert_eq!(
            on_helper.load(Relaxed),
            before,
            "solo right after the stall"
        );
        thread::sleep(SOLO);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while on_helper.load(Relaxed) == before {
            assert!(
                std::time::Instant::now() < deadline,
                "the helper was never taken back in 20 s after the solo period"
            );
            pool.for_each(8, &job);
        }
    }

    #[test]
    fn a_helper_that_stalls_again_after_a_solo_period_is_left_out_twice_as_long() {
        let mut pool = RowPool::new(2);
        let caller = thread::current().id();
        // A helper chunk 10 ms long, the caller's 0.3 ms: the caller waits.
        let job = |_c: usize| {
            let us = if thread::current().id() == caller {
                300
            } else {
                10_000
            };
            thread::sleep(Duration::from_micros(us));
        };
        // Until a shared job right after a solo period of SOLO stalls (the
        // helper may take no chunk, or other load may delay the caller).
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            pool.solo_until = Some(Instant::now() - Duration::from_millis(1));
            pool.solo_len = SOLO;
            pool.for_each(8, &job);
            if pool.solo_until.is_some() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no stall in 20 s");
        }
        assert_eq!(pool.solo_len, 2 * SOLO);
        assert!(pool.solo_until.unwrap() > Instant::now() + SOLO);
        // A job the helpers do not delay ends the backoff.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while pool.solo_until.is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "every job stalled for 20 s"
            );
            pool.solo_until = Some(Instant::now() - Duration::from_millis(1));
            pool.for_each(8, &|_| {});
        }
    }

    #[test]
    fn a_panicking_chunk_panics_the_caller_after_all_chunks_stop() {
        let mut pool = RowPool::new(2);
        let caller = thread::current().id();
        for helper_side in [false, true] {
            pool.solo_until = None;
            let finished = AtomicUsize::new(0);
            let helper_started = AtomicBool::new(false);
            let r = catch_unwind(AssertUnwindSafe(|| {
                pool.for_each(16, &|c| {
                    thread::sleep(Duration::from_micros(200));
                    if thread::current().id() == caller {
                        // Leave the helper a chunk to panic in.
                        while helper_side && !helper_started.load(Relaxed) {
                            thread::yield_now();
                        }
                        assert!(helper_side || c < 2, "chunk {c}");
                    } else {
                        helper_started.store(true, Relaxed);
                        assert!(!helper_side, "chunk {c}");
                    }
                    finished.fetch_add(1, Relaxed);
                })
            }));
            assert!(r.is_err());
            // Nothing of the job runs after for_each has returned.
            let n = finished.load(Relaxed);
            thread::sleep(Duration::from_millis(5));
            assert_eq!(finished.load(Relaxed), n);
        }
        // The pool still works.
        let mut out = [0u8; 40];
        pool.split(&mut out, 3, |_, p| p.fill(1));
        assert!(out.iter().all(|&v| v == 1));
    }
}

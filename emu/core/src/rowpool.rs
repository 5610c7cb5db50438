//! The GEMV thread pool: the calling thread and `threads − 1` helpers share
//! the row chunks of one GEMV.
//!
//! Why not rayon: a token is ~200 GEMVs of tens of µs each, and waking a
//! sleeping worker costs tens of µs, which made two threads slower than one.
//! Here a helper spins on one atomic word for a short while after its last
//! chunk (a run's GEMVs come back to back, so it is awake for the next one),
//! then parks, so an idle emulator burns no CPU. Chunks are claimed from a
//! shared counter, so the caller never waits for a helper that has not
//! started: a late helper just finds no work left; one that lost its core
//! mid-chunk (other load) makes the caller work alone for a while. Nothing is
//! allocated per job. Which thread computes a chunk does not change its bits.
//!
//! Neither side calls `sched_yield`: on Linux a yield hands the core to any
//! runnable task, even one at nice 19, for a whole time slice (milliseconds);
//! a helper that yielded every few µs while idle (as this pool did) took
//! part in under 10% of the chunks next to two nice-19 processes (~55%
//! without the yield), so two threads were as slow as one. Instead a helper
//! that finds itself on the caller's core (a wake-up under other load can
//! put it there, and a thread that naps is never moved by the scheduler's
//! balancing) moves to another allowed core at once, or, if there is none,
//! leaves the job to the caller and naps; and a caller that must wait for a
//! helper's last chunk spins up to 1 ms, then parks until the helper wakes it.

use std::hint::spin_loop;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

/// How long an idle helper spins before parking.
const SPIN: Duration = Duration::from_millis(2);

/// How long the caller spins for a helper's last chunk before parking: a
/// helper still computing finishes within a chunk's time (µs to ms), and a
/// parked thread takes tens of µs or more to wake (more in a VM, whose idle
/// virtual CPU must be rescheduled); parking is for a helper that lost its
/// core, or sits on ours.
const WAIT_SPIN: Duration = Duration::from_millis(1);

/// A helper that kept the caller waiting (a stall: it lost its core
/// mid-chunk, for a time slice of other load, milliseconds) costs that wait
/// once. Sharing goes on while the stalls cost less than 1/CALM of the time
/// since the last one (two threads gain far more: a nice-19 neighbour that
/// wakes now and then, measured ~10 stalls/s of ~2.6 ms, would otherwise
/// keep the pool alone almost all the time). Denser stalls (the helpers'
/// cores taken by busy tasks) make the caller work alone for SOLO, doubled
/// (up to SOLO_MAX) while the stalls come soon after the last solo period
/// (a shared stretch shorter than SOON or than that period), back to SOLO
/// after a longer one: then persistent load costs a stall every 1.6 s.
const CALM: u32 = 10;
const SOLO: Duration = Duration::from_millis(5);
const SOLO_MAX: Duration = Duration::from_millis(1600);
const SOON: Duration = Duration::from_millis(100);

/// Most chunks in one job (the count has 16 bits of the job word).
pub const MAX_CHUNKS: usize = 0xFFFF;

/// A CPU number no CPU has.
const NO_CPU: u32 = u32::MAX;

/// The CPU this thread runs on now, or [`NO_CPU`] if it cannot be told
/// (Linux: `sched_getcpu`, answered by the vDSO without a system call, ~4 ns
/// here).
#[inline]
fn current_cpu() -> u32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: no arguments; -1 on failure.
        let cpu = unsafe { libc::sched_getcpu() };
        u32::try_from(cpu).unwrap_or(NO_CPU)
    }
    #[cfg(not(target_os = "linux"))]
    {
        NO_CPU
    }
}

/// The CPUs a thread may run on, so that a helper can leave the caller's.
#[cfg(target_os = "linux")]
struct Cpus(libc::cpu_set_t);

#[cfg(target_os = "linux")]
impl Cpus {
    /// The calling thread's allowed CPUs.
    fn allowed() -> Option<Cpus> {
        // SAFETY: a zeroed cpu_set_t is valid; the call fills it in.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) == 0)
                .then_some(Cpus(set))
        }
    }

    /// Move the calling thread to another of these CPUs than `cpu` (the
    /// kernel moves it at once when `cpu` is left out of its mask), then
    /// give it all of them again, so the scheduler stays free to move it
    /// later (e.g. onto the caller's core while the caller waits parked);
    /// false if there is no other CPU.
    fn move_off(&self, cpu: u32) -> bool {
        let mut set = self.0;
        let size = std::mem::size_of_val(&set);
        // SAFETY: CPU_CLR/CPU_COUNT only touch `set`; setaffinity only this
        // thread's mask.
        unsafe {
            libc::CPU_CLR(cpu as usize, &mut set);
            let moved = libc::CPU_COUNT(&set) > 0 && libc::sched_setaffinity(0, size, &set) == 0;
            libc::sched_setaffinity(0, size, &self.0);
            moved
        }
    }
}

/// Elsewhere the CPU is not known ([`current_cpu`]), so never crowded.
#[cfg(not(target_os = "linux"))]
struct Cpus;

#[cfg(not(target_os = "linux"))]
impl Cpus {
    fn allowed() -> Option<Cpus> {
        None
    }
    fn move_off(&self, _cpu: u32) -> bool {
        false
    }
}

type Job<'a> = &'a (dyn Fn(usize) + Sync);

struct Shared {
    /// The current job: epoch (bits 32–63), chunk count (16–31), next
    /// unclaimed chunk (0–15). The epoch makes a stale claim fail.
    word: AtomicU64,
    /// Points at the current job's closure; valid while it has unfinished chunks.
    job: AtomicPtr<()>,
    /// Chunks of the current job finished by helpers.
    done: AtomicUsize,
    /// The CPU the caller ran on when it posted the current job.
    caller_cpu: AtomicU32,
    /// The caller is parked (or about to park) until a helper finishes a
    /// chunk; `caller` is the thread to wake.
    caller_waiting: AtomicBool,
    caller: Mutex<Option<Thread>>,
    /// A helper found a job while on the caller's core and left it.
    crowded: AtomicBool,
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

    /// Claim every chunk left (after a panic: they will not run); how many.
    fn claim_rest(&self) -> usize {
        let mut w = self.word.load(Acquire);
        loop {
            let (n, next) = ((w >> 16) & 0xFFFF, w & 0xFFFF);
            if next >= n {
                return 0;
            }
            match self
                .word
                .compare_exchange_weak(w, w - next + n, AcqRel, Acquire)
            {
                Ok(_) => return (n - next) as usize,
                Err(v) => w = v,
            }
        }
    }

    /// Whether this thread runs on the CPU the caller posted the job from
    /// (false if that cannot be told).
    fn on_callers_core(&self) -> bool {
        let cpu = current_cpu();
        cpu != NO_CPU && cpu == self.caller_cpu.load(Relaxed)
    }

    fn has_work(&self) -> bool {
        let w = self.word.load(SeqCst);
        w & 0xFFFF < (w >> 16) & 0xFFFF
    }
}

fn helper(s: Arc<Shared>) {
    // The CPUs the process let us use.
    let cpus = Cpus::allowed();
    let mut idle_since = Instant::now();
    let mut spins = 0u32;
    loop {
        let w = s.word.load(Acquire);
        if w & 0xFFFF < (w >> 16) & 0xFFFF {
            // A job with chunks left. On the caller's core (a wake-up under
            // other load put us there; asleep, the scheduler's balancing
            // would never move us) we would only take turns with the caller:
            // move to another allowed CPU and go on. If there is none, leave
            // the job to the caller, tell it, and nap until the next job.
            if s.on_callers_core() {
                if cpus.as_ref().is_some_and(|c| c.move_off(current_cpu())) {
                    continue;
                }
                s.crowded.store(true, Relaxed);
                s.sleeping.fetch_add(1, SeqCst);
                if s.word.load(SeqCst) >> 32 == w >> 32 && !s.quit.load(SeqCst) {
                    thread::park();
                }
                s.sleeping.fetch_sub(1, SeqCst);
                continue;
            }
            if let Some(c) = s.claim() {
                // SAFETY: the job stays alive until all its chunks are done,
                // and this claimed chunk is not done yet (`for_each` waits).
                let job = unsafe { *(s.job.load(Acquire) as *const Job) };
                if catch_unwind(AssertUnwindSafe(|| job(c))).is_err() {
                    s.helper_panicked.store(true, Relaxed);
                }
                // The job's last use: from here on only `s`.
                s.done.fetch_add(1, SeqCst);
                if s.caller_waiting.load(SeqCst) {
                    if let Some(t) = &*s.caller.lock().unwrap() {
                        t.unpark();
                    }
                }
                idle_since = Instant::now();
            }
            continue;
        }
        spin_loop();
        spins = spins.wrapping_add(1);
        if !spins.is_multiple_of(64) {
            continue;
        }
        if s.quit.load(Acquire) {
            return;
        }
        // Every few µs: on the caller's core our spinning would delay the
        // caller, so move (or, if we cannot, nap at once); else nap after
        // SPIN without work.
        let crowded =
            s.on_callers_core() && !cpus.as_ref().is_some_and(|c| c.move_off(current_cpu()));
        if !crowded && idle_since.elapsed() < SPIN {
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
    /// The last solo period's length.
    solo_len: Duration,
    /// When jobs were last shared again after a solo period (None: never solo).
    shared_since: Option<Instant>,
    /// Since then, or since the last stall that did not make the caller go
    /// solo, or since the pool started.
    calm_since: Instant,
}

impl RowPool {
    pub fn new(threads: usize) -> RowPool {
        let shared = Arc::new(Shared {
            word: AtomicU64::new(0),
            job: AtomicPtr::new(std::ptr::null_mut()),
            done: AtomicUsize::new(0),
            caller_cpu: AtomicU32::new(NO_CPU),
            caller_waiting: AtomicBool::new(false),
            caller: Mutex::new(None),
            crowded: AtomicBool::new(false),
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
            shared_since: None,
            calm_since: Instant::now(),
        }
    }

    /// Threads working on a job, the caller included.
    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    /// Run `f(c)` once for every chunk `c` in `0..n` (n ≤ [`MAX_CHUNKS`]),
    /// on this thread and the helpers; returns when all are done.
    pub fn for_each(&mut self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        if self.helpers.is_empty() || n <= 1 {
            return (0..n).for_each(f);
        }
        if let Some(t) = self.solo_until {
            let now = Instant::now();
            if now < t {
                return (0..n).for_each(f);
            }
            self.solo_until = None;
            self.shared_since = Some(now);
            self.calm_since = now;
        }
        assert!(n <= MAX_CHUNKS, "{n} chunks in one job");
        let s = &*self.shared;
        // The previous job is finished, so no helper reads `job` or touches `done`.
        s.done.store(0, Relaxed);
        s.job.store(&f as *const Job as *mut (), Relaxed);
        s.caller_cpu.store(current_cpu(), Relaxed);
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
        // After a panic here the chunks nobody took are dropped. Only chunks
        // a helper is running now are left: spin a little, then park until a
        // helper finishes one (it unparks us). Even after a panic: they still
        // use `f`.
        mine += s.claim_rest();
        let waiting = Instant::now();
        let mut spins = 0u32;
        while mine + s.done.load(Acquire) < n {
            spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) && waiting.elapsed() > WAIT_SPIN {
                *s.caller.lock().unwrap() = Some(thread::current());
                s.caller_waiting.store(true, SeqCst);
                while mine + s.done.load(SeqCst) < n {
                    // A timeout too, in case the helper died between its
                    // last chunk and the wake-up.
                    thread::park_timeout(Duration::from_millis(10));
                }
                s.caller_waiting.store(false, SeqCst);
            }
        }
        // Waiting longer than our own share took means a helper lost its
        // core mid-chunk (other load on the machine): unless that is rare,
        // go solo for a while rather than stall on every GEMV. A helper on
        // our core cannot help at all.
        let waited = waiting.elapsed();
        let crowded = s.crowded.swap(false, Relaxed);
        let stalled = waited > (waiting - start).max(Duration::from_micros(200));
        if stalled && !crowded && waited * CALM < self.calm_since.elapsed() {
            self.calm_since = Instant::now();
        } else if crowded || stalled {
            // Soon after the last solo period: the load is still there, so
            // twice as long; else SOLO.
            let soon = self
                .shared_since
                .is_some_and(|t| t.elapsed() < SOON.max(self.solo_len));
            self.solo_len = if soon {
                (self.solo_len * 2).min(SOLO_MAX)
            } else {
                SOLO
            };
            self.solo_until = Some(Instant::now() + self.solo_len);
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

    /// Keep this thread's core busy for `d` (a computing caller: a sleeping
    /// one would leave its core idle, where a waking helper then lands).
    fn busy(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {
            spin_loop();
        }
    }

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
        // Jobs until a helper has run a chunk (on a busy machine the helper
        // may share the caller's core for a while, and then leaves the jobs).
        let deadline = Instant::now() + Duration::from_secs(20);
        while others.load(Relaxed) == 0 {
            assert!(
                Instant::now() < deadline,
                "the helper never ran a chunk in 20 s"
            );
            pool.solo_until = None;
            pool.for_each(64, &|_| {
                if thread::current().id() != caller {
                    others.fetch_add(1, Relaxed);
                }
                busy(Duration::from_micros(50));
            });
        }
    }

    #[test]
    fn a_helper_that_keeps_the_caller_waiting_is_left_out_for_a_while() {
        let mut pool = RowPool::new(2);
        let caller = thread::current().id();
        let on_helper = AtomicUsize::new(0);
        // A helper chunk 10 ms long, the caller's 0.3 ms: the caller waits.
        let job = |c: usize| {
            if thread::current().id() == caller {
                busy(Duration::from_micros(300));
            } else {
                on_helper.fetch_add(1, Relaxed);
                thread::sleep(Duration::from_millis(10));
            }
            let _ = c;
        };
        // Until a job stalls with the helper in it (the helper kept the
        // caller waiting): on a loaded machine the caller may itself be
        // delayed, so one helper chunk does not always make a stall, and a
        // helper on the caller's core leaves the job (also solo, not this
        // case). The wait has a deadline, not a hang.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            assert!(
                std::time::Instant::now() < deadline,
                "no job stalled on the helper in 20 s"
            );
            pool.solo_until = None;
            let before = on_helper.load(Relaxed);
            pool.for_each(8, &job);
            if pool.solo_until.is_some() && on_helper.load(Relaxed) > before {
                break;
            }
        }
        // The next job runs on the caller alone (unless it came after the
        // solo period: other load delayed us).
        let (before, stalled, len) = (on_helper.load(Relaxed), Instant::now(), pool.solo_len);
        pool.for_each(8, &job);
        assert!(
            on_helper.load(Relaxed) == before || stalled.elapsed() + Duration::from_millis(1) > len,
            "solo right after the stall"
        );
        // After the solo period the next job is offered to the helper again
        // (posted: a new epoch). Whether the helper then takes a chunk
        // depends on the machine's other load (helpers_do_share_the_work).
        thread::sleep(SOLO);
        let epoch = pool.shared.word.load(Relaxed) >> 32;
        pool.for_each(8, &job);
        assert_ne!(
            pool.shared.word.load(Relaxed) >> 32,
            epoch,
            "the job after the solo period was not offered to the helper"
        );
    }

    #[test]
    fn dense_stalls_double_the_solo_period_a_long_calm_resets_it_and_rare_ones_are_ignored() {
        let mut pool = RowPool::new(2);
        let caller = thread::current().id();
        // A helper chunk 10 ms long, the caller's 0.3 ms: the caller waits.
        let job = |_c: usize| {
            if thread::current().id() == caller {
                busy(Duration::from_micros(300));
            } else {
                thread::sleep(Duration::from_millis(10));
            }
        };
        // Run shared jobs (the last solo period over, the jobs shared again
        // `since` ago, None: never solo) until one stalls; how long the new
        // solo period is.
        let stall_after = |pool: &mut RowPool, since: Option<Duration>| {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                assert!(Instant::now() < deadline, "no stall in 20 s");
                pool.solo_until = None;
                pool.shared_since = since.map(|d| Instant::now().checked_sub(d).unwrap());
                pool.calm_since = Instant::now();
                let (last, started) = (pool.solo_len, Instant::now());
                pool.for_each(8, &job);
                let soon = SOON.max(last);
                if since.is_some_and(|d| d < soon && d + started.elapsed() >= soon) {
                    // So slow (other load) that the stall was not soon: again.
                    pool.solo_len = last;
                    continue;
                }
                if let Some(t) = pool.solo_until {
                    assert!(t > Instant::now() + pool.solo_len / 2);
                    return pool.solo_len;
                }
            }
        };
        // Never solo before: SOLO.
        assert_eq!(stall_after(&mut pool, None), SOLO);
        // Stalls right after each solo period: 2, 4, … up to SOLO_MAX.
        let mut want = SOLO;
        while want < SOLO_MAX {
            want = (want * 2).min(SOLO_MAX);
            assert_eq!(stall_after(&mut pool, Some(Duration::ZERO)), want);
        }
        assert_eq!(stall_after(&mut pool, Some(Duration::ZERO)), SOLO_MAX);
        // A stall after a stretch of shared jobs longer than SOON and the
        // last solo period: back to SOLO; soon after that: twice SOLO.
        assert_eq!(stall_after(&mut pool, Some(SOLO_MAX + SOON)), SOLO);
        assert_eq!(stall_after(&mut pool, Some(SOON / 2)), 2 * SOLO);
        assert_eq!(stall_after(&mut pool, Some(SOON + SOLO)), SOLO);
        // A stall after a calm more than CALM times its wait: no solo.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            assert!(Instant::now() < deadline, "no stall in 20 s");
            pool.solo_until = None;
            pool.calm_since = Instant::now().checked_sub(Duration::from_secs(2)).unwrap();
            let before = pool.calm_since;
            pool.for_each(8, &job);
            // A new calm began: the stall was seen, and ignored. (Else
            // the helper took no chunk, or was on our core: again.)
            if pool.calm_since != before {
                assert!(pool.solo_until.is_none());
                break;
            }
        }
        // And a job the helpers do not delay leaves the pool shared.
        pool.solo_until = None;
        pool.for_each(8, &|_| {});
        assert!(pool.solo_until.is_none() || pool.shared.crowded.load(Relaxed));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_thread_moved_off_its_cpu_runs_elsewhere_at_once_and_stays_free_to_move() {
        thread::spawn(|| {
            let cpus = Cpus::allowed().unwrap();
            // SAFETY: reads the set only.
            let n = unsafe { libc::CPU_COUNT(&cpus.0) };
            let here = current_cpu();
            assert_eq!(cpus.move_off(here), n > 1);
            if n > 1 {
                assert_ne!(current_cpu(), here);
                // Free to run anywhere again (here too).
                let now = Cpus::allowed().unwrap();
                // SAFETY: reads the set only.
                unsafe {
                    assert!(libc::CPU_ISSET(here as usize, &now.0));
                    assert_eq!(libc::CPU_COUNT(&now.0), n);
                }
            }
        })
        .join()
        .unwrap();
    }

    /// Pin the calling thread (and the threads it starts later) to `cpu`.
    #[cfg(target_os = "linux")]
    fn pin_to(cpu: usize) {
        // SAFETY: a zeroed cpu_set_t is valid; the call only sets this thread's mask.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
                0
            );
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_helper_on_the_callers_core_leaves_the_jobs_to_it_and_the_caller_works_alone() {
        // Caller and helper on one CPU, the only one the helper may use (it
        // inherits the mask): the helper runs only while the caller sleeps
        // in a chunk, and must not take a chunk then (the caller would wait
        // for it), but say so.
        let cpu = current_cpu() as usize;
        pin_to(cpu);
        let mut pool = RowPool::new(2);
        let caller = thread::current().id();
        let on_helper = AtomicUsize::new(0);
        let deadline = Instant::now() + Duration::from_secs(20);
        while pool.solo_until.is_none() {
            assert!(
                Instant::now() < deadline,
                "the helper never said it was on our core"
            );
            pool.for_each(8, &|_| {
                if thread::current().id() != caller {
                    on_helper.fetch_add(1, Relaxed);
                }
                thread::sleep(Duration::from_micros(500));
            });
        }
        assert_eq!(
            on_helper.load(Relaxed),
            0,
            "the helper took chunks on our core"
        );
        // Solo: the next job does not even wake the helper.
        pool.for_each(8, &|_| assert_eq!(thread::current().id(), caller));
    }

    #[test]
    fn a_panicking_chunk_panics_the_caller_after_all_chunks_stop() {
        let mut pool = RowPool::new(2);
        let caller = thread::current().id();
        // A chunk panics on the caller (its third or later), then one on a
        // helper (jobs until that side runs such a chunk: a helper on the
        // caller's core leaves the job, a delayed caller may run only two).
        for helper_side in [false, true] {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                pool.solo_until = None;
                let finished = AtomicUsize::new(0);
                let panicking = AtomicBool::new(false);
                let r = catch_unwind(AssertUnwindSafe(|| {
                    pool.for_each(16, &|c| {
                        thread::sleep(Duration::from_micros(200));
                        let on_caller = thread::current().id() == caller;
                        if on_caller != helper_side && (helper_side || c >= 2) {
                            panicking.store(true, Relaxed);
                            panic!("chunk {c}");
                        }
                        finished.fetch_add(1, Relaxed);
                    })
                }));
                // Nothing of the job runs after for_each has returned.
                let n = finished.load(Relaxed);
                thread::sleep(Duration::from_millis(5));
                assert_eq!(finished.load(Relaxed), n);
                assert_eq!(
                    r.is_err(),
                    panicking.load(Relaxed),
                    "a lost or made-up panic"
                );
                if r.is_err() {
                    break;
                }
                // The side meant to panic ran no chunk (other load): again.
                assert!(Instant::now() < deadline, "no panicking chunk in 20 s");
            }
        }
        // The pool still works.
        let mut out = [0u8; 40];
        pool.split(&mut out, 3, |_, p| p.fill(1));
        assert!(out.iter().all(|&v| v == 1));
    }
}

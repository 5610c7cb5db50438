//! The memory budget: a counting global allocator (install it with
//! `#[global_allocator] static A: ssnail_fuzz::alloc::Counting = ssnail_fuzz::alloc::Counting;`)
//! and a watchdog for inputs that hang.
//!
//! Live and peak heap bytes are counted for the whole process; a campaign
//! reads the peak growth of each input. One allocation larger than
//! [`HARD_LIMIT`] (a size only a number from a file can ask for) is not
//! attempted: the input is saved and the process aborts with a message, as
//! the allocation would on a smaller machine.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering::*};
use std::time::{Duration, Instant};

pub const HARD_LIMIT: usize = 2 << 30;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);
static EMERGENCY: AtomicBool = AtomicBool::new(false);

/// The input being run (for saving on abort).
static CUR_PTR: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static CUR_LEN: AtomicUsize = AtomicUsize::new(0);
/// Nanoseconds since [`epoch`] when the current input started; 0 = idle.
static CUR_START: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static E: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *E.get_or_init(Instant::now)
}

pub struct Counting;

impl Counting {
    fn count(&self, size: usize) -> bool {
        if EMERGENCY.load(Relaxed) {
            return true;
        }
        INSTALLED.store(true, Relaxed);
        if size > HARD_LIMIT {
            abort_with_input(&format!("one allocation of {size} bytes"));
        }
        let now = LIVE.fetch_add(size, Relaxed) + size;
        PEAK.fetch_max(now, Relaxed);
        true
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        self.count(l.size());
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        self.count(l.size());
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > l.size() {
            self.count(new - l.size());
        } else {
            LIVE.fetch_sub(l.size() - new, Relaxed);
        }
        unsafe { System.realloc(p, l, new) }
    }
}

/// Keep freed heap memory for the next input instead of returning it to
/// the kernel. Targets allocate the same buffers for every input (a
/// MEGA65's 512 KiB of chip RAM, an 800 KiB disk image); with glibc's
/// defaults, blocks that size are mapped and unmapped (or the heap trimmed)
/// each time, and the page faults of touching them again were most of the
/// mega65 target's time (859 inputs/s; 8,500 with this). Allocations up to
/// 32 MiB come from the heap, and the heap is trimmed only above 64 MiB of
/// free space, so one large input does not keep its memory.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // Safety: mallopt only sets the allocator's thresholds.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
    }
}

/// Whether the counting allocator is the global one.
pub fn installed() -> bool {
    // Any allocation through it sets the flag.
    drop(Box::new(0u8));
    INSTALLED.load(Relaxed)
}

/// Before an input: remember it, reset the peak; returns the live bytes.
pub fn start_input(input: &[u8]) -> usize {
    CUR_PTR.store(input.as_ptr() as *mut u8, Relaxed);
    CUR_LEN.store(input.len(), Relaxed);
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    CUR_START.store(epoch().elapsed().as_nanos().max(1) as u64, Relaxed);
    base
}

/// After an input: the peak growth above `base`.
pub fn end_input(base: usize) -> usize {
    CUR_START.store(0, Relaxed);
    PEAK.load(Relaxed).saturating_sub(base)
}

/// Save the current input to fuzz/testdata/crashes/unsorted/ and abort.
fn abort_with_input(why: &str) -> ! {
    EMERGENCY.store(true, SeqCst);
    let p = CUR_PTR.load(SeqCst);
    let n = CUR_LEN.load(SeqCst);
    let input: &[u8] = if p.is_null() {
        &[]
    } else {
        // Safety: the campaign keeps the input alive while it runs.
        unsafe { std::slice::from_raw_parts(p, n) }
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/crashes/unsorted");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(format!("abort-{}.bin", std::process::id()));
    let _ = std::fs::write(&file, input);
    eprintln!(
        "ssnail-fuzz: {why}; input saved as {}; aborting at\n{}",
        file.display(),
        std::backtrace::Backtrace::force_capture()
    );
    std::process::abort()
}

/// Abort (saving the input) when one input runs longer than `limit`.
pub fn start_watchdog(limit: Duration) {
    static STARTED: AtomicBool = AtomicBool::new(false);
    if STARTED.swap(true, SeqCst) {
        return;
    }
    epoch();
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_millis(250));
        let s = CUR_START.load(Relaxed);
        if s != 0 {
            let now = epoch().elapsed().as_nanos() as u64;
            if now.saturating_sub(s) > limit.as_nanos() as u64 {
                abort_with_input(&format!("an input ran longer than {limit:?}"));
            }
        }
    });
}

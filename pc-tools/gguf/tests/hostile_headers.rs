//! GGUF headers written to hurt: every number the file supplies is checked
//! before it sizes, places or types anything; the answer is an error naming
//! the file, never a panic, a wrapped offset or a huge allocation.

use ssnail_gguf::writer::{GgufWriter, MetaValue};
use ssnail_gguf::Gguf;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Counts live and peak heap bytes, so a test can bound what parsing takes.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Tests that allocate much or measure the peak run one at a time.
static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A raw GGUF v3 header builder: keys and tensor infos as the bytes say,
/// with no checks, so tests can write what a well-behaved writer would not.
#[derive(Default)]
struct Raw {
    kv: Vec<u8>,
    n_kv: u64,
    ti: Vec<u8>,
    n_t: u64,
    data_len: usize,
}

impl Raw {
    fn key(&mut self, k: &str, ty: u32, payload: &[u8]) -> &mut Self {
        self.kv.extend_from_slice(&(k.len() as u64).to_le_bytes());
        self.kv.extend_from_slice(k.as_bytes());
        self.kv.extend_from_slice(&ty.to_le_bytes());
        self.kv.extend_from_slice(payload);
        self.n_kv += 1;
        self
    }
    fn tensor(&mut self, name: &str, shape: &[u64], ty: u32, offset: u64) -> &mut Self {
        self.ti
            .extend_from_slice(&(name.len() as u64).to_le_bytes());
        self.ti.extend_from_slice(name.as_bytes());
        self.ti
            .extend_from_slice(&(shape.len() as u32).to_le_bytes());
        for d in shape {
            self.ti.extend_from_slice(&d.to_le_bytes());
        }
        self.ti.extend_from_slice(&ty.to_le_bytes());
        self.ti.extend_from_slice(&offset.to_le_bytes());
        self.n_t += 1;
        self
    }
    fn bytes(&self) -> Vec<u8> {
        let mut b = b"GGUF".to_vec();
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(&self.n_t.to_le_bytes());
        b.extend_from_slice(&self.n_kv.to_le_bytes());
        b.extend_from_slice(&self.kv);
        b.extend_from_slice(&self.ti);
        b.resize(b.len().div_ceil(32) * 32 + self.data_len, 0);
        b
    }
    fn open(&self) -> Result<Gguf, String> {
        Gguf::from_bytes("hostile.gguf", self.bytes()).map_err(|e| e.to_string())
    }
}

fn err(r: &Raw) -> String {
    match r.open() {
        Ok(_) => panic!("accepted"),
        Err(e) => {
            assert!(e.starts_with("hostile.gguf: "), "{e}");
            assert!(!e.contains('\n'), "one line: {e:?}");
            e
        }
    }
}

const F32: u32 = 0;

#[test]
fn a_tensor_of_ggml_type_40_is_an_error_not_a_panic() {
    for ty in [40u32, 41, 4, 5, u32::MAX] {
        let e = err(Raw::default().tensor("t", &[32], ty, 0));
        assert!(e.contains("unknown ggml type"), "{e}");
    }
}

#[test]
fn a_tensor_offset_that_would_wrap_is_an_error_not_a_read_of_other_bytes() {
    let mut r = Raw {
        data_len: 128,
        ..Default::default()
    };
    for off in [u64::MAX - 31, !31, 1 << 62] {
        let e = err(Raw {
            data_len: 128,
            ..Default::default()
        }
        .tensor("t", &[4], F32, off));
        assert!(e.contains("tensor t"), "{e}");
    }
    // Shapes whose element or byte count overflows.
    let e = err(r.tensor("big", &[1 << 32, 1 << 32, 1 << 2], F32, 0));
    assert!(e.contains("too many"), "{e}");
}

#[test]
fn overlapping_misaligned_and_duplicate_tensors_are_errors() {
    let mut r = Raw {
        data_len: 256,
        ..Default::default()
    };
    r.tensor("a", &[16], F32, 0).tensor("b", &[16], F32, 32);
    assert!(err(&r).contains("overlap"));
    let mut r = Raw {
        data_len: 256,
        ..Default::default()
    };
    r.tensor("a", &[4], F32, 8);
    assert!(err(&r).contains("alignment"));
    let mut r = Raw {
        data_len: 256,
        ..Default::default()
    };
    r.tensor("a", &[4], F32, 0).tensor("a", &[4], F32, 32);
    assert!(err(&r).contains("appears twice"));
    // Adjacent, aligned, distinct: fine.
    let mut r = Raw {
        data_len: 256,
        ..Default::default()
    };
    r.tensor("a", &[8], F32, 0).tensor("b", &[8], F32, 32);
    assert_eq!(r.open().unwrap().tensors.len(), 2);
}

#[test]
fn a_key_that_appears_twice_is_an_error() {
    let mut r = Raw::default();
    r.key("x", 4, &1u32.to_le_bytes())
        .key("x", 4, &2u32.to_le_bytes());
    assert!(err(&r).contains("key x appears twice"));
}

#[test]
fn counts_and_lengths_larger_than_the_file_are_errors_before_any_allocation() {
    let _one = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    let before = PEAK.load(Relaxed);
    // An array of 2^40 u64s, a string of 2^40 bytes, 2^40 tensors.
    let mut arr = 10u32.to_le_bytes().to_vec();
    arr.extend_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(err(Raw::default().key("a", 9, &arr)).contains("array a"));
    assert!(err(Raw::default().key("s", 8, &(1u64 << 40).to_le_bytes())).contains("value of s"));
    let r = Raw {
        n_t: 1 << 40,
        ..Default::default()
    };
    assert!(err(&r).contains("tensor count"));
    let r = Raw {
        n_kv: 1 << 12,
        ..Default::default()
    };
    assert!(err(&r).contains("key count"));
    let grew = PEAK.load(Relaxed).saturating_sub(before);
    assert!(grew < 1 << 20, "peak heap grew by {grew} bytes");
}

#[test]
fn a_32_mb_metadata_array_takes_about_its_own_size_in_memory() {
    let _one = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    // 4M u64s (32 MB) and 2M strings of 8 bytes (32 MB in the file).
    let n = 4u64 << 20;
    let mut nums = 10u32.to_le_bytes().to_vec();
    nums.extend_from_slice(&n.to_le_bytes());
    nums.resize(nums.len() + 8 * n as usize, 7);
    let m = 2u64 << 20;
    let mut strs = 8u32.to_le_bytes().to_vec();
    strs.extend_from_slice(&m.to_le_bytes());
    for _ in 0..m {
        strs.extend_from_slice(&8u64.to_le_bytes());
        strs.extend_from_slice(b"abcdefgh");
    }
    let mut r = Raw::default();
    r.key("nums", 9, &nums).key("strs", 9, &strs);
    let file = r.bytes();
    let file_len = file.len();
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let g = Gguf::from_bytes("big.gguf", file).unwrap();
    let parsed = PEAK.load(Relaxed) - base - file_len;
    assert_eq!(g.get_array("nums").unwrap().len(), n as usize);
    assert_eq!(g.get_array("strs").unwrap().len(), m as usize);
    // Numbers: their bytes; strings: text plus one offset each.
    assert!(
        parsed < 2 * (64 << 20),
        "parsing a {file_len}-byte header took {parsed} bytes"
    );
}

#[test]
fn an_array_longer_than_the_limit_is_an_error() {
    let _one = HEAVY.lock().unwrap_or_else(|e| e.into_inner());
    let mut arr = 0u32.to_le_bytes().to_vec();
    arr.extend_from_slice(&((1u64 << 24) + 1).to_le_bytes());
    arr.resize(arr.len() + (1 << 24) + 1, 0);
    assert!(err(Raw::default().key("a", 9, &arr)).contains("limit"));
}

#[test]
fn names_with_newlines_and_escapes_are_shown_escaped_in_errors() {
    let e = err(Raw::default().tensor("evil\n\x1b[31mname", &[32], 40, 0));
    assert!(e.contains(r"evil\n\u{1b}[31mname"), "{e}");
}

#[test]
fn a_key_of_the_wrong_type_is_an_error_not_a_default() {
    let mut w = GgufWriter::new();
    w.meta_str("llama.context_length", "4096")
        .meta("x.neg", MetaValue::I32(-1))
        .meta_f32("x.f", 0.5);
    let g = Gguf::from_bytes("typed.gguf", w.to_bytes().unwrap()).unwrap();
    let e = g.uint("llama.context_length").unwrap_err().to_string();
    assert!(
        e.starts_with("typed.gguf: llama.context_length is \"4096\" (string)"),
        "{e}"
    );
    assert!(g.uint("x.neg").is_err());
    assert!(g.uint("x.f").is_err());
    assert_eq!(g.float("x.f").unwrap(), Some(0.5));
    assert_eq!(g.uint("absent").unwrap(), None);
    assert!(g.strings("x.f").is_err());
}

#[test]
fn bool_bytes_other_than_0_and_1_and_unsupported_versions_are_errors() {
    assert!(err(Raw::default().key("b", 7, &[2])).contains("bool"));
    let mut b = Raw::default().bytes();
    b[4] = 1;
    let e = Gguf::from_bytes("v1.gguf", b).err().unwrap().to_string();
    assert!(e.contains("version 1 is not supported"), "{e}");
}

#[test]
fn general_alignment_must_be_a_power_of_two_u32() {
    let e = err(Raw::default().key("general.alignment", 4, &24u32.to_le_bytes()));
    assert!(e.contains("general.alignment"), "{e}");
    let e = err(Raw::default().key("general.alignment", 10, &32u64.to_le_bytes()));
    assert!(e.contains("u64"), "{e}");
    let mut r = Raw {
        data_len: 128,
        ..Default::default()
    };
    r.key("general.alignment", 4, &64u32.to_le_bytes())
        .tensor("t", &[4], F32, 32);
    assert!(err(&r).contains("alignment 64"));
}

//! Operands that come from an image are checked before use: a bad ATTN
//! block, a huge length or an out-of-range source ends in a fault (error
//! code, PC, instruction), never a panic, an abort or a huge allocation.

use ssnail_core::{Fault, FaultKind, Machine, NoHost};
use ssnail_format::isa::{AttnBlock, Instr, Op, ATTN_BLOCK_LEN, KV_F32};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Counts the peak heap, so "faults without allocating" is checked, not
/// assumed (a lazily zeroed 16 GiB vector would pass unnoticed otherwise).
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        PEAK.fetch_max(LIVE.fetch_add(l.size(), Relaxed) + l.size(), Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        PEAK.fetch_max(LIVE.fetch_add(l.size(), Relaxed) + l.size(), Relaxed);
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}
#[global_allocator]
static A: Counting = Counting;

const BASE: u32 = 0x800_0000;
const CODE: u32 = BASE + 0x1000;
const BLK: u32 = BASE + 0x100;
const DATA: u32 = BASE + 0x2000;

/// Run `prog` (a SETN then the instructions) on 1 MiB of memory.
fn run(n: [u32; 3], prog: &[Instr], blk: Option<AttnBlock>) -> Result<(), Fault> {
    let mut m = Machine::new(1 << 20);
    if let Some(b) = blk {
        assert_eq!(b.encode().len(), ATTN_BLOCK_LEN);
        m.write_bytes(BLK as u64, &b.encode());
    }
    let mut all = vec![Instr::new(Op::SetN, 0, 0, n[0], n[1], n[2])];
    all.extend_from_slice(prog);
    all.push(Instr::new(Op::Halt, 0, 0, 0, 0, 0));
    for (k, i) in all.iter().enumerate() {
        m.write_bytes(CODE as u64 + 16 * k as u64, &i.encode());
    }
    m.run(CODE, &mut NoHost)
}

fn bad_operand(r: Result<(), Fault>) -> Fault {
    // Tests run in parallel: the peak is at most a few machines' memory.
    assert!(
        PEAK.load(Relaxed) < 256 << 20,
        "peak heap {} bytes",
        PEAK.load(Relaxed)
    );
    let f = r.expect_err("a fault");
    assert!(
        matches!(f.kind, FaultKind::BadOperand(_) | FaultKind::Address { .. }),
        "{f}"
    );
    assert_eq!(f.pc, CODE + 16, "{f}");
    assert!(f.instr.is_some());
    assert_ne!(f.code(), 0);
    f
}

fn attn_block(n_heads: u32, n_kv_heads: u32, head_dim: u32) -> AttnBlock {
    AttnBlock {
        k_cache: DATA,
        v_cache: DATA,
        n_heads,
        n_kv_heads,
        head_dim,
        kv_format: KV_F32,
    }
}

fn attn() -> Instr {
    Instr::new(Op::Attn, 0, 0, BLK, DATA, DATA)
}

#[test]
fn attn_with_heads_not_a_multiple_of_kv_heads_faults() {
    let f = bad_operand(run([0; 3], &[attn()], Some(attn_block(3, 2, 4))));
    assert!(f.to_string().contains("3 heads, 2 KV heads"), "{f}");
}

#[test]
fn attn_whose_heads_times_head_dim_overflows_32_bits_faults_without_allocating() {
    for (h, kv, d) in [
        (1 << 16, 1, 1 << 16),
        (u32::MAX, 1, u32::MAX),
        (4, 4, 1 << 30),
    ] {
        bad_operand(run([0; 3], &[attn()], Some(attn_block(h, kv, d))));
    }
    // K/V rows × kv_dim overflowing u64 (row count from R1 = 2^32-1).
    let li = Instr::new(Op::Li, 1, 0, 0, 0, u32::MAX);
    let f = run(
        [0; 3],
        &[li, Instr::new(Op::Attn, 1, 0, BLK, DATA, DATA)],
        Some(attn_block(1 << 31, 1 << 31, 1 << 31)),
    )
    .expect_err("fault");
    assert_eq!(f.pc, CODE + 32);
}

#[test]
fn deqrow_checks_its_source_and_destination_before_allocating() {
    // 2^32-32 Q8_0 elements: a 16 GiB output if allocated first.
    let n0 = u32::MAX - 31;
    bad_operand(run(
        [n0, 0, 0],
        &[Instr::new(Op::DeqRow, 8, 0, DATA, 0, DATA)],
        None,
    ));
}

#[test]
fn gemv_with_zero_columns_and_huge_rows_faults_on_the_destination() {
    bad_operand(run(
        [0, u32::MAX, 0],
        &[Instr::new(Op::Gemv, 0, 0, DATA, DATA, DATA)],
        None,
    ));
}

#[test]
fn layernorm_of_more_than_2_to_the_31_elements_faults() {
    bad_operand(run(
        [1 << 31, 0, 0],
        &[Instr::new(Op::LayerNorm, 0, 0, DATA, DATA, DATA)],
        None,
    ));
}

#[test]
fn lea_with_a_huge_product_wraps_into_28_bits_instead_of_overflowing() {
    let prog = [
        Instr::new(Op::Li, 1, 0, 0, 0, u32::MAX),
        Instr::new(Op::Lea, 0, 1, 0x8FFF_FFFF, 0, u32::MAX),
    ];
    run([0; 3], &prog, None).unwrap();
}

#[test]
fn meanrows_of_zero_rows_and_a_huge_width_faults_on_the_destination() {
    // R0 = 0 rows: nothing is read, so only the destination bounds N0.
    bad_operand(run(
        [u32::MAX, 0, 0],
        &[Instr::new(Op::MeanRows, 0, 0, DATA, 0, DATA)],
        None,
    ));
}

//! The softcore_test PRG (mega65/testprg/softcore_test.c: the whole software SSNAIL core, cc65 build) in the
//! headless MEGA65 without an SSNAIL device: SSNAIL memory poked into attic RAM at $8000000, GO
//! and soft_run to HALT or a fault, the outcome read back from the PRG's box. Shared by
//! softcore_interpreter_in_headless_mega65.rs and examples/softbench.rs (which includes this file
//! by path).

use ssnail_core::Board;
use ssnail_format::image::BASE;
use ssnail_mega65::{Machine, StopReason, CPU_HZ};
use ssnail_mega65_program as common;
use std::path::Path;

/// softcore_test.c's box: job (4), mem_end (4) in; state, error, fault_pc (4), syncs (4) out;
/// instruction limit (4, 0 = the default) and work limit (4, 0 = none) in.
const BOX: u32 = 0x0400;
/// soft_run's results (softcore.h).
pub const SOFT_HALT: u8 = 2;
pub const SOFT_FAULT: u8 = 3;

/// Where softcore_test.prg.hi goes: bank 0's RAM from $E000 (mega65/testprg/softcore_test.cfg).
const HI: u32 = 0xE000;

/// The softcore_test PRG: the PRG file ($2001-$CFFF) and its high part (the tables, read-only
/// data and data, for bank 0's RAM from $E000).
pub struct Prg {
    pub bytes: Vec<u8>,
    pub hi: Vec<u8>,
}

/// build.mk's softcore_test.prg (and .prg.hi) made into `out/mega65/` with the C/assembler `defs`
/// (e.g. "-DSC_C_GEMV").
pub fn build(out: &Path, defs: &str) -> Result<Prg, String> {
    common::make_target(out, "mega65-softcore-test", defs)?;
    let read = |name: &str| {
        let p = out.join("mega65").join(name);
        std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))
    };
    Ok(Prg {
        bytes: read("softcore_test.prg")?,
        hi: read("softcore_test.prg.hi")?,
    })
}

/// `prg` in `m`: the PRG as BASIC's LOAD places it and its high part poked into bank 0's RAM at
/// $E000 on (as the program's loader puts ssnail.core's tables in place); its SYS address.
pub fn load(m: &mut Machine, prg: &Prg) -> Result<u16, String> {
    let (_, entry) = m.load_prg(&prg.bytes, None)?;
    m.poke_phys(HI, &prg.hi);
    Ok(entry)
}

/// What a job left: SSNAIL memory (as long as the given one), the soft_run result, error code,
/// fault PC, SYNCs, and the 40.5 MHz cycles from the PRG's start to its exit.
pub struct Run {
    pub mem: Vec<u8>,
    pub state: u8,
    pub error: u8,
    pub fault_pc: u32,
    pub syncs: u32,
    #[allow(dead_code)] // softbench's measure; the tests only bound the time
    pub cycles: u64,
}

/// Runs `prg` on a fresh R3 board (8 MiB of HyperRAM at $8000000) with `mem` from $8000000
/// (memory end $8000000 + its length) and GO at `job`; `Err` when the PRG does not exit within
/// `max_seconds` of emulated time.
#[allow(dead_code)] // the tests' entry; softbench picks the board (run_on)
pub fn run(prg: &Prg, mem: &[u8], job: u32, max_seconds: u64) -> Result<Run, String> {
    run_on(Board::R3, prg, mem, job, max_seconds)
}

/// `m` as `board` without an SSNAIL device; on an R4 with $D7FE's SELSDRAM set, as the program
/// does (src/main.c), so the CPU's window at $8000000 shows the 64 MiB of SDRAM (attic.rs).
pub fn set_board(m: &mut Machine, board: Board) {
    use ssnail_format::mega65::d7fe;
    m.set_board(board);
    if board == Board::R4 {
        // the MEGA65 I/O personality's registers at physical $FFD3000 + the low 12 bits
        let a = 0xFFD_3000 + (d7fe::ADDRESS as u32 & 0xFFF);
        let v = m.peek_phys(a, 1)[0] | d7fe::SELSDRAM;
        m.poke_phys(a, &[v]);
    }
}

/// `run` on `board` (R4: 64 MiB of SDRAM at $8000000, for images of more than 8 MiB).
pub fn run_on(
    board: Board,
    prg: &Prg,
    mem: &[u8],
    job: u32,
    max_seconds: u64,
) -> Result<Run, String> {
    run_limited(board, prg, mem, job, [0, 0], max_seconds)
}

/// `run_on` with the instruction and work limits (softcore.h; 0: the default, none).
pub fn run_limited(
    board: Board,
    prg: &Prg,
    mem: &[u8],
    job: u32,
    limits: [u32; 2],
    max_seconds: u64,
) -> Result<Run, String> {
    let mut m = Machine::new();
    set_board(&mut m, board);
    let entry = load(&mut m, prg)?;
    m.poke_phys(BASE, mem);
    m.poke_phys(BOX, &job.to_le_bytes());
    m.poke_phys(BOX + 4, &(BASE + mem.len() as u32).to_le_bytes());
    m.poke_phys(BOX + 18, &limits[0].to_le_bytes());
    m.poke_phys(BOX + 22, &limits[1].to_le_bytes());
    m.start_at(entry);
    let start = m.cycles;
    match m.run(max_seconds * CPU_HZ) {
        StopReason::Exit(0) => {}
        r => return Err(format!("the softcore_test PRG stopped with {r:?}")),
    }
    let cycles = m.cycles - start;
    let b = m.peek_phys(BOX, 18);
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    Ok(Run {
        mem: m.peek_phys(BASE, mem.len()),
        state: b[8],
        error: b[9],
        fault_pc: u32_at(10),
        syncs: u32_at(14),
        cycles,
    })
}

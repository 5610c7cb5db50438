//! The SSNAIL register block at $FFD7500 (docs/spec/registers.md): register
//! offsets, bit masks and error codes, the one definition that the core
//! emulator, the headless MEGA65 and (through the generated
//! mega65/include/ssnail_regs.h) the MEGA65 program use.

/// Address of register 0 in the MEGA65's 28-bit address space.
pub const BLOCK: u32 = 0xFFD_7500;

/// Register offsets from $FFD7500.
pub mod reg {
    pub const ID: u8 = 0x00;
    pub const VERSION: u8 = 0x01;
    pub const CAPS: u8 = 0x02;
    pub const GO: u8 = 0x03;
    pub const STATUS: u8 = 0x04;
    pub const ERROR: u8 = 0x05;
    pub const MEM_MB: u8 = 0x06;
    /// Job pointer, 32-bit little-endian ($08–$0B).
    pub const JOB0: u8 = 0x08;
    /// PC of the last fault, 32-bit little-endian ($0C–$0F), read-only.
    pub const FAULT_PC0: u8 = 0x0C;
    pub const HYPERRAM_MB: u8 = 0x10;
    pub const SDRAM_BASE: u8 = 0x11;
    pub const SDRAM_MB: u8 = 0x12;
    pub const HYPERRAM_BASE: u8 = 0x13;
    pub const LP_PTR0: u8 = 0x14;
    pub const LP_PTR1: u8 = 0x15;
    pub const LP_PTR2: u8 = 0x16;
    pub const LP_COMMIT: u8 = 0x17;
    pub const LP_DATA: u8 = 0x18;
}

/// $FFD7500 reads this when SSNAIL is present.
pub const ID_VALUE: u8 = 0x53;
/// Register-block version.
pub const VERSION_VALUE: u8 = 1;
/// Capabilities bit 0: the RAM at $8000000 is SDRAM (the CPU maps SDRAM to read it).
pub const CAP_SDRAM: u8 = 0x01;
/// Capabilities bit 1: HyperRAM is present at the HyperRAM base ($13).
pub const CAP_HYPERRAM: u8 = 0x02;
/// Capabilities bit 7: this is the emulator, not an FPGA core.
pub const CAP_EMULATOR: u8 = 0x80;
/// GO: write this bit to start a job at the job pointer.
pub const GO_START: u8 = 0x01;
/// Status bit 0: a job is running.
pub const STATUS_BUSY: u8 = 0x01;
/// Status bit 1: the last job stopped with a fault (error code ≠ 0).
pub const STATUS_FAULT: u8 = 0x02;
/// Load-port commit register: read bit 7 READY.
pub const LP_READY: u8 = 0x80;
/// Load-port commit register: read bit 6 ERROR.
pub const LP_ERROR: u8 = 0x40;
/// Load-port commit register: write bit 6 clears ERROR.
pub const LP_CLEAR_ERROR: u8 = 0x40;
/// Load-port commit register: bits 24–27 of the pointer go in the low nibble.
pub const LP_PTR_HIGH: u8 = 0x0F;

/// Error codes in register $05 after a faulted job.
pub mod error {
    pub const NONE: u8 = 0;
    pub const ILLEGAL_OPCODE: u8 = 1;
    pub const MISALIGNED_PC: u8 = 2;
    pub const ADDRESS: u8 = 3;
    /// The emulator's cumulative instruction limit or its optional work limit (spec §6.1).
    pub const INSTR_LIMIT: u8 = 4;
    pub const BAD_OPERAND: u8 = 5;
}

/// SSNAIL memory bandwidth, MB/s, that the modelled timing assumes unless told otherwise: the
/// headless MEGA65's and the C library's job clock and the `ssnail` command's `--bandwidth`.
pub const DEFAULT_BANDWIDTH_MBPS: f64 = 130.0;
/// The same in bytes per second.
pub const DEFAULT_BANDWIDTH: f64 = DEFAULT_BANDWIDTH_MBPS * 1e6;
/// The instruction limit (spec §6.1): the Rust core's default since load
/// (`ssnail_core::DEFAULT_INSTR_LIMIT`), and the software core's per job (mega65/softcore), both
/// faulting with [`error::INSTR_LIMIT`].
pub const INSTR_LIMIT: u64 = 50_000_000;

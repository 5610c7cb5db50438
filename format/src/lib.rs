//! The SSNAIL contract, defined once, and every constant more than one language uses.
//!
//! It holds three kinds of thing, and runs no model:
//! * Byte layouts and encodings that real SSNAIL hardware, the upstream tools, the converter and
//!   the emulators must agree on (`docs/` and the spec's §1–§4): image header and segments
//!   (`image`), tokenizer and chat blocks (`tokblock`, `chatblock`), register block
//!   (`registers`), ISA v1 (`isa`), the ggml type table (`ggml`). These describe and parse.
//! * Definitions whose every bit the other side must reproduce, with their code: dequantisation
//!   of the ggml formats llama.cpp's way (`ggml`, `dequant`), so the converter repacks and the
//!   emulators read the values llama.cpp computes; the exp, SiLU and GELU tables of the hardware
//!   numerics (`tables`, spec §5.3); and the MEGA65 sampler (`sampler`, spec §7.6), the integer
//!   definition the MEGA65 program reproduces bit for bit.
//! * The generators of the C and ca65 files: `facts` (constants declared once as data, written
//!   with the same names in every language), `mega65` (the MEGA65 I/O registers and Hyppo calls
//!   the program and the headless MEGA65 share), `softcore` (the software core's numbers and
//!   tables) and `c_header` (the contract's header, and the list of every generated file, which
//!   format/tests/generated_files.rs regenerates and compares).

pub mod c_header;
pub mod chatblock;
pub mod dequant;
pub mod facts;
pub mod ggml;
pub mod image;
pub mod isa;
pub mod mega65;
pub mod registers;
pub mod sampler;
pub mod softcore;
pub mod tables;
pub mod tokblock;

/// Little-endian u32 at `off` in `b` (panics if out of range: callers check lengths).
pub fn rd_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

/// Store a little-endian u32 at `off` in `b`.
pub fn wr_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

//! The SSNAIL contract, defined once, and the MEGA65 facts both languages use.
//!
//! Mostly byte layouts and encodings that real SSNAIL hardware, the upstream
//! tools, the converter and the emulator must agree on (`docs/` and the spec's
//! §1–§4): image header and segments, tokenizer block, register block, ISA v1,
//! the ggml type table. It also holds the definitions whose every bit the
//! other side must reproduce, because they are part of what agrees:
//! dequantisation of the ggml formats llama.cpp's way (`ggml`, `dequant`), so
//! the converter repacks and the emulators read the values llama.cpp
//! computes; and the MEGA65 sampler (`sampler`, spec §7.6), the integer
//! definition the MEGA65 program reproduces bit for bit. `mega65` holds the
//! MEGA65 I/O registers and Hyppo calls that the program's C and the headless
//! MEGA65 share. The generated C headers come from `c_header`, `sampler` and
//! `mega65`. It runs no model.

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

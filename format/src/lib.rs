//! The SSNAIL contract, defined once.
//!
//! Everything here is a byte layout or an encoding that real SSNAIL hardware,
//! the upstream tools, the converter and the emulator must agree on
//! (`docs/` and the spec's §1–§4). This crate only describes and parses; it
//! computes no model.

pub mod c_header;
pub mod chatblock;
pub mod dequant;
pub mod ggml;
pub mod image;
pub mod isa;
pub mod registers;
pub mod sampler;
pub mod tokblock;

/// Little-endian u32 at `off` in `b` (panics if out of range: callers check lengths).
pub fn rd_u32(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
}

/// Store a little-endian u32 at `off` in `b`.
pub fn wr_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

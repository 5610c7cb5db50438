//! ssnail-train: trains the small llama that ships for the MEGA65's software core, with
//! candle on the CPU, quantisation-aware (the forward pass uses the image's Q8_0 weights and
//! the hardware's Q8_0 inputs), and writes it as a GGUF in llama.cpp's conventions.
//! model/README.md says why and how.

pub mod corpus;
pub mod eval;
pub mod export;
pub mod model;
pub mod ops;
pub mod rng;
pub mod spm;
pub mod train;

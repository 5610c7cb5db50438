//! Test support for the SSNAIL tools (a dev-dependency only).
//!
//! * [`models`], [`vocab`], [`rng`], [`kquant`]: the small deterministic
//!   GGUF models of ssnail-synthetic, re-exported so tests name one kit.
//! * [`reference`]: independent f64 forward passes from the GGUF tensors.
//! * [`llama_vocab`]: llama.cpp's `ggml-vocab-*.gguf` files and their
//!   test-tokenizer-0 cases.
//! * [`llama2c`]: exact-shape llama2.c checkpoints (tinyllamas stand-ins)
//!   and tokenizer.bin files.
//! * [`cache`]: `dir()`, the test-data cache (`$SSNAIL_CACHE` or
//!   `<workspace root>/cache`) that `make testdata` fills.
//! * [`images`]: header fields of converted images changed in place.
//! * [`http`]: a loopback HTTP server with replies chosen by the test, and
//!   [`hf`]: canned Hugging Face API replies for it.

pub mod cache;
pub mod hf;
pub mod http;
pub mod images;
pub mod llama2c;
pub mod llama_vocab;
pub mod reference;

pub use ssnail_synthetic::{kquant, models, rng, vocab};

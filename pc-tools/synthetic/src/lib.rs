//! Small deterministic synthetic GGUF models: the same options always give the
//! same bytes (seeded [`rng`]). Used by the tests (through ssnail-testkit) and
//! by `ssnail bench` when it is given no image.
//!
//! ```no_run
//! use ssnail_format::ggml::GgmlType;
//! use ssnail_synthetic::models::{self, ModelOpts};
//!
//! // The §10.1 llama (GQA, untied) with Q8_0 matrices, as GGUF bytes:
//! let gguf: Vec<u8> = models::llama(GgmlType::Q8_0, false);
//! // GPT-2 (fused qkv, tied) and BERT (pooling 2 = CLS):
//! let g = models::gpt2(GgmlType::F16, true);
//! let b = models::bert(GgmlType::F32, 2);
//! // Any field can be changed: dims, seed, name, add_bos, Q4_K weights …
//! let opts = ModelOpts::gpt2().with_wtype(GgmlType::Q4K).with_name("TinyTest");
//! models::write("/tmp/m.gguf", &models::build(&opts));
//! ```
//!
//! * [`models`]: `build(&ModelOpts) -> Vec<u8>` plus `llama`, `gpt2`, `bert`
//!   shortcuts and `write(path, bytes)`. Weight types: F32, F16, BF16,
//!   Q8_0, Q4_0 and Q4_K (a plain encoder, [`kquant`]).
//! * [`vocab`]: the §10 vocabularies (`spm`, `bpe`, `wordpiece`) with their
//!   ids, for tests that need token ids.

pub mod kquant;
pub mod models;
pub mod rng;
pub mod vocab;

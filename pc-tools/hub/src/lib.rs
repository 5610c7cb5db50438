//! Getting models for SSNAIL: find GGUFs on Hugging Face (`findmodels`),
//! download them with resume (`fetch`), and turn Hugging Face checkpoints
//! into GGUF files in llama.cpp's conventions (`import`).

pub mod fetch;
pub mod findmodels;
pub mod http;
pub mod import;

//! SSNAIL tokenizers.
//!
//! * `vocab`: the GGUF vocabulary (`tokenizer.ggml.*`).
//! * `tables`: the image's tokenizer tables built from it (§1.10, §2.1).
//! * `reference`: GGUF tokenizers that reproduce llama.cpp exactly (§2.3).
//! * `gpt2_bytes`: GPT-2's byte <-> unicode table (§2.4).

pub mod gpt2_bytes;
pub mod tables;
pub mod vocab;

pub use tables::ImageTables;
pub use vocab::{TokModel, Vocab};
pub mod reference;

pub use reference::GgufTokenizer;
pub mod image;

pub use image::ImageTokenizer;
pub mod fold;

pub use fold::AsciiFolder;

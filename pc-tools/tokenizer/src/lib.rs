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

/// `ssnail tokcheck`'s default text (six lines): punctuation, contractions, numbers, multiple spaces, e-mail, path.
pub const CHECK_SAMPLE: &str = "\
Once upon a time, there was a little cat named Tom. He liked to play!
\"I can't believe it's already 3:45pm,\" she said; \"we'll be late, won't we?\"
The year 2024 had 366 days, and pi is about 3.14159 (or 22/7).
Spaces:   three,    four,  two, and a\ttab.
Write to jane.doe@example.com or call +1 (555) 012-3456 before 09:00.
Open /usr/local/share/ssnail/tiny_stories-15M.gguf or C:\\Temp\\notes_v2.txt now.
";

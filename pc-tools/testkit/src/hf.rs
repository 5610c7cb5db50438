//! Canned Hugging Face API replies (`data/hf/` beside this crate), in the
//! shape of the real API: the search reply with `expand[]=gguf,downloads,likes`
//! (`search.json`) and recursive tree listings (`type`, `path`, `size`,
//! `lfs`) as `tree-OWNER--REPO.json`. Served by [`crate::http::Server`].

use std::path::PathBuf;

/// The folder of the replies.
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/hf")
}

/// The reply file `name`, or None if there is none by that name.
pub fn fixture(name: &str) -> Option<String> {
    std::fs::read_to_string(dir().join(name)).ok()
}

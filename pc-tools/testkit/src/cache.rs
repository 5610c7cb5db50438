//! Where the test-data cache lives (`make testdata` fills it).

use std::path::{Path, PathBuf};

/// `$SSNAIL_CACHE`, or `<workspace root>/cache` when it is unset.
pub fn dir() -> PathBuf {
    std::env::var_os("SSNAIL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            // This crate sits at <workspace root>/pc-tools/testkit.
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .nth(2)
                .expect("workspace root")
                .join("cache")
        })
}

/// SmolLM2-135M-Instruct (Q4_1), the real decoder, below [`dir`].
pub const SMOLLM2: &str = "models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// `dir()/rel`, which the calling test needs: it fails with a clear message
/// when the file is missing.
pub fn require(rel: &str) -> PathBuf {
    let p = dir().join(rel);
    assert!(
        p.exists(),
        "{} is missing: run `make testdata` (tools/fetch-testdata.sh) first",
        p.display()
    );
    p
}

/// The all-MiniLM-L6-v2 checkpoint directory (config, safetensors, vocab),
/// which the calling test needs: it fails with a clear message when the
/// weights are missing.
pub fn minilm() -> PathBuf {
    let dir = require("models/all-MiniLM-L6-v2/model.safetensors");
    dir.parent().expect("a directory").to_path_buf()
}

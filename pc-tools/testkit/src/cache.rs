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

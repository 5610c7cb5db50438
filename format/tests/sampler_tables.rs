//! The MEGA65 sampler's C tables are the ones the definition generates (spec §7.6).

use std::path::Path;

#[test]
fn the_checked_in_sampler_tables_are_the_ones_generated_from_the_definition() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mega65/include/sampler_tables.h");
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == ssnail_format::sampler::c_tables(),
        "{} differs from format/src/sampler.rs; regenerate it with\n  cargo run -q -p ssnail-format --example sampler_tables > mega65/include/sampler_tables.h",
        path.display()
    );
}

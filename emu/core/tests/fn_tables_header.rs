//! The software SSNAIL core's generated header (mega65/softcore/fn_tables.h) is the one the
//! example prints from ssnail_core::tables and ssnail_format::isa.

#[path = "../examples/fn_tables.rs"]
mod fn_tables;

use std::path::Path;

#[test]
fn the_checked_in_function_table_header_is_the_one_generated_from_the_rust_tables() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mega65/softcore/fn_tables.h");
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == fn_tables::header(),
        "{} differs from ssnail_core::tables; regenerate it with\n  cargo run -q -p ssnail-core --example fn_tables > mega65/softcore/fn_tables.h",
        path.display()
    );
}

#[test]
fn the_checked_in_ca65_include_is_the_one_generated_from_the_rust_formats() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mega65/softcore/fn_tables.inc");
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == fn_tables::ca65_include(),
        "{} differs from ssnail_format::ggml; regenerate it with\n  cargo run -q -p ssnail-core --example fn_tables -- --ca65 > mega65/softcore/fn_tables.inc",
        path.display()
    );
}

#[test]
fn the_header_holds_every_coefficient_of_the_three_tables_as_its_bit_pattern() {
    let text = fn_tables::header();
    for (name, t) in [
        ("exp", ssnail_core::tables::exp()),
        ("silu", ssnail_core::tables::silu()),
        ("gelu", ssnail_core::tables::gelu()),
    ] {
        let start = text.find(&format!("fn_{name}[512]")).unwrap();
        let body = &text[start..start + text[start..].find("};").unwrap()];
        let words: Vec<u32> = body
            .split("0x")
            .skip(1)
            .map(|w| u32::from_str_radix(&w[..8], 16).unwrap())
            .collect();
        assert_eq!(words.len(), 512, "{name}");
        for i in 0..256 {
            assert_eq!(words[2 * i], t.c0[i].to_bits(), "{name} c0[{i}]");
            assert_eq!(words[2 * i + 1], t.c1[i].to_bits(), "{name} c1[{i}]");
        }
    }
}

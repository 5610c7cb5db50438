//! The MEGA65 program's contract header names what it must (generated_files.rs checks that the
//! checked-in copy is current).

#[test]
fn the_checked_in_ca65_include_is_the_one_generated_from_the_contract() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mega65/include/ssnail_regs.inc");
    let on_disk = std::fs::read_to_string(&path).unwrap();
    assert!(
        on_disk == ssnail_format::c_header::ca65_include(),
        "{} differs from the contract; regenerate it with\n  cargo run -q -p ssnail-format --example c_header -- --ca65 > mega65/include/ssnail_regs.inc",
        path.display()
    );
}

#[test]
fn the_generated_header_names_every_register_and_header_field_once() {
    let text = ssnail_format::c_header::c_header();
    let mut names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let n = names.len();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), n, "a name is defined twice");
    for want in [
        "SS_LP_COMMIT",
        "H_TOKENIZER",
        "RB_STOP_REASON",
        "STOP_EOS",
        "TB_BYTE_TABLE",
    ] {
        assert!(names.contains(&want), "{want} missing");
    }
}

//! Every header this crate generates for the MEGA65 program is checked in as generated: one
//! test regenerates them all and compares, so a change to the Rust side that is not carried to the
//! C fails here.

use std::path::Path;

#[test]
fn every_checked_in_generated_file_is_the_one_its_generator_makes_now() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stale = Vec::new();
    for (path, example, text) in ssnail_format::c_header::generated_files() {
        let on_disk =
            std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        if on_disk != text {
            stale.push(format!(
                "{path} is stale; regenerate it with\n  cargo run -q -p ssnail-format --example {example} > {path}"
            ));
        }
    }
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

#[test]
fn no_name_is_defined_twice_across_the_generated_headers() {
    let mut names: Vec<String> = Vec::new();
    for (path, _, text) in ssnail_format::c_header::generated_files() {
        for l in text.lines().filter_map(|l| l.strip_prefix("#define ")) {
            let name = l.split_whitespace().next().unwrap();
            if !name.ends_with("_H") {
                names.push(format!("{name} ({path})"));
            }
        }
    }
    let mut bare: Vec<&str> = names.iter().map(|n| n.split(' ').next().unwrap()).collect();
    bare.sort();
    let twice: Vec<&str> = bare
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    assert!(twice.is_empty(), "defined twice: {twice:?}");
}

#[test]
fn the_mega65_header_names_each_constant_with_its_group_prefix_and_rust_name() {
    let text = ssnail_format::mega65::c_header();
    use ssnail_format::mega65::{d7fe, dirent, hyppo, sd};
    for (line, value) in [
        ("#define HYPPO_OPENDIR ", hyppo::OPENDIR as u64),
        ("#define DIRENT_SIZE ", dirent::SIZE as u64),
        ("#define D7FE_SELSDRAM ", d7fe::SELSDRAM as u64),
        ("#define SD_BUFFER ", sd::BUFFER as u64),
    ] {
        let name = line.trim_end();
        let l = text
            .lines()
            .find(|l| l.split_whitespace().take(2).eq(name.split_whitespace()))
            .unwrap_or_else(|| panic!("{name} missing"));
        let v = l.split_whitespace().nth(2).unwrap();
        let v = v.trim_end_matches("UL").trim_start_matches("0x");
        assert_eq!(u64::from_str_radix(v, 16).unwrap(), value, "{l}");
    }
}

#[test]
fn the_software_core_header_holds_every_coefficient_of_the_three_tables_as_its_bit_pattern() {
    let text = ssnail_format::softcore::c_header();
    use ssnail_format::tables;
    for (name, t) in [
        ("exp", tables::exp()),
        ("silu", tables::silu()),
        ("gelu", tables::gelu()),
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

/// `text` without its comments: `/* */` and `//` for C and Rust, `;` to the end of the line for
/// ca65.
fn code_of(path: &str, text: &str) -> String {
    if path.ends_with(".s") || path.ends_with(".inc") {
        return text
            .lines()
            .map(|l| l.split(';').next().unwrap())
            .collect::<Vec<_>>()
            .join("\n");
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("/*").into_iter().chain(rest.find("//")).min() {
        out.push_str(&rest[..i]);
        let end = if rest[i..].starts_with("/*") {
            rest[i..].find("*/").map_or(rest.len(), |e| i + e + 2)
        } else {
            rest[i..].find('\n').map_or(rest.len(), |e| i + e)
        };
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn no_source_writes_a_generated_mega65_register_address_as_a_number() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let generated: Vec<&str> = ssnail_format::c_header::generated_files()
        .iter()
        .map(|(p, _, _)| *p)
        .collect();
    // Every register of a generated group, as C/Rust (0xD770) and ca65 ($D770) write it, and
    // every 28-bit I/O address ($FFD6E00).
    let mut literals = Vec::new();
    for g in ssnail_format::mega65::groups() {
        for (name, v) in g.names() {
            if (0xD000..=0xDFFF).contains(&v) {
                literals.push((format!("0x{v:04X}"), name.clone()));
                literals.push((format!("${v:04X}"), name));
            } else if (0xFFD_0000..=0xFFD_FFFF).contains(&v) {
                // The 28-bit I/O addresses (the sector buffers), with or without the leading 0
                // and Rust's digit separator.
                let (hi, lo) = (v >> 16, v & 0xFFFF);
                for lit in [
                    format!("0x{v:07X}"),
                    format!("0x{v:08X}"),
                    format!("0x{hi:03X}_{lo:04X}"),
                    format!("0x{hi:04X}_{lo:04X}"),
                    format!("${v:07X}"),
                    format!("${v:08X}"),
                ] {
                    literals.push((lit, name.clone()));
                }
            }
        }
    }
    let mut found = Vec::new();
    let mut dirs: Vec<String> = [
        "mega65/src",
        "mega65/include",
        "mega65/softcore",
        "mega65/host",
        "mega65/testprg",
        "linker",
        "emu/mega65/src",
    ]
    .map(String::from)
    .to_vec();
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(root.join(&dir)).unwrap() {
            let p = e.unwrap().path();
            let rel = format!("{dir}/{}", p.file_name().unwrap().to_string_lossy());
            if p.is_dir() {
                dirs.push(rel);
                continue;
            }
            let ext = p.extension().map(|x| x.to_string_lossy().into_owned());
            if generated.contains(&rel.as_str())
                || !matches!(ext.as_deref(), Some("c" | "h" | "s" | "inc" | "rs"))
            {
                continue;
            }
            let code = code_of(&rel, &std::fs::read_to_string(&p).unwrap()).to_uppercase();
            for (lit, name) in &literals {
                if code.contains(&lit.to_uppercase()) {
                    found.push(format!("{rel}: {lit} is {name}"));
                }
            }
        }
    }
    found.sort();
    found.dedup();
    assert!(
        found.is_empty(),
        "use the generated names:\n{}",
        found.join("\n")
    );
}

//! The repository's section references resolve inside the repository: every
//! "§1.7" or "§M5.4" in a tracked text file names a heading of docs/spec/*.md
//! (a heading that starts with that section, e.g. `## §1.7 File = header +
//! payload; loading`), and the spec's own relative links lead to files.
//! Written without a regex crate: the grammar is one sign, an optional M and
//! dot-separated numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The section sign, written as an escape where it does not start a
/// reference (this file passes its own check).
const SIGN: char = '\u{a7}';

/// The repository root (this crate lives in `format/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("format/ has a parent")
        .to_path_buf()
}

/// What follows a section sign: `Ok("M5.4")`, or `Err` with the text that is
/// not a section number.
fn section_after(rest: &str) -> Result<String, String> {
    let mut id = String::new();
    let mut chars = rest.chars().peekable();
    if chars.peek() == Some(&'M') {
        id.push('M');
        chars.next();
    }
    loop {
        let digits: String = std::iter::from_fn(|| chars.next_if(|c| c.is_ascii_digit())).collect();
        if digits.is_empty() {
            // A number must follow the sign (or the M, or a dot that continues it).
            if id.is_empty() || id == "M" || id.ends_with('.') {
                return Err(rest.chars().take(12).collect());
            }
            break;
        }
        id.push_str(&digits);
        // A dot continues the number only when a digit follows ("§1.7" vs "§1.").
        let mut ahead = chars.clone();
        if ahead.next() == Some('.') && ahead.peek().is_some_and(|c| c.is_ascii_digit()) {
            chars.next();
            id.push('.');
        } else {
            break;
        }
    }
    Ok(id)
}

/// Every section reference in `line`, in order.
fn references(line: &str) -> Vec<Result<String, String>> {
    line.match_indices(SIGN)
        .map(|(i, s)| section_after(&line[i + s.len()..]))
        .collect()
}

/// The section a markdown heading line defines: `## §3.5 ATTN …` → "3.5".
fn heading_section(line: &str) -> Option<String> {
    let text = line.strip_prefix('#')?.trim_start_matches('#');
    if !text.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = text.trim_start().strip_prefix(SIGN)?;
    let id = section_after(rest).ok()?;
    let after = &rest[id.len()..];
    (after.is_empty() || after.starts_with(char::is_whitespace)).then_some(id)
}

/// The spec's markdown files, sorted.
fn spec_files() -> Vec<PathBuf> {
    let dir = root().join("docs/spec");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    v.sort();
    v
}

/// Section → the spec file that defines it; a section defined twice fails.
fn headings() -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut twice = Vec::new();
    for p in spec_files() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        for line in text.lines() {
            if let Some(id) = heading_section(line) {
                if let Some(first) = map.insert(id.clone(), name.clone()) {
                    twice.push(format!("{SIGN}{id} in {first} and {name}"));
                }
            }
        }
    }
    assert!(
        twice.is_empty(),
        "sections defined twice:\n{}",
        twice.join("\n")
    );
    map
}

/// Tracked files that are text: not under a `testdata` folder, no NUL byte,
/// valid UTF-8. (GGUF test vocabularies hold the sign inside token texts.)
fn tracked_text_files() -> Vec<(String, String)> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output()
        .expect("this test needs git to list the tracked files");
    assert!(
        out.status.success(),
        "git ls-files failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files = Vec::new();
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        if name.split('/').any(|c| c == "testdata") {
            continue;
        }
        // Tracked but deleted in the working tree (someone mid-move): nothing to read.
        let Ok(bytes) = std::fs::read(root().join(&name)) else {
            continue;
        };
        if bytes.contains(&0) {
            continue;
        }
        if let Ok(text) = String::from_utf8(bytes) {
            files.push((name, text));
        }
    }
    files
}

#[test]
fn every_section_reference_points_at_a_heading_in_docs_spec() {
    let heads = headings();
    assert!(
        heads.contains_key("1.7") && heads.contains_key("M5.4"),
        "docs/spec lost its headings: {heads:?}"
    );
    let mut missing = Vec::new();
    let mut checked = 0;
    for (name, text) in tracked_text_files() {
        for (n, line) in text.lines().enumerate() {
            for r in references(line) {
                checked += 1;
                match r {
                    Ok(id) if heads.contains_key(&id) => {}
                    Ok(id) => missing.push(format!(
                        "{name}:{} → {SIGN}{id} (no such heading in docs/spec)",
                        n + 1
                    )),
                    Err(t) => missing.push(format!(
                        "{name}:{} → {SIGN}{t:?} (no section number after the sign)",
                        n + 1
                    )),
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} of {checked} section references do not resolve:\n{}",
        missing.len(),
        missing.join("\n")
    );
    println!(
        "{checked} section references, all resolve to {} headings",
        heads.len()
    );
}

#[test]
fn every_relative_link_in_docs_spec_leads_to_an_existing_file_and_the_index_lists_every_file() {
    let dir = root().join("docs/spec");
    let mut broken = Vec::new();
    let mut linked = BTreeSet::new();
    for p in spec_files() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&p).unwrap();
        for (n, line) in text.lines().enumerate() {
            for (i, _) in line.match_indices("](") {
                let rest = &line[i + 2..];
                let Some(end) = rest.find(')') else { continue };
                let target = &rest[..end];
                if target.is_empty()
                    || target.starts_with('#')
                    || target.contains("://")
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                let file = target.split('#').next().unwrap();
                if !dir.join(file).exists() {
                    broken.push(format!("docs/spec/{name}:{} → {target}", n + 1));
                } else if name == "README.md" {
                    linked.insert(file.to_string());
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to missing files:\n{}",
        broken.join("\n")
    );
    let unlisted: Vec<String> = spec_files()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "README.md" && !linked.contains(n))
        .collect();
    assert!(
        unlisted.is_empty(),
        "docs/spec/README.md does not link: {unlisted:?}"
    );
}

#[test]
fn references_are_read_with_ranges_m_sections_and_trailing_punctuation() {
    let got: Vec<_> = references("spec §1–§4, §M5.4 and §2.1-§2.2. See §10.")
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(got, ["1", "4", "M5.4", "2.1", "2.2", "10"]);
    // A sign without a number.
    assert!(references("the \u{a7} numbers").iter().all(|r| r.is_err()));
    assert!(references("\u{a7}M alone").iter().all(|r| r.is_err()));
    assert_eq!(heading_section("## §1.7 File = header"), Some("1.7".into()));
    assert_eq!(heading_section("### §M1.4 Opcode map"), Some("M1.4".into()));
    assert_eq!(heading_section("# §3 Instruction set"), Some("3".into()));
    assert_eq!(heading_section("## Index (§1)"), None);
    assert_eq!(heading_section("#§1 no space"), None);
}

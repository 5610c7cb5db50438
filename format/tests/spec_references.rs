//! The repository's section references resolve inside the repository: every
//! "§1.7" or "§M5.4" in a tracked text file names a heading of docs/spec/*.md
//! (a heading that starts with that section, e.g. `## §1.7 File = header +
//! payload; loading`), and the spec's own relative links lead to files.
//!
//! Two documents share the sign: the MEGA65's facts (docs/spec/mega65.md,
//! whose section numbers start with M) and SSNAIL's spec (every other file,
//! plain numbers). A reference resolves to the document its form names: an M
//! number only to mega65.md, a plain number only to the SSNAIL files, and a
//! reference written after a file name ("numerics.md §5.3", "mega65.md §M9")
//! only to a heading of that file, so the multiplier cited as section 9 after
//! MEGA65.md (it is M9) does not pass as SSNAIL's section 9.
//!
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
    qualified_references(line)
        .into_iter()
        .map(|(_, r)| r)
        .collect()
}

/// The MEGA65 document; its section numbers, and only its, start with M.
const MEGA65_SPEC: &str = "mega65.md";

/// The file name written right before a reference ("docs/spec/numerics.md §5.3",
/// "`mega65.md` §M9"), lower-cased, without its folders.
fn file_before(before: &str) -> Option<String> {
    let t = before
        .trim_end()
        .trim_end_matches([',', '`', ':'])
        .trim_end();
    let word = t
        .rsplit(|c: char| c.is_whitespace() || "(`\"'[".contains(c))
        .next()?;
    let name = word.rsplit('/').next()?;
    name.to_ascii_lowercase()
        .ends_with(".md")
        .then(|| name.to_ascii_lowercase())
}

/// Every section reference in `line` with the file it is written after, if
/// any. The second end of a range ("§M3.2-§M3.3") has the first one's file.
fn qualified_references(line: &str) -> Vec<(Option<String>, Result<String, String>)> {
    let mut out: Vec<(Option<String>, Result<String, String>)> = Vec::new();
    let mut prev_end = 0;
    for (i, s) in line.match_indices(SIGN) {
        let before = &line[..i];
        let in_range = i > prev_end
            && line[prev_end..i]
                .trim()
                .chars()
                .all(|c| c == '-' || c == '\u{2013}')
            && !line[prev_end..i].trim().is_empty();
        let file = if in_range {
            out.last().and_then(|(f, _)| f.clone())
        } else {
            file_before(before)
        };
        let r = section_after(&line[i + s.len()..]);
        prev_end = i + s.len() + r.as_ref().map(|id| id.len()).unwrap_or(0);
        out.push((file, r));
    }
    out
}

/// Why `id`, written after `file` (if any), does not resolve in `heads`
/// (section → defining spec file), or None when it does.
fn misresolution(heads: &BTreeMap<String, String>, file: Option<&str>, id: &str) -> Option<String> {
    let Some(defined_in) = heads.get(id) else {
        return Some(if id.starts_with('M') {
            format!("no such heading in docs/spec/{MEGA65_SPEC}")
        } else {
            "no such heading in docs/spec".to_string()
        });
    };
    let file = file?;
    if !heads.values().any(|f| f.eq_ignore_ascii_case(file)) {
        return Some(format!("{file} is not a file of docs/spec"));
    }
    if defined_in.eq_ignore_ascii_case(file) {
        return None;
    }
    Some(if file == MEGA65_SPEC {
        format!("written after {file}, whose sections start with M, but {SIGN}{id} is SSNAIL's (in {defined_in}); {SIGN}M{id}?")
    } else {
        format!("written after {file}, but {SIGN}{id} is in {defined_in}")
    })
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
    let misplaced: Vec<String> = map
        .iter()
        .filter(|(id, file)| id.starts_with('M') != (file.as_str() == MEGA65_SPEC))
        .map(|(id, file)| format!("{SIGN}{id} in {file}"))
        .collect();
    assert!(
        misplaced.is_empty(),
        "{SIGN}M sections belong in {MEGA65_SPEC} and only there: {misplaced:?}"
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

/// References that resolve to the wrong document today, in files this
/// test's change did not edit (the software core's sources): the file and the
/// citation as written. Each is reported when it is fixed, so the list only
/// shrinks.
const KNOWN_MISRESOLVED: &[(&str, &str)] = &[];

#[test]
fn every_section_reference_points_at_a_heading_of_the_document_it_names() {
    let heads = headings();
    assert!(
        heads.contains_key("1.7") && heads.contains_key("M5.4"),
        "docs/spec lost its headings: {heads:?}"
    );
    let mut missing = Vec::new();
    let mut checked = 0;
    let mut known_seen = BTreeSet::new();
    for (name, text) in tracked_text_files() {
        for (n, line) in text.lines().enumerate() {
            for (file, r) in qualified_references(line) {
                checked += 1;
                match r {
                    Ok(id) => {
                        let Some(why) = misresolution(&heads, file.as_deref(), &id) else {
                            continue;
                        };
                        let cited =
                            format!("{}{SIGN}{id}", file.map(|f| f + " ").unwrap_or_default());
                        if let Some(k) = KNOWN_MISRESOLVED
                            .iter()
                            .find(|(f, c)| *f == name && *c == cited)
                        {
                            known_seen.insert(*k);
                            continue;
                        }
                        missing.push(format!("{name}:{} → {SIGN}{id} ({why})", n + 1))
                    }
                    Err(t) => missing.push(format!(
                        "{name}:{} → {SIGN}{t:?} (no section number after the sign)",
                        n + 1
                    )),
                }
            }
        }
    }
    let fixed: Vec<_> = KNOWN_MISRESOLVED
        .iter()
        .filter(|k| !known_seen.contains(*k))
        .collect();
    assert!(
        fixed.is_empty(),
        "these no longer misresolve (or moved): remove them from KNOWN_MISRESOLVED: {fixed:?}"
    );
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

#[test]
fn a_reference_written_after_a_file_name_resolves_only_in_that_file() {
    let q = qualified_references(
        "spec/MEGA65.md \u{a7}9, `docs/spec/mega65.md` \u{a7}M3.2-\u{a7}M3.3 and numerics.md \u{a7}5.3; \u{a7}1.6",
    );
    let got: Vec<(Option<&str>, &str)> = q
        .iter()
        .map(|(f, r)| (f.as_deref(), r.as_deref().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (Some("mega65.md"), "9"),
            (Some("mega65.md"), "M3.2"),
            (Some("mega65.md"), "M3.3"),
            (Some("numerics.md"), "5.3"),
            (None, "1.6"),
        ]
    );
    let heads: BTreeMap<String, String> = [
        ("9", "registers.md"),
        ("1.6", "image.md"),
        ("M9", "mega65.md"),
        ("5.3", "numerics.md"),
    ]
    .into_iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    let wrong = misresolution(&heads, Some("mega65.md"), "9").unwrap();
    assert!(wrong.contains("\u{a7}M9?"), "{wrong}");
    assert_eq!(misresolution(&heads, Some("mega65.md"), "M9"), None);
    assert_eq!(misresolution(&heads, Some("numerics.md"), "5.3"), None);
    assert!(misresolution(&heads, Some("image.md"), "5.3").is_some());
    assert!(misresolution(&heads, Some("SSNAIL.md"), "1.6").is_some());
    assert_eq!(misresolution(&heads, None, "1.6"), None);
    assert!(misresolution(&heads, None, "M1.6").is_some());
}

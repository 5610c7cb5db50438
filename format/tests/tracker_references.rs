//! Code and docs say what the behaviour is, not which tracker entry asked for it: no tracked
//! text file names an issue by number (the word, an optional '#', a number).

use std::path::Path;
use std::process::Command;

/// The places in `text` where the word "issue" (any case), an optional '#', and a number follow
/// one another, as (line number, line).
fn tracker_references(text: &str) -> Vec<(usize, &str)> {
    let mut hits = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        let found = lower.match_indices("issue").any(|(i, w)| {
            let before_ok = !lower[..i].ends_with(|c: char| c.is_ascii_alphanumeric());
            let rest = lower[i + w.len()..].trim_start_matches(' ');
            let rest = rest.strip_prefix('#').unwrap_or(rest);
            before_ok && rest.starts_with(|c: char| c.is_ascii_digit())
        });
        if found {
            hits.push((n + 1, line));
        }
    }
    hits
}

#[test]
fn no_tracked_file_refers_to_a_tracker_issue_by_number() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&root)
        .output()
        .expect("this test needs git to list the tracked files");
    assert!(out.status.success(), "git ls-files failed");
    let mut found = Vec::new();
    for name in out.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        if name.split('/').any(|c| c == "testdata") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&name)) else {
            continue;
        };
        for (n, line) in tracker_references(&text) {
            found.push(format!("{name}:{n}: {}", line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "say what the behaviour is instead of the tracker number:\n{}",
        found.join("\n")
    );
}

#[test]
fn tracker_numbers_are_found_in_their_usual_spellings_and_words_ending_in_issue_are_not() {
    // Spaces as \x20, so that this file passes its own check.
    let t = "see Issue\x2012\n(issue\x20#3)\nissue\x2019's goal\nnonissue\x204\nissues to fix\nissue: 5";
    let lines: Vec<usize> = tracker_references(t).iter().map(|(n, _)| *n).collect();
    assert_eq!(lines, [1, 2, 3]);
}

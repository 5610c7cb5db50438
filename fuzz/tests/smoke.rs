//! Part of `make test`: a bounded fuzz run of every target (20,000 inputs
//! each, a fixed seed) and a replay of every saved crash input, all within
//! the per-input budgets and without a panic or a broken property.

use ssnail_fuzz::{campaign, quiet_panics, run_one, saved_inputs, targets, Budget, Length};

#[global_allocator]
static A: ssnail_fuzz::alloc::Counting = ssnail_fuzz::alloc::Counting;

fn inputs() -> u64 {
    std::env::var("SSNAIL_FUZZ_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

#[test]
fn every_target_survives_twenty_thousand_mutated_inputs_within_its_budgets() {
    assert!(
        ssnail_fuzz::alloc::installed(),
        "the counting allocator is active"
    );
    quiet_panics();
    ssnail_fuzz::alloc::keep_freed_memory();
    let mut report = Vec::new();
    let mut clean = true;
    for mut t in targets::all() {
        let st = campaign(t.as_mut(), Length::Inputs(inputs()), Budget::default(), 7);
        report.push(st.to_string());
        for f in &st.failures {
            let detail: String = f.detail.chars().take(300).collect();
            report.push(format!("  {} ({} bytes): {detail}", f.kind, f.input.len()));
        }
        assert!(st.accepted > 0, "{}: nothing accepted", st.target);
        clean &= st.clean();
    }
    assert!(clean, "{}", report.join("\n"));
    eprintln!("{}", report.join("\n"));
}

#[test]
fn saved_crash_inputs_are_handled_cleanly() {
    quiet_panics();
    let mut bad = Vec::new();
    let mut n = 0;
    for mut t in targets::all() {
        t.seeds();
        for (path, input) in saved_inputs(t.name()) {
            n += 1;
            let (_, failure, _, _) = run_one(t.as_mut(), &input, Budget::default());
            if let Some(f) = failure {
                bad.push(format!("{}: {} {}", path.display(), f.kind, f.detail));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{n} saved inputs, failing:\n{}",
        bad.join("\n")
    );
}

//! `ssnail-fuzz`: run fuzz campaigns (see the crate docs).
//!
//!   ssnail-fuzz [--seconds N | --inputs N] [--seed S] [--progress SECS] [TARGET...]
//!   ssnail-fuzz --replay TARGET FILE
//!
//! Prints one line of totals per target; failing inputs are saved under
//! fuzz/testdata/crashes/<target>/ (replayed by the smoke test). Exit
//! status 1 when any input panicked, broke a property or a budget.

use ssnail_fuzz::{campaign, quiet_panics, save, targets, Budget, Length};
use std::time::Duration;

#[global_allocator]
static A: ssnail_fuzz::alloc::Counting = ssnail_fuzz::alloc::Counting;

fn main() {
    let mut length = Length::Time(Duration::from_secs(60));
    let mut seed = 1u64;
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> u64 {
            args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| {
                eprintln!("ssnail-fuzz: {what} needs a number");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--seconds" => length = Length::Time(Duration::from_secs(num("--seconds"))),
            "--inputs" => length = Length::Inputs(num("--inputs")),
            "--seed" => seed = num("--seed"),
            "--progress" => ssnail_fuzz::PROGRESS_SECS
                .store(num("--progress"), std::sync::atomic::Ordering::Relaxed),
            "--replay" => {
                // --replay TARGET FILE: run one saved input, report what happens.
                let (Some(t), Some(f)) = (args.next(), args.next()) else {
                    eprintln!("ssnail-fuzz: --replay TARGET FILE");
                    std::process::exit(2)
                };
                let mut t = targets::by_name(&t).unwrap_or_else(|| {
                    eprintln!("ssnail-fuzz: unknown target {t}");
                    std::process::exit(2)
                });
                let input = std::fs::read(&f).unwrap_or_else(|e| {
                    eprintln!("ssnail-fuzz: {f}: {e}");
                    std::process::exit(2)
                });
                t.seeds();
                let (out, fail, took, grew) =
                    ssnail_fuzz::run_one(t.as_mut(), &input, Budget::default());
                let what = match out {
                    ssnail_fuzz::Outcome::Ok(d) => format!("accepted (depth {d})"),
                    ssnail_fuzz::Outcome::Rejected(d, e) => format!("rejected at depth {d}: {e}"),
                    ssnail_fuzz::Outcome::Violation(v) => format!("VIOLATION: {v}"),
                };
                println!(
                    "{f}: {what}; {:.1} ms, {:.1} MB",
                    took.as_secs_f64() * 1e3,
                    grew as f64 / 1e6
                );
                // The target owns temporary directories: drop it before exit.
                drop(t);
                if let Some(fl) = fail {
                    println!("  {}: {}", fl.kind, fl.detail);
                    std::process::exit(1);
                }
                return;
            }
            "-h" | "--help" => {
                println!("usage: ssnail-fuzz [--seconds N | --inputs N] [--seed S] [--progress SECS] [TARGET...]");
                println!(
                    "targets: {}",
                    targets::all()
                        .iter()
                        .map(|t| t.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                return;
            }
            t => names.push(t.to_string()),
        }
    }
    let mut chosen = Vec::new();
    if names.is_empty() {
        chosen = targets::all();
    } else {
        for n in &names {
            match targets::by_name(n) {
                Some(t) => chosen.push(t),
                None => {
                    eprintln!("ssnail-fuzz: unknown target {n}");
                    std::process::exit(2)
                }
            }
        }
    }
    ssnail_fuzz::alloc::keep_freed_memory();
    quiet_panics();
    // Wall time, generous: a niced campaign on busy cores waits for CPU.
    ssnail_fuzz::alloc::start_watchdog(Duration::from_secs(120));
    let budget = Budget::default();
    let mut clean = true;
    for mut t in chosen {
        let st = campaign(t.as_mut(), length, budget, seed);
        println!("{st}");
        for f in &st.failures {
            let at = save(st.target, f)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|e| format!("(not saved: {e})"));
            println!("  {} {}: {}", f.kind, at, f.detail);
        }
        clean &= st.clean();
    }
    std::process::exit(if clean { 0 } else { 1 });
}

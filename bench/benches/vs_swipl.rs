//! The reference interpreter against the series' own interpreter
//! (bench/prolog/interp.pl) under SWI-Prolog, on the same programs, measured
//! in the same run. Prints one row per workload with both speeds and the
//! ratio; checks that both print the same output.
//!
//!     cargo bench -p flowc-bench --bench vs_swipl
//!
//! Needs `swipl` (Debian package swi-prolog-nox); without it, says so and
//! exits successfully.

use std::process::Command;
use std::time::Instant;

use flowc_bench::{programs_dir, workloads};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

/// Runs the workload under SWI-Prolog; returns its output and CPU seconds.
fn swipl(file: &std::path::Path, entry: &str, env: &str) -> Option<(String, f64)> {
    let interp = programs_dir().join("../prolog/interp.pl");
    let goal = format!("consult('{}'), bench({entry}, {env})", file.display());
    let out = Command::new("swipl").args(["-q", "-g", &goal, "-t", "halt"]).arg(&interp).output().ok()?;
    let secs = String::from_utf8_lossy(&out.stderr).trim().parse().ok()?;
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), secs))
}

fn main() {
    if Command::new("swipl").arg("--version").output().is_err() {
        println!("swipl not found: install swi-prolog-nox to measure the ratio");
        return;
    }
    println!("{:<10} {:>10} {:>14} {:>14} {:>8}", "program", "steps", "flowc stmt/s", "swipl stmt/s", "ratio");
    for w in workloads(5) {
        let loaded = w.load();
        let outcome = loaded.run();
        // flowc: the median of 21 runs.
        let mut times: Vec<f64> = (0..21)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(loaded.run());
                t.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let ours = times[times.len() / 2];
        // SWI-Prolog: the fastest of 3 runs, timed inside Prolog (no start-up).
        let runs: Vec<(String, f64)> = (0..3).filter_map(|_| swipl(&w.path(), w.entry, &w.env)).collect();
        let Some(theirs) = runs.iter().map(|r| r.1).min_by(f64::total_cmp) else {
            println!("{:<10} swipl failed to run the program", w.name);
            continue;
        };
        assert_eq!(runs[0].0, outcome.output(), "{}: SWI-Prolog and flowc print different results", w.name);
        let steps = outcome.steps as f64;
        println!(
            "{:<10} {:>10} {:>14.3e} {:>14.3e} {:>7.0}x",
            w.name,
            outcome.steps,
            steps / ours,
            steps / theirs,
            theirs / ours
        );
    }
}

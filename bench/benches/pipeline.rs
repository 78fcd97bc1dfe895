//! The eight passes on generated programs of 10^3 to 10^6 statements:
//! statements per second per pass and end to end (passes only, and with
//! the front end), and for every pass the ratio of its per-statement time
//! at 10^6 to that at 10^4 (target: at most 2; end to end: at least 10^6
//! statements per second). Sizes are measured in rounds, each keeping its
//! best time per pass over the same number of runs.
//!
//!     cargo bench -p flowc-bench --bench pipeline

use std::time::Instant;

use flowc_bench::scale::{program, SIZES};
use flowc_lang::Symbol;
use flowc_passes::{Context, PIPELINE};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

/// Per-pass seconds of one compilation (front end first), best of `runs`.
fn measure(p: &flowc_lang::Program, runs: usize) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; PIPELINE.len() + 1];
    for _ in 0..runs {
        let t = Instant::now();
        let mut module = flowc_frontend::lower(p, Symbol::intern("start")).unwrap();
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        let mut cx = Context::new(&module);
        for (k, pass) in PIPELINE.iter().enumerate() {
            let t = Instant::now();
            (pass.run)(&mut module, &mut cx);
            best[k + 1] = best[k + 1].min(t.elapsed().as_secs_f64());
        }
        drop(module);
    }
    best
}

fn main() {
    flowc_bench::scale::keep_freed_memory();
    let names: Vec<&str> = std::iter::once("front end").chain(PIPELINE.iter().map(|p| p.name)).collect();
    // Rounds over all sizes, each keeping its best per pass: a slow phase
    // of this shared machine (they last seconds) hits every size alike.
    // Every size gets the same number of runs (see `scale::time_best`).
    let programs: Vec<_> = SIZES.iter().map(|&size| program(size)).collect();
    let mut table: Vec<(usize, usize, Vec<f64>)> =
        programs.iter().zip(SIZES).map(|((_, n), size)| (size, *n, vec![f64::INFINITY; PIPELINE.len() + 1])).collect();
    for _ in 0..3 {
        for (k, (p, _)) in programs.iter().enumerate() {
            for (best, t) in table[k].2.iter_mut().zip(measure(p, 2)) {
                *best = best.min(t);
            }
        }
    }
    print!("{:<12}", "pass");
    for (_, n, _) in &table {
        print!("{:>14}", format!("{n} st"));
    }
    println!("{:>12}", "10^6/10^4");
    let ns = |t: f64, n: usize| t * 1e9 / n as f64;
    let ratio = |k: usize| {
        let at = |s: usize| table.iter().find(|r| r.0 == s).map(|r| ns(r.2[k], r.1)).unwrap();
        at(1_000_000) / at(10_000)
    };
    for (k, name) in names.iter().enumerate() {
        print!("{name:<12}");
        for (_, n, t) in &table {
            print!("{:>14}", format!("{:.0} ns/st", ns(t[k], *n)));
        }
        println!("{:>12.2}", ratio(k));
    }
    for (label, from) in [("passes", 1), ("with front", 0)] {
        print!("{label:<12}");
        for (_, n, t) in &table {
            let total: f64 = t[from..].iter().sum();
            print!("{:>14}", format!("{:.2} Mst/s", *n as f64 / total / 1e6));
        }
        println!();
    }
}

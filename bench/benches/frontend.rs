//! Front end (SSA construction) and IR checker on generated programs of
//! 10^3 to 10^6 statements: time per statement at each size, and the ratio
//! of the per-statement time at 10^6 to that at 10^4 (linear scaling
//! keeps it near 1; the target is at most 1.5). Sizes are measured in
//! rounds, each keeping its best time over the same number of runs.
//!
//!     cargo bench -p flowc-bench --bench frontend

use flowc_bench::scale::{program, time_best, SIZES};

use flowc_lang::Symbol;

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

/// Rounds over all sizes: each size's time is its best over the rounds, so
/// a slow phase of this shared machine (they last seconds) hits every size
/// alike instead of whichever size it happened to fall on.
const ROUNDS: usize = 5;
/// Runs per size and round: the same at every size
/// ([`flowc_bench::scale::time_best`]).
const RUNS: usize = 3;

fn main() {
    flowc_bench::scale::keep_freed_memory();
    println!("{:>10} {:>12} {:>12} {:>12}", "statements", "lower ns/st", "check ns/st", "total ns/st");
    let entry = Symbol::intern("start");
    let programs: Vec<_> = SIZES.iter().map(|&size| program(size)).collect();
    let mut best = vec![(f64::INFINITY, f64::INFINITY); SIZES.len()];
    for _ in 0..ROUNDS {
        for (k, (p, _)) in programs.iter().enumerate() {
            let lower = time_best(RUNS, || std::hint::black_box(flowc_frontend::lower(p, entry).unwrap()));
            let module = flowc_frontend::lower(p, entry).unwrap();
            assert!(flowc_ir_checker::check_module(&module).is_ok(), "generated program lowers to valid IR");
            let check = time_best(RUNS, || std::hint::black_box(flowc_ir_checker::check_module(&module).is_ok()));
            best[k] = (best[k].0.min(lower), best[k].1.min(check));
        }
    }
    let mut per_stmt = Vec::new();
    for (k, (_, n)) in programs.iter().enumerate() {
        let ns = |s: f64| s * 1e9 / *n as f64;
        let (lower, check) = best[k];
        println!("{n:>10} {:>12.0} {:>12.0} {:>12.0}", ns(lower), ns(check), ns(lower + check));
        per_stmt.push((SIZES[k], ns(lower + check)));
    }
    let at = |s: usize| per_stmt.iter().find(|(size, _)| *size == s).map(|p| p.1).unwrap();
    println!("per-statement time at 10^6 / at 10^4: {:.2} (target <= 1.5)", at(1_000_000) / at(10_000));
}

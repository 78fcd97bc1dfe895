//! Generated programs of a given size, for the scaling benchmarks.

use flowc_lang::ast::{Item, Program};
use flowc_tests::gen::{generate, GenConfig};

/// A generated program of about `statements` statements (and terminators),
/// with a few functions, and its exact statement count.
pub fn program(statements: usize) -> (Program, usize) {
    let cfg = GenConfig { size: statements, functions: 3, errors: false, odd_names: false };
    let p = generate(2026, &cfg);
    let n = statement_count(&p);
    (p, n)
}

/// Statements plus terminators over the main graph and all functions.
pub fn statement_count(p: &Program) -> usize {
    p.items
        .iter()
        .map(|i| match i {
            Item::Block(b) => b.body.len() + 1,
            Item::Function(f) => f.blocks.iter().map(|b| b.body.len() + 1).sum(),
            _ => 0,
        })
        .sum()
}

/// The sizes the scaling benchmarks run: 10^3 to 10^6.
pub const SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// Runs `f` until it has taken at least `min_secs` and at least three
/// times; returns the fastest run in seconds (the first run also pays for
/// fresh memory pages, later ones measure the work).
/// What `f` returns is dropped outside the timed region.
pub fn time_best<T>(min_secs: f64, mut f: impl FnMut() -> T) -> f64 {
    let start = std::time::Instant::now();
    let mut best = f64::INFINITY;
    let mut runs = 0;
    loop {
        let t = std::time::Instant::now();
        let out = f();
        best = best.min(t.elapsed().as_secs_f64());
        drop(out);
        runs += 1;
        if runs >= 3 && start.elapsed().as_secs_f64() >= min_secs {
            return best;
        }
    }
}

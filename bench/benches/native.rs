//! Native code (the eight passes, then Cranelift) against the reference
//! interpreter and against the same loops hand-written in Rust and compiled
//! by rustc -O, on integer loops, all measured in one run. Prints one row
//! per loop with the three times and the two ratios; checks that all three
//! compute the same result.
//!
//!     cargo bench -p flowc-bench --bench native
//!
//! Targets (issue 6): native at least 20 times faster than the interpreter,
//! and at most 2 times slower than Rust. Native times exclude compilation
//! (ahead of time); `FLOWC_BENCH_SCALE` multiplies the loop counts.

use std::hint::black_box;

use flowc_bench::{compile_native, load, median_secs};
use flowc_lang::interp::{self, Config};
use flowc_lang::Value;

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

/// Fibonacci numbers modulo 1000000007 (bench/programs/fibmod.fg).
fn fibmod(n: i64) -> i64 {
    let (mut a, mut b) = (0i64, 1i64);
    for _ in 0..n {
        let t = (a + b) % 1_000_000_007;
        a = b;
        b = t;
    }
    a
}

/// Nested counters (bench/programs/nested.fg).
fn nested(n: i64) -> i64 {
    let mut total = 0i64;
    for i in 0..n {
        for j in 0..n {
            total += i;
            total += j;
            if total >= 1_000_003 {
                total -= 1_000_003;
            }
        }
    }
    total
}

/// Euclid's algorithm summed over pairs (bench/programs/euclid.fg).
fn euclid(n: i64) -> i64 {
    let mut total = 0i64;
    for i in 1..=n {
        let (mut a, mut b) = (i * 7, 360i64);
        while b != 0 {
            let t = a % b;
            a = b;
            b = t;
        }
        total += a;
    }
    total
}

struct Case {
    name: &'static str,
    file: &'static str,
    var: &'static str,
    n: i64,
    rust: fn(i64) -> i64,
}

fn main() {
    let scale: i64 = std::env::var("FLOWC_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let cases = [
        Case { name: "fibmod", file: "fibmod.fg", var: "n", n: 5_000_000 * scale, rust: fibmod },
        Case { name: "nested", file: "nested.fg", var: "n", n: 2_000 * scale, rust: nested },
        Case { name: "euclid", file: "euclid.fg", var: "n", n: 1_000_000 * scale, rust: euclid },
    ];
    println!(
        "{:<8} {:>12} {:>12} {:>12} {:>16} {:>14}",
        "loop", "interp ms", "native ms", "rust ms", "native/interp ×", "native/rust ×"
    );
    flowc_codegen::with_stack(move || {
        for case in cases {
            let env = format!("[{}/{}]", case.var, case.n);
            let w = load(case.file, None, Some(&env));
            let expected = (case.rust)(black_box(case.n));
            let config = Config::default();
            let out = interp::run(&w.program, w.entry, &w.env, &config).expect("runs");
            assert_eq!(out.value, Value::Int(expected), "{}: the interpreter and Rust differ", case.name);
            let native = compile_native(&w.program, w.entry);
            let got = native.run(&w.env, config.max_depth).expect("runs");
            assert_eq!(got.value, Value::Int(expected), "{}: native code and Rust differ", case.name);
            let t_interp = median_secs(3, || {
                black_box(interp::run(&w.program, w.entry, &w.env, &config).unwrap());
            });
            let t_native = median_secs(7, || {
                black_box(native.run(&w.env, config.max_depth).unwrap());
            });
            let t_rust = median_secs(11, || {
                black_box((case.rust)(black_box(case.n)));
            });
            println!(
                "{:<8} {:>12.2} {:>12.2} {:>12.2} {:>16.1} {:>14.2}",
                case.name,
                t_interp * 1e3,
                t_native * 1e3,
                t_rust * 1e3,
                t_interp / t_native,
                t_native / t_rust
            );
        }
    });
}

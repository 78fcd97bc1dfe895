//! Runs the JIT on the Part 4 bytecode interpreter (the square program on
//! a small `a`) many times: its fixed costs — recording, optimizing,
//! compiling — dominate, for `perf record`.
//!
//!     jit_reps [REPS] [A]

use flowc_lang::interp::Config;
use flowc_trace::jit::{Jit, Options};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

const SQUARE: &str = "[mov_a_r0, mov_a_r1, mov_r0_a, decr_a, mov_a_r0, mov_r2_a, add_r1_to_a, mov_a_r2, mov_r0_a, \
                      jump_if_a, 2, mov_r2_a, return_a]";

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let a: i64 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    flowc_codegen::with_stack(move || {
        let env = format!("[bytecode/{SQUARE}, pc/0, a/{a}, r0/0, r1/0, r2/0]");
        let w = flowc_bench::load("../../examples/bytecode_traced.pl", Some("bytecode_loop"), Some(&env));
        let t = std::time::Instant::now();
        for _ in 0..reps {
            let mut jit = Jit::new(&w.program, &w.lower(), Options::default());
            std::hint::black_box(jit.run(w.entry, &w.env, &Config::default()).expect("runs"));
        }
        println!("{:.1} µs per run", t.elapsed().as_secs_f64() * 1e6 / reps as f64);
    });
}

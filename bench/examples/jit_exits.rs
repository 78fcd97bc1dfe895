//! Runs a loop whose guard fails every other iteration under the JIT with
//! bridges off and nothing given up, so that every failure goes back to the
//! interpreter and in again: the cost of a guard exit, for `perf record` or
//! `valgrind --tool=callgrind`.
//!
//!     jit_exits [N]

use flowc_lang::interp::Config;
use flowc_lang::{syntax, Symbol};
use flowc_trace::jit::{self, Options};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let src = format!(
        "entry loop(i = 0, s = 0, n = {n})\n\nloop:\n    c = i < n\n    if c goto body else goto done\nbody:\n    \
         m = i % 2\n    if m goto odd else goto even\nodd:\n    s = s + i\n    goto next\neven:\n    s = s - 1\n    \
         goto next\nnext:\n    i = i + 1\n    goto loop\ndone:\n    print_and_stop(s)\n"
    );
    flowc_codegen::with_stack(move || {
        let program = syntax::parse("exits.fg", &src).unwrap();
        let entry = Symbol::intern("loop");
        let env = program.entry_env(entry).unwrap().to_vec();
        let module = flowc_frontend::lower(&program, entry).unwrap();
        let options = Options { bridge_threshold: u32::MAX, judge_after: u64::MAX, ..Options::default() };
        let t = std::time::Instant::now();
        let (outcome, stats) = jit::run(&program, &module, entry, &env, &Config::default(), options);
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{} in {:.1} ms: {} exits, {:.0} ns each with the rest of the iteration interpreted",
            outcome.unwrap().value.to_print_string(),
            secs * 1e3,
            stats.guard_failures,
            secs * 1e9 / stats.guard_failures.max(1) as f64
        );
    });
}

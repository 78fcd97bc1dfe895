//! Lowers and checks one generated program of the size given as argument
//! (for profiling with callgrind or perf).

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();
fn main() {
    let size: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let (p, n) = flowc_bench::scale::program(size);
    let m = flowc_frontend::lower(&p, flowc_lang::Symbol::intern("start")).unwrap();
    let ok = flowc_ir_checker::check_module(&m).is_ok();
    println!("{n} statements, valid: {ok}");
}

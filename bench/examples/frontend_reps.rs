//! Lowers (or, with a third argument, checks) one generated program many
//! times and prints the mean time per statement: for `perf record` on one
//! size at a time, where the benchmark mixes sizes.
//!
//!     frontend_reps SIZE REPS [check]

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();
fn main() {
    let size: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let reps: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let check = std::env::args().nth(3).is_some();
    let (p, n) = flowc_bench::scale::program(size);
    let m = flowc_frontend::lower(&p, flowc_lang::Symbol::intern("start")).unwrap();
    let t = std::time::Instant::now();
    for _ in 0..reps {
        if check {
            std::hint::black_box(flowc_ir_checker::check_module(&m).is_ok());
        } else {
            let m = flowc_frontend::lower(&p, flowc_lang::Symbol::intern("start")).unwrap();
            std::hint::black_box(&m);
        }
    }
    println!("{} ns/st", t.elapsed().as_nanos() as usize / reps / n);
}

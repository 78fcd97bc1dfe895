//! Writes the scaling benchmarks' generated program of about N statements
//! in the readable syntax: `cargo run --release -p flowc-bench --example
//! write_scale -- N > big.fg`.

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();
fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let (p, count) = flowc_bench::scale::program(n);
    eprintln!("{count} statements");
    print!("{}", flowc_lang::syntax::print(flowc_lang::syntax::Syntax::Readable, &p));
}

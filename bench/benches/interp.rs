//! Reference-interpreter throughput: statements (and terminators) executed
//! per second on fib, gcd and the Part 4 bytecode interpreter.
//!
//!     cargo bench -p flowc-bench --bench interp

use divan::counter::ItemsCount;
use divan::Bencher;
use flowc_bench::workloads;

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

fn main() {
    divan::main();
}

#[divan::bench(args = ["fib", "gcd", "bytecode"])]
fn interp(bencher: Bencher, name: &str) {
    let w = workloads(10).into_iter().find(|w| w.name == name).unwrap();
    let loaded = w.load();
    let steps = loaded.run().steps;
    bencher.counter(ItemsCount::new(steps)).bench_local(|| divan::black_box(loaded.run()));
}

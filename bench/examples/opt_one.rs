//! Lowers and optimizes one generated program of the size given as
//! argument (for profiling with perf or callgrind), with the allocator the
//! pipeline benchmark uses.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let size: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let (p, n) = flowc_bench::scale::program(size);
    let mut m = flowc_frontend::lower(&p, flowc_lang::Symbol::intern("start")).unwrap();
    let mut cx = flowc_passes::Context::new(&m);
    flowc_passes::optimize(&mut m, &mut cx, |_, _, _| {});
    println!("{n} statements, {} functions", m.functions.len());
}

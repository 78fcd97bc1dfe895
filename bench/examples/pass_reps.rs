//! Runs one pass of the pipeline many times on one generated program and
//! prints its mean time per statement: for `perf record` on one pass at one
//! size, where the pipeline benchmark mixes passes and sizes. Each run
//! starts from a fresh copy of the lowered module and runs the passes
//! before PASS untimed.
//!
//!     pass_reps SIZE REPS [PASS]    (PASS: normalize by default)

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();
fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let reps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    let name = args.next().unwrap_or_else(|| "normalize".to_owned());
    let Some(k) = flowc_passes::PIPELINE.iter().position(|p| p.name == name) else {
        eprintln!("no pass named {name}");
        std::process::exit(2);
    };
    flowc_bench::scale::keep_freed_memory();
    let (p, n) = flowc_bench::scale::program(size);
    let lowered = flowc_frontend::lower(&p, flowc_lang::Symbol::intern("start")).unwrap();
    let mut total = std::time::Duration::ZERO;
    for _ in 0..reps {
        let mut m = lowered.clone();
        let mut c = flowc_passes::Context::new(&m);
        for pass in &flowc_passes::PIPELINE[..k] {
            (pass.run)(&mut m, &mut c);
        }
        let t = std::time::Instant::now();
        (flowc_passes::PIPELINE[k].run)(&mut m, &mut c);
        total += t.elapsed();
        std::hint::black_box(&m);
    }
    println!("{name}: {} ns/st", total.as_nanos() as usize / reps / n);
}

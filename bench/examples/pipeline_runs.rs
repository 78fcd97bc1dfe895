//! Lowers one generated program and runs the whole pipeline on it RUNS
//! times, printing each run's time per statement for the front end and
//! every pass, and the page faults each took (from `/proc/self/stat`): for
//! `perf record` of the passes at one size, and to tell the work apart
//! from the first run's fresh memory.
//!
//!     pipeline_runs SIZE RUNS

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();
/// Minor page faults of this process so far.
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Field 10 (minflt); the command name before it may contain spaces.
    stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().nth(7)).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4);
    flowc_bench::scale::keep_freed_memory();
    let (p, n) = flowc_bench::scale::program(size);
    let per_statement = |t: std::time::Duration| t.as_nanos() as usize / n;
    for _ in 0..runs {
        let (faults, t) = (minor_faults(), std::time::Instant::now());
        let mut m = flowc_frontend::lower(&p, flowc_lang::Symbol::intern("start")).unwrap();
        print!("front end {} ns ({} faults)", per_statement(t.elapsed()), minor_faults() - faults);
        let mut cx = flowc_passes::Context::new(&m);
        for pass in &flowc_passes::PIPELINE {
            let (faults, t) = (minor_faults(), std::time::Instant::now());
            (pass.run)(&mut m, &mut cx);
            print!(", {} {} ({})", pass.name, per_statement(t.elapsed()), minor_faults() - faults);
        }
        println!();
    }
}

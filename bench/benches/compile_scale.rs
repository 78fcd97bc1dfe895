//! Native compilation of large programs, end to end (issue 18 part 1):
//! generated programs of 10^3..10^6 statements (`flowc_bench::scale`,
//! most of them in one flow graph) are written to disk and run by the
//! release `flowc` binary with `run --engine native --fuel N --stats`
//! (parsing, the front end, the eight passes, Cranelift, and a short run),
//! one process each, so that its peak memory is the process's.
//!
//!     cargo build --release -p flowc && cargo bench -p flowc-bench --bench compile_scale
//!
//! Per size: statements, compile time (what `--stats` reports as
//! compiling, the best of five runs), statements per second, process peak
//! memory (the median of five runs), the bytes per statement it takes
//! beyond the peak of the same process compiling a ten-statement program
//! (the baseline: the binary, its libraries and allocator arenas, some
//! 10 MB, which no program size changes), and time per statement relative
//! to 10^4. Peaks vary by some 0.4 MB from run to run (the binary's pages
//! the kernel maps in around each fault, which drift with the page
//! cache), a third of the budget at 10^3: each run of a size is paired
//! with a run of the baseline just before it, and the bytes per statement
//! are the median of the pairs' differences.
//! Then `build s`: the same program built ahead of time (`flowc build`,
//! the whole command: front end, passes, code generation with every
//! error site's text, writing the object and linking; one run), and its
//! time per statement beyond what building the ten-statement program
//! takes (process start, linking), relative to 10^4 (`build ÷10^4`); `-`
//! where nothing could be built (no linker or runtime library).
//! Targets, at every size: at least 200,000 statements per second, at
//! most 1 KB of peak memory per statement, and time per statement at
//! 10^6 within 2x of 10^4, compiling in memory and building. `FLOWC_BENCH_MAX` caps the sizes (e.g. 100000 for a quick
//! run).

use flowc_bench::compile_run::{self, paired, TARGET_BYTES, TARGET_RATE};
use flowc_bench::scale::{program, SIZES};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

/// Runs per size, and of the baseline.
const RUNS: usize = 5;

fn main() {
    let exe = compile_run::flowc();
    let max: usize = std::env::var("FLOWC_BENCH_MAX").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    let dir = std::env::temp_dir().join(format!("flowc-compile-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tiny = dir.join("tiny.fg");
    std::fs::write(&tiny, compile_run::TINY).unwrap();
    let base_peak = compile_run::median((0..RUNS).map(|_| compile_run::measure(&exe, &tiny).1).collect());
    println!(
        "baseline: a ten-statement program peaks at {base_peak:.1} MB (median; each size's runs pair with their own)"
    );
    println!(
        "{:>10} {:>11} {:>12} {:>9} {:>10} {:>12} {:>9} {:>10}",
        "stmts", "compile s", "stmts/s", "peak MB", "B/stmt", "t/stmt ÷10^4", "build s", "build ÷10^4"
    );
    let mut baseline = None;
    let mut build_baseline = None;
    // What building costs whatever the program (process start, linking).
    let tiny_builds: Vec<f64> = (0..3).filter_map(|_| build_secs(&exe, &tiny, &dir)).collect();
    let tiny_build = if tiny_builds.is_empty() { 0.0 } else { compile_run::median(tiny_builds) };
    let mut met = true;
    for &size in SIZES.iter().filter(|&&s| s <= max) {
        let (p, n) = program(size);
        let file = dir.join(format!("scale-{size}.fg"));
        std::fs::write(&file, flowc_lang::syntax::print(flowc_lang::syntax::Syntax::Readable, &p)).unwrap();
        drop(p);
        // One run for the largest, which takes seconds.
        let runs = if size >= 1_000_000 { 1 } else { RUNS };
        let m = paired(&exe, &tiny, &file, runs);
        let per_stmt = m.secs / n as f64;
        if size == 10_000 {
            baseline = Some(per_stmt);
        }
        let relative = baseline.map_or(f64::NAN, |b| per_stmt / b);
        let rate = n as f64 / m.secs;
        let bytes = m.beyond_mb * 1048576.0 / n as f64;
        let built = build_secs(&exe, &file, &dir);
        let build_per_stmt = built.map_or(f64::NAN, |b| (b - tiny_build).max(0.0) / n as f64);
        if size == 10_000 {
            build_baseline = Some(build_per_stmt);
        }
        let build_relative = build_baseline.map_or(f64::NAN, |b| build_per_stmt / b);
        let built = built.map_or("-".to_string(), |b| format!("{b:.3}"));
        println!(
            "{n:>10} {:>11.3} {rate:>12.0} {:>9.1} {bytes:>10.0} {relative:>12.2} {built:>9} {build_relative:>10.2}",
            m.secs, m.peak_mb
        );
        met &= rate >= TARGET_RATE && bytes <= TARGET_BYTES && (relative.is_nan() || relative <= 2.0);
        met &= build_relative.is_nan() || build_relative <= 2.0;
        let _ = std::fs::remove_file(&file);
    }
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "targets (>= 200000 stmts/s, <= 1000 B/stmt, t/stmt and build t/stmt within 2x of 10^4): {}",
        if met { "met" } else { "NOT met" }
    );
}

/// [`compile_run::build_secs`] of `file`, into `dir`, the executable
/// removed.
fn build_secs(exe: &std::path::Path, file: &std::path::Path, dir: &std::path::Path) -> Option<f64> {
    let out = dir.join("built");
    let secs = compile_run::build_secs(exe, file, &out);
    let _ = std::fs::remove_file(&out);
    secs
}

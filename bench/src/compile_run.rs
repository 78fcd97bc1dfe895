//! Compiling a program with the release `flowc` binary, one process per
//! run, and reading what `run --engine native --fuel N --stats` reports:
//! compile time and the process's peak memory. Shared by the benchmarks
//! of compile time and memory (`compile_scale`, `compile_shapes`), which
//! report against the targets of issue 18: at least 200,000 statements per
//! second, at most 1 KB of peak memory per statement beyond a
//! ten-statement program.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Statements per second compiled at least.
pub const TARGET_RATE: f64 = 200_000.0;
/// Bytes of peak memory per statement beyond the baseline at most.
pub const TARGET_BYTES: f64 = 1000.0;

/// The baseline: a ten-statement program. What the binary, its libraries
/// and its allocator's arenas take (some 10 MB) no program changes.
pub const TINY: &str = "entry start(n = 3)\nstart:\n    i = 0\n    goto loop\nloop:\n    t = i < n\n    if t goto body else goto done\nbody:\n    i = i + 1\n    goto loop\ndone:\n    print_and_stop(i)\n";

/// The release binary (built by the caller first).
pub fn flowc() -> PathBuf {
    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/flowc");
    assert!(exe.exists(), "build the release binary first: cargo build --release -p flowc");
    exe
}

/// Seconds `flowc build` (`exe`) takes to build `file` into the
/// executable `out`, the whole command; `None` if it could not (no
/// linker, no runtime library: it says why). The executable is left for
/// the caller.
pub fn build_secs(exe: &Path, file: &Path, out: &Path) -> Option<f64> {
    let started = std::time::Instant::now();
    let status = Command::new(exe).arg("build").arg("-o").arg(out).arg(file).status().ok()?;
    let secs = started.elapsed().as_secs_f64();
    status.success().then_some(secs)
}

/// One run: compile seconds and process peak MB (MiB, as `--stats` prints
/// it).
pub fn measure(exe: &Path, file: &Path) -> (f64, f64) {
    let r = run(exe, file, None);
    (r.compile, r.peak)
}

/// What one `run --engine native --stats` reported.
pub struct Run {
    /// Seconds compiling before the run (tiered code's later compiles
    /// not included), and in all.
    pub compile: f64,
    pub total: f64,
    /// Process peak, MB.
    pub peak: f64,
    /// Optimized tiers compiled while running (tiered code), and the
    /// seconds that took on the running thread.
    pub tier_ups: u32,
    pub tier_up: f64,
}

/// Runs `file` natively under `--fuel 100000 --stats` (`env`: its
/// `--env`), and reads what it reports.
pub fn run(exe: &Path, file: &Path, env: Option<&str>) -> Run {
    let mut command = Command::new(exe);
    command.args(["run", "--engine", "native", "--fuel", "100000", "--stats"]);
    if let Some(env) = env {
        command.arg(format!("--env={env}"));
    }
    let out = command.arg(file).output().expect("flowc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() || stderr.contains("[fuel_exhausted]"), "{stderr}");
    let stats = stderr.lines().find(|l| l.starts_with("stats: engine native")).unwrap_or_else(|| panic!("{stderr}"));
    // "stats: engine native, ..., T ms (C ms compiling, R ms running)"
    let compile_ms = number_between(stats, "(", " ms compiling").unwrap_or_else(|| panic!("{stats}"));
    let total_ms = number_between(stats, ", ", " ms (").unwrap_or_else(|| panic!("{stats}"));
    // "heap: ...; process peak P MB"
    let peak = stderr.rsplit("process peak ").next().and_then(|s| number_between(s, "", " MB")).unwrap_or(f64::NAN);
    // "tiering: N optimized tier(s) compiled while running, in T ms of ..."
    let tiering = stderr.lines().find_map(|l| l.strip_prefix("tiering: "));
    let tier_ups = tiering.and_then(|l| l.split(' ').next()?.parse().ok()).unwrap_or(0);
    let tier_up_ms = tiering.and_then(|l| number_between(l, ", in ", " ms")).unwrap_or(0.0);
    Run { compile: compile_ms / 1e3, total: total_ms / 1e3, peak, tier_ups, tier_up: tier_up_ms / 1e3 }
}

/// The number in `text` that ends where `end` first occurs and starts
/// after the last `start` before it (the text's start for "").
pub fn number_between(text: &str, start: &str, end: &str) -> Option<f64> {
    let before = text.split(end).next()?;
    let number = if start.is_empty() { before } else { before.rsplit(start).next()? };
    number.trim().parse().ok()
}

/// The median of `xs` (not empty).
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// What compiling a program took over several runs ([`paired`]).
pub struct Measured {
    /// The best compile time.
    pub secs: f64,
    /// The median process peak, MB.
    pub peak_mb: f64,
    /// The median of each run's peak beyond its baseline run's, MB.
    pub beyond_mb: f64,
}

/// What `runs` runs of compiling `file` took, each run paired with a run
/// of the baseline `tiny` just before it. (Peaks vary by some 0.4 MB from
/// run to run — the binary's pages the kernel maps in around each fault,
/// which move with where it is loaded — a third of the budget at 10^3
/// statements; a baseline measured once does not follow the page cache's
/// drift either.)
pub fn paired(exe: &Path, tiny: &Path, file: &Path, runs: usize) -> Measured {
    let (mut times, mut peaks, mut beyond) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let base = measure(exe, tiny).1;
        let (t, m) = measure(exe, file);
        times.push(t);
        peaks.push(m);
        beyond.push(m - base);
    }
    Measured {
        secs: times.into_iter().fold(f64::INFINITY, f64::min),
        peak_mb: median(peaks),
        beyond_mb: median(beyond),
    }
}

//! Two `flowc` binaries compared on the same runs, alternated: on a
//! machine whose speed drifts from minute to minute (this one's does by a
//! third), runs of one binary and then the other measure the drift as
//! much as the change; runs taken in turn, and their medians, do not.
//!
//!     cargo run --release -p flowc-bench --bin alternate -- \
//!         --rounds 9 --engine jit OLD NEW tutorial-fractal-5 rle-bottles-10
//!
//! OLD and NEW are paths to `flowc` executables (build the old one from a
//! worktree of the old commit). Each row names an environment file
//! `target/bench-bf/ROW.env` that the `jit_bf` benchmark writes, and
//! runs the interpreter its first word names (`tutorial`, `rle`, `vm`)
//! from `tests/corpus/interpreters`. Prints each row's median seconds per
//! binary and NEW's over OLD's; stops if the two print different
//! results.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use flowc_bench::compile_run::median;
use flowc_bench::peers::{interpreter, root};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

/// Seconds of one run of `exe` on `row`, checking it succeeds, and what
/// it printed.
fn once(exe: &Path, engine: &str, row: &str) -> Result<(f64, Vec<u8>), String> {
    let first = row.split('-').next().unwrap_or(row);
    let program = interpreter(first).ok_or(format!("{row}: no interpreter named {first}"))?;
    let env = root().join("target/bench-bf").join(format!("{row}.env"));
    if !env.exists() {
        return Err(format!("{}: missing (run the jit_bf benchmark once to write it)", env.display()));
    }
    let started = Instant::now();
    let out = Command::new(exe)
        .args(["run", "--engine", engine, "--env"])
        .arg(format!("@{}", env.display()))
        .arg(&program)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let secs = started.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!("{} failed on {row}", exe.display()));
    }
    Ok((secs, out.stdout))
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (mut rounds, mut engine, mut rest) = (9usize, "jit".to_string(), Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => rounds = args.next().and_then(|n| n.parse().ok()).ok_or("--rounds takes a number")?,
            "--engine" => engine = args.next().ok_or("--engine takes an engine")?,
            _ => rest.push(a),
        }
    }
    if rest.len() < 3 || rounds == 0 {
        return Err("usage: alternate [--rounds N] [--engine E] OLD NEW ROW...".into());
    }
    let (old, new) = (PathBuf::from(&rest[0]), PathBuf::from(&rest[1]));
    println!("{:<24} {:>10} {:>10} {:>9}", "row", "old s", "new s", "new/old");
    for row in &rest[2..] {
        let exes = [&old, &new];
        let mut secs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut printed: Option<Vec<u8>> = None;
        for round in 0..rounds {
            // Each binary first in every other round: neither gains from
            // running second (caches warm, the machine's drift).
            for k in [round % 2, 1 - round % 2] {
                let (s, out) = once(exes[k], &engine, row)?;
                // A faster binary that prints another result is no faster.
                if printed.get_or_insert_with(|| out.clone()) != &out {
                    return Err(format!("{} prints another result on {row}", exes[k].display()));
                }
                secs[k].push(s);
            }
        }
        let [a, b] = secs.map(median);
        println!("{row:<24} {a:>10.4} {b:>10.4} {:>9.3}", b / a);
    }
    Ok(())
}

//! Two `flowc` binaries, or two ways of running one, compared on the same
//! runs, alternated: on a machine whose speed drifts from minute to
//! minute (this one's does by a third), runs of one and then the other
//! measure the drift as much as the change; runs taken in turn, and their
//! medians, do not.
//!
//!     cargo run --release -p flowc-bench --bin alternate -- \
//!         --rounds 9 --engine jit OLD NEW tutorial-fractal-5 rle-bottles-10
//!     cargo run --release -p flowc-bench --bin alternate -- --rounds 15 \
//!         target/release/flowc@interp target/release/flowc@jit,--warmup,0 vm-loops-20
//!
//! OLD and NEW are paths to `flowc` executables (build the old one from a
//! worktree of the old commit), each optionally followed by `@ENGINE`
//! (else `--engine`'s, default `jit`) and `,`-separated arguments for
//! `flowc run`. Each row names an environment file
//! `target/bench-bf/ROW.env` that the `jit_bf` benchmark writes, and
//! runs the interpreter its first word names (`tutorial`, `rle`, `vm`)
//! from `tests/corpus/interpreters`; a row ending in `.fg` is a program
//! run from its own entry. Prints each row's median seconds per side and
//! NEW's over OLD's; stops if the two print different results.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use flowc_bench::compile_run::median;
use flowc_bench::peers::{interpreter, root};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

/// One side of the comparison: a `flowc` executable, the engine it runs,
/// and further arguments of `flowc run`.
struct Side {
    exe: PathBuf,
    engine: String,
    args: Vec<String>,
}

impl Side {
    /// `PATH[@ENGINE][,ARG...]`, the engine `engine` unless given.
    fn parse(spec: &str, engine: &str) -> Side {
        let mut parts = spec.split(',');
        let head = parts.next().unwrap_or(spec);
        let (exe, engine) = head.split_once('@').unwrap_or((head, engine));
        Side { exe: PathBuf::from(exe), engine: engine.to_string(), args: parts.map(str::to_string).collect() }
    }
}

/// Seconds of one run of `side` on `row`, checking it succeeds, and what
/// it printed.
fn once(side: &Side, row: &str) -> Result<(f64, Vec<u8>), String> {
    let mut command = Command::new(&side.exe);
    command.args(["run", "--engine", &side.engine]).args(&side.args);
    if row.ends_with(".fg") {
        command.arg(row);
    } else {
        let first = row.split('-').next().unwrap_or(row);
        let program = interpreter(first).ok_or(format!("{row}: no interpreter named {first}"))?;
        let env = root().join("target/bench-bf").join(format!("{row}.env"));
        if !env.exists() {
            return Err(format!("{}: missing (run the jit_bf benchmark once to write it)", env.display()));
        }
        command.arg("--env").arg(format!("@{}", env.display())).arg(&program);
    }
    let started = Instant::now();
    let out = command.stderr(Stdio::inherit()).output().map_err(|e| format!("{}: {e}", side.exe.display()))?;
    let secs = started.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!("{} failed on {row}", side.exe.display()));
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
    let (old, new) = (Side::parse(&rest[0], &engine), Side::parse(&rest[1], &engine));
    println!("{:<24} {:>10} {:>10} {:>9}", "row", "old s", "new s", "new/old");
    for row in &rest[2..] {
        let sides = [&old, &new];
        let mut secs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut printed: Option<Vec<u8>> = None;
        for round in 0..rounds {
            // Each binary first in every other round: neither gains from
            // running second (caches warm, the machine's drift).
            for k in [round % 2, 1 - round % 2] {
                let (s, out) = once(sides[k], row)?;
                // A faster binary that prints another result is no faster.
                if printed.get_or_insert_with(|| out.clone()) != &out {
                    return Err(format!("{} prints another result on {row}", sides[k].exe.display()));
                }
                secs[k].push(s);
            }
        }
        let [a, b] = secs.map(median);
        println!("{row:<24} {a:>10.4} {b:>10.4} {:>9.3}", b / a);
    }
    Ok(())
}

//! The JIT on short runs of programs in the shapes users write (issue 35:
//! "never slower than flowc's interpreter, short runs included"), where
//! what the JIT costs to start and to compile weighs most:
//! - every program of `bench/programs/shapes` (runs of a few
//!   milliseconds: objects in straight-line code and in loops, functions
//!   called once and from a loop, a big function, a generated program);
//! - four of them at the size where the JIT does worst ([`CROSSOVERS`]):
//!   the run goes on past the warm-up, so the JIT takes over and
//!   compiles its loop, but ends about when the code arrives, so the
//!   compile does not pay (the ski rental's worst case, which no JIT
//!   avoids: what the rows show is what it costs here);
//! - `loops in sequence`: 5,000 loops of 200 rounds one after another in
//!   the main graph, each calling a function
//!   (`flowc_bench::scale::loops_in_sequence`);
//! - `loop nests over an object`: 1,500 loop nests one after another,
//!   each 400 rounds of a 3-round loop updating an object's fields
//!   (`flowc_bench::scale::loop_nests_in_sequence`): objects make the
//!   JIT's preparation lower the whole main graph and solve its field
//!   facts;
//! - `many functions`: 2,000 functions, each with its own 20-round loop,
//!   called in turn 30 times (`flowc_tests::loops::many_functions`);
//! - `many functions 400 rounds`: the same with 400-round loops, hot
//!   enough to compile, 2,000 loops at once (a run of about a second;
//!   the cache's room for small pieces: `flowc_trace::jit`, "A full
//!   cache");
//! - `calls of a K-round loop`: one function whose loop runs K rounds per
//!   call, called from 2,000 call sites 30 times, for K = 5, 10, 20
//!   (`flowc_tests::loops::short_loop_calls`): every call a round trip
//!   between the interpreter and compiled code;
//! - `300 calls by tests n=N`: a ledger's 300 posting functions, each
//!   with a loop of 1-24 rounds, one picked per round of a main loop by a
//!   chain of 300 equality tests (`flowc_tests::loops::dispatched_calls`),
//!   N rounds: the main loop's head has 301 predecessors (see "A loop
//!   head of many predecessors" in docs/architecture.md), and its code is
//!   left at the test that picks each round's posting (see "Round trips
//!   between the interpreter and code" there).
//! - `register VM 40 opcodes n=N`: a register VM of 40 opcodes found by
//!   a chain of equality tests, running a 60-instruction program N times
//!   (`flowc_tests::loops::register_vm`): its traces test the opcode by
//!   runs of guards, lowered as switches (`flowc_codegen`'s
//!   `lower/switch.rs`).
//!
//! Each row runs the interpreter and `flowc run --engine jit` in turn,
//! [`ROUNDS`] times each or more for a short row ([`ROW_SECS`]), and takes
//! the medians: this machine's speed
//! drifts by a third from minute to minute. `÷ jit` is the interpreter's
//! time over the JIT's (target: at least 1); `jit` says whether the JIT
//! started at all or the run ended within its warm-up
//! (`flowc_trace::jit`, "Starting late"), and `÷ at once` is the
//! interpreter's time over the JIT's started at once (`--warmup 0`), what
//! the late start is measured against.
//!
//!     cargo build --release -p flowc && cargo bench -p flowc-bench --bench jit_short
//!
//! `FLOWC_BENCH_ONLY=text` runs the rows whose name contains it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use flowc_bench::compile_run::{flowc, median};
use flowc_bench::peers::{cell, root};
use flowc_bench::scale;
use flowc_tests::loops;

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

/// Runs of each engine per row, alternated: at least [`ROUNDS`], and for
/// a short row as many more as make each engine's runs add up to
/// [`ROW_SECS`], up to [`MOST_ROUNDS`]. A run of 3 ms varies by a tenth
/// from one to the next on this machine: nine of them put rows whose JIT
/// never starts (the interpreter's own code then) anywhere from 0.83 to
/// 1.04 of the interpreter.
const ROUNDS: usize = 9;
const MOST_ROUNDS: usize = 61;
const ROW_SECS: f64 = 0.3;

/// Shapes run at a size near where the JIT's compile stops paying: their
/// file stem and `n` (2026-12-06: the JIT 1.1-1.3 times the interpreter's
/// time there, each loop's code arriving as the run ends).
const CROSSOVERS: [(&str, i64); 4] = [
    ("big_function_hot_loop", 500),
    ("functions_hot_loop", 700),
    ("function_with_hot_loop", 1000),
    ("objects_hot_loop", 1000),
];

/// Seconds of one `flowc run` of `file` with `args` and then `more`, and
/// what it printed.
fn once(exe: &Path, args: &[&str], more: &[&str], file: &Path) -> (f64, Vec<u8>) {
    let started = Instant::now();
    let out = Command::new(exe).arg("run").args(args).args(more).arg(file).output().expect("flowc runs");
    let secs = started.elapsed().as_secs_f64();
    assert!(out.status.success(), "{} {args:?} failed: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    (secs, out.stdout)
}

fn main() {
    let only = std::env::var("FLOWC_BENCH_ONLY").ok();
    let exe = flowc();
    let dir = root().join("target/bench-short");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    // (Name, file, environment.)
    let mut rows: Vec<(String, PathBuf, Option<String>)> = Vec::new();
    let shapes = root().join("bench/programs/shapes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&shapes)
        .expect("bench/programs/shapes")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "fg"))
        .collect();
    files.sort();
    for f in files {
        let name = f.file_stem().expect("a file name").to_string_lossy().replace('_', " ");
        rows.push((name, f, None));
    }
    for (stem, n) in CROSSOVERS {
        let name = format!("{} n={n}", stem.replace('_', " "));
        rows.push((name, shapes.join(format!("{stem}.fg")), Some(format!("[n/{n}]"))));
    }
    let mut generated = vec![
        ("loops in sequence".to_string(), scale::loops_in_sequence(5_000).replace("rounds = 3", "rounds = 200")),
        ("loop nests over an object".to_string(), scale::loop_nests_in_sequence(1_500).replace("n = 4", "n = 400")),
        ("many functions".to_string(), loops::many_functions(2_000, 20)),
        ("many functions 400 rounds".to_string(), loops::many_functions(2_000, 400)),
        ("300 calls by tests n=2000".to_string(), loops::dispatched_calls(300, 2_000)),
        ("300 calls by tests n=20000".to_string(), loops::dispatched_calls(300, 20_000)),
        ("300 calls by tests n=200000".to_string(), loops::dispatched_calls(300, 200_000)),
        ("register VM 40 opcodes n=2000".to_string(), loops::register_vm(40, 2_000)),
        ("register VM 40 opcodes n=20000".to_string(), loops::register_vm(40, 20_000)),
    ];
    for rounds in [5, 10, 20] {
        generated.push((format!("calls of a {rounds}-round loop"), loops::short_loop_calls(rounds, 2_000)));
    }
    for (name, text) in generated {
        let file = dir.join(format!("{}.fg", name.replace(' ', "_")));
        std::fs::write(&file, text).expect("the program written");
        rows.push((name, file, None));
    }
    println!("{:<28} {:>10} {:>9} {:>7} {:>12} {:>10}", "row", "interp ms", "jit ms", "÷ jit", "jit", "÷ at once");
    for (name, file, env) in rows {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let sides: [&[&str]; 3] =
            [&["--engine", "interp"], &["--engine", "jit"], &["--engine", "jit", "--warmup", "0"]];
        let mut secs: [Vec<f64>; 3] = Default::default();
        let mut printed: Option<Vec<u8>> = None;
        let env: Vec<&str> = env.as_deref().map(|e| vec!["--env", e]).unwrap_or_default();
        let mut round = 0;
        while round < ROUNDS
            || (round < MOST_ROUNDS && secs.iter().map(|s| s.iter().sum::<f64>()).any(|t| t < ROW_SECS))
        {
            // A different engine first in each round.
            for k in 0..3 {
                let side = (k + round) % 3;
                let (s, out) = once(&exe, sides[side], &env, &file);
                assert_eq!(
                    printed.get_or_insert_with(|| out.clone()),
                    &out,
                    "{name}: the engines print different results"
                );
                secs[side].push(s);
            }
            round += 1;
        }
        let stats = Command::new(&exe)
            .args(["run", "--engine", "jit", "--stats"])
            .args(&env)
            .arg(&file)
            .output()
            .expect("flowc runs");
        let started = !String::from_utf8_lossy(&stats.stderr).contains("jit: not started");
        let [interp, jit, at_once] = secs.map(median);
        println!(
            "{:<28} {:>10.2} {:>9.2} {:>7} {:>12} {:>10}",
            name,
            interp * 1e3,
            jit * 1e3,
            cell(Some(interp / jit)),
            if started { "started" } else { "not started" },
            cell(Some(interp / at_once)),
        );
    }
    println!("target: ÷ jit ≥ 1 on every row");
}

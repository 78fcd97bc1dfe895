//! Memory: allocation-heavy programs on every engine, each run in its own
//! process (`flowc run --engine E --stats`, and the executable
//! `flowc build` makes, run with `--stats`), so its peak memory is its
//! own. The programs:
//! - `alloc_escape`: a loop allocating a short-lived object it passes to a
//!   recursive function (tests/corpus/shapes/alloc_escape.fg);
//! - `list_sum`: a list of 1000 cells built by one function and summed by
//!   another, n / 1000 times (tests/corpus/shapes/list_sum.fg);
//! - `stack_machine`: an interpreter whose operand stack is a chain of
//!   objects (examples/stack_machine.fg; several cells per step);
//! - `bignum_loop`: arithmetic on integers beyond 64 bits, two
//!   temporaries per iteration (bench/programs/bignum_loop.fg).
//!
//! Per program and engine: the time (`--stats`' run time; wall time for
//! built executables), the process's peak memory (`VmHWM`), the heap's
//! peak and collections. Ratios, measured in the same run: `÷ E` is the
//! interpreter's time over engine E's; `luajit`, `pypy3` are their time
//! over the JIT's on the same program written in Lua and Python
//! (bench/lua, bench/python; timed inside the scripts; `-` when not
//! installed or not written).
//!
//! Targets: peak memory at most 32 MB at n = 10^7 on every engine and in
//! built executables; native and jit at least 5 times the interpreter;
//! LuaJIT and PyPy at least 0.5 (within 2x of them).
//!
//!     cargo build --release -p flowc
//!     cargo bench -p flowc-bench --bench memory
//!
//! `FLOWC_BENCH_SCALE` divides n (10^7) by itself, for a quick look;
//! `FLOWC_BENCH_ONLY=name` runs the programs whose name contains it.

use flowc_bench::peers::{cell, root, script_secs};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

struct Case {
    name: &'static str,
    file: &'static str,
    /// The environment, `{n}` standing for the size.
    env: &'static str,
    /// Scripts of the same program (`-` when there is none).
    lua: Option<&'static str>,
    python: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "alloc_escape",
        file: "tests/corpus/shapes/alloc_escape.fg",
        env: "[n/{n}]",
        lua: Some("bench/lua/alloc_escape.lua"),
        python: Some("bench/python/alloc_escape.py"),
    },
    Case {
        name: "list_sum",
        file: "tests/corpus/shapes/list_sum.fg",
        env: "[n/1000, reps/{n/1000}]",
        lua: Some("bench/lua/list_sum.lua"),
        python: Some("bench/python/list_sum.py"),
    },
    Case {
        name: "stack_machine",
        file: "examples/stack_machine.fg",
        env: "[code/[pushn, push, 0, over, add, swap, push, 1, sub, dup, jz, 15, swap, jmp, 3, pop, halt], n/{n/10}]",
        lua: Some("bench/lua/stack_machine.lua"),
        python: Some("bench/python/stack_machine.py"),
    },
    Case {
        name: "bignum_loop",
        file: "bench/programs/bignum_loop.fg",
        env: "[n/{n}]",
        lua: None,
        python: Some("bench/python/bignum_loop.py"),
    },
];

/// One run: what it printed, seconds, process peak MB, heap line.
struct Measured {
    output: String,
    secs: f64,
    peak_mb: f64,
    heap: String,
}

fn parse_stats(stderr: &str, wall: f64) -> (f64, f64, String) {
    // `flowc run`: "stats: engine E, …, N allocations, T ms …"; a built
    // executable: "stats: T ms, …".
    let secs = stderr
        .lines()
        .find(|l| l.starts_with("stats: "))
        .and_then(|l| l.split("allocations, ").nth(1).or_else(|| l.strip_prefix("stats: ")))
        .and_then(|rest| rest.split(" ms").next())
        .and_then(|ms| ms.parse::<f64>().ok())
        .map_or(wall, |ms| ms / 1e3);
    let heap = stderr.lines().find(|l| l.starts_with("heap:")).unwrap_or("").to_owned();
    let peak = heap
        .rsplit("process peak ")
        .next()
        .and_then(|s| s.trim_end_matches(" MB").parse::<f64>().ok())
        .unwrap_or(f64::NAN);
    let heap = heap.split("; process peak").next().unwrap_or("").trim_start_matches("heap: ").to_owned();
    (secs, peak, heap)
}

fn measure(command: &mut Command) -> Measured {
    let started = Instant::now();
    let out = command.output().expect("the program runs");
    let wall = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{command:?} failed: {stderr}");
    let (secs, peak_mb, heap) = parse_stats(&stderr, wall);
    Measured { output: String::from_utf8_lossy(&out.stdout).trim().to_owned(), secs, peak_mb, heap }
}

fn env_text(case: &Case, n: i64) -> String {
    case.env
        .replace("{n}", &n.to_string())
        .replace("{n/1000}", &(n / 1000).to_string())
        .replace("{n/10}", &(n / 10).to_string())
}

fn main() {
    let scale: i64 = std::env::var("FLOWC_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let only = std::env::var("FLOWC_BENCH_ONLY").ok();
    let flowc: PathBuf = root().join("target/release/flowc");
    if !flowc.exists() {
        eprintln!("build flowc first: cargo build --release -p flowc");
        std::process::exit(2);
    }
    let n: i64 = 10_000_000 / scale;
    let dir = std::env::temp_dir().join(format!("flowc-memory-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("n = {n} iterations (allocations, or cells, or machine steps / 10)");
    println!(
        "{:<14} {:<7} {:>9} {:>9} {:>7} {:>8} {:>8}   heap",
        "program", "engine", "time ms", "peak MB", "÷ E", "luajit", "pypy3"
    );
    for case in CASES {
        if only.as_deref().is_some_and(|o| !case.name.contains(o)) {
            continue;
        }
        let env = env_text(case, n);
        let file = root().join(case.file);
        let mut rows = Vec::new();
        for engine in ["interp", "native", "jit"] {
            let m =
                measure(Command::new(&flowc).args(["run", "--stats", "--engine", engine, "--env", &env]).arg(&file));
            rows.push((engine, m));
        }
        let exe = dir.join(case.name);
        let built = Command::new(&flowc).arg("build").arg(&file).arg("-o").arg(&exe).output().unwrap();
        assert!(built.status.success(), "flowc build: {}", String::from_utf8_lossy(&built.stderr));
        rows.push(("built", measure(Command::new(&exe).args(["--stats", "--env", &env]))));
        let expected = rows[0].1.output.clone();
        let interp = rows[0].1.secs;
        let jit = rows[2].1.secs;
        let peer_n = if case.name == "stack_machine" { n / 10 } else { n };
        let lua = case.lua.and_then(|f| script_secs("luajit", f, peer_n, &expected)).map(|t| t / jit);
        let pypy = case.python.and_then(|f| script_secs("pypy3", f, peer_n, &expected)).map(|t| t / jit);
        for (k, (engine, m)) in rows.iter().enumerate() {
            assert_eq!(m.output, expected, "{} on {engine} prints another result", case.name);
            let ratio = if k == 0 { "".to_string() } else { format!("{:.2}", interp / m.secs) };
            let (l, p) = if *engine == "jit" { (cell(lua), cell(pypy)) } else { (String::new(), String::new()) };
            println!(
                "{:<14} {:<7} {:>9.1} {:>9.1} {:>7} {:>8} {:>8}   {}",
                if k == 0 { case.name } else { "" },
                engine,
                m.secs * 1e3,
                m.peak_mb,
                ratio,
                l,
                p,
                m.heap
            );
        }
    }
    println!(
        "targets: peak MB at most 32 at n = 10^7; ÷ E at least 5 for native, jit, built; luajit and pypy3 at least 0.5"
    );
    std::fs::remove_dir_all(&dir).ok();
}

//! Ahead-of-time code for interpreters (issue 36): the BF interpreters of
//! the JIT's suite (`jit_bf`) run by native code (`flowc run --engine
//! native`: the eight passes, code generation for the run's environment,
//! the run; the whole process timed), against the same interpreter in C
//! (gcc -O2), in Python (PyPy) and in Lua (LuaJIT), and against the BF
//! program translated to C, all measured in one run. Columns: `native s`;
//! `÷ C` native's time over the C interpreter's; `pypy ÷` and `luajit ÷`
//! the peer's time over native's; `native÷bf2c` native's time over the
//! translated program's.
//!
//! Targets (issue 36): where the C interpreter runs 1 s or more, native
//! within 2x of it (`÷ C` ≤ 2) and faster than PyPy and LuaJIT (their
//! columns above 1).
//!
//! Then the first Futamura projection: each interpreter partially
//! evaluated for the BF program (`flowc pe --linear`, the BF program and
//! its bracket map, or its run-length lists, static; the run-length
//! interpreter's `move(tape, n)` called as copies specialized to each
//! `n`) and the residual program run natively (which
//! runs the eight passes on it: `pe --optimize` would run them a first
//! time, for a residual to read — tutorial fractal 1's `pe` 0.60 s instead
//! of 0.20, its run no faster): `pe s` the two processes' seconds together (one run each),
//! `pe÷bf2c` that over the translated program's. Target (issue 36):
//! `pe÷bf2c` ≤ 3. Beside it, `pe+jit s`: the same residual program run by
//! the JIT instead (partial evaluation included), ahead-of-time code and
//! traces compared on one huge program (the residual of fractal 5 has
//! some 74,000 blocks); issue 35's target holds there too, the JIT not
//! slower than the interpreter. And `built s`: the residual program built
//! ahead of time (`flowc build`, its hot regions compiled optimized) and
//! the executable run, `exe s` of that its run alone. `pe÷chain` and
//! `exe÷chain` are over the BF program translated to C with the
//! interpreter's tape instead of an array, a chain of cells grown on
//! demand (`flowc_bench::peers::bf_to_c_chain`): what gcc makes of the
//! program the residual is, on the same data.
//!
//!     cargo build --release -p flowc && cargo bench -p flowc-bench --bench native_bf
//!
//! Then one more dynamic shape, objects holding values of mixed kinds
//! (tests/corpus/shapes/ledger.fg), against the reference interpreter,
//! PyPy and LuaJIT (bench/python/ledger.py, bench/lua/ledger.lua).
//!
//! `FLOWC_BENCH_ONLY=text` runs the rows whose name contains it.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use flowc_bench::compile_run::{build_secs, flowc};
use flowc_bench::peers::{bf_to_c, bf_to_c_chain, cell, gcc, program_secs, root, script_secs, tutorial_peers};
use flowc_tests::bf;

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

fn main() {
    let exe = flowc();
    let only = std::env::var("FLOWC_BENCH_ONLY").ok();
    let dir = root().join("target/bench-bf");
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    let c_interp = dir.join("bf_tutorial");
    let have_c = gcc(&root().join("bench/c/bf_tutorial.c"), &c_interp);
    println!(
        "{:<22} {:>9} {:>7} {:>7} {:>8} {:>11} {:>8} {:>9} {:>9} {:>9} {:>8} {:>7} {:>9}",
        "row",
        "native s",
        "÷ C",
        "pypy ÷",
        "luajit ÷",
        "native÷bf2c",
        "pe s",
        "pe÷bf2c",
        "pe÷chain",
        "pe+jit s",
        "built s",
        "exe s",
        "exe÷chain"
    );
    for (program, size) in [
        ("primes", 3),
        ("fractal", 1),
        ("fractal", 5),
        ("counters", 30),
        ("digits", 200),
        ("escape", 20),
        ("random", 3),
        ("random", 6),
    ] {
        let shown =
            |interpreter: &str| only.as_deref().is_none_or(|o| format!("{interpreter} {program} {size}").contains(o));
        if !shown("tutorial") && !shown("rle") {
            continue;
        }
        let text = bf::program(program, size).expect("a program of the suite");
        let (sum, _) = bf::run(&text).expect("a valid program");
        let expected = sum.to_string();
        let bf_file = dir.join(format!("{program}-{size}.b"));
        std::fs::write(&bf_file, &text).expect("the program written");
        let bf_path = bf_file.to_str().expect("a UTF-8 path");
        let code = bf::instructions(&text);
        let [bf2c, chain] = [("bf2c", bf_to_c(&code)), ("chain", bf_to_c_chain(&code))].map(|(kind, source)| {
            let c_file = dir.join(format!("{program}-{size}.{kind}.c"));
            std::fs::write(&c_file, source).expect("the translation written");
            let translated = dir.join(format!("{program}-{size}.{kind}"));
            gcc(&c_file, &translated)
                .then(|| program_secs(translated.to_str().expect("a UTF-8 path"), &[], &expected, 3))
                .flatten()
        });
        for interpreter in ["tutorial", "rle"] {
            if !shown(interpreter) {
                continue;
            }
            let name = format!("{interpreter} {program} {size}");
            let env = if interpreter == "tutorial" { bf::tutorial_env(&text) } else { bf::run_length_env(&text) };
            let env_file = dir.join(format!("{interpreter}-{program}-{size}.env"));
            std::fs::write(&env_file, &env).expect("the environment written");
            let source = flowc_bench::peers::interpreter(interpreter).expect("an interpreter of the suite");
            let native = native_secs(&exe, &source, &env_file, &expected);
            // The peers are interpreters of the tutorial's shape.
            let [c, pypy, luajit] = if interpreter == "tutorial" {
                tutorial_peers(have_c.then_some(c_interp.as_path()), bf_path, &expected)
            } else {
                [None; 3]
            };
            let residual = dir.join(format!("{interpreter}-{program}-{size}.residual.fg"));
            let specialized = Some(specialized_secs(&exe, &source, &env_file, &residual, &expected));
            let pe = specialized.map(|s| s.native);
            let secs = |t: Option<f64>| t.map_or_else(|| "-".to_string(), |t| format!("{t:.3}"));
            println!(
                "{:<22} {:>9.3} {:>7} {:>7} {:>8} {:>11} {:>8} {:>9} {:>9} {:>9} {:>8} {:>7} {:>9}",
                name,
                native,
                cell(c.map(|c| native / c)),
                cell(pypy.map(|p| p / native)),
                cell(luajit.map(|l| l / native)),
                cell(bf2c.map(|t| native / t)),
                secs(pe),
                cell(pe.zip(bf2c).map(|(p, t)| p / t)),
                cell(pe.zip(chain).map(|(p, t)| p / t)),
                secs(specialized.map(|s| s.jit)),
                secs(specialized.and_then(|s| s.built)),
                secs(specialized.and_then(|s| s.exe)),
                cell(specialized.and_then(|s| s.exe).zip(chain).map(|(e, t)| e / t)),
            );
            if let Some(c) = c {
                println!("{:<22} C interpreter {c:.3} s", "");
            }
        }
    }
    println!("targets: where C runs ≥ 1 s: ÷ C ≤ 2, pypy ÷ and luajit ÷ > 1; pe÷bf2c ≤ 3");
    if only.as_deref().is_none_or(|o| "objects of mixed kinds".contains(o)) {
        mixed_kinds(&exe, &dir);
    }
}

/// One more dynamic shape, objects holding values of mixed kinds
/// (tests/corpus/shapes/ledger.fg: integers, atoms, lists and objects in
/// one field, told apart by an atom): native code and the JIT against the
/// reference interpreter, PyPy and LuaJIT running the same program.
fn mixed_kinds(exe: &Path, dir: &Path) {
    let rounds = 20_000;
    let source = root().join("tests/corpus/shapes/ledger.fg");
    let env_file = dir.join("ledger.env");
    std::fs::write(&env_file, format!("[size/1000, rounds/{rounds}]")).expect("the environment written");
    // The reference interpreter's run gives the result the others print.
    let (interp, printed) = run_engine(exe, "interp", &source, &env_file);
    let expected = printed.trim().to_string();
    println!();
    println!("{:<22} {:>9} {:>9} {:>9} {:>9}", "objects of mixed kinds", "s", "÷ native", "÷ jit", "");
    let native = native_secs(exe, &source, &env_file, &expected);
    let jit = engine_secs(exe, "jit", &source, &env_file, &expected);
    let pypy = script_secs("pypy3", "bench/python/ledger.py", rounds, &expected);
    let luajit = script_secs("luajit", "bench/lua/ledger.lua", rounds, &expected);
    let row = |name: &str, secs: Option<f64>| {
        let Some(t) = secs else { return println!("{name:<22} {:>9}", "-") };
        println!("{name:<22} {t:>9.3} {:>9} {:>9}", cell(Some(t / native)), cell(Some(t / jit)));
    };
    row("flowc native", Some(native));
    row("flowc jit", Some(jit));
    row("flowc interp", Some(interp));
    row("pypy3", pypy);
    row("luajit", luajit);
}

/// The seconds of `flowc run --engine ENGINE` on `source` with
/// `env_file`, the whole process, and what it printed: one run, which must
/// succeed.
fn run_engine(exe: &Path, engine: &str, source: &Path, env_file: &Path) -> (f64, String) {
    timed(
        Command::new(exe)
            .args(["run", "--engine", engine, "--env"])
            .arg(format!("@{}", env_file.display()))
            .arg(source),
    )
}

/// The seconds `command` took and what it printed; it must succeed.
fn timed(command: &mut Command) -> (f64, String) {
    let started = Instant::now();
    let out = command.output().expect("flowc runs");
    let secs = started.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (secs, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// [`run_engine`]'s seconds, the run printing `expected`.
fn engine_secs(exe: &Path, engine: &str, source: &Path, env_file: &Path, expected: &str) -> f64 {
    let (secs, printed) = run_engine(exe, engine, source, env_file);
    assert_eq!(printed.trim(), expected, "{engine} prints another result");
    secs
}

/// Native code's seconds on `source` with `env_file`, the whole process
/// (compiling included): the median of three.
fn native_secs(exe: &Path, source: &Path, env_file: &Path, expected: &str) -> f64 {
    let mut runs: Vec<f64> = (0..3).map(|_| engine_secs(exe, "native", source, env_file, expected)).collect();
    runs.sort_by(f64::total_cmp);
    runs[1]
}

/// The first Futamura projection's seconds ([`specialized_secs`]).
#[derive(Copy, Clone)]
struct Specialized {
    /// `pe`, then `flowc run --engine native` of the residual program.
    native: f64,
    /// `pe`, then `flowc run --engine jit`.
    jit: f64,
    /// `pe`, then `flowc build` of the residual program, then the
    /// executable; and the executable's run alone (`None` where nothing
    /// could be built: no linker or runtime library).
    built: Option<f64>,
    exe: Option<f64>,
}

/// The first Futamura projection's seconds: `flowc pe --linear` of
/// interpreter `source` with `env_file` static, writing the residual
/// program to `residual`, then `flowc run --engine native` of
/// it, which must print `expected`; the two processes timed together,
/// one run each. Then the same with `--engine jit`, and with the residual
/// built ahead of time and the executable run.
fn specialized_secs(exe: &Path, source: &Path, env_file: &Path, residual: &Path, expected: &str) -> Specialized {
    let (pe, program) = timed(
        Command::new(exe)
            .args(["pe", "--linear", "--format", "readable", "--entry", "start", "--static"])
            .arg(format!("@{}", env_file.display()))
            .arg(source),
    );
    std::fs::write(residual, program).expect("the residual program written");
    let run = |engine: &str| {
        let (run, printed) = timed(Command::new(exe).args(["run", "--engine", engine]).arg(residual));
        assert_eq!(printed.trim(), expected, "the residual program prints another result under {engine}");
        pe + run
    };
    let executable = residual.with_extension("exe");
    let built = build_secs(exe, residual, &executable).map(|build| {
        let (secs, printed) = timed(&mut Command::new(&executable));
        assert_eq!(printed.trim(), expected, "the built residual program prints another result");
        (pe + build + secs, secs)
    });
    let _ = std::fs::remove_file(&executable);
    Specialized { native: run("native"), jit: run("jit"), built: built.map(|b| b.0), exe: built.map(|b| b.1) }
}

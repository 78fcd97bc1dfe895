//! The tracing JIT on the Part 4 bytecode interpreter
//! (examples/bytecode_traced.pl) running the square program on a large `a`
//! (a loop of eight bytecodes per step), against, in the same run:
//! - the same interpreter compiled ahead of time (the eight passes, then
//!   Cranelift): target at least 10 times slower than the JIT — the
//!   interpretive overhead is what tracing removes;
//! - the partial evaluator (bytecode and pc static) followed by native code:
//!   target, the JIT within 1.5 times of it;
//! - LuaJIT and PyPy running the same interpreter written in Lua and Python
//!   (bench/lua/bytecode.lua, bench/python/bytecode.py): target, faster than
//!   both. Their times are taken inside the scripts (no start-up).
//!
//! Then the JIT's latency: recording, optimization and compilation time per
//! recorded trace operation, for the traces of several programs.
//!
//!     cargo bench -p flowc-bench --bench jit
//!
//! JIT times include recording and compiling; AOT times exclude compiling.
//! `FLOWC_BENCH_SCALE` multiplies `a`.

use flowc_bench::peers::script_secs;
use std::hint::black_box;
use std::path::Path;

use flowc_bench::{compile_native, load, median_secs};
use flowc_lang::interp::Config;
use flowc_lang::syntax::prolog::parse_env;
use flowc_lang::{pe, Symbol, Value};
use flowc_trace::jit::{Jit, Options, Stats};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

const SQUARE: &str = "[mov_a_r0, mov_a_r1, mov_r0_a, decr_a, mov_a_r0, mov_r2_a, add_r1_to_a, mov_a_r2, mov_r0_a, \
                      jump_if_a, 2, mov_r2_a, return_a]";

fn row(name: &str, secs: Option<f64>, jit: f64, note: &str) {
    match secs {
        Some(s) => println!("{name:<12} {:>10.2} {:>12.2}   {note}", s * 1e3, s / jit),
        None => println!("{name:<12} {:>10} {:>12}   {note}", "-", "-"),
    }
}

/// The JIT's work on one program, run with its entry fact.
fn latency(file: &str) -> Stats {
    let w = load(file, None, None);
    let mut jit = Jit::new(&w.program, &w.lower(), Options::default());
    jit.run(w.entry, &w.env, &Config::default()).expect("runs");
    jit.stats().clone()
}

fn main() {
    let scale: i64 = std::env::var("FLOWC_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let a = 3_000_000 * scale;
    let expected = (a * a).to_string();
    flowc_codegen::with_stack(move || {
        let env = format!("[bytecode/{SQUARE}, pc/0, a/{a}, r0/0, r1/0, r2/0]");
        let w = load("../../examples/bytecode_traced.pl", Some("bytecode_loop"), Some(&env));
        let config = Config::default();

        let run_jit = || {
            let mut jit = Jit::new(&w.program, &w.lower(), Options::default());
            let out = jit.run(w.entry, &w.env, &config).expect("runs");
            (out.value, jit.stats().clone())
        };
        let (value, stats) = run_jit();
        assert_eq!(value.to_print_string(), expected);
        let t_jit = median_secs(5, || {
            black_box(run_jit());
        });

        let native = compile_native(&w.program, w.entry);
        assert_eq!(native.run(&w.env, config.max_depth).unwrap().value.to_print_string(), expected);
        let t_native = median_secs(3, || {
            black_box(native.run(&w.env, config.max_depth).unwrap());
        });

        let statics = parse_env(&format!("[bytecode/{SQUARE}, pc/0]")).unwrap();
        let residual = pe::specialize(&w.program, w.entry, &statics, pe::BLOCKS).expect("specializes");
        let program = residual.program(&w.program);
        let specialized = compile_native(&program, residual.entry);
        let dynamic: Vec<(Symbol, Value)> = parse_env(&format!("[a/{a}, r0/0, r1/0, r2/0]")).unwrap();
        assert_eq!(specialized.run(&dynamic, config.max_depth).unwrap().value.to_print_string(), expected);
        let t_pe = median_secs(5, || {
            black_box(specialized.run(&dynamic, config.max_depth).unwrap());
        });

        let t_lua = script_secs("luajit", "bench/lua/bytecode.lua", a, &expected);
        let t_pypy = script_secs("pypy3", "bench/python/bytecode.py", a, &expected);

        println!("the square program on a = {a} ({} bytecodes)", 8 * a + 5);
        println!("{:<12} {:>10} {:>12}   target", "engine", "ms", "÷ jit");
        row("jit", Some(t_jit), t_jit, "");
        row("native AOT", Some(t_native), t_jit, "at least 10");
        row("pe+native", Some(t_pe), t_jit, "at least 1/1.5 = 0.67");
        row("luajit", t_lua, t_jit, "above 1 (- when LuaJIT is missing)");
        row("pypy3", t_pypy, t_jit, "above 1 (- when PyPy is missing)");
        println!(
            "jit: {} traces, {} bridges, {} guard failures, compile {:.3} ms",
            stats.traces,
            stats.bridges,
            stats.guard_failures,
            stats.compile_time.as_secs_f64() * 1e3
        );

        println!();
        println!(
            "{:<22} {:>6} {:>8} {:>10} {:>12} {:>10} {:>14}",
            "latency", "ops", "opt ops", "total µs", "µs per op", "opt µs", "opt µs per op"
        );
        let show = |name: &str, s: &Stats| {
            let micros = (s.compile_time + s.record_time).as_secs_f64() * 1e6;
            let opt = s.optimize_time.as_secs_f64() * 1e6;
            let n = s.recorded_ops.max(1) as f64;
            println!(
                "{name:<22} {:>6} {:>8} {:>10.1} {:>12.2} {:>10.1} {:>14.2}",
                s.recorded_ops,
                s.optimized_ops,
                micros,
                micros / n,
                opt,
                opt / n
            );
        };
        show("bytecode (a above)", &stats);
        for file in [
            "../../examples/gcd.fg",
            "../../examples/interp_loop.fg",
            "../../examples/points.pl",
            "fibmod.fg",
            "nested.fg",
            "euclid.fg",
        ] {
            // The median of 5 runs, by total time.
            let mut runs: Vec<Stats> = (0..5).map(|_| latency(file)).collect();
            runs.sort_by_key(|s| s.compile_time + s.record_time);
            show(&Path::new(file).file_name().unwrap().to_string_lossy(), &runs[2]);
        }
    });
}

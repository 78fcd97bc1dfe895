//! The JIT on programs written the ways users write them, each at a size
//! where the reference interpreter runs for half a second or more:
//! - interpreters written in the language, each with its hint where the
//!   series puts it (on the interpreted program's backward jump), on the
//!   dispatch label, and absent (the JIT watches the loop headers it
//!   finds): the Part 4 bytecode interpreter, the dispatch-loop
//!   interpreter of examples/interp_loop.fg, and a stack machine whose
//!   operand stack is a chain of objects (examples/stack_machine.fg);
//! - every example (linked_list.fg's recursion 10^6 calls deep);
//! - the programs of tests/corpus/shapes in the shapes nobody tuned for: a
//!   position object replaced on both sides of an `if`, an object passed
//!   to a function every iteration, a branch inside a called function, a
//!   loop inside a function, a counter object updated in place, a linked
//!   list walked by a loop, a loop dispatching on the classes of objects
//!   it follows, a tree-walking interpreter (recursive functions over a
//!   tree of objects, its while loop going round through a call), a loop
//!   of eight independent branches (256 paths a round), a loop calling a
//!   function whose loop runs a data-dependent number of rounds, a loop
//!   entered at two blocks (no natural loop).
//!
//! Targets, per row:
//! - `÷ jit` (interpreter time over JIT time, recording and compiling
//!   included): at least 5;
//! - `÷ hinted` (JIT time over the same interpreter's with the hint on the
//!   backward jump): at most 1.5;
//! - `luajit`, `pypy3` (their time over the JIT's, running the same
//!   interpreter written in Lua and Python, bench/lua and bench/python,
//!   timed inside the scripts; `-` when not installed): above 1;
//! - `allocs/iter` (objects the JIT's run allocates per iteration, from
//!   runs at two sizes): 0 where no object escapes the loop.
//!
//! Then the cost of one guard exit that goes back to the interpreter (a
//! loop whose guard fails every other iteration, bridges off, against
//! the same loop with its bridge), and how often the interpreter stops
//! at hot spots.
//!
//!     cargo bench -p flowc-bench --bench jit_robust
//!
//! `FLOWC_BENCH_SCALE` multiplies the sizes; `FLOWC_BENCH_ONLY=name`
//! runs the rows whose name contains it.

use flowc_bench::peers::{cell, root, script_secs};
use std::time::Instant;

use flowc_lang::interp::{self, Config, Outcome};
use flowc_lang::syntax::prolog::parse_env;
use flowc_lang::{syntax, Program, Symbol};
use flowc_trace::jit::{self, Options};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

const SQUARE: &str = "[mov_a_r0, mov_a_r1, mov_r0_a, decr_a, mov_a_r0, mov_r2_a, add_r1_to_a, mov_a_r2, mov_r0_a, \
                      jump_if_a, 2, mov_r2_a, return_a]";
const STACK_CODE: &str = "[pushn, push, 0, over, add, swap, push, 1, sub, dup, jz, 15, swap, jmp, 3, pop, halt]";

/// Where the `can_enter_jit` hint goes.
#[derive(Copy, Clone, PartialEq)]
enum Hint {
    /// As the file has it.
    AsWritten,
    /// On this label instead.
    At(&'static str),
    /// None: the JIT watches loop headers.
    Absent,
}

struct Case {
    name: &'static str,
    file: &'static str,
    entry: &'static str,
    /// The environment, `{n}` standing for the size.
    env: &'static str,
    size: i64,
    hint: Hint,
    /// The family of interpreter-shaped programs (the same interpreter
    /// with its hint elsewhere), and the Lua/Python script of it.
    family: Option<&'static str>,
}

/// The deepest recursion the rows need (linked_list.fg's sum recurses once
/// per cell).
const MAX_DEPTH: usize = 2_000_000;

fn cases() -> Vec<Case> {
    let part4 = "[bytecode/SQUARE, pc/0, a/{n}, r0/0, r1/0, r2/0]";
    let interp_loop = "[code/[add,dec,jnz,0,halt], pc/0, n/{n}, acc/0]";
    let stack = "[code/STACK, n/{n}]";
    let c = |name, file, entry, env, size, hint, family| Case { name, file, entry, env, size, hint, family };
    vec![
        c(
            "part4 hint:jump",
            "examples/bytecode_traced.pl",
            "bytecode_loop",
            part4,
            400_000,
            Hint::AsWritten,
            Some("bytecode"),
        ),
        c(
            "part4 hint:dispatch",
            "examples/bytecode_traced.pl",
            "bytecode_loop",
            part4,
            400_000,
            Hint::At("bytecode_loop"),
            Some("bytecode"),
        ),
        c(
            "part4 no hint",
            "examples/bytecode_traced.pl",
            "bytecode_loop",
            part4,
            400_000,
            Hint::Absent,
            Some("bytecode"),
        ),
        c(
            "dispatch hint:jump",
            "examples/interp_loop.fg",
            "dispatch",
            interp_loop,
            2_000_000,
            Hint::At("jump"),
            Some("interp_loop"),
        ),
        c(
            "dispatch hint:dispatch",
            "examples/interp_loop.fg",
            "dispatch",
            interp_loop,
            2_000_000,
            Hint::AsWritten,
            Some("interp_loop"),
        ),
        c(
            "dispatch no hint",
            "examples/interp_loop.fg",
            "dispatch",
            interp_loop,
            2_000_000,
            Hint::Absent,
            Some("interp_loop"),
        ),
        c(
            "stack hint:jump",
            "examples/stack_machine.fg",
            "run",
            stack,
            300_000,
            Hint::AsWritten,
            Some("stack_machine"),
        ),
        c(
            "stack hint:dispatch",
            "examples/stack_machine.fg",
            "run",
            stack,
            300_000,
            Hint::At("dispatch"),
            Some("stack_machine"),
        ),
        c("stack no hint", "examples/stack_machine.fg", "run", stack, 300_000, Hint::Absent, Some("stack_machine")),
        c("bytecode.pl", "examples/bytecode.pl", "bytecode_loop", part4, 400_000, Hint::AsWritten, None),
        c("points.pl", "examples/points.pl", "start", "[n/{n}]", 4_000_000, Hint::AsWritten, None),
        c("fib.fg", "examples/fib.fg", "main", "[n/{n}]", 32, Hint::AsWritten, None),
        c("gcd.fg", "examples/gcd.fg", "start", "[n/{n}]", 2_000_000, Hint::AsWritten, None),
        c("linked_list.fg", "examples/linked_list.fg", "build", "[n/{n}]", 1_000_000, Hint::AsWritten, None),
        c("power.pl", "examples/power.pl", "power", "[x/1, y/{n}]", 20_000_000, Hint::AsWritten, None),
        c("promotion.pl", "examples/promotion.pl", "b", "[i/{n}, x/0]", 10_000_000, Hint::AsWritten, None),
        c("shapes/position", "tests/corpus/shapes/position.fg", "start", "[n/{n}]", 4_000_000, Hint::AsWritten, None),
        c(
            "shapes/object_to_function",
            "tests/corpus/shapes/object_to_function.fg",
            "start",
            "[n/{n}]",
            4_000_000,
            Hint::AsWritten,
            None,
        ),
        c(
            "shapes/inlined_branch",
            "tests/corpus/shapes/inlined_branch.fg",
            "start",
            "[i/0, s/0, n/{n}]",
            4_000_000,
            Hint::AsWritten,
            None,
        ),
        c(
            "shapes/function_loop",
            "tests/corpus/shapes/function_loop.fg",
            "start",
            "[k/3, n/{n}]",
            5_000_000,
            Hint::AsWritten,
            None,
        ),
        c(
            "shapes/entered_twice",
            "tests/corpus/shapes/entered_twice.fg",
            "start",
            "[n/{n}, c/1]",
            4_000_000,
            Hint::AsWritten,
            None,
        ),
        c(
            "shapes/counter_object",
            "tests/corpus/shapes/counter_object.fg",
            "start",
            "[n/{n}]",
            6_000_000,
            Hint::AsWritten,
            None,
        ),
        c(
            "shapes/list_walk",
            "tests/corpus/shapes/list_walk.fg",
            "start",
            "[n/1000, k/{n}]",
            20_000,
            Hint::AsWritten,
            None,
        ),
        c("shapes/tree_walk", "tests/corpus/shapes/tree_walk.fg", "start", "[n/{n}]", 400_000, Hint::AsWritten, None),
        c("shapes/branches", "tests/corpus/shapes/branches.fg", "start", "[n/{n}]", 2_000_000, Hint::AsWritten, None),
        c("shapes/collatz", "tests/corpus/shapes/collatz.fg", "start", "[n/{n}]", 100_000, Hint::AsWritten, None),
        c(
            "shapes/rebuild",
            "tests/corpus/shapes/rebuild.fg",
            "start",
            "[rounds/40, len/12, walks/{n}]",
            20_000,
            Hint::AsWritten,
            None,
        ),
        c(
            "shapes/class_dispatch",
            "tests/corpus/shapes/class_dispatch.fg",
            "start",
            "[n/{n}]",
            6_000_000,
            Hint::AsWritten,
            None,
        ),
    ]
}

/// The program text with its hint where `hint` says.
fn source(file: &str, hint: Hint) -> String {
    let text = std::fs::read_to_string(root().join(file)).expect("bench program is readable");
    let prolog = file.ends_with(".pl");
    let is_hint = |l: &str| l.starts_with("can_enter_jit");
    let mut lines: Vec<String> =
        text.lines().filter(|l| hint == Hint::AsWritten || !is_hint(l)).map(String::from).collect();
    if let Hint::At(label) = hint {
        // After the entry fact (readable directives come before blocks).
        let at = lines.iter().position(|l| l.starts_with("entry")).map_or(0, |k| k + 1);
        lines.insert(at, if prolog { format!("can_enter_jit({label}).") } else { format!("can_enter_jit {label}") });
    }
    lines.join("\n") + "\n"
}

fn env_text(case: &Case, n: i64) -> String {
    case.env.replace("{n}", &n.to_string()).replace("SQUARE", SQUARE).replace("STACK", STACK_CODE)
}

/// What a JIT run took and produced.
struct JitRun {
    secs: f64,
    outcome: Outcome,
    stats: jit::Stats,
}

fn config() -> Config {
    Config { max_depth: MAX_DEPTH, ..Config::default() }
}

fn run_jit(program: &Program, entry: Symbol, env: &[(Symbol, flowc_lang::Value)], options: Options) -> JitRun {
    let started = Instant::now();
    let module = flowc_frontend::lower(program, entry).expect("the entry exists");
    let (outcome, stats) = jit::run(program, &module, entry, env, &config(), options);
    JitRun { secs: started.elapsed().as_secs_f64(), outcome: outcome.expect("runs"), stats }
}

fn main() {
    let scale: i64 = std::env::var("FLOWC_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let only = std::env::var("FLOWC_BENCH_ONLY").ok();
    flowc_codegen::with_stack(move || {
        println!(
            "{:<24} {:>10} {:>9} {:>8} {:>8} {:>11} {:>8} {:>8}   jit's work",
            "program", "interp ms", "jit ms", "÷ jit", "÷ hinted", "allocs/iter", "luajit", "pypy3"
        );
        let mut hinted: std::collections::HashMap<&str, f64> = Default::default();
        for case in cases() {
            if only.as_deref().is_some_and(|o| !case.name.contains(o)) {
                continue;
            }
            let n = case.size * if case.name == "fib.fg" { 1 } else { scale };
            let program = syntax::parse(case.file, &source(case.file, case.hint)).unwrap_or_else(|e| panic!("{e}"));
            let entry = Symbol::intern(case.entry);
            let env = parse_env(&env_text(&case, n)).unwrap();
            let started = Instant::now();
            let expected = interp::run(&program, entry, &env, &config()).expect("runs");
            let t_interp = started.elapsed().as_secs_f64();
            let runs: Vec<JitRun> = (0..3).map(|_| run_jit(&program, entry, &env, Options::default())).collect();
            for r in &runs {
                assert_eq!(r.outcome.output(), expected.output(), "{}: the JIT prints another result", case.name);
            }
            let mut secs: Vec<f64> = runs.iter().map(|r| r.secs).collect();
            secs.sort_by(f64::total_cmp);
            let t_jit = secs[1];
            // Allocations per iteration: the JIT at twice the size.
            let per_iter = (case.name != "fib.fg" && case.name != "linked_list.fg").then(|| {
                let env2 = parse_env(&env_text(&case, 2 * n)).unwrap();
                let twice = run_jit(&program, entry, &env2, Options::default());
                (twice.outcome.allocations as f64 - runs[0].outcome.allocations as f64) / n as f64
            });
            // Each family's first row has the hint on the backward jump.
            let vs_hinted = case.family.and_then(|f| {
                if case.name.ends_with("hint:jump") {
                    hinted.insert(f, t_jit);
                }
                hinted.get(f).map(|h| t_jit / h)
            });
            let result = expected.value.to_print_string();
            let (lua, pypy) = match case.family {
                Some(f) => (
                    script_secs("luajit", &format!("bench/lua/{f}.lua"), n, &result).map(|t| t / t_jit),
                    script_secs("pypy3", &format!("bench/python/{f}.py"), n, &result).map(|t| t / t_jit),
                ),
                None => (None, None),
            };
            let s = &runs[0].stats;
            println!(
                "{:<24} {:>10.1} {:>9.2} {:>8.1} {:>8} {:>11} {:>8} {:>8}   {} traces, {} bridges, {} aborted, {} entries, {} exits to the driver",
                case.name,
                t_interp * 1e3,
                t_jit * 1e3,
                t_interp / t_jit,
                cell(vs_hinted),
                per_iter.map_or("-".into(), |x| format!("{x:.3}")),
                cell(lua),
                cell(pypy),
                s.traces + s.entry_traces,
                s.bridges,
                s.aborted,
                s.entries,
                s.guard_failures
            );
        }
        println!("targets: ÷ jit at least 5; ÷ hinted at most 1.5; luajit and pypy3 above 1; allocs/iter 0");
        guard_exit_cost();
    });
}

/// A loop whose guard fails every other iteration: with bridges off every
/// failure goes back to the interpreter, which runs the rest of the
/// iteration and enters the trace again; with bridges on none does. The
/// difference per failure is what a guard exit costs.
fn guard_exit_cost() {
    let src = "entry loop(i = 0, s = 0, n = 1000000)\n\nloop:\n    c = i < n\n    if c goto body else goto done\nbody:\n    \
               m = i % 2\n    if m goto odd else goto even\nodd:\n    s = s + i\n    goto next\neven:\n    s = s - 1\n    \
               goto next\nnext:\n    i = i + 1\n    goto loop\ndone:\n    print_and_stop(s)\n";
    let program = syntax::parse("alternating.fg", src).unwrap();
    let entry = Symbol::intern("loop");
    let env = program.entry_env(entry).unwrap().to_vec();
    let best = |options: Options| {
        let runs: Vec<JitRun> = (0..5).map(|_| run_jit(&program, entry, &env, options.clone())).collect();
        let secs = runs.iter().map(|r| r.secs).fold(f64::INFINITY, f64::min);
        (secs, runs.into_iter().next().unwrap().stats)
    };
    let (linked, _) = best(Options::default());
    let (exiting, stats) = best(Options { bridge_threshold: u32::MAX, judge_after: u64::MAX, ..Options::default() });
    let exits = stats.guard_failures.max(1) as f64;
    println!();
    println!(
        "guard exit to the interpreter and back in: {:.0} ns ({} exits; {:.2} ms with them, {:.2} ms with the bridge)",
        (exiting - linked) / exits * 1e9,
        stats.guard_failures,
        exiting * 1e3,
        linked * 1e3
    );
}

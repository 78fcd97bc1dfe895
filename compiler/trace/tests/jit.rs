//! The tracing JIT: which labels get hot, what a loop trace and a bridge
//! look like, and that runs under the JIT print what the interpreter prints.

use expect_test::expect;
use flowc_ir::Function;
use flowc_lang::interp::Config;
use flowc_lang::{syntax, Symbol, Value};
use flowc_trace::jit::{self, Jit, Options, Stats};

fn check_ir(f: &Function, after: &str) {
    if let Err(vs) = flowc_ir_checker::check(f) {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        panic!("trace IR invalid after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::function(f));
    }
}

fn options(threshold: u32, bridge_threshold: u32) -> Options {
    Options { threshold, bridge_threshold, inspect: Some(check_ir), ..Options::default() }
}

/// Odd and even iterations take different paths: the `if m` guard of the
/// loop trace fails every other iteration until it gets a bridge.
const ALTERNATING: &str = "\
entry loop(i = 0, s = 0)

loop:
    c = i < 1000
    if c goto body else goto done
body:
    m = i % 2
    if m goto odd else goto even
odd:
    s = s + i
    goto next
even:
    s = s - 1
    goto next
next:
    i = i + 1
    goto loop
done:
    print_and_stop(s)
";

fn start(program: &flowc_lang::Program) -> (Symbol, Vec<(Symbol, Value)>) {
    let label = program.default_entry().unwrap();
    (label, program.entry_env(label).unwrap().to_vec())
}

/// What running a program from its entry fact under the JIT showed.
struct Run {
    /// The JIT printed what the interpreter printed.
    agrees: bool,
    /// What the interpreter printed.
    expected: String,
    traces: Vec<String>,
    bridges: Vec<String>,
    stats: Stats,
}

/// Runs `source` under the interpreter and under the JIT with `options`.
fn run_jit(name: &str, source: &str, options: Options) -> Run {
    flowc_codegen::with_stack(|| {
        let program = syntax::parse(name, source).unwrap();
        let (label, env) = start(&program);
        let expected = flowc_lang::interp::run(&program, label, &env, &Config::default()).unwrap().value;
        let mut jit = Jit::new(&program, options);
        let out = jit.run(label, &env, &Config::default()).unwrap().value;
        Run {
            agrees: out.to_print_string() == expected.to_print_string(),
            expected: expected.to_print_string(),
            traces: jit.traces().iter().map(|(_, f)| flowc_ir::print::function(f)).collect(),
            bridges: jit.bridges().iter().map(|f| flowc_ir::print::function(f)).collect(),
            stats: jit.stats().clone(),
        }
    })
}

#[test]
fn loop_headers_are_hot_without_can_enter_jit() {
    let program = syntax::parse("t", ALTERNATING).unwrap();
    assert_eq!(jit::hot_labels(&program, Symbol::intern("loop")), vec![Symbol::intern("loop")]);
    let gcd = syntax::parse("gcd", &std::fs::read_to_string("../../examples/gcd.fg").unwrap()).unwrap();
    // `can_enter_jit outer` wins over the loop headers (`outer`, `inner`).
    assert_eq!(jit::hot_labels(&gcd, Symbol::intern("start")), vec![Symbol::intern("outer")]);
}

#[test]
fn a_guard_that_fails_often_gets_a_bridge() {
    let run = run_jit("t", ALTERNATING, options(3, 5));
    let (traces, bridges, stats) = (run.traces.join(""), run.bridges.join(""), run.stats);
    assert!(run.agrees);
    expect![[r#"
        trace loop(v0:i, v1:s, v2:c, v3:m) {
        b0:
            jump b1
        b1 loop:
            v5:m = phi [b0: v3, b1: 1]
            v6:s = phi [b0: v1, b1: v10]
            v7:i = phi [b0: v0, b1: v11]
            v8:c = lt.word v7, 1000
            guard_true v8, r0 else done
            v9:m = mod.word v7, 2
            guard_true v9, r1 else even
            v10:s = add.int v6, v7
            v11:i = add.word v7, 1
            jump b1
        resume r0 {
            frame [i = v7, s = v6, c = v8, m = v5]
        }
        resume r1 {
            frame [i = v7, s = v6, c = 1, m = v9]
        }
        }
    "#]]
    .assert_eq(&traces);
    expect![[r#"
        trace even(v0:i, v1:s, v2:c, v3:m) {
        b0:
            v4:s = sub v1, 1
            v5:i = add v0, 1
            exit r0 to loop
        resume r0 {
            frame [i = v5, s = v4, c = v2, m = v3]
        }
        }
    "#]]
    .assert_eq(&bridges);
    assert_eq!((stats.traces, stats.bridges), (1, 1));
    // After the bridge, odd iterations no longer reach the interpreter.
    assert!(stats.bridged > 400, "{stats}");
    assert!(stats.guard_failures - stats.bridged < 10, "{stats}");
}

/// `promote k` where k cycles through four values: the trace's guard_value
/// fails for the three values it was not recorded with; each gets its own
/// bridge, specialized to its value and found by it (a hash lookup, not a
/// chain of guards).
const PROMOTED: &str = "\
entry loop(i = 0, s = 0)

loop:
    c = i < 2000
    if c goto body else goto done
body:
    k = i % 4
    promote k then add
add:
    s = s + k
    i = i + 1
    goto loop
done:
    print_and_stop(s)
";

#[test]
fn guard_value_dispatches_to_one_bridge_per_value() {
    let run = run_jit("t", PROMOTED, options(3, 5));
    let (bridges, stats) = (run.bridges, run.stats);
    assert!(run.agrees);
    assert_eq!((stats.traces, stats.bridges), (1, 3), "{stats}");
    // Each bridge starts after the guard and runs for one value of k only,
    // so k is a constant in it.
    expect![[r#"
        trace add(v0:i, v1:s, v2:c, v3:k) {
        b0:
            v4:s = add v1, 0
            v5:i = add v0, 1
            exit r0 to loop
        resume r0 {
            frame [i = v5, s = v4, c = v2, k = 0]
        }
        }
        trace add(v0:i, v1:s, v2:c, v3:k) {
        b0:
            v4:s = add v1, 1
            v5:i = add v0, 1
            exit r0 to loop
        resume r0 {
            frame [i = v5, s = v4, c = v2, k = 1]
        }
        }
        trace add(v0:i, v1:s, v2:c, v3:k) {
        b0:
            v4:s = add v1, 2
            v5:i = add v0, 1
            exit r0 to loop
        resume r0 {
            frame [i = v5, s = v4, c = v2, k = 2]
        }
        }
    "#]]
    .assert_eq(&bridges.join(""));
    assert!(stats.guard_failures - stats.bridged < 25, "{stats}");
}

/// Under `--fuel`, compiled traces count one step per loop iteration, so a
/// run that needs more fuel than it has stops with `fuel_exhausted` even
/// inside compiled code — also on a JIT whose code was first compiled for
/// a run without fuel (it starts over with fuel checks).
#[test]
fn fuel_bounds_compiled_loops() {
    let ends = flowc_codegen::with_stack(|| {
        let p = syntax::parse("alternating.fg", ALTERNATING).unwrap();
        let entry = Symbol::intern("loop");
        let env = [(Symbol::intern("i"), Value::Int(0)), (Symbol::intern("s"), Value::Int(0))];
        let mut jit = Jit::new(&p, options(2, 2));
        let unlimited = jit.run(entry, &env, &Config::default()).map(|o| o.output()).map_err(|e| e.kind.term());
        let short = Config { fuel: Some(300), ..Config::default() };
        let limited = jit.run(entry, &env, &short).map(|o| o.output()).map_err(|e| e.kind.term());
        let enough = Config { fuel: Some(100_000), ..Config::default() };
        let generous = jit.run(entry, &env, &enough).map(|o| o.output()).map_err(|e| e.kind.term());
        (unlimited, limited, generous, jit.stats().traces)
    });
    let expected = flowc_lang::interp::run(
        &syntax::parse("alternating.fg", ALTERNATING).unwrap(),
        Symbol::intern("loop"),
        &[(Symbol::intern("i"), Value::Int(0)), (Symbol::intern("s"), Value::Int(0))],
        &Config::default(),
    )
    .unwrap()
    .output();
    assert_eq!(ends.0.as_deref(), Ok(expected.as_str()));
    assert_eq!(ends.1, Err("fuel_exhausted".to_owned()));
    assert_eq!(ends.2.as_deref(), Ok(expected.as_str()));
    assert!(ends.3 >= 2, "the loop was traced on both code caches ({} traces)", ends.3);
}

/// A loop trace assumes its loop-carried integers keep the sign they had
/// when it was compiled (so a counter stepping to a guard is a word). The
/// second round enters the inner loop with negative values: the trace
/// does not admit them, and the label gets a trace that assumes nothing.
/// (Every variable exists before the first loop, so both rounds enter
/// with the same environment shape.)
const SIGNS: &str = "\
entry start(total = 0, round = 0)

start:
    x = 100
    step = 1
    again = 1
    goto inner
inner:
    d = x == 0
    if d goto next else goto count
count:
    total = total + 1
    x = x - step
    goto inner
next:
    round = round + 1
    again = round < 2
    if again goto flip else goto done
flip:
    x = -100
    step = -1
    goto inner
done:
    print_and_stop(total)
";

#[test]
fn speculation_on_signs_is_checked_on_entry() {
    let run = run_jit("signs.fg", SIGNS, options(2, 1000));
    let (traces, stats) = (run.traces, run.stats);
    assert!(run.agrees && run.expected == "200", "{stats}");
    assert_eq!(stats.despecialized, 1, "{stats}");
    // The trace that replaced the speculating one assumes nothing: its
    // subtraction keeps its checks.
    assert!(traces.iter().any(|t| t.contains("sub ") || t.contains("sub.int")), "{traces:?}");
}

//! The tracing JIT: which labels get hot, what a loop trace and a bridge
//! look like, and that runs under the JIT print what the interpreter prints.

use expect_test::expect;
use flowc_ir::Function;
use flowc_lang::interp::Config;
use flowc_lang::{syntax, Symbol, Value};
use flowc_trace::jit::{self, Jit, Options, Resumed, Stats};

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
const ALTERNATING: &str = r#"entry loop(i = 0, s = 0)

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
"#;

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
        let module = flowc_frontend::lower(&program, label).unwrap();
        let mut jit = Jit::new(&program, &module, options);
        let out = jit.run(label, &env, &Config::default()).unwrap().value;
        Run {
            agrees: out.to_print_string() == expected.to_print_string(),
            expected: expected.to_print_string(),
            traces: jit.traces().iter().map(|(_, f)| flowc_ir::print::function(f)).collect(),
            bridges: jit.bridges().iter().map(|f| flowc_ir::print::function(f)).collect(),
            stats: jit.stats(),
        }
    })
}

/// Without `keep_ir` (as `flowc run` runs) a compiled trace keeps only
/// what its exits and bridges read: the run, its bridges (recorded from
/// the kept records) and its report are the same, and no trace keeps an
/// instruction.
#[test]
fn traces_without_their_ir_run_and_report_the_same() {
    let kept = run_jit("t", ALTERNATING, options(3, 5));
    let dropped = run_jit("t", ALTERNATING, Options { keep_ir: false, ..options(3, 5) });
    assert!(kept.agrees && dropped.agrees);
    assert_eq!(dropped.stats.bridges, kept.stats.bridges);
    assert!(kept.stats.bridges > 0, "{}", kept.stats);
    let ops = |s: &Stats| s.per_trace.iter().map(|t| (t.name.clone(), t.optimized_ops)).collect::<Vec<_>>();
    assert_eq!(ops(&dropped.stats), ops(&kept.stats));
    assert!(ops(&kept.stats).iter().all(|(_, n)| *n > 0), "{}", kept.stats);
    assert!(kept.traces.iter().any(|t| t.contains("guard_true")));
    assert!(dropped.traces.iter().chain(&dropped.bridges).all(|t| !t.contains("guard")), "{:?}", dropped.traces);
}

/// `--stats` says where the interpreter ran once the JIT started: each
/// stretch between two stops counted by what began it. Here every
/// statement the run interpreted is in one (the JIT starts at once), the
/// loop's guard leaves for the interpreter until its bridge exists, and
/// without a worker nothing waits for one.
#[test]
fn statements_interpreted_are_counted_by_what_sent_the_run_back() {
    flowc_codegen::with_stack(|| {
        let program = syntax::parse("t", ALTERNATING).unwrap();
        let (label, env) = start(&program);
        let module = flowc_frontend::lower(&program, label).unwrap();
        let mut jit = Jit::new(&program, &module, options(3, 5));
        let outcome = jit.run(label, &env, &Config::default()).unwrap();
        let stats = jit.stats();
        let seen = &stats.interpreted;
        assert_eq!(seen.total(), outcome.steps, "{stats}");
        assert!(seen.by(Resumed::Start) > 0 && seen.by(Resumed::Exit) > 0, "{stats}");
        assert_eq!(seen.by(Resumed::Waiting), 0, "{stats}");
        // A stretch after an exit follows a return of compiled code to the
        // driver.
        assert!(seen.stretches(Resumed::Exit) <= stats.guard_failures, "{stats}");
        assert!(seen.longest() <= seen.total());
    })
}

#[test]
fn loop_headers_are_hot_without_can_enter_jit() {
    let program = syntax::parse("t", ALTERNATING).unwrap();
    let module = flowc_frontend::lower(&program, Symbol::intern("loop")).unwrap();
    assert_eq!(jit::watched_labels(&program, &module), vec![(None, Symbol::intern("loop"))]);
    let gcd = syntax::parse("gcd", &std::fs::read_to_string("../../examples/gcd.fg").unwrap()).unwrap();
    let module = flowc_frontend::lower(&gcd, Symbol::intern("start")).unwrap();
    // `can_enter_jit outer` wins over the loop headers (`outer`, `inner`).
    assert_eq!(jit::watched_labels(&gcd, &module), vec![(None, Symbol::intern("outer"))]);
}

/// A cycle entered at two blocks (a `goto` into the loop's middle) has no
/// natural loop; the JIT watches it where a retreating edge enters it,
/// and compiles it.
#[test]
fn a_loop_entered_at_two_blocks_is_watched() {
    const ENTERED_TWICE: &str = r#"entry start(n = 1000, c = 1)

start:
    i = 0
    s = 0
    if c goto add else goto step
add:
    s = s + i
    goto step
step:
    i = i + 1
    more = i < n
    if more goto add else goto done
done:
    print_and_stop(s)
"#;
    let program = syntax::parse("t", ENTERED_TWICE).unwrap();
    let module = flowc_frontend::lower(&program, Symbol::intern("start")).unwrap();
    let watched = jit::watched_labels(&program, &module);
    assert_eq!(watched, vec![(None, Symbol::intern("add"))]);
    let run = run_jit("entered_twice", ENTERED_TWICE, options(10, 10));
    assert!(run.agrees, "{}", run.expected);
    assert_eq!(run.stats.traces, 1, "{}", run.stats);
    // The same cycle in a function: watched in that function's graph.
    let in_function = "entry start(n = 50)

function work(n, c):
    top:
        i = 0
        s = 0
        if c goto add else goto step
    add:
        s = s + i
        goto step
    step:
        i = i + 1
        more = i < n
        if more goto add else goto out
    out:
        return s

start:
    s = call work(n, 1) then done
done:
    print_and_stop(s)
";
    let program = syntax::parse("f", in_function).unwrap();
    let module = flowc_frontend::lower(&program, Symbol::intern("start")).unwrap();
    let watched = jit::watched_labels(&program, &module);
    assert_eq!(watched, vec![(Some(Symbol::intern("work")), Symbol::intern("add"))]);
}

/// The labels `watched_labels` watches in program `text` (started at
/// `start`).
fn watched_in(text: &str) -> Vec<String> {
    let program = syntax::parse("t", text).unwrap_or_else(|e| panic!("{e}"));
    let module = flowc_frontend::lower(&program, Symbol::intern("start")).unwrap();
    jit::watched_labels(&program, &module).into_iter().map(|(_, l)| l.as_str().to_string()).collect()
}

/// A loop whose hint follows its head (the test of the program's end
/// first, the promotion after the fetch) is watched where it promotes:
/// its keys are the positions. One that writes what it promotes first,
/// or does not promote, keeps its header.
#[test]
fn a_loop_is_watched_where_every_round_promotes() {
    let watched = |promote_at: &str| {
        let text = format!(
            "entry start(code = [1, 2, 0], pc = 0, acc = 0)
start:
    goto head
head:
    op = code[pc]
    more = op != 0
    if more goto body else goto done
body:
{promote_at}
run:
    acc = acc + op
    odd = acc % 2
    if odd goto bump else goto step
bump:
    acc = acc + 1
    goto step
step:
    pc = pc + 1
    goto head
done:
    print_and_stop(acc)
"
        );
        watched_in(&text)
    };
    assert_eq!(watched("    x = pc\n    promote pc then run"), ["body"]);
    assert_eq!(watched("    pc = pc + 0\n    promote pc then run"), ["head"], "it writes what it promotes");
    assert_eq!(watched("    goto run"), ["head"], "nothing promotes");
}

/// A promotion only some rounds pass (one arm of a branch) is not where
/// a loop is watched; one every round passes is, however many back
/// edges the loop has (each latch's dominators are walked once: `anchor`).
#[test]
fn a_loop_is_not_watched_where_only_some_rounds_promote() {
    let watched = |body: &str| {
        let text = format!(
            "entry start(code = [1, 2, 0], pc = 0, acc = 0)
start:
    goto head
head:
    op = code[pc]
    more = op != 0
    if more goto body else goto done
{body}
done:
    print_and_stop(acc)
"
        );
        watched_in(&text)
    };
    // Two back edges, both through `body`.
    let two_latches = "body:
    x = pc
    promote pc then run
run:
    odd = op % 2
    if odd goto back_odd else goto back_even
back_odd:
    acc = acc + op
    pc = pc + 1
    goto head
back_even:
    acc = acc - 1
    pc = pc + 1
    goto head";
    assert_eq!(watched(two_latches), ["body"]);
    // The promotion on one of the two ways back only.
    let one_arm = "body:
    odd = op % 2
    if odd goto back_odd else goto back_even
back_odd:
    x = pc
    promote pc then odd_on
odd_on:
    acc = acc + op
    pc = pc + 1
    goto head
back_even:
    acc = acc - 1
    pc = pc + 1
    goto head";
    assert_eq!(watched(one_arm), ["head"], "only odd rounds promote");
}

#[test]
fn a_guard_that_fails_often_gets_a_bridge() {
    let run = run_jit("t", ALTERNATING, options(3, 5));
    let (traces, bridges, stats) = (run.traces.join(""), run.bridges.join(""), run.stats);
    assert!(run.agrees);
    expect![[r#"
        trace loop(v0:i, v1:s) {
        b0:
            guard_int v0, 1, 2147483647, r2 else loop
            guard_int v1, -4611686018427387904, 4611686018427387903, r2 else loop
            v2:c = lt.word v0, 1000
            guard_true v2, r0 else done
            v3:m = mod.word v0, 2
            guard_true v3, r1 else even
            v4:s = add.int v1, v0
            v5:i = add.word v0, 1
            jump_trace 'loop.body'(v5, v4)
        resume r0 {
            frame [s = v1]
        }
        resume r1 {
            frame [i = v0, s = v1]
        }
        resume r2 {
            frame [i = v0, s = v1]
        }
        }
        trace 'loop.body'(v0:i, v1:s) {
        b0:
            jump b1
        b1 loop:
            v2:s = phi [b0: v1, b1: v6]
            v3:i = phi [b0: v0, b1: v7]
            v4:c = lt.word v3, 1000
            guard_true v4, r0 else done
            v5:m = mod.word v3, 2
            guard_true v5, r1 else even
            v6:s = add.int v2, v3
            v7:i = add.word v3, 1
            jump b1
        resume r0 {
            frame [s = v2]
        }
        resume r1 {
            frame [i = v3, s = v2]
        }
        }
    "#]]
    .assert_eq(&traces);
    expect![[r#"
        trace even(v0:i, v1:s) {
        b0:
            v2:s = sub.int v1, 1
            v3:i = add.word v0, 1
            guard_int v2, -4611686018427387904, 4611686018427388902, r0 else loop
            jump_trace 'loop.body'(v3, v2)
        resume r0 {
            frame [i = v3, s = v2]
        }
        }
    "#]]
    .assert_eq(&bridges);
    // The loop is not peeled (its iterations share no work): the guard
    // fails in the loop, and gets one bridge.
    assert_eq!((stats.traces, stats.bridges), (1, 1));
    // After the bridge, even iterations no longer leave machine code: the
    // guard continues in the bridge, which jumps back into the loop.
    assert_eq!(stats.direct_links(), 1, "{stats}");
    assert!(stats.guard_failures <= 5 * stats.bridges as u64 + 2, "{stats}");
}

/// `promote k` where k cycles through four values: the trace's guard_value
/// fails for the three values it was not recorded with; each gets its own
/// bridge, specialized to its value (its first operation guards it), and
/// each bridge's guard gets the next value's bridge: a chain, as in PyPy.
/// The guard is in two places — the preamble's iteration and the loop —
/// and each place gets the bridges of the values that fail it there;
/// every bridge jumps back into the loop.
const PROMOTED: &str = r#"entry loop(i = 0, s = 0)

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
"#;

#[test]
fn guard_value_dispatches_to_one_bridge_per_value() {
    let run = run_jit("t", PROMOTED, options(3, 5));
    let (bridges, stats) = (run.bridges, run.stats);
    assert!(run.agrees);
    // One value's bridge per place the guard is in — the preamble's
    // iteration and the loop (not peeled: its iterations share no work) —
    // and the chain.
    assert_eq!((stats.traces, stats.bridges), (1, 4), "{stats}");
    // Each bridge starts after the guard and runs for one value of k only,
    // so k is a constant in it.
    expect![[r#"
        trace add(v0:i, v1:s, v2:k) {
        b0:
            guard_value v2, 2, r0 else add
            v3:s = add.int v1, 2
            v4:i = add.word v0, 1
            jump_trace 'loop.body'(v4, v3)
        resume r0 {
            frame [i = v0, s = v1, k = v2]
        }
        }
        trace 'add.2'(v0:i, v1:s, v2:k) {
        b0:
            guard_value v2, 0, r0 else add
            v3:i = add.word v0, 1
            guard_int v1, -4611686018427387904, 4611686018427387906, r1 else loop
            jump_trace 'loop.body'(v3, v1)
        resume r0 {
            frame [i = v0, s = v1, k = v2]
        }
        resume r1 {
            frame [i = v3, s = v1]
        }
        }
        trace 'add.3'(v0:i, v1:s, v2:k) {
        b0:
            guard_value v2, 1, r0 else add
            v3:s = add.int v1, 1
            v4:i = add.word v0, 1
            guard_int v3, -4611686018427387904, 4611686018427387906, r1 else loop
            jump_trace 'loop.body'(v4, v3)
        resume r0 {
            frame [i = v0, s = v1, k = v2]
        }
        resume r1 {
            frame [i = v4, s = v3]
        }
        }
        trace 'add.4'(v0:i, v1:s, v2:k) {
        b0:
            guard_value v2, 2, r0 else add
            v3:s = add.int v1, 2
            v4:i = add.word v0, 1
            guard_int v3, -4611686018427387904, 4611686018427387906, r1 else loop
            jump_trace 'loop.body'(v4, v3)
        resume r0 {
            frame [i = v0, s = v1, k = v2]
        }
        resume r1 {
            frame [i = v4, s = v3]
        }
        }
    "#]]
    .assert_eq(&bridges.join(""));
    // Once the chain is built, every value stays in machine code: the
    // driver saw the bridge threshold's failures per bridge, and a few more.
    assert_eq!(stats.direct_links(), stats.bridges, "{stats}");
    assert!(stats.guard_failures <= 5 * stats.bridges as u64 + 10, "{stats}");
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
        let module = flowc_frontend::lower(&p, entry).unwrap();
        let mut jit = Jit::new(&p, &module, options(2, 2));
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

/// A loop trace assumes the integers its loop compares keep the sign they
/// had when it was compiled (so a counter stepping to a guard is a word):
/// its preheader checks them. The second round enters the inner loop with
/// negative values: the check fails, and after `retrace_threshold`
/// failures the check's bridge is the same loop traced again, assuming
/// nothing, which the interpreter enters directly from then on.
const SIGNS: &str = r#"entry start(total = 0, round = 0)

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
"#;

#[test]
fn speculation_on_signs_is_checked_on_entry() {
    let run = run_jit("signs.fg", SIGNS, options(2, 1000));
    let (traces, stats) = (run.traces, run.stats);
    assert!(run.agrees && run.expected == "200", "{stats}");
    assert_eq!(stats.retraces, 1, "{stats}");
    // Each loop is its preamble, then its loop.
    assert_eq!(traces.len(), 4, "{}", traces.join(""));
    assert!(traces[0].contains("guard_int"), "the first preamble speculates: {}", traces[0]);
    // The retrace assumes nothing: no check, and its subtraction keeps its
    // overflow check (where the speculating trace's had none).
    assert!(traces[0].contains("sub.word"), "{}", traces[0]);
    for t in &traces[2..] {
        assert!(!t.contains("guard_int"), "{t}");
        assert!(!t.contains("sub.word") && t.contains("= sub"), "{t}");
    }
}

/// A main graph of `loops` loops in sequence, each `rounds` rounds long,
/// run `passes` times; before each pass, when `hot` is given, a loop of
/// that many rounds the others run beside.
fn loops_in_sequence(loops: usize, rounds: u32, passes: u32, hot: Option<u32>) -> String {
    let mut text = String::from("entry pass(p = 0, i = 0, s = 0)\n\npass:\n    c = p < ");
    text += &format!("{passes}\n    if c goto h else goto done\n");
    match hot {
        Some(n) => {
            text += &format!("h:\n    c = i < {n}\n    if c goto hb else goto hd\n");
            text += "hb:\n    r = i % 3\n    s = s + r\n    i = i + 1\n    goto h\nhd:\n    i = 0\n    goto l0\n";
        }
        None => text += "h:\n    goto l0\n",
    }
    push_loops(&mut text, loops, rounds);
    text += &format!("l{loops}:\n    p = p + 1\n    goto pass\ndone:\n    print_and_stop(s)\n");
    text
}

/// Two loops of 100 rounds in turn, `passes` times (a hot phase that
/// fills a cache of two loops), then `loops` loops of `rounds` rounds
/// each in sequence.
fn hot_phase_then_loops(passes: u32, loops: usize, rounds: u32) -> String {
    let mut text = String::from("entry pass(p = 0, i = 0, s = 0)\n\npass:\n");
    text += &format!("    c = p < {passes}\n    if c goto a else goto l0\n");
    for (l, next) in [("a", "b"), ("b", "pass")] {
        text += &format!("{l}:\n    c = i < 100\n    if c goto {l}b else goto {l}d\n");
        text += &format!("{l}b:\n    s = s + 1\n    i = i + 1\n    goto {l}\n");
        let step = if next == "pass" { "    p = p + 1\n" } else { "" };
        text += &format!("{l}d:\n    i = 0\n{step}    goto {next}\n");
    }
    push_loops(&mut text, loops, rounds);
    text += &format!("l{loops}:\n    print_and_stop(s)\n");
    text
}

/// Writes loops `l0`.. `l{loops - 1}` of `rounds` rounds each, in
/// sequence, the last going on at `l{loops}`.
fn push_loops(text: &mut String, loops: usize, rounds: u32) {
    for k in 0..loops {
        *text += &format!("l{k}:\n    c = i < {rounds}\n    if c goto b{k} else goto d{k}\n");
        *text += &format!("b{k}:\n    r = i % {}\n    s = s + r\n    i = i + 1\n    goto l{k}\n", k + 2);
        *text += &format!("d{k}:\n    i = 0\n    goto l{}\n", k + 1);
    }
}

/// Room for two loops (a loop is two pieces: its preamble, then its
/// loop), judged after a few thousand statements, no budget.
fn small_cache() -> Options {
    Options { max_traces: 4, small_pieces_room: 1, full_window: 5_000, compile_allowance: None, ..options(50, 20) }
}

/// Loops that come after the cache is full, each run once: the code it
/// holds no longer runs, so it is dropped and the new loops compiled.
#[test]
fn a_full_cache_is_flushed_for_the_loops_that_come_later() {
    let run = run_jit("seq.fg", &loops_in_sequence(16, 3_000, 1, None), small_cache());
    let stats = run.stats;
    assert!(run.agrees, "{stats}");
    assert!(stats.flushes >= 3, "{stats}");
    // Far more loops than fit at once were compiled.
    assert!(stats.traces >= 8, "{stats}");
    // What is left is what the last flush let in.
    assert!(stats.per_trace.len() <= 4, "{stats}");
    // Without flushes, two loops: the first two.
    let refused =
        run_jit("seq.fg", &loops_in_sequence(16, 3_000, 1, None), Options { full_window: u64::MAX, ..small_cache() });
    assert!(refused.agrees);
    assert_eq!((refused.stats.flushes, refused.stats.traces), (0, 2), "{}", refused.stats);
}

/// A long hot phase, then loops that each run once: the cache fills
/// while the hot loop's code does the work, and is kept; the program
/// then moves on, and the next window judges the cache again, by what
/// ran in it alone (not held to the hot phase's work, which would keep
/// the cache until the interpreter had done as much).
#[test]
fn a_full_cache_is_judged_again_once_the_hot_phase_ends() {
    let run = run_jit("phases.fg", &hot_phase_then_loops(2_000, 16, 3_000), small_cache());
    let stats = run.stats;
    assert!(run.agrees, "{stats}");
    // Found full in the hot phase (its outer loop, its exits' bridges),
    // and kept then.
    assert!(stats.deferred > 0, "{stats}");
    assert!(stats.flushes >= 3, "{stats}");
    assert!(stats.traces >= 8, "{stats}");
}

/// A loop that keeps running while others come and go: the full cache
/// holds its code, which does most of the work, and is kept (the others
/// are held back) — until it stops running.
#[test]
fn a_full_cache_keeps_the_code_that_runs() {
    let kept = run_jit("hot.fg", &loops_in_sequence(8, 60, 40, Some(2_000)), small_cache());
    let stats = &kept.stats;
    assert!(kept.agrees, "{stats}");
    assert_eq!(stats.flushes, 0, "{stats}");
    assert!(stats.deferred > 0, "the cache was full: {stats}");
    let hot = stats.per_trace.iter().find(|t| t.start.contains("[h]") || t.start == "h").map(|t| t.iterations);
    assert!(hot.is_some_and(|n| n > 40_000), "the hot loop ran compiled: {stats}");
    // The same loops with no hot one beside them: the interpreter does
    // the work the cache's code does not, and it is flushed.
    let cold = run_jit("cold.fg", &loops_in_sequence(8, 60, 40, None), small_cache());
    assert!(cold.agrees);
    assert!(cold.stats.flushes > 0, "{}", cold.stats);
}

/// A guard inside a called function (followed into the loop trace)
/// resumes two frames: the callee's at the guard's label, the caller's
/// where its call continues. Each record keeps only what is live there
/// (`trace::ResumeLive`): the caller's `t`, written after the call before
/// anything reads it, is in none, while `s` and `i` are; the callee's
/// `m`, dead at both of its returns, is left out too (`x` is kept where
/// the guard leaves for `a`, which returns it).
#[test]
fn a_record_keeps_what_is_live_in_each_frame_it_resumes() {
    const CALLS: &str = r#"entry loop(i = 0, s = 0, t = 0)

function f(x):
    s0:
        m = x % 3
        if m goto a else goto b
    a:
        return x
    b:
        return 2

loop:
    c = i < 600
    if c goto body else goto done
body:
    t = i * 2
    r = call f(i) then after
after:
    t = r + 1
    s = s + t
    i = i + 1
    goto loop
done:
    print_and_stop(s)
"#;
    let run = run_jit("calls", CALLS, options(3, 1000));
    assert!(run.agrees, "{}", run.expected);
    let traces = run.traces.join("");
    let frames: Vec<&str> = traces.lines().map(str::trim).filter(|l| l.starts_with("frame")).collect();
    let caller = frames.iter().find(|l| l.ends_with("call r then after")).unwrap_or_else(|| panic!("{traces}"));
    assert!(caller.contains("s = ") && caller.contains("i = "), "{caller}");
    assert!(!caller.contains("t = "), "t is dead where the call continues: {caller}");
    let callee: Vec<&&str> = frames.iter().filter(|l| l.starts_with("frame f ")).collect();
    assert!(!callee.is_empty(), "{traces}");
    assert!(callee.iter().all(|l| !l.contains("m = ")), "m is dead at the guard's labels: {callee:?}");
}

//! The JIT on the shapes programs take (examples/ and tests/corpus/shapes/):
//! hot spots keyed by promoted values, traces that jump into other traces,
//! objects kept virtual round loops, recursive functions, loops inside
//! functions, bridges of guards in inlined frames, and the hot spots the
//! JIT gives up on. Each run also checks the output against the
//! interpreter's, and the IR checker runs on every trace and bridge.

use expect_test::expect;
use flowc_lang::interp::Config;
use flowc_lang::syntax::prolog::parse_env;
use flowc_lang::{syntax, Program, Symbol, Value};
use flowc_trace::jit::{Jit, Options, Stats, CALL_BRIDGES};

fn check_ir(f: &flowc_ir::Function, after: &str) {
    if let Err(vs) = flowc_ir_checker::check(f) {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        panic!("trace IR invalid after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::function(f));
    }
}

/// The JIT's options for these tests, the IR checked after every step.
/// They show the code specialized to an interpreted program's positions,
/// so without the dispatch tier, the dispatch loop compiled for any
/// position (its traces would be among those shown, and its runs among
/// the entries counted): `jit_tier.rs` shows that.
fn checked() -> Options {
    Options { inspect: Some(check_ir), dispatch_tier: false, ..Options::default() }
}

fn source(path: &str) -> String {
    std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Where the `can_enter_jit` hint goes.
#[derive(Copy, Clone, Debug)]
enum Hint {
    AsWritten,
    At(&'static str),
    Absent,
}

/// The program `text` (from `path`) with its `can_enter_jit` hints as
/// `hint` says.
fn program(path: &str, text: &str, hint: Hint) -> Program {
    use flowc_lang::ast::Item;
    let mut p = syntax::parse(path, text).unwrap();
    let label = match hint {
        Hint::AsWritten => return p,
        Hint::At(l) => Some(Item::CanEnterJit(Symbol::intern(l))),
        Hint::Absent => None,
    };
    p.items.retain(|i| !matches!(i, Item::CanEnterJit(_)));
    p.items.extend(label);
    p
}

/// What a JIT run showed.
struct Run {
    output: String,
    allocations: u64,
    traces: Vec<String>,
    bridges: Vec<String>,
    stats: Stats,
    log: String,
}

/// Runs the program at `path` (its hint as `hint` says) from `entry` with
/// `env` (list syntax; `None`: the entry fact's) under the JIT and under
/// the interpreter, which must agree.
fn run(path: &str, hint: Hint, entry: &str, env: Option<&str>, options: Options) -> Run {
    run_text(path, &source(path), hint, entry, env, options)
}

/// [`run`] on program `text` (named `path`).
fn run_text(path: &str, text: &str, hint: Hint, entry: &str, env: Option<&str>, options: Options) -> Run {
    run_text_with(path, text, hint, entry, env, options, &Config::default())
}

/// [`run_text`], the JIT running under `config` (fuel, so that a run the
/// JIT would not end fails instead of hanging).
fn run_text_with(
    path: &str,
    text: &str,
    hint: Hint,
    entry: &str,
    env: Option<&str>,
    options: Options,
    config: &Config,
) -> Run {
    flowc_codegen::with_stack(|| {
        let program = &program(path, text, hint);
        let entry = Symbol::intern(entry);
        let env: Vec<(Symbol, Value)> = match env {
            Some(text) => parse_env(text).unwrap(),
            None => program.entry_env(entry).unwrap().to_vec(),
        };
        let expected = flowc_lang::interp::run(program, entry, &env, &Config::default()).unwrap().output();
        let module = flowc_frontend::lower(program, entry).unwrap();
        let mut jit = Jit::new(program, &module, options);
        let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        jit.set_log(Box::new(Shared(log.clone())));
        let outcome = jit.run(entry, &env, config).unwrap();
        assert_eq!(outcome.output(), expected, "the JIT prints what the interpreter prints");
        let log = String::from_utf8(log.borrow().clone()).unwrap();
        Run {
            output: outcome.output(),
            allocations: outcome.allocations,
            traces: jit.traces().iter().map(|(_, f)| flowc_ir::print::function(f)).collect(),
            bridges: jit.bridges().iter().map(|f| flowc_ir::print::function(f)).collect(),
            stats: jit.stats(),
            log,
        }
    })
}

/// A log sink the test can read after the JIT is done with it.
struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The loop block of a run's first loop trace: the last block of the loop
/// its preamble jumps to, after its peeled iteration (to the resume
/// records).
fn loop_part(traces: &[String]) -> &str {
    let body = traces.iter().find(|t| t.starts_with("trace '") && t.contains(".body'(")).expect("a loop");
    let block = if body.contains("\nb2 ") { "\nb2 " } else { "\nb1 " };
    let start = body.match_indices(block).next().map_or(0, |(k, _)| k);
    let end = body.find("\nresume ").unwrap_or(body.len());
    &body[start..end]
}

const INTERP_LOOP: &str = "examples/interp_loop.fg";
const INTERP_ENV: &str = "[code/[add, dec, jnz, 0, halt], pc/0, n/5000, acc/0]";

/// PyPy's pattern: the hint on the dispatch label, the pc promoted there.
/// The hot spots are the label with each pc; recording from one goes on
/// through the others, so one trace runs the whole interpreted loop; the
/// bytecode reads and dispatch tests are done once, in the peeled first
/// iteration. The trace is anchored where the interpreted loop begins,
/// pc 0, the target of its `jnz`: pc 1 gets hot first, and its recording,
/// jumping back across it to pc 0, is recorded again from there.
#[test]
fn a_dispatch_loop_unrolls_into_the_interpreted_programs_loop() {
    let r = run(INTERP_LOOP, Hint::AsWritten, "dispatch", Some(INTERP_ENV), checked());
    assert_eq!(r.output, "12502500\n");
    assert_eq!((r.stats.traces, r.stats.bridges, r.stats.entries), (1, 0, 1), "{}", r.stats);
    assert_eq!(r.stats.reheaded, 1, "{}", r.stats);
    assert!(r.stats.per_key.iter().any(|k| k.key == "dispatch[pc=0]" && k.state == "compiled"), "{}", r.stats);
    expect![[r#"

        b1 dispatch:
            v2:acc = phi [b0: v1, b1: v4]
            v3:n = phi [b0: v0, b1: v5]
            v4:acc = add.int v2, v3
            v5:n = sub.word v3, 1
            guard_true v5, r0 else dispatch
            jump b1"#]]
    .assert_eq(loop_part(&r.traces));
}

/// The same interpreter with the hint on its backward jump, and with no
/// hint (the JIT watches `dispatch`, the loop header it finds): each gets
/// one trace of the interpreted loop whose loop block does the program's
/// arithmetic and nothing of the dispatch (the trace anchored at the jump
/// keeps one guard on the jump target, read once).
#[test]
fn the_dispatch_loop_is_traced_alike_wherever_the_hint_is() {
    let reference = run(INTERP_LOOP, Hint::AsWritten, "dispatch", Some(INTERP_ENV), checked());
    for hint in [Hint::At("jump"), Hint::Absent] {
        let r = run(INTERP_LOOP, hint, "dispatch", Some(INTERP_ENV), checked());
        assert_eq!((r.stats.traces, r.stats.bridges), (1, 0), "hint {hint:?}: {}", r.stats);
        let ops = |t: &[String]| loop_part(t).lines().filter(|l| l.contains(" = ") && !l.contains("phi")).count();
        assert_eq!(ops(&r.traces), ops(&reference.traces), "hint {hint:?}:\n{}", r.traces.join(""));
        let body = loop_part(&r.traces);
        assert!(!body.contains("readlist") && !body.contains(" eq "), "hint {hint:?}:\n{body}");
        let t = &r.stats.per_trace[0];
        assert!(t.iterations > 1000 * t.entries, "hint {hint:?}: {}", r.stats);
    }
}

/// The BF interpreter of the JIT's benchmark: `n = len(prog)` is set once
/// and never written again, and every instruction tests `pc < n` at its
/// promoted `pc`. A variable a loop passes on unchanged and compares with
/// several values is pinned: the preamble checks its value, and in the
/// loop, its records and the bridges recorded from them it is a constant
/// (the loop takes no `n`). No test is left in the loop or its bridges,
/// and the records hold the tests' outcome (`more = 1`). Each BF
/// instruction is its tape work alone, and of `++`'s two writes of the
/// cell only the last is left (`stores.rs`), and its two steps `(v + 1)
/// mod 256` are one, `(v + 2) mod 256` (`Opt::modular_sum`). The loop `[>+>++<<-]` comes
/// back to the cell it started at: assumed to every iteration (checked
/// once, in the peeled first iteration), it finds its two other cells
/// once, and each iteration is the three cells' arithmetic.
#[test]
fn an_interpreters_position_tests_fold_in_its_loop() {
    // `+++++++[>+++++++[>+++++++[>+>++<<-]<-]<-]>>>.`: prints 7^3 mod 256.
    let env = "[prog/[43,43,43,43,43,43,43,91,62,43,43,43,43,43,43,43,91,62,43,43,43,43,43,43,43,91,62,43,62,43,43,60,60,45,93,60,45,93,60,45,93,62,62,62,46],map/[0,0,0,0,0,0,0,40,0,0,0,0,0,0,0,0,37,0,0,0,0,0,0,0,0,34,0,0,0,0,0,0,0,0,25,0,0,16,0,0,7,0,0,0,0]]";
    // Skips off: the inner loop is a counted loop that states its skip,
    // and its exits wait for the loop around to be recorded (with the
    // skip) instead of getting the bridges this test reads.
    let options = Options { skip_inner: false, ..checked() };
    let r = run("tests/corpus/interpreters/bf_tutorial.fg", Hint::AsWritten, "start", Some(env), options);
    assert_eq!(r.output, "87\n");
    let lp = loop_part(&r.traces);
    assert!(!lp.contains(" lt"), "{lp}");
    let body = r.traces.iter().find(|t| t.starts_with("trace 'dispatch.body'(")).expect("a loop");
    assert!(body.starts_with("trace 'dispatch.body'(v0:tape, v1:sum)"), "{body}");
    assert!(r.stats.bridges > 0, "{}", r.stats);
    for t in r.traces.iter().filter(|t| !t.starts_with("trace dispatch(")) {
        assert!(!t.contains(" lt"), "only the preamble tests positions:\n{t}");
    }
    expect![[r#"

        b2 dispatch:
            v40:v = get.object v3, v
            v41:v = add.word v40, 1
            v42:v = mod.word v41, 256
            set.object v3, v, v42
            v43:v = get.object v8, v
            v44:v = add.word v43, 2
            v45:v = mod.word v44, 256
            set.object v8, v, v45
            v46:v = get.object v0, v
            v47:v = sub.word v46, 1
            v48:v = mod.word v47, 256
            set.object v0, v, v48
            guard_true v48, r8 else next
            jump b2"#]]
    .assert_eq(lp);
}

/// A walk out and back over cells linked both ways: the way back reaches
/// cells the way out passed, which a straight trace assumes after each
/// link's class guard (`eq` of the cell read and the one held,
/// `guard_true` leaving at the label the recording went on to). A loop
/// that does not run to its end at once keeps no such assumption in its
/// iterations: halfway the middle cell's link is turned, and a loop
/// assuming it would leave through a bridge at every walk from then on.
/// It assumes where they lie instead (the cells were made one after
/// another, so they are the heap's row, `opt::row`): one `guard_row` for
/// the walk, two cells out and two back to the start; the link back to
/// the middle cell is the cell the way out found there, both their
/// `guard_at`s kept to check it (`opt::walk`, places). The turn empties
/// the row (the heap sees the write), the guard fails at every walk, and
/// the loop is recorded again assuming nothing there. The output is the
/// interpreter's.
#[test]
fn links_that_come_back_are_assumed_and_checked() {
    let r = run("tests/corpus/shapes/links_back.fg", Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "500001500\n");
    let preamble = r.traces.iter().find(|t| t.starts_with("trace walk(")).expect("the preamble");
    assert!(preamble.contains("else left2\n"), "the way back checked:\n{preamble}");
    let body = r.traces.iter().find(|t| t.starts_with("trace 'walk.body'(")).expect("the loop");
    assert!(!body.contains("eq.word"), "the loop assumes no link:\n{body}");
    assert!(r.log.contains("finds a link laid out otherwise: walk recorded again"), "{}", r.log);
    expect![[r#"

        b1 walk:
            v6:p = phi [b0: v5, b1: v1]
            v7:n = phi [b0: v0, b1: v21]
            v8:at = eq v7, v4
            guard_false v8, r0 else turn
            v9:r = get.object v6, r
            guard_link v9, cell, r0 else out2
            guard_row v6, 0, 112, cell, r, l, 56, row 0, r1 else right1
            v10:r = guard_at v9, v6, 56, r1 else right1
            v11:r = get.object v10, r
            guard_link v11, cell, r2 else count
            v12:r = guard_at v11, v6, 112, r3 else right2
            v13:v = get.object v12, v
            v14:v = add.int v13, 1
            set.object v12, v, v14
            v15:l = get.object v12, l
            guard_link v15, cell, r4 else back2
            v16:l = guard_at v15, v6, 56, r5 else left1
            v17:l = get.object v10, l
            guard_link v17, cell, r2 else next
            v18:l = guard_at v17, v6, 0, r6 else left2
            v19:w = get.object v6, v
            v20:w = add.int v19, 1
            set.object v6, v, v20
            v21:n = sub.word v7, 1
            guard_true v21, r7 else done
            jump b1"#]]
    .assert_eq(loop_part(&r.traces));
}

/// A loop that runs to its end at once keeps its links: BF's `[->>+<<]`
/// under the tutorial interpreter finds its far cell and comes back to
/// its own in the peeled iteration, which checks the way back, skips the
/// iterations but the last, and the loop left is the two cells'
/// arithmetic.
#[test]
fn a_loop_that_runs_to_its_end_at_once_keeps_its_links() {
    // 200 `+`, then `[->>+<<]>>.`: prints the checksum of 200.
    let mut prog: Vec<String> = vec!["43".into(); 200];
    prog.extend(["91", "45", "62", "62", "43", "60", "60", "93", "62", "62", "46"].map(String::from));
    let mut map = vec!["0".to_string(); prog.len()];
    (map[200], map[207]) = ("207".into(), "200".into());
    let env = format!("[prog/[{}],map/[{}]]", prog.join(","), map.join(","));
    let r = run("tests/corpus/interpreters/bf_tutorial.fg", Hint::AsWritten, "start", Some(&env), checked());
    assert_eq!(r.output, "200\n");
    let body = r.traces.iter().find(|t| t.starts_with("trace 'dispatch.body'(")).expect("the loop");
    assert!(body.contains("else left\n") && body.contains("iterations"), "{body}");
    expect![[r#"

        b2 dispatch:
            v27:v = get.object v0, v
            v28:v = sub.word v27, 1
            v29:v = mod.word v28, 256
            set.object v0, v, v29
            v30:v = get.object v7, v
            v31:v = add.word v30, 1
            v32:v = mod.word v31, 256
            set.object v7, v, v32
            guard_true v29, r7 else next
            jump b2"#]]
    .assert_eq(loop_part(&r.traces));
}

/// A variable the loop never writes and compares once (here with a
/// constant) is not pinned, but it keeps what the preamble proved of it:
/// `5 < n` is decided in the loop, which assumes `n >= 6`.
#[test]
fn a_loop_keeps_what_its_preamble_proved_of_an_unchanged_variable() {
    let text = r#"entry start(n = 50, m = 3000)
start:
    s = 0
    goto head
head:
    if m goto body else goto done
body:
    t = 5 < n
    if t goto add else goto step
add:
    s = s + 2
    goto step
step:
    m = m - 1
    goto head
done:
    print_and_stop(s)
"#;
    let r = run_text("unchanged.fg", text, Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "6000\n");
    let body = r.traces.iter().find(|t| t.starts_with("trace '") && t.contains(".body'(")).expect("a loop");
    assert!(body.lines().next().is_some_and(|l| l.contains(":n")), "n stays a parameter:\n{body}");
    let lp = loop_part(&r.traces);
    assert!(!lp.contains(" lt") && !lp.contains(" gt"), "{}", r.traces.join(""));
}

/// An entry trace pins a variable it compares twice and passes on to
/// the loop it jumps into (`g`, here changed by every round of the outer
/// loop): it is entered only with the value it pinned. Its check failing
/// would otherwise get a bridge that arrives at the same entry trace
/// again, and again (a generated program ran so until its fuel ran out).
#[test]
fn an_entry_trace_is_entered_only_with_the_values_it_pins() {
    let text = r#"entry start(r = 40)
start:
    g = 100
    s = 0
    goto round
round:
    a = g < 1000
    b = g > 5
    if a goto setup else goto done
setup:
    k = 30
    goto inner
inner:
    s = s + g
    k = k - 1
    if k goto inner else goto after
after:
    g = g - 1
    r = r - 1
    if r goto round else goto done
done:
    print_and_stop(s)
"#;
    let options = Options { threshold: 1, bridge_threshold: 1, ..checked() };
    let fuel = Config { fuel: Some(1_000_000), ..Config::default() };
    let r = run_text_with("pinned_entry.fg", text, Hint::Absent, "start", None, options, &fuel);
    assert_eq!(r.output, "96600\n");
    let entry = r.traces.iter().find(|t| t.starts_with("trace round(")).expect("an entry trace from round");
    assert!(entry.contains("guard_int v1, 100, 100,"), "g pinned:\n{entry}");
    assert!(entry.contains("jump_trace 'inner.body'("), "it jumps into the loop:\n{entry}");
}

/// A loop's entry checks leave by one shared record; the first pins `x`
/// (passed on unchanged, compared with two values). A check after it
/// knows `x` is 5, the pinning check itself does not: each guard's record
/// is resolved where it stands, so entering with another `x` (every
/// seventh round bumps it) fails the pin with the real `x`. Resolved once
/// for all (a generated program found it), the failing pin resumed with
/// `x = 5` and the run printed a wrong sum.
#[test]
fn a_check_that_fails_its_pin_resumes_with_the_real_value() {
    let text = r#"entry start(n = 60)
start:
    x = 5
    s = 0
    i = n
    goto head
head:
    c = x >= 3
    d = x >= i
    if i goto body else goto done
body:
    s = s + x
    i = i - 1
    t = i % 7
    if t goto head else goto bump
bump:
    x = x + 1
    goto head
done:
    print_and_stop(s)
"#;
    let options = Options { threshold: 2, bridge_threshold: 2, ..checked() };
    let fuel = Config { fuel: Some(1_000_000), ..Config::default() };
    // The run asserts the interpreter's output.
    let r = run_text_with("shared_record.fg", text, Hint::Absent, "start", None, options, &fuel);
    let pinned = r.traces.iter().any(|t| t.contains("guard_int v0, 5, 5,"));
    assert!(pinned, "x pinned at 5:\n{}", r.traces.join("\n"));
}

/// A loop whose recorded iteration ended at the object it started with
/// (`cur` goes two links round a cycle of two, reading fields of both:
/// eight reads, enough to be worth it) assumes it always does:
/// the loop checks, at its end, that it came back, and reads what it
/// reaches from `cur` once. Halfway, the cycle is made one of three: the
/// check fails, the run leaves with the object it did reach, and the
/// output is the interpreter's.
#[test]
fn a_loop_that_assumes_an_object_comes_back_leaves_when_it_does_not() {
    let text = r#"entry start(n = 300)
start:
    a = new node
    b = new node
    c = new node
    a.next = b
    b.next = a
    c.next = a
    a.v = 1
    b.v = 10
    c.v = 100
    a.u = 2
    b.u = 20
    c.u = 200
    a.t = 3
    b.t = 30
    c.t = 300
    cur = a
    s = 0
    i = n
    goto loop
loop:
    if i goto body else goto done
body:
    p = cur.next
    w = p.v
    s = s + w
    w = p.u
    s = s + w
    w = cur.v
    s = s + w
    w = cur.u
    s = s + w
    w = p.t
    s = s + w
    w = cur.t
    s = s + w
    cur = p.next
    i = i - 1
    k = i == 150
    if k goto relink else goto loop
relink:
    b.next = c
    goto loop
done:
    print_and_stop(s)
"#;
    let options = Options { threshold: 2, bridge_threshold: 2, ..checked() };
    // The run asserts the interpreter's output.
    let r = run_text("cycle.fg", text, Hint::Absent, "start", None, options);
    let body = r.traces.iter().find(|t| t.starts_with("trace 'loop.body'(")).expect("a loop");
    let checks = body.lines().any(|l| l.contains(" = eq.word v") && l.ends_with(", v2"));
    assert!(checks, "the loop checks that cur (v2) came back:\n{body}");
    let lp = loop_part(std::slice::from_ref(body));
    assert!(!lp.contains("get"), "nothing read through cur in the loop:\n{lp}");
}

/// A loop that reads a field of an object (`WRITE` is blank) or reads and
/// writes it.
fn field_loop(write: &str) -> String {
    let body = r#"entry start(n = 3000)
start:
    box = new config
    box.step = 3
    s = 0
    goto head
head:
    if n goto body else goto done
body:
    k = box.step
    s = s + k
    n = n - 1
WRITE    goto head
done:
    print_and_stop(s)
"#;
    body.replace("WRITE", write)
}

/// A loop that reads a field of an object it does not change: the loop is
/// peeled (its first iteration reads the field, the loop reuses it), where
/// a loop without such work is not (`jit.rs`,
/// `a_guard_that_fails_often_gets_a_bridge`); a loop that also writes the
/// field (of that object only) carries it round in a phi, and reads it
/// no more either.
#[test]
fn a_loop_is_peeled_when_its_iterations_reuse_work() {
    let r = run_text("invariant.fg", &field_loop(""), Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "9000\n");
    let body = r.traces.iter().find(|t| t.starts_with("trace '") && t.contains(".body'(")).expect("a loop");
    assert!(body.contains("\nb2 "), "peeled:\n{body}");
    let lp = loop_part(&r.traces);
    // (Reads and writes in either form: `get.object` where the box is
    // known to be an object.)
    let (gets, sets) = (|t: &str| t.contains(" = get"), |t: &str| t.contains("    set"));
    assert!(gets(body) && !gets(lp), "the field is read once, before the loop:\n{body}");

    let r = run_text("written.fg", &field_loop("    box.step = k\n"), Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "9000\n");
    let lp = loop_part(&r.traces);
    assert!(sets(lp) && !gets(lp), "the field is carried:\n{}", r.traces.join(""));
}

/// Without a hint both of gcd.fg's loops are watched; the inner one gets
/// hot first. The bridge of its exit runs round the outer loop and jumps
/// back into it: from then on the run stays in machine code.
#[test]
fn a_bridge_jumps_back_into_compiled_code() {
    let r = run("examples/gcd.fg", Hint::Absent, "start", Some("[n/2000]"), checked());
    assert_eq!((r.stats.traces, r.stats.bridges), (1, 1), "{}", r.stats);
    assert_eq!(r.stats.direct_links(), 1, "{}", r.stats);
    assert!(r.stats.guard_failures < 30, "{}", r.stats);
}

/// With bridges slow to come, the outer loop gets hot too; recording from
/// it stops where it reaches the inner loop's code: an entry trace, which
/// runs a copy of the inner loop trace's preamble and jumps into its loop.
#[test]
fn a_recording_that_reaches_compiled_code_jumps_into_it() {
    let options = Options { bridge_threshold: 1000, ..checked() };
    let r = run("examples/gcd.fg", Hint::Absent, "start", Some("[n/2000]"), options);
    assert_eq!(r.stats.entry_traces, 1, "{}", r.stats);
    let entry = r.traces.iter().find(|t| t.starts_with("trace outer")).expect("a trace from outer");
    assert!(entry.contains("jump_trace 'inner.body'("), "{entry}");
}

/// Objects that flow round the loop stay virtual: the point of points.pl,
/// the stack machine's operand cells and the position replaced on both
/// sides of an `if` are allocated only before the loop gets hot — as many
/// at twice the size.
#[test]
fn objects_carried_round_loops_stay_virtual() {
    let code = "[pushn, push, 0, over, add, swap, push, 1, sub, dup, jz, 15, swap, jmp, 3, pop, halt]";
    for (path, entry, env) in [
        ("examples/points.pl", "start", "[n/N]"),
        ("examples/stack_machine.fg", "run", "[code/CODE, n/N]"),
        // Half the iterations leave the loop for a bridge, which runs a
        // copy of the preamble and jumps back into the loop with the
        // position's fields.
        ("tests/corpus/shapes/position.fg", "start", "[n/N]"),
    ] {
        let at = |n: u64| {
            let env = env.replace('N', &n.to_string()).replace("CODE", code);
            run(path, Hint::AsWritten, entry, Some(&env), checked()).allocations
        };
        let (small, large) = (at(1000), at(2000));
        assert_eq!(small, large, "{entry}: {small} allocations for 1000 iterations, {large} for 2000");
        assert!(small < 1000, "{entry}: {small}");
    }
}

/// fib.fg has no loop: its recursive function's calls are the hot spot,
/// and once hot they run the function compiled.
#[test]
fn a_recursive_function_runs_compiled() {
    let r = run("examples/fib.fg", Hint::AsWritten, "main", Some("[n/20]"), checked());
    assert_eq!(r.output, "6765\n");
    assert_eq!(r.stats.traces, 0, "{}", r.stats);
    assert!(r.stats.calls >= 1, "{}", r.stats);
    assert!(r.stats.per_key.iter().any(|k| k.key == "calls of fib" && k.state == "compiled"), "{}", r.stats);
    // A run told not to describe its hot spots (`flowc run` without
    // `--stats`), and without a JIT log, neither counts nor describes
    // them, and runs the same.
    let (program, entry) =
        (program("examples/fib.fg", &source("examples/fib.fg"), Hint::AsWritten), Symbol::intern("main"));
    let module = flowc_frontend::lower(&program, entry).unwrap();
    let env = [(Symbol::intern("n"), Value::Int(20))];
    let run_with = |describe_keys| {
        let options = Options { describe_keys, ..checked() };
        flowc_trace::jit::run(&program, &module, entry, &env, &Config::default(), options).1
    };
    let (described, quiet) = (run_with(true), run_with(false));
    assert!(described.keys > 0 && !described.per_key.is_empty(), "{described}");
    assert_eq!((quiet.keys, quiet.per_key.len()), (0, 0), "{quiet}");
    assert_eq!(quiet.calls, described.calls, "{quiet}");
}

/// A tree-walking interpreter (tests/corpus/shapes/tree_walk.fg): `exec`
/// and `eval` recurse, so their calls run compiled once hot, and `exec`'s
/// while loop then goes round only through the continuation of such a
/// call. That continuation is an arrival at the loop's header, as the
/// interpreter's `return` is: the loop is traced (the trace calls the
/// compiled functions) and runs all but its first rounds. Without it the
/// interpreter ran the loop to the end, 3.6 times faster than alone where
/// the trace makes it 24 (n = 2,000,000, `flowc run`).
#[test]
fn a_loop_whose_back_edge_is_a_compiled_call_is_traced() {
    let n = 20_000;
    let r = run("tests/corpus/shapes/tree_walk.fg", Hint::AsWritten, "start", Some(&format!("[n/{n}]")), checked());
    assert_eq!(r.output, "39998\n");
    assert!(r.stats.calls >= 1, "{}", r.stats);
    let lp = r.stats.per_trace.iter().find(|t| t.kind == "loop" && t.start.contains("exec:while"));
    let lp = lp.unwrap_or_else(|| panic!("no loop traced at exec:while\n{}", r.stats));
    assert!(lp.iterations >= n * 9 / 10, "the loop ran {} of {n} rounds\n{}", lp.iterations, r.stats);
}

/// A loop of eight independent branches (tests/corpus/shapes/branches.fg,
/// 256 paths per round): bridges hold every branch after their guard and
/// multiply with the paths, the same tails recorded again from other
/// parents. With joins a label whose tails repeat gets one trace that
/// every exit there jumps to, and the code grows with the branches: once
/// it has grown, no round leaves for the interpreter (the exits to it
/// are as many in 40,000 rounds as in 20,000). Without joins the tree
/// keeps growing, held back by the compile budget, and rounds keep
/// leaving for the interpreter.
#[test]
fn bridges_whose_tails_repeat_share_a_join() {
    let run_with = |joins: bool, n: u32| {
        let options = Options { join_after: joins.then_some(2), ..checked() };
        run("tests/corpus/shapes/branches.fg", Hint::AsWritten, "start", Some(&format!("[n/{n}]")), options)
    };
    let (joined, longer) = (run_with(true, 20_000), run_with(true, 40_000));
    assert!(joined.stats.joins >= 4, "{}", joined.stats);
    assert!(joined.log.contains("join at "), "{}", joined.log);
    assert_eq!(joined.stats.ignored, 0, "the loop pays with joins\n{}", joined.stats);
    assert_eq!(joined.stats.guard_failures, longer.stats.guard_failures, "{}", longer.stats);
    let apart = run_with(false, 40_000);
    assert_eq!(apart.output, longer.output);
    assert_eq!(apart.stats.joins, 0, "{}", apart.stats);
    assert!(apart.stats.guard_failures > 2 * longer.stats.guard_failures, "{}", apart.stats);
}

/// A BF interpreter that runs a chain of instruction objects
/// (tests/corpus/interpreters/bf_objects.fg) promotes the instruction it
/// reads from the last one's `next` or `to`. In the loop of `[-]` the
/// heap cache knows those fields of the promoted objects round the loop
/// (nothing writes them), so the instruction at the loop's head is its
/// value on entry, and its promotion, a guard on what the loop does not
/// change, moves before the loop: the loop left is the cell's
/// arithmetic, and it runs to its end at once. (Before, each round read
/// the fields and compared objects through the runtime: the interpreter
/// ran BF primes 3 in 2.3 s under the JIT, now 0.06 s.)
#[test]
fn promoted_instruction_objects_leave_the_loop() {
    let mut prog = vec!["43"; 200];
    prog.extend(["91", "45", "93", "43", "43", "43", "46"]);
    let env = format!("[prog/[{}], map/[0]]", prog.join(", "));
    let r = run("tests/corpus/interpreters/bf_objects.fg", Hint::AsWritten, "start", Some(&env), checked());
    assert_eq!(r.output, "3\n");
    assert_eq!(r.stats.fast_forwarded, 1, "{}", r.stats);
    let body = r.traces.iter().find(|t| t.starts_with("trace 'dispatch.body'(")).expect("the BF loop");
    let lp = &body[body.find("\nb2 ").expect("a peeled loop")..body.find("\nresume ").unwrap_or(body.len())];
    expect![[r#"

        b2 dispatch:
            v13:v = phi [b1: v12, b2: v15]
            v14:v = sub.word v13, 1
            v15:v = mod.word v14, 256
            set.object v0, v, v15
            guard_true v15, r2 else next
            jump b2"#]]
    .assert_eq(lp);
}

/// A `guard_value` against a promoted object compares the object's one
/// word, in baseline code and in Cranelift's. A loop promotes the object
/// a holder's field points to, which it turns from one object to the
/// other every round: each round leaves the code recorded for the other
/// through that guard, and the sum is the interpreter's (a guard that let
/// the other object through would add the recorded one's value).
#[test]
fn object_guards_compare_identity_in_every_tier() {
    use flowc_codegen::compile::Codegen;
    let text = "entry start(n = 300)
start:
    a = new node
    a.v = 1
    b = new node
    b.v = 10
    h = new holder
    h.cur = a
    i = 0
    s = 0
    goto loop
loop:
    more = i < n
    if more goto step else goto done
step:
    c = h.cur
    promote c then use
use:
    v = c.v
    s = s + v
    flip = c == a
    if flip goto to_b else goto to_a
to_b:
    h.cur = b
    goto next
to_a:
    h.cur = a
    goto next
next:
    i = i + 1
    goto loop
done:
    print_and_stop(s)
";
    for tier in [Codegen::Baseline, Codegen::Cheap, Codegen::Optimized] {
        let options = Options { tier, ..checked() };
        let r = run_text("object_guards.fg", text, Hint::AsWritten, "start", None, options);
        assert_eq!(r.output, "1650\n", "{tier:?}");
        let guarded = r.traces.iter().any(|t| t.contains("guard_value") && t.contains(", <node#"));
        assert!(guarded, "{tier:?}: no guard on an object\n{}", r.traces.join("\n"));
    }
}

/// A loop calling a function whose own loop runs a data-dependent number
/// of rounds (tests/corpus/shapes/collatz.fg: a Collatz chain's steps).
/// The first trace of the outer loop follows the call and unrolls one
/// chain; once a chain runs past the unroll limit the function is called
/// instead, and the hot spots whose code followed it are recorded again:
/// the outer loop then calls it, and the exits to the interpreter barely
/// grow from 3,000 starts to 20,000 (370 and 375; they were 5,963 and
/// 28,332).
#[test]
fn code_that_followed_a_function_no_longer_followed_is_recorded_again() {
    let at = |n: u32| {
        run("tests/corpus/shapes/collatz.fg", Hint::AsWritten, "start", Some(&format!("[n/{n}]")), checked()).stats
    };
    let (few, many) = (at(3_000), at(20_000));
    assert_eq!(many.not_followed, 1, "{many}");
    assert!(many.refollowed >= 1, "{many}");
    assert!(many.guard_failures <= few.guard_failures + 50, "{few}\n{many}");
    assert!(many.guard_failures < 1_000, "{many}");
}

/// Objects rebuilt every round and walked many times, the walk promoting
/// each step (tests/corpus/shapes/rebuild.fg): hot spots keyed by one
/// round's steps are compiled and given up round after round, until
/// `megamorphic_after` of them were; then the promotion is given up, and
/// the walk, recorded again without it, runs compiled for any chain:
/// 40 rounds leave their code less than half as often as with the
/// promotion kept (5,900 guard failures against 14,600).
#[test]
fn a_promotion_whose_hot_spots_keep_not_paying_is_given_up() {
    let env = "[rounds/40,len/12,walks/2000]";
    let at = |megamorphic_after: u32| {
        // (A full guard_value chain gives promotions up too; not here.)
        let options = Options { judge_after: 100, megamorphic_after, megamorphic_chains: false, ..checked() };
        run("tests/corpus/shapes/rebuild.fg", Hint::AsWritten, "start", Some(env), options).stats
    };
    let (kept, given_up) = (at(u32::MAX), at(32));
    assert_eq!(kept.megamorphic, 0, "{kept}");
    assert_eq!(given_up.megamorphic, 1, "{given_up}");
    assert!(given_up.refollowed >= 1, "{given_up}");
    assert!(given_up.ignored >= 32, "{given_up}");
    assert!(given_up.guard_failures * 2 < kept.guard_failures, "{kept}\n{given_up}");
}

/// Hot spots that are new all the time (rebuild.fg with short rounds:
/// each round's objects are promoted, and each round is over before
/// its code would pay) find the compile budget spent, one after the
/// other. While it is spent every hot spot waits longer (`most_raised`):
/// a tenth of the deferrals, the same output. The run gets no allowance:
/// its budget is what its work affords. (With the usual 400,000
/// statements' allowance the budget closed here only while the JIT's
/// clock missed the work of straight code — bridges, preambles — which
/// it counts since 2026-12-04.)
#[test]
fn hot_spots_wait_longer_while_the_compile_budget_is_spent() {
    let env = "[rounds/600,len/12,walks/100]";
    let at = |most_raised: u32| {
        let options = Options { most_raised, compile_allowance: Some(0), ..checked() };
        run("tests/corpus/shapes/rebuild.fg", Hint::AsWritten, "start", Some(env), options).stats
    };
    let (each, raised) = (at(1), at(16));
    assert!(each.deferred > 1_000, "{each}");
    assert!(raised.deferred * 10 < each.deferred, "{each}\n{raised}");
}

/// The same loop with promotions given up when a `guard_value` chain is
/// full: the promotion goes, the loop is recorded again keeping `i` a
/// variable, and runs compiled to its end (nothing given up). The hint
/// keys nothing and the loop promotes after it, so the full chain's exit
/// first samples what fails it (the JIT's `DECIDE_SAMPLES`, 4,096 values: none
/// comes back), as an interpreter's positions would.
#[test]
fn a_full_guard_value_chain_gives_its_promotion_up() {
    let env = Some("[i/0,s/0,n/30000]");
    let r = run("tests/corpus/shapes/megamorphic.fg", Hint::AsWritten, "loop", env, checked());
    assert_eq!(r.stats.megamorphic, 1, "{}", r.stats);
    assert_eq!((r.stats.ignored, r.stats.hints_moved), (0, 0), "{}", r.stats);
    assert_eq!(r.stats.traces, 2, "{}", r.stats);
    let compiled: u64 = r.stats.per_trace.iter().map(|t| t.iterations).sum();
    assert!(compiled > 25_000, "of 30,000 iterations: {}", r.stats);
    assert!(
        r.log.contains(
            "given up: a guard_value there failed for more than 8 values, then for 4096 none of which came back"
        ),
        "{}",
        r.log
    );
}

/// Three loops nested, the innermost `[>+>++<<-]`: the BF program the
/// hint tests below run.
const NEST3: &str = "++++++++++++++++[>++++++++++++++++[>++++++++++++++++[>+>++<<-]<-]<-]>>>.";

/// The tutorial BF interpreter with its hint where it promotes nothing —
/// on the label every instruction ends at, on a test of the if-chain:
/// the hint's one hot spot lumps every position together, its code runs
/// an instruction and fails its `guard_value` on `pc` at the next.
/// Positions come back among the values that fail it (the program
/// loops), and the hot spot gives way to the promotion's (`dispatch`,
/// held in reserve): from then on as without the hint, its loops compiled
/// as the BF program's loops. (Before, the hot spot gave up and the rest
/// ran interpreted, or its bridges ran every round through its code: on
/// BF programs of the benchmark's, 2-60 s against 0.03-0.3.) On the
/// backward jump or the closing bracket, with three loops here, the hint's
/// tree holds them (its guard fails for none, and nothing moves); either
/// way the loops run compiled.
#[test]
fn a_hint_that_keys_nothing_gives_way_to_the_promotion_after_it() {
    let env = bf_env(NEST3);
    let path = "tests/corpus/interpreters/bf_tutorial.fg";
    let plain = run(path, Hint::Absent, "start", Some(&env), checked());
    assert!(plain.stats.work_in_loops > 20 * plain.stats.interpreted.total(), "{}", plain.stats);
    for hint in ["next", "not_inc", "jump", "op_close"] {
        let r = run(path, Hint::At(hint), "start", Some(&env), checked());
        if matches!(hint, "next" | "not_inc") {
            assert_eq!(r.stats.hints_moved, 1, "{hint}: {}", r.stats);
            assert!(r.log.contains(&format!("hot spot {hint} gives way to dispatch")), "{hint}: {}", r.log);
        }
        let interpreted = |r: &Run| r.stats.interpreted.total();
        assert!(interpreted(&r) < 2 * interpreted(&plain), "{hint}: {}\n{}", r.stats, plain.stats);
    }
    // Where the hint promotes, nothing moves.
    let r = run(path, Hint::At("dispatch"), "start", Some(&env), checked());
    assert_eq!(r.stats.hints_moved, 0, "{}", r.stats);
}

/// The same hint with no bridges to make (their threshold out of reach):
/// its code is judged not to pay, and the values that failed its guard
/// came back, so it moves then (given up alone, the rest of the run would
/// be interpreted).
#[test]
fn a_hint_that_keys_nothing_moves_when_its_code_does_not_pay() {
    let env = bf_env(NEST3);
    let options = Options { bridge_threshold: u32::MAX, ..checked() };
    let r = run("tests/corpus/interpreters/bf_tutorial.fg", Hint::At("next"), "start", Some(&env), options);
    assert_eq!((r.stats.bridges, r.stats.hints_moved), (0, 1), "{}", r.stats);
    assert!(r.log.contains("hot spot next gives way to dispatch"), "{}", r.log);
    assert!(r.stats.work_in_loops > 10 * r.stats.interpreted.total(), "{}", r.stats);
}

/// The same inside a called function (bf_in_function.fg: the dispatch
/// loop is `interpret`'s, its labels the function's flow graph's): the
/// hint on the function's `next` gives way to its `dispatch`, and the
/// loops run compiled as they do unhinted.
#[test]
fn a_hint_that_keys_nothing_inside_a_called_function_gives_way_too() {
    let env = bf_env(NEST3);
    let path = "tests/corpus/interpreters/bf_in_function.fg";
    let plain = run(path, Hint::Absent, "start", Some(&env), checked());
    let hinted = run(path, Hint::At("next"), "start", Some(&env), checked());
    assert_eq!(hinted.output, plain.output);
    assert_eq!((plain.stats.hints_moved, hinted.stats.hints_moved), (0, 1), "{}", hinted.stats);
    assert!(hinted.log.contains("hot spot next gives way to dispatch"), "{}", hinted.log);
    assert!(hinted.stats.work_in_loops > 20 * hinted.stats.interpreted.total(), "{}", hinted.stats);
}

/// Two hints that key nothing in one loop (`next` and `jump`, and four
/// with `fetch` and `decode`): they give way together, to the one label
/// their loop holds in reserve. (The second, finding nothing left in
/// reserve, kept its code, its guard's chain filled and the promotion
/// was given up as megamorphic: every position after it interpreted.)
#[test]
fn hints_that_key_nothing_in_one_loop_give_way_together() {
    let env = bf_env(NEST3);
    let source = source("tests/corpus/interpreters/bf_tutorial.fg");
    let plain = run_text("bf_tutorial.fg", &source, Hint::Absent, "start", Some(&env), checked());
    for hints in [&["next", "jump"][..], &["fetch", "decode", "next", "jump"]] {
        let lines: String = hints.iter().map(|h| format!("can_enter_jit {h}\n")).collect();
        let r =
            run_text("bf_tutorial.fg", &format!("{lines}{source}"), Hint::AsWritten, "start", Some(&env), checked());
        assert_eq!(r.output, plain.output);
        assert_eq!((r.stats.hints_moved, r.stats.megamorphic), (hints.len(), 0), "{hints:?}: {}", r.stats);
        for h in hints {
            assert!(r.log.contains(&format!("hot spot {h} gives way to dispatch")), "{h}: {}", r.log);
        }
        let interpreted = |r: &Run| r.stats.interpreted.total();
        assert!(interpreted(&r) < 2 * interpreted(&plain), "{hints:?}: {}\n{}", r.stats, plain.stats);
    }
}

/// A full chain in the tree of a loop that promotes nothing itself
/// (promote_after_loop.fg: the chain is of bridges from its exit, which
/// promote what the outer loop goes on with) does not give the promotion
/// up.
#[test]
fn a_full_chain_after_a_loop_that_promotes_nothing_keeps_the_promotion() {
    let r = run("tests/corpus/shapes/promote_after_loop.fg", Hint::AsWritten, "start", None, checked());
    assert_eq!(r.output, "29270220\n");
    assert_eq!(r.stats.megamorphic, 0, "{}\n{}", r.stats, r.log);
    assert!(!r.log.contains("given up: a guard_value there failed"), "{}", r.log);
}

/// An object passed down a short recursion (`area(r, 1)` calls
/// `area(r, 0)`): the recording follows the recursive calls up to
/// `recursion_unroll` deep, so the object stays virtual; not following
/// them, the trace calls `area` and the object is made every iteration.
#[test]
fn an_object_passed_down_a_short_recursion_stays_virtual() {
    let at = |n: u64, unroll: usize| {
        let options = Options { recursion_unroll: unroll, ..checked() };
        run("tests/corpus/shapes/alloc_escape.fg", Hint::AsWritten, "start", Some(&format!("[n/{n}]")), options)
            .allocations
    };
    let (small, large) = (at(1000, 2), at(2000, 2));
    assert_eq!(small, large, "{small} allocations for 1000 iterations, {large} for 2000");
    assert!(small < 100, "{small}");
    assert!(at(1000, 0) >= 900, "called, not followed, the object escapes into the call");
}

/// A loop inside a function is a hot spot of the function's flow graph;
/// its trace starts and ends in the function's frame.
#[test]
fn loops_inside_functions_are_traced() {
    let r = run("tests/corpus/shapes/function_loop.fg", Hint::AsWritten, "start", None, checked());
    assert_eq!(r.stats.traces, 1, "{}", r.stats);
    let t = &r.stats.per_trace[0];
    assert_eq!((t.start.as_str(), t.entries), ("sum:head", 3), "{}", r.stats);
    assert!(t.iterations > 2900, "{}", r.stats);
}

/// The guard that alternates is in the frame of a function the trace
/// inlined: it gets a bridge too, which starts in that frame.
#[test]
fn guards_in_inlined_frames_get_bridges() {
    let r = run("tests/corpus/shapes/inlined_branch.fg", Hint::AsWritten, "start", None, checked());
    assert_eq!(r.stats.bridges, 1, "{}", r.stats);
    assert!(r.stats.direct_links() == 1 && r.stats.guard_failures < 50, "{}", r.stats);
    // `odd` is a label of the called function: the bridges start there.
    assert!(r.log.contains("record bridge from exit 1 of start.body (to odd)"), "{}", r.log);
}

/// A promoted variable that never repeats a value: the loop's trace fails
/// its guard_value at once, bridges stop at `max_values`, and, the
/// promotion kept, the hot spot whose code runs no iteration is given
/// up — the interpreter runs the rest.
#[test]
fn a_hot_spot_whose_trace_does_not_pay_is_given_up() {
    let kept = Options { megamorphic_chains: false, ..checked() };
    let r = run("tests/corpus/shapes/megamorphic.fg", Hint::AsWritten, "loop", None, kept);
    assert_eq!(r.stats.ignored, 1, "{}", r.stats);
    assert_eq!(r.stats.bridges, Options::default().max_values as usize, "{}", r.stats);
    assert!(r.log.contains("hot spot given up: loop does not pay"), "{}", r.log);
}

/// A loop whose code is left before the end of its first iteration at
/// most entries, but far along its way: a dispatch of 200 cases by a
/// chain of equality tests, the round's case `i % 250` (the last fifty
/// rounds of every 250 matching none), recorded in a round of no case
/// (the trace runs all 200 tests), each other entry leaving at the test
/// of its own case (200 statements on, on average). Without bridges to
/// grow it, its code still replaces more than its round trips cost, and
/// is kept: judged by the way run up to the exit each entry left by, not
/// by its iterations (fewer than its entries).
#[test]
fn a_loop_left_far_along_its_way_keeps_its_code() {
    let cases = 200;
    let mut text = "entry start(n = 3000)\n\nstart:\n    i = 200\n    total = 0\n    goto loop\nloop:\n    \
                    more = i < n\n    if more goto pick else goto done\npick:\n    k = i % 250\n    i = i + 1\n    goto t0\n"
        .to_string();
    for j in 0..cases {
        text += &format!(
            "t{j}:\n    c = k == {j}\n    if c goto a{j} else goto t{}\na{j}:\n    total = total + {j}\n    \
             total = total % 1000003\n    goto loop\n",
            j + 1
        );
    }
    text += &format!("t{cases}:\n    goto loop\ndone:\n    print_and_stop(total)\n");
    let options = Options { judge_after: 250, bridge_threshold: u32::MAX, ..checked() };
    let r = run_text("dispatch.fg", &text, Hint::AsWritten, "start", None, options);
    assert!(!r.log.contains("hot spot given up"), "{}", r.log);
    assert_eq!(r.stats.ignored, 0, "{}", r.stats);
    let t = r.stats.per_trace.iter().find(|t| t.start == "loop").expect("the loop's code");
    assert!(t.entries > 1_000 && t.iterations < t.entries, "entered, mostly left in its first iteration: {}", r.stats);
}

/// A function's loop entered from the interpreter at every call: six
/// rounds of five statements per entry save less than the round trip into
/// code and back costs (`TRANSITION_STEPS`), so its hot spot is given up
/// though each entry runs several iterations; forty rounds pay, and the
/// code is kept (with round trips still much of its cost, the function's
/// calls are compiled too: `jit_calls`); a hundred rounds pay well, and
/// the loop keeps being entered.
#[test]
fn code_whose_entries_save_less_than_their_transitions_is_given_up() {
    let path = "tests/corpus/shapes/short_loop_calls.fg";
    let options = || Options { judge_after: 20, ..checked() };
    let short = run(path, Hint::AsWritten, "start", Some("[n/30,k/6]"), options());
    assert_eq!((short.stats.traces, short.stats.ignored), (1, 1), "{}", short.stats);
    let t = &short.stats.per_trace[0];
    assert!(t.iterations >= t.entries, "runs at least an iteration per entry: {}", short.stats);
    assert!(short.log.contains("hot spot given up: l does not pay"), "{}", short.log);
    assert_eq!(t.entries, 20, "given up at its first judgement: {}", short.stats);
    let long = run(path, Hint::AsWritten, "start", Some("[n/30,k/40]"), options());
    assert_eq!((long.stats.traces, long.stats.ignored, long.stats.calls_instead), (1, 0, 1), "{}", long.stats);
    let longer = run(path, Hint::AsWritten, "start", Some("[n/30,k/100]"), options());
    assert_eq!((longer.stats.traces, longer.stats.ignored, longer.stats.calls_instead), (1, 0, 0), "{}", longer.stats);
    assert!(longer.stats.per_trace[0].entries > 100, "{}", longer.stats);
}

/// A loop whose iteration is longer than the trace limit is cut into
/// segments ("Long loops in segments"): the recording ends at the first
/// label past nine tenths of the limit, as an entry trace of the hot spot
/// that leaves there; that exit's bridge, once hot, is the next segment,
/// and the last one links back into the first. Nothing is given up, and
/// the loop runs in compiled code.
#[test]
fn a_loop_longer_than_the_trace_limit_runs_in_segments() {
    let options = Options { trace_limit: 1, ..checked() };
    let r = run("examples/points.pl", Hint::AsWritten, "start", Some("[n/5000]"), options);
    assert_eq!((r.stats.traces, r.stats.aborted, r.stats.ignored), (0, 0, 0), "{}", r.stats);
    assert_eq!((r.stats.entry_traces, r.stats.segments), (1, 1), "{}", r.stats);
    assert!(r.stats.bridges >= 1, "{}", r.stats);
    assert!(r.log.contains("loop: no loop closed within 2 operations, a segment to body instead"), "{}", r.log);
    // The segments link into each other: the driver sees a few crossings
    // while the bridges are made, not one per round.
    assert!(r.stats.guard_failures < 100, "{}", r.stats);
    assert!(r.stats.entries < 100, "{}", r.stats);
    // The segment's exit gets one bridge, which jumps into the segment
    // (not through its hot spot to an exit there and a second bridge).
    assert_eq!(r.stats.bridges, 1, "{}", r.stats);
    assert!(r.bridges[0].contains("jump_trace loop("), "{}", r.bridges[0]);
}

/// A segment pins what it passes on unchanged and compares with several
/// values (an interpreter's program length), as an entry trace into a loop
/// does — but not a variable the rest of its loop writes: here `m`,
/// compared twice before the cut and counted after it, would fail its pin
/// every round, and each round would record another variant of the
/// segment until the hot spot was given up.
#[test]
fn a_segment_pins_only_what_its_loop_never_writes() {
    let text = "entry start(n = 400, m = 5, k = 9)
start:
    s = 0
    goto loop
loop:
    if n goto a else goto done
a:
    c = m < 100
    d = m == 7
    e = k < 100
    f = k == 7
    s = s + c
    s = s + d
    s = s + e
    goto b
b:
    s = s + f
    s = s % 1000
    s = s + 1
    s = s % 1000
    goto c
c:
    m = m + 1
    m = m % 50
    n = n - 1
    goto loop
done:
    print_and_stop(s)
";
    let options = Options { trace_limit: 12, ..checked() };
    let r = run_text("pins.fg", text, Hint::AsWritten, "start", None, options);
    assert!(r.log.contains("a segment to c instead"), "{}", r.log);
    assert_eq!((r.stats.segments, r.stats.ignored), (1, 0), "{}\n{}", r.stats, r.log);
    // `k`, never written in the loop, is pinned: its comparisons fold.
    let segment = r.traces.iter().find(|t| t.contains("guard_int v2, 9, 9")).expect("a segment pinning k");
    assert!(!segment.contains("lt v2") && !segment.contains("guard_int v1"), "{segment}");
}

/// The log: an event a line (after the time), then the stats and every
/// hot spot.
#[test]
fn the_log_tells_what_the_jit_did() {
    let env = "[code/[add, dec, jnz, 0, halt], pc/0, n/100, acc/0]";
    let r = run(INTERP_LOOP, Hint::AsWritten, "dispatch", Some(env), checked());
    let events: Vec<&str> =
        r.log.lines().filter(|l| l.starts_with('[')).map(|l| &l[l.find(']').unwrap() + 2..]).collect();
    expect![[r#"
        record loop at dispatch[pc=1]
        dispatch[pc=1] is inside the loop at dispatch[pc=0]: recorded from there
        record loop at dispatch[pc=0]
        compiled dispatch.body from dispatch[pc=0]: 0 operations recorded, 5 after optimization
        compiled dispatch from dispatch[pc=0]: 27 operations recorded, 7 after optimization"#]]
    .assert_eq(&events.join("\n"));
    // pc 1 got hot first; its recording jumped back across it to pc 0,
    // where the interpreted loop begins, and recorded the loop from there.
    assert!(r.log.contains("every hot spot:\n  compiled dispatch[pc=0]: 49 arrivals\n"), "{}", r.log);
}

/// A promoted counter rather than a position: `i` counts down round a
/// cycle of 40 values, so every arrival but the one that wraps round
/// looks like a jump back across where a recording started. Anchored
/// again at most `MOST_TURNS` (8) times, the recording then closes where
/// it is, as before: one trace of the cycle, not a recording per value
/// (and no recursion as deep as the cycle is long).
#[test]
fn a_promoted_counter_is_anchored_again_a_bounded_number_of_times() {
    let text = "entry start(n = 4000)
start:
    i = 39
    s = 0
    goto head
head:
    promote i then body
body:
    if n goto step else goto done
step:
    s = s + i
    n = n - 1
    i = i - 1
    i = i % 40
    goto head
done:
    print_and_stop(s)
";
    let r = run_text("counter.fg", text, Hint::Absent, "start", None, checked());
    assert_eq!(r.output, format!("{}\n", 100 * (0..40).sum::<i64>()));
    assert!((1..=8).contains(&r.stats.reheaded), "{}\n{}", r.stats, r.log);
    assert!(r.stats.per_trace.iter().any(|t| t.kind == "loop"), "{}\n{}", r.stats, r.log);
}

/// An outer loop calling functions whose own loops run a thousand times a
/// call: recordings of the outer loop stop following those functions (a
/// loop of a called function past `unroll_limit` iterations in one call)
/// and call them instead, so the outer trace stays short; the inner loops
/// have their own traces.
#[test]
fn inner_loops_of_called_functions_are_called_not_unrolled() {
    let r = run("tests/corpus/shapes/list_sum.fg", Hint::Absent, "start", Some("[n/1000, reps/200]"), checked());
    assert_eq!(r.output, "99900000\n");
    assert_eq!(r.stats.not_followed, 2, "{}", r.stats);
    assert!(r.log.contains("calls of build are not followed from now on"), "{}", r.log);
    assert!(r.log.contains("the loop at build:loop ran 64 iterations in one call"), "{}", r.log);
    let longest = r.stats.per_trace.iter().map(|t| t.recorded_ops).max().unwrap();
    assert!(longest < 100, "a trace of {longest} operations:\n{}", r.stats);
}

/// An outer loop calling functions whose loops of 16 rounds go left or
/// right as the data says (a walk down a tree of objects,
/// `search_tree.fg`): followed, each call is one path of 65,536 through
/// the loop, and the other paths are bridges, as many as the tree holds.
/// After `call_bridges` bridges from exits inside a function's loop, the
/// hot spot calls the function instead and its trace loops; with the
/// rule off the code keeps leaving to the interpreter.
#[test]
fn a_called_loop_that_branches_on_data_is_called_not_followed() {
    let path = "tests/corpus/shapes/search_tree.fg";
    let r = run(path, Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "1160\n");
    assert!(r.stats.branchy_calls >= 1, "{}\n{}", r.stats, r.log);
    assert!(r.log.contains("calls of lookup are not followed from now on by the code of look"), "{}", r.log);
    let off = run(path, Hint::Absent, "start", None, Options { call_bridges: u32::MAX, ..checked() });
    assert_eq!(off.output, r.output);
    assert_eq!(off.stats.branchy_calls, 0, "{}", off.stats);
    // (The walks' other paths left the code for the interpreter.)
    assert!(
        r.stats.interpreted.total() * 4 < off.stats.interpreted.total(),
        "{} statements interpreted against {} without the rule:\n{}\n{}",
        r.stats.interpreted.total(),
        off.stats.interpreted.total(),
        r.stats,
        off.stats
    );
}

/// A BF interpreter that finds a bracket's partner by scanning its
/// program (`bf_scan.fg`): with `pc` promoted, each scan is decided by
/// constants of the trace, and recordings follow it (its rounds fold into
/// the jump's target), its own hot spot given up. Without that, the scan
/// is a loop of its own, generic in `pc`, run at every jump.
#[test]
fn a_scan_of_the_program_is_followed_for_its_constants() {
    let path = "tests/corpus/interpreters/bf_scan.fg";
    let scans = |r: &Run| -> u64 {
        r.stats
            .per_trace
            .iter()
            .filter(|t| t.start.starts_with("back") || t.start.starts_with("fwd"))
            .map(|t| t.iterations)
            .sum()
    };
    let on = run(path, Hint::AsWritten, "start", None, checked());
    assert_eq!(on.output, "3968\n");
    assert!(on.stats.left_to_constants >= 1, "{}\n{}", on.stats, on.log);
    assert!(on.log.contains("recordings that arrive there follow its loop for their constants"), "{}", on.log);
    let off = run(path, Hint::AsWritten, "start", None, Options { constant_loops: false, ..checked() });
    assert_eq!(off.output, on.output);
    assert_eq!(off.stats.left_to_constants, 0, "{}", off.stats);
    assert!(
        scans(&on) * 10 < scans(&off),
        "scans' own code ran {} rounds, {} without following them:\n{}\n{}",
        scans(&on),
        scans(&off),
        on.stats,
        off.stats
    );
}

/// A register VM whose jumps name labels (`label_vm.fg`): the scan for
/// the label starts from 0 and compares with the jump's operand
/// `b = xb[pc]`, not with `pc`. `b` is computed only from the promoted
/// `pc` (`constant_loops::derived_from`), so the scan is an
/// interpreter's scan of its program like the BF one: followed, its
/// hot spot given up, its own code running (almost) no rounds.
#[test]
fn a_scan_for_an_operand_read_at_the_position_is_followed() {
    let path = "tests/corpus/interpreters/label_vm.fg";
    let env = "[n/300,ops/[seti,label,seti,label,mac,dec,jnz,dec,jnz,halt],xa/[0,1,1,2,0,1,1,0,0,0],xb/[0,0,12,0,0,0,2,0,1,0]]";
    let scans = |r: &Run| -> u64 {
        r.stats.per_trace.iter().filter(|t| t.start.starts_with("scan")).map(|t| t.iterations).sum()
    };
    let on = run(path, Hint::AsWritten, "start", Some(env), checked());
    assert!(on.stats.left_to_constants >= 1, "{}\n{}", on.stats, on.log);
    let off = run(path, Hint::AsWritten, "start", Some(env), Options { constant_loops: false, ..checked() });
    assert_eq!(off.output, on.output);
    assert!(scans(&on) * 10 < scans(&off), "{}\n{}", on.stats, off.stats);
}

/// Functions called compiled (here recursive ones: a tree-walking
/// interpreter's `eval` and `exec`) are compiled as the eight passes
/// optimize the program, as native code is; but not where the main graph
/// is far bigger than the functions (the passes go over it too): a main
/// graph of 1,500 calls of one small recursive function.
#[test]
fn functions_called_compiled_are_optimized_by_the_passes() {
    let r = run("tests/corpus/shapes/tree_walk.fg", Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "2001\n");
    assert!(r.stats.calls > 0, "{}", r.stats);
    assert_eq!(r.stats.functions_optimized, 2, "{}", r.stats);
    let mut text = String::from(
        "entry start(n = 50)\nfunction f(x, d):\n    s:\n        x = x * 3\n        x = x % 1001\n        if d goto again else goto out\n    again:\n        d = d - 1\n        x = call f(x, d) then out\n    out:\n        return x\nstart:\n    x = 1\n    goto loop\nloop:\n    if n goto c0 else goto done\n",
    );
    for k in 0..1500 {
        text.push_str(&format!("c{k}:\n    x = call f(x, 1) then c{}\n", k + 1));
    }
    text.push_str("c1500:\n    n = n - 1\n    goto loop\ndone:\n    print_and_stop(x)\n");
    let big = run_text("calls.fg", &text, Hint::Absent, "start", None, Options { threshold: 2, ..checked() });
    let mut x = 1i64;
    for _ in 0..50 * 1500 * 2 {
        x = x * 3 % 1001;
    }
    assert_eq!(big.output, format!("{x}\n"));
    assert!(big.stats.calls > 0, "{}", big.stats);
    assert_eq!(big.stats.functions_optimized, 0, "{}", big.stats);
}

/// A function called compiled is compiled with what it may call, not with
/// the whole program: 300 functions the run never calls, beside two
/// that call each other, one of which the main loop calls hot, leave
/// those two compiled (the
/// 300 had cost a run 150 ms of Cranelift, twice the interpreter's whole
/// run).
#[test]
fn a_function_called_compiled_is_compiled_with_its_callees_only() {
    let mut text = String::from("entry start(n = 12)\n");
    for k in 0..300 {
        text.push_str(&format!(
            "\nfunction unused{k}(x):\n    s:\n        y = x * {k}\n        y = y % 1009\n        return y\n"
        ));
    }
    text.push_str(
        "\nfunction other(x):\n    s:\n        y = x - 2\n        z = call walk(y) then d\n    d:\n        return z\n\n\
         function walk(n):\n    s:\n        small = n < 2\n        if small goto base else goto rec\n    \
         base:\n        return n\n    rec:\n        m = n - 1\n        a = call walk(m) then h\n    \
         h:\n        b = call other(n) then done\n    \
         done:\n        r = a + b\n        return r\n\n\
         start:\n    j = 40\n    t = 0\n    goto head\nhead:\n    if j goto body else goto out\n\
         body:\n    r = call walk(n) then back\nback:\n    t = t + r\n    j = j - 1\n    goto head\n\
         out:\n    print_and_stop(t)\n",
    );
    let r = run_text("callees.fg", &text, Hint::Absent, "start", None, Options { threshold: 2, ..checked() });
    assert!(r.stats.calls > 0, "called compiled: {}", r.stats);
    assert_eq!(r.stats.functions_optimized, 2, "walk and other, not the 300: {}", r.stats);
}

/// An interpreter's step function called at its promoted position, with
/// a loop for one instruction whose rounds the data decides
/// (`step_function.fg`): bridges leave that loop's rounds as they leave a
/// search tree's walk, but the call is given a constant, on which it
/// folds (its dispatch), and stays followed.
#[test]
fn a_called_loop_given_constants_is_followed_whatever_its_bridges() {
    let r = run("tests/corpus/shapes/step_function.fg", Hint::AsWritten, "start", None, checked());
    assert_eq!(r.output, "951\n");
    assert!(r.stats.round_bridges >= CALL_BRIDGES as usize, "{}\n{}", r.stats, r.log);
    assert_eq!(r.stats.branchy_calls, 0, "{}\n{}", r.stats, r.log);
    assert!(!r.log.contains("calls of step are not followed"), "{}", r.log);
}

/// A called function whose loop runs as many rounds as a constant of the
/// trace says (a BF interpreter's `move` by the distance its program
/// gives, here a step count read from a list at a promoted position):
/// every branch that may leave its loop tests a constant, so recordings
/// follow it past `unroll_limit` rounds and the rounds fold into the
/// trace. Given a count the data decides instead, the same function is
/// called rather than followed, as before.
#[test]
fn a_called_loop_of_constant_rounds_is_followed_past_the_unroll_limit() {
    let text = |count: &str| {
        format!(
            "entry start(n = 300, steps = [100, 70, 90], k = 80)
function walk(x, m):
    top:
        if m goto step else goto out
    step:
        x = x + 3
        x = x % 1000
        m = m - 1
        goto top
    out:
        return x
start:
    s = 0
    pc = 0
    goto loop
loop:
    if n goto body else goto done
body:
    promote pc then fetch
fetch:
    m = steps[pc]
    k = k + 1
    c = {count}
    s = call walk(s, c) then next
next:
    pc = pc + 1
    pc = pc % 3
    n = n - 1
    goto loop
done:
    print_and_stop(s)
"
        )
    };
    let fixed = run_text("walk.fg", &text("m"), Hint::AsWritten, "start", None, checked());
    assert_eq!(fixed.stats.not_followed, 0, "{}\n{}", fixed.stats, fixed.log);
    assert!(!fixed.log.contains("iterations in one call"), "{}", fixed.log);
    let varying = run_text("walk.fg", &text("k"), Hint::AsWritten, "start", None, checked());
    assert!(varying.log.contains("the loop at walk:step ran 64 iterations in one call"), "{}", varying.log);
    assert!(varying.stats.not_followed >= 1, "{}", varying.stats);
}

/// The same in a bridge: the loop's trace takes the branch without the
/// call, and the exit to the other branch gets a bridge that calls `walk`
/// with a count read from the list the loop assumed (a constant in the
/// exit's record, so in the bridge too) at a position the bridge
/// promotes: followed past the unroll limit there as well.
#[test]
fn a_bridge_follows_a_called_loop_of_constant_rounds() {
    let text = "entry start(n = 600, steps = [100, 70, 90])
function walk(x, m):
    top:
        if m goto step else goto out
    step:
        x = x + 3
        x = x % 1000
        m = m - 1
        goto top
    out:
        return x
start:
    s = 0
    pc = 0
    goto loop
loop:
    if n goto body else goto done
body:
    odd = n % 2
    if odd goto quick else goto far
quick:
    s = s + 1
    goto next
far:
    promote pc then fetch
fetch:
    m = steps[pc]
    s = call walk(s, m) then next
next:
    pc = pc + 1
    pc = pc % 3
    n = n - 1
    goto loop
done:
    print_and_stop(s)
";
    let r = run_text("walk_bridge.fg", text, Hint::AsWritten, "start", None, checked());
    assert!(r.stats.bridges >= 1, "{}\n{}", r.stats, r.log);
    assert!(r.bridges.iter().any(|b| b.contains("mod")), "a bridge did the walk's rounds:\n{}", r.bridges.join(""));
    assert!(!r.log.contains("iterations in one call"), "{}", r.log);
    assert_eq!(r.stats.not_followed, 0, "{}", r.stats);
}

/// A loop body building a list of `cells` cells, then a branch: the
/// guard's resume record would hold every cell still virtual.
fn list_then_branch(cells: usize) -> String {
    let mut text = String::from(
        r#"entry start(n = 100)
start:
    t = 0
    goto head
head:
"#,
    );
    text.push_str(
        r#"    if n goto body else goto done
body:
    l = new nil
"#,
    );
    for i in 0..cells {
        text.push_str(&format!(
            r#"    c{i} = new cell
    c{i}.head = {i}
    c{i}.next = l
    l = c{i}
"#
        ));
    }
    text.push_str(
        r#"    if t goto odd else goto even
odd:
    t = 0
    goto sum
even:
    t = 1
    goto sum
"#,
    );
    text.push_str(
        r#"sum:
    h = l.head
    n = n - 1
    goto head
done:
    print_and_stop(h)
"#,
    );
    text
}

/// A guard's resume record holds at most 64 virtual objects (every exit
/// describes its objects field by field): past that, the objects are made
/// before the guard. Below it they stay virtual.
#[test]
fn guards_hold_a_bounded_number_of_virtual_objects() {
    let news = |cells: usize| {
        let r = run_text("list.fg", &list_then_branch(cells), Hint::Absent, "start", None, checked());
        r.traces.iter().map(|t| t.matches("= new cell").count()).sum::<usize>()
    };
    assert_eq!(news(40), 0);
    assert_eq!(news(80), 80);
}

/// The heap cache: a loop that reads a counter object's field twice, writes
/// it and reads it back reads it from memory no more (the first iteration
/// reads it; the loop carries it in a phi); a write to that field of
/// another object, which may be the same one (here it is), makes the loop
/// read it after that write, and once per iteration before it.
#[test]
fn field_reads_are_remembered_until_the_field_is_written() {
    let text = "entry start(n = 300)\n\
                start:\n    c = new counter\n    c.x = 0\n    h = new holder\n    h.p = c\n    h.q = c\n    goto head\n\
                head:\n    a = c.x\n    b = c.x\n    s = a + b\n    c.x = s\n    d = c.x\n    d = d % 7\n    c.x = d\n\
                \x20   n = n - 1\n    if n goto head else goto done\n\
                done:\n    r = c.x\n    print_and_stop(r)\n";
    let r = run_text("heap_cache.fg", text, Hint::Absent, "start", None, checked());
    // (Either form: a read of a value known to be an object is `get.object`.)
    let gets = |t: &str| t.lines().filter(|l| l.contains(" = get") && l.ends_with(", x")).count();
    assert_eq!(gets(loop_part(&r.traces)), 0, "{}", loop_part(&r.traces));
    let aliased = text.replace("    d = c.x\n", "    q = h.q\n    q.x = 3\n    d = c.x\n");
    let r = run_text("heap_cache_alias.fg", &aliased, Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "3\n");
    assert_eq!(gets(loop_part(&r.traces)), 2, "{}", loop_part(&r.traces));
}

/// A two-round loop entered once per round of an outer loop whose body
/// is `work` statements of straight-line arithmetic (`n` rounds): the sum
/// it prints. (Two rounds, so that its hot spot's 50th arrival is inside
/// the loop, and the recording from there goes round the loop itself, not
/// round the outer one.)
fn loop_among_work(n: u32, work: usize) -> String {
    fat_loop_among_work(n, work, 1)
}

/// [`loop_among_work`] with `fat` statements in each round of the small
/// loop.
fn fat_loop_among_work(n: u32, work: usize, fat: usize) -> String {
    let mut text = format!("entry start(n = {n})\nstart:\n    i = 0\n    x = 0\n    goto outer\n");
    text += "outer:\n    more = i < n\n    if more goto body else goto done\nbody:\n";
    for k in 0..work {
        text += &format!("    x = x + {}\n    x = x % 1000003\n", k % 7 + 1);
    }
    text += "    j = 2\n    goto small\nsmall:\n    if j goto step else goto after\n";
    text += "step:\n    j = j - 1\n";
    for k in 0..fat {
        text += if k % 2 == 0 { "    x = x + j\n" } else { "    x = x % 1000003\n" };
    }
    text += "    goto small\n";
    text += "after:\n    i = i + 1\n    goto outer\ndone:\n    print_and_stop(x)\n";
    text
}

/// A loop whose hot spot is arrived at sparsely — two rounds per entry,
/// entered once per 6,000 statements — is recorded and not compiled: its
/// code would replace a few statements per entry, not what compiling it
/// costs (`flowc_trace::jit::promises_payback`). Judged so twice in a
/// row, it waits for the arrivals it is short of (some 1,800), at most
/// four times as long as deferral alone would: judged at its 50th, 100th
/// and 500th arrival of the run's 600, not also at its 200th and 400th.
/// Hot again, it is judged by the operations it was recorded as, not
/// recorded again. The outer
/// loop, whose hot spot is arrived at once per 6,000 statements, is not
/// even recorded at first: no loop recorded there could pay back then,
/// however long. The same loops entered every few statements are
/// compiled. Both print what the interpreter prints.
#[test]
fn a_loop_arrived_at_sparsely_is_not_compiled() {
    let run_with = |work| run_text("work.fg", &loop_among_work(200, work), Hint::Absent, "start", None, checked());
    let (sparse, dense) = (run_with(3_000), run_with(2));
    assert!(sparse.stats.sparse > 0, "{}", sparse.stats);
    assert_eq!(dense.stats.sparse, 0, "{}", dense.stats);
    assert!(dense.stats.traces > 0, "{}", dense.stats);
    // Recorded once, judged sparse again without a second recording.
    let count = |what: &str| sparse.log.lines().filter(|l| l.contains(what)).count();
    assert_eq!(count("record loop at small"), 1, "{}", sparse.log);
    assert_eq!(count("not compiled: small"), 3, "{}", sparse.log);
    assert!(sparse.stats.sparse_waits >= 1, "{}", sparse.stats);
    let first_outer = sparse.log.lines().find(|l| l.contains(" outer")).unwrap_or_default();
    assert!(first_outer.contains("not recorded: outer"), "{}", sparse.log);
    assert_eq!((count("not compiled: ") + count("not recorded: ")) as u64, sparse.stats.sparse, "{}", sparse.log);
}

/// A sparse loop of thirty statements a round, judged too sparse at its
/// 50th arrival and hot again at its 100th while the run is young: judged
/// then by the operations it was recorded as, it is not compiled, and not
/// recorded again either. (Loops of 30 statements among
/// 5,000-7,000 statements of work do this; fewer statements between
/// them and the loop is compiled, more and it is never recorded.)
#[test]
fn a_sparse_loop_hot_again_is_judged_by_its_recording() {
    let text = fat_loop_among_work(50, 3_000, 30);
    let sparse = run_text("fat.fg", &text, Hint::Absent, "start", None, checked());
    let count = |what: &str| sparse.log.lines().filter(|l| l.contains(what)).count();
    assert_eq!(count("record loop at small"), 1, "{}", sparse.log);
    assert!(count("not compiled: small") >= 2, "{}", sparse.log);
}

/// A loop whose code was recorded while `extra` was unbound (it is read
/// after the loop, on the way the second round takes) is arrived at again
/// with `extra` bound: its code does not take that frame, and the key
/// counts from zero and records a second variant at the threshold, which
/// runs the second round compiled.
#[test]
fn a_key_whose_code_takes_other_variables_gets_a_second_variant() {
    const TWO_ROUNDS: &str = "entry start(n = 3000)
start:
    i = 0
    s = 0
    round = 1
    goto loop
loop:
    more = i < n
    if more goto body else goto after
body:
    i = i + 1
    s = s + i
    s = s % 1000003
    goto loop
after:
    if round goto second else goto done
second:
    round = 0
    extra = 5
    i = 0
    goto loop
done:
    t = s + extra
    print_and_stop(t)
";
    let stats = run_text("two_rounds.fg", TWO_ROUNDS, Hint::Absent, "start", None, checked()).stats;
    assert_eq!(stats.traces, 2, "{stats}");
    // Each round's loop ran compiled, all but its first fifty rounds.
    let loops: Vec<u64> = stats.per_trace.iter().filter(|t| t.kind == "loop").map(|t| t.iterations).collect();
    assert!(loops.len() == 2 && loops.iter().all(|&n| n > 2_900), "{stats}");
}

/// The tutorial BF interpreter's environment for `text`: its character
/// codes and bracket map (each bracket's partner, 0 elsewhere).
fn bf_env(text: &str) -> String {
    let code: Vec<u8> = text.bytes().filter(|b| b"+-<>[].,".contains(b)).collect();
    let (mut map, mut open) = (vec![0; code.len()], Vec::new());
    for (i, &c) in code.iter().enumerate() {
        match c {
            b'[' => open.push(i),
            b']' => {
                let j = open.pop().expect("balanced");
                (map[i], map[j]) = (j, i);
            }
            _ => {}
        }
    }
    let list = |xs: Vec<String>| xs.join(", ");
    let prog = list(code.iter().map(|c| c.to_string()).collect());
    format!("[prog/[{prog}], map/[{}]]", list(map.iter().map(|m| m.to_string()).collect()))
}

/// A nest whose innermost loop `[-]` runs ten rounds per entry: at the
/// default threshold (50) its hot spot, the `-`, gets hot in the last
/// round of an entry, so the recording goes out of the inner loop, round
/// the loop around it and back. Closed there, that loop's trace was left
/// by the inner loop's back edge nine times in ten, and each of its
/// rounds went through that exit's bridge back into the outer loop's
/// preamble (BF bench.b's nest, 0.69 s under the JIT against 1.34 s for
/// the same interpreter in C); the bridge then found the way round
/// inside, and the loop was recorded again from there (0.23 s). Now the
/// recording, jumping back across its start at the loop around (to that
/// loop's head, `Head`), is recorded again from that head, going through
/// the inner loop twice: the inner loop gets its own trace, which runs to
/// its end at once, and the outer one is a bridge from its exit, without
/// the detour.
#[test]
fn a_loop_recorded_going_out_of_an_inner_loop_is_recorded_again_inside() {
    let text = "++++++++++[>++++++++++[>++++++++++[>++++++++++[-]<-]<-]<-]>>>+.";
    let inner = text.find("[-]").expect("the inner loop") + 1;
    // (Its `[-]` not done at once by the loops around it, as an inner loop
    // that does not run to its end at once.)
    let options = Options { skip_inner: false, ..checked() };
    let r = run("tests/corpus/interpreters/bf_tutorial.fg", Hint::AsWritten, "start", Some(&bf_env(text)), options);
    assert_eq!(r.output, "1\n");
    assert_eq!((r.stats.reheaded, r.stats.inner_first), (1, 1), "{}\n{}", r.stats, r.log);
    // The inner loop's hot spots: its `-` and its `]` (the loop may be
    // recorded again at either).
    let keys = [format!("dispatch[pc={inner}]"), format!("dispatch[pc={}]", inner + 1)];
    let at_inner = |t: &&flowc_trace::jit::TraceReport| keys.contains(&t.start);
    let inside = r.stats.per_trace.iter().filter(at_inner).find(|t| t.kind == "loop" && t.recorded_ops < 50);
    assert!(inside.is_some(), "no loop of the inner loop alone\n{}", r.stats);
    // Its code ran nearly all the 10,000 rounds (those skipped at once
    // count), entered there or through the entry trace at the head of the
    // loop around it (which the run's rounds are counted to).
    let entered = |t: &&flowc_trace::jit::TraceReport| (at_inner(t) && t.recorded_ops < 50) || t.kind == "entry";
    let rounds: u64 = r.stats.per_trace.iter().filter(entered).map(|t| t.iterations).sum();
    assert!(rounds > 9_000, "{}", r.stats);
    assert_eq!(r.stats.fast_forwarded, 1, "{}", r.stats);
}

/// The same nest where the outer loop's labels get hot before the inner
/// loop's back edge gets its bridge (threshold 10, bridges after 40
/// failures): their entry traces lead into the inner loop. The bridges
/// from the inner loop's exit, going round the outer loops, go on through
/// those labels into the inner loop, not into the entry traces, whose
/// checks would run at every round of the outer loop (the suite's
/// `counters` 30 under the worker: 0.15 s every run, against 0.15-0.54
/// when the bridges stopped there). With inner loops done at once by the
/// loops around them (the next test), the `[-]` makes no nest of traces:
/// here that is off, as for an inner loop that does not run to its end at
/// once.
#[test]
fn bridges_round_a_nest_go_through_entry_traces_into_their_loop() {
    let text = "++++++++++[>++++++++++[>++++++++++[>++++++++++[-]<-]<-]<-]>>>+.";
    let options = Options { threshold: 10, bridge_threshold: 40, skip_inner: false, ..checked() };
    let r = run("tests/corpus/interpreters/bf_tutorial.fg", Hint::AsWritten, "start", Some(&bf_env(text)), options);
    assert_eq!(r.output, "1\n");
    let entries: Vec<&str> = r.stats.per_trace.iter().filter(|t| t.kind == "entry").map(|t| t.name.as_str()).collect();
    assert!(entries.len() >= 2, "{}", r.stats);
    // Each bridge's code in the log, and the code it jumps to.
    let bridges: Vec<&str> = r.log.split("\n[").filter(|b| b.contains(" from exit ")).collect();
    assert!(!bridges.is_empty(), "{}", r.log);
    for b in bridges {
        if let Some(at) = b.find("jump_trace '") {
            let to = &b[at + "jump_trace '".len()..];
            let to = &to[..to.find('\'').expect("a quoted name")];
            assert!(!entries.contains(&to), "a bridge jumps into entry trace {to}:\n{b}\n{}", r.stats);
        }
    }
}

/// The same nest with its `[-]` done at once by the loops around it
/// (`crate::skip`). The `[-]`'s exit, whose way goes round the loop
/// around back to its head, gets a bridge that ends there (the head has
/// no code yet: `recording::BackJump`): the interpreter runs the loop
/// around from its head, which gets it recorded; that recording
/// arrives at the `[-]`'s head, whose code runs it to its end at once,
/// records the skip there and the last round, and closes — so the loop
/// around runs as machine code that does each `[-]` at once, and the
/// `[-]`'s own trace runs under a tenth of the program's 50,000 rounds of
/// it. (Without skips its count, always 10, is unrolled into the loop
/// around's recording instead.)
/// (Fifty rounds of the outermost loop: a loop around that first went
/// round the `[-]` before its code was there is recorded again at its
/// next threshold, fifty arrivals during which the `[-]` runs round by
/// round in its own code.)
#[test]
fn an_inner_loop_that_runs_to_its_end_at_once_is_done_at_once_by_the_loop_around() {
    let text = format!("{}[>++++++++++[>++++++++++[>++++++++++[-]<-]<-]<-]>>>+.", "+".repeat(50));
    let text = text.as_str();
    let clear = text.find("[-]").expect("the inner loop") + 1;
    let path = "tests/corpus/interpreters/bf_tutorial.fg";
    let r = run(path, Hint::AsWritten, "start", Some(&bf_env(text)), checked());
    assert_eq!(r.output, "1\n");
    assert!(r.stats.skipped >= 1 && r.stats.bridges_to_heads >= 1, "{}\n{}", r.stats, r.log);
    assert!(r.log.contains(&format!("the loop at dispatch[pc={clear}] done at once but its last round")), "{}", r.log);
    let off = run(path, Hint::AsWritten, "start", Some(&bf_env(text)), Options { skip_inner: false, ..checked() });
    assert_eq!(off.output, r.output);
    assert_eq!((off.stats.skipped, off.stats.left_around), (0, 0), "{}", off.stats);
    // The rounds the `[-]`'s own code ran, entered there or through entry
    // traces into it.
    let own = |s: &flowc_trace::jit::Stats| -> u64 {
        let clears = |t: &&flowc_trace::jit::TraceReport| t.start == format!("dispatch[pc={clear}]");
        s.per_trace.iter().filter(clears).map(|t| t.iterations).sum()
    };
    assert!(own(&r.stats) * 10 <= 50 * 10 * 10 * 10, "{}", r.stats);
}

/// A function whose loop counts `k` rounds and returns the count.
const COUNT: &str = "function count(k):
    begin:
        c = 0
        goto loop
    loop:
        more = k > 0
        if more goto step else goto out
    step:
        k = k - 1
        c = c + 1
        goto loop
    out:
        return c
";

/// A function whose loop runs as many rounds as its argument says,
/// called by one loop with 100 (past the unroll limit; a variable, so the
/// rounds are the data's, not the trace's constant: see
/// [`a_called_loop_of_constant_rounds_is_followed_past_the_unroll_limit`])
/// and by another with 3: the first loop's code calls it, the second's
/// still follows it (a BF interpreter's `move` by 265 cells in one place
/// and a few in others: followed nowhere once one call ran long, every
/// trace called it).
#[test]
fn a_call_that_unrolls_too_far_is_called_by_that_hot_spots_code_alone() {
    let text = format!(
        "entry start(n = 3000, m = 100)
{COUNT}start:
    i = 0
    a = 0
    goto long
long:
    more = i < n
    if more goto long_body else goto short_start
long_body:
    x = call count(m) then long_next
long_next:
    a = a + x
    i = i + 1
    goto long
short_start:
    i = 0
    goto short
short:
    more = i < n
    if more goto short_body else goto done
short_body:
    y = call count(3) then short_next
short_next:
    a = a + y
    i = i + 1
    goto short
done:
    print_and_stop(a)
"
    );
    let r = run_text("count.fg", &text, Hint::AsWritten, "start", None, checked());
    assert_eq!(r.output, "309000\n");
    assert_eq!(r.stats.not_followed, 1, "{}\n{}", r.stats, r.log);
    assert!(r.log.contains("calls of count are not followed from now on by the code of"), "{}", r.log);
    let calls = |t: &&String| t.contains("call count");
    assert!(r.traces.iter().any(|t| t.starts_with("trace long") && t.contains("call count")), "{}", r.traces.join(""));
    let short: Vec<&String> = r.traces.iter().filter(|t| t.starts_with("trace short")).collect();
    assert!(!short.is_empty() && !short.iter().any(calls), "{}", r.traces.join(""));
}

/// A loop calling `count(3)` every round but its last, `count(m)` (past
/// the unroll limit) then, inside a loop around it. The inner loop's code
/// follows `count`; the exit to the long call gets hot once the outer
/// loop's code jumps into that code. Its bridge stops at the unroll limit:
/// the inner loop's code calls `count` from then on, and is dropped from
/// its hot spot to be recorded again — but the outer loop still jumps
/// into it, and the exit's next bridge is of code no hot spot holds. That
/// one too is a limit met by this loop alone: `count` is still followed
/// everywhere else (it was followed nowhere after it, and the run-length
/// BF interpreter's `escape 20` ran 1.85 s instead of 0.2 where the
/// worker's timing led there).
#[test]
fn a_called_loop_too_long_in_dropped_code_is_not_called_everywhere() {
    let text = format!(
        "entry start(n = 400, m = 100)
{COUNT}start:
    i = 0
    a = 0
    goto outer
outer:
    j = 0
    goto inner
inner:
    more = j < 30
    if more goto body else goto outer_next
body:
    big = j == 29
    if big goto long else goto short
long:
    x = call count(m) then next
short:
    x = call count(3) then next
next:
    a = a + x
    j = j + 1
    goto inner
outer_next:
    i = i + 1
    again = i < n
    if again goto outer else goto done
done:
    print_and_stop(a)
"
    );
    let options = Options { bridge_threshold: 60, ..checked() };
    let r = run_text("dropped.fg", &text, Hint::Absent, "start", None, options);
    assert_eq!(r.output, "74800\n");
    let limits = r.log.matches("ran 64 iterations in one call").count();
    assert!(limits >= 2, "the exit's bridge met the limit again, in dropped code:\n{}", r.log);
    assert!(r.log.contains("calls of count are not followed from now on by the code of inner"), "{}", r.log);
    assert!(!r.log.contains("calls of count are not followed from now on: traces call it"), "{}", r.log);
    assert_eq!(r.stats.not_followed, 1, "{}", r.stats);
}

/// A loop taking one of four ways each round, in a tree allowed one
/// bridge: the exits past it say why they have none, in the stats and as
/// printed (`--stats`).
#[test]
fn an_exit_left_without_a_bridge_says_why() {
    let text = "entry start(n = 4000)
start:
    i = 0
    a = 0
    goto head
head:
    more = i < n
    if more goto body else goto done
body:
    k = i % 4
    one = k == 1
    if one goto b1 else goto t2
t2:
    two = k == 2
    if two goto b2 else goto t3
t3:
    three = k == 3
    if three goto b3 else goto b0
b0:
    a = a + 1
    goto next
b1:
    a = a + 10
    goto next
b2:
    a = a + 100
    goto next
b3:
    a = a + 1000
    goto next
next:
    i = i + 1
    goto head
done:
    print_and_stop(a)
";
    let options = Options { max_bridges: 1, ..checked() };
    let r = run_text("ways.fg", text, Hint::Absent, "start", None, options);
    assert_eq!(r.output, "1111000\n");
    let exits: Vec<&flowc_trace::jit::ExitReport> = r.stats.per_trace.iter().flat_map(|t| &t.exits).collect();
    assert_eq!(exits.iter().filter(|e| e.bridge.is_some()).count(), 1, "{}", r.stats);
    let full = exits.iter().filter(|e| e.no_bridge == Some(flowc_trace::jit::NoBridge::TreeFull)).count();
    assert!(full >= 1, "{}", r.stats);
    assert!(r.stats.to_string().contains("(no bridge: its tree holds the most bridges)"), "{}", r.stats);
    assert!(exits.iter().all(|e| e.bridge.is_none() || e.no_bridge.is_none()), "{}", r.stats);
}

/// A counted loop written in the language, its cells fields of two
/// objects, one of them holding a value outside its modulus the first
/// time (`d.w = 100`, then `(w + 3) mod 7`): the loop around it does it
/// at once, keeping that value exactly where the skip does nothing (the
/// counter set to 1), and prints what the interpreter prints.
#[test]
fn a_skip_keeps_a_cell_outside_its_modulus_where_it_skips_nothing() {
    let text = "entry start(n = 2000)
start:
    c = new cell
    d = new cell
    c.v = 0
    d.w = 100
    i = 0
    s = 0
    goto outer
outer:
    more = i < n
    if more goto fill else goto done
fill:
    k = i % 9
    k = k + 1
    c.v = k
    goto inner
inner:
    x = c.v
    x = x - 1
    x = x % 10
    c.v = x
    y = d.w
    y = y + 3
    y = y % 7
    d.w = y
    if x goto inner else goto after
after:
    t = d.w
    s = s + t
    i = i + 1
    goto outer
done:
    print_and_stop(s)
";
    let r = run_text("counted.fg", text, Hint::AsWritten, "start", None, checked());
    assert!(r.stats.skipped >= 1, "{}\n{}", r.stats, r.log);
    let off = run_text("counted.fg", text, Hint::AsWritten, "start", None, Options { skip_inner: false, ..checked() });
    assert_eq!(off.output, r.output);
}

/// A counted loop whose rounds each run a counted loop inside to its end
/// (BF's `[>++++++++++[-]<-]`, as `counters` nests them): each round
/// leaves the inner cell at 0, the constant it started from, so the
/// outer loop runs to its end at once too where it is entered, and the
/// loop around that does it at once. Their traces count their rounds and
/// those inside; the output is the interpreter's.
#[test]
fn a_counted_loop_around_a_loop_done_at_once_is_done_at_once() {
    let text = "entry start(n = 3000)
start:
    c = new cell
    d = new cell
    d.v = 0
    i = 0
    s = 0
    goto outer
outer:
    more = i < n
    if more goto fill else goto done
fill:
    k = i % 200
    k = k + 2
    c.v = k
    goto round
round:
    y = d.v
    y = y + 10
    y = y % 256
    d.v = y
    goto inner
inner:
    z = d.v
    z = z - 1
    z = z % 256
    d.v = z
    if z goto inner else goto next
next:
    x = c.v
    x = x - 1
    x = x % 256
    c.v = x
    if x goto round else goto after
after:
    s = s + k
    i = i + 1
    goto outer
done:
    print_and_stop(s)
";
    let r = run_text("nested.fg", text, Hint::AsWritten, "start", None, checked());
    let counted = r.traces.iter().filter(|t| t.contains("iterations") && t.contains("eq ")).count();
    assert!(counted >= 1, "a loop skips where its inner cell holds 0:\n{}", r.traces.join("\n"));
    assert!(r.stats.fast_forwarded >= 2, "{}", r.stats);
    // The loop around it, over `i`, does it at once in turn: its trace
    // counts the rounds inside each round the skip does.
    let rounds = r.traces.iter().any(|t| t.contains("'%rounds0' = mul"));
    assert!(rounds, "the loop over i skips the counted loop:\n{}", r.traces.join("\n"));
}

/// The same in a plain nest of loops: the inner loop's back edge goes
/// straight to its header, so the exit that finds the shorter way round
/// is at the loop's own label (its bridge would be empty). Recorded
/// going out and round the middle loop, the inner loop is recorded
/// again by itself. Here the exit fails five times a round, so its
/// 20th failure, when it is hot, is in the last round at every try: a
/// retry waits one more failure per try (`--warmup 0 --threshold 30` on
/// 200,000 outer rounds: 53 -> 21 ms).
#[test]
fn a_plain_nest_left_at_its_inner_header_is_recorded_again_inside() {
    let text = "entry start(n = 2000)
start:
    c = new counter
    c.v = 0
    i = n
    goto outer
outer:
    if i goto mid_init else goto done
mid_init:
    j = 10
    goto mid
mid:
    if j goto in_init else goto mid_end
in_init:
    k = 10
    goto inner
inner:
    k = k - 1
    if k goto inner else goto in_end
in_end:
    t = c.v
    t = t + j
    t = t % 1000003
    c.v = t
    j = j - 1
    goto mid
mid_end:
    i = i - 1
    goto outer
done:
    v = c.v
    print_and_stop(v)
";
    let options = Options { threshold: 30, ..checked() };
    let r = run_text("plain_nest.fg", text, Hint::AsWritten, "start", None, options);
    assert_eq!(r.output, "110000\n");
    assert!(r.stats.recorded_inside >= 1, "{}\n{}", r.stats, r.log);
    let inside = r.stats.per_trace.iter().find(|t| t.kind == "loop" && t.start == "inner" && t.recorded_ops < 6);
    assert!(inside.is_some(), "no loop of the inner loop alone\n{}", r.stats);
}

/// A chain of `n` nodes made one after another, appended at its end, and
/// walked `k` times, each node's class checked after the read that
/// reached it; every third node is followed by a dropped one if `gaps`.
fn chain(gaps: bool) -> String {
    let waste = if gaps { "waste" } else { "skip" };
    format!(
        "entry start(n = 300, k = 200)
start:
    first = new node
    first.v = 0
    last = first
    j = n
    goto build
build:
    if j goto push else goto walks
push:
    cell = new node
    cell.v = j
    cell.next = 0
    last.next = cell
    last = cell
    m = j % 3
    if m goto skip else goto {waste}
waste:
    w = new node
    w.v = 0
    w.next = 0
    goto skip
skip:
    j = j - 1
    goto build
walks:
    last.next = 0
    s = 0
    goto outer
outer:
    if k goto walk else goto done
walk:
    p = first
    goto step
step:
    h = p.v
    s = s + h
    p = p.next
    if p is node goto step else goto next
next:
    k = k - 1
    goto outer
done:
    print_and_stop(s)
"
    )
}

/// A chain made one node after another lies a cell apart node by node:
/// the loop walking it assumes so after each node's class check
/// (`guard_at`, leaving where the check went on to), and carries the
/// node it computes — so the walk is a chain of additions, each node's
/// `next` read only to check it. The output is the interpreter's.
#[test]
fn a_walk_along_links_laid_out_in_a_row_computes_each_from_the_one_before() {
    let r = run_text("chain.fg", &chain(false), Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "9030000\n");
    let body = r.traces.iter().find(|t| t.starts_with("trace 'step.body'(")).expect("the loop");
    expect![[r#"

        b1 step:
            v4:s = phi [b0: v2, b1: v7]
            v5:p = phi [b0: v3, b1: v9]
            v6:h = get.object v5, v
            v7:s = add v4, v6
            v8:p = get.object v5, next
            guard_link v8, node, r0 else next
            v9:p = guard_at v8, v5, 48, r1 else step
            jump b1"#]]
    .assert_eq(loop_part(std::slice::from_ref(body)));
}

/// The walk of [`chain`] testing each link for 0 rather than for its
/// class, as a program whose links hold a node or 0 may (and as a
/// partially evaluated interpreter's residual does, where the program's
/// facts made its class test one), compiles to the loop the class test
/// makes (above): the link found true is an object the recording found a
/// cell on, so the loop assumes it laid out in a row after the test (the
/// program's facts make it a node once it is not 0, so the optimizer
/// keeps the `guard_at`); the loop's phi, which carries it round, is a
/// node (its fixpoint reads the link by those facts), so the reads of it
/// test nothing; and the truth test is the class's `guard_link`, which
/// code fuses with the `guard_at`. The output is the interpreter's.
#[test]
fn a_walk_testing_its_links_for_0_compiles_as_one_testing_their_class() {
    let by_truth = chain(false).replace("if p is node goto step", "if p goto step");
    let loop_of = |name: &str, text: &str| {
        let r = run_text(name, text, Hint::Absent, "start", None, checked());
        assert_eq!(r.output, "9030000\n", "{name}");
        let body = r.traces.iter().find(|t| t.starts_with("trace 'step.body'(")).expect("the loop");
        loop_part(std::slice::from_ref(body)).to_string()
    };
    assert_eq!(loop_of("chain_truth.fg", &by_truth), loop_of("chain.fg", &chain(false)));
}

/// The same chain with a dropped node after every third: the recording
/// looks a few links ahead, finds them laid out otherwise, and assumes
/// nothing of where they lie.
#[test]
fn links_laid_out_irregularly_are_not_assumed_to_lie_in_a_row() {
    let r = run_text("chain.fg", &chain(true), Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "9030000\n");
    assert!(r.traces.iter().all(|t| !t.contains("guard_at")), "{}", r.traces.join("\n"));
}

/// The chain of [`chain`], walked 400 times; before the 200th walk every
/// other node is taken out of it. From then on the loop's `guard_at`
/// fails at every other round: its place is marked irregular, and the
/// loop is recorded again assuming nothing of it. The output is the
/// interpreter's.
#[test]
fn a_loop_whose_links_are_laid_out_otherwise_later_is_recorded_again() {
    let text = chain(false).replace("k = 200)", "k = 400)").replace(
        "next:\n    k = k - 1\n    goto outer",
        "next:\n    k = k - 1\n    half = k == 200\n    if half goto thin else goto outer
thin:
    q = first
    goto thin_step
thin_step:
    a = q.next
    if a is node goto thin_skip else goto outer
thin_skip:
    b = a.next
    q.next = b
    if b is node goto thin_on else goto outer
thin_on:
    q = b
    goto thin_step",
    );
    let r = run_text("chain.fg", &text, Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "13530000\n");
    assert!(r.log.contains("finds a link laid out otherwise: step recorded again"), "{}", r.log);
    let last = r.traces.iter().rev().find(|t| t.starts_with("trace 'step.")).expect("a loop");
    assert!(!last.contains("guard_at"), "{last}");
}

/// A tape grown 40 cells left, then 42 right: the cells to the left
/// lie a cell apart one way (`r` leads back towards the start), those to
/// the right the other, and the step from the start cell to the first
/// right one is neither. A loop scanning right across them two cells a
/// round (`[>>]`, 250 times) assumes its links lie as the recording found
/// them and carries its cell so; where the layout turns that fails, and
/// the scan leaves by that guard's exit (the second link's checks fused
/// into one comparison in baseline code: the exit writes the link's word
/// on the way out) — once a scan, one round in 40: often enough that the
/// loop is recorded again, assuming nothing there. The output is the
/// interpreter's.
#[test]
fn a_scan_across_a_tape_laid_out_two_ways_leaves_where_the_layout_turns() {
    let text = format!(
        "{}{}+{}>>>>{}[-<++++++++++>]<[{}[>>]>-]<<<.",
        "<+".repeat(40),
        ">".repeat(40),
        ">+".repeat(40),
        "+".repeat(25),
        "<".repeat(83)
    );
    let env = bf_env(&text);
    let r = run("tests/corpus/interpreters/bf_tutorial.fg", Hint::AsWritten, "start", Some(&env), checked());
    assert_eq!(r.output, "1\n");
    assert!(r.traces.iter().any(|t| t.contains("guard_at")), "{}", r.traces.join("\n"));
    assert!(r.log.contains("(to right)"), "a guard_at left:\n{}", r.log);
    assert!(r.log.contains("finds a link laid out otherwise"), "{}", r.log);
    // The first loop counts both its links from the cell it carries: the
    // second `guard_at`'s base is the first's, its distance twice as far.
    let body = r.traces.iter().find(|t| t.starts_with("trace 'dispatch.body'(")).expect("the loop");
    let ats: Vec<(String, i64, String)> = body.lines().filter_map(guard_at).collect();
    assert_eq!(ats.len(), 2, "{body}");
    assert_eq!(ats[0].0, ats[1].0, "one base:\n{body}");
    assert_eq!(ats[1].1, 2 * ats[0].1, "{body}");
}

/// A printed `guard_at` line as its base, distance, and the record and
/// label it leaves by; `None` for any other line.
fn guard_at(line: &str) -> Option<(String, i64, String)> {
    let (_, rest) = line.split_once("guard_at ")?;
    let parts: Vec<&str> = rest.splitn(4, ", ").collect();
    Some((parts[1].to_string(), parts[2].parse().ok()?, parts[3].to_string()))
}

/// The `guard_at`s of trace `t` up to its first `set` ([`guard_at`]).
fn walk_ats(t: &str) -> Vec<(String, i64, String)> {
    t.lines().take_while(|l| !l.contains(" set")).filter_map(guard_at).collect()
}

/// Straight code that walks far along links laid out in a row: a BF
/// loop that scans `[>]` over `marks` marked cells, then walks back to
/// its counter, counts down and comes round to scan again — the bridge
/// from the scan's exit walks `marks + 1` cells back. Links read
/// one from the other would wait one load after the other; each is
/// counted from where the walk starts (`rows::keep_paying`,
/// `STRAIGHT_ROW`), and the rest of the walk leaves by one exit, a copy
/// of the first one's (`rows::share_exits`: nothing between them but
/// reads and checks). A walk of six cells keeps none in straight code.
#[test]
fn straight_code_counts_a_long_walk_from_its_start_and_leaves_by_one_exit() {
    let scan = |marks: usize| {
        let back = "<".repeat(marks + 1);
        let text = format!("{}{}{}[>[>]{back}-]", "+".repeat(200), ">+".repeat(marks), "<".repeat(marks));
        let env = bf_env(&text);
        let source = source("tests/corpus/interpreters/bf_tutorial.fg");
        let r = run_text("bf_tutorial.fg", &source, Hint::AsWritten, "start", Some(&env), checked());
        let loops = r.traces.iter().filter(|t| t.contains("jump b"));
        let straight: Vec<String> =
            r.traces.iter().chain(&r.bridges).filter(|t| !t.contains("jump b")).cloned().collect();
        assert!(loops.count() > 0 && !r.bridges.is_empty(), "{}\n{}", r.traces.join("\n"), r.log);
        (r, straight)
    };
    let (far, straight) = scan(12);
    let bridge =
        straight.iter().find(|t| walk_ats(t).len() >= 8).unwrap_or_else(|| panic!("{}", far.bridges.join("\n")));
    let ats = walk_ats(bridge);
    // The scan's exit knew the cell it stopped at to be an object, and the
    // bridge starts knowing it (`TraceExit::objects`): no object test.
    assert!(bridge.contains("= get.object v0, l"), "{bridge}");
    assert!(ats.iter().all(|(base, _, _)| *base == ats[0].0), "one base:\n{bridge}");
    // The first link leaves by its own record (which holds the link as
    // read); the rest by one copy of it, the first link as checked.
    assert!(ats[1..].iter().all(|(_, _, exit)| *exit == ats[1].2), "one exit:\n{bridge}");
    assert_ne!(ats[0].2, ats[1].2, "{bridge}");
    assert!(ats.windows(2).all(|w| w[1].1 == w[0].1 + ats[0].1), "a row:\n{bridge}");
    let (near, straight) = scan(5);
    assert!(near.traces.iter().any(|t| t.contains("guard_at")), "the scan keeps its own:\n{}", near.traces.join("\n"));
    // A short walk keeps its `guard_at`s only where the heap's row vouches
    // for it (`opt::row`): then code reads none of its links.
    for t in &straight {
        assert!(!t.contains("guard_at") || t.contains("guard_row"), "a short walk:\n{t}");
    }
}

/// A BF walk along the tape, whose cells the interpreter made one after
/// another (the heap's row): the recorder finds the row where it finds
/// links laid out next to their cells, and the walk's code checks it once
/// (`guard_row` with the span of the walk) instead of each link. The
/// output is the interpreter's.
#[test]
fn a_walk_along_the_heaps_row_is_checked_once() {
    // Adds one to every fourth cell of sixteen past the counter, then
    // comes back to it and counts down: 200 rounds.
    let text = format!("{}[->{}<<<<<<<<<<<<<<<<<]", "+".repeat(200), "+>>>>".repeat(4));
    let env = bf_env(&text);
    let source = source("tests/corpus/interpreters/bf_tutorial.fg");
    let r = run_text("bf_tutorial.fg", &source, Hint::AsWritten, "start", Some(&env), checked());
    let rows: Vec<&String> = r.traces.iter().chain(&r.bridges).filter(|t| t.contains("guard_row")).collect();
    assert!(!rows.is_empty(), "{}\n{}", r.traces.join("\n"), r.bridges.join("\n"));
    for t in &rows {
        // The guard's span holds the walk's base and is counted in cells.
        let g = t.lines().find(|l| l.contains("guard_row")).expect("a guard");
        assert!(g.contains(", cell, r, l, 56, "), "{g}");
    }
    assert!(r.stats.row.found > 0, "{}", r.stats);
    assert_eq!(r.stats.row.emptied, 0, "{}", r.stats);
}

/// A copy loop `[->>+<<]` done at once inside the loop around it, on a
/// tape laid out in a row: the skip's walk to the cell it adds to is
/// checked by its places (`guard_at`s on its temporaries, which the row
/// vouches for), as the recording's own walks are, and its checks that
/// the cells are distinct and that the links back come back fold: no
/// `'%same'` comparison is left. The output is the interpreter's.
#[test]
fn a_loop_done_at_once_walks_the_row_by_its_places() {
    let text = format!("{}[>>+++++++[->>+<<]<<-]>>>>.", "+".repeat(120));
    let env = bf_env(&text);
    let source = source("tests/corpus/interpreters/bf_tutorial.fg");
    let r = run_text("bf_tutorial.fg", &source, Hint::AsWritten, "start", Some(&env), checked());
    assert!(r.stats.skipped >= 1, "{}", r.stats);
    let code: Vec<&String> = r.traces.iter().chain(&r.bridges).collect();
    let skipping: Vec<&&String> = code.iter().filter(|t| t.contains("'%w0'")).collect();
    assert!(!skipping.is_empty(), "{}", r.log);
    assert!(skipping.iter().all(|t| t.contains("'%w0' = guard_at")), "{}", r.log);
    assert!(!skipping.iter().any(|t| t.contains("'%same")), "{}", r.log);
}

/// A nest of loops four deep, each stepping one cell right, adding ten,
/// running the loop inside and stepping back: `[>++++++++++[...]<-]`.
/// Once the loops inside are done at once, an iteration of the second
/// loop comes back to its own cell through a link the way out did not
/// read (the skip of the loop inside reads the `l` of the cell to its
/// right). That
/// link lies where the way out found the cell, so it is that cell (its
/// `guard_at` kept to check it): what the iteration wrote there is known
/// when it is read again, the cell is left 0 by every iteration, and that
/// loop is done at once too — every loop of the nest is. The output is
/// the interpreter's.
#[test]
fn a_link_back_to_a_place_the_walk_passed_is_the_cell_found_there() {
    let depth = 4;
    let ten = "+".repeat(10);
    let text = format!("{}{}[-]{}>.", "+".repeat(250), format!("[>{ten}").repeat(depth), "<-]".repeat(depth));
    let env = bf_env(&text);
    let source = source("tests/corpus/interpreters/bf_tutorial.fg");
    // With the dispatch tier, as `flowc run`: the nest is compiled from
    // the inside out.
    let options = Options { dispatch_tier: true, ..checked() };
    let r = run_text("bf_tutorial.fg", &source, Hint::AsWritten, "start", Some(&env), options);
    // Each loop inside the outermost, at the position after its `[`.
    let code: Vec<u8> = text.bytes().filter(|b| b"+-<>[].,".contains(b)).collect();
    let opens: Vec<usize> = (0..code.len()).filter(|&k| code[k] == b'[').collect();
    for &k in &opens[1..] {
        let done = format!("the loop at dispatch[pc={}] done at once", k + 1);
        assert!(r.log.contains(&done), "{done}:\n{}", r.log);
    }
}

/// A loop whose head gets hot in its last round
/// (`tests/corpus/shapes/last_round.fg`): recorded from there, its trace
/// leaves the loop and goes on into the outer loop's code, an entry
/// trace. Its back edge is then an exit of that trace, and once it is hot
/// the loop is recorded again from there, in a round that goes on: a loop
/// trace of its own, which runs the inner rounds (not the entry trace,
/// entered afresh round after round through an empty bridge). The output
/// is the interpreter's.
#[test]
fn a_loop_recorded_in_its_last_round_is_recorded_again_from_its_back_edge() {
    let r = run("tests/corpus/shapes/last_round.fg", Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "508725\n");
    assert!(r.log.contains("comes back to the head of its entry trace, the loop at inner"), "{}", r.log);
    let inner = r.traces.iter().find(|t| t.starts_with("trace 'inner.2.body'(")).expect("the inner loop");
    assert!(inner.contains("jump b"), "{inner}");
}

/// An outer loop that gets hot before the loop inside it
/// (`tests/corpus/shapes/inner_first.fg`): its recording goes round the
/// inner loop, which is compiled first, on the running thread. That loop
/// runs to its end at once, so rather than an entry trace into it (every
/// outer round through it, the inner loop round by round and the rest of
/// the outer loop left to the interpreter), the outer loop is recorded
/// again at its next hot arrival: a loop that does the inner one at once.
/// The output is the interpreter's.
#[test]
fn an_outer_loop_around_an_inner_loop_done_at_once_is_recorded_again_as_a_loop() {
    let r = run("tests/corpus/shapes/inner_first.fg", Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "9\n");
    assert!(r.log.contains("abort at outer: its inner loop runs at once: recorded again"), "{}", r.log);
    assert!(r.log.contains("the loop at inner done at once"), "{}", r.log);
    assert!(r.traces.iter().any(|t| t.starts_with("trace 'outer.body'(")), "{}", r.log);
    assert_eq!(r.stats.entry_traces, 0, "{}", r.stats);
}

/// An outer loop recorded while the loop inside it runs one round each
/// time (`tests/corpus/shapes/nest_late.fg`): its recording goes through
/// that round, and its trace runs it and leaves where the inner loop goes
/// on. Once the inner loop runs six rounds, it gets hot and is compiled,
/// and runs to its end at once: the outer loop is dropped from its hot
/// spot and recorded again, and the new loop does the inner one at once.
/// The output is the interpreter's.
#[test]
fn an_outer_loop_that_went_through_a_round_of_a_loop_done_at_once_later_is_recorded_again() {
    let r = run("tests/corpus/shapes/nest_late.fg", Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "209\n");
    assert!(r.log.contains("outer went through a round of a loop now done at once: recorded again"), "{}", r.log);
    assert!(r.log.contains("the loop at inner done at once"), "{}", r.log);
    assert_eq!(r.stats.renested, 1, "{}", r.stats);
    // The loop that replaced the first one, and the first's slot leads to it.
    let again = r.traces.iter().find(|t| t.starts_with("trace 'outer.2.body'(")).expect("the outer loop again");
    assert!(again.contains("jump b"), "{again}");
}

/// An outer loop whose trace leaves where its inner loop runs
/// (`tests/corpus/shapes/short_inner.fg`, two rounds each time): the
/// exit's bridge goes round the inner loop and back to its head, and
/// there the interpreter records the inner loop at once, in a round that
/// goes on: a loop trace. Left to count its arrivals (two an outer round,
/// against the exit's failures), the inner hot spot got hot later, in a
/// last round, and became an entry trace. The output is the
/// interpreter's.
#[test]
fn a_bridge_that_goes_round_a_loop_by_itself_has_that_loop_recorded_at_once() {
    let r = run("tests/corpus/shapes/short_inner.fg", Hint::Absent, "start", None, checked());
    assert_eq!(r.output, "1887\n");
    assert!(r.traces.iter().any(|t| t.starts_with("trace 'inner.2.body'(")), "{}", r.log);
    assert_eq!(r.stats.entry_traces, 0, "{}", r.stats);
}

/// A tape whose middle cell is spliced out and put back every 40 rounds
/// (`tests/corpus/shapes/row_rewired.fg`): after the first time, the
/// splice and the mend run as compiled code, whose writes to the links
/// the heap sees as the interpreter's (the row is emptied, found again
/// and grown back). The output is the interpreter's.
#[test]
fn a_row_rewired_by_compiled_code_is_let_go_and_found_again() {
    let env = "[n/40,rounds/8000,cut/10,mend/30,period/40]";
    let r = run("tests/corpus/shapes/row_rewired.fg", Hint::Absent, "start", Some(env), checked());
    let rewiring = r.traces.iter().chain(&r.bridges).filter(|t| t.contains(", r, ") && t.contains("    set")).count();
    assert!(rewiring > 0, "the splice compiled:\n{}", r.bridges.join("\n"));
    // Emptied more than once: found again after each time.
    assert!(r.stats.row.emptied > 1 && r.stats.row.found >= r.stats.row.emptied, "{}", r.stats);
    assert!(r.stats.row.extended > 0, "{}", r.stats);
}

//! The dispatch tier (`flowc_trace::jit`'s `tier`): an interpreter whose
//! dispatch label promotes its `pc` runs the positions without code of
//! their own in its dispatch loop compiled once, and leaves it for the
//! code of the positions that have some.

use expect_test::expect;
use flowc_ir::Function;
use flowc_lang::interp::Config;
use flowc_lang::{syntax, Symbol, Value};
use flowc_trace::jit::{Jit, Options, Stats};

fn check_ir(f: &Function, after: &str) {
    if let Err(vs) = flowc_ir_checker::check(f) {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        panic!("trace IR invalid after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::function(f));
    }
}

/// An interpreter of a small machine: `set` (1) puts its argument in
/// `acc`; `add` (2) adds `acc` to `sum`; `loop` (3) takes one from `acc`
/// and jumps to its argument while `acc` is not 0. `promote pc` at the
/// dispatch label and nothing else there.
const MACHINE: &str = r#"entry start(code = [1, 2, 3], arg = [3, 0, 1])

start:
    n = len(code)
    pc = 0
    acc = 0
    sum = 0
    goto dispatch
dispatch:
    promote pc then fetch
fetch:
    more = pc < n
    if more goto decode else goto done
decode:
    op = code[pc]
    a = arg[pc]
    is_set = op == 1
    if is_set goto do_set else goto not_set
do_set:
    acc = a
    pc = pc + 1
    goto dispatch
not_set:
    is_add = op == 2
    if is_add goto do_add else goto do_loop
do_add:
    sum = sum + acc
    sum = sum % 1000003
    pc = pc + 1
    goto dispatch
do_loop:
    acc = acc - 1
    back = acc != 0
    if back goto jump else goto step
jump:
    pc = a
    goto dispatch
step:
    pc = pc + 1
    goto dispatch
done:
    print_and_stop(sum)
"#;

/// The machine's program: one loop of `long` rounds (the first hot spot,
/// where the tier is made), then `short` loops of a few rounds each, run
/// once (none arrived at often enough to be hot).
fn program(short: i64, long: i64) -> Vec<(Symbol, Value)> {
    let (mut code, mut arg) = (vec![1, 2, 3], vec![long, 0, 1]);
    for k in 0..short {
        let top = code.len() as i64 + 1;
        code.extend([1, 2, 3]);
        arg.extend([3 + k % 5, 0, top]);
    }
    let list = |v: Vec<i64>| Value::list(v.into_iter().map(Value::Int).collect());
    vec![(Symbol::intern("code"), list(code)), (Symbol::intern("arg"), list(arg))]
}

/// What the machine printed running [`program`]`(short, long)` under the
/// interpreter and under the JIT (`tier`: with the dispatch tier), the
/// JIT's statistics, and its traces printed.
fn run((short, long): (i64, i64), tier: bool) -> (String, String, Stats, Vec<String>) {
    run_with((short, long), Options { dispatch_tier: tier, ..Options::default() })
}

/// [`run`] with the JIT's `options` (the IR checked after every step).
fn run_with((short, long): (i64, i64), options: Options) -> (String, String, Stats, Vec<String>) {
    flowc_codegen::with_stack(move || {
        let env = &program(short, long);
        let program = syntax::parse("machine", MACHINE).unwrap();
        let label = Symbol::intern("start");
        let config = Config::default();
        let expected = flowc_lang::interp::run(&program, label, env, &config).unwrap().value.to_print_string();
        let module = flowc_frontend::lower(&program, label).unwrap();
        let options = Options { inspect: Some(check_ir), ..options };
        let mut jit = Jit::new(&program, &module, options);
        let got = jit.run(label, env, &config).unwrap().value.to_print_string();
        let traces = jit.traces().iter().map(|(_, f)| flowc_ir::print::function(f)).collect();
        (expected, got, jit.stats(), traces)
    })
}

/// Positions that run briefly run in the tier: the run interprets a
/// fraction of the statements it interprets without it, and prints the
/// same.
#[test]
fn positions_without_code_run_in_the_tier() {
    let (expected, with, stats, _) = run((400, 1_000), true);
    let (_, without, plain, _) = run((400, 1_000), false);
    assert_eq!(with, expected);
    assert_eq!(without, expected);
    assert!(stats.tier.is_some() && stats.tier_given_up.is_none(), "{stats}");
    assert!(stats.tier_entries > 0 && stats.tier_exits > 0, "{stats}");
    assert!(plain.tier.is_none() && plain.tier_entries == 0, "{plain}");
    let (tiered, interpreted) = (stats.interpreted.total(), plain.interpreted.total());
    assert!(tiered * 4 < interpreted, "{tiered} statements interpreted with the tier, {interpreted} without");
}

/// Once the tier has run `tier_tree` rounds, it becomes a tree: its
/// loop and the bridges of the other instructions' paths one function
/// (Cranelift's), which the bridges' jumps into the tier run from then
/// on. The same output, with the tree, without it (`None`), and with it
/// from the first round.
#[test]
fn the_tier_becomes_a_tree_once_it_has_run_long_enough() {
    let with = |tier_tree: Option<u64>| run_with((400, 1_000), Options { tier_tree, ..Options::default() });
    let (expected, late, late_stats, _) = with(Some(2_000));
    let (_, never, never_stats, _) = with(None);
    let (_, early, early_stats, _) = with(Some(1));
    assert_eq!(late, expected);
    assert_eq!(never, expected);
    assert_eq!(early, expected);
    assert_eq!(never_stats.trees, 0, "{never_stats}");
    for stats in [&late_stats, &early_stats] {
        assert!(stats.trees >= 1 && stats.grafted >= 1, "the other instructions' paths grafted:\n{stats}");
    }
}

/// The tier's tree enters the code of the positions that have some
/// through their links, as the tier's baseline code did: a BF program
/// whose inner loops get code and whose straight runs between them do
/// not, run by the tutorial interpreter with the tree from the tier's
/// first round, links and all, and without it; the same checksum.
#[test]
fn the_tiers_tree_links_into_the_positions_code() {
    // Forty rounds of five inner loops of twenty rounds each, apart.
    let inner: String = (0..5).map(|k| format!(">{}[>+<-]>[-]{}", "+".repeat(20 + k), "+-".repeat(10))).collect();
    let text = format!("{}[{inner}{}-]>.", "+".repeat(40), "<".repeat(10));
    let runs = [Some(1), None].map(|tier_tree| {
        bf_run(&text, move || Options { background: false, tier_tree, inspect: Some(check_ir), ..Options::default() })
    });
    let [(expected, tree, stats), (_, plain, plain_stats)] = runs;
    assert_eq!(tree, expected);
    assert_eq!(plain, expected);
    assert_eq!((stats.trees, plain_stats.trees), (1, 0), "{stats}\n{plain_stats}");
    assert!(stats.tier_links > 0, "positions entered through their links from the tree:\n{stats}");
}

/// The tier's loop: the dispatch loop recorded once, its promotion a
/// `guard_cold` that leaves at the dispatch label itself; the other
/// instructions' paths leave by guards (and get bridges back into it).
/// Its preamble assumes the program's lists and pins the program's
/// length, which no path of the dispatch loop writes (not `acc` or `sum`,
/// which the recorded path passed on unchanged but others write): they
/// are constants of the loop, which still takes them (the tier's links
/// pass all its variables), so its reads of the lists check nothing but
/// the index.
#[test]
fn the_tier_is_the_dispatch_loop_with_a_cold_guard_for_the_promotion() {
    let (expected, got, stats, traces) = run((3, 200), true);
    assert_eq!(got, expected);
    let tier: Vec<&String> = traces.iter().filter(|t| t.starts_with("trace 'dispatch.tier'")).collect();
    assert_eq!(tier.len(), 1, "{stats}\n{traces:#?}");
    expect![[r#"
        trace 'dispatch.tier'(v0:code, v1:arg, v2:n, v3:pc, v4:acc, v5:sum) {
        b0:
            guard_int v2, 12, 12, r6 else dispatch
            guard_value v0, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], r0 else dispatch
            guard_value v1, [200, 0, 1, 3, 0, 4, 4, 0, 7, 5, 0, 10], r1 else dispatch
            guard_cold v3, r2 else dispatch
            v6:more = lt v3, 12
            guard_true v6, r3 else done
            v7:op = readlist.int [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], v3
            v8:a = readlist.word [200, 0, 1, 3, 0, 4, 4, 0, 7, 5, 0, 10], v3
            v9:is_set = eq.word v7, 1
            guard_false v9, r4 else do_set
            v10:is_add = eq.word v7, 2
            guard_true v10, r5 else do_loop
            v11:sum = add v5, v4
            v12:sum = mod.int v11, 1000003
            v13:pc = add.word v3, 1
            jump_trace 'dispatch.tier.body'([1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], [200, 0, 1, 3, 0, 4, 4, 0, 7, 5, 0, 10], 12, v13, v4, v12)
        resume r0 {
            frame [code = v0, arg = v1, n = 12, pc = v3, acc = v4, sum = v5]
        }
        resume r1 {
            frame [code = [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], arg = v1, n = 12, pc = v3, acc = v4, sum = v5]
        }
        resume r2 {
            frame [code = [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], arg = [200, 0, 1, 3, 0, 4, 4, 0, 7, 5, 0, 10], n = 12, pc = v3, acc = v4, sum = v5]
        }
        resume r3 {
            frame [sum = v5]
        }
        resume r4 {
            frame [code = [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], arg = [200, 0, 1, 3, 0, 4, 4, 0, 7, 5, 0, 10], n = 12, pc = v3, sum = v5, a = v8]
        }
        resume r5 {
            frame [code = [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3], arg = [200, 0, 1, 3, 0, 4, 4, 0, 7, 5, 0, 10], n = 12, pc = v3, acc = v4, sum = v5, a = v8]
        }
        resume r6 {
            frame [code = v0, arg = v1, n = v2, pc = v3, acc = v4, sum = v5]
        }
        }
    "#]]
    .assert_eq(tier[0]);
}

/// Whether the tier is made at a dispatch label that runs `before` ahead
/// of its promotion; the run's result is the interpreter's either way.
fn tier_with(before: &str) -> bool {
    let source = MACHINE.replace("dispatch:\n    promote pc", &format!("dispatch:\n{before}    promote pc"));
    flowc_codegen::with_stack(move || {
        let parsed = syntax::parse("machine", &source).unwrap();
        let label = Symbol::intern("start");
        let env = program(50, 200);
        let config = Config::default();
        let expected = flowc_lang::interp::run(&parsed, label, &env, &config).unwrap().value;
        let module = flowc_frontend::lower(&parsed, label).unwrap();
        let options = Options { inspect: Some(check_ir), ..Options::default() };
        let mut jit = Jit::new(&parsed, &module, options);
        let got = jit.run(label, &env, &config).unwrap().value;
        assert_eq!(got.to_print_string(), expected.to_print_string());
        jit.stats().tier.is_some()
    })
}

/// A dispatch label whose block computes before its promotion (the hint
/// after the fetch, as people write it) has the tier: leaving there for
/// the interpreter computes that again from the same values.
#[test]
fn a_label_that_computes_before_its_promotion_gets_the_tier() {
    assert!(tier_with("    seen = pc\n    ahead = pc + 1\n    again = ahead * 2\n"));
}

/// The tutorial BF interpreter with its hint after the loop's head and
/// the fetch (`decode: op = prog[pc]` then `promote pc`): its tier, at
/// `decode`, links into the positions' code as the tier at a lone
/// promotion does (what the block computed is not passed: the
/// position's code computes it again).
#[test]
fn a_tier_after_the_fetch_links_into_the_positions_code() {
    let text = format!("{}[>+++[>+<-]>{}<<-]>>.", "+".repeat(100), "+-".repeat(30));
    let tutorial = include_str!("../../../../tests/corpus/interpreters/bf_tutorial.fg");
    let moved = tutorial
        .replace("dispatch:\n    promote pc then fetch\nfetch:\n", "dispatch:\n")
        .replace("decode:\n    op = prog[pc]\n", "decode:\n    op = prog[pc]\n    promote pc then decoded\ndecoded:\n");
    assert_ne!(moved, tutorial);
    let links = [tutorial.to_string(), moved].map(|source| {
        let text = text.clone();
        flowc_codegen::with_stack(move || {
            let program = syntax::parse("bf", &source).unwrap();
            let label = Symbol::intern("start");
            let env = bf_env(&text);
            let config = Config::default();
            let expected = flowc_lang::interp::run(&program, label, &env, &config).unwrap().value.to_print_string();
            let module = flowc_frontend::lower(&program, label).unwrap();
            let options = Options { background: false, inspect: Some(check_ir), ..Options::default() };
            let mut jit = Jit::new(&program, &module, options);
            let got = jit.run(label, &env, &config).unwrap().value.to_print_string();
            assert_eq!(got, expected);
            let stats = jit.stats();
            (stats.tier.clone(), stats.tier_links, stats.to_string())
        })
    });
    let [(at_head, head_links, head), (after, after_links, moved_stats)] = links;
    assert!(at_head.is_some_and(|t| t.starts_with("dispatch")), "{head}");
    assert!(after.is_some_and(|t| t.starts_with("decode")), "{moved_stats}");
    assert!(head_links > 0, "{head}");
    assert!(after_links > 0, "{moved_stats}");
}

/// One that writes what it read (or allocates, or writes a field) before
/// its promotion is no tier's: leaving there would run that twice.
#[test]
fn a_label_that_writes_before_its_promotion_gets_no_tier() {
    assert!(!tier_with("    sum = sum + 1\n"));
    assert!(!tier_with("    box = new counter\n"));
}

/// The tutorial BF interpreter's environment for BF program `text`: the
/// program as character codes, and each bracket's partner.
fn bf_env(text: &str) -> Vec<(Symbol, Value)> {
    let prog: Vec<i64> = text.bytes().map(i64::from).collect();
    let mut map = vec![0i64; prog.len()];
    let mut open = Vec::new();
    for (k, c) in text.bytes().enumerate() {
        match c {
            b'[' => open.push(k),
            b']' => {
                let o = open.pop().expect("balanced brackets");
                (map[o], map[k]) = (k as i64, o as i64);
            }
            _ => {}
        }
    }
    let list = |v: Vec<i64>| Value::list(v.into_iter().map(Value::Int).collect());
    vec![(Symbol::intern("prog"), list(prog)), (Symbol::intern("map"), list(map))]
}

/// What the tutorial BF interpreter prints running BF program `text`
/// under the interpreter and under the JIT with the `options` made, and
/// the JIT's statistics.
fn bf_run(text: &str, options: impl FnOnce() -> Options + Send + 'static) -> (String, String, Stats) {
    let source = include_str!("../../../../tests/corpus/interpreters/bf_tutorial.fg");
    let text = text.to_string();
    flowc_codegen::with_stack(move || {
        let env = bf_env(&text);
        let options = options();
        let program = syntax::parse("bf_tutorial", source).unwrap();
        let label = Symbol::intern("start");
        let config = Config::default();
        let expected = flowc_lang::interp::run(&program, label, &env, &config).unwrap().value.to_print_string();
        let module = flowc_frontend::lower(&program, label).unwrap();
        let mut jit = Jit::new(&program, &module, options);
        let got = jit.run(label, &env, &config).unwrap().value.to_print_string();
        (expected, got, jit.stats())
    })
}

/// The tier becomes a tree only while its bridges are a share of all the
/// work compiled code does worth speeding up: a program whose time is a
/// nest of loops run in their code, with a short straight run in the
/// tier after each round of the outer loop, makes none, however early
/// it could (`tier_tree` 1); the tier-bound program of
/// [`the_tiers_tree_links_into_the_positions_code`] makes one.
#[test]
fn the_tier_makes_no_tree_where_its_share_of_the_work_is_small() {
    let text =
        format!("{}[>{}[>{}[>+>+<<-]<-]{}<-]>>>.", "+".repeat(60), "+".repeat(50), "+".repeat(50), "+-".repeat(8));
    let (expected, got, stats) = bf_run(&text, || Options {
        background: false,
        tier_tree: Some(1),
        inspect: Some(check_ir),
        ..Options::default()
    });
    assert_eq!(got, expected);
    assert!(stats.tier.is_some() && stats.tier_entries > 0, "the tier runs:\n{stats}");
    assert_eq!(stats.trees, 0, "{stats}");
}

/// A bridge that passes `tier_bridge_positions` positions without code
/// ends at the next by entering the tier: an inner loop's exit, taken at
/// every round of its outer loop, goes on through a straight run of
/// positions never hot; with a limit of 4 its bridge jumps into the tier
/// (the tier's preamble), without one it records the run through. The
/// same checksum either way.
#[test]
fn a_long_bridge_through_positions_without_code_ends_in_the_tier() {
    let text = format!("{}[>+++[>+<-]>{}<<-]>>.", "+".repeat(100), "+-".repeat(30));
    let runs = [4, usize::MAX].map(|limit| {
        let options = move || Options {
            background: false,
            tier_bridge_positions: limit,
            inspect: Some(check_ir),
            ..Options::default()
        };
        let (expected, got, stats) = bf_run(&text, options);
        (expected, got, stats.bridges_into_tier, stats.to_string())
    });
    let [(expected, cut, into_tier, stats), (_, whole, through, plain)] = runs;
    assert_eq!(cut, expected);
    assert_eq!(whole, expected);
    assert!(into_tier > 0, "a bridge enters the tier:\n{stats}");
    assert_eq!(through, 0, "no bridge enters the tier:\n{plain}");
}

/// Past a full cache the exits of loops still get bridges, if they go
/// into the tier (`short_bridges`): a program of 48 small loops run
/// 120 times, with room for a few pieces, leaves each loop by its exit
/// every round. Without such bridges every crossing goes to the driver;
/// with them, the exits jump into the tier, as many as allowed and no
/// more. The same checksum either way.
#[test]
fn exits_past_a_full_cache_get_bridges_into_the_tier() {
    let round: String = (1..=48).map(|i| format!(">{}[>+<-]>[-]<<", "+".repeat(90 + i % 5))).collect();
    let text = format!("{}[{round}-]>.", "+".repeat(120));
    let runs = [0, 6, usize::MAX].map(|short| {
        let options = move || Options {
            background: false,
            max_traces: 40,
            short_bridges: short,
            inspect: Some(check_ir),
            ..Options::default()
        };
        bf_run(&text, options)
    });
    let [(expected, none, without), (_, few, bounded), (_, all, with)] = runs;
    assert_eq!(none, expected);
    assert_eq!(few, expected);
    assert_eq!(all, expected);
    assert_eq!(without.short_bridges, 0, "{without}");
    assert_eq!(bounded.short_bridges, 6, "as many as allowed:\n{bounded}");
    assert!(with.short_bridges > 6, "{with}");
    assert!(
        with.guard_failures * 2 < without.guard_failures,
        "exits jump into the tier rather than to the driver:\n{with}\nagainst\n{without}"
    );
}

/// The tier's own exits get bridges past a full cache: a first phase of
/// 48 small loops fills a cache of a few pieces, and a second runs an
/// opcode the first never did (`.`), in loops whose code the full cache
/// holds back — the tier runs them, through an exit of its tree it had
/// never taken. Its bridge is made past the full cache and goes back into
/// the tier; held back, each of the 6,000 outputs went to the driver.
#[test]
fn the_tiers_own_exits_get_bridges_past_a_full_cache() {
    let round: String = (1..=48).map(|i| format!(">{}[>+<-]>[-]<<", "+".repeat(90 + i % 5))).collect();
    let outputs: String = (0..30).map(|i| format!(">{}[.-]", "+".repeat(190 + i % 7))).collect();
    let text = format!("{}[{round}-]{outputs}>.", "+".repeat(40));
    let (expected, got, stats) = bf_run(&text, || Options {
        background: false,
        max_traces: 40,
        short_bridges: 0,
        inspect: Some(check_ir),
        ..Options::default()
    });
    assert_eq!(got, expected);
    assert!(stats.deferred > 0, "the cache was full:\n{stats}");
    assert!(stats.tier_bridges_past_full > 0, "{stats}");
    assert!(stats.guard_failures < 1_000, "outputs stay in the tier:\n{stats}");
}

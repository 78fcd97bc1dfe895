//! The collector under stress: with a collection at every allocation (and
//! the heap verified after each, `FLOWC_GC_STRESS`'s mode), every engine
//! still agrees with the reference interpreter — over the corpus and over
//! allocation-heavy generated programs (objects made in loops and held by
//! traces' resume data, linked lists grown, walked and dropped, objects
//! passed to functions and returned). Without stress the same programs run
//! through compiled code's inline bump allocation.

use flowc_lang::heap;
use flowc_lang::{Program, Symbol, Value};
use flowc_tests::engines::{self, Outcome};
use flowc_tests::{corpus, gen};
use flowc_trace::jit::Options;

fn eager(threshold: u32) -> Options {
    Options { threshold, bridge_threshold: 1, ..Options::default() }
}

fn set_stress(on: bool) {
    heap::with(|h| h.set_stress(on));
}

/// Runs `case` on every engine (the reference interpreter too) and
/// compares each with what it expects. Returns the collections the runs
/// made.
fn every_engine(case: &engines::Case) -> u64 {
    let (name, p, label, env, expected) = (&case.name, &case.program, case.label, &case.env, &case.expected);
    let before = heap::stats().collections;
    assert_eq!(&engines::reference(p, label, env), expected, "{name}: interp");
    if let Ok(module) = flowc_frontend::lower(p, label) {
        assert_eq!(&engines::ir(&module, env), expected, "{name}: ir");
        let versions = flowc_tests::engines::optimize_versions(module);
        assert_eq!(&engines::native(&versions, env), expected, "{name}: native");
    }
    for threshold in [1, 3] {
        assert_eq!(&engines::jit(p, label, env, eager(threshold)), expected, "{name}: jit, threshold {threshold}");
    }
    heap::stats().collections - before
}

/// The programs the stress tests run: the corpus, then `alloc` allocation-
/// heavy generated programs and `plain` ordinary ones.
fn programs(alloc: u64, plain: u64) -> Vec<(String, Program)> {
    let mut programs = corpus::with_generated(0);
    programs.extend(gen::alloc_programs(alloc));
    programs.extend(gen::programs(plain));
    programs
}

#[test]
fn every_engine_agrees_when_collecting_at_every_allocation() {
    let count = gen::seed_count(60);
    let (compared, collections) = flowc_codegen::with_stack(move || {
        let (mut compared, mut collections) = (0, 0);
        for case in engines::cases(programs(count, count / 3)).filter(|c| c.finishes()) {
            set_stress(true);
            collections += every_engine(&case);
            set_stress(false);
            compared += 1;
        }
        (compared, collections)
    });
    assert!(compared > 60, "only {compared} programs compared");
    assert!(collections > 10_000, "only {collections} collections");
}

#[test]
fn every_engine_agrees_on_allocation_heavy_programs() {
    let count = gen::seed_count(150);
    let allocations = flowc_codegen::with_stack(move || {
        let mut allocations = 0;
        for case in engines::cases(gen::alloc_programs(count)).filter(|c| c.finishes()) {
            let before = heap::stats().bytes_allocated;
            every_engine(&case);
            allocations += heap::stats().bytes_allocated - before;
        }
        allocations
    });
    // Each program allocates on five engines; most allocate a hundred
    // cells or more each time.
    assert!(allocations > 1 << 20, "only {allocations} bytes allocated");
}

/// A long run keeps only what is live: a list of 1000 cells built and
/// dropped 200 times holds one list, on every engine.
#[test]
fn compiled_code_frees_what_it_drops() {
    for engine in ["interp", "native", "jit"] {
        // A fresh thread, so a fresh heap: its peak is this run's.
        let (output, stats) = flowc_codegen::with_stack(move || {
            let p = corpus::program("tests/corpus/shapes/list_sum.fg");
            let label = Symbol::intern("start");
            let env = vec![(Symbol::intern("n"), Value::Int(1000)), (Symbol::intern("reps"), Value::Int(200))];
            let before = heap::stats();
            // No fuel: the run is longer than differential runs are.
            let config = flowc_lang::interp::Config::default();
            let output = match engine {
                "interp" => engines::outcome(flowc_lang::interp::run(&p, label, &env, &config)),
                "native" => {
                    let module = flowc_frontend::lower(&p, label).unwrap();
                    let versions = flowc_tests::engines::optimize_versions(module);
                    engines::native(&versions, &env)
                }
                _ => engines::outcome(engines::jit_run(&p, label, &env, &config, Options::default()).0),
            };
            (output, heap::stats().since(&before))
        });
        assert_eq!(output, Outcome::Output("99900000\n".into()), "{engine}");
        assert!(stats.collections > 0, "{engine}: no collection");
        // 200,000 cells were allocated; one list's worth is held.
        assert!(stats.bytes_allocated > 8 << 20, "{engine}: {stats}");
        assert!(stats.peak_bytes < 4 << 20, "{engine}: {stats}");
    }
}

/// Huge functions (`flowc_ir::HUGE_INSTS`) take another road through code
/// generation — one version, no optimistic copy, no unboxing, Cranelift's
/// cheapest settings with its single-pass register allocator — whose
/// safepoints and stack maps must be as exact: generated programs with a
/// huge main function (of some 30,000 instructions) agree with the
/// reference interpreter, collecting at every allocation.
#[test]
fn huge_functions_compile_cheaply_and_collect_exactly() {
    let seeds = gen::seed_count(3);
    let (compared, collections) = flowc_codegen::with_stack(move || {
        let (mut compared, mut collections) = (0, 0);
        for seed in 0..seeds {
            let cfg = gen::GenConfig {
                size: 20_000,
                functions: 3,
                errors: false,
                odd_names: false,
                alloc: false,
                rotate: false,
            };
            let p = gen::generate(seed, &cfg);
            let (label, env) = engines::start(&p);
            let expected = engines::reference(&p, label, &env);
            assert!(matches!(expected, Outcome::Output(_)), "seed {seed}: {expected:?}");
            let module = flowc_frontend::lower(&p, label).unwrap();
            let versions = flowc_tests::engines::optimize_versions(module);
            assert!(versions.generic.main().unwrap().is_huge(), "seed {seed}: main is not huge");
            assert!(versions.small.is_none(), "seed {seed}: a huge main got a second version");
            let before = heap::stats().collections;
            set_stress(true);
            assert_eq!(engines::native(&versions, &env), expected, "seed {seed}");
            set_stress(false);
            collections += heap::stats().collections - before;
            compared += 1;
        }
        (compared, collections)
    });
    assert_eq!(compared, seeds);
    assert!(collections > 0, "the programs allocated nothing");
}

/// A huge function (`flowc_ir::HUGE_INSTS`) keeps its roots in words of
/// its frame that values share when never live at once
/// (`flowc_codegen`'s `lower::frame`): a recursive one, each frame making
/// objects before and after its recursive call and reading them after,
/// agrees with the reference interpreter collecting at every allocation —
/// and its frames stay small enough for deep recursion (one word per
/// object would be 2,000 words a frame).
#[test]
fn a_huge_recursive_function_keeps_its_objects_across_calls() {
    let objects = 2000;
    let mut text = String::from(
        r#"entry main(n = 40)

function big(n, h):
    start:
        more = n > 0
        if more goto go else goto base
    base:
        return 0
    go:
"#,
    );
    // Objects made one after another, each read a little later, so few
    // are live at once; one made first lives across the recursive call.
    text.push_str("        keep = new box\n        keep.v = n\n");
    for k in 0..objects {
        // The write to `h`, which may be any object, keeps the read
        // below a read (cleanup forwards a field a block just wrote).
        text.push_str(&format!("        o{k} = new box\n        o{k}.v = {k}\n        h.v = {k}\n"));
        if k >= 2 {
            text.push_str(&format!("        w{k} = o{}.v\n", k - 2));
        }
    }
    text.push_str(
        r#"        m = n - 1
        r = call big(m, h) then back
    back:
"#,
    );
    for k in 0..objects / 4 {
        text.push_str(&format!(
            r#"        p{k} = new box
        p{k}.v = r
        q{k} = p{k}.v
"#
        ));
    }
    text.push_str(&format!(
        r#"        last = o{}.v
        kept = keep.v
        s = r + kept
        s = s + last
        return s

"#,
        objects - 1
    ));
    text.push_str(
        r#"main:
    h = new box
    r = call big(n, h) then show
show:
    print_and_stop(r)
"#,
    );
    let collections = flowc_codegen::with_stack(move || {
        let p = flowc_lang::syntax::parse("huge_recursive.fg", &text).unwrap();
        let (label, env) = engines::start(&p);
        let expected = engines::reference(&p, label, &env);
        // 40 frames: n + 1999 each.
        assert_eq!(expected, Outcome::Output(format!("{}\n", (1..=40).sum::<i64>() + 40 * 1999)));
        let module = flowc_frontend::lower(&p, label).unwrap();
        let versions = flowc_tests::engines::optimize_versions(module);
        let big = versions.generic.functions.iter().find(|f| f.name.as_str() == "big").unwrap();
        assert!(big.is_huge(), "big is not huge: {} instructions", big.insts.len());
        let before = heap::stats().collections;
        set_stress(true);
        let got = engines::native(&versions, &env);
        set_stress(false);
        assert_eq!(got, expected);
        heap::stats().collections - before
    });
    assert!(collections > 1000, "{collections} collections");
}

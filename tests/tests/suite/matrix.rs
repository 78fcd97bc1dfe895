//! The generated programs on every engine at once: each program is run
//! by the reference interpreter, lowered and optimized once, then run by
//! the IR interpreter on the front end's module, through the eight passes
//! (both versions, the checker and the IR interpreter after every pass),
//! as native code of the optimized versions, and under the JIT at
//! thresholds 1 (with trees) and 3; every engine prints what the
//! reference prints or raises its error. Two shards, so that the two
//! cores share the work (values cannot cross threads, so each shard makes
//! its own programs).

use flowc_tests::engines::{self, Outcome};
use flowc_tests::gen;

/// What a shard ran: programs, those that raise errors, and the traces
/// and bridges the JIT compiled at threshold 1.
#[derive(Default)]
struct Totals {
    programs: usize,
    errors: usize,
    traced: usize,
    bridges: usize,
}

/// Runs the generated programs whose seed is `k` modulo `shards` on
/// every engine.
fn shard(k: u64, shards: u64) -> Totals {
    let count = gen::seed_count(600);
    flowc_codegen::with_stack(move || {
        let mut t = Totals::default();
        let mine = gen::programs(count).into_iter().enumerate().filter(|(i, _)| *i as u64 % shards == k);
        for case in engines::cases(mine.map(|(_, p)| p)) {
            t.programs += 1;
            t.errors += matches!(case.expected, Outcome::Error(_)) as usize;
            let lowered = case.lowered();
            assert_eq!(engines::ir(&lowered, &case.env), case.expected, "IR interpreter: {}", case.name);
            let versions = engines::optimize_versions_checked(lowered, &case.env, &case.expected, &case.name);
            assert_eq!(engines::native(&versions, &case.env), case.expected, "native: {}", case.name);
            if !case.finishes() {
                continue;
            }
            let (p, label, env) = (&case.program, case.label, &case.env);
            for threshold in [1, 3] {
                let got = engines::jit(p, label, env, super::jit::eager(threshold, threshold == 1));
                assert_eq!(got, case.expected, "JIT at threshold {threshold}: {}", case.name);
            }
            let (_, stats) = engines::jit_run(p, label, env, &engines::config(), super::jit::eager(1, true));
            t.traced += stats.traces;
            t.bridges += stats.bridges;
        }
        t
    })
}

/// What every shard must have exercised, so that agreement means
/// something: errors raised, traces and bridges compiled.
fn check(t: Totals) {
    assert!(t.programs >= 250, "only {} programs", t.programs);
    assert!(t.errors > 15, "only {} programs exercised errors", t.errors);
    assert!(t.traced > 50, "only {} traces compiled", t.traced);
    assert!(t.bridges > 5, "only {} bridges compiled", t.bridges);
}

#[test]
fn every_engine_agrees_on_generated_programs_even_seeds() {
    check(shard(0, 2));
}

#[test]
fn every_engine_agrees_on_generated_programs_odd_seeds() {
    check(shard(1, 2));
}

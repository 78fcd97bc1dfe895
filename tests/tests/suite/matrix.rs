//! The generated programs on every engine at once: each program is run
//! by the reference interpreter, lowered and optimized once, then run by
//! the IR interpreter on the front end's module, through the eight passes
//! (both versions, the checker and the IR interpreter after every pass),
//! as native code of the optimized versions, and under the JIT at
//! thresholds 1 (with trees) and 3; every engine prints what the
//! reference prints or raises its error. Two shards, so that the two
//! cores share the work (values cannot cross threads, so each shard makes
//! its own programs, every other seed).

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
        let mine = (k..count).step_by(shards as usize).map(|seed| (format!("seed {seed}"), gen::program(seed)));
        for case in engines::cases(mine) {
            t.programs += 1;
            t.errors += matches!(case.expected, Outcome::Error(_)) as usize;
            let lowered = case.lowered();
            assert_eq!(engines::ir(&lowered, &case.env), case.expected, "IR interpreter: {}", case.name);
            let versions = engines::optimize_versions_checked(lowered, &case.env, &case.expected, &case.name);
            assert_eq!(engines::native(&versions, &case.env), case.expected, "native: {}", case.name);
            if !case.finishes() {
                continue;
            }
            let (traced, bridges) = super::jit::agrees(&case);
            t.traced += traced;
            t.bridges += bridges;
        }
        t
    })
}

/// What every shard must have exercised, so that agreement means
/// something: each of its programs run, and in proportion to how many
/// (`FLOWC_SEEDS` scales them), errors raised, traces and bridges
/// compiled. At the default 300 programs a shard: more than 15 errors, 50
/// traces and 5 bridges.
fn check(t: Totals, k: u64, shards: u64) {
    let count = gen::seed_count(600);
    let seeds = (k..count).step_by(shards as usize).count();
    assert_eq!(t.programs, seeds, "programs run");
    assert!(t.errors * 20 > t.programs, "only {} of {} programs exercised errors", t.errors, t.programs);
    assert!(t.traced * 6 > t.programs, "only {} traces compiled for {} programs", t.traced, t.programs);
    assert!(t.bridges * 60 > t.programs, "only {} bridges compiled for {} programs", t.bridges, t.programs);
}

#[test]
fn every_engine_agrees_on_generated_programs_even_seeds() {
    check(shard(0, 2), 0, 2);
}

#[test]
fn every_engine_agrees_on_generated_programs_odd_seeds() {
    check(shard(1, 2), 1, 2);
}

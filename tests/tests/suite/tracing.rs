//! Tracing from a label, running the (optimized) trace and resuming the
//! interpreter when a guard fails prints what interpreting from that label
//! prints — for every label of every corpus program and of generated
//! programs, with the series' optimizer and without one.

use flowc_tests::engines::{self, Outcome};
use flowc_tests::{corpus, gen};
use flowc_trace::blog;

fn check_all_labels(name: &str, p: &flowc_lang::Program) -> usize {
    let (_, env) = engines::start(p);
    let mut traced = 0;
    for b in p.main_blocks() {
        let expected = engines::reference(p, b.label, &env);
        if expected == Outcome::Error("fuel_exhausted".into()) {
            continue;
        }
        for (which, result) in [
            ("blog", engines::traced(p, b.label, &env, blog::optimize)),
            ("none", engines::traced(p, b.label, &env, |t| t.clone())),
        ] {
            match result {
                Ok(got) => {
                    assert_eq!(got, expected, "{name} from {} ({which})", b.label);
                    traced += 1;
                }
                // The series' tracer does not follow calls.
                Err(e) => assert!(e.contains("cannot follow"), "{name} from {}: {e}", b.label),
            }
        }
        let got = engines::traced_ssa(p, b.label, &env, |_, _| {});
        assert_eq!(got, expected, "{name} from {} (trace IR)", b.label);
        let remove = !engines::allocations_observable(p);
        let hints = flowc_trace::run_ir::hints(&engines::lower(p, b.label));
        let got = engines::traced_ssa(p, b.label, &env, |_, f| flowc_trace::opt::optimize(f, &hints, remove));
        assert_eq!(got, expected, "{name} from {} (optimized trace IR)", b.label);
        let got = engines::traced_ssa_on(p, b.label, &env, |_, f| flowc_trace::opt::optimize(f, &hints, remove), true);
        assert_eq!(got, expected, "{name} from {} (compiled trace)", b.label);
        traced += 1;
    }
    traced
}

#[test]
fn tracing_matches_interpretation_on_the_corpus() {
    let mut traced = 0;
    for p in corpus::all() {
        traced += check_all_labels(&p.name(), &p.program);
    }
    assert!(traced > 100, "only {traced} traces compared");
}

#[test]
fn tracing_matches_interpretation_on_generated_programs() {
    let mut traced = 0;
    let count: u64 = gen::seed_count(250);
    for seed in 0..count {
        traced += check_all_labels(&format!("seed {seed}"), &gen::program(seed));
    }
    assert!(traced > 1000, "only {traced} traces compared");
}

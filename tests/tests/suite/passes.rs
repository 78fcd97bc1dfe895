//! The eight passes keep programs valid and their behaviour unchanged:
//! after every pass the IR checker passes and the IR interpreter prints
//! what the reference interpreter prints (or raises the same error), over
//! the whole corpus and hundreds of generated programs.

use flowc_tests::engines;
use flowc_tests::{corpus, gen};

#[test]
fn pipeline_preserves_the_corpus() {
    for case in engines::cases(corpus::with_generated(0)).filter(|c| c.finishes()) {
        engines::optimize_checked(case.lowered(), &case.env, &case.expected, &case.name);
    }
}

#[test]
fn pipeline_preserves_generated_programs() {
    let count: u64 = gen::seed_count(500);
    for case in engines::cases(gen::programs(count)) {
        engines::optimize_checked(case.lowered(), &case.env, &case.expected, &case.name);
    }
}

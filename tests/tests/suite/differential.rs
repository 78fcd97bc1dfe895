//! Every engine agrees with the reference interpreter: same output, or the
//! same error kind, over the whole corpus and hundreds of generated
//! programs.

use flowc_tests::engines::{self, Outcome};
use flowc_tests::{corpus, gen};

#[test]
fn ir_matches_reference_on_the_corpus() {
    for case in engines::cases(corpus::with_generated(0)).filter(|c| c.finishes()) {
        assert_eq!(engines::ir(&case.lowered(), &case.env), case.expected, "{}", case.name);
    }
}

#[test]
fn ir_matches_reference_on_generated_programs() {
    let mut errors = 0;
    for case in engines::cases(gen::programs(600)) {
        errors += matches!(case.expected, Outcome::Error(_)) as usize;
        assert_eq!(engines::ir(&case.lowered(), &case.env), case.expected, "{}", case.name);
    }
    assert!(errors > 30, "only {errors} programs exercised errors");
}

#[test]
fn ir_matches_reference_from_every_label() {
    // Lowering from other entries makes other variables free: missing
    // parameters are unbound and must fail exactly where the interpreter does.
    for case in engines::corpus_cases_from_every_label().filter(|c| c.finishes()) {
        assert_eq!(engines::ir(&case.lowered(), &case.env), case.expected, "{}", case.name);
    }
}

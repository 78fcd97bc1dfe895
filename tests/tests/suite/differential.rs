//! The IR interpreter agrees with the reference interpreter: same output,
//! or the same error kind, over the whole corpus (from every label). The
//! generated programs run on every engine in [`super::matrix`].

use flowc_tests::corpus;
use flowc_tests::engines;

#[test]
fn ir_matches_reference_on_the_corpus() {
    for case in engines::cases(corpus::with_generated(0)).filter(|c| c.finishes()) {
        assert_eq!(engines::ir(&case.lowered(), &case.env), case.expected, "{}", case.name);
    }
}

#[test]
fn ir_matches_reference_from_every_label() {
    // Lowering from other entries makes other variables free: missing
    // parameters are unbound and must fail exactly where the interpreter does.
    for case in engines::corpus_cases_from_every_label().filter(|c| c.finishes()) {
        assert_eq!(engines::ir(&case.lowered(), &case.env), case.expected, "{}", case.name);
    }
}

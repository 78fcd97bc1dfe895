//! Both syntaxes print and parse back to the same program: over every
//! corpus program and over generated ones (with odd names, quoting,
//! negative and big constants, unknown operations).

use flowc_lang::syntax::{self, Syntax};
use flowc_lang::Program;
use flowc_tests::{corpus, gen};

fn round_trip(name: &str, program: &Program) {
    for syn in [Syntax::Prolog, Syntax::Readable] {
        let text = syntax::print(syn, program);
        assert_eq!(syntax::detect(&text), syn, "{name}: printed {syn:?} detected as the other syntax:\n{text}");
        let back = syntax::parse_as(syn, name, &text).unwrap_or_else(|e| panic!("{name} as {syn:?}: {e}\n{text}"));
        assert_eq!(&back, program, "{name}: {syn:?} round trip changed the program:\n{text}");
        assert_eq!(syntax::print(syn, &back), text, "{name}: printing is not stable");
    }
}

#[test]
fn corpus_round_trips_in_both_syntaxes() {
    let all = corpus::all();
    assert!(all.len() >= 9, "the corpus has the examples");
    for p in &all {
        round_trip(&p.name(), &p.program);
    }
}

#[test]
fn generated_programs_round_trip_in_both_syntaxes() {
    for seed in 0..400 {
        round_trip(&format!("seed {seed}"), &gen::program(seed));
    }
}

#[test]
fn converting_between_syntaxes_is_the_identity() {
    for p in corpus::all() {
        let readable = syntax::print(Syntax::Readable, &p.program);
        let via = syntax::parse(&p.name(), &readable).unwrap();
        let prolog = syntax::print(Syntax::Prolog, &via);
        assert_eq!(syntax::parse(&p.name(), &prolog).unwrap(), p.program, "{}", p.name());
    }
}

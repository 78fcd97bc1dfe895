//! Every engine agrees with the reference interpreter: same output, or the
//! same error kind, over the whole corpus and hundreds of generated
//! programs.

use flowc_tests::engines::{self, Outcome};
use flowc_tests::{corpus, gen};

#[test]
fn ir_matches_reference_on_the_corpus() {
    for p in corpus::all() {
        let (label, env) = engines::start(&p.program);
        let expected = engines::reference(&p.program, label, &env);
        if expected == Outcome::Error("fuel_exhausted".into()) {
            continue;
        }
        let module = engines::lower(&p.program, label);
        assert_eq!(engines::ir(&module, &env), expected, "{}", p.name());
    }
}

#[test]
fn ir_matches_reference_on_generated_programs() {
    let mut errors = 0;
    for seed in 0..600 {
        let p = gen::program(seed);
        let (label, env) = engines::start(&p);
        let expected = engines::reference(&p, label, &env);
        errors += matches!(expected, Outcome::Error(_)) as usize;
        let module = engines::lower(&p, label);
        assert_eq!(engines::ir(&module, &env), expected, "seed {seed}");
    }
    assert!(errors > 30, "only {errors} programs exercised errors");
}

#[test]
fn ir_matches_reference_from_every_label() {
    // Lowering from other entries makes other variables free: missing
    // parameters are unbound and must fail exactly where the interpreter does.
    for p in corpus::all() {
        let (_, env) = engines::start(&p.program);
        for b in p.program.main_blocks() {
            let expected = engines::reference(&p.program, b.label, &env);
            if expected == Outcome::Error("fuel_exhausted".into()) {
                continue;
            }
            let module = engines::lower(&p.program, b.label);
            assert_eq!(engines::ir(&module, &env), expected, "{} from {}", p.name(), b.label);
        }
    }
}

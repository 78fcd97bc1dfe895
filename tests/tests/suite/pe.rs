//! The partial evaluator agrees with the reference interpreter: the
//! residual program, run on the dynamic part of the environment, prints
//! what the original prints on all of it (or raises the same error kind) —
//! over the corpus and generated programs, with nothing static and with the
//! first variable static.

use flowc_lang::{pe, Program, Symbol, Value};
use flowc_tests::engines::{self, Outcome};
use flowc_tests::{corpus, gen};

/// Specializes `p` from `label` with the first `k` variables of `env`
/// static and runs the residual program on the rest; `None` when the
/// specialization does not finish within its block limit.
fn residual_run(p: &Program, label: Symbol, env: &[(Symbol, Value)], k: usize) -> Option<Outcome> {
    let (statics, dynamic) = env.split_at(k.min(env.len()));
    let residual = match pe::specialize(p, label, statics, 5_000) {
        Ok(r) => r,
        Err(pe::PeError::TooManyBlocks(_)) => return None,
        Err(e) => panic!("partial evaluation failed: {e}"),
    };
    Some(engines::reference(&residual.program(p), residual.entry, dynamic))
}

fn check(name: &str, p: &Program, counts: &mut (usize, usize)) {
    let (label, env) = engines::start(p);
    let expected = engines::reference(p, label, &env);
    if expected == Outcome::Error("fuel_exhausted".into()) {
        return;
    }
    for k in [0, 1] {
        match residual_run(p, label, &env, k) {
            // The residual program runs at most the original's statements
            // (the static ones ran during specialization), so it cannot run
            // out of fuel where the original did not.
            Some(got) => {
                assert_eq!(got, expected, "{name} with {k} static variable(s)");
                counts.0 += 1;
            }
            None => counts.1 += 1,
        }
    }
}

#[test]
fn residual_programs_match_the_reference_on_the_corpus() {
    // The partial evaluator recurses as deep as the residual program is long.
    let counts = flowc_codegen::with_stack(move || {
        let mut counts = (0, 0);
        for (path, program) in corpus::all().into_iter().map(|p| (p.name(), p.program)) {
            check(&path, &program, &mut counts);
        }
        counts
    });
    assert!(counts.0 > 20, "only {} runs compared ({} gave up)", counts.0, counts.1);
}

#[test]
fn residual_programs_match_the_reference_on_generated_programs() {
    let seeds: u64 = gen::seed_count(500);
    let counts = flowc_codegen::with_stack(move || {
        let mut counts = (0, 0);
        for seed in 0..seeds {
            check(&format!("seed {seed}"), &gen::program(seed), &mut counts);
        }
        counts
    });
    assert!(counts.0 > seeds as usize, "only {} runs compared ({} gave up)", counts.0, counts.1);
}

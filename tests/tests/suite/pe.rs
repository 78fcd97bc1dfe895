//! The partial evaluator agrees with the reference interpreter: the
//! residual program, run on the dynamic part of the environment, prints
//! what the original prints on all of it (or raises the same error kind) —
//! over the corpus and generated programs, with nothing static and with the
//! first variable static, by the series' algorithm and the linear mode
//! (calls with static arguments calling specialized copies); and the BF
//! interpreters specialized to random BF programs print the BF model's
//! checksum, interpreted and natively.

use flowc_lang::{pe, Program, Symbol, Value};
use flowc_tests::engines::{self, Outcome};
use flowc_tests::{corpus, gen};

/// Specializes `p` from `label` with the first `k` variables of `env`
/// static and runs the residual program on the rest; `None` when the
/// specialization does not finish within its block limit.
fn residual_run(p: &Program, label: Symbol, env: &[(Symbol, Value)], k: usize, mode: pe::Mode) -> Option<Outcome> {
    let (statics, dynamic) = env.split_at(k.min(env.len()));
    let residual = match pe::specialize_with(p, label, statics, 5_000, mode) {
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
        for mode in [pe::Mode::Series, pe::Mode::Linear] {
            match residual_run(p, label, &env, k, mode) {
                // The residual program runs at most the original's statements
                // (the static ones ran during specialization), so it cannot run
                // out of fuel where the original did not.
                Some(got) => {
                    assert_eq!(got, expected, "{name} with {k} static variable(s), {mode:?}");
                    counts.0 += 1;
                }
                None => counts.1 += 1,
            }
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

/// The three BF interpreters specialized to random BF programs
/// (`flowc_tests::bf_random`) by the linear mode, the program static: the
/// residual program prints and reads back (no hint naming a label it
/// does not have), and run by the reference interpreter and natively it
/// prints the BF model's checksum. The run-length interpreter's moves
/// (`move(tape, n)`, `n` static) call copies specialized to `n`.
#[test]
fn bf_interpreters_specialized_to_random_programs_print_the_models_checksum() {
    use flowc_lang::syntax::{self, Syntax};
    use flowc_tests::{bf, bf_random};
    let copies = flowc_codegen::with_stack(move || {
        let mut copies = 0;
        let start = Symbol::intern("start");
        for interpreter in ["bf_tutorial", "bf_rle", "bf_objects"] {
            let program = corpus::program(&format!("tests/corpus/interpreters/{interpreter}.fg"));
            for seed in 0..6 {
                let text = bf_random::program(seed, 14);
                let (sum, _) = bf::run(&text).expect("a generated program is valid");
                let env = match interpreter {
                    "bf_rle" => bf::run_length_env(&text),
                    _ => bf::tutorial_env(&text),
                };
                let statics = flowc_lang::syntax::prolog::parse_env(&env).expect("an environment");
                let r = pe::specialize_with(&program, start, &statics, 200_000, pe::Mode::Linear)
                    .unwrap_or_else(|e| panic!("{interpreter} on {text}: {e}"));
                copies += r.functions.len();
                let printed = syntax::print(Syntax::Readable, &r.program(&program));
                let residual = syntax::parse("residual", &printed)
                    .unwrap_or_else(|e| panic!("{interpreter} on {text}: the residual does not read back: {e}"));
                let expected = Outcome::Output(format!("{sum}\n"));
                assert_eq!(engines::reference(&residual, r.entry, &[]), expected, "{interpreter} on {text}");
                let versions = engines::optimize_versions(engines::lower(&residual, r.entry));
                assert_eq!(engines::native(&versions, &[]), expected, "{interpreter} on {text}, native");
            }
        }
        copies
    });
    assert!(copies > 6, "only {copies} specialized copies of the run-length interpreter's move");
}

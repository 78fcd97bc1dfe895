//! Fuzzing the IR parser and checker with damaged IR texts.

use std::panic::{catch_unwind, AssertUnwindSafe};

use flowc_tests::{gen, rng::Rng};

use crate::mutate::mutate;

/// What a fuzzing run saw.
#[derive(Debug, Default)]
pub struct Report {
    pub inputs: u64,
    /// Inputs the parser rejected (with an error, as it should).
    pub parse_errors: u64,
    /// Inputs that parsed and broke invariants.
    pub invalid: u64,
    /// Inputs that parsed and were valid.
    pub valid: u64,
    /// Inputs that made the parser or the checker panic, as (seed, text).
    pub panics: Vec<(u64, String)>,
}

/// The valid texts mutations start from: the IR of generated program
/// `seed`, as lowered and after the eight passes.
pub fn seed_texts(seed: u64) -> Vec<String> {
    let p = gen::program(seed);
    let Some(entry) = p.default_entry() else { return Vec::new() };
    let Ok(mut module) = flowc_frontend::lower(&p, entry) else { return Vec::new() };
    let lowered = flowc_ir::print::module(&module);
    let mut cx = flowc_passes::Context::new(&module);
    flowc_passes::optimize(&mut module, &mut cx, |_, _, _| {});
    vec![lowered, flowc_ir::print::module(&module)]
}

/// Runs `inputs` damaged texts, from seed `first` on.
pub fn run(first: u64, inputs: u64) -> Report {
    let mut report = Report::default();
    let mut texts: Vec<String> = Vec::new();
    for k in 0..inputs {
        let seed = first + k;
        if k % 64 == 0 {
            // A new family of valid texts now and then.
            texts = seed_texts(seed / 64);
        }
        if texts.is_empty() {
            continue;
        }
        let mut rng = Rng::new(seed);
        let base = texts[rng.below(texts.len())].clone();
        let text = mutate(&base, &mut rng);
        report.inputs += 1;
        let outcome = catch_unwind(AssertUnwindSafe(|| match flowc_ir::parse::module("fuzz.ir", &text) {
            Err(_) => 0,
            Ok(m) => match flowc_ir_checker::check_module(&m) {
                Ok(()) => 1,
                Err(vs) => {
                    // Messages render without panicking too.
                    vs.iter().for_each(|v| drop(v.to_string()));
                    2
                }
            },
        }));
        match outcome {
            Ok(0) => report.parse_errors += 1,
            Ok(1) => report.valid += 1,
            Ok(_) => report.invalid += 1,
            Err(_) => report.panics.push((seed, text)),
        }
    }
    report
}

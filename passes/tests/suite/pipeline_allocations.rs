//! The whole pipeline over every corpus program (examples/ and
//! tests/corpus/) and over generated programs: after every pass the IR
//! passes the checker and runs with the reference interpreter's output or
//! error (`support::run_program_until`).

use crate::support;

use std::panic::{catch_unwind, AssertUnwindSafe};

use flowc_lang::Program;
use flowc_testkit::{corpus, gen};

/// Runs the pipeline through `dce` unless the reference run does not end
/// within its fuel (the IR interpreter's fuel differs). Returns the
/// allocations before and after the pipeline, `None` if skipped.
fn pipeline(program: Program) -> Option<(u64, u64)> {
    if support::reference(&program) == "error fuel_exhausted" {
        return None;
    }
    let entry = program.default_entry().expect("an entry");
    let module = flowc_frontend::lower(&program, entry).expect("lowers");
    let before = support::run_ir(&program, &module).1;
    let run = support::run_program_through(program, "dce");
    Some((before, support::run_ir(&run.program, &run.module).1))
}

#[test]
fn corpus_through_every_pass() {
    let mut ran = 0;
    for p in corpus::all() {
        let name = p.name();
        let result = catch_unwind(AssertUnwindSafe(|| pipeline(p.program)));
        match result {
            Ok(Some(_)) => ran += 1,
            Ok(None) => {}
            Err(_) => panic!("{name} failed (see above)"),
        }
    }
    assert!(ran >= 20, "only {ran} corpus programs ran");
}

#[test]
fn generated_programs_through_every_pass() {
    let (mut ran, mut saved) = (0, 0);
    for seed in 0..300 {
        let program = gen::program(seed);
        let text = flowc_lang::syntax::print(flowc_lang::syntax::Syntax::Readable, &program);
        let result = catch_unwind(AssertUnwindSafe(|| pipeline(program)));
        match result {
            Ok(Some((before, after))) => {
                ran += 1;
                assert!(after <= before, "seed {seed}: more allocations after the pipeline");
                saved += (after < before) as usize;
            }
            Ok(None) => {}
            Err(_) => panic!("seed {seed} failed; the program:\n{text}"),
        }
    }
    assert!(ran >= 250, "only {ran} generated programs ran");
    assert!(saved >= 30, "unbox removed allocations in only {saved} programs");
}

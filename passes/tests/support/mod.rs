//! Shared by the pass tests: parse a program, lower it, run the pipeline up
//! to a pass — checking the IR with the checker and running it with the IR
//! interpreter after every pass, against the reference interpreter — and
//! print the result for a snapshot.

#![allow(dead_code)]

use flowc_ir::Module;
use flowc_lang::interp::{self, Config};
use flowc_lang::{syntax, Program, Symbol, Value};
use flowc_passes::{Context, PIPELINE};

pub struct Run {
    pub module: Module,
    pub cx: Context,
    pub program: Program,
}

/// Parses `src` (either syntax) and lowers it from its default entry.
pub fn lower(src: &str) -> (Program, Module) {
    let program = syntax::parse("test", src).unwrap_or_else(|e| panic!("{e}"));
    let entry = program.default_entry().expect("an entry");
    let module = flowc_frontend::lower(&program, entry).expect("lowers");
    verify(&module, "the front end");
    (program, module)
}

pub fn verify(module: &Module, after: &str) {
    if let Err(vs) = flowc_ir_checker::check_module(module) {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        panic!("invalid IR after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::module(module));
    }
}

fn env(p: &Program) -> Vec<(Symbol, Value)> {
    let entry = p.default_entry().unwrap();
    p.entry_env(entry).unwrap_or_default().to_vec()
}

/// The reference interpreter's output (or error term) for the default start.
pub fn reference(p: &Program) -> String {
    let entry = p.default_entry().unwrap();
    match interp::run(p, entry, &env(p), &Config { fuel: Some(10_000_000), ..Config::default() }) {
        Ok(o) => o.output(),
        Err(e) => format!("error {}", e.kind.term()),
    }
}

/// The IR interpreter's output (or error term) and allocation count.
pub fn run_ir(p: &Program, m: &Module) -> (String, u64) {
    match flowc_ir::interp::run(m, &env(p), &Config { fuel: Some(50_000_000), ..Config::default() }) {
        Ok(o) => (o.output(), o.allocations),
        Err(e) => (format!("error {}", e.kind.term()), 0),
    }
}

/// Lowers `src` and runs the pipeline through the pass named `last`,
/// checking and running the IR after every pass.
pub fn run_until(src: &str, last: &str) -> Run {
    let (program, module) = lower(src);
    run_lowered(program, module, last)
}

/// [`run_until`] for a parsed program (from the corpus or the generator),
/// lowered from its default entry.
pub fn run_program_until(program: Program, last: &str) -> Run {
    let entry = program.default_entry().expect("an entry");
    let module = flowc_frontend::lower(&program, entry).expect("lowers");
    verify(&module, "the front end");
    run_lowered(program, module, last)
}

fn run_lowered(program: Program, mut module: Module, last: &str) -> Run {
    assert!(PIPELINE.iter().any(|p| p.name == last), "no pass {last}");
    let expected = reference(&program);
    let mut cx = Context::new(&module);
    for pass in &PIPELINE {
        (pass.run)(&mut module, &mut cx);
        verify(&module, pass.name);
        let (got, _) = run_ir(&program, &module);
        assert_eq!(got, expected, "output changed after {}:\n{}", pass.name, flowc_ir::print::module(&module));
        if pass.name == last {
            break;
        }
    }
    Run { module, cx, program }
}

/// The IR after the pipeline through `last`, with that pass's annotations.
pub fn dump_until(src: &str, last: &str) -> String {
    let run = run_until(src, last);
    let mut out = flowc_ir::print::module(&run.module);
    if let Some(annotate) = PIPELINE.iter().find(|p| p.name == last).and_then(|p| p.annotate) {
        out.push_str(&annotate(&run.module, &run.cx));
    }
    out
}

//! The SSA route for traces (`--optimizer ssa`): a recorded trace becomes
//! IR ([`crate::to_ir`]), is optimized ([`crate::opt`]) and runs — here on
//! the IR interpreter, in the JIT as native code — until a guard fails;
//! then the interpreter resumes from the guard's record ([`crate::resume`]).

use std::collections::HashMap;

use flowc_ir::interp::{run_trace, Exit};
use flowc_ir::{Function, Module};
use flowc_lang::ast::Item;
use flowc_lang::interp::{Config, ErrorKind, RuntimeError};
use flowc_lang::{Env, Program, Symbol, Value};

use crate::record::Heap;
use crate::resume;

/// The program's hints and functions (lowered to IR, without the main
/// graph), which traces run and fold calls of `pure` functions with.
pub fn hints(program: &Program) -> Module {
    let lowered = program.default_entry().and_then(|e| flowc_frontend::lower(program, e).ok());
    let mut m = match lowered {
        Some(m) => m,
        None => {
            let mut m = Module::default();
            for item in &program.items {
                match item {
                    Item::Pure(f) => m.pure.push(*f),
                    Item::Immutable(c, fs) => m.immutable.push((*c, fs.clone())),
                    _ => {}
                }
            }
            return m;
        }
    };
    m.functions.retain(|f| f.kind == flowc_ir::FunctionKind::Function);
    m
}

/// Runs trace function `f` from `start` (the environment it was recorded
/// from, whose variables are its parameters) until a guard fails, then
/// interprets to the end. Returns the printed value.
pub fn execute(
    program: &Program,
    f: &Function,
    start: Env,
    heap: &mut Heap,
    config: &Config,
) -> Result<Value, RuntimeError> {
    let module = hints(program);
    let args: Vec<Value> = f
        .params
        .iter()
        .map(|&p| {
            let name = f.values[p].name.expect("trace parameters are named");
            start.get(&name).cloned().expect("the trace starts where it was recorded")
        })
        .collect();
    match run_trace(&module, f, args, &mut heap.allocations, config)? {
        Exit::GuardFailed { resume, label, values } => {
            let values: HashMap<_, _> = values.into_iter().collect();
            let frames = resume::frames(&f.resumes[resume], &values, heap);
            resume::continue_interpreting(program, &frames, label, heap, config)
        }
        Exit::Printed(v) | Exit::Returned(v) => Ok(v),
    }
}

/// Like [`execute`], with the trace compiled to machine code.
pub fn execute_native(
    program: &Program,
    f: &Function,
    start: Env,
    heap: &mut Heap,
    config: &Config,
) -> Result<Value, RuntimeError> {
    let module = hints(program);
    let compiled = flowc_codegen::CompiledTrace::compile(f, &module).map_err(|e| internal(&e))?;
    let args: Vec<Value> = compiled
        .params()
        .iter()
        .map(|name| start.get(name).cloned().expect("the trace starts where it was recorded"))
        .collect();
    match compiled.run(&args, &mut heap.allocations, config.max_depth, None) {
        flowc_codegen::TraceEnd::Exit { resume, label, values, .. } => {
            let values: HashMap<_, _> = values.into_iter().collect();
            let frames = resume::frames(&f.resumes[resume], &values, heap);
            resume::continue_interpreting(program, &frames, label, heap, config)
        }
        flowc_codegen::TraceEnd::Error(e) => Err(e),
        flowc_codegen::TraceEnd::Printed(v) => Ok(v),
    }
}

/// A trace that cannot run (an internal error, reported like a runtime one).
pub fn internal(msg: &str) -> RuntimeError {
    RuntimeError { kind: ErrorKind::User(Symbol::intern(&format!("internal: {msg}"))), at: None }
}

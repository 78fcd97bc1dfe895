//! The SSA route for traces (`--optimizer ssa`): a recorded trace becomes
//! IR ([`crate::to_ir`]), is optimized ([`crate::opt`]) and runs — here on
//! the IR interpreter or as native code on its own, in the JIT as part of
//! a code cache — until a guard fails; then the interpreter resumes from
//! the guard's record ([`crate::resume`]).

use rustc_hash::FxHashMap as HashMap;

use flowc_ir::interp::{run_trace, Exit};
use flowc_ir::{Function, FunctionKind, Module};
use flowc_lang::interp::{Config, ErrorKind, RuntimeError};
use flowc_lang::{Env, Program, Symbol, Value};

use crate::record::Heap;
use crate::resume;

/// What traces need of a lowered program: its functions (which traces
/// call, and the optimizer runs to fold `pure` calls) and its hints,
/// without the main graph.
pub fn hints(module: &Module) -> Module {
    Module {
        functions: module.functions.iter().filter(|f| f.kind == FunctionKind::Function).cloned().collect(),
        pure: module.pure.clone(),
        immutable: module.immutable.clone(),
    }
}

/// The arguments of trace `f` from `start`, the environment it was
/// recorded from (its parameters are variables of it).
fn arguments(f: &Function, start: &Env) -> Vec<Value> {
    f.params
        .iter()
        .map(|&p| {
            let name = f.values[p].name.expect("trace parameters are named");
            start.get(&name).cloned().expect("the trace starts where it was recorded")
        })
        .collect()
}

/// Runs trace function `f` from `start` until a guard fails, then
/// interprets to the end. Returns the printed value. The trace runs on
/// the IR interpreter, or compiled to machine code when `native`.
pub fn execute(
    program: &Program,
    hints: &Module,
    f: &Function,
    start: Env,
    heap: &mut Heap,
    config: &Config,
    native: bool,
) -> Result<Value, RuntimeError> {
    let args = arguments(f, &start);
    let (resume, label, values): (_, _, HashMap<_, _>) = if native {
        let compiled = flowc_codegen::CompiledTrace::compile(f, hints, heap.layout).map_err(|e| internal(&e))?;
        match compiled.run(&args, &mut heap.allocations, config.max_depth) {
            flowc_codegen::TraceEnd::Exit { exit, values } => {
                let exit = compiled.exit(exit);
                let values = exit.values.iter().zip(values).filter_map(|(id, v)| Some((*id, v?))).collect();
                (exit.resume, exit.label, values)
            }
            flowc_codegen::TraceEnd::Error(e) => return Err(e),
            flowc_codegen::TraceEnd::Printed(v) => return Ok(v),
        }
    } else {
        match run_trace(hints, f, args, heap.layout, &mut heap.allocations, config)? {
            Exit::GuardFailed { resume, label, values } => (resume, label, values.into_iter().collect()),
            Exit::Printed(v) | Exit::Returned(v) => return Ok(v),
            Exit::JumpedTo { target, .. } => return Err(internal(&format!("a loop trace jumped to trace {target}"))),
        }
    };
    let frames = resume::frames(&f.resumes[resume], &values, heap);
    resume::continue_interpreting(program, &frames, label, heap, config)
}

/// A trace that cannot run (an internal error, reported like a runtime one).
pub fn internal(msg: &str) -> RuntimeError {
    RuntimeError { kind: ErrorKind::User(Symbol::intern(&format!("internal: {msg}"))), at: None }
}

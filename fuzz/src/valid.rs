//! Valid IR never crashes a consumer: modules from [`crate::irgen`] go
//! through the checker (the generator's gate), the text format, the IR
//! interpreter, every pass (the checker after each) and native code, before
//! and after the passes. Nothing may panic, the checker must accept after
//! every pass, and all four runs must end alike — printed output, or the
//! same error (cranelift-fuzzgen's differential, on our IR). Call on a
//! thread with a big stack (`flowc_codegen::with_stack`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use flowc_ir::Module;
use flowc_lang::interp::Config;
use flowc_lang::{Symbol, Value};
use flowc_tests::engines::{self, Outcome};

use crate::irgen;

/// What went wrong with one generated module.
pub fn problem(seed: u64) -> Option<String> {
    run(seed).err()
}

/// The outcome of generated module `seed` (its output, or its error's
/// term), once every consumer agreed on it; what went wrong otherwise.
pub fn run(seed: u64) -> Result<Outcome, String> {
    let g = irgen::module(seed);
    caught(|| check(&g.module, &g.env))
}

/// [`run`] on the module the fuzzer's bytes describe.
pub fn run_bytes(data: &[u8]) -> Result<Outcome, String> {
    let g = irgen::module_from_bytes(data);
    caught(|| check(&g.module, &g.env))
}

/// `f`'s answer, with a panic turned into an error naming it: the checks
/// below panic (through `flowc_tests::engines`) where they find a problem.
fn caught<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("panic: {msg}"))
    })
}

/// Prints `m` and parses it back: the text must parse and print the same.
pub fn round_trip(m: &Module) -> Result<(), String> {
    let printed = flowc_ir::print::module(m);
    let back = flowc_ir::parse::module("printed.ir", &printed).map_err(|e| format!("does not parse back: {e}"))?;
    if flowc_ir::print::module(&back) != printed {
        return Err(format!("printing is not the identity:\n{printed}"));
    }
    Ok(())
}

/// The checker's verdict on a generated function, as an error naming a
/// generator bug.
fn generated_valid(checked: Result<(), Vec<flowc_ir_checker::Violation>>) -> Result<(), String> {
    checked.map_err(|vs| {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        format!("invalid after generation (a generator bug):\n{}", list.join("\n"))
    })
}

fn check(module: &Module, env: &[(Symbol, Value)]) -> Result<Outcome, String> {
    generated_valid(flowc_ir_checker::check_module(module))?;
    round_trip(module)?;
    let expected = engines::ir(module, env);
    if expected == Outcome::Error("fuel_exhausted".into()) {
        // Longer than the differential runs' fuel (calls multiply the
        // generated fuel loops): nothing to compare.
        return Ok(expected);
    }
    let differs = |what: &str, got: Outcome| -> Result<(), String> {
        if got == expected {
            Ok(())
        } else {
            Err(format!("{what}: {got:?}, the IR interpreter before the passes: {expected:?}"))
        }
    };
    let code = flowc_codegen::Native::compile(module).map_err(|e| format!("code generation failed: {e}"))?;
    differs("native code before the passes", engines::outcome(code.run(env, engines::config().max_depth)))?;
    // Both versions through the passes, the checker after each pass and
    // the IR interpreter too (it panics naming the first pass that breaks
    // the IR or changes the outcome); then native code of both.
    let versions = engines::optimize_versions_checked(module.clone(), env, &expected, "generated module");
    differs("native code after the passes", engines::native(&versions, env))?;
    Ok(expected)
}

/// How a generated trace ended: the resume record and label it left by,
/// with the values its record names (printed), or the error's term.
pub type TraceOutcome = Result<(u32, String, Vec<String>), String>;

/// The outcome of generated trace `seed` (see [`crate::irgen::trace`]),
/// once the checker accepted it, it printed back identically, and the IR
/// interpreter and native code left it the same way; what went wrong
/// otherwise.
pub fn run_trace(seed: u64) -> Result<TraceOutcome, String> {
    let g = irgen::trace(seed);
    caught(|| check_trace(&g.trace, &g.args))
}

/// [`run_trace`] on the trace the fuzzer's bytes describe.
pub fn run_trace_bytes(data: &[u8]) -> Result<TraceOutcome, String> {
    let g = irgen::trace_from_bytes(data);
    caught(|| check_trace(&g.trace, &g.args))
}

fn check_trace(trace: &flowc_ir::Function, args: &[Value]) -> Result<TraceOutcome, String> {
    generated_valid(flowc_ir_checker::check(trace))?;
    let module = Module { functions: vec![trace.clone()], ..Module::default() };
    round_trip(&module)?;
    let layout = module.layout();
    let hints = Module::default();
    let config = Config::default();
    // The values a record names, as printed.
    let named = |resume: flowc_ir::ResumeId, value_of: &dyn Fn(flowc_ir::ValueId) -> Option<Value>| -> Vec<String> {
        trace.resumes[resume]
            .operands()
            .map(|o| match o {
                flowc_ir::Operand::Value(v) => value_of(*v).map_or("unbound".to_owned(), |x| x.to_print_string()),
                flowc_ir::Operand::Const(c) => c.to_print_string(),
            })
            .collect()
    };
    let mut allocations = 0;
    let interpreted: TraceOutcome =
        match flowc_ir::interp::run_trace(&hints, trace, args.to_vec(), layout, &mut allocations, &config) {
            Ok(flowc_ir::interp::Exit::GuardFailed { resume, label, values }) => {
                let of = |v: flowc_ir::ValueId| values.iter().find(|(id, _)| *id == v).map(|(_, x)| x.clone());
                Ok((resume.into_raw().into_u32(), label.to_string(), named(resume, &of)))
            }
            Ok(other) => return Err(format!("the IR interpreter left the trace by {other:?}")),
            Err(e) => Err(e.kind.term()),
        };
    let code = flowc_codegen::CompiledTrace::compile(trace, &hints, layout)
        .map_err(|e| format!("code generation failed: {e}"))?;
    let mut allocations = 0;
    let native: TraceOutcome = match code.run(args, &mut allocations, config.max_depth) {
        flowc_codegen::TraceEnd::Exit { exit, values } => {
            let e = code.exit(exit);
            let of = |v: flowc_ir::ValueId| e.values.iter().position(|x| *x == v).and_then(|k| values[k].clone());
            Ok((e.resume.into_raw().into_u32(), e.label.to_string(), named(e.resume, &of)))
        }
        flowc_codegen::TraceEnd::Error(e) => Err(e.kind.term()),
        flowc_codegen::TraceEnd::Printed(v) => return Err(format!("native code printed {v} in a trace")),
    };
    if native != interpreted {
        return Err(format!("native code: {native:?}, the IR interpreter: {interpreted:?}"));
    }
    Ok(interpreted)
}

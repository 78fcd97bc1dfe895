//! Valid IR never crashes a consumer: modules from [`crate::irgen`] go
//! through the checker (the generator's gate), the text format, the IR
//! interpreter, every pass (the checker after each) and native code, before
//! and after the passes. Nothing may panic, the checker must accept after
//! every pass, and all four runs must end alike — printed output, or the
//! same error (cranelift-fuzzgen's differential, on our IR). Call on a
//! thread with a big stack (`flowc_codegen::with_stack`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use flowc_ir::Module;
use flowc_lang::interp::{Config, Outcome, RuntimeError};
use flowc_lang::{Symbol, Value};

use crate::irgen;

/// What went wrong with one generated module.
pub fn problem(seed: u64) -> Option<String> {
    run(seed).err()
}

/// The outcome of generated module `seed` (output, or the error's term),
/// once every consumer agreed on it; what went wrong otherwise.
pub fn run(seed: u64) -> Result<Result<String, String>, String> {
    run_generated(irgen::module(seed))
}

/// [`run`] on the module the fuzzer's bytes describe.
pub fn run_bytes(data: &[u8]) -> Result<Result<String, String>, String> {
    run_generated(irgen::module_from_bytes(data))
}

fn run_generated(g: irgen::Generated) -> Result<Result<String, String>, String> {
    catch_unwind(AssertUnwindSafe(|| check(&g.module, &g.env))).unwrap_or_else(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("panic: {msg}"))
    })
}

fn outcome(r: Result<Outcome, RuntimeError>) -> Result<String, String> {
    match r {
        Ok(o) => Ok(o.output()),
        Err(e) => Err(e.kind.term()),
    }
}

fn verify(m: &Module, after: &str) -> Result<(), String> {
    flowc_ir_checker::check_module(m).map_err(|vs| {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        format!("invalid after {after}:\n{}", list.join("\n"))
    })
}

fn check(module: &Module, env: &[(Symbol, Value)]) -> Result<Result<String, String>, String> {
    verify(module, "generation (a generator bug)")?;
    let printed = flowc_ir::print::module(module);
    let back = flowc_ir::parse::module("generated.ir", &printed).map_err(|e| format!("does not parse back: {e}"))?;
    if flowc_ir::print::module(&back) != printed {
        return Err("printing is not the identity".to_owned());
    }
    let config = Config::default();
    let ir = |m: &Module| outcome(flowc_ir::interp::run(m, env, &config));
    let native = |m: &Module| -> Result<Result<String, String>, String> {
        let code = flowc_codegen::Native::compile(m).map_err(|e| format!("code generation failed: {e}"))?;
        Ok(outcome(code.run(env, config.max_depth)))
    };
    let expected = ir(module);
    let differs = |what: &str, got: &Result<String, String>| -> Result<(), String> {
        if *got == expected {
            Ok(())
        } else {
            Err(format!("{what}: {got:?}, the IR interpreter before the passes: {expected:?}"))
        }
    };
    differs("native code before the passes", &native(module)?)?;
    let mut optimized = module.clone();
    let mut cx = flowc_passes::Context::new(&optimized);
    // The checker after every pass, and the first pass after which the IR
    // interpreter's outcome changes, to name the culprit.
    let mut broken = None;
    flowc_passes::optimize(&mut optimized, &mut cx, |pass, m, _| {
        if broken.is_none() {
            broken = verify(m, pass.name).err();
        }
        if broken.is_none() {
            let got = ir(m);
            if got != expected {
                broken =
                    Some(format!("the IR interpreter after {}: {got:?}, before the passes: {expected:?}", pass.name));
            }
        }
    });
    if let Some(b) = broken {
        return Err(b);
    }
    differs("the IR interpreter after the passes", &ir(&optimized))?;
    differs("native code after the passes", &native(&optimized)?)?;
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
    run_generated_trace(irgen::trace(seed))
}

/// [`run_trace`] on the trace the fuzzer's bytes describe.
pub fn run_trace_bytes(data: &[u8]) -> Result<TraceOutcome, String> {
    run_generated_trace(irgen::trace_from_bytes(data))
}

fn run_generated_trace(g: irgen::GeneratedTrace) -> Result<TraceOutcome, String> {
    catch_unwind(AssertUnwindSafe(|| check_trace(&g.trace, &g.args))).unwrap_or_else(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("panic: {msg}"))
    })
}

fn check_trace(trace: &flowc_ir::Function, args: &[Value]) -> Result<TraceOutcome, String> {
    flowc_ir_checker::check(trace).map_err(|vs| {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        format!("invalid after generation (a generator bug):\n{}", list.join("\n"))
    })?;
    let module = Module { functions: vec![trace.clone()], ..Module::default() };
    let printed = flowc_ir::print::module(&module);
    let back = flowc_ir::parse::module("trace.ir", &printed).map_err(|e| format!("does not parse back: {e}"))?;
    if flowc_ir::print::module(&back) != printed {
        return Err("printing is not the identity".to_owned());
    }
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

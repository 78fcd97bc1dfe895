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
    let g = irgen::module(seed);
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

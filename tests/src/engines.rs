//! Running a program on each engine with one result type, so differential
//! tests compare engines with `==`: the printed output, or the error's term
//! (`key_not_found(x)`, `missing_op(foo)`, …) — the error *kind*, not the
//! message, since locations are engine-specific. The engines that need no
//! code generator are flowc-testkit's (re-exported here); this adds the
//! tracer, the JIT and native code.

use flowc_lang::interp::{self, Config};
use flowc_lang::{Program, Symbol, Value};
pub use flowc_testkit::engines::*;

/// Calls `check` with each corpus and generated (`seeds`) case whose
/// reference run fails within the fuel, and the reference interpreter's
/// message (kind and place), on a thread with a big stack; returns how
/// many it checked. The tests that an engine's errors name the
/// interpreter's place run on it.
pub fn check_error_cases(seeds: u64, check: impl Fn(&Case, &str) + Send) -> usize {
    flowc_codegen::with_stack(move || {
        let mut checked = 0;
        for case in cases(crate::corpus::with_generated(seeds)).filter(Case::finishes) {
            let Some(expected) = case.error() else { continue };
            check(&case, &expected);
            checked += 1;
        }
        checked
    })
}

/// Traces from `label` with the series' tracer, optimizes with `optimize`,
/// runs the trace and resumes the interpreter when a guard fails. Traces
/// that never close just run to the end under the tracer.
pub fn traced(
    p: &Program,
    label: Symbol,
    env: &[(Symbol, Value)],
    optimize: impl Fn(&flowc_trace::trace::Trace) -> flowc_trace::trace::Trace,
) -> Result<Outcome, String> {
    use flowc_trace::record::{record, Heap, Recorded, TraceError};
    let mut heap = Heap::new(p);
    let recorded = match record(p, label, flowc_lang::env::from_pairs(env), &mut heap, 200_000) {
        Ok(r) => r,
        Err(TraceError::Runtime(e)) => return Ok(Outcome::Error(e.kind.term())),
        Err(e) => return Err(e.to_string()),
    };
    match recorded {
        Recorded::Printed(v) => Ok(Outcome::Output(format!("{}\n", v.to_print_string()))),
        Recorded::Loop { trace, .. } if trace.crosses_calls() => {
            Err("the series' trace runner cannot follow calls".to_owned())
        }
        Recorded::Loop { trace, env } => {
            let t = optimize(&trace);
            match flowc_trace::run::run(p, &t, env, &mut heap, &config()) {
                Ok(r) => Ok(Outcome::Output(format!("{}\n", r.value.to_print_string()))),
                Err(e) => Ok(Outcome::Error(e.kind.term())),
            }
        }
    }
}

/// Traces from `label` and runs the trace as IR (converted, then
/// transformed by `optimize`), resuming the interpreter when a guard fails.
/// Checks the trace IR with the IR checker before and after `optimize`.
pub fn traced_ssa(
    p: &Program,
    label: Symbol,
    env: &[(Symbol, Value)],
    optimize: impl Fn(&Program, &mut flowc_ir::Function),
) -> Outcome {
    traced_ssa_on(p, label, env, optimize, false)
}

/// [`traced_ssa`], running the trace as machine code when `native`.
pub fn traced_ssa_on(
    p: &Program,
    label: Symbol,
    env: &[(Symbol, Value)],
    optimize: impl Fn(&Program, &mut flowc_ir::Function),
    native: bool,
) -> Outcome {
    use flowc_trace::record::{record, Heap, Recorded, TraceError};
    let mut heap = Heap::new(p);
    let start = flowc_lang::env::from_pairs(env);
    let recorded = match record(p, label, start, &mut heap, 200_000) {
        Ok(r) => r,
        Err(TraceError::Runtime(e)) => return Outcome::Error(e.kind.term()),
        Err(e) => panic!("tracing failed: {e}"),
    };
    match recorded {
        Recorded::Printed(v) => Outcome::Output(format!("{}\n", v.to_print_string())),
        Recorded::Loop { trace, env } => {
            let mut f = flowc_trace::to_ir::to_ir(p, &trace, &env);
            check_trace(&f, "conversion");
            optimize(p, &mut f);
            check_trace(&f, "optimization");
            let hints = flowc_trace::run_ir::hints(&lower(p, label));
            match flowc_trace::run_ir::execute(p, &hints, &f, env, &mut heap, &config(), native) {
                Ok(v) => Outcome::Output(format!("{}\n", v.to_print_string())),
                Err(e) => Outcome::Error(e.kind.term()),
            }
        }
    }
}

fn check_trace(f: &flowc_ir::Function, after: &str) {
    if let Err(vs) = flowc_ir_checker::check(f) {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        panic!("trace IR invalid after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::function(f));
    }
}

/// Compiles the optimized module to native code and runs it. Call on a
/// thread with a big stack ([`flowc_codegen::with_stack`]).
pub fn native(versions: &Versions, env: &[(Symbol, Value)]) -> Outcome {
    native_with(versions, env, flowc_codegen::Options::default())
}

/// [`native`], with code generated under `options`.
pub fn native_with(versions: &Versions, env: &[(Symbol, Value)], options: flowc_codegen::Options) -> Outcome {
    let native = compile(versions, options);
    outcome(native.run(env, config().max_depth))
}

/// [`native_with`] for tiered code: also how many functions tiered up.
/// Panics if an optimized tier failed to compile.
pub fn native_tiered(versions: &Versions, env: &[(Symbol, Value)], options: flowc_codegen::Options) -> (Outcome, u32) {
    let native = compile(versions, options);
    let got = outcome(native.run(env, config().max_depth));
    // Failing to compile the optimized tier leaves correct tier-0 code,
    // which the comparisons would not notice.
    assert_eq!(native.tier_up_failures(), 0, "an optimized tier failed to compile");
    (got, native.tier_ups().count)
}

/// Both versions compiled together, the entry choosing by its arguments.
fn compile(versions: &Versions, options: flowc_codegen::Options) -> flowc_codegen::Native {
    flowc_codegen::Native::compile_versions(&versions.generic, versions.small_version(), options)
        .unwrap_or_else(|e| panic!("code generation failed: {e}"))
}

/// Runs the program under the tracing JIT with `options` (lowering it
/// once from `label`, as the driver does); returns the outcome and what
/// the JIT did. Call on a thread with a big stack
/// ([`flowc_codegen::with_stack`]).
pub fn jit_run(
    p: &Program,
    label: Symbol,
    env: &[(Symbol, Value)],
    config: &Config,
    options: flowc_trace::jit::Options,
) -> (Result<interp::Outcome, interp::RuntimeError>, flowc_trace::jit::Stats) {
    match flowc_frontend::lower(p, label) {
        Ok(module) => flowc_trace::jit::run(p, &module, label, env, config, options),
        Err(kind) => (Err(interp::RuntimeError { kind, at: None }), Default::default()),
    }
}

/// Runs the program as `flowc run --engine jit` does with `--warmup
/// warmup`: the interpreter alone for about `warmup` statements, another
/// thread preparing the JIT's start once the run has done
/// `PREPARE_AFTER_STEPS` (whatever the program's size: `flowc run` does
/// so for big programs) and the interpreter going on past the warm-up
/// until it is done, then — if the run goes on — the JIT with `options`
/// taking over where it paused (a warm-up too short for the thread
/// prepares it there). With `light`, a program whose text gives its
/// watched labels starts light, as `flowc run` starts a big one
/// (`flowc_trace::jit::starts_light`): the rest prepared when the JIT
/// first wants to record. The outcome, and whether the JIT took over.
/// Call on a thread with a big stack.
pub fn jit_late(
    p: &Program,
    label: Symbol,
    env: &[(Symbol, Value)],
    options: flowc_trace::jit::Options,
    warmup: u64,
    light: bool,
) -> (Outcome, bool) {
    use flowc_trace::jit::{interpret_first_preparing, Jit, Later, PrepareOnThread, Warmup};
    let config = config();
    let shared = std::sync::Arc::new(p.clone());
    // As `flowc run` lowers it: the main graph only where the JIT needs it.
    let lower = move |p: &Program| {
        flowc_frontend::lower_unless_main(p, label, |functions, signatures| {
            flowc_trace::jit::main_wanted(p, label, functions, signatures)
        })
    };
    let light = light && flowc_trace::jit::starts_light_shape(p);
    let mut apart = match light {
        true => PrepareOnThread::light(shared.clone(), label),
        false => PrepareOnThread::new(shared.clone(), label, Box::new(lower)),
    };
    let paused = match interpret_first_preparing(&shared, label, env, &config, warmup, Some(&mut apart)) {
        Warmup::Done(result, ..) => return (outcome(result), false),
        Warmup::Paused(paused) => paused,
    };
    let result = match apart.finish(lower) {
        Ok(prepared) => {
            let mut jit = Jit::prepared(&shared, prepared, options);
            if light {
                jit.prepare_later(Box::new(Later::new(shared.clone(), label, lower)));
            }
            jit.take_over(paused, &config)
        }
        Err(kind) => Err(interp::RuntimeError { kind, at: None }),
    };
    (outcome(result), true)
}

/// Runs the program under the tracing JIT with `options`. Call on a thread
/// with a big stack ([`flowc_codegen::with_stack`]).
pub fn jit(p: &Program, label: Symbol, env: &[(Symbol, Value)], options: flowc_trace::jit::Options) -> Outcome {
    outcome(jit_run(p, label, env, &config(), options).0)
}

/// Native code's error message, its place's text taken from `p`, if the
/// run fails. Call on a thread with a big stack.
pub fn native_error(p: &Program, versions: &Versions, env: &[(Symbol, Value)]) -> Option<String> {
    native_error_with(p, versions, env, flowc_codegen::Options::default())
}

/// [`native_error`], with code generated under `options`.
pub fn native_error_with(
    p: &Program,
    versions: &Versions,
    env: &[(Symbol, Value)],
    options: flowc_codegen::Options,
) -> Option<String> {
    let native = compile(versions, options);
    let result = native.run(env, config().max_depth);
    assert_eq!(native.tier_up_failures(), 0, "an optimized tier failed to compile");
    result.err().map(|mut e| {
        e.at = e.at.map(|at| p.with_text(at));
        e.to_string()
    })
}

/// The JIT's error message, its place's text taken from `p`, if the run
/// fails. Call on a thread with a big stack.
pub fn jit_error(
    p: &Program,
    label: Symbol,
    env: &[(Symbol, Value)],
    options: flowc_trace::jit::Options,
) -> Option<String> {
    jit_run(p, label, env, &config(), options).0.err().map(|mut e| {
        e.at = e.at.map(|at| p.with_text(at));
        e.to_string()
    })
}

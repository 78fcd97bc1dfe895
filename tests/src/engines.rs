//! Running a program on each engine with one result type, so differential
//! tests compare engines with `==`: the printed output, or the error's term
//! (`key_not_found(x)`, `missing_op(foo)`, …) — the error *kind*, not the
//! message, since locations are engine-specific.

use flowc_ir::Module;
use flowc_lang::interp::{self, Config};
use flowc_lang::{Program, Symbol, Value};
pub use flowc_passes::versions::Versions;

/// What a run printed, or which error it raised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Output(String),
    Error(String),
}

/// Fuel for differential runs: generated programs finish well within it.
pub const FUEL: u64 = 2_000_000;

pub fn config() -> Config {
    Config { fuel: Some(FUEL), ..Config::default() }
}

/// The program's default start: label and environment.
pub fn start(p: &Program) -> (Symbol, Vec<(Symbol, Value)>) {
    let label = p.default_entry().expect("program has an entry");
    (label, p.entry_env(label).unwrap_or_default().to_vec())
}

/// A program ready for a differential run: where it starts, its
/// environment, and what the reference interpreter makes of it.
pub struct Case {
    pub name: String,
    pub program: Program,
    pub label: Symbol,
    pub env: Vec<(Symbol, Value)>,
    pub expected: Outcome,
}

impl Case {
    /// Whether the reference run ends within the differential fuel. (The
    /// engines count fuel differently, so runs that exhaust it are not
    /// compared.)
    pub fn finishes(&self) -> bool {
        self.expected != Outcome::Error("fuel_exhausted".into())
    }

    /// The reference interpreter's error message (kind and place), if the
    /// run fails.
    pub fn error(&self) -> Option<String> {
        reference_error(&self.program, self.label, &self.env)
    }

    /// The program lowered from its start, checked.
    pub fn lowered(&self) -> Module {
        lower(&self.program, self.label)
    }

    /// Both versions, optimized with the checker and the IR interpreter
    /// after every pass ([`optimize_versions_checked`]).
    pub fn versions(&self) -> Versions {
        optimize_versions_checked(self.lowered(), &self.env, &self.expected, &self.name)
    }
}

/// The cases of `programs` (named), each started from its default entry.
pub fn cases(programs: impl IntoIterator<Item = (String, Program)>) -> impl Iterator<Item = Case> {
    programs.into_iter().map(|(name, program)| {
        let (label, env) = start(&program);
        let expected = reference(&program, label, &env);
        Case { name, program, label, env, expected }
    })
}

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

/// Every corpus program started from each label of its main graph, with
/// its default environment (from other labels other variables are free:
/// missing ones are unbound), named `PATH from LABEL`.
pub fn corpus_cases_from_every_label() -> impl Iterator<Item = Case> {
    crate::corpus::all().into_iter().flat_map(|p| {
        let (_, env) = start(&p.program);
        let labels: Vec<Symbol> = p.program.main_blocks().map(|b| b.label).collect();
        let name = p.name();
        labels.into_iter().map(move |label| {
            let expected = reference(&p.program, label, &env);
            let (program, env) = (p.program.clone(), env.clone());
            Case { name: format!("{name} from {label}"), program, label, env, expected }
        })
    })
}

/// The outcome of a run, as differential tests compare it.
pub fn outcome(r: Result<interp::Outcome, interp::RuntimeError>) -> Outcome {
    match r {
        Ok(o) => Outcome::Output(o.output()),
        Err(e) => Outcome::Error(e.kind.term()),
    }
}

pub fn reference(p: &Program, label: Symbol, env: &[(Symbol, Value)]) -> Outcome {
    outcome(interp::run(p, label, env, &config()))
}

/// Lowers with the front end and checks the result with the IR checker.
pub fn lower(p: &Program, label: Symbol) -> Module {
    let module = flowc_frontend::lower(p, label).expect("entry label exists");
    verify(&module, "the front end");
    module
}

/// Panics with every violation if the module breaks an IR invariant.
pub fn verify(module: &Module, after: &str) {
    if let Err(violations) = flowc_ir_checker::check_module(module) {
        let list: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
        panic!("IR invalid after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::module(module));
    }
}

pub fn ir(module: &Module, env: &[(Symbol, Value)]) -> Outcome {
    outcome(flowc_ir::interp::run(module, env, &config()))
}

/// The module converted back to a program (out of SSA) and run by the
/// reference interpreter from its `entry` fact.
pub fn via_fgl(module: &Module, env: &[(Symbol, Value)]) -> Outcome {
    let program = flowc_ir::fgl::module_to_program(module).expect("functions convert to programs");
    // Through the text, as a user would: print, parse, run.
    let text = flowc_lang::syntax::print(flowc_lang::syntax::Syntax::Prolog, &program);
    let program = flowc_lang::syntax::parse("fgl", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let label = program.default_entry().expect("fgl output has an entry fact");
    reference(&program, label, env)
}

/// Runs the eight passes on `module`, checking the IR and running it after
/// every pass; panics naming the pass where the IR breaks an invariant or
/// the output differs from `expected`. Returns the optimized module.
pub fn optimize_checked(mut module: Module, env: &[(Symbol, Value)], expected: &Outcome, name: &str) -> Module {
    let mut cx = flowc_passes::Context::new(&module);
    flowc_passes::optimize(&mut module, &mut cx, |pass, m, _| {
        verify(m, &format!("{} ({name})", pass.name));
        let got = ir(m, env);
        assert_eq!(&got, expected, "{name}: output changed after {}:\n{}", pass.name, flowc_ir::print::module(m));
    });
    compact_checked(&mut module, env, Some(expected), name);
    module
}

/// Compacts `module` as the driver does before code generation
/// ([`flowc_ir::compact`]), checking that the result is valid, holds
/// exactly what its layout reaches, and (when `expected` is given) still
/// runs to `expected`.
pub fn compact_checked(module: &mut Module, env: &[(Symbol, Value)], expected: Option<&Outcome>, name: &str) {
    module.compact();
    verify(module, &format!("compaction ({name})"));
    for f in &module.functions {
        let linked = f.layout.iter().map(|&b| f.block_insts(b).count()).sum::<usize>();
        assert_eq!((f.blocks.len(), f.insts.len()), (f.layout.len(), linked), "{name}: {} not compact", f.name);
    }
    if let Some(expected) = expected {
        assert_eq!(&ir(module, env), expected, "{name}: output changed by compaction");
    }
}

/// [`optimize_checked`] for both versions: the small version is checked
/// after every pass too, and run after every pass when `env` gives its
/// assumed parameters small integers (the only inputs it is for; the IR
/// interpreter checks every `Word` form it executes).
pub fn optimize_versions_checked(lowered: Module, env: &[(Symbol, Value)], expected: &Outcome, name: &str) -> Versions {
    let params = flowc_passes::versions::versioned_params(&lowered);
    let small = (!params.is_empty()).then(|| {
        let mut m = lowered.clone();
        let options = flowc_passes::context::Options { small_params: params.clone(), ..Default::default() };
        let mut cx = flowc_passes::Context::with_options(&m, options);
        let applies = flowc_passes::versions::takes_small(&params, env);
        flowc_passes::optimize(&mut m, &mut cx, |pass, m, _| {
            verify(m, &format!("{} ({name}, small version)", pass.name));
            if applies {
                let got = ir(m, env);
                assert_eq!(&got, expected, "{name}: small version: output changed after {}", pass.name);
            }
        });
        compact_checked(&mut m, env, applies.then_some(expected), &format!("{name}, small version"));
        (m, params)
    });
    Versions { generic: optimize_checked(lowered, env, expected, name), small }
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

/// Whether the program can observe allocation numbers (then the trace
/// optimizer keeps allocations).
pub fn allocations_observable(p: &Program) -> bool {
    let (label, _) = start(p);
    flowc_passes::observe::allocations_observable(&lower(p, label))
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
    (got, native.tier_ups().0)
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

/// Runs the program under the tracing JIT with `options`. Call on a thread
/// with a big stack ([`flowc_codegen::with_stack`]).
pub fn jit(p: &Program, label: Symbol, env: &[(Symbol, Value)], options: flowc_trace::jit::Options) -> Outcome {
    outcome(jit_run(p, label, env, &config(), options).0)
}

/// The reference interpreter's error message (kind and place), if the run
/// fails.
pub fn reference_error(p: &Program, label: Symbol, env: &[(Symbol, Value)]) -> Option<String> {
    interp::run(p, label, env, &config()).err().map(|e| e.to_string())
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
        e.at = e.at.map(|at| at.with_text(p));
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
        e.at = e.at.map(|at| at.with_text(p));
        e.to_string()
    })
}

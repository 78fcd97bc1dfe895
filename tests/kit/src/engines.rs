//! Running a program on the engines that need no code generator (the
//! reference interpreter, the IR interpreter after every pass, the IR
//! converted back to a program) with one result type, so differential
//! tests compare engines with `==`: the printed output, or the error's
//! term (`key_not_found(x)`, `missing_op(foo)`, …) — the error *kind*,
//! not the message, since locations are engine-specific. flowc-tests'
//! `engines` adds the tracer, the JIT and native code.

use flowc_ir::Module;
use flowc_lang::interp::{self, Config};
use flowc_lang::{Program, Symbol, Value};
pub use flowc_passes::versions::Versions;
use flowc_passes::versions::{Stage, Version, Wanted};

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

    /// The one version `flowc run` and `flowc compare` make for the
    /// case's environment ([`Wanted::For`]: the small version when the
    /// environment takes it, the lists it binds known to the passes),
    /// checked and run after every pass as [`Case::versions`] is.
    pub fn run_version(&self) -> Versions {
        checked_pipeline(self.lowered(), Wanted::For(&self.env), &self.env, |_| Some(&self.expected), &self.name)
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

/// The reference outcome when the run ends within a quarter of the
/// differential fuel, else `None`: the other engines count their steps
/// differently (the IR interpreter counts SSA instructions, a third more
/// than statements on call-heavy programs), so a run that nearly spends
/// the fuel in the reference interpreter may spend it all in them. Fuzzing
/// compares only runs with this margin.
pub fn reference_with_margin(p: &Program, label: Symbol, env: &[(Symbol, Value)]) -> Option<Outcome> {
    let quarter = Config { fuel: Some(FUEL / 4), ..Config::default() };
    Some(outcome(interp::run(p, label, env, &quarter))).filter(|o| *o != Outcome::Error("fuel_exhausted".into()))
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
/// the output differs from `expected`. Returns the optimized module,
/// compacted (and checked compact), as code generation takes it.
pub fn optimize_checked(module: Module, env: &[(Symbol, Value)], expected: &Outcome, name: &str) -> Module {
    checked_pipeline(module, Wanted::Generic, env, |_| Some(expected), name).generic
}

/// What [`flowc_passes::versions::pipeline`] makes of `lowered` for
/// `wanted`, checked on the way: every version after every pass and after
/// compaction is valid IR, compaction leaves it compact, and where
/// `expect(version)` gives an outcome, the version run on `env` gives it
/// (panics naming the pass and version otherwise).
fn checked_pipeline<'e>(
    lowered: Module,
    wanted: Wanted,
    env: &[(Symbol, Value)],
    expect: impl Fn(Version) -> Option<&'e Outcome>,
    name: &str,
) -> Versions {
    let options = flowc_passes::context::Options::default();
    flowc_passes::versions::pipeline(lowered, &options, wanted, |version, stage, m| {
        let version_name = match version {
            Version::Generic => name.to_string(),
            Version::Small => format!("{name}, small version"),
        };
        let after = match stage {
            Stage::Pass(pass) => pass.name,
            Stage::Compacted => "compaction",
        };
        verify(m, &format!("{after} ({version_name})"));
        if let Stage::Compacted = stage {
            for f in &m.functions {
                let linked = f.layout.iter().map(|&b| f.block_insts(b).count()).sum::<usize>();
                assert_eq!(
                    (f.blocks.len(), f.insts.len()),
                    (f.layout.len(), linked),
                    "{version_name}: {} not compact",
                    f.name
                );
            }
        }
        if let Some(expected) = expect(version) {
            let got = ir(m, env);
            assert_eq!(&got, expected, "{version_name}: output changed after {after}:\n{}", flowc_ir::print::module(m));
        }
    })
}

/// Both versions of `lowered`, as `flowc build` makes them
/// ([`flowc_passes::versions::pipeline`]), unchecked.
pub fn optimize_versions(lowered: Module) -> Versions {
    flowc_passes::versions::pipeline(lowered, &Default::default(), Wanted::Both, |_, _, _| {})
}

/// [`optimize_checked`] for both versions, as `flowc build` makes them:
/// the small version is checked after every pass too, and run after every
/// pass when `env` gives its assumed parameters small integers (the only
/// inputs it is for; the IR interpreter checks every `Word` form it
/// executes).
pub fn optimize_versions_checked(lowered: Module, env: &[(Symbol, Value)], expected: &Outcome, name: &str) -> Versions {
    let params = flowc_passes::versions::versioned_params(&lowered);
    let applies = flowc_passes::versions::takes_small(&params, env);
    let expect = |v: Version| (v == Version::Generic || applies).then_some(expected);
    checked_pipeline(lowered, Wanted::Both, env, expect, name)
}

/// Whether the program can observe allocation numbers (then the trace
/// optimizer keeps allocations).
pub fn allocations_observable(p: &Program) -> bool {
    let (label, _) = start(p);
    flowc_passes::observe::allocations_observable(&lower(p, label))
}

/// The reference interpreter's error message (kind and place), if the run
/// fails.
pub fn reference_error(p: &Program, label: Symbol, env: &[(Symbol, Value)]) -> Option<String> {
    interp::run(p, label, env, &config()).err().map(|e| e.to_string())
}

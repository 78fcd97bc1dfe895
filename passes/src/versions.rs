//! Loop versioning on the main function's integer parameters.
//!
//! The main graph's parameters come from the environment, so the optimizer
//! knows nothing of them: a loop `i < n; i = i + 1` could run `i` into
//! bignums when `n` is one, and every operation on `i` keeps its overflow
//! and tag checks. Almost always, though, `n` is small. So the program is
//! optimized twice: as is (the *generic* version), and assuming that the
//! main function's integer parameters — those some arithmetic or
//! comparison of main reads — are 32-bit integers
//! ([`flowc_lang::ops::range::SMALL_PARAM`],
//! [`crate::context::Options::small_params`]): the *small* version. There
//! a comparison with a parameter bounds a counter (`i < n` makes `i` at
//! most `n`'s upper bound minus one), so the counter, and small multiples
//! of it, are machine words and their arithmetic takes its `Word` form.
//! Generated code runs the small version when the parameters it assumed
//! are in range at entry, the generic one otherwise; both compute the same
//! thing on those inputs.
//!
//! Only the main function differs between the versions; `flowc opt
//! --small-params` shows the small version.

use flowc_ir::{FunctionKind, InstKind, Module, Operand};
use flowc_lang::ast::Operator;
use flowc_lang::ops::range::is_small_param;
use flowc_lang::{Symbol, Value};

use crate::context::Options;
use crate::{optimize, Context};

/// The versions of one program.
pub struct Versions {
    /// Optimized with no assumption — except in the one version made for
    /// an environment ([`Wanted::For`]) that binds the parameters
    /// [`Versions::assumed`] names to small integers: then it is the small
    /// version, the only one that run calls.
    pub generic: Module,
    /// Optimized assuming `params` are 32-bit integers; absent when main
    /// has no integer parameters, or only one version was made.
    pub small: Option<(Module, Vec<Symbol>)>,
    /// The parameters `generic` was optimized assuming small (see there).
    pub assumed: Vec<Symbol>,
}

impl Versions {
    /// The small version and the parameters it assumes, as code
    /// generation takes them.
    pub fn small_version(&self) -> Option<(&Module, &[Symbol])> {
        self.small.as_ref().map(|(m, params)| (m, params.as_slice()))
    }
}

/// The main function's parameters some arithmetic or ordered comparison of
/// main reads, in parameter order.
pub fn integer_params(m: &Module) -> Vec<Symbol> {
    let Some(main) = m.functions.iter().find(|f| f.kind == FunctionKind::Main) else { return Vec::new() };
    let mut read = vec![false; main.params.len()];
    for (_, i) in main.all_insts() {
        let InstKind::Op { op: Operator::Known(op), args, .. } = &main.insts[i].kind else { continue };
        let integer = op.takes_integers();
        if !integer {
            continue;
        }
        for a in args {
            if let Operand::Value(v) = a {
                if let Some(k) = main.params.iter().position(|p| p == v) {
                    read[k] = true;
                }
            }
        }
    }
    main.params.iter().zip(read).filter(|(_, r)| *r).filter_map(|(&p, _)| main.values[p].name).collect()
}

/// Which versions [`pipeline`] makes.
#[derive(Clone, Copy, Debug)]
pub enum Wanted<'e> {
    /// Both, for code whose entry chooses by its arguments (a built
    /// executable, which takes its environment when it runs).
    Both,
    /// Only the one a run with this environment takes (the small one when
    /// `env` binds each parameter it assumes to an integer in range, as
    /// the generated code's entry test decides; the lists `env` binds
    /// known to the passes): `flowc run`, `flowc compare`, which know
    /// their input before compiling — the other version would never be
    /// called, and optimizing and compiling it is half of the work for a
    /// big main graph.
    For(&'e [(Symbol, Value)]),
    /// Only the generic one (the passes' tests).
    Generic,
}

/// Which version a [`pipeline`] hook is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    Generic,
    Small,
}

/// Where in the [`pipeline`] a hook is called.
#[derive(Clone, Copy)]
pub enum Stage<'p> {
    /// After this pass.
    Pass(&'p crate::Pass),
    /// After compaction, the last step: what code generation compiles.
    Compacted,
}

/// The one way from the front end's module to what code generation
/// compiles (`flowc run --engine native`, `flowc build`, `flowc compare`,
/// the tests, the benchmarks and the fuzzers all take it, so what is
/// tested is what ships): the eight passes over each version `wanted`,
/// then compaction ([`flowc_ir::Module::compact`]: the arenas' unlinked
/// slots go before code generation, the peak of a compilation). `after`
/// sees each version after every pass and after compaction (the tests
/// check and run the IR there).
pub fn pipeline(
    lowered: Module,
    options: &Options,
    wanted: Wanted,
    mut after: impl FnMut(Version, Stage, &Module),
) -> Versions {
    let mut run = |mut m: Module, options: Options, version: Version| {
        let mut cx = Context::with_options(&m, options);
        optimize(&mut m, &mut cx, |pass, m, _| after(version, Stage::Pass(pass), m));
        m.compact();
        after(version, Stage::Compacted, &m);
        m
    };
    let params = versioned_params(&lowered);
    // The generic version assumes nothing, whatever `options` say.
    let generic = Options { small_params: Vec::new(), ..options.clone() };
    match wanted {
        Wanted::Both => {
            let small = (!params.is_empty()).then(|| {
                let options = Options { small_params: params.clone(), ..options.clone() };
                (run(lowered.clone(), options, Version::Small), params)
            });
            Versions { generic: run(lowered, generic, Version::Generic), small, assumed: Vec::new() }
        }
        Wanted::Generic => {
            Versions { generic: run(lowered, generic, Version::Generic), small: None, assumed: Vec::new() }
        }
        Wanted::For(env) => {
            let assumed = if takes_small(&params, env) { params } else { Vec::new() };
            let version = if assumed.is_empty() { Version::Generic } else { Version::Small };
            let options =
                Options { small_params: assumed.clone(), known_lists: known_lists(&lowered, env), ..options.clone() };
            Versions { generic: run(lowered, options, version), small: None, assumed }
        }
    }
}

/// The main function's parameters that `env` binds to lists (first where
/// it names one twice, as the run binds it).
fn known_lists(lowered: &Module, env: &[(Symbol, Value)]) -> Vec<(Symbol, Value)> {
    let Some(main) = lowered.main() else { return Vec::new() };
    main.params
        .iter()
        .filter_map(|&p| main.values[p].name)
        .filter_map(|name| match env.iter().find(|(k, _)| *k == name) {
            Some((_, v @ Value::List(_))) => Some((name, v.clone())),
            _ => None,
        })
        .collect()
}

/// Whether a run with environment `env` takes the small version assuming
/// `params` (none: there is none): each is bound, first where `env`
/// names it twice as the run binds it, to an integer in range — what the
/// generated code's entry tests.
pub fn takes_small(params: &[Symbol], env: &[(Symbol, Value)]) -> bool {
    !params.is_empty()
        && params.iter().all(|p| env.iter().find(|(k, _)| k == p).is_some_and(|(_, v)| is_small_param(v)))
}

/// The parameters the small version assumes: main's integer parameters,
/// none for a huge main function (which gets one version,
/// `flowc_ir::HUGE_INSTS`).
pub fn versioned_params(lowered: &Module) -> Vec<Symbol> {
    let huge = lowered.main().is_some_and(|f| f.is_huge());
    if huge {
        Vec::new()
    } else {
        integer_params(lowered)
    }
}

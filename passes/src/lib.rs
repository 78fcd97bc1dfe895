//! flowc-passes: the eight single-run optimization passes, in the manner of
//! Factor's compiler (Slava Pestov, "New optimizer", the Factor blog, 2008), on the
//! SSA IR of flowc-ir.
//!
//! | # | pass | reads | writes / guarantees |
//! |---|---|---|---|
//! | 1 | [`normalize`] | front-end IR | no jump-only blocks (except the ones splitting critical edges), no unreachable blocks, no critical edges, entry without predecessors, canonical operand order |
//! | 2 | [`propagate`] | — | optimistic SCCP fused with kinds, integer ranges (with widening), list lengths, object classes, pure calls with constant arguments run, immutable fields of known objects; executable edges. Annotates only (writes `Propagation`) |
//! | 3 | [`cleanup`] | `Propagation` | constants substituted, dead branches and blocks deleted, one-input phis collapsed, generic operations specialized, pure calls folded, small calls inlined |
//! | 4 | [`loops`] | — | the loop forest (`Loops`: `flowc_ir::loops`, the one loop analysis codegen, the JIT and the explorer use too); for `--dump-after` |
//! | 5 | [`escape`] | — | which allocations never escape (`Escape`) |
//! | 6 | [`unbox`] | `Escape` | scalar replacement of non-escaping objects; whether allocations are observable (`AllocationsObservable`) |
//! | 7 | [`defuse`] | — | definition and uses of every value (`DefUse`) |
//! | 8 | [`dce`] | `DefUse`, `AllocationsObservable` | optimistic dead-code elimination |
//!
//! The reads and writes are the table's ([`Pass::reads`], [`Pass::writes`]):
//! in debug builds [`optimize`] checks that what a pass reads is known
//! before it runs and what it writes is known after.
//!
//! The pipeline is the table [`PIPELINE`]; each pass runs exactly once per
//! compilation and none loops over the others, so dumping or checking after
//! any pass is the same code for all of them ([`optimize`]). A pipeline
//! of one's choosing — some of these passes, in another order, or a pass
//! of one's own between two of ours — runs through [`run_passes`], which
//! checks before each pass that what it reads is known (`flowc opt
//! --passes`). Passes share
//! results through a [`Context`]; knowledge about operations (folding,
//! purity, ranges, specialized forms) comes from the op table in flowc-lang.
//!
//! [`versions`] runs the pipeline twice for native code: once as is and
//! once assuming the main graph's integer parameters are small (loop
//! versioning; generated code picks the version at entry).

#![forbid(unsafe_code)]

pub mod cleanup;
pub mod context;
pub mod dce;
pub mod defuse;
pub mod edit;
pub mod escape;
pub mod lattice;
pub mod loops;
pub mod normalize;
pub mod observe;
pub mod phis;
pub mod propagate;
pub mod unbox;
pub mod versions;

use flowc_ir::Module;

pub use context::{Context, Fact, FunctionFacts};

/// One pass of the pipeline.
pub struct Pass {
    pub name: &'static str,
    /// Transforms (or analyses) the module, reading and writing `Context`.
    pub run: fn(&mut Module, &mut Context),
    /// What the pass found, for `--dump-after` (analysis passes), printed
    /// after the IR.
    pub annotate: Option<fn(&Module, &Context) -> String>,
    /// The results of earlier passes it uses.
    pub reads: &'static [Fact],
    /// The results it hands on.
    pub writes: &'static [Fact],
}

/// The eight passes, in order.
pub static PIPELINE: [Pass; 8] = [
    Pass { name: "normalize", run: normalize::run, annotate: None, reads: &[], writes: &[] },
    Pass {
        name: "propagate",
        run: propagate::run,
        annotate: Some(propagate::annotate),
        reads: &[],
        writes: &[Fact::Propagation, Fact::CallGraph],
    },
    Pass {
        name: "cleanup",
        run: cleanup::run,
        annotate: None,
        reads: &[Fact::Propagation, Fact::CallGraph],
        writes: &[],
    },
    Pass { name: "loops", run: loops::run, annotate: Some(loops::annotate), reads: &[], writes: &[Fact::Loops] },
    Pass { name: "escape", run: escape::run, annotate: Some(escape::annotate), reads: &[], writes: &[Fact::Escape] },
    Pass {
        name: "unbox",
        run: unbox::run,
        annotate: None,
        reads: &[Fact::Escape],
        writes: &[Fact::AllocationsObservable],
    },
    Pass { name: "def-use", run: defuse::run, annotate: Some(defuse::annotate), reads: &[], writes: &[Fact::DefUse] },
    Pass {
        name: "dce",
        run: dce::run,
        annotate: None,
        reads: &[Fact::DefUse, Fact::AllocationsObservable],
        writes: &[],
    },
];

/// The pass called `name`.
pub fn pass(name: &str) -> Option<&'static Pass> {
    PIPELINE.iter().find(|p| p.name == name)
}

/// Runs the whole pipeline on `module`; `after` sees the module after each
/// pass (to dump it, check it, run it, time it).
pub fn optimize(module: &mut Module, cx: &mut Context, after: impl FnMut(&Pass, &Module, &Context)) {
    let passes: Vec<&Pass> = PIPELINE.iter().collect();
    run_passes(module, cx, &passes, after).expect("each pass of the pipeline reads what the passes before it leave");
}

/// A pass of a chosen pipeline would read a result no pass before it left
/// (or one a pass since cleared): [`run_passes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unmet {
    /// The pass, and the result it reads.
    pub pass: &'static str,
    pub fact: Fact,
}

impl std::fmt::Display for Unmet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let by: Vec<&str> = PIPELINE.iter().filter(|p| p.writes.contains(&self.fact)).map(|p| p.name).collect();
        write!(f, "`{}` reads {:?}, which no pass before it leaves (`{}` does)", self.pass, self.fact, by.join("`, `"))
    }
}

/// The first result one of `passes` reads that no pass before it in the
/// list writes: what [`run_passes`] would stop at, found before anything
/// runs (a pass that clears a result it invalidates can still make
/// `run_passes` stop where this finds nothing).
pub fn unmet(passes: &[&Pass]) -> Option<Unmet> {
    let mut known: Vec<Fact> = Vec::new();
    for pass in passes {
        if let Some(&fact) = pass.reads.iter().find(|f| !known.contains(f)) {
            return Some(Unmet { pass: pass.name, fact });
        }
        known.extend(pass.writes);
    }
    None
}

/// Runs `passes` on `module`, in order: some of [`PIPELINE`]'s, in any
/// order, and passes of one's own (a [`Pass`] is a name, a function and
/// what it reads and writes). Before each pass, every result it reads
/// must be known ([`Context::has`]); else nothing more runs and the error
/// names the pass and the result. `after` sees the module after each pass
/// — where a caller runs the IR checker.
pub fn run_passes(
    module: &mut Module,
    cx: &mut Context,
    passes: &[&Pass],
    mut after: impl FnMut(&Pass, &Module, &Context),
) -> Result<(), Unmet> {
    for pass in passes {
        if let Some(&fact) = pass.reads.iter().find(|&&fact| !cx.has(module, fact)) {
            return Err(Unmet { pass: pass.name, fact });
        }
        (pass.run)(module, cx);
        for &fact in pass.writes {
            debug_assert!(cx.has(module, fact), "{} writes {fact:?} but left it unknown", pass.name);
        }
        after(pass, module, cx);
    }
    Ok(())
}

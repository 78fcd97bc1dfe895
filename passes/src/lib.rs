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
//! any pass is the same code for all of them ([`optimize`]). Passes share
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
pub fn optimize(module: &mut Module, cx: &mut Context, mut after: impl FnMut(&Pass, &Module, &Context)) {
    for pass in &PIPELINE {
        for &fact in pass.reads {
            debug_assert!(cx.has(module, fact), "{} reads {fact:?}, which no earlier pass left", pass.name);
        }
        (pass.run)(module, cx);
        for &fact in pass.writes {
            debug_assert!(cx.has(module, fact), "{} writes {fact:?} but left it unknown", pass.name);
        }
        after(pass, module, cx);
    }
}

//! flowc-passes: the eight single-run optimization passes, in the manner of
//! Factor's compiler (Slava Pestov, "New optimizer", the Factor blog, 2008), on the
//! SSA IR of flowc-ir.
//!
//! | # | pass | reads | writes / guarantees |
//! |---|---|---|---|
//! | 1 | [`normalize`] | front-end IR | no jump-only blocks (except the ones splitting critical edges), no unreachable blocks, no critical edges, entry without predecessors, canonical operand order |
//! | 2 | [`propagate`] | — | optimistic SCCP fused with kinds, integer ranges (with widening), list lengths, object classes, pure calls with constant arguments run, immutable fields of known objects; executable edges. Annotates only |
//! | 3 | [`cleanup`] | propagate | constants substituted, dead branches and blocks deleted, one-input phis collapsed, generic operations specialized, pure calls folded, small calls inlined |
//! | 4 | [`loops`] | — | dominator tree, natural loops, loop nesting forest, loop headers |
//! | 5 | [`escape`] | loops | which allocations never escape |
//! | 6 | [`unbox`] | escape | scalar replacement of non-escaping objects |
//! | 7 | [`defuse`] | — | definition and uses of every value |
//! | 8 | [`dce`] | def-use | optimistic dead-code elimination |
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
mod phis;
pub mod propagate;
pub mod unbox;
pub mod versions;

use flowc_ir::Module;

pub use context::{Context, FunctionFacts};

/// One pass of the pipeline.
pub struct Pass {
    pub name: &'static str,
    /// Transforms (or analyses) the module, reading and writing `Context`.
    pub run: fn(&mut Module, &mut Context),
    /// What the pass found, for `--dump-after` (analysis passes), printed
    /// after the IR.
    pub annotate: Option<fn(&Module, &Context) -> String>,
}

/// The eight passes, in order.
pub static PIPELINE: [Pass; 8] = [
    Pass { name: "normalize", run: normalize::run, annotate: None },
    Pass { name: "propagate", run: propagate::run, annotate: Some(propagate::annotate) },
    Pass { name: "cleanup", run: cleanup::run, annotate: None },
    Pass { name: "loops", run: loops::run, annotate: Some(loops::annotate) },
    Pass { name: "escape", run: escape::run, annotate: Some(escape::annotate) },
    Pass { name: "unbox", run: unbox::run, annotate: None },
    Pass { name: "def-use", run: defuse::run, annotate: Some(defuse::annotate) },
    Pass { name: "dce", run: dce::run, annotate: None },
];

/// The pass called `name`.
pub fn pass(name: &str) -> Option<&'static Pass> {
    PIPELINE.iter().find(|p| p.name == name)
}

/// Runs the whole pipeline on `module`; `after` sees the module after each
/// pass (to dump it, check it, run it, time it).
pub fn optimize(module: &mut Module, cx: &mut Context, mut after: impl FnMut(&Pass, &Module, &Context)) {
    for pass in &PIPELINE {
        (pass.run)(module, cx);
        after(pass, module, cx);
    }
}

//! flowc-ir-checker: the standalone IR invariant checker (docs/architecture.md "The IR",
//! the invariants listed in `flowc_ir`'s crate docs).
//!
//! [`check`] checks one function, [`check_module`] every function of a
//! module plus the cross-function rules. Each broken invariant is one
//! [`Violation`] naming the function, the block, the instruction (as
//! printed), the [`Rule`] and the values involved:
//!
//! ```text
//! function fib, block b3, instruction `v7 = add v2, v9`: [use-dominated] v9 is used here but its definition in b5 does not dominate b3
//! ```
//!
//! # Rules
//!
//! | rule | invariant | module |
//! |---|---|---|
//! | `single-def` | (a) every value defined exactly once; `ValueDef` records agree; results exactly where `has_result` | `definitions` |
//! | `use-dominated` | (b) every use dominated by its definition; phi inputs available at the end of their predecessor | `uses` |
//! | `undefined-value` | (b) used values are parameters or results of linked instructions | `uses` |
//! | `phis-first` | (c) phis only in `BlockData::phis`, non-phis never there | `phis` |
//! | `phi-inputs` | (d) one input per predecessor, none from elsewhere, no block twice | `phis` |
//! | `linked-once` | (e) no instruction linked twice, no block twice in the layout | `linking` |
//! | `dangling-ref` | (f) referenced blocks, instructions, values, resume records and virtuals exist; blocks are in the layout | all |
//! | `entry-block` | (g) the entry is `layout[0]` and has no predecessors | `linking` |
//! | `distinct-params` | (h) parameters are distinct values | `definitions` |
//! | `guard-in-trace` | (i) guards, iteration counts and exits only in traces | `guards` |
//! | `resume-available` | (i) resume data refers only to values available at the guard | `guards` |
//! | `call-target` | calls name a function (kind `function`) of the module | `calls` |
//! | `call-arity` | calls pass as many arguments as the callee has parameters | `calls` |
//! | `unique-function` | function names (kind `function`) are unique | `calls` |
//! | `op-form` | (j) operations of the op table, in forms they have, constant operands admitted by the form | `forms` |
//! | `resume-shape` | (i) resume records have frames, a pending call in each but the innermost | `guards` |
//!
//! "One terminator per block, last" holds by construction (`BlockData::term`).
//! Blocks unreachable from the entry are checked like the others, except
//! that their uses need not be dominated.
//!
//! # Robustness and order
//!
//! The checker never panics, whatever the ids in the function: every arena
//! lookup is preceded by a bounds check, and control-flow analysis runs on a
//! copy with a cleaned layout when the layout itself is broken. Violations
//! are listed function by function; inside a function, function-level ones
//! first, then by block in layout order and position in the block.

#![forbid(unsafe_code)]

mod calls;
mod context;
mod definitions;
mod forms;
mod guards;
mod linking;
mod phis;
mod uses;
mod violation;

use std::borrow::Cow;
use std::collections::HashSet;

use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::{Function, FunctionKind, Module};

pub use violation::{At, Rule, Violation};

use context::{BlockMarks, Checker};
use uses::Flow;

/// Checks every intra-function invariant of `f`.
pub fn check(f: &Function) -> Result<(), Vec<Violation>> {
    into_result(check_function(f, None))
}

/// Checks every function of `m` ([`check`]) and the cross-function rules:
/// calls name a function of the module (kind `function`) and pass as many
/// arguments as it has parameters; function names are unique.
pub fn check_module(m: &Module) -> Result<(), Vec<Violation>> {
    let mut out = Vec::new();
    let mut names = HashSet::new();
    for f in &m.functions {
        if f.kind == FunctionKind::Function && !names.insert(f.name) {
            out.push(calls::duplicate(f));
        }
        out.extend(check_function(f, Some(m)));
    }
    into_result(out)
}

fn into_result(v: Vec<Violation>) -> Result<(), Vec<Violation>> {
    if v.is_empty() {
        Ok(())
    } else {
        Err(v)
    }
}

fn check_function(f: &Function, module: Option<&Module>) -> Vec<Violation> {
    let mut c = Checker::new(f);
    linking::check_layout(&mut c);
    linking::check_entry(&mut c);
    definitions::check_definitions(&mut c);
    // `Cfg::new` indexes the block arena with every layout entry: give it
    // the cleaned layout (ids in the arena, each once).
    let clean: Cow<Function> = if c.layout == f.layout {
        Cow::Borrowed(f)
    } else {
        let mut copy = f.clone();
        copy.layout = c.layout.clone();
        Cow::Owned(copy)
    };
    let cfg = Cfg::new(&clean);
    let dom = DomTree::new(&clean, &cfg);
    let flow = Flow { cfg: &cfg, dom: &dom };
    linking::check_entry_preds(&mut c, &cfg);
    linking::check_successors(&mut c);
    // One sweep over the linked instructions applies every per-instruction
    // rule, so a large function's instructions are read once, not once per
    // rule. Violations of one instruction keep the rules' order (phis,
    // uses, guards, calls), as `Checker::report` keeps ties in order.
    let mut marks = (BlockMarks::new(f), BlockMarks::new(f));
    for n in 0..c.linked.len() {
        let l = c.linked[n];
        let kind = &f.insts[l.inst].kind;
        phis::check_inst(&mut c, &cfg, &mut marks, l, kind);
        uses::check_inst(&mut c, &flow, &mut marks, l, kind);
        guards::check_inst(&mut c, &flow, l, kind);
        forms::check_inst(&mut c, l, kind);
        if let Some(m) = module {
            calls::check_inst(&mut c, m, l, kind);
        }
    }
    for k in 0..c.layout.len() {
        let b = c.layout[k];
        uses::check_terminator(&mut c, &flow, b);
        guards::check_terminator(&mut c, &flow, b);
    }
    c.finish()
}

//! Pass `dce`: optimistic dead-code elimination (Factor's "dead code
//! elimination"; the mark/sweep of Cytron et al.). Everything is dead until
//! reached from something the program needs.
//!
//! Reads: `cx.facts(i).defuse` (the pipeline runs `def-use` right before;
//! if it is missing or was computed for a different version of the function
//! it is recomputed with [`DefUse::compute`]); `cx.allocations_observable`
//! (left by unbox; computed if missing); the module's hints (`pure`
//! functions, `immutable` fields). Writes: the IR — every instruction not
//! marked live is unlinked — and clears `defuse`, which no longer matches.
//! Blocks, terminators and control flow are never changed.
//!
//! # Roots (live from the start)
//!
//! - every terminator's operand (`branch`, `if_class`, `print`, `return`);
//! - instructions with effects: `set`s, calls of functions not declared
//!   `pure`, guards (with their resume data), traces' iteration counts;
//! - every instruction that may fail, because removing it would change
//!   which error the program raises (`roots::Roots::may_fail`). This refines
//!   `InstKind::can_fail` soundly: an operand that is surely bound
//!   ([`crate::defuse::surely_bound`], asked per operand through
//!   [`crate::defuse::BoundQuery`]) cannot raise `key_not_found`, so a
//!   `check_bound` of it, or an operation that cannot fail otherwise
//!   (`same`, `eq`, `ne`), cannot fail; `.word` forms cannot fail; `.int`
//!   forms (operand kinds proven) keep only their op-table failures other
//!   than type errors (division by a non-constant or zero divisor, list
//!   bounds).
//!
//! Two exceptions make effects removable:
//! - a call of a `pure` function (with the right number of arguments, all
//!   surely bound) is not a root: a dead one disappears — the hint is the
//!   user's promise that dropping a call is unobservable;
//! - a `set` is not a root when its object is a `new` of this function
//!   whose every use is as the object of such `set`s, on fields not
//!   declared immutable, storing surely bound values: nobody can observe
//!   the object, so it disappears with its stores.
//!
//! # Marking
//!
//! A live instruction makes the definitions of its operands live (phi
//! inputs included, and for guards the operands of the resume record).
//! A worklist reaches the fixpoint in time linear in the size of the
//! function; the sweep unlinks every unmarked instruction. What goes:
//! values computed and never needed, loop-carried phi cycles that only feed
//! themselves, dead allocations with their stores, dead pure calls.
//!
//! Limitations: the allocation rule is local — an object stored into
//! another dead object, or merged by a phi, stays; a generic arithmetic
//! operation stays even when dead, because it may raise a type error until
//! cleanup has proven its operand kinds and rewritten it to a `.int` or
//! `.word` form.

mod roots;

use std::collections::HashMap;

use bitvec::vec::BitVec;
use flowc_ir::{Function, InstKind, Module, Operand};

use crate::defuse::{BoundQuery, Def, DefUse};
use crate::edit::{self, ix};
use crate::Context;

pub fn run(module: &mut Module, cx: &mut Context) {
    let pure_arity = roots::pure_arities(module);
    let observable = cx.allocations_observable.take().unwrap_or_else(|| crate::observe::allocations_observable(module));
    for i in 0..module.functions.len() {
        let f = &module.functions[i];
        let du = match cx.facts(i).defuse.take() {
            Some(du) if du.num_values() == f.values.len() => du,
            _ => DefUse::compute(f),
        };
        let live = live_insts(module, &pure_arity, f, &du, observable);
        sweep(&mut module.functions[i], &live);
    }
}

/// Removes the dead instructions of `module.functions[index]` (for callers
/// outside the pipeline, e.g. the trace optimizer), computing its def-use.
/// `observable` says whether the whole program can see allocation numbers
/// (then no `new` is dead): the caller must answer it, since `module` may
/// hold only part of the program — a trace that ends in a jump prints
/// nothing, yet the objects allocated after it may be printed.
pub fn function(module: &mut Module, index: usize, observable: bool) {
    let pure_arity = roots::pure_arities(module);
    let f = &module.functions[index];
    // The uses are read only to find allocations that are only stored
    // into ([`roots::Roots::dead_allocations`]): without one, the
    // definitions do (a trace's allocations are mostly removed before
    // this runs, and the use table was a fifth of optimizing it).
    let allocates = f.all_insts().any(|(_, i)| matches!(f.insts[i].kind, InstKind::New(_)));
    let du = if allocates && !observable { DefUse::compute(f) } else { DefUse::definitions(f) };
    let live = live_insts(module, &pure_arity, f, &du, observable);
    sweep(&mut module.functions[index], &live);
}

/// Bit `ix(i)` is set iff instruction `i` is live.
fn live_insts(
    m: &Module,
    pure_arity: &HashMap<flowc_lang::Symbol, usize>,
    f: &Function,
    du: &DefUse,
    allocations_observable: bool,
) -> BitVec {
    let bound = BoundQuery::new(f);
    let mut roots = roots::Roots { module: m, pure_arity, f, du, bound, allocations_observable };
    let dead_allocations = roots.dead_allocations();
    let mut live: BitVec = BitVec::repeat(false, f.insts.len());
    let mut work = Vec::new();
    let mark = |o: &Operand, live: &mut BitVec, work: &mut Vec<_>| {
        if let Operand::Value(v) = o {
            if let Def::Inst { inst, .. } = du.def_of(*v) {
                if !live[ix(inst)] {
                    live.set(ix(inst), true);
                    work.push(inst);
                }
            }
        }
    };
    for &b in &f.layout {
        for i in f.block_insts(b) {
            if !live[ix(i)] && roots.is_root(i, &dead_allocations) {
                live.set(ix(i), true);
                work.push(i);
            }
        }
        for o in f.blocks[b].term.operands() {
            mark(o, &mut live, &mut work);
        }
        if let Some(r) = f.blocks[b].term.resume().filter(|r| ix(*r) < f.resumes.len()) {
            for o in f.resumes[r].operands() {
                mark(o, &mut live, &mut work);
            }
        }
    }
    while let Some(i) = work.pop() {
        let kind = &f.insts[i].kind;
        for o in kind.operands() {
            mark(o, &mut live, &mut work);
        }
        if let InstKind::Guard { resume, .. } = kind {
            if ix(*resume) < f.resumes.len() {
                for o in f.resumes[*resume].operands() {
                    mark(o, &mut live, &mut work);
                }
            }
        }
    }
    live
}

/// Unlinks every instruction not in `live`.
fn sweep(f: &mut Function, live: &BitVec) {
    edit::unlink_everywhere(f, |i| !live.get(ix(i)).is_some_and(|b| *b));
}

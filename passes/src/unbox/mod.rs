//! Pass `unbox`: scalar replacement of the allocations `escape` proved not
//! to escape (Factor's tuple unboxing).
//!
//! Reads: `cx.facts(i).escape` (recomputed with [`Escape::analyze`] between
//! rounds). Writes: the IR; afterwards `cx.facts(i).escape` holds a fresh
//! analysis of the changed function and `cx.facts(i).loops` is cleared if
//! the control flow changed; `cx.allocations_observable` holds whether the
//! module may print an object.
//!
//! For each web (allocations of one class joined by phis) that does not
//! escape and is only used directly — as the object of `get`/`set`, by
//! `if_class`, as an input of its own phis — each field becomes an SSA
//! variable (`fields`): `new` makes every field *unset*, `set` writes,
//! `get` reads (its uses are replaced by the value read and it is removed);
//! phis are placed where needed. `if_class` on the web is decided (its class
//! is known) and becomes a jump; blocks no longer reachable are removed.
//! The `new`s, `get`s, `set`s and the web's phis disappear; a `set` whose
//! stored value may be unbound becomes `check_bound` of it, so
//! `key_not_found` is raised where it was.
//!
//! A web is left alone unless unboxing is exact (`plan`): every `get`
//! must read a field set on every path since the last `new` (else the
//! program raises `unset_field` there); every `set` of an `immutable` field
//! must find it unset on every path (else `immutable_field`); and every
//! access of a phi-web must go through a value holding the web's most
//! recent object (`current`). The whole pass does nothing in a module
//! that may print an object ([`crate::observe`]): objects print with their
//! allocation number, which removing allocations would change. For the
//! same reason traces are left alone: after a trace exits, the interpreter
//! goes on and may print objects allocated later. Huge functions
//! (`flowc_ir::HUGE_INSTS`) are left alone too: the field SSA's work grows
//! with the square of their size.
//!
//! Nested objects: a web stored into another web is unboxed in a later
//! round, once the outer one is gone and the inner one is used directly.
//! Rounds repeat until none unboxes anything; each removes at least one
//! `new`, so they end.

mod bound;
mod current;
mod fields;
mod plan;
mod view;

use std::collections::{HashMap, HashSet};

use flowc_ir::cfg::Cfg;
use flowc_ir::{BlockId, Function, FunctionKind, InstId, InstKind, Module, Operand, Terminator, ValueDef, ValueId};
use flowc_lang::Symbol;

use crate::edit::{self, Substitution};
use crate::escape::{Escape, WebId};
use crate::Context;
use plan::{Accesses, NewOperand, Plan};
use view::View;

pub fn run(module: &mut Module, cx: &mut Context) {
    let observable = crate::observe::allocations_observable(module);
    // Removing allocations that never escape cannot make an object printable.
    cx.allocations_observable = Some(observable);
    if observable {
        return;
    }
    let immutable = module.immutable.clone();
    let is_immutable = |c: Symbol, fd: Symbol| immutable.iter().any(|(k, fs)| *k == c && fs.contains(&fd));
    for (i, f) in module.functions.iter_mut().enumerate() {
        if f.kind == FunctionKind::Trace {
            continue;
        }
        let first = cx.facts(i).escape.take().unwrap_or_else(|| Escape::analyze(f));
        // Huge functions (`flowc_ir::HUGE_INSTS`) keep their allocations:
        // the field SSA walks back from each read of each candidate's field
        // across the blocks between it and the allocation, which grows with
        // the square of such a function's size.
        if f.is_huge() {
            cx.facts(i).escape = Some(first);
            continue;
        }
        let (escape, cfg_changed) = unbox_function(f, first, &is_immutable);
        let facts = cx.facts(i);
        facts.escape = Some(escape);
        if cfg_changed {
            facts.loops = None;
        }
    }
}

/// Unboxes what can be unboxed in `f`, in rounds; returns the escape
/// analysis of the result and whether the control flow changed.
///
/// Every plan of a round is made against the same function, then all are
/// applied at once: a plan stays valid when other plans remove edges (the
/// removed edges are never taken), so they compose.
fn unbox_function(f: &mut Function, first: Escape, immutable: &dyn Fn(Symbol, Symbol) -> bool) -> (Escape, bool) {
    let mut esc = first;
    let mut cfg_changed = false;
    // Each round removes a `new`; the bound only guards against surprises.
    for _ in 0..=f.insts.len() {
        let candidates: Vec<WebId> = esc.non_escaping().filter(|&w| !esc.web(w).nested).collect();
        if candidates.is_empty() {
            break;
        }
        let accesses = collect(f, &esc, &candidates);
        let base = View::new(f, |_| None);
        let plans: Vec<Plan> = candidates
            .iter()
            .zip(&accesses)
            .filter_map(|(w, acc)| plan::plan(f, esc.web(*w), acc, &base, immutable))
            .collect();
        if plans.is_empty() {
            break;
        }
        cfg_changed |= apply(f, plans);
        esc = Escape::analyze(f);
    }
    (esc, cfg_changed)
}

/// The instructions of each candidate web, in one sweep.
fn collect(f: &Function, esc: &Escape, candidates: &[WebId]) -> Vec<Accesses> {
    let slot: HashMap<WebId, usize> = candidates.iter().enumerate().map(|(k, &w)| (w, k)).collect();
    let web = |o: &Operand| o.as_value().and_then(|v| esc.web_of(v)).and_then(|w| slot.get(&w).copied());
    let mut out: Vec<Accesses> = candidates.iter().map(|_| Accesses::default()).collect();
    let mut seen = HashSet::new();
    for &b in &f.layout {
        if !seen.insert(b) {
            continue;
        }
        for i in f.block_insts(b) {
            let data = &f.insts[i];
            let result = data.result.map(Operand::Value);
            match &data.kind {
                InstKind::New(_) => {
                    if let Some(k) = result.as_ref().and_then(web) {
                        out[k].news.push((b, i));
                        out[k].events.push((b, i));
                    }
                }
                InstKind::Phi(_) => {
                    if let Some(k) = result.as_ref().and_then(web) {
                        out[k].phis.push((b, i));
                    }
                }
                InstKind::Get { obj, .. } | InstKind::Set { obj, .. } => {
                    if let Some(k) = web(obj) {
                        out[k].events.push((b, i));
                    }
                }
                _ => {}
            }
        }
        if let Terminator::IfClass { obj, .. } = &f.blocks[b].term {
            if let Some(k) = web(obj) {
                out[k].tests.push(b);
            }
        }
    }
    out
}

/// Rewrites `f` as the plans say; returns whether the graph changed.
fn apply(f: &mut Function, plans: Vec<Plan>) -> bool {
    let mut bound = bound::Bound::new(f);
    let mut subst = Substitution::new(f);
    let mut dead: HashSet<InstId> = HashSet::new();
    let mut blocks: Vec<BlockId> = Vec::new();
    let mut prune = false;
    for plan in &plans {
        let phis: Vec<Option<ValueId>> = plan
            .phis
            .iter()
            .map(|p| edit::append(f, p.block, InstKind::Phi(flowc_ir::PhiInputs::new()), Some(p.field)))
            .collect();
        let operand = |o: &NewOperand| match o {
            NewOperand::Op(o) => o.clone(),
            NewOperand::Phi(j) => phis[*j].map_or(Operand::int(0), Operand::Value),
        };
        for (p, v) in plan.phis.iter().zip(&phis) {
            let inputs = p.inputs.iter().map(|(b, o)| (*b, operand(o))).collect();
            if let Some(ValueDef::Inst(i)) = v.map(|v| f.values[v].def) {
                f.insts[i].kind = InstKind::Phi(inputs);
            }
        }
        for (r, o) in &plan.reads {
            subst.set(*r, operand(o));
        }
        dead.extend(plan.removed.iter().map(|&(_, i)| i));
        for &(b, i) in &plan.sets {
            let InstKind::Set { value, .. } = &f.insts[i].kind else { continue };
            match value.as_value() {
                Some(x) if bound.may_be_unbound_at(f, x, b, i) => {
                    let name = f.values[x].name;
                    f.insts[i].kind = InstKind::CheckBound(Operand::Value(x));
                    let v = f.values.alloc(flowc_ir::ValueData { def: ValueDef::Inst(i), name });
                    f.insts[i].result = Some(v);
                }
                _ => {
                    dead.insert(i);
                }
            }
        }
        blocks.extend(plan.removed.iter().chain(&plan.sets).map(|&(b, _)| b));
        prune |= plan.prune;
    }
    let mut done = HashSet::new();
    for b in blocks {
        if done.insert(b) {
            edit::unlink_where(f, b, |i| dead.contains(&i));
        }
    }
    subst.apply(f);
    for plan in &plans {
        for &(b, taken, other) in &plan.decided {
            f.blocks[b].term = Terminator::Jump(taken);
            if other != taken {
                edit::remove_phi_inputs(f, other, b);
            }
        }
    }
    if prune {
        let cfg = Cfg::new(f);
        edit::retain_blocks(f, |b| cfg.is_reachable(b));
    }
    prune
}

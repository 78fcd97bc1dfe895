//! Pass `cleanup`: turns what `propagate` learned into rewrites (Factor's
//! cleanup pass). Reads: the [`Propagation`] of each function and the
//! call graph. Writes and guarantees:
//!
//! - blocks propagate never reached are deleted; a `branch`/`if_class`
//!   with one executable edge becomes a `jump` (after a `check_bound` when
//!   the tested value may be unbound, which the test would have raised);
//!   a terminator with no executable edge (its block always fails before
//!   it) becomes `trap unreachable`;
//! - uses of values proven constant (also where a branch proves it, e.g.
//!   `x` is 0 on the else side of `branch x`) take the constant; the
//!   defining instruction goes if it cannot fail;
//! - phis left with one input, or with all inputs equal, are collapsed;
//! - `check_bound` of a value proven bound disappears;
//! - `if_class x, C` of an `x` proven an object of `C` or 0 becomes
//!   `branch x` (a test of one word, not of a cell's kind and class);
//! - generic operations take the cheapest form their operands allow
//!   (`add.int`: no type check; `add.word`: no overflow check;
//!   `readlist.word`: no bounds check) — see [`crate::lattice::best_form`];
//!   `get` and `set` of a value proven an object take `.object`: code
//!   reads and writes its slot without testing what it is;
//! - calls of `pure` functions with constant arguments are replaced by
//!   their result; reads of immutable fields of known allocations by the
//!   stored operand;
//! - a read of a field its block read or wrote before, with no write to
//!   that field of another object nor a call in between, takes the value
//!   read or written there ([`forward`]);
//! - calls marked by propagate are inlined ([`inline`]), after a
//!   `check_bound` of each argument that may be unbound (the call raised it):
//!   small leaves anywhere, small functions that call others where their
//!   frames stay within the inlining depth (so no run exceeds its call
//!   depth elsewhere than before: [`flowc_ir::calls::CallGraph::inlines_exactly`]),
//!   never a recursive one. Functions are cleaned bottom-up (callees first,
//!   [`flowc_ir::calls::CallGraph::bottom_up_positions`]), so a callee is
//!   inlined with its own small callees inlined, if it is still small.
//!   Where a function inlined, its straight lines are merged again
//!   (normal form 5, [`crate::normalize::merge_straight_lines`]): the
//!   call's block, the callee's entry and the continuation are one block
//!   when nothing else enters them (3,000 inlined calls in one loop left
//!   6,000 blocks of jumps, each a Cranelift block).
//!
//! Afterwards the analysis results are stale and are dropped.

pub mod forward;
pub mod inline;

use std::collections::HashMap;

use bitvec::vec::BitVec;
use flowc_ir::{BlockId, Function, InstId, InstKind, Module, Operand, Terminator, Trap};
use flowc_lang::ast::Operator;
use flowc_lang::Symbol;

use crate::edit::{self, ix, Substitution};
use crate::lattice::{self, Info, Kinds};
use crate::propagate::Propagation;
use crate::Context;

pub fn run(module: &mut Module, cx: &mut Context) {
    // Each callee inlined, copied once (the module is edited while it is
    // read) with its surely-bound values, by name; dropped when the callee
    // itself is rewritten.
    let mut callees: HashMap<Symbol, Option<(Function, BitVec)>> = HashMap::new();
    let by_name = module.function_index();
    // Callees before their callers (bottom-up), so that a callee is inlined
    // as cleanup left it, with its own small callees inlined; traces last.
    let graph = cx.call_graph.take();
    let mut order = graph.as_ref().map_or_else(Vec::new, |g| g.bottom_up_positions());
    let listed: BitVec = {
        let mut listed = BitVec::repeat(false, module.functions.len());
        order.iter().for_each(|&k| listed.set(k, true));
        listed
    };
    order.extend((0..module.functions.len()).filter(|&k| !listed[k]));
    let limit = cx.options.inline_limit;
    for i in order {
        let Some(p) = cx.facts(i).propagation.take() else { continue };
        let inlines = rewrite(&mut module.functions[i], &p);
        let mut pending = inline::Pending::new(&module.functions[i]);
        // Last to first (see `inline_call`).
        for &(block, call) in inlines.iter().rev() {
            let InstKind::Call { func, .. } = &module.functions[i].insts[call].kind else { continue };
            let func = *func;
            let entry = callees.entry(func).or_insert_with(|| {
                // Measured again as it is now: its own inlining may have
                // made it bigger than propagate saw.
                let callee = by_name.get(&func).map(|&k| &module.functions[k]);
                let small = callee.filter(|c| crate::propagate::inline_size(c) <= limit);
                small.map(|callee| (callee.clone(), flowc_ir::bound::surely_bound(callee)))
            });
            let Some((callee, bound)) = entry.as_ref() else { continue };
            let may_be_unbound = |o: &Operand| o.as_value().is_some_and(|v| p.info(v).may_be_unbound());
            let f = &mut module.functions[i];
            inline::inline_call(f, block, call, callee, bound, &mut pending, may_be_unbound);
        }
        pending.apply(&mut module.functions[i]);
        if !inlines.is_empty() {
            crate::normalize::merge_straight_lines(&mut module.functions[i]);
        }
        *cx.facts(i) = Default::default();
        // Function `i` changed: its copy is stale.
        callees.remove(&module.functions[i].name);
    }
}

/// Everything but inlining; returns the calls still to inline with their
/// blocks, in layout order.
fn rewrite(f: &mut Function, p: &Propagation) -> Vec<(BlockId, InstId)> {
    let mut subst = Substitution::new(f);
    let mut dead: Vec<InstId> = Vec::new();
    {
        let refiner = &p.refiner;
        let fr: &Function = f;
        let info_at = |o: &Operand, b: BlockId| -> Info {
            match o {
                Operand::Const(c) => Info::of_const(c),
                Operand::Value(v) => refiner.refine(fr, *v, p.info(*v), b),
            }
        };
        // Per instruction: constants, proven checks, forms. `infos` holds
        // the instruction's operand infos where they are used (a phi's
        // input at the end of its predecessor), computed once.
        let mut forms = Vec::new();
        let mut proven = Vec::new();
        let mut truth_tests = Vec::new();
        let mut operand_consts = Vec::new();
        let mut term_consts = Vec::new();
        let mut infos: Vec<Info> = Vec::new();
        for &b in f.layout.iter().filter(|&&b| p.is_executable(b)) {
            for i in f.block_insts(b) {
                let data = &f.insts[i];
                infos.clear();
                for (k, o) in data.kind.operands().enumerate() {
                    let at = match &data.kind {
                        InstKind::Phi(inputs) => inputs[k].0,
                        _ => b,
                    };
                    let info = info_at(o, at);
                    // Operands proven constant where they are used.
                    if let (Operand::Value(_), Some(c)) = (o, &info.constant) {
                        operand_consts.push((i, k, c.clone()));
                    }
                    infos.push(info);
                }
                let result = data.result.map(|v| p.info(v));
                match &data.kind {
                    InstKind::Op { op: Operator::Known(op), .. } => {
                        let form = lattice::best_form(*op, &infos);
                        forms.push((i, form));
                        // Replaced by its constant only if it cannot fail:
                        // no failure of its own, and no operand that may be
                        // unbound (reading one raises `key_not_found`).
                        let total = (op.info().failures.is_empty() && !infos.iter().any(Info::may_be_unbound))
                            || form == flowc_lang::ops::Form::Word;
                        if let (Some(c), true) = (result.as_ref().and_then(|r| r.constant.clone()), total) {
                            subst.set(data.result.unwrap(), Operand::Const(c));
                            dead.push(i);
                        }
                    }
                    InstKind::Get { .. } | InstKind::Set { .. } if infos[0].surely(Kinds::OBJECT) => {
                        proven.push(i);
                    }
                    InstKind::CheckBound(o) if !infos[0].may_be_unbound() => {
                        // A check_bound without a result (before a trap) stays harmlessly.
                        if let Some(v) = data.result {
                            subst.set(v, o.clone());
                            dead.push(i);
                        }
                    }
                    InstKind::Phi(_) => {
                        if let Some(c) = result.and_then(|r| r.constant) {
                            subst.set(data.result.unwrap(), Operand::Const(c));
                            dead.push(i);
                        }
                    }
                    _ => {}
                }
            }
            // A class test of a value that is an object of the class or
            // 0 tests its truth.
            if let Terminator::IfClass { obj, class, .. } = &f.blocks[b].term {
                if crate::propagate::is_class_or_zero(&info_at(obj, b), *class) {
                    truth_tests.push(b);
                }
            }
            // Terminator operands proven constant.
            for (k, o) in f.blocks[b].term.operands().enumerate() {
                if o.as_value().is_some() {
                    if let Some(c) = info_at(o, b).constant {
                        term_consts.push((b, k, c));
                    }
                }
            }
        }
        for (i, form) in forms {
            if let InstKind::Op { form: slot, .. } = &mut f.insts[i].kind {
                *slot = form;
            }
        }
        for b in truth_tests {
            if let Terminator::IfClass { obj, then_block, else_block, .. } = &f.blocks[b].term {
                let (cond, then_block, else_block) = (obj.clone(), *then_block, *else_block);
                f.blocks[b].term = Terminator::Branch { cond, then_block, else_block };
            }
        }
        for i in proven {
            if let InstKind::Get { proven, .. } | InstKind::Set { proven, .. } = &mut f.insts[i].kind {
                *proven = true;
            }
        }
        for (i, k, c) in operand_consts {
            if let Some(o) = f.insts[i].kind.operands_mut().nth(k) {
                *o = Operand::Const(c);
            }
        }
        for (b, k, c) in term_consts {
            if let Some(o) = f.blocks[b].term.operands_mut().nth(k) {
                *o = Operand::Const(c);
            }
        }
    }
    for (call, value) in &p.folded_calls {
        if let Some(v) = f.insts[*call].result {
            subst.set(v, Operand::Const(value.clone()));
            dead.push(*call);
        }
    }
    for (get, stored) in &p.field_reads {
        if let Some(v) = f.insts[*get].result {
            subst.set(v, stored.clone());
            dead.push(*get);
        }
    }
    forward::forward_fields(f, |b| p.is_executable(b), &mut subst, &mut dead);
    prune_edges(f, p);
    // Phis left with one input, or all inputs one operand once constants
    // are in (they read through the substitution).
    crate::phis::remove_trivial(f, &mut subst);
    let mut is_dead = vec![false; f.insts.len()];
    for i in dead {
        is_dead[ix(i)] = true;
    }
    edit::unlink_everywhere(f, |i| is_dead[ix(i)]);
    subst.apply(f);
    let mut inline = vec![false; f.insts.len()];
    for &c in &p.inline {
        inline[ix(c)] = true;
    }
    let mut calls = Vec::new();
    for &b in &f.layout {
        calls.extend(f.blocks[b].insts.iter().filter(|&&i| inline[ix(i)]).map(|&i| (b, i)));
    }
    calls
}

/// Deletes unreached blocks and the edges propagate never took.
fn prune_edges(f: &mut Function, p: &Propagation) {
    let layout = std::mem::take(&mut f.layout);
    for &b in &layout {
        if !p.is_executable(b) {
            continue;
        }
        let succs = f.blocks[b].term.successors();
        if succs.iter().all(|&s| p.edge(b, s)) {
            continue;
        }
        let tested = f.blocks[b].term.operands().next().cloned();
        for &s in &succs {
            if !p.edge(b, s) {
                edit::remove_phi_inputs(f, s, b);
            }
        }
        f.blocks[b].term = match succs.iter().find(|&&s| p.edge(b, s)) {
            Some(&t) => {
                // The test still reads its operand: keep the unbound check.
                if let Some(o @ Operand::Value(v)) = tested {
                    if p.info(v).may_be_unbound() {
                        edit::append(f, b, InstKind::CheckBound(o), None);
                    }
                }
                Terminator::Jump(t)
            }
            None => Terminator::Trap(Trap::Unreachable),
        };
    }
    f.layout = layout;
    edit::retain_blocks(f, |b| p.is_executable(b));
}

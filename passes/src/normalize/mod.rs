//! Pass `normalize` (Factor's first pass): puts the control-flow graph of
//! every function into a normal form the later passes can rely on. It runs
//! first on front-end IR, and is also meant for residual programs of the
//! partial evaluator and for traces.
//!
//! Reads: the IR only. Writes: the IR; clears every function's facts in the
//! context (they would describe the old graph).
//!
//! # The normal form (guaranteed for every function afterwards)
//!
//! 1. Every block of the layout is reachable from the entry; the entry is
//!    `layout[0]` and has no predecessors.
//! 2. No `branch`/`if_class` names the same block twice. Such a terminator
//!    became `jump` after a `check_bound` of its operand (the operand is
//!    still read, so an unbound one still raises `key_not_found`; a constant
//!    or the result of an instruction other than a phi needs no check).
//! 3. No critical edges: an edge from a block with two successors goes to a
//!    block with one predecessor.
//! 4. Jump-only blocks (no phis, no instructions, `jump`) are exactly: the
//!    entry, when its target has several predecessors (a loop header cannot
//!    become the entry); a block jumping to itself (`l: goto l`); and the
//!    edge splitters of 3 — a block whose single predecessor has two
//!    successors and whose target has several predecessors.
//! 5. No `jump A -> B` where B has that single predecessor: B's code was
//!    appended to A (straight-line merging).
//! 6. No trivial phis: every phi has two or more distinct inputs besides
//!    itself (a trivial one was replaced by its input everywhere).
//! 7. Commutative operations (`OpInfo::commutative`) have a constant operand
//!    on the right, and two values in increasing number order — unless both
//!    may be unbound: then the order decides which `key_not_found` is raised
//!    and is kept (see [`crate::defuse::surely_bound`]).
//!
//! Block, instruction and value numbers (arena indices) never change.
//! Removed blocks leave the layout; the others keep their relative order;
//! new blocks (edge splitters) are placed right after their predecessor.
//! Behaviour is preserved exactly: same output, same error kind (only the
//! number of steps taken changes).
//!
//! # How jump-only-block removal and critical-edge splitting interact
//!
//! Removing a jump-only block J (its predecessors P jump to its target T)
//! and splitting the critical edges both edit edges, and each could undo
//! the other: bypassing J from a two-successor P creates the edge P -> T,
//! critical when T has other predecessors — and splitting it would create a
//! jump-only block again. So `thread` resolves every chain of jump-only
//! blocks to its final target U once and decides per edge: a
//! one-successor P always jumps straight to U; a two-successor P goes
//! straight to U only if it would be U's only predecessor and its other
//! successor is not U; otherwise the edge needs a splitter anyway, and the
//! first block of the chain (J itself) is kept as that splitter (jumping
//! straight to U), or, if J already serves another predecessor, a new
//! block is made. Phi inputs of U keyed by the last block of a chain are
//! re-keyed by (duplicated for) every block that now reaches U through that
//! chain. Only then does `split` split the critical edges that remain
//! (edges that never involved a jump-only block), so every jump-only block
//! left is a splitter (or one of the exceptions of 4), and `merge`, which
//! only joins a `jump` with a single-predecessor target, cannot create
//! either. Cycles made only of jump-only blocks are infinite loops; one
//! block of each is kept, jumping to itself.
//!
//! # Steps, in order
//!
//! Unreachable blocks go (their phi inputs with them); same-target
//! branches fold; trivial phis are replaced (before threading, since
//! removing a phi can make a block jump-only) — `crate::phis`; jump threading —
//! `thread`; critical-edge splitting — `thread`; straight-line merging —
//! `merge`; the recorded value substitutions are applied in one sweep;
//! operands are ordered.
//!
//! Every step is linear in the size of the function: phi inputs are
//! re-keyed in batches (one rewrite per phi whatever the number of edges
//! changed), substitutions applied once, and the layout rebuilt once per
//! step — which is why edges are split here rather than with
//! `edit::split_edge`, whose layout search and phi renaming cost a scan per
//! edge.

mod merge;
mod thread;

use flowc_ir::{BlockId, Function, InstKind, Module, Operand, Terminator};
use flowc_lang::ast::Operator;
use la_arena::Arena;

use crate::defuse::{bound_by_definition, BoundQuery};
use crate::edit::{self, ix, Substitution};
use crate::{Context, FunctionFacts};

pub fn run(module: &mut Module, cx: &mut Context) {
    for (i, f) in module.functions.iter_mut().enumerate() {
        function(f);
        *cx.facts(i) = FunctionFacts::default();
    }
}

/// Normalizes one function (see the module docs for the result).
pub fn function(f: &mut Function) {
    remove_unreachable(f);
    fold_same_target(f);
    let mut subst = Substitution::new(f);
    crate::phis::remove_trivial(f, &mut subst);
    thread::thread_jumps(f);
    thread::split_critical_edges(f);
    merge::merge_straight_lines(f, &mut subst);
    subst.apply(f);
    order_operands(f);
}

/// Merges straight lines only (normal form 5): what inlining leaves — a
/// call's block, the callee's entry copy, the continuation — becomes one
/// block again where nothing else enters them.
pub fn merge_straight_lines(f: &mut Function) {
    let mut subst = Substitution::new(f);
    merge::merge_straight_lines(f, &mut subst);
    subst.apply(f);
}

/// Drops blocks unreachable from the entry (and their phi inputs) and puts
/// the entry first.
fn remove_unreachable(f: &mut Function) {
    let mut reached = vec![false; f.blocks.len()];
    let mut stack = vec![f.entry];
    reached[ix(f.entry)] = true;
    while let Some(b) = stack.pop() {
        for t in f.blocks[b].term.successors() {
            if !reached[ix(t)] {
                reached[ix(t)] = true;
                stack.push(t);
            }
        }
    }
    edit::retain_blocks(f, |b| reached[ix(b)]);
    if let Some(pos) = f.layout.iter().position(|&b| b == f.entry).filter(|&pos| pos > 0) {
        let entry = f.layout.remove(pos);
        f.layout.insert(0, entry);
    }
}

/// `branch v, b, b` and `if_class v, C, b, b` become `check_bound v; jump b`.
fn fold_same_target(f: &mut Function) {
    for b in f.layout.clone() {
        let (operand, target) = match &f.blocks[b].term {
            Terminator::Branch { cond: o, then_block: t, else_block: e }
            | Terminator::IfClass { obj: o, then_block: t, else_block: e, .. }
                if t == e =>
            {
                (o.clone(), *t)
            }
            _ => continue,
        };
        if !bound_by_definition(f, &operand) {
            edit::append(f, b, InstKind::CheckBound(operand), None);
        }
        f.blocks[b].term = Terminator::Jump(target);
    }
}

/// Canonical operand order of commutative operations (normal form 7).
/// Phis are only analysed ([`BoundQuery`]) for pairs of values that need it;
/// other values are bound or not by their definition.
fn order_operands(f: &mut Function) {
    let mut bound = BoundQuery::new(f);
    for b in f.layout.clone() {
        for k in 0..f.blocks[b].insts.len() {
            let i = f.blocks[b].insts[k];
            let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[i].kind else { continue };
            if !op.info().commutative || args.len() != 2 {
                continue;
            }
            let swap = match (&args[0], &args[1]) {
                (Operand::Const(_), Operand::Value(_)) => true,
                (Operand::Value(xv), Operand::Value(yv)) if ix(*xv) > ix(*yv) => {
                    bound.is_bound(f, *xv) || bound.is_bound(f, *yv)
                }
                _ => false,
            };
            if let (true, InstKind::Op { args, .. }) = (swap, &mut f.insts[i].kind) {
                args.swap(0, 1);
            }
        }
    }
}

/// A new block ending in `jump target`, not yet in the layout.
fn alloc_jump_block(f: &mut Function, target: BlockId) -> BlockId {
    f.blocks.alloc(flowc_ir::BlockData {
        name: None,
        phis: Default::default(),
        insts: Default::default(),
        term: Terminator::Jump(target),
    })
}

/// Rebuilds the layout: drops blocks with `removed` set and places each
/// `(after, new)` block right after `after` (in the order given).
fn relayout(f: &mut Function, removed: &[bool], mut placed: Vec<(BlockId, BlockId)>) {
    let gone = |b: BlockId| removed.get(ix(b)).copied().unwrap_or(false);
    if placed.is_empty() && !f.layout.iter().any(|&b| gone(b)) {
        return;
    }
    let mut pos = vec![usize::MAX; f.blocks.len()];
    for (k, &b) in f.layout.iter().enumerate() {
        pos[ix(b)] = k;
    }
    placed.sort_by_key(|&(after, _)| pos[ix(after)]);
    let mut layout = Vec::with_capacity(f.layout.len() + placed.len());
    let mut next = placed.into_iter().peekable();
    for (k, &b) in f.layout.iter().enumerate() {
        if !gone(b) {
            layout.push(b);
        }
        while let Some(&(_, new)) = next.peek().filter(|(after, _)| pos[ix(*after)] == k) {
            layout.push(new);
            next.next();
        }
    }
    layout.extend(next.map(|(_, new)| new));
    f.layout = layout;
}

/// Distinct predecessor counts of the blocks of the layout.
fn pred_counts(f: &Function) -> Vec<u32> {
    let mut count = vec![0u32; f.blocks.len()];
    for &b in &f.layout {
        let s = f.blocks[b].term.successors();
        for (k, &t) in s.iter().enumerate() {
            if ix(t) < count.len() && !s[..k].contains(&t) {
                count[ix(t)] += 1;
            }
        }
    }
    count
}

/// Rewrites the phi keys of block `b` with `key` (returning `None` drops
/// the input; several keys duplicate it), preserving input order.
fn rekey_phis(f: &mut Function, b: BlockId, mut key: impl FnMut(BlockId, &mut Vec<BlockId>)) {
    let insts: &mut Arena<flowc_ir::InstData> = &mut f.insts;
    let mut keys = Vec::new();
    // The new keys of all inputs, and where each input's run starts.
    let mut runs: Vec<u32> = Vec::new();
    for &phi in &f.blocks[b].phis {
        let InstKind::Phi(inputs) = &mut insts[phi].kind else { continue };
        keys.clear();
        runs.clear();
        for (pred, _) in inputs.iter() {
            runs.push(keys.len() as u32);
            key(*pred, &mut keys);
        }
        runs.push(keys.len() as u32);
        if keys.len() == inputs.len() && runs.windows(2).all(|w| w[1] == w[0] + 1) {
            // One key per input (the common case): rewrite in place.
            for ((pred, _), &k) in inputs.iter_mut().zip(&keys) {
                *pred = k;
            }
            continue;
        }
        let old = std::mem::take(inputs);
        inputs.reserve_exact(keys.len());
        for (n, (_, o)) in old.into_iter().enumerate() {
            for &k in &keys[runs[n] as usize..runs[n + 1] as usize] {
                inputs.push((k, o.clone()));
            }
        }
    }
}

//! Straight-line merging (normal form 5): a block ending in `jump B`, where
//! B is not the entry and has that block as its only predecessor, absorbs
//! B — B's instructions are appended, B's terminator becomes its own, and B
//! leaves the layout. B's phis (one input each) are replaced by their input.
//!
//! Each chain A -> B -> C … is merged from its head A, so every instruction
//! moves once: linear time. Merging changes no edge count, so it creates no
//! critical edge and no jump-only block.

use flowc_ir::{BlockId, Function, InstKind, Terminator, ValueDef};

use super::{pred_counts, rekey_phis, relayout};
use crate::edit::{ix, Substitution};

pub(super) fn merge_straight_lines(f: &mut Function, subst: &mut Substitution) {
    let npreds = pred_counts(f);
    let nb = f.blocks.len();
    // The target of a jump from another block, when it has no other
    // predecessor: such a block is absorbed by its chain's head.
    let absorbable = |f: &Function, a: BlockId| match f.blocks[a].term {
        Terminator::Jump(b) if b != a && b != f.entry && npreds[ix(b)] == 1 => Some(b),
        _ => None,
    };
    let mut absorbed = vec![false; nb];
    for &a in &f.layout {
        if let Some(b) = absorbable(f, a) {
            absorbed[ix(b)] = true;
        }
    }
    let mut merged_into: Vec<Option<BlockId>> = vec![None; nb];
    // Heads that absorbed a block: their successors (those of the last
    // block absorbed) have phi inputs keyed by an absorbed block.
    let mut heads: Vec<BlockId> = Vec::new();
    for a in f.layout.clone() {
        if absorbed[ix(a)] {
            continue;
        }
        let mut absorbs = false;
        while let Some(b) = absorbable(f, a) {
            if merged_into[ix(b)].is_some() || b == a || !single_input_phis(f, b) {
                break;
            }
            let phis = std::mem::take(&mut f.blocks[b].phis);
            for phi in phis {
                if let (InstKind::Phi(inputs), Some(r)) = (&f.insts[phi].kind, f.insts[phi].result) {
                    subst.set(r, inputs[0].1.clone());
                    f.values[r].def = ValueDef::Detached;
                }
            }
            let insts = std::mem::take(&mut f.blocks[b].insts);
            f.blocks[a].insts.extend(insts);
            let term = std::mem::replace(&mut f.blocks[b].term, Terminator::Jump(b));
            f.blocks[a].term = term;
            f.sites.move_term(b, a);
            merged_into[ix(b)] = Some(a);
            absorbs = true;
        }
        if absorbs {
            heads.push(a);
        }
    }
    if heads.is_empty() {
        return;
    }
    let mut targets: Vec<BlockId> = heads.iter().flat_map(|&a| f.blocks[a].term.successors()).collect();
    targets.sort_unstable_by_key(|&t| ix(t));
    targets.dedup();
    for t in targets {
        if !f.blocks[t].phis.is_empty() {
            rekey_phis(f, t, |p, out| out.push(merged_into[ix(p)].unwrap_or(p)));
        }
    }
    let removed: Vec<bool> = merged_into.iter().map(Option::is_some).collect();
    relayout(f, &removed, Vec::new());
}

fn single_input_phis(f: &Function, b: BlockId) -> bool {
    f.blocks[b].phis.iter().all(|&phi| matches!(&f.insts[phi].kind, InstKind::Phi(inputs) if inputs.len() == 1))
}

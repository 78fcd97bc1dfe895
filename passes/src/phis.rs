//! Trivial phis: a phi whose inputs are all one operand, apart from the phi
//! itself, stands for that operand (Braun et al.'s `tryRemoveTrivialPhi`).
//! Removing unreachable predecessors leaves such phis (one input left), in
//! `normalize`, and so do the constants and dead edges of `cleanup`;
//! replacing one can make the phis using it trivial in turn, so a worklist
//! over phi users runs to a fixpoint in linear time.
//!
//! Replacing is exact under the IR's semantics: a phi copies its input
//! unchanged, unbound or not, and in strict SSA the remaining input's
//! definition dominates the phi.

use std::collections::HashMap;

use flowc_ir::{Function, InstId, InstKind, Operand, ValueId};

use crate::defuse::PhiUsers;
use crate::edit::{self, ix, Substitution};

/// Records each trivial phi's replacement in `subst` and unlinks the phi;
/// inputs are read through `subst`, and phis `subst` already replaces are
/// left alone. Operands of other instructions are left for `subst.apply`.
///
/// When a phi goes, the phis whose inputs lead to it are looked at again:
/// those naming it (a table of phi users, built only once a first phi
/// turns out trivial — most functions have none, the front end removes
/// them as it builds SSA), and those whose inputs led to it through `subst`
/// when they were last looked at (recorded then: an input forwarded by the
/// caller, as cleanup forwards a `check_bound` to its operand, or to a phi
/// that went earlier). So the result is the fixpoint: no phi left is trivial
/// once `subst` is applied.
pub fn remove_trivial(f: &mut Function, subst: &mut Substitution) {
    let phis: Vec<InstId> = f.layout.iter().flat_map(|&b| f.blocks[b].phis.iter().copied()).collect();
    if phis.is_empty() {
        return;
    }
    let mut users: Option<PhiUsers> = None;
    let mut forwarded_users: HashMap<ValueId, Vec<InstId>> = HashMap::new();
    let mut removed = vec![false; f.insts.len()];
    let mut work: Vec<InstId> = phis.iter().rev().copied().collect();
    let mut any = false;
    while let Some(phi) = work.pop() {
        if removed[ix(phi)] {
            continue;
        }
        let (InstKind::Phi(inputs), Some(result)) = (&f.insts[phi].kind, f.insts[phi].result) else { continue };
        if subst.get(result).is_some() {
            continue;
        }
        let mut same: Option<Operand> = None;
        let mut trivial = true;
        for (_, input) in inputs {
            let o = subst.resolve(input);
            if o != *input {
                if let Operand::Value(v) = o {
                    forwarded_users.entry(v).or_default().push(phi);
                }
            }
            if o == Operand::Value(result) {
                continue;
            }
            match &same {
                None => same = Some(o),
                Some(s) if *s == o => {}
                Some(_) => trivial = false,
            }
        }
        let (true, Some(to)) = (trivial, same) else { continue };
        subst.set(result, to);
        removed[ix(phi)] = true;
        any = true;
        let users = users.get_or_insert_with(|| PhiUsers::new(f, &phis));
        let forwarded = forwarded_users.remove(&result).unwrap_or_default();
        work.extend(users.of(result).iter().copied().chain(forwarded).filter(|&u| u != phi && !removed[ix(u)]));
    }
    if any {
        for b in f.layout.clone() {
            if f.blocks[b].phis.iter().any(|&p| removed[ix(p)]) {
                edit::unlink_where(f, b, |i| removed.get(ix(i)).copied().unwrap_or(false));
            }
        }
    }
}

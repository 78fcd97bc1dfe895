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

#[cfg(test)]
mod tests {
    use super::*;

    /// `v1` merges 0 with `v3`, a `check_bound` of `v2`; `v2` is a phi of 0
    /// alone. With `v3` forwarded to `v2` (as cleanup forwards a proven
    /// `check_bound`), removing `v2` makes `v1` trivial too, although no
    /// phi input names `v2`.
    #[test]
    fn a_phi_reached_through_the_substitution_is_looked_at_again() {
        let text = "main start(v0:n) {\nb0 start:\n    jump b1\nb1 loop:\n    v1:p = phi [b0: 0, b2: v3]\n    \
                    branch v0, b2, b3\nb2 body:\n    v2:q = phi [b1: 0]\n    v3:x = check_bound v2\n    jump b1\n\
                    b3 done:\n    print v1\n}\n";
        let mut m = flowc_ir::parse::module("test", text).unwrap();
        let f = &mut m.functions[0];
        let v = |k: u32| -> ValueId { crate::edit::id(k as usize) };
        let mut subst = Substitution::new(f);
        subst.set(v(3), Operand::Value(v(2)));
        remove_trivial(f, &mut subst);
        assert_eq!(subst.resolve(&Operand::Value(v(1))), Operand::int(0));
        assert_eq!(subst.resolve(&Operand::Value(v(2))), Operand::int(0));
        assert!(f.layout.iter().all(|&b| f.blocks[b].phis.is_empty()), "both phis are unlinked");
    }
}

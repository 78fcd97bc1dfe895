//! Removing trivial phis (`flowc_passes::phis`) through a substitution.

use flowc_ir::{Operand, ValueId};
use flowc_passes::edit::Substitution;
use flowc_passes::phis::*;

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
    let v = |k: u32| -> ValueId { flowc_passes::edit::id(k as usize) };
    let mut subst = Substitution::new(f);
    subst.set(v(3), Operand::Value(v(2)));
    remove_trivial(f, &mut subst);
    assert_eq!(subst.resolve(&Operand::Value(v(1))), Operand::int(0));
    assert_eq!(subst.resolve(&Operand::Value(v(2))), Operand::int(0));
    assert!(f.layout.iter().all(|&b| f.blocks[b].phis.is_empty()), "both phis are unlinked");
}

//! Which values can never be unbound (flowc-ir crate docs, "Semantics of
//! unbound variables"): reading such a value can never raise
//! `key_not_found`, so reordering or removing the read cannot change which
//! error a program raises.
//!
//! A value is surely bound if it is a parameter of a `function` (callers
//! pass bound values), or the result of a linked instruction other than a
//! phi or `unbound` (every other instruction yields a bound value or
//! fails), or a phi all of whose inputs are constants or surely bound
//! values. Phis are solved optimistically: all start bound and a worklist
//! knocks out those with a possibly-unbound input, so phi cycles fed only by
//! bound values stay bound. Parameters of the main graph and of traces may
//! be unbound; detached values count as possibly unbound. Linear time.

use bitvec::vec::BitVec;

use flowc_ir::{Function, FunctionKind, InstKind, Operand};

use super::{Def, DefUse, Use};
use crate::edit::ix;

/// Bit `ix(v)` is set iff value `v` of `f` is surely bound. `du` must be
/// the def-use table of `f`.
pub fn surely_bound(f: &Function, du: &DefUse) -> BitVec {
    let n = f.values.len();
    let mut bound: BitVec = BitVec::repeat(false, n);
    let mut phis = Vec::new();
    for k in 0..n {
        let v = crate::edit::id(k);
        let yes = match du.def_of(v) {
            Def::Param(_) => f.kind == FunctionKind::Function,
            Def::Inst { inst, .. } => match f.insts[inst].kind {
                InstKind::Phi(_) => {
                    phis.push(inst);
                    true
                }
                InstKind::Unbound(_) => false,
                _ => true,
            },
            Def::None => false,
        };
        bound.set(k, yes);
    }
    // Knock out phis with a possibly-unbound input, then their phi users.
    let mut work = Vec::new();
    for &phi in &phis {
        if let InstKind::Phi(inputs) = &f.insts[phi].kind {
            let unbound_input = inputs.iter().any(|(_, o)| match o {
                Operand::Value(v) => !bound.get(ix(*v)).is_some_and(|b| *b),
                Operand::Const(_) => false,
            });
            if let (true, Some(r)) = (unbound_input, f.insts[phi].result) {
                if bound[ix(r)] {
                    bound.set(ix(r), false);
                    work.push(r);
                }
            }
        }
    }
    while let Some(v) = work.pop() {
        for u in du.uses_of(v) {
            if let Use::Phi { inst, .. } = u {
                if let Some(r) = f.insts[*inst].result {
                    if bound[ix(r)] {
                        bound.set(ix(r), false);
                        work.push(r);
                    }
                }
            }
        }
    }
    bound
}

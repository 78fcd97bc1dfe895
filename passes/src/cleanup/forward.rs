//! Field reads forwarded within a block: a `get` of a field that the same
//! block read or wrote earlier, with no write in between that may be to
//! that field of the same object, and no call, takes the value read or
//! written there, and goes. (A partially evaluated interpreter's residual
//! program is runs of `v = tape.v; v = (v + 1) % 256; tape.v = v` on one
//! cell: each read after the first is the value just stored.)
//!
//! Why a read can go: the earlier read or write of the same object's
//! field succeeded (else the block ended there), so the object is an
//! object with that field set, and the value is the one read or stored
//! last. A write to the field of another operand may be to the same
//! object: it forgets every other object's value of that field, but
//! those of objects made by another `new` than the one written to. A call
//! may write any field: it forgets everything. Nothing else writes a
//! field. Traces are left alone (their reads are the trace optimizer's,
//! which forwards them along the whole trace).
//!
//! Reads: the layout, each block's instructions, and the substitution and
//! dead instructions `cleanup` has decided so far (operands are compared
//! as the substitution resolves them). Writes: more of both.

use flowc_ir::{Function, FunctionKind, InstId, InstKind, Operand};
use flowc_lang::Symbol;

use crate::edit::{ix, Substitution};

/// Whether operands `a` and `b` are surely different objects: made by two
/// different `new`s (each run of a `new` makes an object no other value
/// held before; a value made by one `new` is never one made by another).
fn apart(f: &Function, a: &Operand, b: &Operand) -> bool {
    let made_by = |o: &Operand| match o {
        Operand::Value(v) => crate::edit::def_inst(f, *v).filter(|&i| matches!(f.insts[i].kind, InstKind::New(_))),
        Operand::Const(_) => None,
    };
    matches!((made_by(a), made_by(b)), (Some(x), Some(y)) if x != y)
}

/// Forwards the field reads of `f`'s blocks in `blocks` (see the module
/// docs): each forwarded read's result is set in `subst` to the value it
/// reads, and the read is added to `dead`.
pub fn forward_fields(
    f: &Function,
    blocks: impl Iterator<Item = flowc_ir::BlockId>,
    subst: &mut Substitution,
    dead: &mut Vec<InstId>,
) {
    if f.kind == FunctionKind::Trace {
        return;
    }
    let mut gone = vec![false; f.insts.len()];
    for &i in dead.iter() {
        gone[ix(i)] = true;
    }
    // What the block knows: (object, field, value), a handful at a time.
    let mut known: Vec<(Operand, Symbol, Operand)> = Vec::new();
    for b in blocks {
        known.clear();
        for i in f.block_insts(b) {
            if gone[ix(i)] {
                continue;
            }
            let data = &f.insts[i];
            match &data.kind {
                InstKind::Get { obj, field, .. } => {
                    let Some(result) = data.result else { continue };
                    let obj = subst.resolve(obj);
                    match known.iter().find(|(o, fd, _)| *fd == *field && *o == obj) {
                        Some((_, _, value)) => {
                            subst.set(result, value.clone());
                            dead.push(i);
                        }
                        None => known.push((obj, *field, Operand::Value(result))),
                    }
                }
                InstKind::Set { obj, field, value, .. } => {
                    let obj = subst.resolve(obj);
                    known.retain(|(o, fd, _)| *fd != *field || apart(f, o, &obj));
                    known.push((obj, *field, subst.resolve(value)));
                }
                InstKind::Call { .. } => known.clear(),
                _ => {}
            }
        }
    }
}

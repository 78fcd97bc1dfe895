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
//! those of objects made by another `new` than the one written to. Each
//! read and write costs a lookup, whatever the block holds (a block of
//! 20,000 objects' writes and reads compiles as fast as without it). A call
//! may write any field: it forgets everything. Nothing else writes a
//! field. Traces are left alone (their reads are the trace optimizer's,
//! which forwards them along the whole trace).
//!
//! Reads: the layout, each block's instructions, and the substitution and
//! dead instructions `cleanup` has decided so far (operands are compared
//! as the substitution resolves them). Writes: more of both.

use std::collections::HashMap;

use flowc_ir::{BlockId, Function, FunctionKind, InstId, InstKind, Operand, ValueId};
use flowc_lang::Symbol;

use crate::edit::{ix, Substitution};

/// What a block knows of one field: the value last read or written, by
/// object. Objects made by a `new` are apart from one another, so a write
/// to one forgets only the others'; any other object may be any.
#[derive(Default)]
struct Field {
    made: HashMap<ValueId, Operand>,
    other: HashMap<ValueId, Operand>,
}

impl Field {
    fn get(&self, obj: ValueId, made: bool) -> Option<&Operand> {
        if made {
            self.made.get(&obj)
        } else {
            self.other.get(&obj)
        }
    }

    /// `value` is in `obj`'s field now, and any object `obj` may be has
    /// it. (Maps are replaced, not cleared: a clear costs what the map
    /// ever held, and a block may forget often.)
    fn write(&mut self, obj: ValueId, made: bool, value: Operand) {
        std::mem::take(&mut self.other);
        if made {
            self.made.insert(obj, value);
        } else {
            std::mem::take(&mut self.made);
            self.other.insert(obj, value);
        }
    }

    fn read(&mut self, obj: ValueId, made: bool, value: Operand) {
        let map = if made { &mut self.made } else { &mut self.other };
        map.insert(obj, value);
    }
}

/// Forwards the field reads of `f`'s blocks that `reached` (see the
/// module docs): each forwarded read's result is set in `subst` to the
/// value it reads, and the read is added to `dead`.
pub fn forward_fields(
    f: &Function,
    reached: impl Fn(BlockId) -> bool,
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
    // Whether a value is made by a `new`.
    let made = |v: ValueId| crate::edit::def_inst(f, v).is_some_and(|i| matches!(f.insts[i].kind, InstKind::New(_)));
    for &b in f.layout.iter().filter(|&&b| reached(b)) {
        let mut known: HashMap<Symbol, Field> = HashMap::new();
        for i in f.block_insts(b) {
            if gone[ix(i)] {
                continue;
            }
            let data = &f.insts[i];
            match &data.kind {
                InstKind::Get { obj, field, .. } => {
                    let (Some(result), Operand::Value(obj)) = (data.result, subst.resolve(obj)) else { continue };
                    let m = made(obj);
                    let entry = known.entry(*field).or_default();
                    match entry.get(obj, m) {
                        Some(value) => {
                            subst.set(result, value.clone());
                            dead.push(i);
                        }
                        None => entry.read(obj, m, Operand::Value(result)),
                    }
                }
                InstKind::Set { obj, field, value, .. } => match subst.resolve(obj) {
                    Operand::Value(obj) => {
                        let value = subst.resolve(value);
                        known.entry(*field).or_default().write(obj, made(obj), value);
                    }
                    // A constant: not a value this block can tell apart
                    // from the others (the write fails unless it is an
                    // object), so nothing is known of the field any more.
                    Operand::Const(_) => {
                        known.remove(field);
                    }
                },
                InstKind::Call { .. } => known.clear(),
                _ => {}
            }
        }
    }
}

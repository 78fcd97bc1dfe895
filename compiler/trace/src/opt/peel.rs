//! Loop peeling: the first iteration of a trace's loop becomes straight
//! code before the loop (PyPy's preamble, LuaJIT's copy-substitution).
//!
//! Before: `b0` (the preheader) jumps to `b1`, whose phis carry the loop's
//! variables (inputs from `b0` and from `b1` itself) and which jumps to
//! itself. After: `b1` is the first iteration, without phis (each phi
//! replaced by its input from `b0`), jumping to a new block `b2`: a copy
//! of the body with fresh instructions, values and resume records, whose
//! phis take their first input from the end of `b1` and the other from
//! its own end.
//!
//! What this buys, once the optimizer walks `b0`, `b1`, `b2` in order:
//! everything the first iteration learned holds in the loop — guards on
//! loop-invariant values and computations on them are done once, in
//! `b1` (loop-invariant code motion for free) — and objects the first
//! iteration allocates can be carried around the loop as virtual objects
//! ([`super::state`]), because the loop's phis no longer mix them with
//! objects from before the trace.

use flowc_ir::{BlockId, Function, InstData, InstId, InstKind, PhiInputs, Terminator, ValueDef};
use flowc_passes::edit::Substitution;

use crate::copy::Copier;

/// Loops whose body is longer than this are not peeled (the code would
/// double): they are optimized as one loop.
pub const MAX_PEELED: usize = 4000;

/// Peels loop `body` of `f` (entered from the entry block only); returns
/// the new loop block. `None`, and `f` unchanged, when the body is too
/// long.
pub fn peel(f: &mut Function, body: BlockId) -> Option<BlockId> {
    if f.blocks[body].insts.len() > MAX_PEELED {
        return None;
    }
    let pre = f.entry;
    let name = f.blocks[body].name;
    let copy = f.blocks.alloc(flowc_ir::BlockData {
        name,
        phis: Default::default(),
        insts: Default::default(),
        term: Terminator::Jump(body),
    });
    f.layout.push(copy);
    // Values of the body as they are in the copy: phis become the copy's
    // phis, results become the copies' results; values from outside the
    // body stay as they are.
    let src = f.clone();
    let mut copier = Copier::new();
    let phis = f.blocks[body].phis.clone();
    let new_phis: Vec<InstId> = phis
        .iter()
        .map(|&p| {
            let r = f.insts[p].result.expect("phis have results");
            let inst = f.insts.alloc(InstData { kind: InstKind::Phi(PhiInputs::new()), result: None });
            let v = copier.fresh(&src, f, r, ValueDef::Inst(inst));
            f.insts[inst].result = Some(v);
            inst
        })
        .collect();
    let copies: Vec<InstId> = src.blocks[body].insts.iter().map(|&i| copier.inst(&src, f, i)).collect();
    // The copy's phis: the variable's value at the end of the first
    // iteration, then its value at the end of the copy.
    for (&p, &q) in phis.iter().zip(&new_phis) {
        let InstKind::Phi(inputs) = &f.insts[p].kind else { unreachable!("phis") };
        let back = inputs.iter().find(|(b, _)| *b == body).map(|(_, o)| o.clone()).expect("a back edge");
        let mapped = copier.operand(&back);
        f.insts[q].kind = InstKind::Phi(PhiInputs::from_iter([(body, back), (copy, mapped)]));
    }
    f.blocks[copy].phis = new_phis.into();
    f.blocks[copy].insts = copies.into();
    f.blocks[copy].term = Terminator::Jump(copy);
    // The first iteration: each phi is its input from the preheader.
    let mut first = Substitution::new(f);
    for &p in &phis {
        let InstKind::Phi(inputs) = &f.insts[p].kind else { unreachable!("phis") };
        let entry = inputs.iter().find(|(b, _)| *b == pre).map(|(_, o)| o.clone()).expect("an entry edge");
        let r = f.insts[p].result.expect("phis have results");
        first.set(r, entry);
        f.values[r].def = ValueDef::Detached;
    }
    f.blocks[body].phis.clear();
    f.blocks[body].term = Terminator::Jump(copy);
    first.apply(f);
    Some(copy)
}

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

use std::collections::HashMap;

use flowc_ir::{BlockId, Function, InstData, InstKind, Operand, PhiInputs, Terminator, ValueData, ValueDef, ValueId};
use flowc_passes::edit::Substitution;

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
    // phis, results become the copies' results.
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    let phis = f.blocks[body].phis.clone();
    let mut new_phis = Vec::with_capacity(phis.len());
    for &p in &phis {
        let r = f.insts[p].result.expect("phis have results");
        let inst = f.insts.alloc(InstData { kind: InstKind::Phi(PhiInputs::new()), result: None });
        let v = f.values.alloc(ValueData { def: ValueDef::Inst(inst), name: f.values[r].name });
        f.insts[inst].result = Some(v);
        map.insert(r, v);
        new_phis.push(inst);
    }
    let insts = f.blocks[body].insts.clone();
    let mut copies = Vec::with_capacity(insts.len());
    for &i in &insts {
        let mut kind = f.insts[i].kind.clone();
        let result = f.insts[i].result.map(|r| {
            let v = f.values.alloc(ValueData { def: ValueDef::Detached, name: f.values[r].name });
            map.insert(r, v);
            v
        });
        let fix = |o: &mut Operand| {
            if let Operand::Value(v) = o {
                if let Some(&m) = map.get(v) {
                    *v = m;
                }
            }
        };
        kind.operands_mut().for_each(fix);
        if let InstKind::Guard { resume, .. } = &mut kind {
            let mut record = f.resumes[*resume].clone();
            record.operands_mut().for_each(fix);
            *resume = f.resumes.alloc(record);
        }
        let c = f.insts.alloc(InstData { kind, result });
        if let Some(v) = result {
            f.values[v].def = ValueDef::Inst(c);
        }
        if let Some(site) = f.sites.inst(i) {
            f.sites.set_inst(c, site);
        }
        copies.push(c);
    }
    // The copy's phis: the variable's value at the end of the first
    // iteration, then its value at the end of the copy.
    for (&p, &q) in phis.iter().zip(&new_phis) {
        let InstKind::Phi(inputs) = &f.insts[p].kind else { unreachable!("phis") };
        let back = inputs.iter().find(|(b, _)| *b == body).map(|(_, o)| o.clone()).expect("a back edge");
        let mapped = match &back {
            Operand::Value(v) => Operand::Value(*map.get(v).unwrap_or(v)),
            c => c.clone(),
        };
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

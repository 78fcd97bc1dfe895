//! IR surgery shared by the passes: unlinking instructions, batched value
//! substitution, removing and splitting blocks, retargeting edges. Every
//! pass edits the IR through these, so the invariants (phi inputs keyed by
//! predecessor, detached values for removed definitions) are kept in one
//! place.

use la_arena::{Idx, RawIdx};

use flowc_ir::{BlockData, BlockId, Function, InstId, InstKind, Terminator, Trap, ValueDef, ValueId};
use flowc_lang::Symbol;

/// The raw arena index of an id.
pub fn ix<T>(id: Idx<T>) -> usize {
    id.into_raw().into_u32() as usize
}

/// The id with raw index `i`.
pub fn id<T>(i: usize) -> Idx<T> {
    Idx::from_raw(RawIdx::from_u32(i as u32))
}

/// Removes instruction `i` from block `b`; its result becomes detached.
pub fn unlink(f: &mut Function, b: BlockId, i: InstId) {
    let data = &mut f.blocks[b];
    data.phis.retain(|x| *x != i);
    data.insts.retain(|x| *x != i);
    if let Some(v) = f.insts[i].result {
        f.values[v].def = ValueDef::Detached;
    }
}

/// Removes every instruction of `b` for which `dead` holds (one sweep).
pub fn unlink_where(f: &mut Function, b: BlockId, mut dead: impl FnMut(&Function, InstId) -> bool) {
    let mut gone = Vec::new();
    let mut live = |f: &Function, i: InstId| {
        let dead = dead(f, i);
        if dead {
            gone.push(i);
        }
        !dead
    };
    let phis = f.blocks[b].phis.iter().copied().filter(|&i| live(f, i)).collect();
    let insts = f.blocks[b].insts.iter().copied().filter(|&i| live(f, i)).collect();
    f.blocks[b].phis = phis;
    f.blocks[b].insts = insts;
    for i in gone {
        if let Some(v) = f.insts[i].result {
            f.values[v].def = ValueDef::Detached;
        }
    }
}

/// Batched value substitution lives in flowc-ir, which the front end
/// shares (its SSA construction forwards removed phis the same way).
pub use flowc_ir::subst::Substitution;

/// Keeps only the blocks for which `keep` holds; phis lose their inputs
/// from removed blocks.
pub fn retain_blocks(f: &mut Function, keep: impl Fn(BlockId) -> bool) {
    let (kept, removed): (Vec<BlockId>, Vec<BlockId>) = f.layout.iter().partition(|&&b| keep(b));
    if removed.is_empty() {
        return;
    }
    let mut is_removed = vec![false; f.blocks.len()];
    for &b in &removed {
        is_removed[ix(b)] = true;
        let insts: Vec<InstId> = f.block_insts(b).collect();
        for i in insts {
            if let Some(v) = f.insts[i].result {
                f.values[v].def = ValueDef::Detached;
            }
        }
    }
    f.layout = kept;
    for b in f.layout.clone() {
        for &phi in &f.blocks[b].phis.clone() {
            if let InstKind::Phi(inputs) = &mut f.insts[phi].kind {
                inputs.retain(|(p, _)| !is_removed[ix(*p)]);
            }
        }
    }
}

/// A new empty block (terminated by a placeholder trap) placed in the
/// layout right after `after`.
pub fn new_block(f: &mut Function, name: Option<Symbol>, after: BlockId) -> BlockId {
    let b = f.blocks.alloc(BlockData {
        name,
        phis: Default::default(),
        insts: Default::default(),
        term: Terminator::Trap(Trap::ReturnOutsideFunction),
    });
    let at = f.layout.iter().position(|&x| x == after).map_or(f.layout.len(), |p| p + 1);
    f.layout.insert(at, b);
    b
}

/// Makes `from`'s terminator go to `new` where it went to `old`.
pub fn retarget(f: &mut Function, from: BlockId, old: BlockId, new: BlockId) {
    for t in f.blocks[from].term.successors_mut() {
        if *t == old {
            *t = new;
        }
    }
}

/// Renames the phi inputs of `b` coming from `old` to come from `new`.
pub fn rename_phi_pred(f: &mut Function, b: BlockId, old: BlockId, new: BlockId) {
    for &phi in &f.blocks[b].phis.clone() {
        if let InstKind::Phi(inputs) = &mut f.insts[phi].kind {
            for (p, _) in inputs.iter_mut() {
                if *p == old {
                    *p = new;
                }
            }
        }
    }
}

/// Removes the phi inputs of `b` coming from `pred`.
pub fn remove_phi_inputs(f: &mut Function, b: BlockId, pred: BlockId) {
    for &phi in &f.blocks[b].phis.clone() {
        if let InstKind::Phi(inputs) = &mut f.insts[phi].kind {
            inputs.retain(|(p, _)| *p != pred);
        }
    }
}

/// Splits the edge `from -> to` with a new block that jumps to `to`;
/// returns the new block.
pub fn split_edge(f: &mut Function, from: BlockId, to: BlockId) -> BlockId {
    let mid = new_block(f, None, from);
    f.blocks[mid].term = Terminator::Jump(to);
    retarget(f, from, to, mid);
    rename_phi_pred(f, to, from, mid);
    mid
}

/// Appends an instruction to block `b` (before its terminator); returns its
/// result value.
pub fn append(f: &mut Function, b: BlockId, kind: InstKind, name: Option<Symbol>) -> Option<ValueId> {
    let has_result = kind.has_result();
    let i = f.insts.alloc(flowc_ir::InstData { kind, result: None });
    let v = has_result.then(|| f.values.alloc(flowc_ir::ValueData { def: ValueDef::Inst(i), name }));
    f.insts[i].result = v;
    if matches!(f.insts[i].kind, InstKind::Phi(_)) {
        f.blocks[b].phis.push(i);
    } else {
        f.blocks[b].insts.push(i);
    }
    v
}

/// The instruction defining `v`, if it is defined by one.
pub fn def_inst(f: &Function, v: ValueId) -> Option<InstId> {
    match f.values[v].def {
        ValueDef::Inst(i) => Some(i),
        _ => None,
    }
}

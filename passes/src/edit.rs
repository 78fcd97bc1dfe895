//! IR surgery shared by the passes: unlinking instructions, batched value
//! substitution, removing and splitting blocks, retargeting edges. Every
//! pass edits the IR through these, so the invariants (phi inputs keyed by
//! predecessor, detached values for removed definitions) are kept in one
//! place.

use la_arena::{Idx, RawIdx};

use flowc_ir::{BlockData, BlockId, Function, InstId, InstKind, Terminator, Trap, ValueDef, ValueId};
use flowc_lang::Symbol;

/// The raw arena index of an id (flowc-ir's one helper).
pub use flowc_ir::ix;

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
/// A block with nothing to remove is left untouched.
pub fn unlink_where(f: &mut Function, b: BlockId, mut dead: impl FnMut(InstId) -> bool) {
    let block = &f.blocks[b];
    let Some(first) = block.phis.iter().chain(&block.insts).position(|&i| dead(i)) else { return };
    let (mut phis, mut insts) = (std::mem::take(&mut f.blocks[b].phis), std::mem::take(&mut f.blocks[b].insts));
    let mut gone = Vec::new();
    let mut k = 0;
    let mut live = |i: InstId| {
        // `first` was dead already; `dead` is asked once per instruction.
        let dead = k == first || (k > first && dead(i));
        k += 1;
        if dead {
            gone.push(i);
        }
        !dead
    };
    phis.retain(|i| live(*i));
    insts.retain(|i| live(*i));
    f.blocks[b].phis = phis;
    f.blocks[b].insts = insts;
    for i in gone {
        if let Some(v) = f.insts[i].result {
            f.values[v].def = ValueDef::Detached;
        }
    }
}

/// [`unlink_where`] on every block of the layout.
pub fn unlink_everywhere(f: &mut Function, mut dead: impl FnMut(InstId) -> bool) {
    let layout = std::mem::take(&mut f.layout);
    for &b in &layout {
        unlink_where(f, b, &mut dead);
    }
    f.layout = layout;
}

/// Batched value substitution lives in flowc-ir, which the front end
/// shares (its SSA construction forwards removed phis the same way).
pub use flowc_ir::subst::Substitution;

/// Keeps only the blocks for which `keep` holds; phis lose their inputs
/// from removed blocks. Only the kept successors of removed blocks can have
/// such inputs (phi inputs are keyed by predecessors), so only their phis
/// are visited.
pub fn retain_blocks(f: &mut Function, keep: impl Fn(BlockId) -> bool) {
    let (kept, removed): (Vec<BlockId>, Vec<BlockId>) = f.layout.iter().partition(|&&b| keep(b));
    if removed.is_empty() {
        return;
    }
    let mut is_removed = vec![false; f.blocks.len()];
    for &b in &removed {
        is_removed[ix(b)] = true;
    }
    let mut touched = Vec::new();
    for &b in &removed {
        let data = &f.blocks[b];
        for &i in data.phis.iter().chain(&data.insts) {
            if let Some(v) = f.insts[i].result {
                f.values[v].def = ValueDef::Detached;
            }
        }
        touched.extend(data.term.successors().iter().copied().filter(|s| !is_removed[ix(*s)]));
    }
    f.layout = kept;
    touched.sort_unstable_by_key(|&b| ix(b));
    touched.dedup();
    for b in touched {
        let data = &f.blocks[b];
        for &phi in &data.phis {
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

/// New blocks whose places in the layout are decided as [`new_block`]
/// decides them, but written into the layout at once ([`Placements::apply`]):
/// [`new_block`] searches and shifts the layout, so a pass adding a block
/// per call it inlines, in a main graph of thousands of calls, was
/// quadratic.
#[derive(Default)]
pub struct Placements {
    /// The blocks to follow each block, in layout order.
    after: std::collections::HashMap<BlockId, Vec<BlockId>>,
}

impl Placements {
    /// A new empty block (terminated by a placeholder trap) to be placed
    /// right after `after` — before the blocks placed after `after`
    /// earlier, as [`new_block`] places it.
    pub fn new_block(&mut self, f: &mut Function, name: Option<Symbol>, after: BlockId) -> BlockId {
        let b = f.blocks.alloc(BlockData {
            name,
            phis: Default::default(),
            insts: Default::default(),
            term: Terminator::Trap(Trap::ReturnOutsideFunction),
        });
        self.after.entry(after).or_default().insert(0, b);
        b
    }

    /// Writes the new blocks into `f`'s layout. (Blocks placed after a
    /// block that is nowhere in the layout go at its end.)
    pub fn apply(mut self, f: &mut Function) {
        if self.after.is_empty() {
            return;
        }
        let old = std::mem::take(&mut f.layout);
        let mut layout = Vec::with_capacity(old.len() + self.after.values().map(Vec::len).sum::<usize>());
        let mut stack: Vec<BlockId> = Vec::new();
        let mut place = |b: BlockId, after: &mut std::collections::HashMap<BlockId, Vec<BlockId>>| {
            stack.push(b);
            while let Some(b) = stack.pop() {
                layout.push(b);
                if let Some(next) = after.remove(&b) {
                    stack.extend(next.into_iter().rev());
                }
            }
        };
        for &b in &old {
            place(b, &mut self.after);
        }
        // Anchors outside the layout, in a fixed order.
        let mut rest: Vec<BlockId> = self.after.keys().copied().collect();
        rest.sort_by_key(|b| ix(*b));
        for anchor in rest {
            if let Some(next) = self.after.remove(&anchor) {
                for b in next {
                    place(b, &mut self.after);
                }
            }
        }
        f.layout = layout;
    }
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

//! The checker's working state for one function: guarded arena lookups, the
//! cleaned layout, where each linked instruction sits, where each value is
//! defined, and the violations found so far.
//!
//! Rules:
//! - Nothing here indexes an arena without first comparing the id's raw
//!   number against the arena's length, so ids outside their arenas never
//!   panic; they are reported by the rule passes instead.
//! - Positions inside a block count phis then instructions (`0..n`); the
//!   terminator is at `n`. A definition at position `d` is available to a
//!   use at position `u` of the same block iff `d < u`.
//! - Violations are sorted by location (function-level first, then layout
//!   order, then position in the block); ties keep the order the passes
//!   reported them, so the output is deterministic.

use flowc_ir::{BlockId, Function, InstId, ResumeId, ValueId};

use crate::violation::{At, Rule, Violation};
use flowc_ir::ix;

/// One occurrence of an instruction in a block of the layout (the first one,
/// if it is linked more than once).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Linked {
    pub block: BlockId,
    /// Position in the block (phis, then instructions).
    pub pos: u32,
    pub inst: InstId,
    /// Whether it is listed among the block's phis.
    pub in_phis: bool,
}

/// Where a value is defined.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Site {
    Param(u32),
    Inst { block: BlockId, pos: u32 },
}

pub(crate) struct Checker<'f> {
    pub f: &'f Function,
    pub name: String,
    /// The layout without ids outside the arena and without repeats.
    pub layout: Vec<BlockId>,
    /// Layout position by block index.
    block_pos: Vec<Option<u32>>,
    /// Linked instructions, in layout order.
    pub linked: Vec<Linked>,
    /// Number of phis plus instructions of each block (the terminator's
    /// position), by block index.
    pub block_len: Vec<u32>,
    /// The definition site of each value, by value index.
    value_site: Vec<Option<Site>>,
    /// Whether each instruction is linked, by instruction index.
    inst_linked: Vec<Option<(BlockId, u32)>>,
    out: Vec<((u32, u32), Violation)>,
}

impl<'f> Checker<'f> {
    pub fn new(f: &'f Function) -> Checker<'f> {
        Checker {
            f,
            name: f.name.to_string(),
            layout: Vec::new(),
            block_pos: vec![None; f.blocks.len()],
            linked: Vec::new(),
            block_len: vec![0; f.blocks.len()],
            value_site: vec![None; f.values.len()],
            inst_linked: vec![None; f.insts.len()],
            out: Vec::new(),
        }
    }

    pub fn has_block(&self, b: BlockId) -> bool {
        ix(b) < self.f.blocks.len()
    }

    pub fn has_inst(&self, i: InstId) -> bool {
        ix(i) < self.f.insts.len()
    }

    pub fn has_value(&self, v: ValueId) -> bool {
        ix(v) < self.f.values.len()
    }

    pub fn has_resume(&self, r: ResumeId) -> bool {
        ix(r) < self.f.resumes.len()
    }

    /// Layout position of a block of the cleaned layout.
    pub fn layout_pos(&self, b: BlockId) -> Option<u32> {
        self.block_pos.get(ix(b)).copied().flatten()
    }

    pub fn in_layout(&self, b: BlockId) -> bool {
        self.layout_pos(b).is_some()
    }

    /// Appends `b` to the cleaned layout (caller checked it is new and in
    /// the arena).
    pub fn push_layout(&mut self, b: BlockId) {
        self.block_pos[ix(b)] = Some(self.layout.len() as u32);
        self.layout.push(b);
    }

    pub fn set_block_len(&mut self, b: BlockId, len: u32) {
        if let Some(slot) = self.block_len.get_mut(ix(b)) {
            *slot = len;
        }
    }

    /// The terminator's position in `b`.
    pub fn term_pos(&self, b: BlockId) -> u32 {
        self.block_len.get(ix(b)).copied().unwrap_or(0)
    }

    pub fn inst_site(&self, i: InstId) -> Option<(BlockId, u32)> {
        self.inst_linked.get(ix(i)).copied().flatten()
    }

    pub fn set_inst_site(&mut self, i: InstId, b: BlockId, pos: u32) {
        if let Some(slot) = self.inst_linked.get_mut(ix(i)) {
            *slot = Some((b, pos));
        }
    }

    pub fn value_site(&self, v: ValueId) -> Option<Site> {
        self.value_site.get(ix(v)).copied().flatten()
    }

    pub fn set_value_site(&mut self, v: ValueId, site: Site) {
        if let Some(slot) = self.value_site.get_mut(ix(v)) {
            *slot = Some(site);
        }
    }

    /// The instruction as printed; never panics, whatever its ids.
    pub fn inst_text(&self, i: InstId) -> String {
        if !self.has_inst(i) {
            return format!("#{} (no such instruction)", ix(i));
        }
        let data = &self.f.insts[i];
        match data.result {
            Some(v) if !self.has_value(v) => {
                // The printer would look the result's name up: print a copy
                // without the result instead.
                let mut scratch = Function::new(self.f.kind, self.f.name);
                let copy = scratch.insts.alloc(flowc_ir::InstData { kind: data.kind.clone(), result: None });
                format!("{} = {}", flowc_ir::print::value_ref(v), flowc_ir::print::inst_to_string(&scratch, copy))
            }
            _ => flowc_ir::print::inst_to_string(self.f, i),
        }
    }

    pub fn at_inst(&self, i: InstId) -> Option<At> {
        Some(At::Inst(self.inst_text(i)))
    }

    /// The terminator of a block of the arena, as a location.
    pub fn at_term(&self, b: BlockId) -> Option<At> {
        if !self.has_block(b) {
            return None;
        }
        Some(At::Terminator(flowc_ir::print::terminator_to_string(&self.f.blocks[b].term)))
    }

    /// Records a violation. `pos` is the position inside `block` (for the
    /// output order); function-level violations pass `None` for both.
    pub fn report(&mut self, block: Option<BlockId>, pos: u32, at: Option<At>, rule: Rule, message: String) {
        let key = match block.and_then(|b| self.layout_pos(b)) {
            Some(p) => (p + 1, pos),
            None => (0, 0),
        };
        let v = Violation { function: self.name.clone(), block, at, rule, message };
        self.out.push((key, v));
    }

    /// The violations in output order.
    pub fn finish(mut self) -> Vec<Violation> {
        self.out.sort_by_key(|(key, _)| *key);
        self.out.into_iter().map(|(_, v)| v).collect()
    }
}

/// A set of blocks that empties in constant time: a stamp per block of the
/// arena, where the blocks stamped with the current generation are in the
/// set. The rule passes fill one per phi (its predecessors, the inputs seen
/// so far) without hashing or allocating. Ids outside the arena are never
/// members and cannot be inserted.
pub(crate) struct BlockMarks {
    stamp: Vec<u32>,
    generation: u32,
}

impl BlockMarks {
    pub fn new(f: &Function) -> BlockMarks {
        BlockMarks { stamp: vec![0; f.blocks.len()], generation: 1 }
    }

    /// Empties the set.
    pub fn clear(&mut self) {
        self.generation += 1;
        if self.generation == u32::MAX {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
    }

    pub fn contains(&self, b: BlockId) -> bool {
        self.stamp.get(ix(b)) == Some(&self.generation)
    }

    /// Adds `b`; false if it was already in the set or is outside the arena.
    pub fn insert(&mut self, b: BlockId) -> bool {
        match self.stamp.get_mut(ix(b)) {
            Some(s) if *s != self.generation => {
                *s = self.generation;
                true
            }
            _ => false,
        }
    }
}

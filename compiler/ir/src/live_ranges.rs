//! Liveness stored sparsely, for functions of any size: each reachable block's
//! live-in and live-out values as sorted lists, computed value by value.
//!
//! [`crate::liveness::Liveness`] keeps one bit set of all values per
//! block, which is quadratic in the function's size (14,000 blocks times
//! 60,000 values is 100 MB). Here every use walks back through the
//! predecessors to the value's definition, marking the blocks it passes
//! live-in and their predecessors live-out (Appel's "path exploration"),
//! so the cost is the total length of the live ranges, measured in
//! blocks: near-linear for code whose values live briefly.
//!
//! Uses are those of [`crate::liveness`]: operands of instructions and
//! terminators, the values resume records keep, and a phi's input for
//! predecessor `P` as a use at the end of `P`. A phi's result is defined at
//! the start of its block and is not live-in there; nor are parameters in
//! the entry block.
//!
//! Only the values `wanted` accepts are tracked (the code generator asks
//! for those the collector must see, and those its loop entries test);
//! lists hold them in increasing
//! order of their index.

use crate::cfg::Cfg;
use crate::function::{BlockId, Function, ValueId};
use crate::inst::InstKind;
use crate::ix;

/// Each reachable block's live-in and live-out values (of those wanted).
pub struct LiveRanges {
    live_in: Vec<Vec<ValueId>>,
    live_out: Vec<Vec<ValueId>>,
}

/// Where a value is used, for the walk: inside a block (live-in there
/// unless defined there) or at the end of a block (a phi input: live-out).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Use {
    value: u32,
    block: u32,
    at_end: bool,
}

impl LiveRanges {
    pub fn new(f: &Function, cfg: &Cfg, wanted: impl Fn(ValueId) -> bool) -> LiveRanges {
        let blocks = f.blocks.len();
        let mut def_block: Vec<u32> = vec![u32::MAX; f.values.len()];
        for &p in &f.params {
            def_block[ix(p)] = ix(f.entry) as u32;
        }
        let mut uses: Vec<Use> = Vec::new();
        let use_in = |uses: &mut Vec<Use>, v: ValueId, b: BlockId, at_end: bool| {
            if wanted(v) {
                uses.push(Use { value: ix(v) as u32, block: ix(b) as u32, at_end });
            }
        };
        for &b in &cfg.rpo {
            let data = &f.blocks[b];
            for &i in data.phis.iter().chain(&data.insts) {
                let inst = &f.insts[i];
                if let Some(r) = inst.result {
                    def_block[ix(r)] = ix(b) as u32;
                }
                match &inst.kind {
                    InstKind::Phi(inputs) => {
                        for (from, o) in inputs {
                            if let Some(v) = o.as_value() {
                                use_in(&mut uses, v, *from, true);
                            }
                        }
                    }
                    kind => {
                        for v in kind.operands().filter_map(|o| o.as_value()) {
                            use_in(&mut uses, v, b, false);
                        }
                        if let InstKind::Guard { resume, .. } = kind {
                            for v in f.resumes[*resume].operands().filter_map(|o| o.as_value()) {
                                use_in(&mut uses, v, b, false);
                            }
                        }
                    }
                }
            }
            for v in data.term.operands().filter_map(|o| o.as_value()) {
                use_in(&mut uses, v, b, false);
            }
            if let Some(r) = data.term.resume() {
                for v in f.resumes[r].operands().filter_map(|o| o.as_value()) {
                    use_in(&mut uses, v, b, false);
                }
            }
        }
        uses.sort_unstable();
        uses.dedup();
        let mut marks = Marks {
            live_in: vec![Vec::new(); blocks],
            live_out: vec![Vec::new(); blocks],
            in_mark: vec![u32::MAX; blocks],
            out_mark: vec![u32::MAX; blocks],
        };
        let mut work: Vec<BlockId> = Vec::new();
        let ids: Vec<ValueId> = f.values.iter().map(|(v, _)| v).collect();
        let blocks_by_index: Vec<BlockId> = f.blocks.iter().map(|(b, _)| b).collect();
        for u in &uses {
            let value = ids[u.value as usize];
            let def = def_block[u.value as usize];
            if def == u32::MAX {
                // Not defined in a reachable block (the checker rejects
                // this; nothing to track).
                continue;
            }
            let block = blocks_by_index[u.block as usize];
            if marks.live(u.block as usize, (value, u.value), u.at_end, def) {
                work.push(block);
            }
            while let Some(b) = work.pop() {
                for &pred in cfg.preds(b) {
                    if cfg.is_reachable(pred) && marks.live(ix(pred), (value, u.value), true, def) {
                        work.push(pred);
                    }
                }
            }
        }
        let Marks { live_in, live_out, .. } = marks;
        LiveRanges { live_in, live_out }
    }

    /// The tracked values live at the start of `b` (not its phis).
    pub fn live_in(&self, b: BlockId) -> &[ValueId] {
        self.live_in.get(ix(b)).map_or(&[], |v| v)
    }

    /// The tracked values live at the end of `b` (its successors' phi
    /// inputs from `b` included).
    pub fn live_out(&self, b: BlockId) -> &[ValueId] {
        self.live_out.get(ix(b)).map_or(&[], |v| v)
    }

    /// Whether `v` is live at the end of `b`.
    pub fn is_live_out(&self, b: BlockId, v: ValueId) -> bool {
        self.live_out(b).binary_search_by_key(&ix(v), |w| ix(*w)).is_ok()
    }
}

/// The sets being built, and per block the last value marked live-in /
/// live-out there (values are walked one at a time, in increasing order,
/// so a mark is a set membership test).
struct Marks {
    live_in: Vec<Vec<ValueId>>,
    live_out: Vec<Vec<ValueId>>,
    in_mark: Vec<u32>,
    out_mark: Vec<u32>,
}

impl Marks {
    /// Marks `value` (its index `v`, defined in block index `def`) live at
    /// the end of block index `b` if `at_end`, and live into `b` unless `b`
    /// defines it: whether it became live-in there for the first time, so
    /// the walk goes on to its predecessors.
    fn live(&mut self, b: usize, (value, v): (ValueId, u32), at_end: bool, def: u32) -> bool {
        if at_end && self.out_mark[b] != v {
            self.out_mark[b] = v;
            self.live_out[b].push(value);
        }
        if b as u32 == def || self.in_mark[b] == v {
            return false;
        }
        self.in_mark[b] = v;
        self.live_in[b].push(value);
        true
    }
}

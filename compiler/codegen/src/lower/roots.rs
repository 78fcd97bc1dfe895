//! The collector's roots in huge functions (`flowc_ir::HUGE_INSTS`),
//! found without Cranelift's safepoint spiller.
//!
//! Elsewhere every IR value that may point into the heap is declared to
//! Cranelift as needing a stack map, and cranelift-frontend's spiller
//! finds, on the Cranelift IR, which of them are live across each call,
//! stores them to stack slots and reloads every later use. On a huge
//! function that IR is 30 times the size of ours and the spiller's
//! liveness took a third of code generation. Here the same facts come from
//! the IR itself ([`flowc_ir::live_ranges`], sparse, near-linear):
//!
//! - every tracked value (one that may point into the heap) that is used
//!   after its definition gets a word of one root area in the frame and is
//!   stored there once, where it is defined; uses keep reading the
//!   Cranelift value (the collector marks and never moves, so the copy in
//!   the area only has to keep the object alive);
//! - words are shared by values that are never live at once: blocks in
//!   reverse postorder, instructions in order, a definition takes a word
//!   that no value live there holds. In SSA form two values that interfere
//!   are live at the later one's definition, whose dominating partner was
//!   given its word first, so no two values live at once share a word;
//! - every call made while lowering an instruction lists, as its stack
//!   map, the words of the values live after that instruction and of its
//!   operands (at a block's start, those live into it and its phis; at its
//!   terminator, those live out of it and the terminator's operands).
//!   A listed word always holds its value: the value is live there, so its
//!   definition, which stored it, came first on every path.

use cranelift_codegen::ir::{self, StackSlot, StackSlotData, StackSlotKind, UserStackMapEntry};
use flowc_ir::cfg::Cfg;
use flowc_ir::live_ranges::LiveRanges;
use flowc_ir::{BlockId, Function, InstKind, Operand, ValueId};

fn vix(v: ValueId) -> usize {
    v.into_raw().into_u32() as usize
}

fn bix(b: BlockId) -> usize {
    b.into_raw().into_u32() as usize
}

/// Where in a block calls are made: its start (fuel counting), its `k`-th
/// instruction (not counting phis), or its terminator.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum At {
    Start,
    Inst(usize),
    Term,
}

/// The root words of one huge function and the stack map of every place
/// that makes calls.
pub struct Roots {
    /// The frame's root area, one word per [`Roots::words`].
    area: Option<StackSlot>,
    /// Each tracked value's word (by raw value index; `u32::MAX`: none).
    word: Vec<u32>,
    /// The words listed at each place: per block (by raw index), the
    /// index in `spans` of its start's list, followed by one per
    /// instruction and one for the terminator.
    first_span: Vec<u32>,
    spans: Vec<(u32, u32)>,
    lists: Vec<u32>,
}

/// A set of small integers with constant-time insert, remove and clear
/// (Briggs and Torczon's sparse set).
struct SparseSet {
    dense: Vec<u32>,
    sparse: Vec<u32>,
}

impl SparseSet {
    fn new(n: usize) -> SparseSet {
        SparseSet { dense: Vec::new(), sparse: vec![0; n] }
    }
    fn contains(&self, x: usize) -> bool {
        let k = self.sparse[x] as usize;
        k < self.dense.len() && self.dense[k] as usize == x
    }
    fn insert(&mut self, x: usize) {
        if !self.contains(x) {
            self.sparse[x] = self.dense.len() as u32;
            self.dense.push(x as u32);
        }
    }
    fn remove(&mut self, x: usize) {
        if self.contains(x) {
            let k = self.sparse[x] as usize;
            let last = *self.dense.last().expect("contains an element");
            self.dense[k] = last;
            self.sparse[last as usize] = k as u32;
            self.dense.pop();
        }
    }
    fn clear(&mut self) {
        self.dense.clear();
    }
}

impl Roots {
    /// The roots of `f`, whose values `tracked` accepts may point into the
    /// heap; the root area is made in `func`.
    pub fn new(f: &Function, cfg: &Cfg, tracked: impl Fn(ValueId) -> bool, func: &mut ir::Function) -> Roots {
        let live = LiveRanges::new(f, cfg, &tracked);
        let values = f.values.len();
        let mut word = vec![u32::MAX; values];
        let mut first_span = vec![u32::MAX; f.blocks.len()];
        let mut spans = Vec::new();
        let mut lists = Vec::new();
        // Scratch, reused block after block.
        let mut set = SparseSet::new(values);
        let mut in_use: Vec<bool> = Vec::new();
        let mut after: Vec<Vec<u32>> = Vec::new();
        let mut dies: Vec<Vec<ValueId>> = Vec::new();
        let mut result_used: Vec<bool> = Vec::new();
        let take = |in_use: &mut Vec<bool>| -> u32 {
            let k = in_use.iter().position(|used| !used).unwrap_or_else(|| {
                in_use.push(false);
                in_use.len() - 1
            });
            in_use[k] = true;
            k as u32
        };
        let operands = |i: flowc_ir::InstId| {
            let inst = &f.insts[i];
            let resume = match &inst.kind {
                InstKind::Guard { resume, .. } => Some(*resume),
                _ => None,
            };
            inst.kind
                .operands()
                .chain(resume.into_iter().flat_map(|r| f.resumes[r].operands()))
                .filter_map(Operand::as_value)
        };
        for &b in &cfg.rpo {
            let data = &f.blocks[b];
            let n = data.insts.len();
            // Back over the block: what is live after each instruction,
            // which operands die there, which results are used.
            set.clear();
            for &v in live.live_out(b) {
                set.insert(vix(v));
            }
            let term_uses: Vec<ValueId> = data
                .term
                .operands()
                .chain(data.term.resume().into_iter().flat_map(|r| f.resumes[r].operands()))
                .filter_map(Operand::as_value)
                .filter(|v| tracked(*v))
                .collect();
            let mut term_list: Vec<u32> = set.dense.clone();
            for &v in &term_uses {
                if !set.contains(vix(v)) {
                    term_list.push(vix(v) as u32);
                }
                set.insert(vix(v));
            }
            after.resize_with(n, Vec::new);
            dies.resize_with(n, Vec::new);
            result_used.resize(n, false);
            for k in (0..n).rev() {
                let i = data.insts[k];
                // Not the result itself: its word is written only once the
                // instruction has made its calls.
                result_used[k] = false;
                if let Some(r) = f.insts[i].result {
                    result_used[k] = set.contains(vix(r));
                    set.remove(vix(r));
                }
                after[k].clear();
                after[k].extend_from_slice(&set.dense);
                dies[k].clear();
                for v in operands(i).filter(|v| tracked(*v)) {
                    if !set.contains(vix(v)) {
                        set.insert(vix(v));
                        dies[k].push(v);
                        after[k].push(vix(v) as u32);
                    }
                }
            }
            // `set` now holds what is live after the phis.
            let start_list: Vec<u32> = set.dense.clone();
            // Forward: words for the definitions.
            in_use.iter_mut().for_each(|u| *u = false);
            for v in live.live_in(b) {
                let w = word[vix(*v)];
                if w != u32::MAX {
                    in_use[w as usize] = true;
                }
            }
            let entry_params = if b == f.entry { &f.params[..] } else { &[] };
            let phi_results = data.phis.iter().filter_map(|&p| f.insts[p].result);
            for r in entry_params.iter().copied().chain(phi_results) {
                if tracked(r) && set.contains(vix(r)) {
                    word[vix(r)] = take(&mut in_use);
                }
            }
            for k in 0..n {
                if let Some(r) = f.insts[data.insts[k]].result.filter(|_| result_used[k]) {
                    if tracked(r) {
                        word[vix(r)] = take(&mut in_use);
                    }
                }
                for v in &dies[k] {
                    let w = word[vix(*v)];
                    if w != u32::MAX {
                        in_use[w as usize] = false;
                    }
                }
            }
            // The lists, as words.
            first_span[bix(b)] = spans.len() as u32;
            let mut push = |values: &[u32]| {
                let from = lists.len() as u32;
                lists.extend(values.iter().map(|&v| word[v as usize]).filter(|&w| w != u32::MAX));
                spans.push((from, lists.len() as u32));
            };
            push(&start_list);
            for list in &after[..n] {
                push(list);
            }
            push(&term_list);
        }
        let words = word.iter().filter(|&&w| w != u32::MAX).map(|&w| w + 1).max().unwrap_or(0);
        let area = (words > 0)
            .then(|| func.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8 * words, 3)));
        Roots { area, word, first_span, spans, lists }
    }

    /// Where `v` is kept for the collector (the root area and the byte
    /// offset in it), if it is tracked and used after its definition.
    pub fn home(&self, v: ValueId) -> Option<(StackSlot, i32)> {
        let w = *self.word.get(vix(v))?;
        (w != u32::MAX).then(|| (self.area.expect("a word was given out"), 8 * w as i32))
    }

    /// The stack map of the calls made at `at` in block `b` of `f`.
    pub fn entries(&self, f: &Function, b: BlockId, at: At) -> impl Iterator<Item = UserStackMapEntry> + '_ {
        let first = self.first_span[bix(b)] as usize;
        let k = match at {
            At::Start => 0,
            At::Inst(k) => 1 + k,
            At::Term => 1 + f.blocks[b].insts.len(),
        };
        let (from, to) = self.spans[first + k];
        let area = self.area;
        self.lists[from as usize..to as usize].iter().map(move |&w| UserStackMapEntry {
            ty: ir::types::I64,
            slot: area.expect("a listed word is in the area"),
            offset: 8 * w,
        })
    }
}

//! Split huge functions: the shared frame of their regions, and the
//! driver that holds it.
//!
//! A huge function (`flowc_ir::HUGE_INSTS`) is cut into regions
//! ([`flowc_ir::regions`]), each compiled as a Cranelift function of its
//! own, so that Cranelift's memory and time per function stay bounded
//! (whole, a function's Cranelift structures are several times its IR).
//! The function itself becomes a small *driver*: it makes the frame, a
//! stack area of words, stores its parameters there and calls the region
//! of the entry; regions continue in one another by tail calls
//! ([`region_signature`]: the context, the frame's address and the number
//! of the entry to start at), the last one returns the function's result
//! to the driver, which returns it.
//!
//! Values live in Cranelift values within a region, where their
//! definition dominates their use in the region's own graph
//! ([`Regions::direct`]); any other use reads the value's word of the
//! frame. Words go to:
//! - the values used somewhere not directly: parameters, values used in
//!   another region or past a re-entry of their own, and the phis of
//!   blocks entered from another region (the edge stores the phi's input
//!   in the phi's word before its tail call; the region's entry reads it);
//! - every value that may point into the heap and is live across an
//!   instruction (where calls happen): the frame is the collector's view
//!   of them. The driver's call lists every word of the frame as a root:
//!   a word holds zero (the driver clears the frame), or a value stored
//!   at its definition. Words of dead values keep their last value alive
//!   until overwritten, which bounds what is kept by the frame's size.
//!   One exception: a region does not store the values whose word is
//!   there only for the collector (no other region reads them, no entry
//!   brings them in: [`Frame::for_collector_only`]) where they are
//!   defined, but before each call they live across
//!   ([`Frame::across_inst`]): the code keeps
//!   them in registers, and the collector, which runs only inside calls,
//!   finds them in the frame. Cells do not move, so nothing is read back
//!   after the call. (Cranelift's own stack maps,
//!   `declare_value_needs_stack_map`, were used here before: made for
//!   collectors that move, they store such a value in a slot after its
//!   definition and read it from there at every use, on the hot path
//!   too.) Regions' calls list no roots of their own.
//!
//! Words are shared by values never live at once, as a register
//! allocator would share registers: blocks in reverse postorder,
//! instructions in order, a definition takes a word that no value live
//! there holds ([`flowc_ir::live_ranges`], sparse). In SSA form two values
//! that interfere are live at the later one's definition, where its
//! dominating partner already has its word, so a word is never
//! overwritten while its value is live: where a value is used, its word
//! holds it. A phi's word, stored at the end of a predecessor in another
//! region, is no word of a value live into the phi's block.

use bitvec::vec::BitVec;
use cranelift_codegen::ir::{
    types, AbiParam, InstBuilder, Signature, StackSlot, StackSlotData, StackSlotKind, UserStackMapEntry,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::FuncId;

use flowc_ir::cfg::Cfg;
use flowc_ir::live_ranges::LiveRanges;
use flowc_ir::regions::Regions;
use flowc_ir::{Function, InstKind, Operand, ValueId};

use super::{signature_of, Building};
use crate::runtime::RuntimeFn;
use flowc_ir::ix;

const NONE: u32 = u32::MAX;

/// The regions of a split function and its frame.
pub struct Split {
    pub regions: Regions,
    pub frame: Frame,
    /// The function of each region, by region.
    pub funcs: Vec<FuncId>,
    /// Tier-0 code ([`crate::tiers`]): what its loop headers count.
    pub tier: Option<Tier0>,
    /// Tier-0 code of a function tiered region by region: what its
    /// regions count, and where they find their optimized tiers.
    pub by_region: Option<ByRegion>,
    /// The split function's plan ([`crate::plan::Shape::Regions`]).
    pub plan: crate::plan::Plan,
    /// [`header_numbers`] of the counted headers.
    pub header_numbers: rustc_hash::FxHashMap<flowc_ir::BlockId, usize>,
}

impl Split {
    /// The number of `blk` among the hot loop headers its tier-0 code
    /// counts (of [`Split::tier`] or [`Split::by_region`]), if it is one.
    /// Asked at every block a region lowers: found by hash, since a
    /// residual program's main graph has thousands of loops.
    pub fn header_number(&self, blk: flowc_ir::BlockId) -> Option<usize> {
        self.header_numbers.get(&blk).copied()
    }
}

/// The number of each header of `headers`, by header (the first, if one
/// appears twice).
pub fn header_numbers(headers: &[flowc_ir::BlockId]) -> rustc_hash::FxHashMap<flowc_ir::BlockId, usize> {
    let mut numbers = rustc_hash::FxHashMap::default();
    for (k, &h) in headers.iter().enumerate() {
        numbers.entry(h).or_insert(k);
    }
    numbers
}

/// What the tier-0 code of a function counts: its counter's address, its
/// number in the program, and its hot loop headers, each an entry of its
/// region whose number among these is its on-stack replacement entry.
pub struct Tier0 {
    pub counter: u64,
    pub index: usize,
    pub headers: Vec<flowc_ir::BlockId>,
}

/// What the tier-0 code of a function tiered region by region counts
/// ([`crate::tiers`]): its number in the program, the addresses of its
/// regions' slots and counters (a word per region, by region:
/// [`crate::tiers::RegionTables`]), and its hot loop headers, each an
/// entry of its region.
pub struct ByRegion {
    pub index: usize,
    pub slots: u64,
    pub counters: u64,
    pub headers: Vec<flowc_ir::BlockId>,
}

/// The words of the frame of a split function.
pub struct Frame {
    /// Each value's word (by raw index; `NONE`: it has none).
    word: Vec<u32>,
    /// Which values are stored in their word where they are defined: all
    /// but the phis of entries that are neither read elsewhere nor seen by
    /// the collector (their word carries only what edges from other
    /// regions pass in, which those edges store themselves).
    stored: BitVec,
    /// Which of those are there only for the collector: values no other
    /// region reads and no entry of a region brings in, stored before the
    /// calls they live across rather than where they are defined
    /// ([`Frame::for_collector_only`]).
    collector_only: BitVec,
    /// Which of those each call must store ([`Frame::across_inst`]).
    across: Across,
    /// How many words the frame has.
    pub words: u32,
}

/// The collector-only values ([`Frame::for_collector_only`]) live after
/// each instruction other than the one it defines, and at the end of each
/// block: what a call made inside the instruction, or in the block's
/// terminator, must leave in the frame for the collector. Ranges into one
/// list, by raw instruction and block index, each in the order the walk
/// met its values (the same for the same function).
struct Across {
    values: Vec<ValueId>,
    inst: Vec<(u32, u32)>,
    term: Vec<(u32, u32)>,
}

impl Frame {
    /// The frame of `f` cut into `regions` (`None`: a function compiled
    /// whole, whose words hold only what the collector must see);
    /// `pointer` says which values may point into the heap.
    pub fn new(f: &Function, cfg: &Cfg, regions: Option<&Regions>, pointer: impl Fn(ValueId) -> bool) -> Frame {
        let (read, entry_phis) = match regions {
            Some(regions) => shared_values(f, cfg, regions),
            None => (BitVec::repeat(false, f.values.len()), BitVec::repeat(false, f.values.len())),
        };
        let tracked = |v: ValueId| read[ix(v)] || entry_phis[ix(v)] || pointer(v);
        let mut stored: BitVec = BitVec::repeat(false, f.values.len());
        let mut collector_only: BitVec = BitVec::repeat(false, f.values.len());
        let live = LiveRanges::new(f, cfg, tracked);
        // A value the collector must see needs a word only if a call may
        // happen while it is live: calls happen inside instructions, so
        // only if it lives across one (an operand that dies at a call is
        // the callee's to keep, as in Cranelift's own stack maps).
        let crosses = crossing(f, cfg, &live, &tracked);
        let wanted = |v: ValueId| read[ix(v)] || entry_phis[ix(v)] || (pointer(v) && crosses[ix(v)]);
        let values = f.values.len();
        let mut word = vec![NONE; values];
        // Scratch, reused block after block: what is live (a sparse set),
        // the words in use, and per instruction whether its result is
        // used and which operands die there.
        let mut live_now = SparseSet::new(values);
        // The words in use, a bit each: the lowest free word is found a
        // machine word (64 of them) at a time, and clearing it per block
        // costs words / 64.
        let mut in_use: BitVec = BitVec::new();
        let mut dies: Vec<Vec<ValueId>> = Vec::new();
        let mut result_used: Vec<bool> = Vec::new();
        let take = |in_use: &mut BitVec| -> u32 {
            let k = in_use.first_zero().unwrap_or_else(|| {
                in_use.push(false);
                in_use.len() - 1
            });
            in_use.set(k, true);
            k as u32
        };
        for &b in &cfg.rpo {
            let data = &f.blocks[b];
            let n = data.insts.len();
            // Back over the block: which results are used, which operands
            // die where.
            live_now.clear();
            for &v in live.live_out(b) {
                live_now.insert(ix(v));
            }
            for v in term_uses(f, b).filter(|v| tracked(*v)) {
                live_now.insert(ix(v));
            }
            dies.resize_with(n, Vec::new);
            result_used.resize(n, false);
            for k in (0..n).rev() {
                let i = data.insts[k];
                result_used[k] = false;
                if let Some(r) = f.insts[i].result {
                    result_used[k] = live_now.contains(ix(r));
                    live_now.remove(ix(r));
                }
                dies[k].clear();
                for v in inst_uses(f, i).filter(|v| tracked(*v)) {
                    if !live_now.contains(ix(v)) {
                        live_now.insert(ix(v));
                        dies[k].push(v);
                    }
                }
            }
            // Forward: words for the definitions. (`live_now` holds what
            // is live after the phis.)
            in_use.fill(false);
            for v in live.live_in(b) {
                if word[ix(*v)] != NONE {
                    in_use.set(word[ix(*v)] as usize, true);
                }
            }
            let params = if b == f.entry { &f.params[..] } else { &[] };
            let phis = data.phis.iter().filter_map(|&p| f.insts[p].result);
            for r in params.iter().copied().chain(phis) {
                if wanted(r) && live_now.contains(ix(r)) {
                    word[ix(r)] = take(&mut in_use);
                }
            }
            for k in 0..n {
                if let Some(r) = f.insts[data.insts[k]].result.filter(|&r| result_used[k] && wanted(r)) {
                    word[ix(r)] = take(&mut in_use);
                }
                for v in &dies[k] {
                    if word[ix(*v)] != NONE {
                        in_use.set(word[ix(*v)] as usize, false);
                    }
                }
            }
        }
        for (k, &w) in word.iter().enumerate() {
            if w != NONE {
                let v = ValueId::from_raw(la_arena::RawIdx::from_u32(k as u32));
                stored.set(k, read[k] || pointer(v));
                collector_only.set(k, !read[k] && !entry_phis[k] && pointer(v));
            }
        }
        let words = word.iter().filter(|&&w| w != NONE).map(|&w| w + 1).max().unwrap_or(0);
        let across = across(f, cfg, &live, &collector_only);
        Frame { word, stored, collector_only, across, words }
    }

    /// The byte offset of `v`'s word in the frame, if it has one.
    pub fn offset(&self, v: ValueId) -> Option<i32> {
        let w = *self.word.get(ix(v))?;
        (w != NONE).then_some(8 * w as i32)
    }

    /// The byte offset of `v`'s word if its definition stores it there.
    pub fn stored_at(&self, v: ValueId) -> Option<i32> {
        self.offset(v).filter(|_| self.stored[ix(v)])
    }

    /// Whether `v`'s word is there only for the collector to see it: `v`
    /// may point into the heap and lives across an instruction, but only
    /// its own region reads it, directly, and no entry brings it in. A
    /// region stores such a value in its word only before the calls it
    /// lives across ([`Frame::across_inst`]), not at its definition.
    /// (Stored at its definition, public mandelbrot.b's built residual ran
    /// 10% slower than with Cranelift's stack maps, 3.77 -> 4.14 s,
    /// 2026-12-04; those stored it in a slot after its definition and read
    /// it back at every use, and the stores at calls run it 5% faster than
    /// they did, 2026-12-05.)
    pub fn for_collector_only(&self, v: ValueId) -> bool {
        self.collector_only.get(ix(v)).is_some_and(|b| *b)
    }

    /// The collector-only values live across instruction `i` (after it,
    /// and not its result): a call made inside `i` stores them in their
    /// words first, as the collector, which may run during the call,
    /// finds them only there.
    pub fn across_inst(&self, i: flowc_ir::InstId) -> &[ValueId] {
        let a = &self.across;
        a.inst.get(ix(i)).map_or(&[], |&(s, n)| &a.values[s as usize..(s + n) as usize])
    }

    /// The collector-only values live at the end of block `b`: those a
    /// call made in its terminator stores.
    pub fn across_term(&self, b: flowc_ir::BlockId) -> &[ValueId] {
        let a = &self.across;
        a.term.get(ix(b)).map_or(&[], |&(s, n)| &a.values[s as usize..(s + n) as usize])
    }
}

/// [`Across`] for `f`: one walk back over each block from what is live at
/// its end, as [`crossing`] walks, keeping only the collector-only values
/// (`only`; the liveness of one value does not depend on the others').
fn across(f: &Function, cfg: &Cfg, live: &LiveRanges, collector_only: &BitVec) -> Across {
    if collector_only.not_any() {
        // Nothing to store at any call (the accessors read missing ranges
        // as empty).
        return Across { values: Vec::new(), inst: Vec::new(), term: Vec::new() };
    }
    let mut a = Across { values: Vec::new(), inst: vec![(0, 0); f.insts.len()], term: vec![(0, 0); f.blocks.len()] };
    let mut live_now = SparseSet::new(f.values.len());
    let only = |v: &ValueId| collector_only[ix(*v)];
    let list = |a: &mut Across, live_now: &SparseSet| -> (u32, u32) {
        let start = a.values.len();
        a.values.extend(live_now.dense.iter().map(|&v| ValueId::from_raw(la_arena::RawIdx::from_u32(v))));
        (start as u32, (a.values.len() - start) as u32)
    };
    for &b in &cfg.rpo {
        live_now.clear();
        for v in live.live_out(b).iter().filter(|v| only(v)) {
            live_now.insert(ix(*v));
        }
        a.term[ix(b)] = list(&mut a, &live_now);
        for v in term_uses(f, b).filter(only) {
            live_now.insert(ix(v));
        }
        for &i in f.blocks[b].insts.iter().rev() {
            if let Some(r) = f.insts[i].result {
                live_now.remove(ix(r));
            }
            a.inst[ix(i)] = list(&mut a, &live_now);
            for v in inst_uses(f, i).filter(only) {
                live_now.insert(ix(v));
            }
        }
    }
    a
}

/// Which `tracked` values (by raw index) are live after some instruction
/// other than their definition. One walk back over each block counts the
/// instructions passed: a value crosses one if more were passed between
/// where it became live (the block's end, or the instruction that reads
/// it last) and its definition (or the block's start).
fn crossing(f: &Function, cfg: &Cfg, live: &LiveRanges, tracked: &impl Fn(ValueId) -> bool) -> BitVec {
    let mut crosses: BitVec = BitVec::repeat(false, f.values.len());
    let mut live_now = SparseSet::new(f.values.len());
    // How many instructions had been passed when each live value became live.
    let mut since = vec![0u32; f.values.len()];
    for &b in &cfg.rpo {
        let data = &f.blocks[b];
        live_now.clear();
        for v in live.live_out(b).iter().copied().chain(term_uses(f, b).filter(|v| tracked(*v))) {
            live_now.insert(ix(v));
            since[ix(v)] = 0;
        }
        let mut passed = 0;
        for &i in data.insts.iter().rev() {
            if let Some(r) = f.insts[i].result.filter(|r| live_now.contains(ix(*r))) {
                if passed > since[ix(r)] {
                    crosses.set(ix(r), true);
                }
                live_now.remove(ix(r));
            }
            passed += 1;
            for v in inst_uses(f, i).filter(|v| tracked(*v)) {
                if live_now.contains(ix(v)) {
                    // Live after `i`, which reads it (unless `i` reads it
                    // twice and it became live at `i`).
                    if since[ix(v)] != passed {
                        crosses.set(ix(v), true);
                    }
                } else {
                    live_now.insert(ix(v));
                    since[ix(v)] = passed;
                }
            }
        }
        for &v in &live_now.dense {
            if passed > since[v as usize] {
                crosses.set(v as usize, true);
            }
        }
    }
    crosses
}

/// The operands of instruction `i` (and of its resume record).
fn inst_uses(f: &Function, i: flowc_ir::InstId) -> impl Iterator<Item = ValueId> + '_ {
    let inst = &f.insts[i];
    let resume = match &inst.kind {
        InstKind::Guard { resume, .. } => Some(*resume),
        _ => None,
    };
    inst.kind.operands().chain(resume.into_iter().flat_map(|r| f.resumes[r].operands())).filter_map(Operand::as_value)
}

/// The operands of block `b`'s terminator (and of its resume record).
fn term_uses(f: &Function, b: flowc_ir::BlockId) -> impl Iterator<Item = ValueId> + '_ {
    let term = &f.blocks[b].term;
    term.operands().chain(term.resume().into_iter().flat_map(|r| f.resumes[r].operands())).filter_map(Operand::as_value)
}

/// The values read from the frame — the parameters and the values some
/// use of which is not direct ([`Regions::direct`]) — and the phis of
/// blocks entered from another region.
fn shared_values(f: &Function, cfg: &Cfg, regions: &Regions) -> (BitVec, BitVec) {
    let mut shared: BitVec = BitVec::repeat(false, f.values.len());
    let mut entry_phis: BitVec = BitVec::repeat(false, f.values.len());
    for &p in &f.params {
        shared.set(ix(p), true);
    }
    for &b in &cfg.rpo {
        let data = &f.blocks[b];
        let first = regions.first_piece(b).expect("a reachable block");
        if regions.entry_number(first).is_some() {
            for r in data.phis.iter().filter_map(|&p| f.insts[p].result) {
                entry_phis.set(ix(r), true);
            }
        }
        for (k, &i) in data.insts.iter().enumerate() {
            let at = regions.piece_at(b, k);
            for v in inst_uses(f, i) {
                if !regions.direct(v, at) {
                    shared.set(ix(v), true);
                }
            }
        }
        let last = regions.last_piece(b);
        for v in term_uses(f, b) {
            if !regions.direct(v, last) {
                shared.set(ix(v), true);
            }
        }
        for &s in cfg.succs(b) {
            for &phi in &f.blocks[s].phis {
                let InstKind::Phi(inputs) = &f.insts[phi].kind else { continue };
                for (_, o) in inputs.iter().filter(|(p, _)| *p == b) {
                    if let Some(v) = o.as_value().filter(|&v| !regions.direct(v, last)) {
                        shared.set(ix(v), true);
                    }
                }
            }
        }
    }
    (shared, entry_phis)
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

/// The roots of a function compiled whole: a frame in its own stack
/// frame whose words keep the values that may point into the heap and
/// live across an instruction, words shared by values never live at once
/// ([`Frame`] without regions). A value is
/// stored in its word before each call it lives across
/// ([`Frame::across_inst`]), not where it is defined, and uses read the
/// Cranelift value: a hot path that makes no call stores nothing. The
/// function clears the words on entry and every call it makes lists every
/// word in its stack map, so what a word holds — zero, a value live now,
/// or one dead but not yet overwritten — stays alive while the function
/// runs: the collector never frees what a word points to, and a copy of
/// the code that knows a value is small need not store it (the optimistic
/// copy). The collector does not move objects, so the registers holding
/// a value stay valid across a collection and the value is never
/// reloaded from its word (Cranelift's own safepoint spiller reloads a
/// value at every use after a safepoint, for collectors that move: it
/// made four instructions in five of a big function loads and their
/// addresses). A value that dies at an instruction has no word: the
/// lowering of an instruction reads no IR value after a runtime call
/// that may collect unless the value lives past the instruction (its
/// operands go to the call, which keeps them).
pub struct Roots {
    frame: Frame,
    slot: cranelift_codegen::ir::StackSlot,
}

impl Roots {
    /// The roots of `f` (none when no value may point into the heap),
    /// cleared at the current position of `b` (the entry).
    pub fn new(b: &mut FunctionBuilder, f: &Function, cfg: &Cfg, small: &crate::small::Small) -> Option<Roots> {
        let frame = Frame::new(f, cfg, None, |v| !small.operand(&Operand::Value(v)));
        if frame.words == 0 {
            return None;
        }
        let slot = cleared_words(b, frame.words);
        Some(Roots { frame, slot })
    }

    /// Stores `value`, the Cranelift value of `v`, in `v`'s word if it has
    /// one.
    pub fn store(&self, b: &mut FunctionBuilder, v: ValueId, value: cranelift_codegen::ir::Value) {
        if let Some(offset) = self.frame.offset(v) {
            b.ins().stack_store(types::I64, value, self.slot, offset);
        }
    }

    /// The words' frame: which values live across which instruction.
    pub fn frame(&self) -> &Frame {
        &self.frame
    }

    /// Lists every word in the stack map of `call`.
    pub fn map(&self, func: &mut cranelift_codegen::ir::Function, call: cranelift_codegen::ir::Inst) {
        map_words(func, call, self.slot, self.frame.words);
    }
}

/// A stack slot of `words` words (at least one), cleared at the current
/// position of `b`: a frame's words, which the collector may read before
/// anything is stored in them.
fn cleared_words(b: &mut FunctionBuilder, words: u32) -> StackSlot {
    let words = words.max(1);
    let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8 * words, 3));
    let zero = b.ins().iconst(types::I64, 0);
    for w in 0..words {
        b.ins().stack_store(types::I64, zero, slot, 8 * w as i32);
    }
    slot
}

/// The call count of a tier-0 driver (see [`lower_driver`]): counts down
/// the word at `counter`; at zero, calls `flowc_rt_tier_up` for function
/// `index` (a safepoint: the frame, holding the parameters, is mapped),
/// and if that gives code, calls it with the parameters (read back from
/// the frame) and returns its result. Continues in a new current block.
fn count_call(
    env: &mut Building,
    f: &Function,
    split: &Split,
    b: &mut FunctionBuilder,
    (slot, context): (StackSlot, cranelift_codegen::ir::Value),
    counter: u64,
    index: usize,
) {
    let left = count_down(b, counter);
    let (hot, optimized, go) = (b.create_block(), b.create_block(), b.create_block());
    b.set_cold_block(hot);
    b.set_cold_block(optimized);
    b.ins().brif(left, go, &[], hot, &[]);
    b.switch_to_block(hot);
    super::store_frame(b, context);
    let tier_up = env.module.declare_func_in_func(env.runtime[RuntimeFn::TierUp], b.func);
    let function = b.ins().iconst(types::I64, index as i64);
    let entry = b.ins().iconst(types::I64, 0);
    let call = b.ins().call(tier_up, &[context, function, entry]);
    map_words(b.func, call, slot, split.frame.words);
    let code = b.inst_results(call)[0];
    b.ins().brif(code, optimized, &[], go, &[]);
    b.switch_to_block(optimized);
    let mut args: Vec<_> = f
        .params
        .iter()
        .map(|&p| match split.frame.offset(p) {
            Some(offset) => b.ins().stack_load(types::I64, types::I64, slot, offset),
            None => b.ins().iconst(types::I64, 0),
        })
        .collect();
    args.push(context);
    let sig = b.import_signature(signature_of(&*env.module, f));
    let call = b.ins().call_indirect(sig, code, &args);
    map_words(b.func, call, slot, split.frame.words);
    let result = b.inst_results(call)[0];
    b.ins().return_(&[result]);
    b.switch_to_block(go);
}

/// Counts the word at address `counter` down by one, and gives what is
/// left (tiered code's counters: [`crate::tiers`]).
pub(super) fn count_down(b: &mut FunctionBuilder, counter: u64) -> cranelift_codegen::ir::Value {
    let flags = cranelift_codegen::ir::MemFlagsData::trusted();
    let address = b.ins().iconst(types::I64, counter as i64);
    let left = b.ins().load(types::I64, flags, address, 0);
    let left = b.ins().iadd_imm_s(left, -1);
    b.ins().store(flags, left, address, 0);
    left
}

/// Lists the first `words` words of `slot` in the stack map of `call`.
fn map_words(
    func: &mut cranelift_codegen::ir::Function,
    call: cranelift_codegen::ir::Inst,
    slot: StackSlot,
    words: u32,
) {
    for w in 0..words {
        func.dfg.append_user_stack_map_entry(call, UserStackMapEntry { ty: types::I64, slot, offset: 8 * w });
    }
}

/// The signature of a region: the context, the frame's address and the
/// number of the entry to start at, in the tail-call convention (regions
/// continue in one another without growing the stack).
pub fn region_signature(module: &dyn cranelift_module::Module) -> Signature {
    let mut sig = module.make_signature();
    for _ in 0..3 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig.returns.push(AbiParam::new(types::I64));
    sig.call_conv = cranelift_codegen::isa::CallConv::Tail;
    sig
}

/// Lowers the driver of split function `f` into `ctx.func`: it clears the
/// frame, stores the parameters in their words, and calls the region of
/// the entry, whose call lists every word of the frame as a root.
///
/// The driver of tier-0 code (`tier`: function `index` of the program,
/// with its counter at address `counter`; see [`crate::tiers`]) first
/// counts the call; at zero it has the runtime compile the optimized
/// tier, and calls that instead if there is one.
pub fn lower_driver(
    env: &mut Building,
    f: &Function,
    split: &Split,
    tier: Option<(u64, usize)>,
    ctx: &mut cranelift_codegen::Context,
    fbctx: &mut FunctionBuilderContext,
) {
    ctx.func.signature = signature_of(&*env.module, f);
    let mut b = FunctionBuilder::new(&mut ctx.func, fbctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let all = b.block_params(entry).to_vec();
    let (params, context) = (&all[..f.params.len()], all[f.params.len()]);
    let slot = cleared_words(&mut b, split.frame.words);
    for (&p, &value) in f.params.iter().zip(params) {
        if let Some(offset) = split.frame.offset(p) {
            b.ins().stack_store(types::I64, value, slot, offset);
        }
    }
    if let Some((counter, index)) = tier {
        count_call(env, f, split, &mut b, (slot, context), counter, index);
    }
    let base = b.ins().stack_addr(types::I64, slot, 0);
    let start = split.regions.first_piece(f.entry).expect("the entry is reachable");
    let region = split.regions.piece(start).region as usize;
    let number = split.regions.entry_number(start).expect("the entry enters its region");
    let number = b.ins().iconst(types::I64, number as i64);
    let callee = env.module.declare_func_in_func(split.funcs[region], b.func);
    let call = b.ins().call(callee, &[context, base, number]);
    map_words(b.func, call, slot, split.frame.words);
    let result = b.inst_results(call)[0];
    b.ins().return_(&[result]);
    b.seal_all_blocks();
    b.finalize(env.module.target_config());
}

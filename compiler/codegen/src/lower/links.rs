//! Links laid out in a row, predicted ahead of time.
//!
//! A program that walks a chain of objects — a Brainfuck tape of `cell`s,
//! a linked list — reads each link from the object before it: `t = t.r`.
//! Every step waits for the load before it (four or five cycles of a
//! level-one hit), and nothing else can overlap with the walk: native code
//! of public mandelbrot.b's residual program spends its time right after
//! those loads. Objects of one size are bumped from one run of the heap
//! (`new_object`), so a chain built by allocating each object as it is
//! linked lies in a row: the next object is the current one's address plus
//! the object size, the previous one minus it.
//!
//! So a `get` whose result the function walks is lowered as a prediction
//! (`get_field`): the loaded word is compared with `obj + size` and with
//! `obj - size`, and where it matches the result is the *computed*
//! address, not the loaded one. The comparison is a branch the processor
//! predicts; what follows depends only on the addition, so the next step's
//! load issues without waiting for this one's, and the loads of a walk
//! overlap. A word that matches neither takes the ordinary path (the
//! unset test, the runtime). The prediction is checked every time: a
//! heap laid out otherwise only costs two compares. The JIT learns the
//! same thing from the addresses a recording saw (`guard_at`,
//! docs/architecture.md, "Links laid out in a row"); ahead of time it is a
//! guess, and this is how it is made cheap when wrong.
//!
//! Which `get`s: those whose result the function uses as an object — the
//! object operand of a `get` or `set` — directly or through phis. A field
//! holding integers is not walked and keeps its plain load.
//!
//! A walk usually tests each link for 0 as soon as it has read it (the
//! end of a list; a Brainfuck tape grown on demand). Where the read is
//! the block's last instruction and the branch its test ([`link_tests`]),
//! the two are lowered together ([`Lowerer::link_and_branch`]): a hit is
//! an object, so it goes straight on, past the test.

use bitvec::vec::BitVec;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, BlockArg, InstBuilder, MemFlagsData, Value as ClValue};
use flowc_ir::{ix, BlockId, Function, InstId, InstKind, Operand, Terminator, ValueId};
use flowc_lang::heap::rows;
use flowc_lang::Symbol;
use rustc_hash::FxHashMap as HashMap;

use super::Lowerer;
use crate::runtime::{offsets, RuntimeFn};
use crate::word::{TAG_MASK, ZERO};

/// By raw value index: the results of `get`s that `f` walks (see the
/// module docs).
pub(super) fn walked_links(f: &Function) -> BitVec {
    let n = f.values.len();
    let mut used_as_object: BitVec = BitVec::repeat(false, n);
    // The phi defining each value, by raw index into `phis`.
    let mut phi_of: Vec<u32> = vec![u32::MAX; n];
    let mut phis: Vec<&flowc_ir::inst::PhiInputs> = Vec::new();
    let mut work: Vec<ValueId> = Vec::new();
    for &b in &f.layout {
        for i in f.block_insts(b) {
            let inst = &f.insts[i];
            match &inst.kind {
                InstKind::Get { obj: Operand::Value(o), .. } | InstKind::Set { obj: Operand::Value(o), .. }
                    if !used_as_object.replace(ix(*o), true) =>
                {
                    work.push(*o);
                }
                InstKind::Phi(inputs) => {
                    if let Some(r) = inst.result {
                        phi_of[ix(r)] = phis.len() as u32;
                        phis.push(inputs);
                    }
                }
                _ => {}
            }
        }
    }
    // Backwards through phis: what flows into a walked phi is walked.
    while let Some(v) = work.pop() {
        let Some(inputs) = phis.get(phi_of[ix(v)] as usize) else { continue };
        for (_, input) in inputs.iter() {
            if let Operand::Value(w) = input {
                if !used_as_object.replace(ix(*w), true) {
                    work.push(*w);
                }
            }
        }
    }
    let mut links: BitVec = BitVec::repeat(false, n);
    for &b in &f.layout {
        for i in f.block_insts(b) {
            if let (InstKind::Get { .. }, Some(r)) = (&f.insts[i].kind, f.insts[i].result) {
                if used_as_object[ix(r)] {
                    links.set(ix(r), true);
                }
            }
        }
    }
    links
}

/// The blocks that end by testing a link they read last, by block: the
/// `get` (of a walked link, see [`walked_links`]) whose result the block's
/// branch tests for 0 — a Brainfuck `>` on a tape grown on demand
/// (`r = t.r; if r goto right else goto grow`), a list walk's
/// `n = n.next; if n goto more else goto done`. Lowered together
/// ([`Lowerer::link_and_branch`]), a predicted hit goes straight to the
/// branch's first successor: the address computed is an object, so the
/// test of it for 0 is left out.
///
/// Only where the successors differ and every other use of the link is
/// on the way to the first successor, which sees the link as it got it:
/// a phi input of that successor on the edge from the block; or, where
/// the block is the successor's only predecessor, any use in code the
/// successor dominates (a phi input counts where the edge comes from
/// such code). One pass over the function finds them all. A `walk` the
/// block's branch tests is one too (`crate::walks` puts one so, its only
/// other use a phi input on the way): a hit on the rows goes straight on.
pub(super) fn link_tests(
    f: &Function,
    cfg: &flowc_ir::cfg::Cfg,
    dom: &flowc_ir::cfg::DomTree,
    links: &BitVec,
    uses: &[u32],
) -> HashMap<BlockId, InstId> {
    let mut out = HashMap::default();
    // The candidates, by their link: (testing block, first successor,
    // the get, uses on the way found so far).
    let mut candidates: HashMap<ValueId, (BlockId, BlockId, InstId, u32)> = HashMap::default();
    for &b in &f.layout {
        let Terminator::Branch { cond: Operand::Value(r), then_block, else_block } = &f.blocks[b].term else {
            continue;
        };
        let Some(&last) = f.blocks[b].insts.last() else { continue };
        // A walked link, or a walk (whose one other use, by
        // construction, is the phi input on its first successor's way).
        let link = match f.insts[last].kind {
            // (Traces walk nothing: their `links` is empty.)
            InstKind::Get { .. } => links.get(ix(*r)).is_some_and(|b| *b),
            InstKind::Walk { .. } => true,
            _ => false,
        };
        if link && f.insts[last].result == Some(*r) && then_block != else_block {
            candidates.insert(*r, (b, *then_block, last, 0));
        }
    }
    if candidates.is_empty() {
        return out;
    }
    // Code the first successor dominates, where it has the testing block
    // as its only predecessor.
    let below = |(b, then): (BlockId, BlockId), at: BlockId| cfg.preds(then) == [b] && dom.dominates(then, at);
    super::each_operand(f, |o, u, from| {
        let Operand::Value(v) = o else { return };
        let Some((b, then, _, found)) = candidates.get_mut(v) else { return };
        let on_the_way = match from {
            // A phi input of block `u` on the edge from `p`.
            Some(p) => (u == *then && p == *b) || below((*b, *then), p),
            None => below((*b, *then), u),
        };
        *found += u32::from(on_the_way);
    });
    for (r, (b, _, get, found)) in candidates {
        // The branch's own test of the link is the one use not on the way.
        if found + 1 == uses[ix(r)] {
            out.insert(b, get);
        }
    }
    out
}

impl Lowerer<'_, '_> {
    /// Block `blk`'s last instruction `i`, the `get` of a link or a
    /// `walk`, with the branch that tests it ([`link_tests`]). The first successor is
    /// entered through one edge block whose parameter is the link: from a
    /// predicted hit, with the address computed (an object, so nothing
    /// is tested), and from the word loaded, once tested for 0. The
    /// link's value is the word loaded on the way to the second
    /// successor, which does not read it.
    pub(super) fn link_and_branch(&mut self, blk: BlockId, i: InstId) {
        let kind = self.f.insts[i].kind.clone();
        let (InstKind::Get { obj, .. } | InstKind::Walk { obj, .. }) = &kind else {
            unreachable!("link_tests picks gets and walks")
        };
        let Terminator::Branch { then_block, else_block, .. } = self.f.blocks[blk].term.clone() else {
            unreachable!("link_tests picks branches")
        };
        let r = self.f.insts[i].result.expect("a get has a result");
        let o = self.operand(obj);
        // The frame words a region loaded so far: loads the miss path makes
        // for the second successor's edge do not dominate the edge block,
        // which a hit enters without passing them.
        let loaded = self.split.as_ref().map(|r| r.loaded.clone());
        let then_edge = self.b.create_block();
        let link = self.b.append_block_param(then_edge, types::I64);
        let word = match kind {
            InstKind::Walk { field, links, .. } => self.walk(o, field, links, Some(then_edge)),
            InstKind::Get { field, proven, .. } => self.get_field(o, field, proven, true, Some(then_edge)),
            _ => unreachable!("a get or a walk"),
        };
        // The prediction missed: the word loaded is tested for 0 (a `get`
        // fails on an unset field, so it is never unbound).
        self.set_value(r, word);
        let else_target = self.target(blk, else_block);
        let truthy = self.b.ins().icmp_imm_s(IntCC::NotEqual, word, ZERO.as_i64());
        let targets = [(then_edge, vec![BlockArg::Value(word)]), else_target];
        self.branch_to(blk, truthy, (then_block, else_block), &targets);
        self.b.switch_to_block(then_edge);
        if let (Some(region), Some(loaded)) = (&mut self.split, loaded) {
            region.loaded = loaded;
        }
        self.set_value(r, link);
        let (then_cb, args) = self.target(blk, then_block);
        self.b.ins().jump(then_cb, &args);
    }
}

/// By raw instruction index: the `set`s of `f` writing a field of an
/// object made by a `new` earlier in the same block with nothing between
/// that could have made it part of the heap's rows — no `set` of another
/// object (whose write the rows might see and grow by), no call, no
/// walk. Such a write changes no row (a row holds only objects it
/// grew to, and a new object's writes come before any that could).
pub(super) fn fresh_sets(f: &Function) -> BitVec {
    let mut out: BitVec = BitVec::repeat(false, f.insts.len());
    let mut fresh: Vec<ValueId> = Vec::new();
    for &b in &f.layout {
        fresh.clear();
        for &i in &f.blocks[b].insts {
            match &f.insts[i].kind {
                InstKind::New(_) => fresh.extend(f.insts[i].result),
                InstKind::Set { obj: Operand::Value(o), .. } if fresh.contains(o) => out.set(ix(i), true),
                InstKind::Set { .. } | InstKind::Call { .. } | InstKind::Walk { .. } => fresh.clear(),
                _ => {}
            }
        }
    }
    out
}

impl Lowerer<'_, '_> {
    /// `walk obj, field, links` (`flowc_ir::InstKind::Walk`): where the
    /// heap's row linked through the field's slot holds `obj` and the
    /// object that many links along ([`rows::Along`]: both within its
    /// bounds, `obj` a pointer), that object's address, computed. Where
    /// a row does but not the walk, 0: the chain runs (and may grow the
    /// row). Where none does, the runtime walks link by link and may find
    /// one — but after one that found none, 0 for the next
    /// [`rows::Along::wait`] walks, so chains that are no row do not pay
    /// a call each.
    /// A walk the block's branch tests goes, where the row holds it, to
    /// `hit_target` with the address computed ([`Lowerer::link_and_branch`]).
    pub(super) fn walk(&mut self, obj: ClValue, field: Symbol, links: u32, hit_target: Option<Block>) -> ClValue {
        let flags = MemFlagsData::trusted();
        let join = self.join_block();
        let slow = self.cold_block();
        match self.env.objects.layout.slot(field).filter(|&k| k < rows::MASK_SLOTS as usize) {
            Some(k) => {
                let heap = self.b.ins().load(types::I64, flags, self.ctx, offsets::HEAP);
                let at = flowc_lang::heap::rows_offset() as i32 + rows::along(k as u32);
                let lo = self.b.ins().load(types::I64, flags, heap, at);
                let hi = self.b.ins().load(types::I64, flags, heap, at + 8);
                let step = self.b.ins().load(types::I64, flags, heap, at + 16);
                let distance = self.b.ins().imul_imm_s(step, i64::from(links));
                let to = self.b.ins().iadd(obj, distance);
                // `obj` and `to` within `lo..=hi`, `obj` a pointer: their
                // offsets from `lo` at most the span, unsigned (an address
                // below `lo` wraps round to a huge offset), and `obj`'s
                // offset, whose low bits are its tag (`lo` is a cell's
                // address), rotated right by the tag's width — a tagged
                // offset then has its tag in the top bits, above any span
                // — at most the span in words. Two compares, no `umin` and
                // `umax`, no tag test of its own. No row (`lo` the top
                // address, `hi` 0) makes the span 1, wrapping: the start
                // passes only for the word of all ones (the integer -1,
                // its offset 0), and the end then only for a distance of 0
                // or 1, which no walk has (`rows::Along::step` is never 0,
                // and a walk is at least `walks::MIN_LINKS` links).
                const TAG_BITS: i64 = TAG_MASK.trailing_ones() as i64;
                let span = self.b.ins().isub(hi, lo);
                let words = self.b.ins().ushr_imm_s(span, TAG_BITS);
                let from = self.b.ins().isub(obj, lo);
                let rotated = self.b.ins().rotr_imm_s(from, TAG_BITS);
                let start = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, rotated, words);
                let end_at = self.b.ins().iadd(from, distance);
                let end = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end_at, span);
                let held = self.b.ins().band(start, end);
                let missed = self.cold_block();
                self.b.ins().brif(held, hit_target.unwrap_or(join), &[BlockArg::Value(to)], missed, &[]);
                // Missed: 0 where a row runs through the slot, or while
                // the wait after the last ask lasts; else the runtime.
                self.b.switch_to_block(missed);
                let zero = self.konst(ZERO.as_i64());
                let none = self.b.ins().icmp(IntCC::UnsignedGreaterThan, lo, hi);
                let waiting = self.cold_block();
                self.b.ins().brif(none, waiting, &[], join, &[BlockArg::Value(zero)]);
                self.b.switch_to_block(waiting);
                let wait = self.b.ins().load(types::I64, flags, heap, at + 24);
                let left = self.b.ins().iadd_imm_s(wait, -1);
                self.b.ins().store(flags, left, heap, at + 24);
                let ask = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, left, 0);
                self.b.ins().brif(ask, slow, &[], join, &[BlockArg::Value(zero)]);
            }
            None => {
                self.b.ins().jump(slow, &[]);
            }
        }
        self.b.switch_to_block(slow);
        let f = self.konst(field.index() as i64);
        let n = self.konst(i64::from(links));
        let r = self.call_rt_leaf(RuntimeFn::Walk, &[obj, f, n]);
        self.b.ins().jump(join, &[BlockArg::Value(r)]);
        self.b.switch_to_block(join);
        self.b.block_params(join)[0]
    }
}

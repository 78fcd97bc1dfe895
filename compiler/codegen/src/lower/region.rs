//! Lowering one region of a split huge function ([`super::frame`]): the
//! region's entry (a stub per entry, chosen by the entry's number), its
//! pieces block by block, values read from the frame where their
//! definition does not dominate the use in the region, and edges into
//! other regions, which store the phi inputs they carry and continue there
//! by a tail call.

use rustc_hash::FxHashMap as HashMap;

use cranelift_codegen::ir::{types, BlockArg, FuncRef, InstBuilder, MemFlagsData, Value as ClValue};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::Module as _;

use flowc_ir::{BlockId, Function, ValueId};

use super::{frame, store_frame, Building, Facts, Lowerer};
use crate::runtime::RuntimeFn;

/// Lowering one region of a split function: where the region is, its
/// frame, and what is pending.
pub(super) struct Region<'b> {
    pub(super) split: &'b frame::Split,
    /// The region's number.
    pub(super) index: usize,
    /// The frame's address (the region's second parameter).
    pub(super) base: ClValue,
    /// The piece being lowered.
    pub(super) piece: usize,
    /// The Cranelift block of each entry that starts mid-block, by piece.
    pub(super) entry_blocks: HashMap<usize, cranelift_codegen::ir::Block>,
    /// The words read from the frame in the block part being lowered.
    pub(super) loaded: HashMap<ValueId, ClValue>,
    /// Edges into other regions made by the terminator being lowered: the
    /// edge's block, the piece it enters, and the phi inputs it carries.
    pub(super) pending: Vec<(cranelift_codegen::ir::Block, usize, Vec<ClValue>)>,
    /// The other regions' functions, as declared in this one.
    pub(super) refs: HashMap<usize, FuncRef>,
    /// Whether this region is lowered with the optimized tier's plan: of
    /// a function tiered region by region ([`crate::tiers`]), where it
    /// counts nothing and hops to other regions' optimized tiers, or a
    /// hot region of code that never tiers up
    /// ([`crate::plan::Plan::hot_region`]).
    pub(super) tier1: bool,
}

/// Lowers region `index` of split function `f` into `ctx.func`
/// ([`frame`]): a function of the context, the frame's address and the
/// number of the entry to start at, which goes to that entry (the phis of
/// an entry's block read their words) and lowers the region's pieces;
/// edges into other regions store the phi inputs they carry in their
/// phis' words and continue in that region by a tail call.
///
/// `tier1`: the region's optimized tier, lowered with that plan
/// ([`crate::plan::Plan::region_tier1`]), for a function tiered region by
/// region or a hot region of code that never tiers up
/// ([`crate::plan::Plan::hot_region`]); else the code the split's plan
/// says, which, for a function tiered region by region, first continues
/// in the region's optimized tier if it is
/// installed, and counts the entry (`enter_tier1`); its hot loop headers
/// count iterations ([`Lowerer::count_iteration`]).
#[allow(clippy::too_many_arguments)]
pub fn lower_region(
    env: &mut Building,
    f: &Function,
    facts: &Facts,
    split: &frame::Split,
    index: usize,
    tier1: Option<&crate::plan::Plan>,
    ctx: &mut cranelift_codegen::Context,
    fbctx: &mut FunctionBuilderContext,
) {
    let regions = &split.regions;
    ctx.func.signature = frame::region_signature(&*env.module);
    let mut b = FunctionBuilder::new(&mut ctx.func, fbctx);
    let mut blocks = super::Blocks::default();
    for p in regions.members(index) {
        let piece = regions.piece(p);
        if piece.start == 0 {
            let cb = b.create_block();
            for _ in &f.blocks[piece.block].phis {
                b.append_block_param(cb, types::I64);
            }
            blocks.insert(piece.block, cb);
        }
    }
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (ctx_value, base, number) = (b.block_params(entry)[0], b.block_params(entry)[1], b.block_params(entry)[2]);
    store_frame(&mut b, ctx_value);
    if let Some(by_region) = split.by_region.as_ref().filter(|_| tier1.is_none()) {
        enter_tier1(env, &mut b, by_region, index, (ctx_value, base, number));
    }
    // One stub per entry (a block's phis read their words), chosen by the
    // entry's number.
    let entries: Vec<usize> = regions.entries(index).collect();
    let stubs: Vec<_> = entries.iter().map(|_| b.create_block()).collect();
    if let [only] = stubs[..] {
        b.ins().jump(only, &[]);
    } else {
        let calls: Vec<_> = stubs.iter().map(|&s| b.func.dfg.block_call(s, &[])).collect();
        let table = b.create_jump_table(cranelift_codegen::ir::JumpTableData::new(calls[0], &calls));
        let number = b.ins().ireduce(types::I32, number);
        b.ins().br_table(number, table);
    }
    let mut entry_blocks = HashMap::default();
    for (&p, &stub) in entries.iter().zip(&stubs) {
        let piece = regions.piece(p);
        b.switch_to_block(stub);
        if piece.start == 0 {
            let target = blocks[&piece.block];
            let args: Vec<BlockArg> = f.blocks[piece.block]
                .phis
                .iter()
                .map(|&phi| {
                    let word = f.insts[phi].result.and_then(|v| split.frame.offset(v));
                    BlockArg::Value(match word {
                        Some(offset) => b.ins().load(types::I64, MemFlagsData::trusted(), base, offset),
                        None => b.ins().iconst(types::I64, 0),
                    })
                })
                .collect();
            b.ins().jump(target, &args);
        } else {
            // A piece entered mid-block starts in its stub.
            entry_blocks.insert(p, stub);
        }
    }
    let region = Region {
        split,
        index,
        base,
        piece: 0,
        entry_blocks,
        loaded: HashMap::default(),
        pending: Vec::new(),
        refs: HashMap::default(),
        tier1: tier1.is_some(),
    };
    let plan = tier1.copied().unwrap_or(split.plan);
    let mut l = Lowerer::new(b, env, f, facts, plan, blocks, ctx_value, Some(region));
    l.finish_stop();
    // The region's pieces, block by block: a block's pieces in one region
    // are consecutive.
    let members: Vec<usize> = regions.members(index).collect();
    let mut k = 0;
    while k < members.len() {
        let blk = regions.piece(members[k]).block;
        let mut end = k + 1;
        while end < members.len() && regions.piece(members[end]).block == blk {
            end += 1;
        }
        let (from, to) = (regions.piece(members[k]), regions.piece(members[end - 1]));
        l.part(blk, members[k], from.start as usize, to.end as usize, to.last);
        k = end;
    }
    l.b.seal_all_blocks();
    let config = l.env.module.target_config();
    l.b.finalize(config);
}

/// The start of a region's tier-0 code in a function tiered region by
/// region (`by_region`; region `index`, its parameters `(ctx, base,
/// number)`): continues at the same entry of the region's optimized tier
/// if its slot holds one; else counts the entry down, and at zero asks the
/// runtime for the optimized tier and continues there if it is ready.
/// Every value live at an entry is in the frame, and the collector may
/// run during the call (compiling makes the constants of the code): the
/// region has computed nothing yet.
fn enter_tier1(
    env: &mut Building,
    b: &mut FunctionBuilder,
    by_region: &frame::ByRegion,
    index: usize,
    (ctx, base, number): (ClValue, ClValue, ClValue),
) {
    hop_if_set(env, b, by_region.slots + 8 * index as u64, (ctx, base, number));
    let (hot, go) = (b.create_block(), b.create_block());
    b.set_cold_block(hot);
    let left = frame::count_down(b, by_region.counters + 8 * index as u64);
    b.ins().brif(left, go, &[], hot, &[]);
    b.switch_to_block(hot);
    let tier_up = env.module.declare_func_in_func(env.runtime[RuntimeFn::TierUp], b.func);
    let function = b.ins().iconst(types::I64, by_region.index as i64);
    let entry = b.ins().iconst(types::I64, (crate::tiers::REGION_ENTRY + index as u64) as i64);
    let call = b.ins().call(tier_up, &[ctx, function, entry]);
    let code = b.inst_results(call)[0];
    tail_call_if(env, b, code, (ctx, base, number));
    b.ins().jump(go, &[]);
    b.switch_to_block(go);
}

/// Continues by a tail call of the region code whose address is in the
/// word at `slot`, at entry `number`, if the word is not 0; else goes on
/// in a new current block.
fn hop_if_set(env: &mut Building, b: &mut FunctionBuilder, slot: u64, args: (ClValue, ClValue, ClValue)) {
    let slot = b.ins().iconst(types::I64, slot as i64);
    let code = b.ins().load(types::I64, MemFlagsData::trusted(), slot, 0);
    tail_call_if(env, b, code, args);
}

/// Continues by a tail call of the region code at address `code` with
/// `(ctx, base, number)` if `code` is not 0; else goes on in a new
/// current block.
fn tail_call_if(
    env: &mut Building,
    b: &mut FunctionBuilder,
    code: ClValue,
    (ctx, base, number): (ClValue, ClValue, ClValue),
) {
    let (hop, go) = (b.create_block(), b.create_block());
    b.ins().brif(code, hop, &[], go, &[]);
    b.switch_to_block(hop);
    let sig = b.import_signature(frame::region_signature(&*env.module));
    b.ins().return_call_indirect(sig, code, &[ctx, base, number]);
    b.switch_to_block(go);
}

impl Lowerer<'_, '_> {
    /// Continues in the region of piece `p` (an entry of it): a tail call
    /// of its function with the number of the entry — from a region's
    /// optimized tier, of the other region's optimized tier if its slot
    /// holds one (its tier-0 code would only hop there).
    pub(super) fn enter_region(&mut self, p: usize) {
        let r = self.split.as_mut().expect("only regions enter regions");
        let region = r.split.regions.piece(p).region as usize;
        let number = r.split.regions.entry_number(p).expect("a piece entered from another region is an entry");
        let fref = match r.refs.get(&region) {
            Some(&fref) => fref,
            None => {
                let fref = self.env.module.declare_func_in_func(r.split.funcs[region], self.b.func);
                r.refs.insert(region, fref);
                fref
            }
        };
        let base = r.base;
        let slots = r.split.by_region.as_ref().filter(|_| r.tier1).map(|t| t.slots);
        let number = self.konst(number as i64);
        if let Some(slots) = slots {
            hop_if_set(self.env, &mut self.b, slots + 8 * region as u64, (self.ctx, base, number));
        }
        self.b.ins().return_call(fref, &[self.ctx, base, number]);
    }

    /// The Cranelift block and arguments of the edge from `from` to `to`:
    /// `to`'s block with the phi inputs, or, into another region, a block
    /// that stores them in their phis' words and continues there (filled
    /// once the terminator is done: [`Lowerer::fill_edges`]).
    pub(super) fn target(&mut self, from: BlockId, to: BlockId) -> (cranelift_codegen::ir::Block, Vec<BlockArg>) {
        let args = self.edge_args(from, to);
        let elsewhere = self.split.as_ref().and_then(|r| {
            let p = r.split.regions.first_piece(to).expect("a successor of a reachable block is reachable");
            (r.split.regions.piece(p).region as usize != r.index).then_some(p)
        });
        match elsewhere {
            None => (self.loop_entry(from, to).unwrap_or(self.blocks[&to]), args),
            Some(p) => {
                let edge = self.b.create_block();
                let values = args
                    .iter()
                    .map(|a| match a {
                        BlockArg::Value(v) => *v,
                        _ => unreachable!("phi inputs are values"),
                    })
                    .collect();
                self.split.as_mut().expect("in a region").pending.push((edge, p, values));
                (edge, Vec::new())
            }
        }
    }

    /// Fills the edges into other regions the last terminator made.
    pub(super) fn fill_edges(&mut self) {
        let Some(r) = &mut self.split else { return };
        let pending = std::mem::take(&mut r.pending);
        let (split, base) = (r.split, r.base);
        for (edge, p, values) in pending {
            self.b.switch_to_block(edge);
            self.store_phis(split, base, split.regions.piece(p).block, &values);
            self.enter_region(p);
        }
    }

    /// Stores `values`, the inputs of block `blk`'s phis, in the phis'
    /// words of `split`'s frame at `base`.
    fn store_phis(&mut self, split: &frame::Split, base: ClValue, blk: BlockId, values: &[ClValue]) {
        for (&phi, &v) in self.f.blocks[blk].phis.iter().zip(values) {
            if let Some(offset) = self.f.insts[phi].result.and_then(|r| split.frame.offset(r)) {
                self.b.ins().store(MemFlagsData::trusted(), v, base, offset);
            }
        }
    }

    /// Whether value `v` is used directly where code is being lowered:
    /// always, but in a region where its definition does not dominate the
    /// piece being lowered ([`flowc_ir::regions::Regions::direct`]).
    pub(super) fn direct(&self, v: ValueId) -> bool {
        self.split.as_ref().is_none_or(|r| r.split.regions.direct(v, r.piece))
    }

    /// Value `v` read from its word of the frame (once per block part).
    pub(super) fn read_word(&mut self, v: ValueId) -> ClValue {
        let r = self.split.as_mut().expect("values come from the frame only in regions");
        if let Some(&w) = r.loaded.get(&v) {
            return w;
        }
        let offset = r.split.frame.offset(v).expect("a value used indirectly has a word");
        let w = self.b.ins().load(types::I64, MemFlagsData::trusted(), r.base, offset);
        r.loaded.insert(v, w);
        w
    }
}

impl Lowerer<'_, '_> {
    /// At hot loop header `blk` of tier-0 code (its phis `phis`; see
    /// [`crate::tiers`]): counts the iteration down — with the function's
    /// calls, or, tiered region by region, with the region's entries; at
    /// zero, asks the runtime for the optimized tier (the phis stored in
    /// their words first; every other value live here is in the frame
    /// already: the header is an entry of its region), and if that gives
    /// code for this header — the function's on-stack replacement entries,
    /// or the region's optimized tier — continues there by a tail call, as
    /// an edge into another region does. Nothing elsewhere, nor in a
    /// region's optimized tier.
    pub(super) fn count_iteration(&mut self, blk: BlockId, phis: &[ClValue]) {
        let Some(r) = &self.split else { return };
        // The counter, what to ask for, and the entry number to continue at.
        let (counter, function, entry, number) = if let Some(t) = &r.split.by_region {
            if r.tier1 || r.split.header_number(blk).is_none() {
                return;
            }
            let piece = r.split.regions.first_piece(blk).expect("a hot header is reachable");
            let number = r.split.regions.entry_number(piece).expect("a hot header is an entry of its region");
            (t.counters + 8 * r.index as u64, t.index, crate::tiers::REGION_ENTRY + r.index as u64, number)
        } else if let Some(t) = &r.split.tier {
            let Some(number) = r.split.header_number(blk) else { return };
            (t.counter, t.index, 1 + number as u64, number)
        } else {
            return;
        };
        let (split, base) = (r.split, r.base);
        let (hot, go) = (self.cold_block(), self.b.create_block());
        let left = frame::count_down(&mut self.b, counter);
        self.b.ins().brif(left, go, &[], hot, &[]);
        self.b.switch_to_block(hot);
        // The phis in their words: for the optimized tier, and for the
        // collector, which may run during the call (compiling makes the
        // constants of the code), and sees what is live across it there.
        self.store_phis(split, base, blk, phis);
        let tier_up = self.rt(RuntimeFn::TierUp);
        let function = self.konst(function as i64);
        let entry = self.konst(entry as i64);
        let call = self.b.ins().call(tier_up, &[self.ctx, function, entry]);
        let code = self.b.inst_results(call)[0];
        let number = self.konst(number as i64);
        tail_call_if(self.env, &mut self.b, code, (self.ctx, base, number));
        self.b.ins().jump(go, &[]);
        self.b.switch_to_block(go);
    }
}

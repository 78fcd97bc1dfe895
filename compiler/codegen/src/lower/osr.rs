//! The optimized tier's way in from tier-0 code mid-run: on-stack
//! replacement at loop headers ([`crate::tiers`]).
//!
//! Tier-0 code is split ([`super::frame`]) with each hot loop header an
//! entry of its region, so every value live at a header is in a word of
//! the frame there (the header's phis are stored by the code that comes
//! in). [`lower_osr`] compiles the whole function, optimized, as a
//! function of the region signature (the context, the tier-0 frame's
//! address and an entry number) that starts at the header numbered so:
//! a stub per header reads the values live there from their words into
//! the function's variables (and the collector's words of its own
//! frame), and jumps to the header — through the optimistic copy's entry
//! test, as an edge into the loop would. Cranelift's SSA builder merges
//! the stubs' values with the function's own definitions. The function's
//! own entry is not reachable: it returns what the function returns to
//! the tier-0 driver, which returns it.

use cranelift_codegen::ir::{types, Block, InstBuilder, MemFlagsData, Value as ClValue};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

use flowc_ir::live_ranges::LiveRanges;
use flowc_ir::{BlockId, Function};

use super::{frame::Frame, Building, Facts, Lowerer};

/// The on-stack replacement entries of an optimized tier: the headers, the
/// tier-0 frame their values are in, and what is live at each.
pub(super) struct Osr<'x> {
    frame: &'x Frame,
    headers: &'x [BlockId],
    live: LiveRanges,
}

/// Lowers `f` (its `facts` those of the optimized tier) into `ctx.func` as
/// its on-stack replacement entries into the optimized tier at `headers`
/// (the hot loop headers of its tier-0 code, whose frame is `frame`; see
/// the module docs). Fails if a value live at a header is not in a word
/// of the frame (then the tier-0 code goes on); the tier-0 layout makes
/// that impossible, and the tests count such failures.
#[allow(clippy::too_many_arguments)]
pub fn lower_osr(
    env: &mut Building,
    f: &Function,
    facts: &Facts,
    plan: &crate::plan::Plan,
    frame: &Frame,
    headers: &[BlockId],
    ctx: &mut cranelift_codegen::Context,
    fbctx: &mut FunctionBuilderContext,
) -> Result<(), String> {
    let live = LiveRanges::new(f, &facts.shape.cfg, |_| true);
    for &h in headers {
        let missing = live.live_in(h).iter().find(|&&v| frame.stored_at(v).is_none());
        if let Some(v) = missing {
            return Err(format!("value {v:?} live at loop header {h:?} is not kept in the tier-0 frame"));
        }
    }
    super::lower_with(env, f, facts, plan, Some(&Osr { frame, headers, live }), ctx, fbctx);
    Ok(())
}

impl Osr<'_> {
    /// The liveness of all of the function's values.
    pub(super) fn live(&self) -> &LiveRanges {
        &self.live
    }
}

/// Ends the entry block (`entry`, whose parameters are the context, the
/// frame's address and the entry's number) in a jump to the stub of the
/// numbered header; returns the stubs, one per header.
pub(super) fn dispatch(b: &mut FunctionBuilder, entry: Block, osr: &Osr) -> Vec<Block> {
    let number = b.block_params(entry)[2];
    let stubs: Vec<Block> = osr.headers.iter().map(|_| b.create_block()).collect();
    match stubs[..] {
        [] => {
            b.ins().trap(cranelift_codegen::ir::TrapCode::unwrap_user(1));
        }
        [only] => {
            b.ins().jump(only, &[]);
        }
        _ => {
            let calls: Vec<_> = stubs.iter().map(|&s| b.func.dfg.block_call(s, &[])).collect();
            let table = b.create_jump_table(cranelift_codegen::ir::JumpTableData::new(calls[0], &calls));
            let number = b.ins().ireduce(types::I32, number);
            b.ins().br_table(number, table);
        }
    }
    stubs
}

impl Lowerer<'_, '_> {
    /// Fills the stubs of [`dispatch`]: each reads the values live at its
    /// header from the tier-0 frame at `base`, and jumps to the header
    /// with its phis' words.
    pub(super) fn osr_stubs(&mut self, osr: &Osr, base: ClValue, stubs: &[Block]) {
        let flags = MemFlagsData::trusted();
        for (&h, &stub) in osr.headers.iter().zip(stubs) {
            self.b.switch_to_block(stub);
            for &v in osr.live.live_in(h) {
                let offset = osr.frame.offset(v).expect("lower_osr checked every live value's word");
                let w = self.b.ins().load(types::I64, flags, base, offset);
                self.set_value(v, w);
            }
            let args: Vec<cranelift_codegen::ir::BlockArg> = self.f.blocks[h]
                .phis
                .iter()
                .map(|&phi| {
                    let word = self.f.insts[phi].result.and_then(|r| osr.frame.offset(r));
                    cranelift_codegen::ir::BlockArg::Value(match word {
                        Some(offset) => self.b.ins().load(types::I64, flags, base, offset),
                        None => self.b.ins().iconst(types::I64, 0),
                    })
                })
                .collect();
            let target = self.cycle_entry(h).unwrap_or(self.blocks[&h]);
            self.b.ins().jump(target, &args);
        }
    }
}

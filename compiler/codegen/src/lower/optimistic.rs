//! The optimistic copy of a function or trace with a loop (see the module
//! docs of [`super`]): which instructions may leave it (its exit points),
//! how an exit point leaves for the generic copy, and where the generic
//! copy enters it (its loop entries).

use cranelift_codegen::ir::{types, Block, InstBuilder, Value as ClValue};

use flowc_ir::live_ranges::LiveRanges;
use flowc_ir::{BlockId, Function, Operand};
use flowc_lang::ops::Op;

use super::{ix, Blocks, Lowerer};
use crate::small::Small;
use crate::word;

/// The exit points of `f`'s optimistic copy (none: no copy). A function
/// or trace with a loop gets one when some of the arithmetic of its
/// blocks on cycles (`cycles`, by raw index) is not known to stay small:
/// the optimistic copy of those blocks assumes it does — no tag tests on
/// its results, no merges with bignum results — and where an operation
/// overflows, or finds an operand that is not a small integer, the
/// runtime computes the result and execution goes on in the generic copy,
/// right after that operation. So loop-carried integers that could in
/// principle grow (a running total) cost what machine integers cost until
/// they really do. Code on no cycle (a bridge, a loop's preamble, a
/// function without loops, the code around the loops) runs each
/// operation once per entry: its copy would cost more to compile than it
/// saves, and it has none. Whether a function or trace may have a copy at
/// all is its plan's to say ([`crate::plan::Plan::optimistic`]).
pub(super) fn optimistic_exits(
    f: &Function,
    small: &Small,
    cycles: &[Option<u32>],
) -> std::collections::HashSet<flowc_ir::InstId> {
    f.all_insts()
        .filter(|&(b, i)| {
            let data = &f.insts[i];
            cycles[ix(b)].is_some()
                && Small::speculates(&data.kind)
                && data.result.is_some_and(|r| !small.operand(&Operand::Value(r)))
        })
        .map(|(_, i)| i)
        .collect()
}

/// Where the generic copy enters the optimistic one: every edge into a
/// block on a cycle from outside that cycle goes through an entry test
/// of its target, which continues in the optimistic copy when every value
/// live into the target that the optimistic copy takes to be small — and
/// every such phi input the edge carries — is a small integer, and in the
/// generic copy otherwise. (Entries are where the optimistic copy's
/// assumptions about values from outside its blocks are checked: the
/// parameters, and results of arithmetic outside loops.)
pub(super) struct LoopEntries {
    /// The values whose smallness the entries test (those the optimistic
    /// copy takes to be small and the generic one does not), live into
    /// each block.
    tested: LiveRanges,
    /// Which values those are, by raw index (the phis' are read here).
    is_tested: bitvec::vec::BitVec,
    /// The optimistic copy's block of each IR block.
    optimistic: Blocks,
    /// The entry test of each block entered so far, in order.
    tests: Vec<(BlockId, Block)>,
}

impl LoopEntries {
    pub(super) fn new(
        f: &Function,
        cfg: &flowc_ir::cfg::Cfg,
        generic: &Small,
        optimistic_small: &Small,
        optimistic: Blocks,
    ) -> LoopEntries {
        let is_tested: bitvec::vec::BitVec = f
            .values
            .iter()
            .map(|(v, _)| optimistic_small.operand(&Operand::Value(v)) && !generic.operand(&Operand::Value(v)))
            .collect();
        let tested = LiveRanges::new(f, cfg, |v| is_tested[ix(v)]);
        LoopEntries { tested, is_tested, optimistic, tests: Vec::new() }
    }
}

impl Lowerer<'_, '_> {
    /// Exit point `i` (`op` on `a` and `b`) in the optimistic copy: small
    /// integers take the inline path and stay in this copy; anything else
    /// — an operand that is not a small integer, an overflow, a zero
    /// divisor — calls the runtime and goes on in the generic copy.
    pub(super) fn speculate(
        &mut self,
        i: flowc_ir::InstId,
        op: Op,
        a: ClValue,
        b: ClValue,
        known: [bool; 2],
        divisor: Option<i64>,
    ) {
        let (fast, slow) = (self.b.create_block(), self.cold_block());
        let (word, wrong) = self.inline_checked(op, a, b, known, divisor, slow);
        match wrong {
            Some(wrong) => self.b.ins().brif(wrong, slow, &[], fast, &[]),
            None => self.b.ins().jump(fast, &[]),
        };
        self.b.switch_to_block(slow);
        let r = self.runtime_op(op, &[a, b]);
        self.define(i, r);
        let cont = self.cont(i);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(fast);
        self.define(i, word);
    }

    /// The generic copy's block that goes on after exit point `i`.
    pub(super) fn cont(&mut self, i: flowc_ir::InstId) -> cranelift_codegen::ir::Block {
        if let Some(&c) = self.conts.get(&i) {
            return c;
        }
        let c = self.b.create_block();
        self.conts.insert(i, c);
        c
    }

    /// The block an edge from `from` to `to` of the generic copy goes to
    /// instead of `to`'s own: `to`'s entry test ([`LoopEntries`]) when
    /// the edge enters a cycle from outside it (from no cycle, or from
    /// another: a loop that leaves straight into the next); `None`
    /// otherwise.
    pub(super) fn loop_entry(&mut self, from: BlockId, to: BlockId) -> Option<Block> {
        if self.cycles[ix(from)] == self.cycles[ix(to)] {
            return None;
        }
        self.cycle_entry(to)
    }

    /// `to`'s entry test, for code of the generic copy that comes into
    /// `to`, on a cycle, from outside it (`None`: no optimistic copy, or
    /// `to` on no cycle).
    pub(super) fn cycle_entry(&mut self, to: BlockId) -> Option<Block> {
        if self.optimistic || self.cycles[ix(to)].is_none() {
            return None;
        }
        let entries = self.loop_entries.as_mut()?;
        if let Some(&(_, test)) = entries.tests.iter().find(|(b, _)| *b == to) {
            return Some(test);
        }
        let test = self.b.create_block();
        for _ in &self.f.blocks[to].phis {
            self.b.append_block_param(test, types::I64);
        }
        entries.tests.push((to, test));
        Some(test)
    }

    /// Fills the entry tests made while lowering the generic copy.
    pub(super) fn fill_loop_entries(&mut self) {
        let Some(entries) = self.loop_entries.take() else { return };
        for &(to, test) in &entries.tests {
            self.b.switch_to_block(test);
            let params = self.b.block_params(test).to_vec();
            let mut words: Vec<ClValue> = entries
                .tested
                .live_in(to)
                .iter()
                .map(|&v| self.home.read(&mut self.b, v).expect("an optimistic copy keeps values in variables"))
                .collect();
            for (k, &phi) in self.f.blocks[to].phis.iter().enumerate() {
                if self.f.insts[phi].result.is_some_and(|r| entries.is_tested[ix(r)]) {
                    words.push(params[k]);
                }
            }
            let args: Vec<cranelift_codegen::ir::BlockArg> =
                params.iter().map(|&p| cranelift_codegen::ir::BlockArg::Value(p)).collect();
            let all = words.into_iter().reduce(|a, w| self.b.ins().band(a, w));
            match all {
                Some(all) => {
                    // Small integers, and only they, have the tag bit set.
                    let tag = self.b.ins().band_imm_s(all, word::INT_TAG as i64);
                    self.b.ins().brif(tag, entries.optimistic[&to], &args, self.blocks[&to], &args);
                }
                None => {
                    self.b.ins().jump(entries.optimistic[&to], &args);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exit points of the optimistic copy of a loop of `adds` additions
    /// to a running total (each `add.int` may leave the small integers),
    /// in a function of `kind` (`main` or `trace`): none when its plan
    /// gives it no copy.
    fn exits_of_loop(kind: &str, adds: usize) -> usize {
        let f = &crate::plan::tests::looping(kind, adds);
        if !crate::plan::Plan::of(f, &super::super::Facts::new(f), None, None).optimistic {
            return 0;
        }
        let cycles = flowc_ir::cfg::Cfg::new(f).cycles();
        optimistic_exits(f, &Small::of(f), &cycles).len()
    }

    #[test]
    fn only_loops_within_the_budget_get_an_optimistic_copy() {
        // The phi, the comparison and the additions are on the cycle.
        let within = crate::plan::policy::OPTIMISTIC_COPY_INSTS - 2;
        assert_eq!(exits_of_loop("main", within), within);
        assert_eq!(exits_of_loop("main", within + 1), 0, "one instruction over the budget: no copy");
        assert_eq!(exits_of_loop("trace", within + 1), within + 1, "a trace keeps its copy");
    }
}

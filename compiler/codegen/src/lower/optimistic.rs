//! The optimistic copy of a function or trace with a loop (see the module
//! docs of [`super`]): which instructions may leave it (its exit points),
//! how an exit point leaves for the generic copy, and the hand-over of the
//! values that stay live there.

use cranelift_codegen::ir::{InstBuilder, Value as ClValue};

use flowc_ir::{Function, Operand};
use flowc_lang::ops::Op;

use super::Lowerer;
use crate::small::Small;

/// The exit points of `f`'s optimistic copy (none: no copy). A function
/// or trace with a loop gets one when some of its arithmetic is not known
/// to stay small: the optimistic copy assumes it does — no tag tests on
/// its results, no merges with bignum results — and where an operation
/// overflows, or finds an operand that is not a small integer, the
/// runtime computes the result and execution goes on in the generic copy,
/// right after that operation. So loop-carried integers that could in
/// principle grow (a running total) cost what machine integers cost until
/// they really do. Code without a loop (a bridge, a loop's preamble, a
/// function without loops) runs each operation once per entry: its copy
/// would cost more to compile than it saves, and it gets none (recursive
/// Fibonacci, n = 32: 16.5 ms with the copy, 15.5 ms without; 8,000 small
/// functions compile in 1.07 s instead of 1.56 s).
pub(super) fn optimistic_exits(
    f: &Function,
    small: &Small,
    cfg: &flowc_ir::cfg::Cfg,
) -> std::collections::HashSet<flowc_ir::InstId> {
    let straight = !cfg.retreating_targets().contains(&true);
    // Huge functions get none: the copy's variables cost Cranelift's SSA
    // builder memory per variable and block.
    if f.is_huge() || straight {
        return Default::default();
    }
    f.all_insts()
        .map(|(_, i)| i)
        .filter(|&i| {
            let data = &f.insts[i];
            Small::speculates(&data.kind) && data.result.is_some_and(|r| !small.operand(&Operand::Value(r)))
        })
        .collect()
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
        match self.fast_operands(op, a, b, known) {
            Some(both) => self.b.ins().brif(both, fast, &[], slow, &[]),
            None => self.b.ins().jump(fast, &[]),
        };
        self.b.switch_to_block(slow);
        let r = self.runtime_op(op, &[a, b]);
        // The one result of this copy that may not be small: its word
        // holds it for the collector (this copy stores only what it does
        // not assume small).
        if let (Some(roots), Some(v)) = (&self.roots, self.f.insts[i].result) {
            roots.store(&mut self.b, v, r);
        }
        self.define(i, r);
        let cont = self.cont(i);
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(fast);
        let r = self.small_op(op, a, b, Some(slow), divisor);
        self.define(i, r);
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
}

//! The optimistic copy of a function or trace with a loop (see the module
//! docs of [`super`]): which instructions may leave it (its exit points),
//! how an exit point leaves for the generic copy, and the hand-over of the
//! values that stay live there.

use cranelift_codegen::ir::{InstBuilder, Value as ClValue};

use flowc_ir::{Function, Operand};
use flowc_lang::ops::Op;

use super::{ix, Lowerer};
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
        self.hand_over(i);
        let r = self.runtime_op(op, &[a, b]);
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

    /// Leaving the optimistic copy at exit point `i`, before the runtime
    /// call: every stack-mapped value live after `i` is copied into a new
    /// definition of its variable, which the generic copy goes on with.
    /// The call is a safepoint, and Cranelift spills a value live across
    /// one at its definition and reloads it at every use: without the
    /// copies the optimistic copy's loop values — live across this cold
    /// call — were stored and reloaded on every iteration of its hot path.
    pub(super) fn hand_over(&mut self, i: flowc_ir::InstId) {
        let (Some(vars), Some(liveness)) = (&self.vars, &self.liveness) else { return };
        if !self.live_at.contains_key(&i) {
            let (f, exit_points, mapped, live_at) = (self.f, &self.exit_points, &self.mapped, &mut self.live_at);
            liveness.live_after_each(f, self.current, |k, live| {
                if exit_points.contains(&k) {
                    let result = f.insts[k].result.map(ix);
                    live_at.insert(k, live.iter_ones().filter(|&v| mapped[v] && Some(v) != result).collect());
                }
                true
            });
        }
        for &k in &self.live_at[&i] {
            let x = self.b.use_var(vars[k]);
            let copy = self.b.ins().iadd_imm_s(x, 0);
            self.b.def_var(vars[k], copy);
        }
    }
}

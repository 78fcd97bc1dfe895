//! Integer fast paths: operations on small integers run inline on their
//! tagged words (`n` is stored as `2n + 1`), with overflow and zero
//! checks leaving for the runtime, which computes any operands; `%` by a
//! positive constant and floored `//` and `%` have their own sequences.
//!
//! `+`, `-`, `*` and comparisons take one branch: their result and
//! whether it is wrong (a tag test failed, or the operation overflowed)
//! are computed on whatever words the operands are — arithmetic on
//! pointers cannot fault — and the branch goes to the slow path or on
//! with the result. The slow path and the join are the only blocks the
//! operation adds: the register allocator's work, and much of what
//! Cranelift allocates, grow with blocks (a hot function of 900
//! additions: 4,498 Cranelift blocks with a branch for each test, 2,737
//! with one; the same running time).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, Value as ClValue};

use flowc_ir::Operand;
use flowc_lang::ops::{Condition, Op};

use super::Lowerer;
use crate::word::{self, ONE, ZERO};

impl Lowerer<'_, '_> {
    /// Whether `op` (on small integers, in any form) is left to the
    /// runtime where code is being lowered: `//` and `%` where the plan
    /// computes no division in line ([`crate::plan::Plan::inline_division`]).
    /// But by a constant power of two, whose inline path is one or two
    /// instructions on the word (`by_power_of_two`): a BF cell's `% 256`
    /// in tier-0 code was a runtime call.
    pub(super) fn divides_through_runtime(&self, op: Op, divisor: Option<i64>) -> bool {
        let bits = divisor.is_some_and(|k| k > 0 && (k as u64).is_power_of_two());
        matches!(op, Op::Div | Op::Mod) && !bits && !self.plan.inline_division(self.is_cold())
    }

    /// Which of the first two operands are certainly small integers.
    pub(super) fn known_small(&self, args: &[Operand]) -> [bool; 2] {
        [0, 1].map(|k| args.get(k).is_some_and(|o| self.small.operand(o)))
    }

    /// `op` on any operands: inline on small integers (`known` says which
    /// operands need no tag test), the runtime otherwise. `table`:
    /// the word table of the constant list a `readlist` reads, when code
    /// may hold its address ([`Lowerer::known_table`]).
    pub(super) fn op(
        &mut self,
        op: Op,
        args: &[ClValue],
        known: [bool; 2],
        divisor: Option<i64>,
        table: Option<super::lists::KnownTable>,
    ) -> ClValue {
        if inline_word(op)
            && known == [true, true]
            && !small_op_can_fail(op, divisor)
            && !self.divides_through_runtime(op, divisor)
        {
            // No slow path at all: a runtime call, even one never reached,
            // is a call the register allocator keeps the values live
            // across it safe from (callee-saved registers, or spills).
            return self.small_op(op, args[0], args[1], divisor);
        }
        if self.is_cold() {
            return self.runtime_op(op, args);
        }
        let join = self.b.create_block();
        self.b.append_block_param(join, types::I64);
        let slow = self.b.create_block();
        if inline_word(op) {
            // Off the straight line only when there is an inline path.
            self.mark_cold(slow);
            let (word, wrong) = self.inline_checked(op, args[0], args[1], known, divisor, slow);
            match wrong {
                Some(wrong) => self.b.ins().brif(wrong, slow, &[], join, &[BlockArg::Value(word)]),
                None => self.b.ins().jump(join, &[BlockArg::Value(word)]),
            };
        } else if op == Op::ReadList {
            self.mark_cold(slow);
            let element = match table {
                Some(t) => self.read_known_list_inline(t, args[1], known[1], slow),
                None => self.read_list_inline(args[0], args[1], known[1], slow),
            };
            self.b.ins().jump(join, &[BlockArg::Value(element)]);
        } else if op == Op::Len {
            self.mark_cold(slow);
            let len = self.list_len_inline(args[0], slow);
            self.b.ins().jump(join, &[BlockArg::Value(len)]);
        } else {
            self.b.ins().jump(slow, &[]);
        }
        self.b.switch_to_block(slow);
        let r = self.runtime_op(op, args);
        self.b.ins().jump(join, &[BlockArg::Value(r)]);
        self.b.switch_to_block(join);
        self.b.block_params(join)[0]
    }

    /// `op` on operands that may not be small integers (`known` says which
    /// are), inline: the result's word if they are, and whether it is wrong
    /// (an operand not a small integer, or an overflow), for the caller to
    /// branch on to `slow`. `+`, `-`, `*` and comparisons are computed on
    /// whatever words the operands are — arithmetic on pointers cannot
    /// fault — so that one branch decides. `//` and `%` test the operands
    /// first and branch to `slow` themselves (a machine division faults on
    /// a zero divisor), and continue in a new block: no wrongness left.
    pub(super) fn inline_checked(
        &mut self,
        op: Op,
        a: ClValue,
        b: ClValue,
        known: [bool; 2],
        divisor: Option<i64>,
        slow: cranelift_codegen::ir::Block,
    ) -> (ClValue, Option<ClValue>) {
        if matches!(op, Op::Div | Op::Mod) {
            if let Some(both) = self.fast_operands(op, a, b, known) {
                let fast = self.b.create_block();
                self.b.ins().brif(both, fast, &[], slow, &[]);
                self.b.switch_to_block(fast);
            }
            return (self.div_mod(op, a, b, Some(slow), divisor), None);
        }
        let (word, overflow) = match op {
            Op::Add | Op::Sub | Op::Mul => self.arith(op, a, b, true),
            _ => (self.small_op(op, a, b, divisor), None),
        };
        let wrong_tag = self.fast_operands(op, a, b, known).map(|ok| self.b.ins().icmp_imm_s(IntCC::Equal, ok, 0));
        (word, [wrong_tag, overflow].into_iter().flatten().reduce(|x, y| self.b.ins().bor(x, y)))
    }

    /// `op` on two small-integer words (the `Word` form: the optimizer
    /// proved no overflow, zero divisor or quotient that is not small can
    /// happen, so no tag, overflow or zero check remains). `divisor` is
    /// `b`'s value when it is a constant in `1..2^30`.
    pub(super) fn small_op(&mut self, op: Op, a: ClValue, b: ClValue, divisor: Option<i64>) -> ClValue {
        match op {
            Op::Add | Op::Sub | Op::Mul => self.arith(op, a, b, false).0,
            Op::Div | Op::Mod => self.div_mod(op, a, b, None, divisor),
            _ => {
                let c = self.b.ins().icmp(int_cc(op), a, b);
                let one = self.konst(ONE.as_i64());
                let zero = self.konst(ZERO.as_i64());
                self.b.ins().select(c, one, zero)
            }
        }
    }

    /// Floored `a // b` or `a % b` on small-integer words; a zero divisor
    /// or a quotient that is not small jumps to `slow` (with none, the
    /// optimizer proved neither happens).
    fn div_mod(
        &mut self,
        op: Op,
        a: ClValue,
        b: ClValue,
        slow: Option<cranelift_codegen::ir::Block>,
        divisor: Option<i64>,
    ) -> ClValue {
        match divisor {
            // A power of two: the word's bits, whatever the sign (two's
            // complement floors), no division and no branch.
            Some(k) if (k as u64).is_power_of_two() => self.by_power_of_two(op, a, k),
            // A positive constant divisor: no zero to divide by, and the
            // quotient is no bigger than the dividend: no slow path.
            Some(k) if op == Op::Mod => self.mod_by_constant(a, b, k),
            Some(_) => self.floor_div_mod(op, a, b, None),
            None => self.floor_div_mod(op, a, b, slow),
        }
    }

    /// `a + b`, `a - b` or `a * b` on small-integer words (`n` is stored
    /// as `2n + 1`, so `b - 1` is `2y`): the result's word and, when
    /// `checked`, whether it overflowed.
    pub(super) fn arith(&mut self, op: Op, a: ClValue, b: ClValue, checked: bool) -> (ClValue, Option<ClValue>) {
        let b1 = self.b.ins().iadd_imm_s(b, -1);
        match (op, checked) {
            (Op::Add, true) => {
                let (r, of) = self.b.ins().sadd_overflow(a, b1);
                (r, Some(of))
            }
            (Op::Add, false) => (self.b.ins().iadd(a, b1), None),
            (Op::Sub, true) => {
                let (r, of) = self.b.ins().ssub_overflow(a, b1);
                (r, Some(of))
            }
            (Op::Sub, false) => (self.b.ins().isub(a, b1), None),
            (_, checked) => {
                let x = self.b.ins().sshr_imm_s(a, 1);
                let (p, of) = if checked {
                    let (p, of) = self.b.ins().smul_overflow(x, b1);
                    (p, Some(of))
                } else {
                    (self.b.ins().imul(x, b1), None)
                };
                (self.b.ins().iadd_imm_s(p, 1), of)
            }
        }
    }

    /// Whether `a` and `b` take the inline path of `op`: two small
    /// integers, or for `==`/`!=` two immediate words (integers and atoms
    /// are equal exactly when their words are).
    /// Operands `known` to be small integers need no test; `None` when
    /// both are known.
    pub(super) fn fast_operands(&mut self, op: Op, a: ClValue, b: ClValue, known: [bool; 2]) -> Option<ClValue> {
        let unknown: Vec<ClValue> = [a, b].into_iter().zip(known).filter(|(_, k)| !k).map(|(w, _)| w).collect();
        if unknown.is_empty() {
            return None;
        }
        if matches!(op, Op::Eq | Op::Ne) {
            // Pointers (0 tag) and unbound words (6) take the slow path.
            let immediate = |l: &mut Self, w: ClValue| {
                let t = l.b.ins().band_imm_s(w, word::TAG_MASK as i64);
                let not_ptr = l.b.ins().icmp_imm_s(IntCC::NotEqual, t, 0);
                let not_unbound = l.b.ins().icmp_imm_s(IntCC::NotEqual, t, word::UNBOUND_TAG as i64);
                l.b.ins().band(not_ptr, not_unbound)
            };
            let tests: Vec<ClValue> = unknown.into_iter().map(|w| immediate(self, w)).collect();
            Some(tests.into_iter().reduce(|x, y| self.b.ins().band(x, y)).expect("one operand is unknown"))
        } else {
            let words = unknown.into_iter().reduce(|x, y| self.b.ins().band(x, y)).expect("one operand is unknown");
            Some(self.b.ins().band_imm_s(words, 1))
        }
    }

    /// Floored `a // 2^m` or `a % 2^m` of a small-integer word `a` (`2n +
    /// 1`) by a constant `k = 2^m` in `1..2^30`, on the word itself: `n % k`
    /// is `n & (k - 1)` and `n // k` is `n >> m` for every `n` in two's
    /// complement, so the remainder's word is `a & (2k - 1)` (the low `m`
    /// bits of `n` and the tag) and the quotient's `(a >> m) | 1` (`a >> m`
    /// is `2(n >> m)` plus the bit the tag may carry in).
    fn by_power_of_two(&mut self, op: Op, a: ClValue, k: i64) -> ClValue {
        if op == Op::Mod {
            self.b.ins().band_imm_s(a, 2 * k - 1)
        } else {
            let shifted = self.b.ins().sshr_imm_s(a, k.trailing_zeros() as i64);
            self.b.ins().bor_imm_s(shifted, 1)
        }
    }

    /// `a % k` for a small-integer word `a` and a constant `k` in `1..2^30`
    /// (the word `b`). When `a` is in `0..2^31` the tagged words work
    /// directly — `(2a + 1) mod 2k` is `2(a mod k) + 1`, the word of
    /// `a mod k` — in one 32-bit remainder by a constant (which Cranelift
    /// turns into a multiply), with no untagging or retagging on the way;
    /// other values take the general path.
    pub(super) fn mod_by_constant(&mut self, a: ClValue, b: ClValue, k: i64) -> ClValue {
        let (quick, general, out) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(out, types::I64);
        // The word 2a + 1 is below 2^32 exactly when 0 <= a < 2^31.
        let small = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, a, 1 << 32);
        self.b.ins().brif(small, quick, &[], general, &[]);
        self.b.switch_to_block(quick);
        let a32 = self.b.ins().ireduce(types::I32, a);
        let k2 = self.b.ins().iconst(types::I32, 2 * k);
        let word = self.b.ins().urem(a32, k2);
        let word = self.b.ins().uextend(types::I64, word);
        self.b.ins().jump(out, &[BlockArg::Value(word)]);
        self.b.switch_to_block(general);
        let word = self.floor_div_mod(Op::Mod, a, b, None);
        self.b.ins().jump(out, &[BlockArg::Value(word)]);
        self.b.switch_to_block(out);
        self.b.block_params(out)[0]
    }

    /// Floored division or modulo of two small-integer words `a`, `b`;
    /// division by zero and a quotient that does not fit a small integer
    /// take `slow` (the runtime raises the error or makes a bignum).
    pub(super) fn floor_div_mod(
        &mut self,
        op: Op,
        a: ClValue,
        b: ClValue,
        slow: Option<cranelift_codegen::ir::Block>,
    ) -> ClValue {
        let x = self.b.ins().sshr_imm_s(a, 1);
        let y = self.b.ins().sshr_imm_s(b, 1);
        if let Some(slow) = slow {
            let nonzero = self.b.create_block();
            self.b.ins().brif(y, nonzero, &[], slow, &[]);
            self.b.switch_to_block(nonzero);
        }
        // Non-negative operands below 2^32 (the common case) divide in 32
        // bits, several times faster than a 64-bit division (as LLVM's
        // "bypass slow division" does); no floor adjustment is needed.
        let both = self.b.ins().bor(x, y);
        let high = self.b.ins().ushr_imm_s(both, 32);
        let narrow = self.b.create_block();
        let wide = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(done, types::I64);
        self.b.ins().brif(high, wide, &[], narrow, &[]);
        self.b.switch_to_block(narrow);
        let x32 = self.b.ins().ireduce(types::I32, x);
        let y32 = self.b.ins().ireduce(types::I32, y);
        let r32 = if op == Op::Mod { self.b.ins().urem(x32, y32) } else { self.b.ins().udiv(x32, y32) };
        let r64 = self.b.ins().uextend(types::I64, r32);
        self.b.ins().jump(done, &[BlockArg::Value(r64)]);
        self.b.switch_to_block(wide);
        // Both are 63-bit, so the machine division cannot overflow.
        let r = self.b.ins().srem(x, y);
        // Truncation rounds toward zero; floor differs when the remainder is
        // not zero and the operands' signs differ.
        let r_nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
        let signs = self.b.ins().bxor(x, y);
        let differ = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, signs, 0);
        let adjust = self.b.ins().band(r_nonzero, differ);
        let wide_result = if op == Op::Mod {
            let ry = self.b.ins().iadd(r, y);
            self.b.ins().select(adjust, ry, r)
        } else {
            let q = self.b.ins().sdiv(x, y);
            let q1 = self.b.ins().iadd_imm_s(q, -1);
            self.b.ins().select(adjust, q1, q)
        };
        self.b.ins().jump(done, &[BlockArg::Value(wide_result)]);
        self.b.switch_to_block(done);
        let result = self.b.block_params(done)[0];
        let doubled = self.b.ins().ishl_imm_s(result, 1);
        if let (Op::Div, Some(slow)) = (op, slow) {
            // Only -2^62 / -1 leaves the small integers.
            let back = self.b.ins().sshr_imm_s(doubled, 1);
            let fits = self.b.ins().icmp(IntCC::Equal, back, result);
            let ok = self.b.create_block();
            self.b.ins().brif(fits, ok, &[], slow, &[]);
            self.b.switch_to_block(ok);
        }
        self.b.ins().bor_imm_s(doubled, 1)
    }
}

/// Operations with an inline path on small integers: the two-operand
/// arithmetic `small_op` implements and the comparisons. Named, not derived
/// from the op table's classes: an operation added to the table has no
/// inline path until one is written, and takes the runtime's.
pub(crate) fn inline_word(op: Op) -> bool {
    matches!(op, Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Mod) || op.is_comparison()
}

/// Whether `small_op` on two small integers can need the slow path: an
/// overflow, a zero divisor (none when the divisor is a positive constant),
/// a quotient that is not small.
pub(super) fn small_op_can_fail(op: Op, divisor: Option<i64>) -> bool {
    match op {
        Op::Add | Op::Sub | Op::Mul => true,
        Op::Div | Op::Mod => divisor.is_none(),
        _ => false,
    }
}

/// The signed condition of a comparison on small-integer words (the tag
/// preserves order).
pub(super) fn int_cc(op: Op) -> IntCC {
    match op.condition().expect("a comparison") {
        Condition::Less => IntCC::SignedLessThan,
        Condition::LessEqual => IntCC::SignedLessThanOrEqual,
        Condition::Greater => IntCC::SignedGreaterThan,
        Condition::GreaterEqual => IntCC::SignedGreaterThanOrEqual,
        Condition::Equal => IntCC::Equal,
        Condition::NotEqual => IntCC::NotEqual,
    }
}

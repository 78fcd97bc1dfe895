//! Which values of a function are certainly small integers (inline 63-bit
//! words), read off the IR alone, so the lowering can drop tag tests the
//! optimizer's forms do not already cover.
//!
//! The optimizer states what it proved in each operation's form (`add.word`
//! has small operands and a small result). Some facts follow from the
//! shape of the IR even where no form says so, and this module collects
//! them:
//!
//! - a comparison (`lt`, `eq`, …) that returns, returns 0 or 1;
//! - `mod` by a small integer returns something smaller in magnitude than
//!   the divisor (or fails), and `len` returns a list's length;
//! - a `Word`-form arithmetic operation returns a small integer;
//! - a copy (`same`, `check_bound`) of a small integer is one, and so is a
//!   phi all of whose inputs are (solved optimistically, so loop-carried
//!   values such as Euclid's divisor qualify);
//! - an integer constant that fits 63 bits is one;
//! - a result whose next instruction is `Word`-form arithmetic reading it
//!   is one: that form says its operands were proven small, and with no
//!   instruction between, nothing refined what was proven there (a BF
//!   `+`'s `v = get c, v` before `add.word v, 1`: its word is then no
//!   root, and baseline code keeps it in a register, unstored).
//!
//! Parameters, calls, field reads and everything else may be anything.
//!
//! [`Small::optimistic`] adds two assumptions, for the optimistic copy of a
//! function: arithmetic results are small (code that finds otherwise
//! leaves that copy), and so are the parameters arithmetic, comparisons
//! and phis read ([`Small::assumed_params`], which the copy's entry
//! checks).

use flowc_ir::{Function, InstId, InstKind, Operand};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::Value;

use crate::word;
use flowc_ir::ix;

/// Per value (by raw index): certainly a small integer.
pub struct Small(Vec<bool>);

impl Small {
    pub fn of(f: &Function) -> Small {
        Small::solve(f, None)
    }

    /// What is small in the optimistic copy of `f` (see `lower`): there,
    /// arithmetic with an inline path (`add`, `sub`, `mul`, `//`, `%`) is
    /// assumed to stay small, because an overflow, or an operand that is
    /// not a small integer, leaves for the generic copy.
    /// `assumed` are the parameters it takes to be small
    /// ([`Small::assumed_params`]).
    pub fn optimistic(f: &Function, assumed: &[flowc_ir::ValueId]) -> Small {
        Small::solve(f, Some(assumed))
    }

    /// The parameters the optimistic copy of `f` takes to be small
    /// integers, which its entry checks: those that are operands of
    /// arithmetic or comparisons, or inputs of phis.
    pub fn assumed_params(f: &Function) -> Vec<flowc_ir::ValueId> {
        let mut wanted = vec![false; f.values.len()];
        for (_, i) in f.all_insts() {
            let kind = &f.insts[i].kind;
            let reads_numbers = match kind {
                InstKind::Op { op: Operator::Known(op), .. } => Small::speculates(kind) || op.is_ordering(),
                InstKind::Phi(_) => true,
                _ => false,
            };
            if reads_numbers {
                for v in kind.operands().filter_map(Operand::as_value) {
                    if let Some(w) = wanted.get_mut(ix(v)) {
                        *w = true;
                    }
                }
            }
        }
        f.params.iter().copied().filter(|p| wanted.get(ix(*p)).copied().unwrap_or(false)).collect()
    }

    /// Whether the optimistic copy speculates on instruction `kind`: an
    /// arithmetic operation with an inline path ([`crate::lower::inline_word`])
    /// whose result it takes to be small. (An operation added to the op
    /// table has none until one is written: the runtime computes it, in
    /// both copies.)
    pub fn speculates(kind: &InstKind) -> bool {
        matches!(
            kind,
            InstKind::Op { op: Operator::Known(op), args, form }
                if op.is_arithmetic() && crate::lower::inline_word(*op) && args.len() == 2 && *form != Form::Word
        )
    }

    /// `assumed`: the parameters of the optimistic copy (none: the
    /// generic one, which assumes nothing).
    fn solve(f: &Function, assumed: Option<&[flowc_ir::ValueId]>) -> Small {
        let mut small = vec![false; f.values.len()];
        let optimistic = assumed.is_some();
        for &p in assumed.unwrap_or_default() {
            if let Some(s) = small.get_mut(ix(p)) {
                *s = true;
            }
        }
        let insts: Vec<_> = f.all_insts().map(|(_, i)| i).collect();
        // Optimistic: every instruction result starts small; a result that
        // turns out not to be is demoted once, and only the instructions
        // reading it are looked at again (a worklist, so linear).
        let mut readers: Vec<Vec<InstId>> = vec![Vec::new(); f.values.len()];
        for &i in &insts {
            if let Some(v) = f.insts[i].result {
                small[ix(v)] = true;
            }
            for o in f.insts[i].kind.operands() {
                if let Some(r) = o.as_value().and_then(|v| readers.get_mut(ix(v))) {
                    r.push(i);
                }
            }
        }
        let proven = Small::proven_by_next(f);
        let mut s = Small(small);
        let mut work = insts;
        while let Some(i) = work.pop() {
            let Some(v) = f.insts[i].result else { continue };
            let kind = &f.insts[i].kind;
            if s.0[ix(v)]
                && !(optimistic && Small::speculates(kind))
                && !s.result_is_small(kind)
                && proven.binary_search(&i).is_err()
            {
                s.0[ix(v)] = false;
                work.extend(&readers[ix(v)]);
            }
        }
        s
    }

    /// The instructions (sorted) whose result the next instruction, a
    /// `Word`-form arithmetic operation, reads: proven small there.
    fn proven_by_next(f: &Function) -> Vec<InstId> {
        let mut out = Vec::new();
        for &b in &f.layout {
            for w in f.blocks[b].insts.windows(2) {
                let Some(v) = f.insts[w[0]].result else { continue };
                let InstKind::Op { op: Operator::Known(op), form: Form::Word, args } = &f.insts[w[1]].kind else {
                    continue;
                };
                let arithmetic = matches!(op, Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Mod | Op::Neg);
                if arithmetic && args.contains(&Operand::Value(v)) {
                    out.push(w[0]);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Whether `o` is certainly a small integer.
    pub fn operand(&self, o: &Operand) -> bool {
        match o {
            Operand::Const(Value::Int(k)) => word::small(*k).is_some(),
            Operand::Const(_) => false,
            Operand::Value(v) => self.0.get(ix(*v)).copied().unwrap_or(false),
        }
    }

    fn result_is_small(&self, kind: &InstKind) -> bool {
        match kind {
            InstKind::Op { op: Operator::Known(op), args, form } => match op {
                op if op.is_comparison() || *op == Op::Len => true,
                Op::Same => self.operand(&args[0]),
                Op::Mod => *form == Form::Word || self.operand(&args[1]),
                Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Neg => *form == Form::Word,
                _ => false,
            },
            InstKind::CheckBound(o) => self.operand(o),
            InstKind::Phi(inputs) => inputs.iter().all(|(_, o)| self.operand(o)),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_of(text: &str) -> Vec<String> {
        small_in(text, Small::of)
    }

    fn small_in(text: &str, solve: fn(&Function) -> Small) -> Vec<String> {
        let m = flowc_ir::parse::module("test", text).unwrap();
        let f = &m.functions[0];
        let s = solve(f);
        f.all_insts()
            .filter_map(|(_, i)| f.insts[i].result)
            .filter(|v| s.operand(&Operand::Value(*v)))
            .map(flowc_ir::print::value_ref)
            .collect()
    }

    #[test]
    fn loop_carried_remainders_and_comparisons_are_small() {
        // Euclid: `b` is 360 or a remainder by `b`; `a` may be anything
        // `mul.int` makes, so neither `a` nor the sum is known small.
        let text = "main start(v0:n) {\nb0 start:\n    v5:a = mul.int v0, 7\n    jump b3\nb3 inner:\n    \
                    v6:b = phi [b0: 360, b4: v13]\n    v8:a = phi [b0: v5, b4: v6]\n    branch v6, b4, b5\n\
                    b4 step:\n    v13:t = mod.int v8, v6\n    jump b3\nb5 found:\n    v9:c = lt v8, v0\n    \
                    v10:s = add.int v8, 1\n    print v9\n}\n";
        assert_eq!(small_of(text), ["v6", "v13", "v9"]);
    }

    #[test]
    fn a_result_the_next_word_arithmetic_reads_is_small() {
        // A BF `+`: the cell's value is read, then added to in word form,
        // which says the read was proven small. The second read is only
        // stored, and a read one instruction before its word use is not
        // taken (what lies between could have refined it).
        let text = "main start(v0:c) {\nb0 start:\n    v1:v = get v0, v\n    v2:v = add.word v1, 1\n    \
                    v3:v = mod.word v2, 256\n    set v0, v, v3\n    v4:w = get v0, w\n    set v0, z, v4\n    \
                    v5:x = get v0, x\n    v6:y = get v0, y\n    v7:x = add.word v5, 1\n    print v7\n}\n";
        assert_eq!(small_of(text), ["v1", "v2", "v3", "v7"]);
    }

    #[test]
    fn the_optimistic_copy_takes_arithmetic_and_what_it_feeds_as_small() {
        // A running total: `mul.int` and `add.int` may leave the small
        // integers, so only the comparison is small for certain; the
        // optimistic copy assumes both results small, and so the total's
        // phi too. (Only instruction results are listed: the parameter
        // `v0`, which `add.int` reads, is assumed small there as well.)
        let text = "main start(v0:n) {\nb0 start:\n    jump b1\nb1 loop:\n    \
                    v1:t = phi [b0: 1, b2: v4]\n    v2:c = lt v1, v0\n    branch v2, b2, b3\n\
                    b2 body:\n    v3:t = mul.int v1, 3\n    v4:t = add.int v3, v0\n    jump b1\n\
                    b3 done:\n    print v1\n}\n";
        assert_eq!(small_of(text), ["v2"]);
        let optimistic = |f: &Function| Small::optimistic(f, &Small::assumed_params(f));
        assert_eq!(small_in(text, optimistic), ["v1", "v2", "v3", "v4"]);
        let m = flowc_ir::parse::module("test", text).unwrap();
        let assumed: Vec<String> =
            Small::assumed_params(&m.functions[0]).into_iter().map(flowc_ir::print::value_ref).collect();
        assert_eq!(assumed, ["v0"]);
    }
}

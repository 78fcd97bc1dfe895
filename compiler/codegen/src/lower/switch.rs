//! Dispatch chains as switches: a chain of equality tests of one value
//! against integer constants — how a program in this language dispatches,
//! having no switch (`t0: c = op == 0; if c goto a0 else goto t1`,
//! `t1: c = op == 1; ...`) — lowered as one Cranelift `Switch` (jump
//! tables over runs of consecutive constants, a binary search between
//! them) instead of a compare and branch per test, where the chain has
//! [`MIN_TESTS`] tests or more: a register VM's 40 opcodes cost one
//! indexed jump, not 20 compares on average. Only in hot code, and not in
//! a huge function split into regions (whose edges store phis per piece).
//!
//! A chain is found in the IR once per function ([`chains`]): its head is
//! a block whose last instruction is an `eq.word` of a value and an
//! integer constant that its branch tests (a fused comparison); each next
//! link is the previous test's `else` block, holding nothing but such a
//! test of the same value (no phis, no other instruction), reached only
//! from there, and no loop header. Constants are distinct, and a test's
//! `then` block is none of the chain's. Word equality with an integer's
//! word holds only for that integer, so the switch runs on the integer
//! (the word shifted, its tag tested first: any other value goes where
//! no test holds) and jumps where the first equal test would have gone.
//! The links after the head are still lowered, and are unreachable.
//!
//! A trace holds such a chain as guards: the path it recorded through an
//! interpreter's dispatch tested the opcode against each constant before
//! its own, and each test became a `guard_false` of an `eq` whose exit
//! leads, once hot, to the bridge for that opcode (`guard_false c1, r
//! else x1; guard_false c2, r else x2; ...`), the last often a
//! `guard_true` of the trace's own opcode. A run of [`MIN_GUARDS`] such
//! guards of one value in a block ([`guard_chain`]) is lowered as one
//! switch too: each constant jumps to its guard's exit, the last guard's
//! constant goes on, and any other value goes where no guard fails (or
//! out by the last guard's exit). The exits are the guards' own, made in
//! the same order: their numbers, and the bridges linked to them, are
//! the same as one by one. A dispatch on an object's class is a run of
//! `guard_not_class` of one value (ending with a `guard_class`): the
//! object is tested once and its class searched among the run's
//! classes (a binary search in baseline code, a `Switch` in Cranelift's),
//! anything else going where no class is its.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use flowc_ir::{BlockId, Function, GuardKind, InstId, InstKind, Operand, Terminator, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::Value;

use crate::word;

/// A chain of at least [`MIN_TESTS`] tests.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Chain {
    /// The value every link tests.
    pub value: ValueId,
    /// Per link, in order: the constant, the link's block, and where the
    /// link goes when its test holds.
    pub cases: Vec<(i64, BlockId, BlockId)>,
    /// The last link's block, and where it goes when no test holds.
    pub default: (BlockId, BlockId),
}

/// The fewest tests lowered as a switch. A chain tested one by one is
/// cheap where the first tests hold most often, and its branches are
/// predicted: the BF interpreter's chain of 8 (`+ - > <` first) ran its
/// programs 1.4-1.5 times slower as a switch; a register VM's dispatch of
/// 16 opcodes came out even, of 40 in 0.81-0.86 of the time (its
/// opcodes in program order, or computed at random).
pub(crate) const MIN_TESTS: usize = 24;

/// The fewest guards of a trace lowered as a switch ([`guard_chain`]).
/// Every round of the trace's own path runs all of them, where a chain in
/// a function stops at the first test that holds: a register VM's traces
/// hold chains of 12-13 guards each (their bridges the next ones).
pub(crate) const MIN_GUARDS: usize = 8;

/// A run of guards of one value against integer constants, or of its
/// class against classes, in a block of a trace ([`guard_chain`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct GuardChain {
    /// The value every guard tests.
    pub value: ValueId,
    /// Whether the guards test the value's class (`guard_not_class`,
    /// ending with a `guard_class`; the constants are the classes'
    /// symbol indices) rather than the value.
    pub classes: bool,
    /// The guards that fail where the value is their constant
    /// (`guard_false` of its `eq`), in order, with their constants.
    pub fails: Vec<(i64, InstId)>,
    /// The guard that ends the run, holding only where the value is its
    /// constant (`guard_true` of its `eq`), if one does.
    pub holds: Option<(i64, InstId)>,
    /// How many of the block's instructions the run is (an `eq` and its
    /// guard per test; a guard per class).
    pub len: usize,
}

impl GuardChain {
    /// The run's guards in order: the failing ones, then the holding one.
    pub fn guards(&self) -> impl Iterator<Item = InstId> + '_ {
        self.fails.iter().chain(&self.holds).map(|&(_, g)| g)
    }

    /// Where each constant goes, the first guard of it failing first:
    /// `Some(j)` the exit of the `j`-th of [`GuardChain::guards`], `None`
    /// on past the run (the holding guard's constant); and where any
    /// other value goes: the holding guard's exit, or on.
    pub fn targets(&self) -> (Vec<(i64, Option<usize>)>, Option<usize>) {
        let mut taken = HashSet::default();
        let mut cases = Vec::new();
        for (j, &(k, _)) in self.fails.iter().enumerate() {
            if taken.insert(k) {
                cases.push((k, Some(j)));
            }
        }
        let mut otherwise = None;
        if let Some((k, _)) = self.holds {
            if taken.insert(k) {
                cases.push((k, None));
            }
            otherwise = Some(self.fails.len());
        }
        (cases, otherwise)
    }
}

/// The guard chain that starts at `insts[0]`, if one does: pairs of an
/// `eq` of a value and an integer constant (compared as words, `.word`:
/// the value may be of any kind, and equals the constant only if it is
/// that integer; the constant below 2^29 in size), used by nothing
/// but the guard right after it, a
/// `guard_false` of it, ending where the pairs end or with a `guard_true`
/// pair; or a `guard_not_class` of a value per class, ending where they
/// end or with a `guard_class` of it (how a program in this language
/// dispatches on an object's class: `if p is c0 goto ... else goto t1`);
/// at least [`MIN_GUARDS`] of them, all of one value.
fn guard_chain(f: &Function, insts: &[InstId], uses: &[u32]) -> Option<GuardChain> {
    let pair = |k: usize| -> Option<(ValueId, i64, InstId, bool)> {
        let (&eq, &guard) = (insts.get(k)?, insts.get(k + 1)?);
        let InstKind::Op { op: Operator::Known(Op::Eq), args, form: Form::Word | Form::Int } = &f.insts[eq].kind else {
            return None;
        };
        let (v, c) = match args.as_slice() {
            [Operand::Value(v), Operand::Const(Value::Int(c))] | [Operand::Const(Value::Int(c)), Operand::Value(v)] => {
                (*v, *c)
            }
            _ => return None,
        };
        // (A constant whose word is a 32-bit immediate, as opcodes are:
        // the baseline compiler compares with it.)
        if c.unsigned_abs() >= 1 << 29 {
            return None;
        }
        let result = f.insts[eq].result?;
        if uses.get(flowc_ir::ix(result)) != Some(&1) {
            return None;
        }
        let fails = match &f.insts[guard].kind {
            InstKind::Guard { kind: GuardKind::False(Operand::Value(x)), .. } if *x == result => true,
            InstKind::Guard { kind: GuardKind::True(Operand::Value(x)), .. } if *x == result => false,
            _ => return None,
        };
        Some((v, c, guard, fails))
    };
    let class = |k: usize| -> Option<(ValueId, i64, InstId, bool)> {
        let &g = insts.get(k)?;
        match &f.insts[g].kind {
            // (A class's index is an `i32` immediate of baseline code.)
            InstKind::Guard { kind: GuardKind::NotClass(Operand::Value(v), c), .. } if c.index() <= i32::MAX as u32 => {
                Some((*v, i64::from(c.index()), g, true))
            }
            InstKind::Guard { kind: GuardKind::Class(Operand::Value(v), c), .. } if c.index() <= i32::MAX as u32 => {
                Some((*v, i64::from(c.index()), g, false))
            }
            _ => None,
        }
    };
    run_of(2, false, pair).or_else(|| run_of(1, true, class))
}

/// The run that `test` finds from position 0 on, a test every `width`
/// instructions (`test(k)`: the value tested at position `k`, the
/// constant, the guard, and whether the guard fails on the constant or
/// holds only on it), if it starts with a failing guard and has at least
/// [`MIN_GUARDS`] tests of one value.
fn run_of(
    width: usize,
    classes: bool,
    test: impl Fn(usize) -> Option<(ValueId, i64, InstId, bool)>,
) -> Option<GuardChain> {
    let (value, ..) = test(0).filter(|t| t.3)?;
    let mut fails = Vec::new();
    let mut holds = None;
    let mut k = 0;
    while let Some((_, c, guard, fail)) = test(k).filter(|t| t.0 == value) {
        k += width;
        if !fail {
            holds = Some((c, guard));
            break;
        }
        fails.push((c, guard));
    }
    let tests = fails.len() + usize::from(holds.is_some());
    (tests >= MIN_GUARDS).then_some(GuardChain { value, classes, fails, holds, len: k })
}

/// Every guard chain of `f` ([`guard_chain`]), by its first instruction.
/// (`uses`: uses per value, as [`super::count_uses`] counts them.)
pub(crate) fn guard_chains(f: &Function, uses: &[u32]) -> HashMap<InstId, GuardChain> {
    let mut out = HashMap::default();
    for &b in &f.layout {
        let insts = &f.blocks[b].insts;
        let mut k = 0;
        while k < insts.len() {
            match guard_chain(f, &insts[k..], uses) {
                Some(chain) => {
                    let len = chain.len;
                    out.insert(insts[k], chain);
                    k += len;
                }
                None => k += 1,
            }
        }
    }
    out
}

/// The test of block `b`: its fused `eq.word` of a value and an integer
/// constant (`uses`: uses per value, as [`super::fused_compare`] reads
/// them), as the value, the constant, and the branch's `then` and `else`.
fn test(f: &Function, b: BlockId, uses: &[u32]) -> Option<(ValueId, i64, BlockId, BlockId)> {
    let i = super::fused_compare(f, b, uses)?;
    let InstKind::Op { op: Operator::Known(Op::Eq), args, form: Form::Word } = &f.insts[i].kind else { return None };
    let (v, k) = match args.as_slice() {
        [Operand::Value(v), Operand::Const(Value::Int(k))] | [Operand::Const(Value::Int(k)), Operand::Value(v)] => {
            (*v, *k)
        }
        _ => return None,
    };
    word::small(k)?;
    let Terminator::Branch { then_block, else_block, .. } = &f.blocks[b].term else { return None };
    Some((v, k, *then_block, *else_block))
}

/// Whether block `b` is a link after a chain's head: nothing but a test
/// of `value`, reached from `prev` alone, no loop header.
fn link(f: &Function, cfg: &flowc_ir::cfg::Cfg, headers: &[bool], b: BlockId, prev: BlockId) -> bool {
    let data = &f.blocks[b];
    data.insts.len() == 1 && data.phis.is_empty() && cfg.preds(b) == [prev] && !headers[flowc_ir::ix(b)]
}

/// The chains of `f`, by head block (`headers`: by raw block index,
/// whether a block is a loop header).
pub(crate) fn chains(
    f: &Function,
    cfg: &flowc_ir::cfg::Cfg,
    headers: &[bool],
    uses: &[u32],
) -> HashMap<BlockId, Chain> {
    let mut out = HashMap::default();
    if f.kind == flowc_ir::FunctionKind::Trace {
        return out;
    }
    for &head in &f.layout {
        let Some((value, k, then_block, mut next)) = test(f, head, uses) else { continue };
        // A link of a chain headed above is no head.
        let continues = match cfg.preds(head) {
            [p] => {
                test(f, *p, uses).is_some_and(|(v, _, _, e)| v == value && e == head) && link(f, cfg, headers, head, *p)
            }
            _ => false,
        };
        if continues {
            continue;
        }
        let mut cases = vec![(k, head, then_block)];
        // The chain's links and constants so far (sets: a chain may be
        // thousands of tests long).
        let mut links: HashSet<BlockId> = HashSet::from_iter([head]);
        let mut constants: HashSet<i64> = HashSet::from_iter([k]);
        let mut last = head;
        while let Some((v, k, then_block, else_block)) = test(f, next, uses) {
            let known = links.contains(&next) || links.contains(&then_block) || constants.contains(&k);
            if v != value || known || !link(f, cfg, headers, next, last) {
                break;
            }
            cases.push((k, next, then_block));
            links.insert(next);
            constants.insert(k);
            last = next;
            next = else_block;
        }
        // A `then` that is a later link: not a chain of exclusive cases.
        if cases.len() >= MIN_TESTS && !cases.iter().any(|(_, _, to)| links.contains(to)) && !links.contains(&next) {
            out.insert(head, Chain { value, cases, default: (last, next) });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first block's guard chain from its first instruction.
    fn chain_of(text: &str) -> Option<GuardChain> {
        let m = flowc_ir::parse::module("t", text).unwrap_or_else(|e| panic!("{e}"));
        let f = &m.functions[0];
        let uses = super::super::count_uses(f);
        guard_chain(f, &f.blocks[f.entry].insts, &uses)
    }

    /// A trace of `n` guards `guard_false (op == k)`, with `extra` after
    /// them, then an exit.
    fn guards(n: usize, extra: &str) -> String {
        let mut body = String::new();
        for k in 0..n {
            body += &format!("    v{}:c = eq.word v0, {k}\n    guard_false v{}, r0 else t{k}\n", 10 + k, 10 + k);
        }
        format!(
            "trace t(v0:op, v1:x) {{\nb0:\n{body}{extra}    exit r0 to done\n\
             resume r0 {{\n    frame [op = v0, x = v1]\n}}\n}}\n"
        )
    }

    #[test]
    fn a_chain_is_the_run_of_guards_on_one_value_up_to_the_first_other_instruction() {
        // Ended by a guard_true of the value, which it takes in.
        let c = chain_of(&guards(8, "    v2:c = eq.word v0, 40\n    guard_true v2, r0 else other\n")).expect("a chain");
        assert_eq!((c.fails.len(), c.holds.map(|h| h.0), c.len), (8, Some(40), 18));
        // Ended by a test of another value, which it leaves out.
        let c = chain_of(&guards(9, "    v2:c = eq.word v1, 3\n    guard_false v2, r0 else other\n")).expect("a chain");
        assert_eq!((c.fails.len(), c.holds, c.len), (9, None, 18));
        // Too short.
        assert_eq!(chain_of(&guards(MIN_GUARDS - 1, "")), None);
        // A comparison read again (here by the exit's record) is no link:
        // the chain ends before it, too short then.
        let text = guards(8, "").replace("frame [op = v0, x = v1]", "frame [op = v0, x = v1, c = v17]");
        assert_eq!(chain_of(&text), None);
    }

    #[test]
    fn a_run_of_class_guards_is_a_chain_of_classes() {
        let mut body = String::new();
        for k in 0..9 {
            body += &format!("    guard_not_class v0, c{k}, r0 else a{k}\n");
        }
        let text = |last: &str| {
            format!(
                "trace t(v0:p) {{\nb0:\n{body}{last}    exit r0 to done\nresume r0 {{\n    frame [p = v0]\n}}\n}}\n"
            )
        };
        let c = chain_of(&text("    guard_class v0, c9, r0 else w\n")).expect("a chain");
        let c9 = i64::from(flowc_lang::Symbol::intern("c9").index());
        assert_eq!((c.classes, c.fails.len(), c.holds.map(|h| h.0), c.len), (true, 9, Some(c9), 10));
        // A guard of another value ends it.
        let c = chain_of(&text("    guard_class v1, c9, r0 else w\n").replace("v0:p", "v0:p, v1:q")).expect("a chain");
        assert_eq!((c.fails.len(), c.holds, c.len), (9, None, 9));
    }
}

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

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use flowc_ir::{BlockId, Function, InstKind, Operand, Terminator, ValueId};
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

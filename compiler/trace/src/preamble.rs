//! A loop trace as two pieces of code, its preamble and its loop (PyPy's
//! preamble and the loop behind its target token), so that bridges can
//! jump into the loop with its objects still virtual.
//!
//! The optimizer leaves a peeled loop trace as three blocks: `b0` (the
//! speculation checks), `b1` (the first iteration, which allocates the
//! objects the loop carries) and `b2` (the loop, whose phis carry the
//! variables and the fields of the objects kept virtual — never the
//! objects). [`split`] makes
//! - the *preamble*: `b0` and `b1`, ending with `jump_trace` to the loop,
//!   passing what the loop reads from before it: its phis' entry values
//!   and the loop-invariant values the first iteration computed;
//! - the *loop*: a trace whose parameters are those values, an entry
//!   block that only jumps, and a copy of `b2`.
//!
//! The interpreter enters the preamble. A bridge or entry trace that ends
//! by jumping to the loop trace instead gets a copy of the preamble
//! spliced in ([`inline`]) and is optimized with it: the first
//! iteration's reads of objects the bridge still has virtual fold, its
//! checks on values the bridge knows drop, and the bridge ends by jumping
//! into the loop with field values — no object is allocated on the way
//! round, however often the bridge runs. The preamble is valid from any
//! state (a loop trace assumes nothing of its parameters but what its own
//! guards check), so running a copy of it from the bridge's state
//! establishes everything the loop assumes of the values it is passed.

use flowc_ir::{BlockId, Function, FunctionKind, InstKind, Operand, PhiInputs, Terminator, ValueDef};
use flowc_lang::Symbol;

use crate::copy::{free_values, Copier};

/// A loop trace split in two ([`split`]).
#[derive(Clone, Debug)]
pub struct Split {
    pub preamble: Function,
    pub body: Function,
}

/// The blocks of an optimized, peeled loop trace: preheader, first
/// iteration, loop.
fn peeled(f: &Function) -> Option<(BlockId, BlockId, BlockId)> {
    let &[b0, b1, b2] = f.layout.as_slice() else { return None };
    let straight = |b: BlockId, to: BlockId| f.blocks[b].term == Terminator::Jump(to) && f.blocks[b].phis.is_empty();
    (b0 == f.entry && straight(b0, b1) && straight(b1, b2) && f.blocks[b2].term == Terminator::Jump(b2))
        .then_some((b0, b1, b2))
}

/// Splits optimized loop trace `f` into its preamble (named like `f`) and
/// its loop, named `body`; `None` when `f` is not a peeled loop.
pub fn split(f: &Function, body: Symbol) -> Option<Split> {
    let (_, b1, b2) = peeled(f)?;
    let inputs = free_values(f, b2);
    // The loop: parameters for what it reads from before it.
    let mut l = Function::new(FunctionKind::Trace, body);
    let mut copier = Copier::new();
    for (k, &v) in inputs.iter().enumerate() {
        let p = copier.fresh(f, &mut l, v, ValueDef::Param(k as u32));
        l.params.push(p);
    }
    let head = l.blocks.alloc(flowc_ir::BlockData {
        name: f.blocks[b2].name,
        phis: Default::default(),
        insts: Default::default(),
        term: Terminator::Jump(l.entry),
    });
    l.layout.push(head);
    l.blocks[l.entry].term = Terminator::Jump(head);
    let phis: Vec<_> = f.blocks[b2]
        .phis
        .iter()
        .map(|&p| {
            let r = f.insts[p].result.expect("phis have results");
            let inst = l.insts.alloc(flowc_ir::InstData { kind: InstKind::Phi(PhiInputs::new()), result: None });
            let v = copier.fresh(f, &mut l, r, ValueDef::Inst(inst));
            l.insts[inst].result = Some(v);
            (p, inst)
        })
        .collect();
    let insts: Vec<_> = f.blocks[b2].insts.iter().map(|&i| copier.inst(f, &mut l, i)).collect();
    for &(p, q) in &phis {
        let InstKind::Phi(ins) = &f.insts[p].kind else { unreachable!("phis") };
        let mapped = ins.iter().map(|(from, o)| (if *from == b2 { head } else { l.entry }, copier.operand(o)));
        l.insts[q].kind = InstKind::Phi(mapped.collect());
    }
    l.blocks[head].phis = phis.iter().map(|&(_, q)| q).collect();
    l.blocks[head].insts = insts.into();
    l.blocks[head].term = Terminator::Jump(head);
    // The preamble: the first iteration jumps to the loop.
    let mut pre = f.clone();
    flowc_passes::edit::retain_blocks(&mut pre, |b| b != b2);
    let args = inputs.into_iter().map(Operand::Value).collect();
    pre.blocks[b1].term = Terminator::JumpTrace { target: body, args };
    Some(Split { preamble: pre, body: l })
}

/// Replaces the `jump_trace` to `preamble` that ends straight trace `f`
/// with a copy of the preamble (its parameters the jump's arguments), so
/// that `f` ends by jumping where the preamble does. Returns whether it
/// did (`f` must end with such a jump, and the preamble be straight).
pub fn inline(f: &mut Function, preamble: &Function) -> bool {
    let Some(&last) = f.layout.last() else { return false };
    let Terminator::JumpTrace { target, args } = f.blocks[last].term.clone() else { return false };
    let straight = preamble.layout.iter().all(|&b| preamble.blocks[b].phis.is_empty())
        && preamble.layout.windows(2).all(|w| preamble.blocks[w[0]].term == Terminator::Jump(w[1]));
    let Some(&end) = preamble.layout.last() else { return false };
    if target != preamble.name || args.len() != preamble.params.len() || !straight {
        return false;
    }
    let Terminator::JumpTrace { target: to, args: out } = &preamble.blocks[end].term else { return false };
    let mut copier = Copier::new();
    for (&p, a) in preamble.params.iter().zip(&args) {
        copier.map(p, a.clone());
    }
    for &b in &preamble.layout {
        for &i in &preamble.blocks[b].insts {
            let c = copier.inst(preamble, f, i);
            f.blocks[last].insts.push(c);
        }
    }
    let out = out.iter().map(|o| copier.operand(o)).collect();
    f.blocks[last].term = Terminator::JumpTrace { target: *to, args: out };
    true
}

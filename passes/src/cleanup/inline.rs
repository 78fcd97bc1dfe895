//! Inlining one call: the callee's blocks are copied into the caller
//! between the call's block and a new continuation block.
//!
//! The block holding the call is split after it; the copy of the callee's
//! entry takes the call's place; every `return x` becomes a jump to the
//! continuation, where a phi merges the returned operands (or, with one
//! return, the operand replaces the call's result). Parameters are
//! replaced by the arguments. The call's frame (and those the callee's
//! own inlined calls made) no longer counts toward the run's call depth:
//! propagate marks calls of functions that call others only where those
//! frames stay far below any depth limit; a leaf's one frame may be the
//! one that would have exceeded it, in a recursion that reaches its limit
//! exactly at the leaf's call.

use std::collections::HashMap;

use flowc_ir::{BlockId, Function, InstData, InstId, InstKind, Operand, Terminator, ValueData, ValueDef, ValueId};

use crate::edit::{self, Substitution};

/// What the inlines of one caller leave to do once after all of them:
/// the calls' results to replace, the new blocks to place in the layout.
pub struct Pending {
    subst: Substitution,
    placements: edit::Placements,
}

impl Pending {
    pub fn new(f: &Function) -> Pending {
        Pending { subst: Substitution::new(f), placements: edit::Placements::default() }
    }

    pub fn apply(mut self, f: &mut Function) {
        self.placements.apply(f);
        self.subst.apply(f);
    }
}

/// Inlines `call` (an instruction of `f`'s block `block` calling
/// `callee`, whose surely-bound values are `callee_bound`:
/// [`flowc_ir::bound::surely_bound`], computed once per callee by the
/// caller). Arguments for which `may_be_unbound` holds are checked first
/// (`check_bound`, at the call's site): the call raised `key_not_found` for
/// them, and the callee's body may not read them.
///
/// The call's result is replaced, and the new blocks are placed, through
/// `pending`, which the caller applies once after all its inlines: each
/// inline then costs its callee's size, not the caller's (a caller with
/// thousands of calls to inline was quadratic). Inlining moves the instructions after the call into a new
/// block, so the caller inlines a block's calls from the last to the
/// first: the earlier ones stay in `block`.
pub fn inline_call(
    f: &mut Function,
    block: BlockId,
    call: InstId,
    callee: &Function,
    callee_bound: &bitvec::vec::BitVec,
    pending: &mut Pending,
    may_be_unbound: impl Fn(&Operand) -> bool,
) {
    let Pending { subst, placements } = pending;
    let InstKind::Call { args, .. } = f.insts[call].kind.clone() else { return };
    if args.len() != callee.params.len() {
        return;
    }
    // Split: the continuation gets the instructions after the call and the
    // terminator.
    let Some(pos) = f.blocks[block].insts.iter().position(|&i| i == call) else { return };
    let after: flowc_ir::InstList<4> = f.blocks[block].insts.drain(pos + 1..).collect();
    f.blocks[block].insts.pop();
    let site = f.sites.inst(call);
    for a in args.iter().filter(|a| may_be_unbound(a)) {
        edit::append(f, block, InstKind::CheckBound(a.clone()), None);
        let check = *f.blocks[block].insts.last().expect("the check just appended");
        if let Some(site) = site {
            f.sites.set_inst(check, site);
        }
    }
    let cont = placements.new_block(f, None, block);
    f.blocks[cont].insts = after;
    f.blocks[cont].term = std::mem::replace(&mut f.blocks[block].term, Terminator::Jump(cont));
    f.sites.move_term(block, cont);
    for s in f.blocks[cont].term.successors() {
        edit::rename_phi_pred(f, s, block, cont);
    }
    // Copy the callee's blocks, after the split block.
    let mut blocks: HashMap<BlockId, BlockId> = HashMap::new();
    let mut last = block;
    for &cb in &callee.layout {
        let nb = placements.new_block(f, callee.blocks[cb].name, last);
        blocks.insert(cb, nb);
        last = nb;
    }
    // Values: parameters become the arguments, results get new values.
    let mut values: HashMap<ValueId, Operand> = HashMap::new();
    for (&p, a) in callee.params.iter().zip(&args) {
        values.insert(p, a.clone());
    }
    let mut insts: Vec<(BlockId, InstId, InstId)> = Vec::new();
    for &cb in &callee.layout {
        for ci in callee.block_insts(cb) {
            let ni = f.insts.alloc(InstData { kind: InstKind::Phi(flowc_ir::PhiInputs::new()), result: None });
            if let Some(cv) = callee.insts[ci].result {
                let nv = f.values.alloc(ValueData { def: ValueDef::Inst(ni), name: callee.values[cv].name });
                f.insts[ni].result = Some(nv);
                values.insert(cv, Operand::Value(nv));
            }
            insts.push((cb, ci, ni));
        }
    }
    let map_operand = |o: &Operand| match o {
        Operand::Value(v) => values.get(v).cloned().unwrap_or_else(|| o.clone()),
        Operand::Const(_) => o.clone(),
    };
    for (cb, ci, ni) in insts {
        let mut kind = callee.insts[ci].kind.clone();
        for o in kind.operands_mut() {
            *o = map_operand(o);
        }
        if let InstKind::Phi(inputs) = &mut kind {
            for (p, _) in inputs.iter_mut() {
                *p = blocks[p];
            }
        }
        let nb = blocks[&cb];
        if matches!(kind, InstKind::Phi(_)) {
            f.blocks[nb].phis.push(ni);
        } else {
            f.blocks[nb].insts.push(ni);
        }
        f.insts[ni].kind = kind;
        if let Some(site) = callee.sites.inst(ci) {
            f.sites.set_inst(ni, site);
        }
    }
    // Terminators: returns jump to the continuation. `return x` read `x`:
    // if it may be unbound, the copy checks it (`check_bound`) and returns
    // the checked value, or the caller would go on with an unbound value
    // where the call raised `key_not_found`.
    let may_be_unbound_in_callee = |o: &Operand| flowc_ir::bound::may_be_unbound(callee_bound, o);
    let mut returns: Vec<(BlockId, Operand)> = Vec::new();
    for &cb in &callee.layout {
        let nb = blocks[&cb];
        let checked = match &callee.blocks[cb].term {
            Terminator::Return(o) if may_be_unbound_in_callee(o) => {
                let v =
                    edit::append(f, nb, InstKind::CheckBound(map_operand(o)), None).expect("check_bound has a result");
                if let Some(site) = callee.sites.term(cb) {
                    let check = *f.blocks[nb].insts.last().expect("the check just appended");
                    f.sites.set_inst(check, site);
                }
                Some(Operand::Value(v))
            }
            _ => None,
        };
        let mut term = callee.blocks[cb].term.clone();
        for o in term.operands_mut() {
            *o = map_operand(o);
        }
        for t in term.successors_mut() {
            *t = blocks[t];
        }
        if let Terminator::Return(o) = &term {
            returns.push((nb, checked.unwrap_or_else(|| o.clone())));
            term = Terminator::Jump(cont);
        }
        f.blocks[nb].term = term;
        if let Some(site) = callee.sites.term(cb) {
            f.sites.set_term(nb, site);
        }
    }
    f.blocks[block].term = Terminator::Jump(blocks[&callee.entry]);
    // The call's result.
    if let Some(result) = f.insts[call].result {
        let replacement = match returns.as_slice() {
            [(_, o)] => o.clone(),
            [] => Operand::Const(flowc_lang::Value::Int(0)),
            _ => {
                let name = f.values[result].name;
                let phi = edit::append(f, cont, InstKind::Phi(returns.as_slice().into()), name).unwrap();
                // Phis go first: `append` put it among the phis already.
                Operand::Value(phi)
            }
        };
        f.values[result].def = ValueDef::Detached;
        subst.set(result, replacement);
    }
}

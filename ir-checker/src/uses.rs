//! Uses: every operand exists, is defined, and its definition dominates the
//! use.
//!
//! Rules:
//! - [`Rule::DanglingRef`] (f): operand values exist in the value arena.
//! - [`Rule::UndefinedValue`] (b): a used value is a parameter or the result
//!   of a linked instruction (not `Detached`, not the result of an unlinked
//!   instruction).
//! - [`Rule::UseDominated`] (b): for a use in block B at position p, the
//!   defining block dominates B, and if it is B the definition comes before
//!   p. Parameters dominate everything. A phi's input for predecessor P must
//!   be available at the end of P: its defining block dominates P. Uses in
//!   blocks unreachable from the entry (and inputs from unreachable
//!   predecessors) need not be dominated, but must exist and be defined.
//!   Inputs from blocks that are not predecessors are left to `phis`.
//!
//! Instruction operands and terminator operands are checked here; resume
//! data operands, whose use point is the guard, in `guards`.

use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::print::{block_ref, value_ref};
use flowc_ir::{BlockId, InstKind, Operand, ValueId};

use crate::context::{BlockMarks, Checker, Linked, Site};
use crate::violation::{At, Rule};

/// Where a value is used.
#[derive(Copy, Clone)]
pub(crate) enum UsePoint {
    /// At a position of a block (the terminator's is the block's length).
    At(BlockId, u32),
    /// At the end of a predecessor (phi inputs).
    EndOf(BlockId),
    /// Only existence and definedness matter (phi inputs from blocks that
    /// are not predecessors, or repeated ones).
    Anywhere,
}

/// What is wrong with one use.
pub(crate) enum Problem {
    /// The value is outside the arena.
    Dangling,
    /// No parameter or linked instruction defines it.
    Undefined,
    /// Defined in a block that does not dominate the use.
    NotDominated(BlockId),
    /// Defined in the same block, at or after the use.
    Later(BlockId),
}

/// The control-flow facts the use checks need.
pub(crate) struct Flow<'a> {
    pub cfg: &'a Cfg,
    pub dom: &'a DomTree,
}

pub(crate) fn check_use(c: &Checker, flow: &Flow, v: ValueId, point: UsePoint) -> Result<(), Problem> {
    if !c.has_value(v) {
        return Err(Problem::Dangling);
    }
    let Some(site) = c.value_site(v) else { return Err(Problem::Undefined) };
    let Site::Inst { block: def_block, pos: def_pos } = site else { return Ok(()) };
    match point {
        UsePoint::At(b, pos) => {
            if !flow.cfg.is_reachable(b) {
                Ok(())
            } else if def_block == b {
                if def_pos < pos {
                    Ok(())
                } else {
                    Err(Problem::Later(b))
                }
            } else if flow.dom.dominates(def_block, b) {
                Ok(())
            } else {
                Err(Problem::NotDominated(def_block))
            }
        }
        UsePoint::Anywhere => Ok(()),
        UsePoint::EndOf(p) => {
            if !c.in_layout(p) || !flow.cfg.is_reachable(p) || flow.dom.dominates(def_block, p) {
                Ok(())
            } else {
                Err(Problem::NotDominated(def_block))
            }
        }
    }
}

/// Reports a problem with an instruction or terminator operand.
fn report_use(c: &mut Checker, block: BlockId, pos: u32, at: Option<At>, v: ValueId, point: UsePoint, p: Problem) {
    let val = value_ref(v);
    let (rule, msg) = match (p, point) {
        (Problem::Dangling, _) => (Rule::DanglingRef, format!("{val} does not exist")),
        (Problem::Undefined, _) => {
            (Rule::UndefinedValue, format!("{val} is used here but no parameter or linked instruction defines it"))
        }
        (Problem::NotDominated(d), UsePoint::Anywhere) => (
            Rule::UseDominated,
            format!("{val} is used here but its definition in {} does not dominate it", block_ref(d)),
        ),
        (Problem::NotDominated(d), UsePoint::At(b, _)) => (
            Rule::UseDominated,
            format!("{val} is used here but its definition in {} does not dominate {}", block_ref(d), block_ref(b)),
        ),
        (Problem::NotDominated(d), UsePoint::EndOf(pred)) => (
            Rule::UseDominated,
            format!(
                "{val} is the input for {} but its definition in {} does not dominate {}",
                block_ref(pred),
                block_ref(d),
                block_ref(pred)
            ),
        ),
        (Problem::Later(b), _) => {
            (Rule::UseDominated, format!("{val} is used here but is defined later in {}", block_ref(b)))
        }
    };
    c.report(Some(block), pos, at, rule, msg);
}

/// The use rules for the operands of one linked instruction (`marks`:
/// scratch sets, see [`BlockMarks`]).
pub(crate) fn check_inst(
    c: &mut Checker,
    flow: &Flow,
    (preds, seen): &mut (BlockMarks, BlockMarks),
    l: Linked,
    kind: &InstKind,
) {
    let check = |c: &mut Checker, o: &Operand, point: UsePoint| {
        let Some(v) = o.as_value() else { return };
        if let Err(p) = check_use(c, flow, v, point) {
            let at = c.at_inst(l.inst);
            report_use(c, l.block, l.pos, at, v, point, p);
        }
    };
    match kind {
        InstKind::Phi(inputs) => {
            preds.clear();
            seen.clear();
            for &p in flow.cfg.preds(l.block) {
                preds.insert(p);
            }
            for (pred, o) in inputs {
                let real = preds.contains(*pred) && seen.insert(*pred);
                let point = if real { UsePoint::EndOf(*pred) } else { UsePoint::Anywhere };
                check(c, o, point);
            }
        }
        kind => {
            for o in kind.operands() {
                check(c, o, UsePoint::At(l.block, l.pos));
            }
        }
    }
}

/// The use rules for the operands of the terminator of `b` (a block of the
/// cleaned layout).
pub(crate) fn check_terminator(c: &mut Checker, flow: &Flow, b: BlockId) {
    let pos = c.term_pos(b);
    for o in c.f.blocks[b].term.operands() {
        let Some(v) = o.as_value() else { continue };
        let point = UsePoint::At(b, pos);
        if let Err(p) = check_use(c, flow, v, point) {
            let at = c.at_term(b);
            report_use(c, b, pos, at, v, point, p);
        }
    }
}

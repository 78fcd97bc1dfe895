//! Phis: where they are listed and which blocks their inputs name.
//!
//! Rules:
//! - [`Rule::PhisFirst`] (c): phi instructions are listed only in
//!   `BlockData::phis`, and only phis are listed there (so phis come before
//!   every other instruction of the block).
//! - [`Rule::PhiInputs`] (d): a phi has exactly one input per predecessor
//!   (`Cfg::preds`: distinct, in layout order), none from a block that is
//!   not a predecessor, and no block twice.
//! - [`Rule::DanglingRef`] (f): input blocks exist and are in the layout.
//!
//! Phis listed among the ordinary instructions get the input checks too.

use flowc_ir::cfg::Cfg;
use flowc_ir::print::block_ref;
use flowc_ir::{BlockId, InstKind};

use crate::context::{BlockMarks, Checker, Linked};
use crate::violation::Rule;

/// The phi rules for one linked instruction (`marks`: scratch sets, see
/// [`BlockMarks`]).
pub(crate) fn check_inst(c: &mut Checker, cfg: &Cfg, marks: &mut (BlockMarks, BlockMarks), l: Linked, kind: &InstKind) {
    let is_phi = matches!(kind, InstKind::Phi(_));
    if !is_phi && !l.in_phis {
        return;
    }
    let mut messages = Vec::new();
    if is_phi && !l.in_phis {
        messages.push((Rule::PhisFirst, "this phi is listed among the instructions, not the phis".to_owned()));
    }
    if !is_phi && l.in_phis {
        messages.push((Rule::PhisFirst, "this instruction is not a phi but is listed among the phis".to_owned()));
    }
    if let InstKind::Phi(inputs) = kind {
        messages.extend(input_problems(c, cfg, marks, l.block, inputs.iter().map(|(b, _)| *b)));
    }
    for (rule, msg) in messages {
        let at = c.at_inst(l.inst);
        c.report(Some(l.block), l.pos, at, rule, msg);
    }
}

fn input_problems(
    c: &Checker,
    cfg: &Cfg,
    (pred_set, seen): &mut (BlockMarks, BlockMarks),
    block: BlockId,
    inputs: impl Iterator<Item = BlockId>,
) -> Vec<(Rule, String)> {
    let preds = cfg.preds(block);
    pred_set.clear();
    seen.clear();
    for &p in preds {
        pred_set.insert(p);
    }
    let mut out = Vec::new();
    for b in inputs {
        if !c.has_block(b) {
            out.push((Rule::DanglingRef, format!("input block {} does not exist", block_ref(b))));
        } else if !c.in_layout(b) {
            out.push((Rule::DanglingRef, format!("input block {} is not in the layout", block_ref(b))));
        } else if !seen.insert(b) {
            out.push((Rule::PhiInputs, format!("more than one input for {}", block_ref(b))));
        } else if !pred_set.contains(b) {
            let msg = format!("input for {}, which is not a predecessor of {}", block_ref(b), block_ref(block));
            out.push((Rule::PhiInputs, msg));
        }
    }
    for &p in preds {
        if !seen.contains(p) {
            out.push((Rule::PhiInputs, format!("no input for predecessor {}", block_ref(p))));
        }
    }
    out
}

//! Structure: the layout, which instructions are linked where, the entry
//! block and the blocks terminators jump to.
//!
//! Rules:
//! - [`Rule::LinkedOnce`] (e): every block of the layout appears once; no
//!   instruction is linked twice (in two blocks, or twice in one block).
//!   Only the first occurrence is checked further.
//! - [`Rule::DanglingRef`] (f): layout entries, instructions listed in blocks,
//!   the entry and terminator successors exist in their arenas; successors
//!   are in the layout.
//! - [`Rule::EntryBlock`] (g): the entry is in the layout, is `layout[0]`
//!   and has no predecessors.
//!
//! "Exactly one terminator per block, last" needs no check: a block has a
//! single `term` field by construction.

use flowc_ir::cfg::Cfg;
use flowc_ir::print::block_ref;

use crate::context::{Checker, Linked};
use crate::violation::Rule;
use flowc_ir::ix;

/// Cleans the layout and records every linked instruction.
pub(crate) fn check_layout(c: &mut Checker) {
    let f = c.f;
    for &b in &f.layout {
        if !c.has_block(b) {
            let msg = format!("the layout lists {}, which does not exist", block_ref(b));
            c.report(None, 0, None, Rule::DanglingRef, msg);
        } else if c.in_layout(b) {
            let msg = format!("{} appears more than once in the layout", block_ref(b));
            c.report(Some(b), 0, None, Rule::LinkedOnce, msg);
        } else {
            c.push_layout(b);
        }
    }
    for k in 0..c.layout.len() {
        let b = c.layout[k];
        let data = &f.blocks[b];
        let mut pos = 0u32;
        for (in_phis, list) in [(true, &data.phis[..]), (false, &data.insts[..])] {
            for &i in list {
                let p = pos;
                pos += 1;
                if !c.has_inst(i) {
                    let msg = format!("the block lists instruction #{}, which does not exist", ix(i));
                    c.report(Some(b), p, None, Rule::DanglingRef, msg);
                } else if let Some((first, _)) = c.inst_site(i) {
                    let msg = if first == b {
                        format!("this instruction is linked twice in {}", block_ref(b))
                    } else {
                        format!("this instruction is already linked in {}", block_ref(first))
                    };
                    let at = c.at_inst(i);
                    c.report(Some(b), p, at, Rule::LinkedOnce, msg);
                } else {
                    c.set_inst_site(i, b, p);
                    c.linked.push(Linked { block: b, pos: p, inst: i, in_phis });
                }
            }
        }
        c.set_block_len(b, pos);
    }
}

/// The entry exists, is in the layout and is first.
pub(crate) fn check_entry(c: &mut Checker) {
    let f = c.f;
    let entry = f.entry;
    if !c.has_block(entry) {
        let msg = format!("the entry {} does not exist", block_ref(entry));
        c.report(None, 0, None, Rule::DanglingRef, msg);
    } else if !c.in_layout(entry) {
        let msg = if f.layout.is_empty() {
            format!("the entry {} is not in the layout (the layout is empty)", block_ref(entry))
        } else {
            format!("the entry {} is not in the layout", block_ref(entry))
        };
        c.report(None, 0, None, Rule::EntryBlock, msg);
    } else if f.layout.first() != Some(&entry) {
        let first = f.layout.first().map_or_else(String::new, |&b| block_ref(b));
        let msg = format!("the entry {} is not first in the layout ({first} is)", block_ref(entry));
        c.report(Some(entry), 0, None, Rule::EntryBlock, msg);
    }
}

/// The entry has no predecessors.
pub(crate) fn check_entry_preds(c: &mut Checker, cfg: &Cfg) {
    let entry = c.f.entry;
    if !c.in_layout(entry) {
        return;
    }
    let preds = cfg.preds(entry);
    if !preds.is_empty() {
        let list: Vec<String> = preds.iter().map(|&p| block_ref(p)).collect();
        let msg = format!("the entry {} has predecessors: {}", block_ref(entry), list.join(", "));
        c.report(Some(entry), 0, None, Rule::EntryBlock, msg);
    }
}

/// Terminator successors exist and are in the layout.
pub(crate) fn check_successors(c: &mut Checker) {
    let f = c.f;
    for k in 0..c.layout.len() {
        let b = c.layout[k];
        let succs = f.blocks[b].term.successors();
        for (n, &s) in succs.iter().enumerate() {
            if succs[..n].contains(&s) {
                continue;
            }
            let msg = if !c.has_block(s) {
                format!("{} does not exist", block_ref(s))
            } else if !c.in_layout(s) {
                format!("{} is not in the layout", block_ref(s))
            } else {
                continue;
            };
            let (pos, at) = (c.term_pos(b), c.at_term(b));
            c.report(Some(b), pos, at, Rule::DanglingRef, msg);
        }
    }
}

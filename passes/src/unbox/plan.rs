//! Deciding whether one web can be unboxed, and how: the field SSA over
//! the web's accesses, the currency check for phi-webs, the safety checks
//! (no `get` may see an unset field; no `set` of an immutable field may
//! find it set), and the phis a `get` needs. Nothing is changed here: a
//! [`Plan`] is all or nothing.

use std::collections::HashMap;

use flowc_ir::{BlockId, Function, InstId, InstKind, Operand, Terminator, ValueId};
use flowc_lang::Symbol;

use super::current::Currency;
use super::fields::{FVal, FieldSsa};
use super::view::View;
use crate::escape::Web;

/// Where a web's instructions are, in layout and instruction order.
#[derive(Default)]
pub struct Accesses {
    pub news: Vec<(BlockId, InstId)>,
    pub phis: Vec<(BlockId, InstId)>,
    /// `new`s, `get`s and `set`s of the web.
    pub events: Vec<(BlockId, InstId)>,
    /// Blocks ending in `if_class` on a value of the web.
    pub tests: Vec<BlockId>,
}

/// An operand of the rewritten code: an existing operand or a new phi.
#[derive(Clone, Debug)]
pub enum NewOperand {
    Op(Operand),
    Phi(usize),
}

/// A phi to create: block, field (its name), inputs.
pub struct NewPhi {
    pub block: BlockId,
    pub field: Symbol,
    pub inputs: Vec<(BlockId, NewOperand)>,
}

/// What unboxing one web does.
pub struct Plan {
    pub phis: Vec<NewPhi>,
    /// Each `get` result and the value replacing it.
    pub reads: Vec<(ValueId, NewOperand)>,
    /// `new`s, `get`s and the web's phis, to unlink.
    pub removed: Vec<(BlockId, InstId)>,
    /// `set`s, to unlink (or reduce to `check_bound` of the stored value).
    pub sets: Vec<(BlockId, InstId)>,
    /// `if_class` blocks: the successor taken and the one dropped.
    pub decided: Vec<(BlockId, BlockId, BlockId)>,
    /// Whether the graph changes (decided tests, unreachable blocks).
    pub prune: bool,
}

/// Calls `each` with every reachable block of `events` (grouped by block,
/// in order) and its events.
fn for_each_block(events: &[(BlockId, InstId)], view: &View, mut each: impl FnMut(BlockId, &[(BlockId, InstId)])) {
    let mut at = 0;
    while at < events.len() {
        let b = events[at].0;
        let end = at + events[at..].iter().take_while(|(x, _)| *x == b).count();
        if view.is_reachable(b) {
            each(b, &events[at..end]);
        }
        at = end;
    }
}

/// The plan for `web`, or `None` if it cannot be unboxed exactly.
/// `base` is the function's graph (no test decided).
pub fn plan(
    f: &Function,
    web: &Web,
    acc: &Accesses,
    base: &View,
    immutable: &dyn Fn(Symbol, Symbol) -> bool,
) -> Option<Plan> {
    let mut decided = Vec::new();
    for &b in &acc.tests {
        if let Terminator::IfClass { class, then_block, else_block, .. } = &f.blocks[b].term {
            let (taken, other) =
                if *class == web.class { (*then_block, *else_block) } else { (*else_block, *then_block) };
            decided.push((b, taken, other));
        }
    }
    let taken: HashMap<BlockId, BlockId> = decided.iter().map(|&(b, t, _)| (b, t)).collect();
    let own = (!decided.is_empty()).then(|| View::new(f, |b| taken.get(&b).copied()));
    let view = own.as_ref().unwrap_or(base);
    let mut fields: Vec<Symbol> = Vec::new();
    for &(_, i) in &acc.events {
        if let InstKind::Get { field, .. } | InstKind::Set { field, .. } = &f.insts[i].kind {
            if !fields.contains(field) {
                fields.push(*field);
            }
        }
    }
    let field_index = |s: Symbol| fields.iter().position(|&g| g == s).unwrap_or(0);
    let currency =
        (!acc.phis.is_empty()).then(|| Currency::new(f, view, &web.values, &acc.news, &acc.phis, &acc.events));
    let mut ssa = FieldSsa::new(view);
    for &(b, i) in acc.events.iter().filter(|(b, _)| view.is_reachable(*b)) {
        match &f.insts[i].kind {
            InstKind::New(_) => (0..fields.len()).for_each(|k| ssa.write_end(b, k, FVal::Unset)),
            InstKind::Set { field, value, .. } => ssa.write_end(b, field_index(*field), FVal::Op(value.clone())),
            _ => {}
        }
    }
    // The previous object's fields (variables `nf + k`): what the current
    // object's were at each `new`.
    let nf = fields.len();
    if currency.is_some() {
        for_each_block(&acc.events, view, |b, group| {
            if !group.iter().any(|&(_, i)| matches!(f.insts[i].kind, InstKind::New(_))) {
                return;
            }
            let mut local: Vec<Option<FVal>> = vec![None; nf];
            for &(_, i) in group {
                match &f.insts[i].kind {
                    InstKind::New(_) => {
                        for (k, l) in local.iter_mut().enumerate() {
                            let was = l.take().unwrap_or_else(|| ssa.read_entry(k, b));
                            ssa.write_end(b, nf + k, was);
                            *l = Some(FVal::Unset);
                        }
                    }
                    InstKind::Set { field, value, .. } => local[field_index(*field)] = Some(FVal::Op(value.clone())),
                    _ => {}
                }
            }
        });
    }
    let mut reads: Vec<(ValueId, FVal)> = Vec::new();
    let mut before_immutable_sets: Vec<FVal> = Vec::new();
    let mut at = 0;
    while at < acc.events.len() {
        let b = acc.events[at].0;
        let end = at + acc.events[at..].iter().take_while(|(x, _)| *x == b).count();
        let group = &acc.events[at..end];
        at = end;
        if !view.is_reachable(b) {
            continue;
        }
        let mut local: Vec<Option<FVal>> = vec![None; fields.len()];
        let mut previous: Vec<Option<FVal>> = vec![None; fields.len()];
        let mut cursor = currency.as_ref().map(|c| c.cursor(b));
        let current = |cursor: &Option<super::current::Cursor>, obj: &Operand| match (cursor, obj.as_value()) {
            (None, _) => true,
            (Some(c), Some(v)) => c.is_current(v),
            (Some(_), None) => false,
        };
        for &(_, i) in group {
            let data = &f.insts[i];
            match &data.kind {
                InstKind::New(_) => {
                    for (k, l) in local.iter_mut().enumerate() {
                        previous[k] = Some(l.take().unwrap_or_else(|| ssa.read_entry(k, b)));
                        *l = Some(FVal::Unset);
                    }
                    if let (Some(c), Some(v)) = (&mut cursor, data.result) {
                        c.allocated(v);
                    }
                }
                InstKind::Get { obj, field, .. } => {
                    let k = field_index(*field);
                    let is_previous = match (&cursor, obj.as_value()) {
                        (Some(c), Some(o)) => c.is_previous(o),
                        _ => false,
                    };
                    let v = if current(&cursor, obj) {
                        local[k].clone().unwrap_or_else(|| ssa.read_entry(k, b))
                    } else if is_previous {
                        previous[k].clone().unwrap_or_else(|| ssa.read_entry(nf + k, b))
                    } else {
                        return None;
                    };
                    reads.push((data.result?, v));
                }
                InstKind::Set { obj, field, value, .. } => {
                    if !current(&cursor, obj) {
                        return None;
                    }
                    let k = field_index(*field);
                    if immutable(web.class, *field) {
                        before_immutable_sets.push(local[k].clone().unwrap_or_else(|| ssa.read_entry(k, b)));
                    }
                    local[k] = Some(FVal::Op(value.clone()));
                }
                _ => {}
            }
        }
    }
    ssa.finish();
    let (unset, set) = (ssa.may_be_unset(), ssa.may_be_set());
    for (_, v) in &reads {
        match ssa.resolve(v) {
            FVal::Unset => return None,
            FVal::Phi(j) if unset[j as usize] => return None,
            _ => {}
        }
    }
    for v in &before_immutable_sets {
        match ssa.resolve(v) {
            FVal::Op(_) => return None,
            FVal::Phi(j) if set[j as usize] => return None,
            _ => {}
        }
    }
    // The phis the reads need, in creation order.
    let mut needed = vec![false; ssa.phis.len()];
    let mut stack: Vec<u32> = Vec::new();
    let mut need = |v: &FVal, stack: &mut Vec<u32>| {
        if let FVal::Phi(j) = ssa.resolve(v) {
            if !needed[j as usize] {
                needed[j as usize] = true;
                stack.push(j);
            }
        }
    };
    for (_, v) in &reads {
        need(v, &mut stack);
    }
    while let Some(j) = stack.pop() {
        for (_, v) in &ssa.phis[j as usize].inputs {
            need(v, &mut stack);
        }
    }
    let mut number = vec![usize::MAX; ssa.phis.len()];
    let mut count = 0;
    for (j, n) in needed.iter().enumerate() {
        if *n {
            number[j] = count;
            count += 1;
        }
    }
    let operand = |v: &FVal| -> Option<NewOperand> {
        match ssa.resolve(v) {
            FVal::Op(o) => Some(NewOperand::Op(o)),
            FVal::Phi(j) => Some(NewOperand::Phi(number[j as usize])),
            FVal::Unset => None,
        }
    };
    let mut phis = Vec::with_capacity(count);
    for (j, phi) in ssa.phis.iter().enumerate().filter(|(j, _)| needed[*j]) {
        let mut inputs = Vec::with_capacity(phi.inputs.len());
        for (p, v) in &phi.inputs {
            inputs.push((*p, operand(v)?));
        }
        debug_assert_eq!(number[j], phis.len());
        phis.push(NewPhi { block: phi.block, field: fields[phi.field % nf], inputs });
    }
    let reads = reads.iter().map(|(r, v)| Some((*r, operand(v)?))).collect::<Option<Vec<_>>>()?;
    let mut removed = Vec::new();
    let mut sets = Vec::new();
    for &(b, i) in &acc.events {
        match f.insts[i].kind {
            InstKind::Set { .. } => sets.push((b, i)),
            _ => removed.push((b, i)),
        }
    }
    removed.extend(acc.phis.iter().copied());
    let prune = view.has_unreachable || !decided.is_empty();
    Some(Plan { phis, reads, removed, sets, decided, prune })
}

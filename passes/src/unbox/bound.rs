//! Whether a stored value is known to be bound where its `set` is removed.
//! Reading an unbound value raises `key_not_found` (flowc-ir's crate docs);
//! a `set` reads its value, so when unbox removes the `set` it keeps a
//! `check_bound` of the value unless the value is bound there for sure:
//! it cannot be unbound at all (anything but a main or trace parameter, an
//! `unbound` value, or a phi of those), or an instruction or terminator
//! that reads it runs before the `set` on every path (same block earlier,
//! or a dominating block).

use std::collections::HashSet;

use flowc_ir::cfg::DomTree;
use flowc_ir::{BlockId, Function, FunctionKind, InstId, InstKind, ValueDef, ValueId};

/// Whether `x` may be unbound when instruction `at` in block `b` runs.
pub fn may_be_unbound_at(f: &Function, dom: &DomTree, x: ValueId, b: BlockId, at: InstId) -> bool {
    if !may_be_unbound(f, x) {
        return false;
    }
    let reads = |i: InstId| {
        !matches!(f.insts[i].kind, InstKind::Phi(_)) && f.insts[i].kind.operands().any(|o| o.as_value() == Some(x))
    };
    if f.blocks[b].insts.iter().take_while(|&&i| i != at).any(|&i| reads(i)) {
        return false;
    }
    let mut cur = dom.idom(b);
    while let Some(d) = cur {
        let data = &f.blocks[d];
        if data.insts.iter().any(|&i| reads(i)) || data.term.operands().any(|o| o.as_value() == Some(x)) {
            return false;
        }
        cur = dom.idom(d);
    }
    true
}

/// Whether `v` can be unbound at all: a parameter of the main graph or of
/// a trace (a function's arguments were read by its caller), an `unbound`
/// value, or a phi with such an input.
fn may_be_unbound(f: &Function, v: ValueId) -> bool {
    let mut stack = vec![v];
    let mut seen = HashSet::new();
    while let Some(u) = stack.pop() {
        if !seen.insert(u) {
            continue;
        }
        match f.values[u].def {
            ValueDef::Param(_) if f.kind == FunctionKind::Function => {}
            ValueDef::Param(_) | ValueDef::Detached => return true,
            ValueDef::Inst(i) => match &f.insts[i].kind {
                InstKind::Unbound(_) => return true,
                InstKind::Phi(inputs) => stack.extend(inputs.iter().filter_map(|(_, o)| o.as_value())),
                _ => {}
            },
        }
    }
    false
}

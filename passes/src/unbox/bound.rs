//! Whether a stored value is known to be bound where its `set` is removed.
//! Reading an unbound value raises `key_not_found` (flowc-ir's crate docs);
//! a `set` reads its value, so when unbox removes the `set` it keeps a
//! `check_bound` of the value unless the value is bound there for sure:
//! it cannot be unbound at all (anything but a main or trace parameter, an
//! `unbound` value, or a phi of those: [`crate::defuse::surely_bound`]), or
//! an instruction or terminator that reads it runs before the `set` on every
//! path (same block earlier, or a dominating block).

use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::{BlockId, Function, InstId, InstKind, ValueId};

use crate::defuse::BoundQuery;

/// Answers [`Bound::may_be_unbound_at`] for the `set`s of one rewrite:
/// whether a value can be unbound at all is asked of a [`BoundQuery`], and
/// the dominator tree is only built once a value that can be unbound needs
/// it (usually none does).
pub struct Bound {
    query: BoundQuery,
    dom: Option<DomTree>,
}

impl Bound {
    pub fn new(f: &Function) -> Bound {
        Bound { query: BoundQuery::new(f), dom: None }
    }

    /// Whether `x` may be unbound when instruction `at` in block `b` runs.
    pub fn may_be_unbound_at(&mut self, f: &Function, x: ValueId, b: BlockId, at: InstId) -> bool {
        if self.query.is_bound(f, x) {
            return false;
        }
        let reads = |i: InstId| {
            !matches!(f.insts[i].kind, InstKind::Phi(_)) && f.insts[i].kind.operands().any(|o| o.as_value() == Some(x))
        };
        if f.blocks[b].insts.iter().take_while(|&&i| i != at).any(|&i| reads(i)) {
            return false;
        }
        let dom = self.dom.get_or_insert_with(|| DomTree::new(f, &Cfg::new(f)));
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
}

//! The phis that use each value, as compressed rows ([`crate::rows::Rows`]).
//! Cheaper than a whole def-use table (flowc-passes' `DefUse`) where only
//! phi-to-phi edges matter: the trivial-phi cascade of `normalize` and
//! [`surely_bound`](crate::bound::surely_bound).

use crate::ix;
use crate::rows::Rows;
use crate::{Function, InstId, InstKind, Operand, ValueId};

/// The users among some phis of each value, by raw value index.
pub struct PhiUsers {
    users: Rows<InstId>,
}

impl PhiUsers {
    /// The users among `phis` (phis of `f`) of every value of `f`.
    pub fn new(f: &Function, phis: &[InstId]) -> PhiUsers {
        let n = f.values.len();
        let inputs = phis.iter().flat_map(move |&phi| {
            let inputs: &[(crate::BlockId, Operand)] = match &f.insts[phi].kind {
                InstKind::Phi(inputs) => inputs,
                _ => &[],
            };
            inputs.iter().filter_map(move |(_, o)| o.as_value().filter(|v| ix(*v) < n).map(|v| (ix(v), phi)))
        });
        PhiUsers { users: Rows::group(n, inputs) }
    }

    /// The phis that take `v` as an input (once per input).
    pub fn of(&self, v: ValueId) -> &[InstId] {
        self.users.of(ix(v))
    }
}

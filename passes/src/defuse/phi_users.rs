//! The phis that use each value, as compressed rows
//! ([`flowc_ir::rows::Rows`]). Cheaper than a whole [`DefUse`]
//! table where only phi-to-phi edges matter: the trivial-phi cascade of
//! `normalize` and [`surely_bound`](super::surely_bound).
//!
//! [`DefUse`]: super::DefUse

use flowc_ir::rows::Rows;
use flowc_ir::{Function, InstId, InstKind, Operand, ValueId};

use crate::edit::ix;

/// The users among some phis of each value, by raw value index.
pub struct PhiUsers {
    users: Rows<InstId>,
}

impl PhiUsers {
    /// The users among `phis` (phis of `f`) of every value of `f`.
    pub fn new(f: &Function, phis: &[InstId]) -> PhiUsers {
        let n = f.values.len();
        let inputs = phis.iter().flat_map(move |&phi| {
            let inputs: &[(flowc_ir::BlockId, Operand)] = match &f.insts[phi].kind {
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

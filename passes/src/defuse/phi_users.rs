//! The phis that use each value, as compressed rows: one flat array of
//! users and one start offset per value. Cheaper than a whole [`DefUse`]
//! table where only phi-to-phi edges matter: the trivial-phi cascade of
//! `normalize` and [`surely_bound`](super::surely_bound).
//!
//! [`DefUse`]: super::DefUse

use flowc_ir::{Function, InstId, InstKind, Operand, ValueId};

use crate::edit::ix;

/// The users of value `v` among `phis` are `users[start[v]..start[v + 1]]`.
pub struct PhiUsers {
    start: Vec<u32>,
    users: Vec<InstId>,
}

impl PhiUsers {
    /// The users among `phis` (phis of `f`) of every value of `f`.
    pub fn new(f: &Function, phis: &[InstId]) -> PhiUsers {
        let n = f.values.len();
        let mut start = vec![0u32; n + 1];
        for_each_input(f, phis, |v, _| start[ix(v) + 1] += 1);
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut users = vec![crate::edit::id(0); start[n] as usize];
        for_each_input(f, phis, |v, phi| {
            users[fill[ix(v)] as usize] = phi;
            fill[ix(v)] += 1;
        });
        PhiUsers { start, users }
    }

    /// The phis that take `v` as an input (once per input).
    pub fn of(&self, v: ValueId) -> &[InstId] {
        match (self.start.get(ix(v)), self.start.get(ix(v) + 1)) {
            (Some(&s), Some(&e)) => &self.users[s as usize..e as usize],
            _ => &[],
        }
    }
}

fn for_each_input(f: &Function, phis: &[InstId], mut visit: impl FnMut(ValueId, InstId)) {
    let n = f.values.len();
    for &phi in phis {
        if let InstKind::Phi(inputs) = &f.insts[phi].kind {
            for (_, o) in inputs {
                if let Operand::Value(v) = o {
                    if ix(*v) < n {
                        visit(*v, phi);
                    }
                }
            }
        }
    }
}

//! Which values of a phi-web hold the web's *current* object — the one its
//! most recent `new` allocated — at each point. Unbox keeps one SSA
//! variable per field for the current object, so every `get`/`set` of the
//! web must go through a value that holds it.
//!
//! Forward data flow over the [`View`], greatest fixpoint (unvisited
//! predecessors count as "all values"): after a `new` only its result holds
//! the current object; at a block entry a value holds it if it did at the
//! end of every predecessor (a phi of the block itself is overwritten, so it
//! holds it only if each of its inputs held it at the end of that input's
//! predecessor). Values are the web's members by their index in
//! [`Web::values`](crate::escape::Web).
//!
//! Only the web's region is solved: blocks reachable from one of its `new`s
//! that can reach one of its accesses. Before any `new` nothing is current
//! (a predecessor outside the region contributes the empty set), and
//! blocks that reach no access are never asked about — so the cost follows
//! the web, not the function.

use std::collections::HashMap;

use flowc_ir::{BlockId, Function, InstId, InstKind, ValueId};

use super::view::View;

/// A set of member indices.
#[derive(Clone, PartialEq, Eq)]
pub struct Bits(Vec<u64>);

impl Bits {
    fn empty(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }

    fn single(n: usize, i: usize) -> Bits {
        let mut b = Bits::empty(n);
        b.insert(i);
        b
    }

    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }

    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    fn intersect(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a &= *b;
        }
    }
}

/// The result: the set at each reachable block's entry.
pub struct Currency {
    index: HashMap<ValueId, usize>,
    ins: HashMap<BlockId, Bits>,
    size: usize,
}

/// Tracks the set through one block.
pub struct Cursor<'a> {
    c: &'a Currency,
    cur: Bits,
}

impl Currency {
    /// `values` are the web's members; `news`, `phis` and `events` (its
    /// `new`s, `get`s and `set`s) its instructions with their blocks, in
    /// layout order.
    pub fn new(
        f: &Function,
        view: &View,
        values: &[ValueId],
        news: &[(BlockId, InstId)],
        phis: &[(BlockId, InstId)],
        events: &[(BlockId, InstId)],
    ) -> Currency {
        let size = values.len();
        let after_new = view.closure(news.iter().map(|&(b, _)| b), true);
        let before_use = view.closure(phis.iter().chain(events).map(|&(b, _)| b), false);
        let in_region = |b: BlockId| {
            let k = b.into_raw().into_u32() as usize;
            after_new.get(k).copied().unwrap_or(false) && before_use.get(k).copied().unwrap_or(false)
        };
        let index: HashMap<ValueId, usize> = values.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let member = |i: InstId| f.insts[i].result.and_then(|v| index.get(&v).copied());
        let mut last_new: HashMap<BlockId, usize> = HashMap::new();
        for &(b, i) in news {
            if let Some(m) = member(i) {
                last_new.insert(b, m);
            }
        }
        let mut block_phis: HashMap<BlockId, Vec<(usize, InstId)>> = HashMap::new();
        for &(b, i) in phis {
            if let Some(m) = member(i) {
                block_phis.entry(b).or_default().push((m, i));
            }
        }
        let mut ins: HashMap<BlockId, Bits> = HashMap::new();
        let mut outs: HashMap<BlockId, Bits> = HashMap::new();
        loop {
            let mut changed = false;
            for &b in view.rpo.iter().filter(|&&b| in_region(b)) {
                let preds = view.preds(b);
                let mut set = if preds.is_empty() {
                    Bits::empty(size)
                } else {
                    let mut meet: Option<Bits> = None;
                    for &p in preds {
                        let empty;
                        let o = if in_region(p) {
                            match outs.get(&p) {
                                Some(o) => o,
                                None => continue,
                            }
                        } else {
                            // No `new` of the web reaches `p`.
                            empty = Bits::empty(size);
                            &empty
                        };
                        match &mut meet {
                            Some(m) => m.intersect(o),
                            None => meet = Some(o.clone()),
                        }
                    }
                    // Reverse postorder visits some predecessor first.
                    let Some(mut set) = meet else { continue };
                    for &(m, phi) in block_phis.get(&b).map_or(&[][..], |v| v) {
                        set.remove(m);
                        let InstKind::Phi(inputs) = &f.insts[phi].kind else { continue };
                        let holds = preds.iter().all(|p| match outs.get(p) {
                            None => in_region(*p),
                            Some(o) => inputs
                                .iter()
                                .find(|(q, _)| q == p)
                                .and_then(|(_, x)| x.as_value())
                                .and_then(|u| index.get(&u))
                                .is_some_and(|&u| o.contains(u)),
                        });
                        if holds {
                            set.insert(m);
                        }
                    }
                    set
                };
                let out = match last_new.get(&b) {
                    Some(&m) => Bits::single(size, m),
                    None => set.clone(),
                };
                if ins.get(&b) != Some(&set) {
                    changed = true;
                    ins.insert(b, std::mem::replace(&mut set, Bits::empty(0)));
                }
                outs.insert(b, out);
            }
            if !changed {
                break;
            }
        }
        Currency { index, ins, size }
    }

    /// The set at the entry of `b` (empty for blocks never reached).
    pub fn cursor(&self, b: BlockId) -> Cursor<'_> {
        Cursor { c: self, cur: self.ins.get(&b).cloned().unwrap_or_else(|| Bits::empty(self.size)) }
    }
}

impl Cursor<'_> {
    /// After a `new` of the web with result `v`.
    pub fn allocated(&mut self, v: ValueId) {
        self.cur = Bits::empty(self.c.size);
        if let Some(&m) = self.c.index.get(&v) {
            self.cur.insert(m);
        }
    }

    pub fn is_current(&self, v: ValueId) -> bool {
        self.c.index.get(&v).is_some_and(|&m| self.cur.contains(m))
    }
}

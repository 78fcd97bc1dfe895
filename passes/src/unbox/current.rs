//! Which values of a phi-web hold the web's *current* object — the one its
//! most recent `new` allocated — and which its *previous* one — the one
//! current before that `new` — at each point. Unbox keeps one SSA
//! variable per field for each of the two, so every `set` of the web must
//! go through a value holding the current object, and every `get` through
//! one holding the current or the previous object. The previous object
//! cannot change any more: only the current one is written, and a fresh
//! object is never an older one. (So an object replaced by a new one every
//! iteration, the new one's fields computed from the old one's, unboxes.)
//!
//! Forward data flow over the [`View`], greatest fixpoint (unvisited
//! predecessors count as "all values"): after a `new` only its result holds
//! the current object and what held the current one holds the previous;
//! at a block entry a value holds one if it did at the end of every
//! predecessor (a phi of the block itself is overwritten, so it holds it
//! only if each of its inputs held it at the end of that input's
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

/// The members holding the current and the previous object.
#[derive(Clone, PartialEq, Eq)]
struct Holders {
    current: Bits,
    previous: Bits,
}

impl Holders {
    fn empty(n: usize) -> Holders {
        Holders { current: Bits::empty(n), previous: Bits::empty(n) }
    }

    fn intersect(&mut self, o: &Holders) {
        self.current.intersect(&o.current);
        self.previous.intersect(&o.previous);
    }

    /// After a `new` whose result is member `m` (if it is one).
    fn allocated(&mut self, n: usize, m: Option<usize>) {
        self.previous = std::mem::replace(&mut self.current, Bits::empty(n));
        if let Some(m) = m {
            self.current.insert(m);
        }
    }
}

/// The result: the holders at each reachable block's entry.
pub struct Currency {
    index: HashMap<ValueId, usize>,
    ins: HashMap<BlockId, Holders>,
    size: usize,
}

/// Tracks the holders through one block.
pub struct Cursor<'a> {
    c: &'a Currency,
    cur: Holders,
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
        // Each block's `new`s, in order.
        let mut block_news: HashMap<BlockId, Vec<Option<usize>>> = HashMap::new();
        for &(b, i) in news {
            block_news.entry(b).or_default().push(member(i));
        }
        let mut block_phis: HashMap<BlockId, Vec<(usize, InstId)>> = HashMap::new();
        for &(b, i) in phis {
            if let Some(m) = member(i) {
                block_phis.entry(b).or_default().push((m, i));
            }
        }
        let mut ins: HashMap<BlockId, Holders> = HashMap::new();
        let mut outs: HashMap<BlockId, Holders> = HashMap::new();
        loop {
            let mut changed = false;
            for &b in view.rpo.iter().filter(|&&b| in_region(b)) {
                let preds = view.preds(b);
                let mut set = if preds.is_empty() {
                    Holders::empty(size)
                } else {
                    let mut meet: Option<Holders> = None;
                    for &p in preds {
                        let empty;
                        let o = if in_region(p) {
                            match outs.get(&p) {
                                Some(o) => o,
                                None => continue,
                            }
                        } else {
                            // No `new` of the web reaches `p`.
                            empty = Holders::empty(size);
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
                        set.current.remove(m);
                        set.previous.remove(m);
                        let InstKind::Phi(inputs) = &f.insts[phi].kind else { continue };
                        let holds = |which: fn(&Holders) -> &Bits| {
                            preds.iter().all(|p| match outs.get(p) {
                                None => in_region(*p),
                                Some(o) => inputs
                                    .iter()
                                    .find(|(q, _)| q == p)
                                    .and_then(|(_, x)| x.as_value())
                                    .and_then(|u| index.get(&u))
                                    .is_some_and(|&u| which(o).contains(u)),
                            })
                        };
                        if holds(|h| &h.current) {
                            set.current.insert(m);
                        }
                        if holds(|h| &h.previous) {
                            set.previous.insert(m);
                        }
                    }
                    set
                };
                let mut out = set.clone();
                for &m in block_news.get(&b).map_or(&[][..], |v| v) {
                    out.allocated(size, m);
                }
                if ins.get(&b) != Some(&set) {
                    changed = true;
                    ins.insert(b, std::mem::replace(&mut set, Holders::empty(0)));
                }
                outs.insert(b, out);
            }
            if !changed {
                break;
            }
        }
        Currency { index, ins, size }
    }

    /// The holders at the entry of `b` (none for blocks never reached).
    pub fn cursor(&self, b: BlockId) -> Cursor<'_> {
        Cursor { c: self, cur: self.ins.get(&b).cloned().unwrap_or_else(|| Holders::empty(self.size)) }
    }
}

impl Cursor<'_> {
    /// After a `new` of the web with result `v`.
    pub fn allocated(&mut self, v: ValueId) {
        self.cur.allocated(self.c.size, self.c.index.get(&v).copied());
    }

    pub fn is_current(&self, v: ValueId) -> bool {
        self.c.index.get(&v).is_some_and(|&m| self.cur.current.contains(m))
    }

    pub fn is_previous(&self, v: ValueId) -> bool {
        self.c.index.get(&v).is_some_and(|&m| self.cur.previous.contains(m))
    }
}

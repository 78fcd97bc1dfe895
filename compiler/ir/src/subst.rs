//! Forwarding tables: "value v now stands for operand o", with chains
//! (v1 → v2 → 3) followed to their end. The front end forwards the phis it
//! finds trivial while building SSA; the passes batch their replacements
//! and rewrite the function in one sweep ([`Substitution::apply`]).
//!
//! `marked` holds one bit per value and is what most lookups touch: a
//! sweep looks up every operand of the function, and on large functions a
//! bit table stays in cache where a table of operands does not. The
//! operands themselves are stored densely (`to`, in the order they were
//! first set), reached through `slot`; only marked values' slots are
//! meaningful. A table of one operand per value would cost 16 bytes per
//! value to fill and to drop even when few are forwarded.

use bitvec::vec::BitVec;

use crate::function::{Function, ValueId};
use crate::inst::Operand;
use crate::ix;

/// A batch of "replace value v by operand o".
#[derive(Clone, Debug, Default)]
pub struct Substitution {
    marked: BitVec,
    /// Per value (raw index): where its operand is in `to`, if marked.
    slot: Vec<u32>,
    to: Vec<Operand>,
}

impl Substitution {
    /// An empty substitution for the values of `f` (more may be added).
    pub fn new(f: &Function) -> Substitution {
        let n = f.values.len();
        Substitution { marked: BitVec::repeat(false, n), slot: Vec::with_capacity(n), to: Vec::new() }
    }

    #[inline]
    pub fn set(&mut self, v: ValueId, to: Operand) {
        let k = ix(v);
        if k >= self.marked.len() {
            self.marked.resize(k + 1, false);
        }
        if self.is_marked(k) {
            self.to[self.slot[k] as usize] = to;
            return;
        }
        if k >= self.slot.len() {
            self.slot.resize(k + 1, 0);
        }
        self.slot[k] = self.to.len() as u32;
        self.to.push(to);
        self.marked.set(k, true);
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.to.is_empty()
    }

    /// Whether `v` is forwarded: one word load and a shift (the storage of
    /// a `BitVec<usize, Lsb0>` is bit `k % BITS` of word `k / BITS`, and
    /// reading it directly skips `BitVec::get`'s span decoding, which
    /// dominated the sweeps).
    #[inline]
    fn is_marked(&self, k: usize) -> bool {
        const BITS: usize = usize::BITS as usize;
        self.marked.as_raw_slice().get(k / BITS).is_some_and(|w| (w >> (k % BITS)) & 1 != 0)
    }

    #[inline]
    pub fn get(&self, v: ValueId) -> Option<&Operand> {
        if !self.is_marked(ix(v)) {
            return None;
        }
        Some(&self.to[self.slot[ix(v)] as usize])
    }

    /// What `o` stands for after the substitution. A cycle (a value that
    /// leads back to itself) stops the walk after as many steps as there
    /// are entries.
    #[inline]
    pub fn resolve(&self, o: &Operand) -> Operand {
        let mut o = o.clone();
        let mut steps = 0;
        while let Operand::Value(v) = o {
            match self.get(v) {
                Some(to) if steps < self.to.len() => {
                    o = to.clone();
                    steps += 1;
                }
                _ => break,
            }
        }
        o
    }

    /// [`Substitution::resolve`], pointing every value on the way straight
    /// at the end (path compression), so long chains cost their length
    /// once over many lookups.
    #[inline]
    pub fn resolve_compressing(&mut self, o: &Operand) -> Operand {
        match o {
            Operand::Value(v) if self.get(*v).is_some() => {}
            _ => return o.clone(),
        }
        let end = self.resolve(o);
        let mut cur = o.clone();
        let mut steps = 0;
        while let Operand::Value(v) = cur {
            match self.get(v) {
                Some(r) if *r != end && steps < self.to.len() => {
                    let slot = self.slot[ix(v)] as usize;
                    cur = std::mem::replace(&mut self.to[slot], end.clone());
                    steps += 1;
                }
                _ => break,
            }
        }
        end
    }

    /// Rewrites every operand of the function (instructions, terminators,
    /// resume data), compressing the chains it walks, so each chain costs
    /// its length once however many operands name its values.
    pub fn apply(&mut self, f: &mut Function) {
        if self.is_empty() {
            return;
        }
        let mut fix = |o: &mut Operand| {
            if let Operand::Value(v) = o {
                if self.get(*v).is_some() {
                    *o = self.resolve_compressing(o);
                }
            }
        };
        let (layout, blocks, insts) = (&f.layout, &mut f.blocks, &mut f.insts);
        for &b in layout {
            let block = &mut blocks[b];
            for &i in block.phis.iter().chain(&block.insts) {
                insts[i].kind.operands_mut().for_each(&mut fix);
            }
            block.term.operands_mut().for_each(&mut fix);
        }
        for (_, r) in f.resumes.iter_mut() {
            for o in r.operands_mut() {
                fix(o);
            }
        }
    }
}

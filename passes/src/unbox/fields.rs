//! SSA for the fields of one web: one variable per field, built on demand
//! in the manner of Braun et al. 2013 (compare flowc-frontend's `ssa.rs`),
//! over a graph whose blocks are all filled and sealed, and with an extra
//! value *unset* — the state of every field right after `new` and before
//! any `new`. Phis are abstract here ([`FieldPhi`]); unbox materializes only
//! the ones a `get` needs, after proving that no `get` can see *unset*.
//!
//! - [`FieldSsa::write_end`] records a block's last write of a field;
//! - [`FieldSsa::read_entry`] finds the value at a block's entry: walking
//!   single-predecessor chains in a loop, placing a phi at a join (its
//!   operands come from a worklist, so the stack stays flat);
//! - [`FieldSsa::finish`] removes trivial phis (all inputs one value or the
//!   phi itself), re-examining their users;
//! - [`FieldSsa::may_be_unset`] / [`FieldSsa::may_be_set`] classify values.

use std::collections::HashMap;

use flowc_ir::{BlockId, Operand};

use super::view::View;

/// The value of a field variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FVal {
    Unset,
    Op(Operand),
    Phi(u32),
}

pub struct FieldPhi {
    pub block: BlockId,
    pub field: usize,
    /// One input per predecessor in the view, in its order.
    pub inputs: Vec<(BlockId, FVal)>,
}

pub struct FieldSsa<'v> {
    view: &'v View,
    limit: usize,
    last: HashMap<(BlockId, usize), FVal>,
    entry: HashMap<(BlockId, usize), FVal>,
    pub phis: Vec<FieldPhi>,
    replaced: Vec<Option<FVal>>,
    pending: Vec<u32>,
}

impl<'v> FieldSsa<'v> {
    pub fn new(view: &'v View) -> FieldSsa<'v> {
        FieldSsa {
            view,
            limit: view.rpo.len() + 1,
            last: HashMap::new(),
            entry: HashMap::new(),
            phis: Default::default(),
            replaced: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// `value` is the field's value at the end of `b` (later calls for the
    /// same block and field win).
    pub fn write_end(&mut self, b: BlockId, field: usize, value: FVal) {
        self.last.insert((b, field), value);
    }

    /// The field's value at the entry of `b`.
    pub fn read_entry(&mut self, field: usize, b: BlockId) -> FVal {
        let v = self.entry_no_pending(field, b);
        while let Some(phi) = self.pending.pop() {
            let (block, field) = (self.phis[phi as usize].block, self.phis[phi as usize].field);
            let mut inputs = Vec::new();
            for &p in self.view.preds(block) {
                let v = match self.last.get(&(p, field)) {
                    Some(v) => v.clone(),
                    None => self.entry_no_pending(field, p),
                };
                inputs.push((p, v));
            }
            self.phis[phi as usize].inputs = inputs;
        }
        v
    }

    fn entry_no_pending(&mut self, field: usize, b: BlockId) -> FVal {
        let mut walked = Vec::new();
        let mut cur = b;
        let value = loop {
            if let Some(v) = self.entry.get(&(cur, field)) {
                break v.clone();
            }
            let preds = self.view.preds(cur);
            match preds.len() {
                0 => break FVal::Unset,
                1 => {
                    let p = preds[0];
                    walked.push(cur);
                    if let Some(v) = self.last.get(&(p, field)) {
                        break v.clone();
                    }
                    if walked.len() > self.limit {
                        // A cycle of single-predecessor blocks: unreachable.
                        break FVal::Unset;
                    }
                    cur = p;
                }
                _ => {
                    let phi = self.phis.len() as u32;
                    self.phis.push(FieldPhi { block: cur, field, inputs: Vec::new() });
                    self.replaced.push(None);
                    self.pending.push(phi);
                    break FVal::Phi(phi);
                }
            }
        };
        if let FVal::Phi(_) = value {
            self.entry.insert((cur, field), value.clone());
        }
        for w in walked {
            self.entry.insert((w, field), value.clone());
        }
        value
    }

    /// What `v` stands for after trivial phis were removed.
    pub fn resolve(&self, v: &FVal) -> FVal {
        let mut v = v.clone();
        let mut steps = 0;
        while let FVal::Phi(p) = v {
            match &self.replaced[p as usize] {
                Some(r) if steps <= self.phis.len() => {
                    v = r.clone();
                    steps += 1;
                }
                _ => break,
            }
        }
        v
    }

    pub fn is_removed(&self, phi: u32) -> bool {
        self.replaced[phi as usize].is_some()
    }

    /// Removes trivial phis until none is left.
    pub fn finish(&mut self) {
        let mut users: Vec<Vec<u32>> = vec![Vec::new(); self.phis.len()];
        for (j, phi) in self.phis.iter().enumerate() {
            for (_, v) in &phi.inputs {
                if let FVal::Phi(k) = v {
                    users[*k as usize].push(j as u32);
                }
            }
        }
        let mut work: Vec<u32> = (0..self.phis.len() as u32).rev().collect();
        while let Some(j) = work.pop() {
            if self.is_removed(j) {
                continue;
            }
            let mut same: Option<FVal> = None;
            let mut trivial = true;
            for (_, v) in &self.phis[j as usize].inputs {
                let v = self.resolve(v);
                if v == FVal::Phi(j) || same.as_ref() == Some(&v) {
                    continue;
                }
                if same.is_some() {
                    trivial = false;
                    break;
                }
                same = Some(v);
            }
            // A phi with no input but itself is in a cycle nothing enters.
            let (true, Some(same)) = (trivial, same) else { continue };
            self.replaced[j as usize] = Some(same.clone());
            let mine = std::mem::take(&mut users[j as usize]);
            if let FVal::Phi(k) = same {
                users[k as usize].extend(mine.iter().copied());
            }
            work.extend(mine);
        }
    }

    /// Per phi: whether some path can bring *unset* into it.
    pub fn may_be_unset(&self) -> Vec<bool> {
        self.reaches(|v| *v == FVal::Unset)
    }

    /// Per phi: whether some path can bring a stored value into it.
    pub fn may_be_set(&self) -> Vec<bool> {
        self.reaches(|v| matches!(v, FVal::Op(_)))
    }

    /// Least fixpoint: phis with an input satisfying `base`, and phis with
    /// an input phi already marked.
    fn reaches(&self, base: impl Fn(&FVal) -> bool) -> Vec<bool> {
        let n = self.phis.len();
        let mut mark = vec![false; n];
        let mut users: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut work = Vec::new();
        for (j, phi) in self.phis.iter().enumerate() {
            if self.is_removed(j as u32) {
                continue;
            }
            for (_, v) in &phi.inputs {
                let v = self.resolve(v);
                if base(&v) && !mark[j] {
                    mark[j] = true;
                    work.push(j);
                }
                if let FVal::Phi(k) = v {
                    users[k as usize].push(j as u32);
                }
            }
        }
        while let Some(k) = work.pop() {
            for &u in &users[k] {
                if !mark[u as usize] {
                    mark[u as usize] = true;
                    work.push(u as usize);
                }
            }
        }
        mark
    }
}

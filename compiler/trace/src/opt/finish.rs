//! After the walk: phis left with one input (other than themselves) are
//! replaced by it, guards at the loop's head on what the loop does not
//! change move before it, and guards with equal resume data share one
//! record.

use flowc_ir::{BlockId, InstKind, Operand, ResumeId, ValueId};
use flowc_passes::edit::Substitution;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::walk::Opt;

impl Opt<'_> {
    /// Replaces, until none is left, the phis of `body` whose inputs other
    /// than themselves are all one operand.
    pub fn trivial_phis(&mut self, body: BlockId) {
        loop {
            let mut trivial = Substitution::new(self.f);
            let mut gone = Vec::new();
            for &phi in &self.f.blocks[body].phis {
                let InstKind::Phi(ins) = &self.f.insts[phi].kind else { continue };
                let me = Operand::Value(self.f.insts[phi].result.unwrap());
                let others: Vec<&Operand> = ins.iter().map(|(_, o)| o).filter(|o| **o != me).collect();
                if let Some(first) = others.first() {
                    if others.iter().all(|o| o == first) {
                        trivial.set(self.f.insts[phi].result.unwrap(), (*first).clone());
                        gone.push(phi);
                    }
                }
            }
            if gone.is_empty() {
                break;
            }
            flowc_passes::edit::unlink_where(self.f, body, |i| gone.contains(&i));
            trivial.apply(self.f);
        }
    }

    /// Moves the guards loop `body` starts with (before any other
    /// instruction) whose operands the loop does not change to the end
    /// of `pred`, the block entering it: passing on the first iteration,
    /// such a guard passes on every one. Its record, which describes the
    /// loop's head, then names each of the loop's phis by its value on
    /// entry. An interpreter promoting an instruction object it reads
    /// from a field (`pc = pc.next`, then `promote pc`): the heap cache
    /// knows the field round the loop, the phi of `pc` is its value on
    /// entry, and the loop's promotion was the one check left in a BF
    /// `[-]`, which then did not run to its end at once.
    pub fn hoist_invariant_guards(&mut self, body: BlockId, pred: BlockId) {
        let f = &*self.f;
        let block = &f.blocks[body];
        let entry: HashMap<ValueId, Operand> = block
            .phis
            .iter()
            .filter_map(|&phi| {
                let InstKind::Phi(ins) = &f.insts[phi].kind else { return None };
                let (_, x) = ins.iter().find(|(b, _)| *b == pred)?;
                Some((f.insts[phi].result?, x.clone()))
            })
            .collect();
        let inside: HashSet<ValueId> =
            block.phis.iter().chain(&block.insts).filter_map(|&i| f.insts[i].result).collect();
        let invariant = |o: &Operand| match o {
            Operand::Value(v) => !inside.contains(v),
            Operand::Const(_) => true,
        };
        let mut hoisted = Vec::new();
        for &i in &block.insts {
            let InstKind::Guard { resume, .. } = &f.insts[i].kind else { break };
            let record_ok = f.resumes[*resume].operands().all(|o| match o {
                Operand::Value(v) => !inside.contains(v) || entry.contains_key(v),
                Operand::Const(_) => true,
            });
            if !f.insts[i].kind.operands().all(invariant) || !record_ok {
                break;
            }
            hoisted.push(i);
        }
        if hoisted.is_empty() {
            return;
        }
        for &i in &hoisted {
            let InstKind::Guard { resume, .. } = &self.f.insts[i].kind else { unreachable!("a guard") };
            let mut record = self.f.resumes[*resume].clone();
            for o in record.operands_mut() {
                if let Operand::Value(v) = o {
                    if let Some(x) = entry.get(v) {
                        *o = x.clone();
                    }
                }
            }
            let record = self.f.resumes.alloc(record);
            if let InstKind::Guard { resume, .. } = &mut self.f.insts[i].kind {
                *resume = record;
            }
        }
        flowc_passes::edit::unlink_where(self.f, body, |i| hoisted.contains(&i));
        self.f.blocks[pred].insts.extend(hoisted);
    }

    /// Guards whose records are equal share the first one (records are
    /// found by hash: a long trace has hundreds of guards) — where what
    /// was known of their values there is the same ([`super::known`]): a
    /// later guard often knows more (the dispatch loop's `guard_cold`
    /// leaves by the record its opcode guards do, before `pc < n` gave
    /// `pc` a bound), and its bridge starts knowing that.
    pub fn share_records(&mut self) {
        use std::hash::{Hash, Hasher};
        let mut kept: rustc_hash::FxHashMap<u64, Vec<ResumeId>> = Default::default();
        for b in self.f.layout.clone() {
            for i in self.f.blocks[b].insts.clone() {
                let InstKind::Guard { resume, .. } = &self.f.insts[i].kind else { continue };
                let resume = *resume;
                let mut h = rustc_hash::FxHasher::default();
                self.f.resumes[resume].hash(&mut h);
                let bucket = kept.entry(h.finish()).or_default();
                let notes = self.exit_facts.notes_of(resume);
                let same =
                    |r: ResumeId| self.f.resumes[r] == self.f.resumes[resume] && self.exit_facts.notes_of(r) == notes;
                match bucket.iter().copied().find(|&r| same(r)) {
                    Some(same) => {
                        if let InstKind::Guard { resume, .. } = &mut self.f.insts[i].kind {
                            *resume = same;
                        }
                    }
                    None => bucket.push(resume),
                }
            }
        }
    }
}

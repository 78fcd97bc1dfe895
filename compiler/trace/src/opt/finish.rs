//! After the walk: phis left with one input (other than themselves) are
//! replaced by it, and guards with equal resume data share one record.

use flowc_ir::{BlockId, InstKind, Operand, ResumeId};
use flowc_passes::edit::Substitution;

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

    /// Guards whose records are equal share the first one (records are
    /// found by hash: a long trace has hundreds of guards).
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
                match bucket.iter().find(|&&r| self.f.resumes[r] == self.f.resumes[resume]) {
                    Some(&same) => {
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

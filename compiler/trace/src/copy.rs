//! Copying trace instructions, within one function or from one into
//! another (loop peeling copies the loop body, [`crate::opt`]).
//!
//! A [`Copier`] maps the source's values to operands of the destination.
//! Each copied instruction gets a fresh result (mapped from then on), a
//! fresh resume record if it is a guard (so the optimizer can rewrite
//! the copy's record without touching the original's), and the
//! original's source site. Values the map does not hold stay as they are:
//! right within one function (a value defined outside the copied code),
//! so a copy into another function must first map every value the copied
//! code reads but does not define.

use rustc_hash::FxHashMap as HashMap;

use flowc_ir::{Function, InstData, InstId, InstKind, Operand, ValueData, ValueDef, ValueId};

/// Maps the values of a source function while its instructions are copied.
pub struct Copier {
    map: HashMap<ValueId, Operand>,
}

impl Copier {
    pub fn new() -> Copier {
        Copier { map: HashMap::default() }
    }

    /// From now on, source value `v` is `o` in the copy.
    pub fn map(&mut self, v: ValueId, o: Operand) {
        self.map.insert(v, o);
    }

    /// Operand `o` of the source as the copy reads it.
    pub fn operand(&self, o: &Operand) -> Operand {
        match o {
            Operand::Value(v) => self.map.get(v).cloned().unwrap_or_else(|| o.clone()),
            c => c.clone(),
        }
    }

    /// Copies instruction `i` of `src` (not a phi) into `dst`, unplaced;
    /// returns the copy. `src` and `dst` may be clones of one function.
    pub fn inst(&mut self, src: &Function, dst: &mut Function, i: InstId) -> InstId {
        let data = &src.insts[i];
        debug_assert!(!matches!(data.kind, InstKind::Phi(_)), "phis are copied by their owner");
        let mut kind = data.kind.clone();
        for o in kind.operands_mut() {
            *o = self.operand(o);
        }
        if let InstKind::Guard { resume, .. } = &mut kind {
            let mut record = src.resumes[*resume].clone();
            for o in record.operands_mut() {
                *o = self.operand(o);
            }
            *resume = dst.resumes.alloc(record);
        }
        let c = dst.insts.alloc(InstData { kind, result: None });
        if let Some(r) = data.result {
            let v = dst.values.alloc(ValueData { def: ValueDef::Inst(c), name: src.values[r].name });
            dst.insts[c].result = Some(v);
            self.map.insert(r, Operand::Value(v));
        }
        if let Some(site) = src.sites.inst(i) {
            dst.sites.set_inst(c, site);
        }
        c
    }

    /// A new value of `dst` standing for source value `v` (named like it),
    /// defined by nothing yet; mapped from now on.
    pub fn fresh(&mut self, src: &Function, dst: &mut Function, v: ValueId, def: ValueDef) -> ValueId {
        let nv = dst.values.alloc(ValueData { def, name: src.values[v].name });
        self.map.insert(v, Operand::Value(nv));
        nv
    }
}

impl Default for Copier {
    fn default() -> Copier {
        Copier::new()
    }
}

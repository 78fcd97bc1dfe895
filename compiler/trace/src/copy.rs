//! Copying trace instructions, within one function or from one into
//! another: loop peeling copies the loop body ([`crate::opt`]), the JIT
//! splits a loop trace into its preamble and its loop and inlines the
//! preamble into the bridges that jump to the loop ([`crate::preamble`]).
//!
//! A [`Copier`] maps the source's values to operands of the destination.
//! Each copied instruction gets a fresh result (mapped from then on), a
//! fresh resume record if it is a guard (so the optimizer can rewrite
//! the copy's record without touching the original's), and the
//! original's source site. Values the map does not hold stay as they are:
//! right within one function (a value defined outside the copied code),
//! so a copy into another function must first map every value the copied
//! code reads but does not define ([`free_values`]).

use std::collections::HashMap;

use flowc_ir::{BlockId, Function, InstData, InstId, InstKind, Operand, ValueData, ValueDef, ValueId};

/// Maps the values of a source function while its instructions are copied.
pub struct Copier {
    map: HashMap<ValueId, Operand>,
}

impl Copier {
    pub fn new() -> Copier {
        Copier { map: HashMap::new() }
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

/// The values block `b` of `f` reads (phi inputs from other blocks,
/// instruction operands, its guards' resume records, its terminator) but
/// does not define, in the order of first use.
pub fn free_values(f: &Function, b: BlockId) -> Vec<ValueId> {
    let block = &f.blocks[b];
    let defined: std::collections::HashSet<ValueId> =
        block.phis.iter().chain(&block.insts).filter_map(|&i| f.insts[i].result).collect();
    let mut seen: std::collections::HashSet<ValueId> = std::collections::HashSet::new();
    let mut out: Vec<ValueId> = Vec::new();
    let mut note = |o: &Operand| {
        if let Operand::Value(v) = o {
            if !defined.contains(v) && seen.insert(*v) {
                out.push(*v);
            }
        }
    };
    for &p in &block.phis {
        if let InstKind::Phi(inputs) = &f.insts[p].kind {
            inputs.iter().filter(|(from, _)| *from != b).for_each(|(_, o)| note(o));
        }
    }
    for &i in &block.insts {
        let kind = &f.insts[i].kind;
        kind.operands().for_each(&mut note);
        if let InstKind::Guard { resume, .. } = kind {
            f.resumes[*resume].operands().for_each(&mut note);
        }
    }
    block.term.operands().for_each(&mut note);
    if let flowc_ir::Terminator::Exit { resume, .. } = &block.term {
        f.resumes[*resume].operands().for_each(&mut note);
    }
    out
}

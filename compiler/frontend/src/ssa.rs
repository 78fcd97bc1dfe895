//! On-the-fly SSA construction (Braun et al., CC 2013, Algorithms 1–3).
//!
//! - `write(var, block, value)` records the current definition;
//! - `read(var, block)` finds it: locally, else through the single
//!   predecessor, else by a phi (an *incomplete* phi while the block is not
//!   sealed, i.e. while some predecessor is not yet filled);
//! - `seal(block)` completes the block's incomplete phis;
//! - a phi whose inputs are all one value (or itself) is trivial: it is
//!   replaced by that value and the phis that used it are re-examined.
//!
//! Two departures from the paper's recursive pseudo-code keep the stack
//! flat on graphs with a million blocks: chains of single-predecessor
//! blocks are walked in a loop, and phis created in sealed blocks get their
//! operands from a worklist (`pending`) instead of a recursive call. Phi
//! replacement is recorded in a forwarding map and applied to every operand
//! in [`Ssa::finish`].

use std::collections::HashMap;

use flowc_ir::{BlockId, Builder, Function, InstId, InstKind, Operand, ValueDef, ValueId};
use flowc_lang::Symbol;

/// What a variable is at the entry block, where no definition was found.
pub trait EntryValue {
    fn entry_value(&mut self, builder: &mut Builder, var: Symbol) -> Operand;
}

pub struct Ssa {
    pub builder: Builder,
    preds: HashMap<BlockId, Vec<BlockId>>,
    /// Current definitions per block.
    defs: HashMap<BlockId, Vec<(Symbol, Operand)>>,
    sealed: HashMap<BlockId, bool>,
    /// Incomplete phis of unsealed blocks.
    incomplete: HashMap<BlockId, Vec<(Symbol, InstId)>>,
    /// Phis still waiting for (some of) their operands.
    unfinished: HashMap<InstId, ()>,
    pending: Vec<(Symbol, InstId, BlockId)>,
    replaced: HashMap<ValueId, Operand>,
    /// For each phi value, the phis that use it.
    phi_users: HashMap<ValueId, Vec<InstId>>,
    removed: HashMap<InstId, ()>,
}

impl Ssa {
    pub fn new(builder: Builder, preds: HashMap<BlockId, Vec<BlockId>>) -> Ssa {
        Ssa {
            builder,
            preds,
            defs: HashMap::new(),
            sealed: HashMap::new(),
            incomplete: HashMap::new(),
            unfinished: HashMap::new(),
            pending: Vec::new(),
            replaced: HashMap::new(),
            phi_users: HashMap::new(),
            removed: HashMap::new(),
        }
    }

    fn preds(&self, b: BlockId) -> &[BlockId] {
        self.preds.get(&b).map_or(&[], |v| v)
    }

    pub fn is_sealed(&self, b: BlockId) -> bool {
        self.sealed.get(&b).copied().unwrap_or(false)
    }

    pub fn write(&mut self, var: Symbol, block: BlockId, value: Operand) {
        let defs = self.defs.entry(block).or_default();
        match defs.iter_mut().find(|(v, _)| *v == var) {
            Some(slot) => slot.1 = value,
            None => defs.push((var, value)),
        }
    }

    fn local(&self, var: Symbol, block: BlockId) -> Option<Operand> {
        self.defs.get(&block)?.iter().find(|(v, _)| *v == var).map(|(_, o)| o.clone())
    }

    /// The current value of `var` at the end of the filled part of `block`.
    pub fn read(&mut self, var: Symbol, block: BlockId, entry: &mut dyn EntryValue) -> Operand {
        let value = self.read_no_pending(var, block, entry);
        self.process_pending(entry);
        self.resolve(&value)
    }

    fn read_no_pending(&mut self, var: Symbol, block: BlockId, entry: &mut dyn EntryValue) -> Operand {
        let mut walked = Vec::new();
        let mut b = block;
        let value = loop {
            if let Some(v) = self.local(var, b) {
                break v;
            }
            if !self.is_sealed(b) {
                let phi = self.new_phi(var, b);
                self.incomplete.entry(b).or_default().push((var, phi));
                break self.phi_value(phi);
            }
            match self.preds(b).len() {
                0 => {
                    let v = entry.entry_value(&mut self.builder, var);
                    self.write(var, b, v.clone());
                    break v;
                }
                1 => {
                    walked.push(b);
                    b = self.preds(b)[0];
                }
                _ => {
                    let phi = self.new_phi(var, b);
                    self.pending.push((var, phi, b));
                    break self.phi_value(phi);
                }
            }
        };
        for w in walked {
            self.write(var, w, value.clone());
        }
        value
    }

    fn new_phi(&mut self, var: Symbol, b: BlockId) -> InstId {
        let v = self.builder.phi(b, Vec::new(), Some(var));
        let ValueDef::Inst(phi) = self.builder.func.values[v].def else { unreachable!() };
        self.write(var, b, Operand::Value(v));
        self.unfinished.insert(phi, ());
        phi
    }

    fn phi_value(&self, phi: InstId) -> Operand {
        Operand::Value(self.builder.func.insts[phi].result.expect("phi has a result"))
    }

    /// Completes the block's incomplete phis; its predecessors are all filled.
    pub fn seal(&mut self, b: BlockId, entry: &mut dyn EntryValue) {
        if self.is_sealed(b) {
            return;
        }
        for (var, phi) in self.incomplete.remove(&b).unwrap_or_default() {
            self.pending.push((var, phi, b));
        }
        self.sealed.insert(b, true);
        self.process_pending(entry);
    }

    fn process_pending(&mut self, entry: &mut dyn EntryValue) {
        while let Some((var, phi, b)) = self.pending.pop() {
            let preds = self.preds(b).to_vec();
            let mut inputs = Vec::with_capacity(preds.len());
            for p in preds {
                // Register under the value the operand stands for now: a
                // phi removed earlier forwards to its replacement.
                let read = self.read_no_pending(var, p, entry);
                let o = self.resolve(&read);
                if let Operand::Value(v) = o {
                    if self.is_phi(v) {
                        self.phi_users.entry(v).or_default().push(phi);
                    }
                }
                inputs.push((p, o));
            }
            self.builder.func.insts[phi].kind = InstKind::Phi(inputs);
            self.unfinished.remove(&phi);
            self.try_remove_trivial(phi);
        }
    }

    fn is_phi(&self, v: ValueId) -> bool {
        match self.builder.func.values[v].def {
            ValueDef::Inst(i) => matches!(self.builder.func.insts[i].kind, InstKind::Phi(_)),
            _ => false,
        }
    }

    /// Follows phi replacements.
    pub fn resolve(&self, o: &Operand) -> Operand {
        let mut o = o.clone();
        while let Operand::Value(v) = o {
            match self.replaced.get(&v) {
                Some(r) => o = r.clone(),
                None => break,
            }
        }
        o
    }

    /// Algorithm 3 of the paper, with a worklist instead of recursion.
    fn try_remove_trivial(&mut self, phi: InstId) {
        let mut work = vec![phi];
        while let Some(phi) = work.pop() {
            if self.removed.contains_key(&phi) || self.unfinished.contains_key(&phi) {
                continue;
            }
            let me = self.builder.func.insts[phi].result.expect("phi has a result");
            let InstKind::Phi(inputs) = &self.builder.func.insts[phi].kind else { unreachable!() };
            let mut same: Option<Operand> = None;
            let mut trivial = true;
            for (_, o) in inputs {
                let o = self.resolve(o);
                if o == Operand::Value(me) || same.as_ref() == Some(&o) {
                    continue;
                }
                if same.is_some() {
                    trivial = false;
                    break;
                }
                same = Some(o);
            }
            if !trivial {
                continue;
            }
            // A phi with no input but itself sits in a cycle no definition
            // enters; reachable code never builds one, keep it if it appears.
            let Some(same) = same else { continue };
            self.replaced.insert(me, same.clone());
            self.removed.insert(phi, ());
            let users = self.phi_users.remove(&me).unwrap_or_default();
            if let Operand::Value(s) = same {
                if self.is_phi(s) {
                    self.phi_users.entry(s).or_default().extend(users.iter().copied().filter(|&u| u != phi));
                }
            }
            work.extend(users.into_iter().filter(|&u| u != phi));
        }
    }

    /// Unlinks removed phis and rewrites every operand through the
    /// replacements.
    pub fn finish(self) -> Function {
        let Ssa { builder, replaced, removed, .. } = self;
        let mut f = builder.finish();
        let resolve = |o: &mut Operand| {
            while let Operand::Value(v) = o {
                match replaced.get(v) {
                    Some(r) => *o = r.clone(),
                    None => break,
                }
            }
        };
        for b in f.layout.clone() {
            f.blocks[b].phis.retain(|i| !removed.contains_key(i));
            let ids: Vec<InstId> = f.block_insts(b).collect();
            for i in ids {
                for o in f.insts[i].kind.operands_mut() {
                    resolve(o);
                }
            }
            for o in f.blocks[b].term.operands_mut() {
                resolve(o);
            }
        }
        for i in removed.keys() {
            if let Some(v) = f.insts[*i].result {
                f.values[v].def = ValueDef::Detached;
            }
        }
        f
    }
}

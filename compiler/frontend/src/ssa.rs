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
//! replacement is recorded in a forwarding table (`flowc_ir::subst`, with
//! path compression) and applied to every operand
//! in [`Ssa::finish`].

use flowc_ir::ix;
use flowc_ir::subst::Substitution;
use flowc_ir::{BlockId, Builder, Capacity, Function, InstId, InstKind, Operand, PhiInputs, ValueDef, ValueId};
use flowc_lang::Symbol;

/// What a variable is at the entry block, where no definition was found.
pub trait EntryValue {
    fn entry_value(&mut self, builder: &mut Builder, var: Symbol) -> Operand;
}

pub struct Ssa {
    pub builder: Builder,
    /// Dense tables indexed by the raw arena index of blocks, instructions
    /// and values (arenas are dense, so vectors beat hash maps here).
    preds: Vec<Vec<BlockId>>,
    /// Current definitions per block, 8 bytes each: most of the front
    /// end's memory on large graphs is these, since a read memoizes its
    /// answer in every block of the single-predecessor chain it walked.
    defs: Vec<BlockDefs>,
    /// The constants definitions name.
    consts: Vec<Operand>,
    sealed: Vec<bool>,
    /// Incomplete phis of unsealed blocks.
    incomplete: Vec<Vec<(Symbol, InstId)>>,
    /// Phis still waiting for (some of) their operands.
    unfinished: Vec<bool>,
    removed: Vec<bool>,
    pending: Vec<(Symbol, InstId, BlockId)>,
    /// Removed phis and the operands they forward to.
    replaced: Substitution,
    /// For each phi value, the phis that use it.
    phi_users: Vec<Vec<InstId>>,
    /// The worklist of [`Ssa::try_remove_trivial`], kept between calls.
    work: Vec<InstId>,
    /// The single-predecessor chain a read walked, kept between calls.
    walked: Vec<BlockId>,
}

/// A block's current definitions: a short list searched in order, most
/// blocks define a few variables; past [`BlockDefs::INDEXED`] entries a hash
/// index joins it, so that straight-line code defining thousands of
/// variables in one block does not make every read and write linear (a
/// 100,000-statement block with 75,000 variables took 0.77 s to lower).
#[derive(Clone, Default)]
struct BlockDefs {
    list: Vec<(Symbol, Def)>,
    /// Boxed: most blocks never get one, and an inline map would triple
    /// the size of every block's entry.
    #[allow(clippy::box_collection)]
    index: Option<Box<std::collections::HashMap<Symbol, u32>>>,
}

impl BlockDefs {
    const INDEXED: usize = 32;

    fn position(&self, var: Symbol) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(&var).map(|&k| k as usize),
            None => self.list.iter().position(|(v, _)| *v == var),
        }
    }

    fn get(&self, var: Symbol) -> Option<Def> {
        self.position(var).map(|k| self.list[k].1)
    }

    fn set(&mut self, var: Symbol, def: Def) {
        if let Some(k) = self.position(var) {
            self.list[k].1 = def;
            return;
        }
        self.list.push((var, def));
        match &mut self.index {
            Some(index) => {
                index.insert(var, (self.list.len() - 1) as u32);
            }
            None if self.list.len() > Self::INDEXED => {
                self.index = Some(Box::new(self.list.iter().enumerate().map(|(k, (v, _))| (*v, k as u32)).collect()));
            }
            None => {}
        }
    }
}

/// `v[i]`, growing `v` with defaults as needed.
fn slot<T: Default>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

/// A definition in 32 bits: a value's arena index, or (high bit set) the
/// index of a constant in [`Ssa::consts`].
#[derive(Copy, Clone)]
struct Def(u32);

impl Def {
    const CONST: u32 = 1 << 31;

    fn value(v: ValueId) -> Def {
        let i = v.into_raw().into_u32();
        assert!(i < Def::CONST, "a function has fewer than 2^31 values");
        Def(i)
    }

    fn constant(k: usize) -> Def {
        assert!(k < Def::CONST as usize, "a function has fewer than 2^31 constants");
        Def(Def::CONST | k as u32)
    }

    fn constant_index(self) -> Option<usize> {
        (self.0 & Def::CONST != 0).then_some((self.0 & !Def::CONST) as usize)
    }

    fn as_value(self) -> ValueId {
        ValueId::from_raw(la_arena::RawIdx::from_u32(self.0))
    }
}

fn flag(v: &[bool], i: usize) -> bool {
    v.get(i).copied().unwrap_or(false)
}

impl Ssa {
    /// `preds` is indexed by the raw block index. The dense tables are
    /// sized for `capacity` up front (the builder's; they still grow if it
    /// was too small), so a large graph does not recopy them as it grows.
    pub fn new(builder: Builder, preds: Vec<Vec<BlockId>>, capacity: Capacity) -> Ssa {
        let blocks = capacity.blocks.max(preds.len());
        Ssa {
            builder,
            preds,
            defs: vec![BlockDefs::default(); blocks],
            consts: Vec::new(),
            sealed: vec![false; blocks],
            incomplete: vec![Vec::new(); blocks],
            unfinished: vec![false; capacity.insts],
            removed: vec![false; capacity.insts],
            pending: Vec::new(),
            replaced: Substitution::default(),
            phi_users: vec![Vec::new(); capacity.insts],
            work: Vec::new(),
            walked: Vec::new(),
        }
    }

    /// The predecessors of `b`, as given to [`Ssa::new`].
    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        self.preds.get(ix(b)).map_or(&[], |v| v)
    }

    pub fn is_sealed(&self, b: BlockId) -> bool {
        flag(&self.sealed, ix(b))
    }

    pub fn write(&mut self, var: Symbol, block: BlockId, value: Operand) {
        let def = self.def(value);
        self.write_def(var, block, def);
    }

    fn def(&mut self, o: Operand) -> Def {
        match o {
            Operand::Value(v) => Def::value(v),
            c => {
                self.consts.push(c);
                Def::constant(self.consts.len() - 1)
            }
        }
    }

    fn operand(&self, d: Def) -> Operand {
        match d.constant_index() {
            Some(k) => self.consts[k].clone(),
            None => Operand::Value(d.as_value()),
        }
    }

    fn write_def(&mut self, var: Symbol, block: BlockId, def: Def) {
        slot(&mut self.defs, ix(block)).set(var, def);
    }

    fn local(&self, var: Symbol, block: BlockId) -> Option<Def> {
        self.defs.get(ix(block))?.get(var)
    }

    /// The current value of `var` at the end of the filled part of `block`.
    pub fn read(&mut self, var: Symbol, block: BlockId, entry: &mut dyn EntryValue) -> Operand {
        let value = self.read_no_pending(var, block, entry);
        self.process_pending(entry);
        self.resolve(&value)
    }

    fn read_no_pending(&mut self, var: Symbol, block: BlockId, entry: &mut dyn EntryValue) -> Operand {
        let mut walked = std::mem::take(&mut self.walked);
        let mut b = block;
        let def = loop {
            if let Some(d) = self.local(var, b) {
                break d;
            }
            if !self.is_sealed(b) {
                let phi = self.new_phi(var, b);
                slot(&mut self.incomplete, ix(b)).push((var, phi));
                break self.phi_def(phi);
            }
            match self.preds(b).len() {
                0 => {
                    let v = entry.entry_value(&mut self.builder, var);
                    let d = self.def(v);
                    self.write_def(var, b, d);
                    break d;
                }
                1 => {
                    walked.push(b);
                    b = self.preds(b)[0];
                }
                _ => {
                    let phi = self.new_phi(var, b);
                    self.pending.push((var, phi, b));
                    break self.phi_def(phi);
                }
            }
        };
        for w in walked.drain(..) {
            self.write_def(var, w, def);
        }
        self.walked = walked;
        self.operand(def)
    }

    fn new_phi(&mut self, var: Symbol, b: BlockId) -> InstId {
        let v = self.builder.phi(b, PhiInputs::new(), Some(var));
        let ValueDef::Inst(phi) = self.builder.func.values[v].def else { unreachable!() };
        self.write(var, b, Operand::Value(v));
        *slot(&mut self.unfinished, ix(phi)) = true;
        phi
    }

    fn phi_def(&self, phi: InstId) -> Def {
        Def::value(self.builder.func.insts[phi].result.expect("phi has a result"))
    }

    /// Completes the block's incomplete phis; its predecessors are all filled.
    pub fn seal(&mut self, b: BlockId, entry: &mut dyn EntryValue) {
        if self.is_sealed(b) {
            return;
        }
        for (var, phi) in std::mem::take(slot(&mut self.incomplete, ix(b))) {
            self.pending.push((var, phi, b));
        }
        *slot(&mut self.sealed, ix(b)) = true;
        self.process_pending(entry);
    }

    fn process_pending(&mut self, entry: &mut dyn EntryValue) {
        while let Some((var, phi, b)) = self.pending.pop() {
            let n = self.preds(b).len();
            let mut inputs = PhiInputs::with_capacity(n);
            for k in 0..n {
                let p = self.preds[ix(b)][k];
                // Register under the value the operand stands for now: a
                // phi removed earlier forwards to its replacement.
                let read = self.read_no_pending(var, p, entry);
                let o = self.resolve(&read);
                if let Operand::Value(v) = o {
                    if self.is_phi(v) {
                        slot(&mut self.phi_users, ix(v)).push(phi);
                    }
                }
                inputs.push((p, o));
            }
            self.builder.func.insts[phi].kind = InstKind::Phi(inputs);
            *slot(&mut self.unfinished, ix(phi)) = false;
            self.try_remove_trivial(phi);
        }
    }

    fn is_phi(&self, v: ValueId) -> bool {
        match self.builder.func.values[v].def {
            ValueDef::Inst(i) => matches!(self.builder.func.insts[i].kind, InstKind::Phi(_)),
            _ => false,
        }
    }

    /// Follows phi replacements, compressing the chain it walked.
    pub fn resolve(&mut self, o: &Operand) -> Operand {
        self.replaced.resolve_compressing(o)
    }

    /// Algorithm 3 of the paper, with a worklist instead of recursion.
    fn try_remove_trivial(&mut self, phi: InstId) {
        let mut work = std::mem::take(&mut self.work);
        work.push(phi);
        while let Some(phi) = work.pop() {
            if flag(&self.removed, ix(phi)) || flag(&self.unfinished, ix(phi)) {
                continue;
            }
            let me = self.builder.func.insts[phi].result.expect("phi has a result");
            let InstKind::Phi(inputs) = &self.builder.func.insts[phi].kind else { unreachable!() };
            let mut same: Option<Operand> = None;
            let mut trivial = true;
            for (_, o) in inputs {
                let o = self.replaced.resolve_compressing(o);
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
            self.replaced.set(me, same.clone());
            *slot(&mut self.removed, ix(phi)) = true;
            // Users removed already are dropped, not handed on: a chain of
            // trivial phis (a variable no loop of a long sequence writes)
            // would otherwise pass every earlier link's list to the next,
            // quadratic in the chain's length.
            let mut users = std::mem::take(slot(&mut self.phi_users, ix(me)));
            users.retain(|&u| u != phi && !flag(&self.removed, ix(u)));
            if let Operand::Value(s) = same {
                if self.is_phi(s) {
                    slot(&mut self.phi_users, ix(s)).extend(users.iter().copied());
                }
            }
            work.extend(users);
        }
        self.work = work;
    }

    /// Unlinks removed phis and rewrites every operand through the
    /// replacements.
    pub fn finish(self) -> Function {
        let Ssa { builder, mut replaced, removed, .. } = self;
        let mut f = builder.finish();
        for &b in &f.layout {
            f.blocks[b].phis.retain(|i| !flag(&removed, ix(*i)));
        }
        replaced.apply(&mut f);
        let dead: Vec<InstId> = f.insts.iter().map(|(i, _)| i).filter(|i| flag(&removed, ix(*i))).collect();
        for i in dead {
            if let Some(v) = f.insts[i].result {
                f.values[v].def = ValueDef::Detached;
            }
        }
        f
    }
}

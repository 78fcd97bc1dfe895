//! Compaction: a function renumbered so that its arenas hold only what its
//! layout reaches.
//!
//! Arenas are append-only ([`crate::function`]): a pass deletes by
//! unlinking, and SSA construction allocates a phi for every variable
//! looked up across a merge before it knows the phi is trivial. On the
//! generated programs of `compile_scale`, the main graph's instruction
//! arena has 1,630 slots after the front end, 885 of them linked, and 412
//! after the eight passes. The code generator, which runs last and holds
//! the IR through the peak of a compilation, does not need the rest.
//!
//! [`compact`] copies a function into arenas sized to fit:
//!
//! - blocks in layout order (the entry first, as the layout has it);
//! - instructions in layout order, each block's phis then its
//!   instructions — the order every sweep visits them;
//! - values: the parameters in order, then the result of each instruction
//!   in the new instruction order, then any other value a used resume
//!   record still names, detached (none, in valid IR);
//! - resume records: those a linked guard or exit names, in their old
//!   order, their operands renumbered; the others are dropped (a trace's
//!   records are most of what it holds, and its optimizer removes most of
//!   its guards). [`compact_with`] renumbers other references to records
//!   too;
//! - every instruction's and terminator's source site.
//!
//! [`compact_owned`] does the same with a function it may take apart,
//! moving what it keeps instead of copying it.
//!
//! Only numbers change: the compacted function prints the same as the
//! original up to renaming (`v`, `b`, `r` numbers), and runs the same.
//! Deterministic: the new numbers depend only on the layout.

use la_arena::{Arena, Idx, RawIdx};

use crate::function::{BlockData, Function, InstData, Module, Sites, ValueData, ValueDef};
use crate::inst::{InstKind, Operand, Terminator};
use crate::ix;
use crate::resume::{ResumeData, ResumeId};

/// Old raw index → new raw index, for one arena, and the old indices in
/// the order they were numbered.
struct Renumbering {
    new: Vec<u32>,
    old: Vec<u32>,
}

impl Renumbering {
    const NONE: u32 = u32::MAX;

    fn new(len: usize) -> Renumbering {
        Renumbering { new: vec![Self::NONE; len], old: Vec::new() }
    }

    /// Gives `old` the next number, unless it has one.
    fn assign(&mut self, old: usize) {
        if self.new[old] == Self::NONE {
            self.new[old] = self.old.len() as u32;
            self.old.push(old as u32);
        }
    }

    fn has(&self, old: usize) -> bool {
        self.new[old] != Self::NONE
    }

    /// How many are numbered.
    fn len(&self) -> usize {
        self.old.len()
    }

    fn get<T>(&self, old: Idx<T>) -> Idx<T> {
        let new = self.new[ix(old)];
        debug_assert_ne!(new, Self::NONE, "a reference to something compaction dropped");
        Idx::from_raw(RawIdx::from_u32(new))
    }

    /// The old ids in new order.
    fn order<T>(&self) -> impl Iterator<Item = Idx<T>> + '_ {
        self.old.iter().map(|&old| Idx::from_raw(RawIdx::from_u32(old)))
    }
}

/// `f` with only what its layout reaches, renumbered (see the module
/// documentation). `f` is valid IR (the checker's invariants hold), as the
/// passes leave it: every block a terminator or phi names is laid out.
pub fn compact(f: &Function) -> Function {
    compact_with(f, &mut Vec::new())
}

/// [`compact`], renumbering the records `resumes` names as well (those the
/// compacted function no longer has are dropped from it).
pub fn compact_with(f: &Function, resumes: &mut Vec<ResumeId>) -> Function {
    let n = Numbers::of(f);
    let kinds = n.insts.order::<InstData>().map(|i| f.insts[i].kind.clone()).collect();
    let records = n.records.order::<ResumeData>().map(|r| f.resumes[r].clone()).collect();
    n.build(f, kinds, records, resumes)
}

/// [`compact_with`] of a function not needed afterwards: the instructions
/// and records kept are moved out of it, not copied (a trace's records are
/// most of what it holds; copying them and then dropping the original was
/// a fifth of a JIT compile's code generation).
pub fn compact_owned(mut f: Function, resumes: &mut Vec<ResumeId>) -> Function {
    let n = Numbers::of(&f);
    let placeholder = InstKind::Unbound(f.name);
    let kinds =
        n.insts.order::<InstData>().map(|i| std::mem::replace(&mut f.insts[i].kind, placeholder.clone())).collect();
    let records = n.records.order::<ResumeData>().map(|r| std::mem::take(&mut f.resumes[r])).collect();
    n.build(&f, kinds, records, resumes)
}

/// The new numbers of what a function's layout reaches.
struct Numbers {
    blocks: Renumbering,
    insts: Renumbering,
    values: Renumbering,
    records: Renumbering,
}

impl Numbers {
    fn of(f: &Function) -> Numbers {
        let mut blocks = Renumbering::new(f.blocks.len());
        let mut insts = Renumbering::new(f.insts.len());
        let mut values = Renumbering::new(f.values.len());
        for &p in &f.params {
            values.assign(ix(p));
        }
        for &b in &f.layout {
            blocks.assign(ix(b));
            for i in f.block_insts(b) {
                insts.assign(ix(i));
                if let Some(r) = f.insts[i].result {
                    values.assign(ix(r));
                }
            }
        }
        // In valid IR every operand of a linked instruction or terminator,
        // and of a record they name, is numbered by now.
        let mut records = Renumbering::new(f.resumes.len());
        for r in f.used_resumes() {
            records.assign(ix(r));
            for o in f.resumes[r].operands() {
                if let Operand::Value(v) = o {
                    values.assign(ix(*v));
                }
            }
        }
        Numbers { blocks, insts, values, records }
    }

    /// The compacted function: `kinds` are the kinds of the instructions
    /// kept and `records` the records kept, in their new order, still
    /// with `f`'s numbers.
    fn build(
        &self,
        f: &Function,
        kinds: Vec<InstKind>,
        records: Vec<ResumeData>,
        resumes: &mut Vec<ResumeId>,
    ) -> Function {
        let Numbers { blocks, insts, values, records: numbered } = self;
        let value = |o: &mut Operand| {
            if let Operand::Value(v) = o {
                *v = values.get(*v);
            }
        };
        let mut new_insts: Arena<InstData> = Arena::with_capacity(insts.len());
        let mut sites = Sites::with_capacity(insts.len(), blocks.len());
        for (id, mut kind) in insts.order::<InstData>().zip(kinds) {
            kind.operands_mut().for_each(value);
            if let InstKind::Guard { resume, .. } = &mut kind {
                *resume = numbered.get(*resume);
            }
            if let InstKind::Phi(inputs) = &mut kind {
                for (pred, _) in inputs.iter_mut() {
                    *pred = blocks.get(*pred);
                }
            }
            let new = new_insts.alloc(InstData { kind, result: f.insts[id].result.map(|r| values.get(r)) });
            if let Some(site) = f.sites.inst(id) {
                sites.set_inst(new, site);
            }
        }
        let mut new_blocks: Arena<BlockData> = Arena::with_capacity(blocks.len());
        for id in blocks.order::<BlockData>() {
            let data = &f.blocks[id];
            let mut term = data.term.clone();
            term.operands_mut().for_each(value);
            if let Terminator::Exit { resume, .. } = &mut term {
                *resume = numbered.get(*resume);
            }
            for s in term.successors_mut() {
                *s = blocks.get(*s);
            }
            let new = new_blocks.alloc(BlockData {
                name: data.name,
                phis: data.phis.iter().map(|&i| insts.get(i)).collect(),
                insts: data.insts.iter().map(|&i| insts.get(i)).collect(),
                term,
            });
            if let Some(site) = f.sites.term(id) {
                sites.set_term(new, site);
            }
        }
        let mut new_values: Arena<ValueData> = Arena::with_capacity(values.len());
        for id in values.order::<ValueData>() {
            let data = &f.values[id];
            let def = match data.def {
                ValueDef::Inst(i) if insts.has(ix(i)) => ValueDef::Inst(insts.get(i)),
                ValueDef::Inst(_) | ValueDef::Detached => ValueDef::Detached,
                ValueDef::Param(n) => ValueDef::Param(n),
            };
            new_values.alloc(ValueData { def, name: data.name });
        }
        let mut new_resumes: Arena<ResumeData> = Arena::with_capacity(numbered.len());
        for mut r in records {
            r.operands_mut().for_each(value);
            new_resumes.alloc(r);
        }
        resumes.retain(|&r| numbered.has(ix(r)));
        for r in resumes.iter_mut() {
            *r = numbered.get(*r);
        }
        Function {
            kind: f.kind,
            name: f.name,
            params: f.params.iter().map(|&p| values.get(p)).collect(),
            entry: blocks.get(f.entry),
            layout: f.layout.iter().map(|&b| blocks.get(b)).collect(),
            blocks: new_blocks,
            insts: new_insts,
            values: new_values,
            resumes: new_resumes,
            sites,
        }
    }
}

impl Module {
    /// Compacts every function ([`compact`]), freeing the arenas' unlinked
    /// slots: for code generation, which needs no old numbers.
    pub fn compact(&mut self) {
        for f in &mut self.functions {
            *f = compact(f);
        }
    }
}

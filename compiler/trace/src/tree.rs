//! Trace trees (TraceMonkey's, here built from PyPy-style pieces): a loop
//! and the bridges that grew from its exits, as one function, so that a
//! nest of loops the JIT compiled piece by piece runs as one machine-code
//! nest with registers allocated across it.
//!
//! The JIT compiles a loop, then a bridge for each exit that fails often;
//! the bridge ends by jumping back into the loop (or elsewhere), and a
//! linked exit continues in it. Each crossing stores the exit's values in
//! memory and tail-calls. A [`Tree`] starts as a copy of the loop's trace
//! (the *root*) and *grafts* bridges onto its exits: the guard becomes a
//! branch whose failing side is the bridge's code, copied into a new
//! block with its parameters replaced by the values the exit stored; a
//! bridge's `jump_trace` back to the root becomes a jump to the tree's
//! *header*, a block whose phis take the root's parameters (from the
//! entry, and from each bridge that loops back). Grafted bridges' own
//! exits can be grafted in turn. What is not grafted stays as it was: a
//! guard or `exit` leaves as before (its link, if any, is carried over by
//! the JIT), a `jump_trace` elsewhere continues in that trace's code.
//!
//! | guard | becomes |
//! |---|---|
//! | `guard_true x` | `branch x then cont else bridge` |
//! | `guard_false x` | `branch x then bridge else cont` |
//! | `guard_class x, C` | `if_class x, C then cont else bridge` |
//! | `guard_not_class x, C` | `if_class x, C then bridge else cont` |
//! | `guard_value x, c` | `t = eq x, c; branch t then cont else bridge` |
//! | `exit` (a bridge's end) | `jump bridge` |
//!
//! (`guard_int`, a loop preamble's speculation check, is not grafted.)
//! The tree remembers where each of its guards and exits came from
//! ([`Tree::origin`]): which piece, which block and record there, and the
//! piece's values behind the tree's.

use rustc_hash::FxHashMap as HashMap;

use flowc_ir::{
    BlockId, Function, GuardKind, InstData, InstId, InstKind, Operand, PhiInputs, ResumeId, Terminator, ValueData,
    ValueDef, ValueId,
};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::Symbol;
use flowc_passes::edit::{self, Substitution};

use crate::copy::Copier;

/// One piece of a tree (the root, or a grafted bridge): how its values,
/// blocks and records are named in the tree.
struct Piece {
    /// Piece value → tree operand.
    values: HashMap<ValueId, Operand>,
    /// Tree value → piece value (for the tree's values that stand for one).
    back: HashMap<ValueId, ValueId>,
    /// Piece record, tree record (a record some guards of the piece share
    /// is copied once per guard).
    resumes: Vec<(ResumeId, ResumeId)>,
}

/// An exit of a piece, as the piece names it (what the code generator's
/// `TraceExit` says of it).
#[derive(Clone, Debug)]
pub struct ExitKey {
    pub block: BlockId,
    pub resume: ResumeId,
    pub label: Symbol,
    /// The guarded value of a `guard_value`.
    pub key: Option<ValueId>,
    /// A guard, not the `exit` that ends a bridge.
    pub guard: bool,
    /// The values the exit stores, in order (the bridge's parameters).
    pub values: Vec<ValueId>,
}

/// Where a guard or exit of the tree comes from: its piece (by index, the
/// root 0), the block and record there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub piece: usize,
    pub block: BlockId,
    pub resume: ResumeId,
}

/// A tree being built.
pub struct Tree {
    pub f: Function,
    /// The root's name (what bridges jump to when they loop back).
    root: Symbol,
    /// The block whose phis take the root's parameters.
    header: BlockId,
    pieces: Vec<Piece>,
    /// Per tree block: the piece and block it comes from.
    blocks: HashMap<BlockId, (usize, BlockId)>,
}

impl Tree {
    /// A tree of `root` alone (under the name `name`), with its header.
    pub fn new(root: &Function, name: Symbol) -> Tree {
        let mut f = root.clone();
        f.name = name;
        let mut blocks: HashMap<BlockId, (usize, BlockId)> = f.layout.iter().map(|&b| (b, (0, b))).collect();
        // entry -> header -> the root's entry; the header's phis stand for
        // the root's parameters everywhere.
        let old_entry = f.entry;
        let header = f.blocks.alloc(flowc_ir::BlockData {
            name: f.blocks[old_entry].name,
            phis: Default::default(),
            insts: Default::default(),
            term: Terminator::Jump(old_entry),
        });
        let entry = f.blocks.alloc(flowc_ir::BlockData {
            name: None,
            phis: Default::default(),
            insts: Default::default(),
            term: Terminator::Jump(header),
        });
        f.layout.insert(0, header);
        f.layout.insert(0, entry);
        f.entry = entry;
        blocks.insert(header, (0, old_entry));
        blocks.insert(entry, (0, old_entry));
        let mut subst = Substitution::new(&f);
        let mut phis = Vec::new();
        for &p in &f.params.clone() {
            let i = f.insts.alloc(InstData { kind: InstKind::Phi(PhiInputs::new()), result: None });
            let v = f.values.alloc(ValueData { def: ValueDef::Inst(i), name: f.values[p].name });
            f.insts[i].result = Some(v);
            phis.push((i, p));
            subst.set(p, Operand::Value(v));
        }
        subst.apply(&mut f);
        for &(i, p) in &phis {
            f.insts[i].kind = InstKind::Phi(PhiInputs::from_iter([(entry, Operand::Value(p))]));
            f.blocks[header].phis.push(i);
        }
        // The root's values are themselves, but its parameters are the
        // header's phis.
        let mut values: HashMap<ValueId, Operand> = HashMap::default();
        let mut back: HashMap<ValueId, ValueId> = HashMap::default();
        for (v, _) in root.values.iter() {
            values.insert(v, Operand::Value(v));
            back.insert(v, v);
        }
        for &(i, p) in &phis {
            let v = f.insts[i].result.expect("a phi's value");
            values.insert(p, Operand::Value(v));
            back.insert(v, p);
        }
        let resumes = root.resumes.iter().map(|(r, _)| (r, r)).collect();
        Tree { f, root: root.name, header, pieces: vec![Piece { values, back, resumes }], blocks }
    }

    /// Grafts `bridge` onto exit `exit` of piece `piece`; the new piece's
    /// index, or `None` (the tree unchanged) when the exit is not found,
    /// cannot become a branch, or the bridge is not one straight block.
    pub fn graft(&mut self, piece: usize, exit: &ExitKey, bridge: &Function) -> Option<usize> {
        if bridge.layout.len() != 1 || bridge.params.len() != exit.values.len() {
            return None;
        }
        let tree_resumes: Vec<ResumeId> =
            self.pieces[piece].resumes.iter().filter(|(p, _)| *p == exit.resume).map(|&(_, t)| t).collect();
        let tree_key = match exit.key {
            Some(k) => Some(self.pieces[piece].values.get(&k)?.clone()),
            None => None,
        };
        // The tree blocks the exit's block became, and its places there.
        let mut sites: Vec<(BlockId, Option<InstId>)> = Vec::new();
        for &b in &self.f.layout {
            if self.blocks.get(&b) != Some(&(piece, exit.block)) {
                continue;
            }
            if !exit.guard {
                if matches!(self.f.blocks[b].term, Terminator::Exit { resume, label } if tree_resumes.contains(&resume) && label == exit.label)
                {
                    sites.push((b, None));
                }
                continue;
            }
            for &i in &self.f.blocks[b].insts {
                let InstKind::Guard { kind, resume, label } = &self.f.insts[i].kind else { continue };
                let key = match kind {
                    GuardKind::Value(o, _) => Some(o.clone()),
                    _ => None,
                };
                if tree_resumes.contains(resume) && *label == exit.label && key == tree_key {
                    // A retrace's entry check, a link's place (whose
                    // result no branch defines) and a dispatch tier's
                    // position stay exits.
                    if matches!(kind, GuardKind::Int(..) | GuardKind::At(..) | GuardKind::Row(..) | GuardKind::Cold(_))
                    {
                        return None;
                    }
                    sites.push((b, Some(i)));
                }
            }
        }
        if sites.is_empty() {
            return None;
        }
        // The bridge's code, once, its parameters the exit's values.
        let args: Vec<Operand> =
            exit.values.iter().map(|v| self.pieces[piece].values.get(v).cloned()).collect::<Option<_>>()?;
        let index = self.pieces.len();
        let start = self.copy_bridge(bridge, &args, index);
        for (b, guard) in sites {
            match guard {
                None => self.f.blocks[b].term = Terminator::Jump(start),
                Some(g) => self.branch_at(b, g, start),
            }
        }
        Some(index)
    }

    /// Copies straight trace `bridge` into a new block, its parameters
    /// `args`, as piece `index`; the block.
    fn copy_bridge(&mut self, bridge: &Function, args: &[Operand], index: usize) -> BlockId {
        let src = bridge.entry;
        let nb = self.f.blocks.alloc(flowc_ir::BlockData {
            name: bridge.blocks[src].name,
            phis: Default::default(),
            insts: Default::default(),
            term: Terminator::Trap(flowc_ir::Trap::Unreachable),
        });
        self.f.layout.push(nb);
        self.blocks.insert(nb, (index, src));
        let mut copier = Copier::new();
        for (&p, a) in bridge.params.iter().zip(args) {
            copier.map(p, a.clone());
        }
        let mut resumes: Vec<(ResumeId, ResumeId)> = Vec::new();
        let mut insts = Vec::new();
        for &i in &bridge.blocks[src].insts {
            let c = copier.inst(bridge, &mut self.f, i);
            if let (InstKind::Guard { resume: orig, .. }, InstKind::Guard { resume: copy, .. }) =
                (&bridge.insts[i].kind, &self.f.insts[c].kind)
            {
                resumes.push((*orig, *copy));
            }
            insts.push(c);
        }
        self.f.blocks[nb].insts = insts.into_iter().collect();
        let term = match &bridge.blocks[src].term {
            Terminator::JumpTrace { target, args } if *target == self.root => {
                let args: Vec<Operand> = args.iter().map(|a| copier.operand(a)).collect();
                let phis = self.f.blocks[self.header].phis.clone();
                for (&phi, a) in phis.iter().zip(args) {
                    if let InstKind::Phi(inputs) = &mut self.f.insts[phi].kind {
                        inputs.push((nb, a));
                    }
                }
                Terminator::Jump(self.header)
            }
            Terminator::JumpTrace { target, args } => {
                Terminator::JumpTrace { target: *target, args: args.iter().map(|a| copier.operand(a)).collect() }
            }
            Terminator::Exit { resume, label } => {
                let mut record = bridge.resumes[*resume].clone();
                for o in record.operands_mut() {
                    *o = copier.operand(o);
                }
                let copy = self.f.resumes.alloc(record);
                resumes.push((*resume, copy));
                Terminator::Exit { resume: copy, label: *label }
            }
            other => other.clone(),
        };
        self.f.blocks[nb].term = term;
        if let Some(site) = bridge.sites.term(src) {
            self.f.sites.set_term(nb, site);
        }
        let mut values: HashMap<ValueId, Operand> = HashMap::default();
        let mut back: HashMap<ValueId, ValueId> = HashMap::default();
        for (v, _) in bridge.values.iter() {
            let o = copier.operand(&Operand::Value(v));
            if let Operand::Value(t) = &o {
                back.entry(*t).or_insert(v);
            }
            values.insert(v, o);
        }
        self.pieces.push(Piece { values, back, resumes });
        nb
    }

    /// Splits block `b` at guard `g`, which becomes a branch to the rest of
    /// the block or, when the guard fails, to `bridge`.
    fn branch_at(&mut self, b: BlockId, g: InstId, bridge: BlockId) {
        let k = self.f.blocks[b].insts.iter().position(|&i| i == g).expect("the guard is in its block");
        let InstKind::Guard { kind, .. } = self.f.insts[g].kind.clone() else { unreachable!("a guard") };
        let rest: Vec<InstId> = self.f.blocks[b].insts[k + 1..].to_vec();
        let name = self.f.blocks[b].name;
        let cont = edit::new_block(&mut self.f, name, b);
        let origin = self.blocks[&b];
        self.blocks.insert(cont, origin);
        self.f.blocks[cont].insts = rest.into_iter().collect();
        self.f.blocks[cont].term = std::mem::replace(&mut self.f.blocks[b].term, Terminator::Jump(cont));
        self.f.blocks[b].insts.truncate(k);
        if let Some(site) = self.f.sites.term(b) {
            self.f.sites.set_term(cont, site);
        }
        for s in self.f.blocks[cont].term.successors() {
            edit::rename_phi_pred(&mut self.f, s, b, cont);
        }
        self.f.blocks[b].term = match kind {
            GuardKind::True(x) => Terminator::Branch { cond: x, then_block: cont, else_block: bridge },
            GuardKind::False(x) => Terminator::Branch { cond: x, then_block: bridge, else_block: cont },
            GuardKind::Class(x, class) | GuardKind::Link(x, class) => {
                Terminator::IfClass { obj: x, class, then_block: cont, else_block: bridge }
            }
            GuardKind::NotClass(x, class) => {
                Terminator::IfClass { obj: x, class, then_block: bridge, else_block: cont }
            }
            GuardKind::Value(x, c) => {
                let kind = InstKind::Op {
                    op: Operator::Known(Op::Eq),
                    form: Form::Generic,
                    args: [x, Operand::Const(c)].into_iter().collect(),
                };
                let site = self.f.sites.inst(g);
                let t = edit::append(&mut self.f, b, kind, None).expect("eq has a result");
                if let (Some(site), Some(i)) = (site, edit::def_inst(&self.f, t)) {
                    self.f.sites.set_inst(i, site);
                }
                Terminator::Branch { cond: Operand::Value(t), then_block: cont, else_block: bridge }
            }
            GuardKind::Int(..) | GuardKind::At(..) | GuardKind::Row(..) | GuardKind::Cold(_) => {
                unreachable!("not grafted")
            }
        };
        if let Some(site) = self.f.sites.inst(g) {
            self.f.sites.set_term(b, site);
        }
    }

    /// Where the guard or exit in tree block `b` with record `resume` comes
    /// from.
    pub fn origin(&self, b: BlockId, resume: ResumeId) -> Option<Origin> {
        let &(piece, block) = self.blocks.get(&b)?;
        let resume = self.pieces[piece].resumes.iter().find(|&&(_, t)| t == resume).map(|&(r, _)| r)?;
        Some(Origin { piece, block, resume })
    }

    /// The value of piece `piece` that tree value `v` stands for.
    pub fn piece_value(&self, piece: usize, v: ValueId) -> Option<ValueId> {
        self.pieces[piece].back.get(&v).copied()
    }

    /// How many pieces the tree has (the root is piece 0).
    pub fn pieces(&self) -> usize {
        self.pieces.len()
    }
}

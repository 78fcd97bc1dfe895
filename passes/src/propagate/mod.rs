//! Pass `propagate`: optimistic sparse conditional constant propagation
//! (Wegman & Zadeck) fused with kind, integer-range, list-length and
//! object-class inference, as Factor's propagation pass does — one
//! optimistic analysis, so facts help each other (a range decides a branch,
//! the dead branch no longer widens a range).
//!
//! Reads: the IR (normalized). Writes: nothing in the IR — it annotates:
//! a [`Propagation`] per function in `Context` (value infos, executable
//! blocks and edges, calls to fold, field reads to forward, calls to
//! inline), which `cleanup` turns into rewrites.
//!
//! - Everything starts at bottom; only blocks reached through executable
//!   edges are evaluated. A `branch` whose condition's truth is known, or an
//!   `if_class` whose answer is known, makes only one edge executable.
//! - Phis join their inputs over executable edges; a phi whose info keeps
//!   changing is widened ([`lattice::Widening`]: to the function's
//!   constants, then to the word bounds, then to infinity), so each phi
//!   changes a bounded number of times and the analysis stays linear.
//!   Phis where a retreating edge enters are widened from their third
//!   change; the others (where branches join) from their nineteenth: a
//!   join of values a dominating test bounded keeps the bound.
//! - A phi whose block gained an executable edge, or one of whose inputs
//!   changed, is joined again only once the edge and value worklists are
//!   empty, once for all that changed meanwhile: at a loop head of `n`
//!   predecessors (an interpreter's dispatch of `n` cases) joining at
//!   every edge and every change cost `n` times `n` inputs per variable.
//! - Operands are refined by the branches that lead to the block using
//!   them ([`Refiner`]): after `c = lt i, 10; branch c, t, e`, `i` is at
//!   most 9 in `t`; after `branch x, t, e`, `x` is 0 in `e`.
//! - A call of a `pure` function with constant arguments is run (with the
//!   IR interpreter, under fuel); if it returns a constant, that is its
//!   result. A `get` of an immutable field of a known allocation whose
//!   only `set` follows the `new` in its block reads the stored operand
//!   (and is visited again whenever that operand's info changes).
//! - Small leaf functions called from executable code are marked for
//!   inlining.

use std::collections::HashMap;
use std::fmt::Write as _;

use flowc_ir::interp::{self as ir_interp, Exit};
use flowc_ir::rows::Rows;
use flowc_ir::{BlockId, Function, FunctionKind, InstId, InstKind, Module, Operand, Terminator, ValueDef, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::interp::Config;
use flowc_lang::{Symbol, Value};

use crate::edit::ix;
use crate::lattice::{self, Info, Kinds, Widening};
use crate::Context;
use flowc_lang::ops::range::{self, Interval};

mod own_fields;
mod program;
mod refine;
pub use program::{is_class_or_zero, ProgramFacts};
pub use refine::Refiner;

/// What propagation learned about one function.
pub struct Propagation {
    /// The CFG views and branch refinements it used (cleanup reuses them:
    /// propagate does not change the IR).
    pub refiner: Refiner,
    /// Per value (raw index); bottom for values never reached.
    pub info: Vec<Info>,
    /// Per block (raw index): reached?
    pub executable: Vec<bool>,
    /// Executable edges, sorted.
    pub edges: Vec<(BlockId, BlockId)>,
    /// Pure calls with constant arguments and the constant they return.
    pub folded_calls: Vec<(InstId, Value)>,
    /// `get`s of immutable fields and the operand they read.
    pub field_reads: Vec<(InstId, Operand)>,
    /// Calls cleanup should inline.
    pub inline: Vec<InstId>,
    /// How many phi inputs the analysis joined: its work where blocks of
    /// many predecessors join (which tests bound).
    pub joined: usize,
}

impl Propagation {
    pub fn info(&self, v: ValueId) -> Info {
        self.info.get(ix(v)).cloned().unwrap_or_else(Info::bottom)
    }

    pub fn is_executable(&self, b: BlockId) -> bool {
        self.executable.get(ix(b)).copied().unwrap_or(false)
    }

    pub fn edge(&self, from: BlockId, to: BlockId) -> bool {
        self.edges.binary_search(&(from, to)).is_ok()
    }

    /// The info of operand `o` of `f` as seen in block `at` (narrowed by
    /// the branches that lead there).
    pub fn operand(&self, f: &Function, o: &Operand, at: BlockId) -> Info {
        operand_info(f, &self.refiner, &self.info, o, at)
    }
}

/// The info of operand `o` of `f` in block `at`: its value's info
/// (`info`, by raw index) refined by the branches that lead there.
fn operand_info(f: &Function, refiner: &Refiner, info: &[Info], o: &Operand, at: BlockId) -> Info {
    match o {
        Operand::Const(c) => Info::of_const(c),
        Operand::Value(v) => match info.get(ix(*v)) {
            Some(base) if !base.is_bottom() && refiner.is_tested(*v) => refiner.refine(f, *v, base.clone(), at),
            Some(base) => base.clone(),
            None => Info::bottom(),
        },
    }
}

pub fn run(module: &mut Module, cx: &mut Context) {
    let (facts, analyses, graph) = solve(module, cx, true);
    for (i, p) in analyses.into_iter().enumerate() {
        cx.facts(i).propagation = Some(p);
    }
    cx.program_facts = Some(facts);
    cx.call_graph = Some(graph);
}

/// Solves `module`'s program facts and analyzes each function with them
/// ([`program::solve`]); `reread_huge`: analyze huge functions once more
/// reading the solved facts (what the pass uses; the facts alone do not
/// need it).
fn solve(
    module: &Module,
    cx: &Context,
    reread_huge: bool,
) -> (ProgramFacts, Vec<Propagation>, flowc_ir::calls::CallGraph) {
    let fuel = cx.options.fold_fuel;
    let inlining = Inlining {
        by_name: module.function_index(),
        graph: flowc_ir::calls::CallGraph::new(module),
        limit: cx.options.inline_limit,
        depth: cx.options.inline_depth,
    };
    let params = Params { small: &cx.options.small_params, lists: &cx.options.known_lists };
    let (facts, analyses) = program::solve(
        module,
        |i, facts, reads, reuse| {
            let setting = Setting { module, inlining: &inlining, fuel, known: &params };
            analyze(&setting, i, facts, reads, reuse)
        },
        reread_huge,
    );
    (facts, analyses, inlining.graph)
}

/// The facts of `module` as propagate solves them, for code compiled
/// from the same program without the pipeline (the JIT's traces): on a
/// normalized copy, so they are the facts native code gets.
pub fn program_facts(module: &Module) -> ProgramFacts {
    program_facts_of(module.clone())
}

/// [`program_facts`] of a module the caller gives up (normalized in place).
pub fn program_facts_of(mut module: Module) -> ProgramFacts {
    let mut cx = Context::new(&module);
    crate::normalize::run(&mut module, &mut cx);
    solve(&module, &cx, false).0
}

/// Who uses a value: an instruction of a block, or a block's terminator.
#[derive(Copy, Clone)]
enum User {
    Inst(BlockId, InstId),
    Term(BlockId),
}

struct Analysis<'m> {
    module: &'m Module,
    f: &'m Function,
    /// What the program may store in each field, pass to each function
    /// and return from it: what a `get` reads, a call returns.
    facts: &'m ProgramFacts,
    /// Whether `get`s and calls read `facts`: not for a huge function
    /// while the facts are solved ([`program::uses_facts`]).
    reads_facts: bool,
    /// Where it does not: what its calls may return, from a solution
    /// made before ([`program::solve`]); else any value.
    returns: Option<&'m ProgramFacts>,
    /// Where it does not: the fields only this function writes, whose
    /// facts it solves itself ([`own_fields`]).
    own: Option<own_fields::OwnFields>,
    refiner: Refiner,
    info: Vec<Info>,
    changes: Vec<u8>,
    executable: Vec<bool>,
    /// Per source block: bit k set when the edge to its k-th (distinct)
    /// successor is executable.
    edge_bits: Vec<u8>,
    /// Users of every value, by raw value index.
    users: Rows<User>,
    flow: Vec<(Option<BlockId>, BlockId)>,
    ssa: Vec<ValueId>,
    /// `(new, field)` → the single `set` right after the `new`, if unique.
    field_sets: HashMap<(InstId, Symbol), Option<(usize, Operand)>>,
    /// Position of each linked instruction in its block (by raw index).
    position: Vec<u32>,
    folded: HashMap<InstId, Value>,
    field_reads: HashMap<InstId, Operand>,
    memo: HashMap<(Symbol, Vec<Value>), Option<Value>>,
    fuel: u64,
    /// How phis are widened (from the function's integer constants).
    widening: Widening,
    /// Per block (raw index): whether a retreating edge enters it. Every
    /// cycle passes through one, so widening its phis bounds every
    /// other's changes; the phis of other blocks (where branches join)
    /// are widened only after [`MERGE_EXACT`] changes, so a join of
    /// values a branch bounded keeps the bound.
    loop_heads: Vec<bool>,
    /// Phis of executable blocks to join again: an edge into their block
    /// became executable, or an input's info changed. Joined when the
    /// other worklists are empty, once however many of their inputs
    /// changed meanwhile: a head of `n` predecessors (an interpreter's
    /// dispatch of `n` cases) is joined once per round, not once per
    /// edge and per input (`n` times `n` inputs).
    /// Popped first where the block comes first in reverse postorder, so
    /// that a join downstream sees the joins upstream of it done.
    due: std::collections::BinaryHeap<std::cmp::Reverse<(u32, BlockId, InstId)>>,
    /// Per instruction (raw index): in `due`.
    is_due: Vec<bool>,
    /// Phi inputs joined ([`Propagation::joined`]).
    joined: usize,
}

/// Changes a phi of a block no retreating edge enters takes as they are
/// before its widening starts: the join of an interpreter's dispatch,
/// whose counter a dominating test bounds, widened at once, would lose
/// the bound the loop header's phi then never gets back.
const MERGE_EXACT: u8 = 16;

/// What one sweep over a function's linked code finds, for the analysis
/// and its [`Refiner`].
struct Sweep {
    users: Rows<User>,
    position: Vec<u32>,
    /// Per value: the block of its defining instruction.
    def_block: Vec<Option<BlockId>>,
    /// The integer constants among the operands (for [`Widening`]).
    constants: Vec<i64>,
    /// `set`s of immutable fields of an allocation, with their block and
    /// position: `(set, block, position, new)`.
    sets: Vec<(InstId, BlockId, u32, InstId)>,
}

impl Sweep {
    fn of(module: &Module, f: &Function) -> Sweep {
        let n = f.values.len();
        let mut position = vec![u32::MAX; f.insts.len()];
        let mut def_block = vec![None; n];
        let mut constants = Vec::new();
        let mut sets = Vec::new();
        // `get`s of immutable fields of an allocation: `(block, get, new,
        // field)`.
        let mut reads = Vec::new();
        // The allocation whose immutable field `field` of `obj` is.
        let fresh = |obj: &Operand, field: Symbol| match obj {
            Operand::Value(o) => match f.values[*o].def {
                ValueDef::Inst(new) => {
                    matches!(f.insts[new].kind, InstKind::New(class) if module.is_immutable(class, field))
                        .then_some(new)
                }
                _ => None,
            },
            Operand::Const(_) => None,
        };
        // Uses, then grouped by the value they use.
        let mut uses: Vec<(u32, User)> = Vec::with_capacity(2 * f.insts.len() + f.layout.len());
        for &b in &f.layout {
            for (pos, i) in f.block_insts(b).enumerate() {
                position[ix(i)] = pos as u32;
                let data = &f.insts[i];
                if let Some(v) = data.result {
                    def_block[ix(v)] = Some(b);
                }
                data.kind.operands().for_each(|o| match o {
                    Operand::Value(v) => uses.push((ix(*v) as u32, User::Inst(b, i))),
                    Operand::Const(Value::Int(k)) => constants.push(*k),
                    Operand::Const(_) => {}
                });
                match &data.kind {
                    InstKind::Set { obj, field, .. } => {
                        sets.extend(fresh(obj, *field).map(|new| (i, b, pos as u32, new)))
                    }
                    InstKind::Get { obj, field, .. } => reads.extend(fresh(obj, *field).map(|new| (b, i, new, *field))),
                    _ => {}
                }
            }
            let term = &f.blocks[b].term;
            for o in term.operands() {
                match o {
                    Operand::Value(v) => uses.push((ix(*v) as u32, User::Term(b))),
                    Operand::Const(Value::Int(k)) => constants.push(*k),
                    Operand::Const(_) => {}
                }
            }
        }
        // A `get` that may read what a `set` of an immutable field of its
        // allocation stored ([`Analysis::get`]) takes that operand's info:
        // it is a user of the stored value too, so that it is visited
        // again when that info changes (a phi widened by a later edge).
        if !reads.is_empty() {
            let stored: HashMap<(InstId, Symbol), ValueId> = sets
                .iter()
                .filter_map(|&(i, _, _, new)| match &f.insts[i].kind {
                    InstKind::Set { field, value: Operand::Value(s), .. } => Some(((new, *field), *s)),
                    _ => None,
                })
                .collect();
            for (b, i, new, field) in reads {
                if let Some(s) = stored.get(&(new, field)) {
                    uses.push((ix(*s) as u32, User::Inst(b, i)));
                }
            }
        }
        let users = Rows::group(n, uses.iter().filter(|(v, _)| (*v as usize) < n).map(|&(v, u)| (v as usize, u)));
        Sweep { users, position, def_block, constants, sets }
    }
}

/// What the main function's parameters are known to be
/// ([`crate::context::Options`]).
struct Params<'a> {
    /// Assumed 32-bit integers.
    small: &'a [Symbol],
    /// Bound to these lists.
    lists: &'a [(Symbol, Value)],
}

impl Params<'_> {
    /// The lengths of the known lists.
    fn lengths(&self) -> impl Iterator<Item = i64> + '_ {
        self.lists.iter().filter_map(|(_, v)| match v {
            Value::List(items) => Some(items.len() as i64),
            _ => None,
        })
    }

    fn list(&self, name: Option<Symbol>) -> Option<&Value> {
        let name = name?;
        self.lists.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// What deciding which calls to inline reads.
struct Inlining {
    by_name: HashMap<Symbol, usize>,
    graph: flowc_ir::calls::CallGraph,
    limit: usize,
    depth: usize,
}

/// What every analysis of a module's functions shares ([`analyze`]).
struct Setting<'a> {
    module: &'a Module,
    inlining: &'a Inlining,
    /// The fuel of each call folded by running it.
    fuel: u64,
    known: &'a Params<'a>,
}

/// Analyzes function `index` of `setting.module` with the program's
/// `facts` (read as `reads` says), reusing `reuse`, the refiner of its
/// last analysis, where there was one ([`program::solve`]).
fn analyze(
    setting: &Setting,
    index: usize,
    facts: &ProgramFacts,
    reads: program::Reads,
    reuse: Option<Refiner>,
) -> Propagation {
    let Setting { module, inlining, fuel, known } = *setting;
    let (reads_facts, returns) = match reads {
        program::Reads::Facts => (true, None),
        program::Reads::Returns(r) => (false, r),
    };
    let f = &module.functions[index];
    let param_infos: Vec<Info> = f
        .params
        .iter()
        .enumerate()
        .map(|(k, &p)| {
            let name = f.values[p].name;
            match f.kind {
                FunctionKind::Main if name.is_some_and(|n| known.small.contains(&n)) => {
                    Info::int(Interval::new(range::SMALL_PARAM.0, range::SMALL_PARAM.1))
                }
                FunctionKind::Main => known.list(name).map_or_else(Info::any, Info::of_const),
                // What the program's calls pass.
                _ => facts.param(index, k).unwrap_or_else(Info::value),
            }
        })
        .collect();
    let sweep = Sweep::of(module, f);
    let mut a = Analysis {
        module,
        f,
        facts,
        reads_facts,
        returns,
        own: (!reads_facts).then(|| own_fields::OwnFields::of(module, index)),
        loop_heads: Vec::new(),
        due: std::collections::BinaryHeap::new(),
        is_due: vec![false; f.insts.len()],
        joined: 0,
        refiner: match reuse {
            Some(refiner) => refiner.with_params(f, &param_infos),
            None => Refiner::new(f, &param_infos, sweep.def_block),
        },
        info: vec![Info::bottom(); f.values.len()],
        changes: vec![0; f.values.len()],
        executable: vec![false; f.blocks.len()],
        edge_bits: vec![0; f.blocks.len()],
        users: sweep.users,
        flow: Vec::new(),
        ssa: Vec::new(),
        field_sets: HashMap::new(),
        position: sweep.position,
        folded: HashMap::new(),
        field_reads: HashMap::new(),
        memo: HashMap::new(),
        fuel,
        // A known list's length bounds the counters that walk it.
        widening: Widening::new(sweep.constants.into_iter().chain(known.lengths())),
    };
    a.loop_heads = a.refiner.cfg.retreating_targets();
    a.field_sets(&sweep.sets);
    for (&p, info) in f.params.iter().zip(param_infos) {
        a.info[ix(p)] = info;
    }
    a.flow.push((None, f.entry));
    a.solve();
    let mut edges: Vec<(BlockId, BlockId)> = Vec::new();
    for &b in &f.layout {
        for (k, &s) in a.refiner.cfg.succs(b).iter().enumerate() {
            if a.edge_bits[ix(b)] & (1 << k) != 0 {
                edges.push((b, s));
            }
        }
    }
    edges.sort();
    let mut folded_calls: Vec<(InstId, Value)> = a.folded.into_iter().collect();
    folded_calls.sort_by_key(|(i, _)| ix(*i));
    let mut field_reads: Vec<(InstId, Operand)> = a.field_reads.into_iter().collect();
    field_reads.sort_by_key(|(i, _)| ix(*i));
    let inline = inline_candidates(module, inlining, index, &a.executable, &folded_calls);
    Propagation {
        refiner: a.refiner,
        info: a.info,
        executable: a.executable,
        edges,
        folded_calls,
        field_reads,
        inline,
        joined: a.joined,
    }
}

impl<'m> Analysis<'m> {
    /// The fields of allocations whose only `set` follows the `new` in its
    /// block (`sets`: the sets of immutable fields, from [`Sweep`]).
    fn field_sets(&mut self, sets: &[(InstId, BlockId, u32, InstId)]) {
        for &(i, b, pos, new) in sets {
            let InstKind::Set { field, value, .. } = &self.f.insts[i].kind else { continue };
            let Some(new_value) = self.f.insts[new].result else { continue };
            let same_block = self.refiner.def_block[ix(new_value)] == Some(b) && self.position[ix(new)] < pos;
            let pos = pos as usize;
            let entry =
                self.field_sets.entry((new, *field)).or_insert_with(|| same_block.then(|| (pos, value.clone())));
            // A second set, or one elsewhere, makes the field ambiguous.
            if !same_block || entry.as_ref().is_some_and(|(p, _)| *p != pos) {
                *entry = None;
            }
        }
    }

    fn solve(&mut self) {
        loop {
            if let Some((from, to)) = self.flow.pop() {
                self.visit_edge(from, to);
            } else if let Some(v) = self.ssa.pop() {
                for k in self.users.span(ix(v)) {
                    match self.users.items()[k] {
                        User::Inst(b, i) if self.executable[ix(b)] => {
                            if matches!(self.f.insts[i].kind, InstKind::Phi(_)) {
                                self.join_later(b, i);
                            } else {
                                self.visit_inst(b, i);
                            }
                        }
                        User::Term(b) if self.executable[ix(b)] => self.visit_term(b),
                        _ => {}
                    }
                }
            } else if let Some(std::cmp::Reverse((_, b, phi))) = self.due.pop() {
                self.is_due[ix(phi)] = false;
                self.visit_inst(b, phi);
            } else {
                return;
            }
        }
    }

    /// Whether the edge `from -> to` is known executable.
    fn edge(&self, from: BlockId, to: BlockId) -> bool {
        let succs = self.refiner.cfg.succs(from);
        succs.iter().position(|&s| s == to).is_some_and(|k| self.edge_bits[ix(from)] & (1 << k) != 0)
    }

    fn visit_edge(&mut self, from: Option<BlockId>, to: BlockId) {
        if let Some(p) = from {
            if self.edge(p, to) {
                return;
            }
            let k = self.refiner.cfg.succs(p).iter().position(|&s| s == to).expect("an edge of the CFG");
            self.edge_bits[ix(p)] |= 1 << k;
        }
        let f = self.f;
        if self.executable[ix(to)] {
            for &phi in &f.blocks[to].phis {
                self.join_later(to, phi);
            }
            return;
        }
        self.executable[ix(to)] = true;
        for i in f.block_insts(to) {
            self.visit_inst(to, i);
        }
        self.visit_term(to);
    }

    /// Queues phi `phi` of executable block `b` to be joined again ([`Analysis::due`]).
    fn join_later(&mut self, b: BlockId, phi: InstId) {
        if !self.is_due[ix(phi)] {
            self.is_due[ix(phi)] = true;
            let at = self.refiner.cfg.rpo_index(b).unwrap_or(u32::MAX);
            self.due.push(std::cmp::Reverse((at, b, phi)));
        }
    }

    /// The info of an operand as seen in block `at`.
    fn operand(&self, o: &Operand, at: BlockId) -> Info {
        operand_info(self.f, &self.refiner, &self.info, o, at)
    }

    fn set(&mut self, v: ValueId, new: Info, is_phi: bool) {
        let old = &self.info[ix(v)];
        if *old == new {
            return;
        }
        let new = if is_phi {
            self.changes[ix(v)] = self.changes[ix(v)].saturating_add(1);
            let head = self.refiner.def_block[ix(v)].is_none_or(|b| self.loop_heads[ix(b)]);
            let changes =
                if head { self.changes[ix(v)] } else { self.changes[ix(v)].saturating_sub(MERGE_EXACT).max(1) };
            self.widening.step(changes, old, new)
        } else {
            new
        };
        if self.info[ix(v)] != new {
            self.info[ix(v)] = new;
            self.ssa.push(v);
        }
    }

    fn visit_inst(&mut self, b: BlockId, i: InstId) {
        let f = self.f;
        let data = &f.insts[i];
        if let InstKind::Set { field, value, .. } = &data.kind {
            return self.store(b, *field, value);
        }
        let Some(v) = data.result else { return };
        let info = match &data.kind {
            InstKind::Phi(inputs) => {
                let mut acc = Info::bottom();
                for (p, o) in inputs {
                    if self.edge(*p, b) {
                        self.joined += 1;
                        let input = self.operand(o, *p);
                        acc = if acc.is_bottom() { input } else { acc.join(&input) };
                    }
                }
                return self.set(v, acc, true);
            }
            InstKind::Op { op: Operator::Known(op), args, .. } => match args.as_slice() {
                [x] => lattice::transfer(*op, &[self.operand(x, b)]),
                [x, y] => lattice::transfer(*op, &[self.operand(x, b), self.operand(y, b)]),
                _ => lattice::transfer(*op, &args.iter().map(|o| self.operand(o, b)).collect::<Vec<Info>>()),
            },
            InstKind::Op { .. } => Info::bottom(),
            InstKind::CheckBound(o) => self.operand(o, b).bound(),
            InstKind::Unbound(_) => Info::of_kinds(Kinds::UNBOUND),
            InstKind::New(class) => Info::object(*class, Some(i)),
            InstKind::Get { obj, field, .. } => self.get(b, i, obj, *field),
            // Made after the passes (`flowc_codegen::walks`): an object or 0.
            InstKind::Walk { .. } => Info::value(),
            InstKind::Call { func, args } => self.call(b, i, *func, args),
            // A trace's `guard_at` (the passes run on no trace; for the
            // checker's sake): its result is its link.
            InstKind::Guard { kind: flowc_ir::GuardKind::At(link, ..), .. } => self.operand(link, b),
            InstKind::Set { .. } | InstKind::Guard { .. } | InstKind::Iterations(_) => return,
        };
        self.set(v, info, false);
    }

    fn get(&mut self, b: BlockId, i: InstId, obj: &Operand, field: Symbol) -> Info {
        let o = self.operand(obj, b);
        if !o.kinds.has(Kinds::OBJECT) {
            return Info::bottom();
        }
        if let Operand::Value(ov) = obj {
            if let ValueDef::Inst(n) = self.f.values[*ov].def {
                if let Some(Some((set_pos, stored))) = self.field_sets.get(&(n, field)).cloned() {
                    let new_block = self.refiner.def_block[ix(*ov)];
                    let after = new_block != Some(b) || self.position[ix(i)] as usize > set_pos;
                    if after {
                        let info = self.operand(&stored, new_block.unwrap_or(b));
                        self.field_reads.insert(i, stored);
                        return info;
                    }
                }
            }
        }
        if self.reads_facts {
            self.facts.read(&o, field)
        } else {
            self.own.as_ref().and_then(|own| own.read(field)).unwrap_or_else(Info::value)
        }
    }

    /// A `set` of `field` to `value` in executable block `b`: joined into
    /// the field's fact if the function solves it ([`own_fields`]), whose
    /// `get`s are then visited again.
    fn store(&mut self, b: BlockId, field: Symbol, value: &Operand) {
        let Some(own) = self.own.as_mut().filter(|own| own.owns(field)) else { return };
        let stored = operand_info(self.f, &self.refiner, &self.info, value, b);
        let Some(gets) = own.store(field, &stored, &self.widening) else { return };
        // Visited here: a `get` is no user of the values stored, so the
        // worklist of changed values would not bring it back.
        let gets: Vec<(BlockId, InstId)> = gets.iter().copied().filter(|&(gb, _)| self.executable[ix(gb)]).collect();
        for (gb, g) in gets {
            self.visit_inst(gb, g);
        }
    }

    fn call(&mut self, b: BlockId, i: InstId, func: Symbol, args: &[Operand]) -> Info {
        // A fold decided on an earlier, more optimistic visit may no longer hold.
        self.folded.remove(&i);
        // A huge function takes no results from the facts while they are
        // solved ([`program::uses_facts`]).
        let returned = match (self.reads_facts, self.returns) {
            (true, _) => self.facts.returned(func),
            (false, Some(solved)) => solved.returned(func),
            (false, None) => None,
        }
        .unwrap_or_else(Info::value);
        if !self.module.is_pure(func) {
            return returned;
        }
        let Some(consts) = args.iter().map(|o| self.operand(o, b).constant).collect::<Option<Vec<Value>>>() else {
            return returned;
        };
        let key = (func, consts);
        if !self.memo.contains_key(&key) {
            let config = Config { fuel: Some(self.fuel), max_depth: 10_000 };
            let result = match ir_interp::call(self.module, func, &key.1, &config) {
                Ok(Exit::Returned(v)) if v.is_constant() => Some(v),
                _ => None,
            };
            self.memo.insert(key.clone(), result);
        }
        match &self.memo[&key] {
            Some(v) => {
                self.folded.insert(i, v.clone());
                Info::of_const(v)
            }
            None => returned,
        }
    }

    fn visit_term(&mut self, b: BlockId) {
        let (then_block, else_block, known) = match &self.f.blocks[b].term {
            Terminator::Jump(t) => (*t, *t, Some(true)),
            Terminator::Branch { cond, then_block, else_block } => {
                let c = self.operand(cond, b);
                if c.is_bottom() {
                    return;
                }
                (*then_block, *else_block, c.truth())
            }
            Terminator::IfClass { obj, class, then_block, else_block } => {
                let o = self.operand(obj, b);
                if o.is_bottom() {
                    return;
                }
                (*then_block, *else_block, o.is_class(*class))
            }
            Terminator::Print(_)
            | Terminator::Return(_)
            | Terminator::Trap(_)
            | Terminator::Exit { .. }
            | Terminator::JumpTrace { .. } => return,
        };
        let succs = match known {
            Some(true) => [Some(then_block), None],
            Some(false) => [Some(else_block), None],
            None => [Some(then_block), Some(else_block)],
        };
        for s in succs.into_iter().flatten() {
            if !self.edge(b, s) {
                self.flow.push((Some(b), s));
            }
        }
    }
}

/// Executable calls, not folded, of small functions that are leaves or
/// whose frames stay within the inlining depth here
/// ([`crate::context::Options::inline_depth`]).
fn inline_candidates(
    module: &Module,
    inlining: &Inlining,
    index: usize,
    executable: &[bool],
    folded: &[(InstId, Value)],
) -> Vec<InstId> {
    let f = &module.functions[index];
    let mut out = Vec::new();
    for (b, i) in f.all_insts() {
        if !executable[ix(b)] || folded.binary_search_by_key(&ix(i), |(x, _)| ix(*x)).is_ok() {
            continue;
        }
        let InstKind::Call { func, .. } = &f.insts[i].kind else { continue };
        let Some(callee) = inlining.by_name.get(func).map(|&k| &module.functions[k]) else { continue };
        if callee.name == f.name && f.kind == FunctionKind::Function || inline_size(callee) > inlining.limit {
            continue;
        }
        let leaf = callee.all_insts().all(|(_, ci)| !matches!(callee.insts[ci].kind, InstKind::Call { .. }));
        if leaf || inlining.graph.inlines_exactly(index, callee.name, inlining.depth) {
            out.push(i);
        }
    }
    out
}

/// Lists, per function, what propagation found: unreachable blocks, the
/// info of every linked value, folded calls, forwarded fields, inlining.
pub fn annotate(module: &Module, cx: &Context) -> String {
    let mut out = String::new();
    if let Some(facts) = cx.program_facts.as_ref().filter(|f| f.is_unknown() || !f.is_empty()) {
        out.push_str("; propagate program:\n");
        facts.render(module, &mut out);
    }
    for (i, f) in module.functions.iter().enumerate() {
        let Some(p) = cx.functions.get(i).and_then(|x| x.propagation.as_ref()) else { continue };
        writeln!(out, "; propagate {} {}:", f.kind.keyword(), f.name).unwrap();
        let dead: Vec<String> =
            f.layout.iter().filter(|&&b| !p.is_executable(b)).map(|&b| flowc_ir::print::block_ref(b)).collect();
        if !dead.is_empty() {
            writeln!(out, ";   unreachable: {}", dead.join(" ")).unwrap();
        }
        let values = f.params.iter().copied().chain(f.all_insts().filter_map(|(_, i)| f.insts[i].result));
        lattice::render(&mut out, values.map(|v| (flowc_ir::print::value_ref(v), p.info(v))));
        for (c, v) in &p.folded_calls {
            let mut s = String::new();
            flowc_lang::syntax::readable_print::constant(&mut s, v);
            writeln!(out, ";   fold {} = {s}", flowc_ir::print::inst_to_string(f, *c)).unwrap();
        }
        for (g, o) in &p.field_reads {
            let mut s = String::new();
            flowc_ir::print::operand(&mut s, o);
            writeln!(out, ";   forward {} = {s}", flowc_ir::print::inst_to_string(f, *g)).unwrap();
        }
        for c in &p.inline {
            writeln!(out, ";   inline {}", flowc_ir::print::inst_to_string(f, *c)).unwrap();
        }
    }
    out
}

/// The size cleanup measures a callee by: its instructions, phis and
/// terminators.
pub fn inline_size(callee: &Function) -> usize {
    callee.layout.iter().map(|&cb| callee.blocks[cb].insts.len() + callee.blocks[cb].phis.len() + 1).sum()
}

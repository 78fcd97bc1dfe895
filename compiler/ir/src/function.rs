//! Functions, blocks, instructions and values, stored in arenas.

use la_arena::{Arena, Idx};

use flowc_lang::heap::Layout;
use flowc_lang::{Symbol, Value};

use crate::inst::{GuardKind, InstKind, Operand, Terminator};
use crate::ix;
use crate::resume::{ResumeData, ResumeId};

pub type BlockId = Idx<BlockData>;
pub type InstId = Idx<InstData>;
pub type ValueId = Idx<ValueData>;

/// What a function is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FunctionKind {
    /// The main flow graph, lowered from an entry label; its parameters are
    /// the entry's free variables, given by the environment.
    Main,
    /// A `function/3` of the program.
    Function,
    /// A recorded trace: one loop, with guards.
    Trace,
}

impl FunctionKind {
    pub fn keyword(self) -> &'static str {
        match self {
            FunctionKind::Main => "main",
            FunctionKind::Function => "function",
            FunctionKind::Trace => "trace",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockData {
    /// The source label this block comes from, if any.
    pub name: Option<Symbol>,
    pub phis: InstList<2>,
    pub insts: InstList<4>,
    pub term: Terminator,
}

/// A block's phis or instructions, in order: up to `N` inline (as many as
/// a `Vec`'s three words hold), more on the heap, so most blocks own no
/// heap memory.
pub type InstList<const N: usize> = smallvec::SmallVec<[InstId; N]>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstData {
    pub kind: InstKind,
    pub result: Option<ValueId>,
}

/// Where a value comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ValueDef {
    /// The `n`-th parameter.
    Param(u32),
    Inst(InstId),
    /// No longer defined (its instruction was removed), or a gap the text
    /// parser filled so that value numbers survive a round trip.
    Detached,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueData {
    pub def: ValueDef,
    /// The source variable this value is a version of, for printing,
    /// resume data and converting back to the language.
    pub name: Option<Symbol>,
}

/// One function, main graph or trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub kind: FunctionKind,
    pub name: Symbol,
    pub params: Vec<ValueId>,
    pub entry: BlockId,
    /// The blocks in the function, in print order (entry first).
    pub layout: Vec<BlockId>,
    pub blocks: Arena<BlockData>,
    pub insts: Arena<InstData>,
    pub values: Arena<ValueData>,
    pub resumes: Arena<ResumeData>,
    /// Where instructions and terminators come from in the source, for
    /// error messages (not printed; see [`Sites`]).
    pub sites: Sites,
}

/// A place in the source program: a statement or a terminator of a block.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    /// The function, or `None` for the main flow graph.
    pub function: Option<Symbol>,
    pub block: Symbol,
    /// 1-based statement number; one past the last statement is the
    /// terminator.
    pub statement: u32,
    pub is_terminator: bool,
}

impl Site {
    /// Where the site is, as an error names it, the statement's text left
    /// for the caller to take from the program
    /// ([`flowc_lang::interp::Location::with_text`]).
    pub fn location(&self) -> flowc_lang::interp::Location {
        flowc_lang::interp::Location {
            function: self.function,
            block: self.block,
            statement: self.statement as usize,
            is_terminator: self.is_terminator,
            text: String::new(),
        }
    }
}

/// The source sites of a function's instructions and terminators: debug
/// information. It does not take part in the IR's meaning, so it is not
/// printed and two functions that differ only in sites are equal. The front
/// end records sites; passes keep them for instructions they rewrite in
/// place and copy them when they copy instructions (inlining); an
/// instruction without a site reports errors without a place.
#[derive(Clone, Debug, Default)]
pub struct Sites {
    insts: Vec<Option<Site>>,
    terms: Vec<Option<Site>>,
}

impl PartialEq for Sites {
    fn eq(&self, _: &Sites) -> bool {
        true
    }
}
impl Eq for Sites {}

impl Sites {
    pub fn with_capacity(insts: usize, blocks: usize) -> Sites {
        Sites { insts: Vec::with_capacity(insts), terms: Vec::with_capacity(blocks) }
    }

    pub fn inst(&self, i: InstId) -> Option<Site> {
        self.insts.get(ix(i)).copied().flatten()
    }

    pub fn set_inst(&mut self, i: InstId, site: Site) {
        let k = ix(i);
        if self.insts.len() <= k {
            self.insts.resize(k + 1, None);
        }
        self.insts[k] = Some(site);
    }

    pub fn term(&self, b: BlockId) -> Option<Site> {
        self.terms.get(ix(b)).copied().flatten()
    }

    /// Block `to` gets the terminator of block `from`: the site goes along.
    pub fn move_term(&mut self, from: BlockId, to: BlockId) {
        if let Some(site) = self.term(from) {
            self.set_term(to, site);
        }
    }

    pub fn set_term(&mut self, b: BlockId, site: Site) {
        let k = ix(b);
        if self.terms.len() <= k {
            self.terms.resize(k + 1, None);
        }
        self.terms[k] = Some(site);
    }
}

/// Functions with more instructions than this are *huge*: generated or
/// machine-written straight-line code, where the time goes into code that
/// runs once. Compilers treat them cheaply: one version (no copy
/// specialized to small parameters, `flowc_passes::versions`), no
/// optimistic copy, Cranelift's fastest settings and object operations as
/// runtime calls without inline paths (`flowc_codegen`). Below
/// it, loops dominate and get the best code.
pub const HUGE_INSTS: usize = 4000;

impl Function {
    /// Whether the function is huge ([`HUGE_INSTS`]).
    pub fn is_huge(&self) -> bool {
        self.insts.len() > HUGE_INSTS
    }
}

/// How many blocks and instructions a function is expected to hold
/// ([`Function::with_capacity`]); a hint, never a limit.
#[derive(Copy, Clone, Debug, Default)]
pub struct Capacity {
    pub blocks: usize,
    pub insts: usize,
}

impl Function {
    /// An empty function with an entry block ending in `trap` until built.
    pub fn new(kind: FunctionKind, name: Symbol) -> Function {
        Function::with_capacity(kind, name, Capacity::default())
    }

    /// [`Function::new`] with room reserved for the expected number of
    /// blocks and instructions (builders that know their size avoid
    /// regrowing, and recopying, the arenas).
    pub fn with_capacity(kind: FunctionKind, name: Symbol, capacity: Capacity) -> Function {
        let mut blocks = Arena::with_capacity(capacity.blocks);
        let entry = blocks.alloc(BlockData {
            name: None,
            phis: Default::default(),
            insts: Default::default(),
            term: Terminator::Trap(crate::inst::Trap::ReturnOutsideFunction),
        });
        let mut layout = Vec::with_capacity(capacity.blocks.max(1));
        layout.push(entry);
        Function {
            kind,
            name,
            params: Vec::new(),
            entry,
            layout,
            blocks,
            insts: Arena::with_capacity(capacity.insts),
            values: Arena::with_capacity(capacity.insts),
            resumes: Arena::new(),
            sites: Sites::with_capacity(capacity.insts, capacity.blocks),
        }
    }

    pub fn block(&self, b: BlockId) -> &BlockData {
        &self.blocks[b]
    }

    pub fn inst(&self, i: InstId) -> &InstData {
        &self.insts[i]
    }

    pub fn value(&self, v: ValueId) -> &ValueData {
        &self.values[v]
    }

    /// Phis then instructions of a block.
    pub fn block_insts(&self, b: BlockId) -> impl Iterator<Item = InstId> + '_ {
        let data = &self.blocks[b];
        data.phis.iter().chain(data.insts.iter()).copied()
    }

    /// Where value `o` lies on a walk along links laid out in a row: the
    /// base of the `guard_at` that made it and its distance in bytes,
    /// else `o` itself at 0 (`None` for a constant).
    pub fn walk_place(&self, o: &Operand) -> Option<(ValueId, i64)> {
        let v = o.as_value()?;
        if let ValueDef::Inst(i) = self.values[v].def {
            if let InstKind::Guard { kind: GuardKind::At(_, Operand::Value(b), d), .. } = &self.insts[i].kind {
                return Some((*b, *d));
            }
        }
        Some((v, 0))
    }

    /// All linked instructions, block by block in layout order.
    pub fn all_insts(&self) -> impl Iterator<Item = (BlockId, InstId)> + '_ {
        self.layout.iter().flat_map(move |&b| self.block_insts(b).map(move |i| (b, i)))
    }

    /// The functions this one calls by name (a `call` instruction each,
    /// in layout order, repeated as often as called).
    pub fn callees(&self) -> impl Iterator<Item = Symbol> + '_ {
        self.all_insts().filter_map(|(_, i)| match &self.insts[i].kind {
            InstKind::Call { func, .. } => Some(*func),
            _ => None,
        })
    }

    /// Calls `f` on every constant of the function: its instructions'
    /// operands and guards' values, its terminators' operands, and its
    /// resume records' (those of removed instructions too).
    pub fn each_constant_mut(&mut self, f: &mut impl FnMut(&mut Value)) {
        let mut operand = |o: &mut Operand| {
            if let Operand::Const(c) = o {
                f(c)
            }
        };
        for inst in self.insts.values_mut() {
            inst.kind.operands_mut().for_each(&mut operand);
        }
        for block in self.blocks.values_mut() {
            block.term.operands_mut().for_each(&mut operand);
        }
        for r in self.resumes.values_mut() {
            r.operands_mut().for_each(&mut operand);
        }
        for inst in self.insts.values_mut() {
            if let InstKind::Guard { kind: GuardKind::Value(_, c), .. } = &mut inst.kind {
                f(c)
            }
        }
    }

    /// The resume records a linked guard or a terminator names, in
    /// number order, each once (others may remain in the arena after the
    /// guards that named them were removed).
    pub fn used_resumes(&self) -> Vec<ResumeId> {
        let mut used: Vec<ResumeId> = self
            .all_insts()
            .filter_map(|(_, i)| match &self.insts[i].kind {
                InstKind::Guard { resume, .. } => Some(*resume),
                _ => None,
            })
            .chain(self.layout.iter().filter_map(|&b| self.blocks[b].term.resume()))
            .collect();
        used.sort_by_key(|r| r.into_raw().into_u32());
        used.dedup();
        used
    }

    /// Counts of blocks, phis and non-phi instructions (for `--stats`).
    pub fn counts(&self) -> (usize, usize, usize) {
        let phis = self.layout.iter().map(|&b| self.blocks[b].phis.len()).sum();
        let insts = self.layout.iter().map(|&b| self.blocks[b].insts.len()).sum();
        (self.layout.len(), phis, insts)
    }

    /// Renumbers the values so that `first` get the numbers 0, 1, … in that
    /// order and the others follow in their old order. Linear in the size of
    /// the function; used to give parameters the first numbers.
    pub fn reorder_values(&mut self, first: &[ValueId]) {
        let n = self.values.len();
        let mut order: Vec<ValueId> = first.to_vec();
        let mut placed = vec![false; n];
        for &v in first {
            placed[ix(v)] = true;
        }
        order.extend(self.values.iter().map(|(v, _)| v).filter(|&v| !placed[ix(v)]));
        let mut new_index = vec![0u32; n];
        let mut arena = Arena::with_capacity(n);
        for &v in &order {
            new_index[ix(v)] = arena.alloc(self.values[v].clone()).into_raw().into_u32();
        }
        let map = |v: ValueId| -> ValueId { Idx::from_raw(la_arena::RawIdx::from_u32(new_index[ix(v)])) };
        self.values = arena;
        for p in &mut self.params {
            *p = map(*p);
        }
        let remap = |o: &mut Operand| {
            if let Operand::Value(v) = o {
                *v = map(*v);
            }
        };
        for (_, data) in self.insts.iter_mut() {
            if let Some(r) = &mut data.result {
                *r = map(*r);
            }
            for o in data.kind.operands_mut() {
                remap(o);
            }
        }
        for (_, b) in self.blocks.iter_mut() {
            for o in b.term.operands_mut() {
                remap(o);
            }
        }
        for (_, r) in self.resumes.iter_mut() {
            for o in r.operands_mut() {
                remap(o);
            }
        }
    }

    /// Replaces every use of value `from` (instruction, terminator and
    /// resume operands) by `to`.
    pub fn replace_uses(&mut self, from: ValueId, to: &Operand) {
        let layout = self.layout.clone();
        for b in layout {
            let ids: Vec<InstId> = self.block_insts(b).collect();
            for i in ids {
                for o in self.insts[i].kind.operands_mut() {
                    if o.as_value() == Some(from) {
                        *o = to.clone();
                    }
                }
            }
            for o in self.blocks[b].term.operands_mut() {
                if o.as_value() == Some(from) {
                    *o = to.clone();
                }
            }
        }
        for (_, r) in self.resumes.iter_mut() {
            for o in r.operands_mut() {
                if o.as_value() == Some(from) {
                    *o = to.clone();
                }
            }
        }
    }
}

/// A whole program: functions and the program's hints.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Module {
    /// Functions declared `pure`.
    pub pure: Vec<Symbol>,
    /// `immutable(Class, Fields)` declarations.
    pub immutable: Vec<(Symbol, Vec<Symbol>)>,
    /// The functions; the main graph (if any) first.
    pub functions: Vec<Function>,
}

impl Module {
    /// Function `name` (of kind `function`). A search of the list: code
    /// that looks up many names makes a [`Module::function_index`] once.
    pub fn function(&self, name: Symbol) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name && f.kind == FunctionKind::Function)
    }

    /// The positions in `functions` of the functions (kind `function`),
    /// by name. (Every call looking its callee up in the list made
    /// optimizing 8,000 functions that call one another quadratic.)
    pub fn function_index(&self) -> std::collections::HashMap<Symbol, usize> {
        let functions = self.functions.iter().enumerate();
        functions.filter(|(_, f)| f.kind == FunctionKind::Function).map(|(k, f)| (f.name, k)).rev().collect()
    }

    pub fn main(&self) -> Option<&Function> {
        self.functions.iter().find(|f| f.kind == FunctionKind::Main)
    }

    pub fn is_pure(&self, func: Symbol) -> bool {
        self.pure.contains(&func)
    }

    pub fn is_immutable(&self, class: Symbol, field: Symbol) -> bool {
        self.immutable.iter().any(|(c, fs)| *c == class && fs.contains(&field))
    }

    /// The slots of the objects this module's code makes: a slot for every
    /// field it reads, writes or declares immutable. (Code that shares
    /// objects with another engine — a trace with the interpreter — lays
    /// them out from the program instead, `Program::layout`.)
    pub fn layout(&self) -> &'static Layout {
        let mut fields: Vec<Symbol> = self.immutable.iter().flat_map(|(_, fs)| fs.iter().copied()).collect();
        for f in &self.functions {
            for (_, i) in f.all_insts() {
                if let InstKind::Get { field, .. } | InstKind::Set { field, .. } = &f.insts[i].kind {
                    fields.push(*field);
                }
            }
        }
        Layout::of(fields)
    }
}

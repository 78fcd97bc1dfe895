//! Resolution before running: every variable name becomes a slot index of
//! its flow graph, every label a block index, every function name a graph
//! index, every operation an [`Op`] checked for arity. The interpreter loop
//! then does no string or hash lookups.
//!
//! Graph 0 is the main flow graph; graph `i + 1` is the `i`-th function in
//! file order. A function's parameters take its first slots, in order.
//! Unknown labels, functions and operations resolve to markers that raise
//! their error only when executed, as in the series.

use std::collections::{HashMap, HashSet};

use crate::ast::{self, Arg, Operator, Program, Stmt, Terminator};
use crate::heap::Layout;
use crate::ops::Op;
use crate::symbol::{Symbol, SymbolMap};
use crate::value::Value;

pub type Slot = u32;

#[derive(Clone, Debug)]
pub enum Operand {
    Slot(Slot),
    Const(Value),
}

/// A jump target: a block index or a label that does not exist.
#[derive(Copy, Clone, Debug)]
pub enum Target {
    Block(u32),
    /// A block a profiler counts arrivals at ([`CBlock::watched`]): the
    /// interpreter goes there as to a `Block`, and the JIT's interpreter
    /// counts the arrival. Only [`Profiler::new`](super::hot::Profiler::new)
    /// makes these, rewriting the jumps to the blocks it watches, so the
    /// test of whether a jump is watched is the match on the target the
    /// jump makes anyway, not a look-up at every jump.
    Watched(u32),
    Missing(Symbol),
}

impl Target {
    /// The block jumped to, if it exists.
    #[inline]
    pub fn block(self) -> Option<u32> {
        match self {
            Target::Block(b) | Target::Watched(b) => Some(b),
            Target::Missing(_) => None,
        }
    }

    /// This target, [`Target::Watched`] if its block is one of `graph`'s
    /// watched blocks.
    fn marked(self, graph: &[CBlock]) -> Target {
        match self {
            Target::Block(b) if graph[b as usize].watched => Target::Watched(b),
            t => t,
        }
    }
}

/// An operation that may not exist (or has the wrong arity).
#[derive(Copy, Clone, Debug)]
pub enum OpRef {
    Op(Op),
    Missing(Symbol),
}

#[derive(Clone, Debug)]
pub enum CStmt {
    Op1 {
        dst: Slot,
        op: OpRef,
        arg: Operand,
    },
    Op2 {
        dst: Slot,
        op: OpRef,
        lhs: Operand,
        rhs: Operand,
    },
    New {
        dst: Slot,
        class: Symbol,
    },
    /// `slot`: the field's slot in the program's layout ([`Resolved::layout`]).
    Get {
        dst: Slot,
        obj: Operand,
        field: Symbol,
        slot: u32,
    },
    Set {
        obj: Operand,
        field: Symbol,
        value: Operand,
        slot: u32,
    },
}

#[derive(Clone, Debug)]
pub enum CTerm {
    Jump(Target),
    /// `promote var then target`: a jump for the interpreter; its variable
    /// is what the JIT reads at a hot spot ([`super::hot`]).
    Promote {
        var: Slot,
        target: Target,
    },
    If {
        cond: Slot,
        then_t: Target,
        else_t: Target,
    },
    Print(Operand),
    IfClass {
        obj: Operand,
        class: Symbol,
        then_t: Target,
        else_t: Target,
    },
    Call {
        dst: Slot,
        func: Result<u32, Symbol>,
        args: Vec<Operand>,
        next: Target,
    },
    Return(Operand),
    Error(Symbol),
}

impl CStmt {
    /// The slot the statement writes, if any.
    pub fn dst(&self) -> Option<Slot> {
        match self {
            CStmt::Op1 { dst, .. } | CStmt::Op2 { dst, .. } | CStmt::New { dst, .. } | CStmt::Get { dst, .. } => {
                Some(*dst)
            }
            CStmt::Set { .. } => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct CBlock {
    pub label: Symbol,
    pub stmts: Vec<CStmt>,
    pub term: CTerm,
    /// Whether a [`Profiler`](super::hot::Profiler) counts arrivals here
    /// (set by [`Graph::watch`] only, which also makes the jumps here
    /// [`Target::Watched`]).
    pub watched: bool,
}

/// One resolved flow graph.
#[derive(Clone, Debug)]
pub struct Graph {
    /// `None` for the main flow graph.
    pub name: Option<Symbol>,
    pub slot_names: Vec<Symbol>,
    /// The slot of each variable (the inverse of `slot_names`).
    slot_index: SymbolMap<Slot>,
    pub blocks: Vec<CBlock>,
    pub labels: SymbolMap<u32>,
    pub params: usize,
}

impl Graph {
    pub fn slot_of(&self, name: Symbol) -> Option<Slot> {
        self.slot_index.get(&name).copied()
    }

    /// The target of a jump to `label`, as this graph's own jumps there
    /// are ([`Target::Watched`] where a profiler watches it).
    pub fn target(&self, label: Symbol) -> Target {
        self.labels.get(&label).map_or(Target::Missing(label), |&b| Target::Block(b).marked(&self.blocks))
    }

    /// Marks blocks `blocks` watched, and every jump to them (each
    /// block's terminator, a call's return target included).
    pub fn watch(&mut self, blocks: &[u32]) {
        for &b in blocks {
            if let Some(block) = self.blocks.get_mut(b as usize) {
                block.watched = true;
            }
        }
        let marks: Vec<bool> = self.blocks.iter().map(|b| b.watched).collect();
        let mark = |t: &mut Target| {
            if let Target::Block(b) = *t {
                if marks[b as usize] {
                    *t = Target::Watched(b);
                }
            }
        };
        for block in &mut self.blocks {
            match &mut block.term {
                CTerm::Jump(t) | CTerm::Promote { target: t, .. } | CTerm::Call { next: t, .. } => mark(t),
                CTerm::If { then_t, else_t, .. } | CTerm::IfClass { then_t, else_t, .. } => {
                    mark(then_t);
                    mark(else_t);
                }
                CTerm::Print(_) | CTerm::Return(_) | CTerm::Error(_) => {}
            }
        }
    }
}

/// A resolved program.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub graphs: Vec<Graph>,
    pub functions: HashMap<Symbol, u32>,
    /// `(class, field)` pairs declared by `immutable/2`.
    pub immutable: HashSet<(Symbol, Symbol)>,
    /// The slots of the program's objects.
    pub layout: &'static Layout,
}

impl Resolved {
    /// The graph of `function` (`None`: the main graph, 0), if the program
    /// has it.
    pub fn graph_of(&self, function: Option<Symbol>) -> Option<u32> {
        match function {
            None => Some(0),
            Some(f) => self.functions.get(&f).copied(),
        }
    }

    /// Resolves `program`; `extra_main_vars` (an entry environment's names)
    /// get main-graph slots even if no block mentions them.
    pub fn new(program: &Program, extra_main_vars: &[Symbol]) -> Resolved {
        let immutable: HashSet<(Symbol, Symbol)> = program
            .items
            .iter()
            .filter_map(|i| match i {
                ast::Item::Immutable(class, fields) => Some(fields.iter().map(|f| (*class, *f))),
                _ => None,
            })
            .flatten()
            .collect();
        let functions: HashMap<Symbol, u32> =
            program.functions().enumerate().map(|(i, f)| (f.name, i as u32 + 1)).collect();
        let layout = program.layout();
        let main_blocks: Vec<&ast::Block> = program.main_blocks().collect();
        let mut graphs = vec![resolve_graph(None, &[], extra_main_vars, &main_blocks, &functions, layout)];
        for f in program.functions() {
            let blocks: Vec<&ast::Block> = f.blocks.iter().collect();
            graphs.push(resolve_graph(Some(f.name), &f.params, &[], &blocks, &functions, layout));
        }
        Resolved { graphs, functions, immutable, layout }
    }
}

struct Slots {
    names: Vec<Symbol>,
    index: SymbolMap<Slot>,
}

impl Slots {
    fn get(&mut self, name: Symbol) -> Slot {
        *self.index.entry(name).or_insert_with(|| {
            self.names.push(name);
            (self.names.len() - 1) as Slot
        })
    }

    fn operand(&mut self, a: &Arg) -> Operand {
        match a {
            Arg::Var(v) => Operand::Slot(self.get(*v)),
            Arg::Const(c) => Operand::Const(c.clone()),
        }
    }
}

fn op_ref(op: Operator, arity: usize) -> OpRef {
    match op {
        Operator::Known(op) if op.arity() == arity => OpRef::Op(op),
        other => OpRef::Missing(Symbol::intern(other.name())),
    }
}

/// The slot of `field` in `layout`, which has a slot for every field the
/// program names.
fn field_slot(layout: &Layout, field: Symbol) -> u32 {
    layout.slot(field).expect("the program's layout has its fields") as u32
}

fn resolve_graph(
    name: Option<Symbol>,
    params: &[Symbol],
    extra: &[Symbol],
    blocks: &[&ast::Block],
    functions: &HashMap<Symbol, u32>,
    layout: &Layout,
) -> Graph {
    let mut slots = Slots { names: Vec::new(), index: SymbolMap::default() };
    for p in params.iter().chain(extra) {
        slots.get(*p);
    }
    let labels: SymbolMap<u32> = blocks.iter().enumerate().map(|(i, b)| (b.label, i as u32)).collect();
    let target = |l: Symbol| labels.get(&l).map_or(Target::Missing(l), |&i| Target::Block(i));
    let mut out = Vec::with_capacity(blocks.len());
    for b in blocks {
        let stmts = b
            .body
            .iter()
            .map(|s| match s {
                Stmt::Op1 { dst, op, arg } => {
                    let arg = slots.operand(arg);
                    CStmt::Op1 { dst: slots.get(*dst), op: op_ref(*op, 1), arg }
                }
                Stmt::Op2 { dst, op, lhs, rhs } => {
                    let (lhs, rhs) = (slots.operand(lhs), slots.operand(rhs));
                    CStmt::Op2 { dst: slots.get(*dst), op: op_ref(*op, 2), lhs, rhs }
                }
                Stmt::New { dst, class } => CStmt::New { dst: slots.get(*dst), class: *class },
                Stmt::Get { dst, obj, field } => {
                    let obj = slots.operand(obj);
                    CStmt::Get { dst: slots.get(*dst), obj, field: *field, slot: field_slot(layout, *field) }
                }
                Stmt::Set { obj, field, value } => {
                    let slot = field_slot(layout, *field);
                    CStmt::Set { obj: slots.operand(obj), field: *field, value: slots.operand(value), slot }
                }
            })
            .collect();
        let term = match &b.term {
            Terminator::Jump(l) => CTerm::Jump(target(*l)),
            Terminator::Promote { var, label } => CTerm::Promote { var: slots.get(*var), target: target(*label) },
            Terminator::If { cond, then_label, else_label } => {
                CTerm::If { cond: slots.get(*cond), then_t: target(*then_label), else_t: target(*else_label) }
            }
            Terminator::PrintAndStop(a) => CTerm::Print(slots.operand(a)),
            Terminator::IfClass { obj, class, then_label, else_label } => CTerm::IfClass {
                obj: slots.operand(obj),
                class: *class,
                then_t: target(*then_label),
                else_t: target(*else_label),
            },
            Terminator::Call { dst, func, args, next } => {
                let args = args.iter().map(|a| slots.operand(a)).collect();
                CTerm::Call {
                    dst: slots.get(*dst),
                    func: functions.get(func).copied().ok_or(*func),
                    args,
                    next: target(*next),
                }
            }
            Terminator::Return(a) => CTerm::Return(slots.operand(a)),
            Terminator::Error(r) => CTerm::Error(*r),
        };
        out.push(CBlock { label: b.label, stmts, term, watched: false });
    }
    Graph { name, slot_names: slots.names, slot_index: slots.index, blocks: out, labels, params: params.len() }
}

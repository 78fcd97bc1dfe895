//! The abstract syntax shared by both concrete syntaxes (docs/language.md §2, §3).
//!
//! A [`Program`] is the ordered list of a file's items; both printers walk it
//! in order, so converting between syntaxes and back is the identity
//! (`parse(print(p)) == p`). Names are interned [`Symbol`]s. Operations are
//! [`Operator`]s: a known [`Op`] of the op table, or an unknown name kept as
//! written — using one is a run-time `missing_op` error, as in the series.
//!
//! Every block is a straight line of [`Stmt`]s closed by one [`Terminator`]
//! (the Prolog syntax nests the rest of the block as the last argument; the
//! AST flattens that chain).

use crate::ops::Op;
use crate::symbol::Symbol;
use crate::value::Value;

/// A whole source file.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Program {
    pub items: Vec<Item>,
}

/// One top-level fact or directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// `block(Label, Code).` — a block of the main flow graph.
    Block(Block),
    /// `function(Name, [Params], [Blocks]).` — the first block is the entry.
    Function(Function),
    /// `entry(Label).` or `entry(Label, Env).`
    Entry(Entry),
    /// `pure(Func).`
    Pure(Symbol),
    /// `immutable(Class, [Fields]).`
    Immutable(Symbol, Vec<Symbol>),
    /// `can_enter_jit(Label).`
    CanEnterJit(Symbol),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub label: Symbol,
    /// The ordered start environment, if the fact gives one.
    pub env: Option<Vec<(Symbol, Value)>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: Symbol,
    pub params: Vec<Symbol>,
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub label: Symbol,
    pub body: Vec<Stmt>,
    pub term: Terminator,
}

/// An operand: a variable or a constant (never an object).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Arg {
    Var(Symbol),
    Const(Value),
}

/// The operation of an `op1`/`op2` statement.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    Known(Op),
    /// A name the op table does not know; running it is `missing_op(Name)`.
    Unknown(Symbol),
}

impl Operator {
    pub fn from_name(name: &str) -> Operator {
        match Op::from_name(name) {
            Some(op) => Operator::Known(op),
            None => Operator::Unknown(Symbol::intern(name)),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Operator::Known(op) => op.name(),
            Operator::Unknown(s) => s.as_str(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// `op1(R, Op, A, Rest)`.
    Op1 { dst: Symbol, op: Operator, arg: Arg },
    /// `op2(R, Op, A, B, Rest)`.
    Op2 { dst: Symbol, op: Operator, lhs: Arg, rhs: Arg },
    /// `new(R, Class, Rest)`.
    New { dst: Symbol, class: Symbol },
    /// `get(R, A, Field, Rest)`.
    Get { dst: Symbol, obj: Arg, field: Symbol },
    /// `set(A, Field, B, Rest)`.
    Set { obj: Arg, field: Symbol, value: Arg },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Terminator {
    Jump(Symbol),
    /// `if(V, L1, L2)`: L2 if V is 0, else L1.
    If {
        cond: Symbol,
        then_label: Symbol,
        else_label: Symbol,
    },
    PrintAndStop(Arg),
    /// `promote(V, L)`: a jump for the interpreter, `guard_value` for the tracer.
    Promote {
        var: Symbol,
        label: Symbol,
    },
    IfClass {
        obj: Arg,
        class: Symbol,
        then_label: Symbol,
        else_label: Symbol,
    },
    Call {
        dst: Symbol,
        func: Symbol,
        args: Vec<Arg>,
        next: Symbol,
    },
    Return(Arg),
    Error(Symbol),
}

impl Stmt {
    /// The variable the statement writes, if any.
    pub fn dst(&self) -> Option<Symbol> {
        match self {
            Stmt::Op1 { dst, .. } | Stmt::Op2 { dst, .. } | Stmt::New { dst, .. } | Stmt::Get { dst, .. } => Some(*dst),
            Stmt::Set { .. } => None,
        }
    }

    /// The operands the statement reads, in order.
    pub fn args(&self) -> Vec<&Arg> {
        match self {
            Stmt::Op1 { arg, .. } => vec![arg],
            Stmt::Op2 { lhs, rhs, .. } => vec![lhs, rhs],
            Stmt::New { .. } => vec![],
            Stmt::Get { obj, .. } => vec![obj],
            Stmt::Set { obj, value, .. } => vec![obj, value],
        }
    }
}

impl Terminator {
    /// The function this terminator calls, if it is a `call`.
    pub fn callee(&self) -> Option<Symbol> {
        match self {
            Terminator::Call { func, .. } => Some(*func),
            _ => None,
        }
    }

    /// Labels this terminator can continue at, in order.
    pub fn successors(&self) -> Vec<Symbol> {
        match self {
            Terminator::Jump(l) | Terminator::Promote { label: l, .. } => vec![*l],
            Terminator::If { then_label, else_label, .. } | Terminator::IfClass { then_label, else_label, .. } => {
                vec![*then_label, *else_label]
            }
            Terminator::Call { next, .. } => vec![*next],
            Terminator::PrintAndStop(_) | Terminator::Return(_) | Terminator::Error(_) => vec![],
        }
    }

    /// Variables read by the terminator, in order.
    pub fn uses(&self) -> Vec<Symbol> {
        let var = |a: &Arg| match a {
            Arg::Var(v) => Some(*v),
            Arg::Const(_) => None,
        };
        match self {
            Terminator::If { cond, .. } => vec![*cond],
            Terminator::Promote { var: v, .. } => vec![*v],
            Terminator::PrintAndStop(a) | Terminator::Return(a) | Terminator::IfClass { obj: a, .. } => {
                var(a).into_iter().collect()
            }
            Terminator::Call { args, .. } => args.iter().filter_map(var).collect(),
            Terminator::Jump(_) | Terminator::Error(_) => vec![],
        }
    }
}

impl Program {
    /// The layout of the program's objects: every field it reads, writes
    /// or declares immutable.
    pub fn layout(&self) -> &'static crate::heap::Layout {
        let mut fields = Vec::new();
        let mut blocks = Vec::new();
        for item in &self.items {
            match item {
                Item::Block(b) => blocks.push(b),
                Item::Function(f) => blocks.extend(&f.blocks),
                Item::Immutable(_, fs) => fields.extend(fs.iter().copied()),
                _ => {}
            }
        }
        for b in blocks {
            for s in &b.body {
                match s {
                    Stmt::Get { field, .. } | Stmt::Set { field, .. } => fields.push(*field),
                    _ => {}
                }
            }
        }
        crate::heap::Layout::of(fields)
    }

    /// Statements and terminators over the main graph and every function.
    pub fn statement_count(&self) -> usize {
        self.items
            .iter()
            .map(|i| match i {
                Item::Block(b) => b.body.len() + 1,
                Item::Function(f) => f.blocks.iter().map(|b| b.body.len() + 1).sum(),
                _ => 0,
            })
            .sum()
    }

    /// Blocks of the main flow graph, in file order.
    pub fn main_blocks(&self) -> impl Iterator<Item = &Block> {
        self.items.iter().filter_map(|i| match i {
            Item::Block(b) => Some(b),
            _ => None,
        })
    }

    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.items.iter().filter_map(|i| match i {
            Item::Function(f) => Some(f),
            _ => None,
        })
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.items.iter().filter_map(|i| match i {
            Item::Entry(e) => Some(e),
            _ => None,
        })
    }

    pub fn block(&self, label: Symbol) -> Option<&Block> {
        self.main_blocks().find(|b| b.label == label)
    }

    pub fn function(&self, name: Symbol) -> Option<&Function> {
        self.functions().find(|f| f.name == name)
    }

    pub fn can_enter_jit_labels(&self) -> impl Iterator<Item = Symbol> + '_ {
        self.items.iter().filter_map(|i| match i {
            Item::CanEnterJit(l) => Some(*l),
            _ => None,
        })
    }

    /// The default start: the label of the first `entry` fact, else the
    /// first main block.
    pub fn default_entry(&self) -> Option<Symbol> {
        self.entries().next().map(|e| e.label).or_else(|| self.main_blocks().next().map(|b| b.label))
    }

    /// The environment the `entry` fact for `label` gives, if any.
    pub fn entry_env(&self, label: Symbol) -> Option<&[(Symbol, Value)]> {
        self.entries().find(|e| e.label == label && e.env.is_some()).and_then(|e| e.env.as_deref())
    }
}

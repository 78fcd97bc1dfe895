//! Instructions, operands and terminators.

use flowc_lang::ast::Operator;
use flowc_lang::interp::ErrorKind;
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Symbol, Value};

use crate::function::{BlockId, ValueId};
use crate::resume::ResumeId;

/// An operand: an SSA value or an inline constant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Value(ValueId),
    Const(Value),
}

impl Operand {
    pub fn as_value(&self) -> Option<ValueId> {
        match self {
            Operand::Value(v) => Some(*v),
            Operand::Const(_) => None,
        }
    }

    pub fn as_const(&self) -> Option<&Value> {
        match self {
            Operand::Const(c) => Some(c),
            Operand::Value(_) => None,
        }
    }

    pub fn int(i: i64) -> Operand {
        Operand::Const(Value::Int(i))
    }
}

impl From<ValueId> for Operand {
    fn from(v: ValueId) -> Operand {
        Operand::Value(v)
    }
}

/// What a guard checks; on failure execution leaves the trace and resumes
/// the interpreter from the guard's resume data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardKind {
    /// Fails if the operand is the integer 0.
    True(Operand),
    /// Fails unless the operand is the integer 0.
    False(Operand),
    /// Fails unless the operand equals the constant (`promote`).
    Value(Operand, Value),
    /// Fails unless the operand is an object of the class (`if_class`).
    Class(Operand, Symbol),
    /// Fails if the operand is an object of the class (`if_class` not taken).
    NotClass(Operand, Symbol),
    /// `Class` where the operand is proven to be either an object of the
    /// class or the integer 0 (a link of a chain: the program's field
    /// facts, `flowc_passes::propagate::FieldFacts`, say so): fails unless
    /// the operand is an object of the class, which code checks as the
    /// operand not being 0.
    Link(Operand, Symbol),
    /// Fails unless the operand is an integer in `lo..=hi`: what a trace
    /// assumes of an input it was specialized for (the JIT's speculation
    /// on loop counters, checked on entry).
    Int(Operand, i64, i64),
    /// `At(link, base, delta)`, the one guard with a result: fails unless
    /// `link` is the object whose cell lies `delta` bytes past the cell of
    /// the object `base` (cells never move); its result is `link`. The
    /// trace conversion assumes this of a link read from `base` and
    /// found laid out next to it when recorded (`flowc_trace::to_ir`,
    /// "Links laid out in a row"), and code computes the result from
    /// `base` — so a walk along a chain of such links does not wait for
    /// each link's load before it can start the next.
    ///
    /// Like a `.word` form it states a proof the checker cannot redo:
    /// `link` and `base` are objects (code compares words, and a list's
    /// box or an integer's word could equal the address). Only the
    /// optimizer writes it; the IR interpreter raises
    /// `broken_form(guard_at)` when the proof does not hold.
    At(Operand, Operand, i64),
    /// `Row(obj, span)`: fails unless the heap's row `span.row`
    /// ([`flowc_lang::heap::rows`]) is of the span's shape and holds every
    /// address from `obj`'s cell plus `span.lo` to its cell plus `span.hi`
    /// bytes (`lo <= 0 <= hi`). `obj` is then one of the row's objects,
    /// and so is every object from `lo` to `hi` bytes from it, each of
    /// `span.class`, its `next` the object `stride` bytes past and that
    /// one's `prev` it. Code may then take, for the `guard_link`s and
    /// `guard_at`s of the links read within the span after the guard
    /// (until an instruction that may write a link), what they check as
    /// known (`flowc_codegen::baseline`, "The heap's row"). Traces only:
    /// the optimizer writes it where the heap has a row
    /// (`flowc_trace::opt::row`); like `At`, it states that `obj` is an
    /// object.
    Row(Operand, RowSpan),
    /// Traces only, the JIT's dispatch tier: at a dispatch label whose
    /// promotion the trace does not guard (it runs for any position of
    /// the interpreted program), fails unless the operand is an integer
    /// in `0..n` whose count in the run's table of positions (`n`
    /// positions of two words, a count and a link: the runtime's
    /// `Ctx::positions`) is not 0, and counts the arrival there: the count
    /// goes down by one. (Where it is 0 and the position has a link,
    /// baseline code enters the linked code instead of leaving.) The JIT keeps a position's word
    /// 0 while it has code of its own, and otherwise as the arrivals it
    /// may still take before it is hot; so the code leaves for the
    /// interpreter, which goes on where the guard stood, at a position
    /// that has code or has become hot. Leaving there changes nothing the
    /// program computes, so the IR interpreter lets it pass, and the
    /// optimizer learns nothing from it.
    Cold(Operand),
}

/// The span and shape of a `guard_row` ([`GuardKind::Row`]): bytes from
/// the object, and the row's class, links and stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowSpan {
    pub lo: i64,
    pub hi: i64,
    pub class: Symbol,
    pub next: Symbol,
    pub prev: Symbol,
    pub stride: i64,
    /// Which of the heap's rows (`flowc_lang::heap::rows::ROWS`).
    pub row: u8,
}

impl RowSpan {
    /// Whether the span holds the objects `a` and `b` bytes from its
    /// object, and the link read from the one at `a` through `field` is
    /// the one at `b` (the row's links between objects it holds).
    pub fn links(&self, a: i64, field: Symbol, b: i64) -> bool {
        let within = |x: i64| self.lo <= x && x <= self.hi;
        let step = if field == self.next {
            self.stride
        } else if field == self.prev {
            -self.stride
        } else {
            return false;
        };
        within(a) && within(b) && a.checked_add(step) == Some(b)
    }
}

impl InstKind {
    /// Whether the instruction may write a link of a row whose link
    /// fields `is_link` names (what a `guard_row` before it vouched for
    /// may not hold after it): a `set` of such a field, a call (which
    /// runs any code), a `new` (which may collect).
    pub fn may_write_link(&self, is_link: impl Fn(Symbol) -> bool) -> bool {
        match self {
            InstKind::Set { field, .. } => is_link(*field),
            InstKind::Call { .. } | InstKind::New(_) => true,
            _ => false,
        }
    }
}

impl GuardKind {
    pub fn operand(&self) -> &Operand {
        match self {
            GuardKind::True(o)
            | GuardKind::False(o)
            | GuardKind::Value(o, _)
            | GuardKind::Class(o, _)
            | GuardKind::NotClass(o, _)
            | GuardKind::Link(o, _)
            | GuardKind::Int(o, _, _)
            | GuardKind::At(o, _, _)
            | GuardKind::Row(o, _)
            | GuardKind::Cold(o) => o,
        }
    }

    /// The object an `At` guard's link lies next to.
    pub fn base(&self) -> Option<&Operand> {
        match self {
            GuardKind::At(_, base, _) => Some(base),
            _ => None,
        }
    }

    pub fn operand_mut(&mut self) -> &mut Operand {
        match self {
            GuardKind::True(o)
            | GuardKind::False(o)
            | GuardKind::Value(o, _)
            | GuardKind::Class(o, _)
            | GuardKind::NotClass(o, _)
            | GuardKind::Link(o, _)
            | GuardKind::Int(o, _, _)
            | GuardKind::At(o, _, _)
            | GuardKind::Row(o, _)
            | GuardKind::Cold(o) => o,
        }
    }

    /// Whether the guard passes for `v`, and `base` the value of its
    /// [`GuardKind::base`] if it has one (an unbound operand is an error
    /// before any guard is decided).
    pub fn holds(&self, v: &Value, base: Option<&Value>) -> bool {
        let is = |class: Symbol| flowc_lang::interp::objects::is_class(v, class);
        match self {
            GuardKind::True(_) => v.is_truthy(),
            GuardKind::False(_) => !v.is_truthy(),
            GuardKind::Value(_, c) => v == c,
            GuardKind::Class(_, class) | GuardKind::Link(_, class) => is(*class),
            GuardKind::NotClass(_, class) => !is(*class),
            GuardKind::Int(_, lo, hi) => matches!(v, Value::Int(n) if (*lo..=*hi).contains(n)),
            GuardKind::At(_, _, delta) => match (v, base) {
                (Value::Object(link), Some(Value::Object(base))) => {
                    link.address().wrapping_sub(base.address()) as i64 == *delta
                }
                _ => false,
            },
            GuardKind::Row(_, span) => match v {
                Value::Object(o) => {
                    let layout = o.layout();
                    let slots = (layout.slot(span.next), layout.slot(span.prev));
                    let r = span.row as usize;
                    flowc_lang::heap::with(|h| {
                        let shape = (r < flowc_lang::heap::rows::ROWS).then(|| h.rows.shape(r)).flatten();
                        let a = o.address() as i64;
                        shape.is_some_and(|s| {
                            s.class == span.class
                                && (Some(s.next as usize), Some(s.prev as usize)) == slots
                                && s.stride as i64 == span.stride
                        }) && h.rows.contains(r, a.wrapping_add(span.lo) as usize)
                            && h.rows.contains(r, a.wrapping_add(span.hi) as usize)
                    })
                }
                _ => false,
            },
            GuardKind::Cold(_) => true,
        }
    }
}

/// The operands of an operation or call: up to two inline (every operation
/// of the op table takes one or two), more on the heap. Inline operands keep an
/// operation in one arena slot, so a pass reading operands does not chase
/// a pointer per instruction.
pub type Args = smallvec::SmallVec<[Operand; 2]>;

/// The inputs of a phi, keyed by predecessor: up to two inline (most
/// merges join two edges), more on the heap.
pub type PhiInputs = smallvec::SmallVec<[(BlockId, Operand); 2]>;

/// The instruction kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstKind {
    /// One input per predecessor block.
    Phi(PhiInputs),
    /// An operation of the op table in a given form; `Operator::Unknown`
    /// fails with `missing_op` once its operands have been read.
    ///
    /// Invariant: a known operation has as many operands as its arity.
    /// [`InstKind::generic_op`] and the IR parser make any other count an
    /// unknown operation of that name (which fails as the reference
    /// interpreter fails on it), the checker rejects it, and passes and
    /// code generators rely on it: none tests the count again.
    Op { op: Operator, form: Form, args: Args },
    /// Raises `key_not_found` if the operand is unbound; else the operand.
    CheckBound(Operand),
    /// The unbound value of a variable no path assigns.
    Unbound(Symbol),
    /// A fresh object of a class.
    New(Symbol),
    /// Reads `field` of `obj`. `proven` (printed `get.object`): the
    /// optimizer proved `obj` an object, so code reads the field's slot
    /// without testing what `obj` is (the field may still be unset: that
    /// stays a test). Like a `.word` form it states a proof the checker
    /// cannot redo, so only the optimizer writes it; the IR interpreter
    /// checks it at run time.
    Get { obj: Operand, field: Symbol, proven: bool },
    /// Writes `value` to `field` of `obj`; `proven` (`set.object`) as for
    /// [`InstKind::Get`].
    Set { obj: Operand, field: Symbol, value: Operand, proven: bool },
    /// A call of a function of the module, by name.
    Call { func: Symbol, args: Args },
    /// Compiled whole programs only (`flowc_codegen::walks`): the object
    /// reached from `obj` by reading `field` `links` times (each link an
    /// object, of any class), or the integer 0 where `obj` or a link on
    /// the way is no object or has the field unset. It never fails and
    /// changes nothing: the code it stands before (a chain of `get`s,
    /// each tested) does what it said where it says 0. Native code
    /// answers it from the heap's rows without reading a link
    /// (`flowc_lang::heap::rows`).
    Walk { obj: Operand, field: Symbol, links: u32 },
    /// Traces only: counts the operand (a small non-negative integer) as
    /// that many more loop iterations run, as if the loop had gone round
    /// them: the iterations a counted loop skips
    /// (`flowc_trace::opt::fast_forward`), which the JIT's clock counts as
    /// work done. No result; nothing else changes.
    Iterations(Operand),
    /// Traces only: on failure, leave the trace and resume the interpreter
    /// from the record `resume`, the innermost frame at `label`.
    Guard { kind: GuardKind, resume: ResumeId, label: Symbol },
}

/// A terminator's successors ([`Terminator::successors`]): at most two
/// blocks, held inline; a slice by `Deref`, blocks by `into_iter`.
#[derive(Copy, Clone, Debug)]
pub struct Successors {
    blocks: [BlockId; 2],
    len: u8,
}

impl std::ops::Deref for Successors {
    type Target = [BlockId];
    fn deref(&self) -> &[BlockId] {
        &self.blocks[..self.len as usize]
    }
}

impl<'a> IntoIterator for &'a Successors {
    type Item = &'a BlockId;
    type IntoIter = std::slice::Iter<'a, BlockId>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for Successors {
    type Item = BlockId;
    type IntoIter = std::iter::Take<std::array::IntoIter<BlockId, 2>>;
    fn into_iter(self) -> Self::IntoIter {
        self.blocks.into_iter().take(self.len as usize)
    }
}

/// An instruction's operands, without allocating ([`InstKind::operands`]).
///
/// `fold` (and so `for_each`, `sum`, `any`, ...) dispatches on the kind
/// once rather than per operand: the sweeps over every operand of a
/// function are among the passes' hottest loops.
pub enum Operands<'a> {
    Args(std::slice::Iter<'a, Operand>),
    Inputs(std::slice::Iter<'a, (BlockId, Operand)>),
    /// At most two operands, taken first to second.
    Fixed(Option<&'a Operand>, Option<&'a Operand>),
}

impl<'a> Iterator for Operands<'a> {
    type Item = &'a Operand;

    #[inline]
    fn next(&mut self) -> Option<&'a Operand> {
        match self {
            Operands::Args(it) => it.next(),
            Operands::Inputs(it) => it.next().map(|(_, o)| o),
            Operands::Fixed(a, b) => a.take().or_else(|| b.take()),
        }
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a Operand) -> B>(self, init: B, mut f: F) -> B {
        match self {
            Operands::Args(it) => it.fold(init, f),
            Operands::Inputs(it) => it.fold(init, |acc, (_, o)| f(acc, o)),
            Operands::Fixed(a, b) => b.into_iter().fold(a.into_iter().fold(init, &mut f), f),
        }
    }
}

/// An instruction's operands, mutable ([`InstKind::operands_mut`]).
pub enum OperandsMut<'a> {
    Args(std::slice::IterMut<'a, Operand>),
    Inputs(std::slice::IterMut<'a, (BlockId, Operand)>),
    Fixed(Option<&'a mut Operand>, Option<&'a mut Operand>),
}

impl<'a> Iterator for OperandsMut<'a> {
    type Item = &'a mut Operand;

    #[inline]
    fn next(&mut self) -> Option<&'a mut Operand> {
        match self {
            OperandsMut::Args(it) => it.next(),
            OperandsMut::Inputs(it) => it.next().map(|(_, o)| o),
            OperandsMut::Fixed(a, b) => a.take().or_else(|| b.take()),
        }
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a mut Operand) -> B>(self, init: B, mut f: F) -> B {
        match self {
            OperandsMut::Args(it) => it.fold(init, f),
            OperandsMut::Inputs(it) => it.fold(init, |acc, (_, o)| f(acc, o)),
            OperandsMut::Fixed(a, b) => b.into_iter().fold(a.into_iter().fold(init, &mut f), f),
        }
    }
}

impl InstKind {
    /// `get obj, field`, with nothing proven of `obj`.
    pub fn get(obj: Operand, field: Symbol) -> InstKind {
        InstKind::Get { obj, field, proven: false }
    }

    /// `set obj, field, value`, with nothing proven of `obj`.
    pub fn set(obj: Operand, field: Symbol, value: Operand) -> InstKind {
        InstKind::Set { obj, field, value, proven: false }
    }

    /// The operation `op` on `args` in its generic form, as the front end
    /// and the trace recorder build it: a known operation given the wrong
    /// number of operands becomes an unknown one of that name (it fails
    /// with `missing_op`, as the reference interpreter does).
    pub fn generic_op(op: Operator, args: impl Into<Args>) -> InstKind {
        let args = args.into();
        let op = match op {
            Operator::Known(known) if known.arity() != args.len() => Operator::Unknown(Symbol::intern(known.name())),
            op => op,
        };
        InstKind::Op { op, form: Form::Generic, args }
    }

    /// The operands, in evaluation order.
    pub fn operands(&self) -> Operands<'_> {
        fn fixed<'a>(a: Option<&'a Operand>, b: Option<&'a Operand>) -> Operands<'a> {
            Operands::Fixed(a, b)
        }
        match self {
            InstKind::Phi(inputs) => Operands::Inputs(inputs.iter()),
            InstKind::Op { args, .. } | InstKind::Call { args, .. } => Operands::Args(args.iter()),
            InstKind::CheckBound(o) | InstKind::Iterations(o) => fixed(Some(o), None),
            InstKind::Unbound(_) | InstKind::New(_) => fixed(None, None),
            InstKind::Get { obj, .. } | InstKind::Walk { obj, .. } => fixed(Some(obj), None),
            InstKind::Set { obj, value, .. } => fixed(Some(obj), Some(value)),
            InstKind::Guard { kind, .. } => fixed(Some(kind.operand()), kind.base()),
        }
    }

    pub fn operands_mut(&mut self) -> OperandsMut<'_> {
        fn fixed<'a>(a: Option<&'a mut Operand>, b: Option<&'a mut Operand>) -> OperandsMut<'a> {
            OperandsMut::Fixed(a, b)
        }
        match self {
            InstKind::Phi(inputs) => OperandsMut::Inputs(inputs.iter_mut()),
            InstKind::Op { args, .. } | InstKind::Call { args, .. } => OperandsMut::Args(args.iter_mut()),
            InstKind::CheckBound(o) | InstKind::Iterations(o) => fixed(Some(o), None),
            InstKind::Unbound(_) | InstKind::New(_) => fixed(None, None),
            InstKind::Get { obj, .. } | InstKind::Walk { obj, .. } => fixed(Some(obj), None),
            InstKind::Set { obj, value, .. } => fixed(Some(obj), Some(value)),
            InstKind::Guard { kind: GuardKind::At(link, base, _), .. } => fixed(Some(link), Some(base)),
            InstKind::Guard { kind, .. } => fixed(Some(kind.operand_mut()), None),
        }
    }

    /// Whether the instruction defines a value (of the guards, only
    /// [`GuardKind::At`] does).
    pub fn has_result(&self) -> bool {
        match self {
            InstKind::Set { .. } | InstKind::Iterations(_) => false,
            InstKind::Guard { kind, .. } => matches!(kind, GuardKind::At(..)),
            _ => true,
        }
    }

    /// The known operation, if this is one.
    pub fn known_op(&self) -> Option<(Op, Form)> {
        match self {
            InstKind::Op { op: Operator::Known(op), form, .. } => Some((*op, *form)),
            _ => None,
        }
    }

    /// Whether executing it can change or observe state beyond its result
    /// (stores, calls of functions not known pure, guards, iteration
    /// counts). Failing is separate: see [`InstKind::can_fail`].
    pub fn has_effect(&self) -> bool {
        matches!(self, InstKind::Set { .. } | InstKind::Call { .. } | InstKind::Guard { .. } | InstKind::Iterations(_))
    }

    /// Whether executing it may raise an error (an unbound operand counts).
    /// The `Int` form of an operation has proven operands, so only its
    /// non-type failures remain (division by zero, an index out of range);
    /// overflow is no failure (it goes to bignums).
    pub fn can_fail(&self) -> bool {
        match self {
            InstKind::Phi(_)
            | InstKind::Unbound(_)
            | InstKind::New(_)
            | InstKind::Iterations(_)
            | InstKind::Walk { .. } => false,
            InstKind::Op { op: Operator::Known(_), form: Form::Word, .. } => false,
            InstKind::Op { op: Operator::Known(op), form: Form::Int, .. } => {
                op.info().failures.iter().any(|f| *f != flowc_lang::ops::Failure::Type)
            }
            _ => true,
        }
    }
}

/// Errors a block may end in unconditionally.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trap {
    /// The program's `error(Reason)`.
    Error(Symbol),
    UnknownLabel(Symbol),
    UnknownFunction(Symbol),
    ArgumentCount {
        func: Symbol,
        expected: usize,
        got: usize,
    },
    ReturnOutsideFunction,
    /// Never executed: optimizers put it where control cannot arrive (after
    /// an instruction that always fails). Reaching it is a compiler bug.
    Unreachable,
}

impl Trap {
    /// The language error this trap raises.
    pub fn error_kind(&self) -> ErrorKind {
        match self {
            Trap::Error(r) => ErrorKind::User(*r),
            Trap::UnknownLabel(l) => ErrorKind::UnknownLabel(*l),
            Trap::UnknownFunction(f) => ErrorKind::UnknownFunction(*f),
            Trap::ArgumentCount { func, expected, got } => {
                ErrorKind::ArgumentCount { func: *func, expected: *expected, got: *got }
            }
            Trap::ReturnOutsideFunction => ErrorKind::ReturnOutsideFunction,
            Trap::Unreachable => ErrorKind::User(Symbol::intern("internal: unreachable code reached")),
        }
    }
}

/// The end of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Terminator {
    Jump(BlockId),
    /// To `else_block` if the condition is the integer 0, else `then_block`.
    Branch {
        cond: Operand,
        then_block: BlockId,
        else_block: BlockId,
    },
    /// To `then_block` if the operand is an object of `class`.
    IfClass {
        obj: Operand,
        class: Symbol,
        then_block: BlockId,
        else_block: BlockId,
    },
    /// `print_and_stop`: print the operand and end the program.
    Print(Operand),
    Return(Operand),
    Trap(Trap),
    /// Traces only: leave the trace here, as a failing guard does, with
    /// resume record `resume`; the interpreter (or the code compiled for
    /// the label) continues at `label`. Bridges end with it.
    Exit {
        resume: ResumeId,
        label: Symbol,
    },
    /// Traces only: continue in trace `target` (of the same module or code
    /// cache), passing `args` as its parameters, never to come back: how a
    /// bridge, or a trace that reached another loop, enters compiled code
    /// without going through the interpreter.
    JumpTrace {
        target: Symbol,
        args: Args,
    },
}

impl Terminator {
    /// The resume record of an [`Terminator::Exit`]; its operands are
    /// uses at the end of the block.
    pub fn resume(&self) -> Option<ResumeId> {
        match self {
            Terminator::Exit { resume, .. } => Some(*resume),
            _ => None,
        }
    }

    /// The blocks the terminator may jump to, in order (a branch to the
    /// same block twice lists it twice).
    pub fn successors(&self) -> Successors {
        match self {
            Terminator::Jump(b) => Successors { blocks: [*b, *b], len: 1 },
            Terminator::Branch { then_block, else_block, .. } | Terminator::IfClass { then_block, else_block, .. } => {
                Successors { blocks: [*then_block, *else_block], len: 2 }
            }
            Terminator::Print(_)
            | Terminator::Return(_)
            | Terminator::Trap(_)
            | Terminator::Exit { .. }
            | Terminator::JumpTrace { .. } => {
                Successors { blocks: [BlockId::from_raw(la_arena::RawIdx::from_u32(0)); 2], len: 0 }
            }
        }
    }

    pub fn successors_mut(&mut self) -> Vec<&mut BlockId> {
        match self {
            Terminator::Jump(b) => vec![b],
            Terminator::Branch { then_block, else_block, .. } | Terminator::IfClass { then_block, else_block, .. } => {
                vec![then_block, else_block]
            }
            Terminator::Print(_)
            | Terminator::Return(_)
            | Terminator::Trap(_)
            | Terminator::Exit { .. }
            | Terminator::JumpTrace { .. } => vec![],
        }
    }

    /// The operands, in order (one, except a jump to a trace's arguments).
    pub fn operands(&self) -> std::slice::Iter<'_, Operand> {
        match self {
            Terminator::Branch { cond: o, .. }
            | Terminator::IfClass { obj: o, .. }
            | Terminator::Print(o)
            | Terminator::Return(o) => std::slice::from_ref(o).iter(),
            Terminator::JumpTrace { args, .. } => args.iter(),
            Terminator::Jump(_) | Terminator::Trap(_) | Terminator::Exit { .. } => [].iter(),
        }
    }

    pub fn operands_mut(&mut self) -> std::slice::IterMut<'_, Operand> {
        match self {
            Terminator::Branch { cond: o, .. }
            | Terminator::IfClass { obj: o, .. }
            | Terminator::Print(o)
            | Terminator::Return(o) => std::slice::from_mut(o).iter_mut(),
            Terminator::JumpTrace { args, .. } => args.iter_mut(),
            Terminator::Jump(_) | Terminator::Trap(_) | Terminator::Exit { .. } => [].iter_mut(),
        }
    }
}

//! Counted loops run to their end at once: final values for loops whose
//! every iteration steps a counter down by one and other cells by
//! constants, modulo constants (Brainfuck's `[->+<]`, a byte
//! counter in a heap cell), computed where the loop is entered, as a
//! C compiler's scalar evolution does with induction variables.
//!
//! ## The shape
//! An optimized loop trace ([`super::loop_block`]) whose loop block `L`
//! holds only:
//! - *updates* of cells: a cell is a field `f` of an object `o` defined
//!   before the loop (`x = get o, f; y = add|sub x, k; z = mod y, M;
//!   set o, f, z`), or a phi of `L` whose input from `L` is
//!   `mod (add|sub phi, k), M`, or several such steps in a row (the
//!   moduli equal); the operations of an update in the `.int` or the
//!   `.word` form (the cells are integers), each cell updated once; a
//!   phi's value may be stored in a field too (a carried field), before
//!   the guard, so that the last iteration writes it, or after a guard of
//!   an old value, which leaves where the last iteration that passed it
//!   wrote the value the phi then holds;
//! - reads of an updated field after its update;
//! - *constant cells*: fields whose last write in `L` stores an integer
//!   constant `c` (BF's `[-]`, done at once inside: `[>+++[-]<-]`). A
//!   round that starts with `c` there computes alike from it: values of
//!   constants, guards that pass alike (the test of a loop inside done at
//!   once), `iterations` of a constant (its rounds, counted per round),
//!   writes of such values to the cell, then `c` again;
//! - one `guard_true t`, `t` the *counter*'s value where the iteration
//!   started (`while c { ... }`) or its new value (`do { ... } while c`),
//!   the counter a cell whose step is -1 modulo its `M`.
//!
//! Each iteration then maps every cell `x` to `(x + k) mod M` (floored,
//! the language's `mod`). Testing the new value, the loop leaves in
//! iteration `n = ((c - 1) mod M) + 1`, `c` the counter where the loop
//! is entered — whatever integer `c` is: the first iteration leaves
//! `(c - 1) mod M` in `[0, M)`, and from there it counts down to 0.
//! Testing the old value, it runs `n` whole iterations and leaves at the
//! start of the next, or at once if `c` is 0.
//!
//! ## The transformation
//! At the end of the block that enters the loop, `m` iterations are done
//! at once, `m = (c - 1) mod M` (times `c != 0` when the old value is
//! tested): each cell becomes `(x + k * m) mod M`, which is `m` steps of
//! `(x + k) mod M` for `m >= 1`. The loop then runs what is left (one
//! iteration, or none) as compiled and leaves by its own guard, with its
//! own resume data: nothing the interpreter sees differs.
//! - For `m = 0` a cell keeps `x` exactly, `x + ((x + k*m) mod M - x) *
//!   (m != 0)`: code entering the loop directly, as bridges do, may bring
//!   a value not reduced modulo `M`, which the guard's resume data could
//!   show. A cell known to hold an integer in `[0, M)` where the loop is
//!   entered is its own reduction: its skip is `(x + k * m) mod M` in the
//!   `.word` forms, with no blend. That is a field the program facts say
//!   holds only such integers (a BF tape cell's byte), or a phi whose
//!   entry value the blocks before the loop, run abstractly, keep there
//!   (a peeled iteration's `(x - 1) mod M`).
//! - A field the skip reads is one the loop reads before its guard, or
//!   one read or written before the loop: it reads nothing the loop would
//!   not (an unset field fails at the place of the loop's read).
//! - A field a phi's value is kept in is written by the last iteration
//!   before the guard, and no field of that name may be read before it
//!   is written.
//!
//! A constant cell the loop reads before writing it must hold `c` where
//! the loop is entered for the rounds to compute alike: the skip reads it
//! there (where the loop's first read is) and skips nothing otherwise
//! (`m * (x == c)`). It writes nothing there: each skipped round leaves
//! `c`, which the cell holds already or, not read before written, which
//! the last round writes. The rounds counted per round are counted too
//! (`iterations m * k`).
//!
//! Two written fields of the same name on two objects could be one cell
//! (the same object twice): then iterations do not compose as above. The
//! skip is multiplied by `1 - (o1 == o2)` per such pair, so such a loop
//! skips nothing and runs as it did.
//!
//! The skip counts `iterations m`: the JIT's clock (its compile budget,
//! [`crate::jit`]) counts compiled loop iterations as the run's work, and
//! the skipped ones were work done.
//!
//! Otherwise the operations on cells are in the `.int` form (the cells are
//! integers, as the loop's own `.int` or `.word` operations prove; a sum
//! may overflow to a big integer as the loop's would not), those on `m`
//! (in `[0, M)`), its 0/1 factors and `k * m` (`|k|` and `M` below 2^16)
//! in the `.word` form.

use flowc_ir::{BlockId, Function, GuardKind, InstId, InstKind, Operand, Terminator, ValueDef, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Symbol, Value};
use flowc_passes::edit;
use flowc_passes::lattice::{Info, Kinds};
use flowc_passes::propagate::ProgramFacts;

use rustc_hash::FxHashMap as HashMap;

use crate::skip::{Path, Skip, SkipCell, SkipConst};

/// Steps and moduli up to this size: `k * m` and `x + k * m` stay far
/// inside a machine word.
const MAX_CONSTANT: i64 = 1 << 16;

/// Loops with more updated cells than this are left alone (the aliasing
/// checks grow with the square of the cells).
const MAX_CELLS: usize = 12;

/// Where a cell lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cell {
    /// A field of an object defined before the loop.
    Field(ValueId, Symbol),
    /// A phi of the loop block.
    Phi(InstId),
}

/// One cell's update per iteration: `(x + step) mod modulus`.
#[derive(Clone, Copy, Debug)]
struct Update {
    cell: Cell,
    step: i64,
    modulus: i64,
}

/// Makes loop trace `f`'s counted loop (see the module docs) skip to its
/// last iteration where it is entered. Returns whether it did; `f` is
/// unchanged when the loop has another shape.
pub fn fast_forward(f: &mut Function, fields: Option<&ProgramFacts>) -> bool {
    let Some(lp) = super::loop_block(f) else { return false };
    let entering: Vec<BlockId> =
        f.layout.iter().copied().filter(|&b| b != lp && f.blocks[b].term == Terminator::Jump(lp)).collect();
    let [pre] = entering[..] else { return false };
    let Some(shape) = shape(f, lp) else { return false };
    // Only a phi cell's entry value needs the way before the loop run
    // abstractly (a field's comes from the program facts).
    let phis = shape.updates.iter().any(|u| matches!(u.cell, Cell::Phi(_)));
    let before = if phis { facts_before(f, lp, fields) } else { Vec::new() };
    let reduced: Vec<bool> = shape.updates.iter().map(|u| reduced(f, u, pre, &before, fields)).collect();
    emit(f, pre, &shape, &reduced);
    true
}

/// What loop trace `f`'s counted loop does, for the recordings of loops
/// around it to do at once ([`crate::skip`]): `None` unless its shape
/// (module docs) tests the counter's new value, steps only fields, and
/// the blocks before it (straight, as a trace's are) reach the objects
/// from the trace's parameters by links and guard nothing but those
/// links, objects found to be one another, promoted parameters and the
/// first iteration's test of the counter.
///
/// `f` is the loop as optimized before [`fast_forward`] (whose reads of
/// every cell ahead of the loop would hide a cell the loop reads only
/// after its test), and `entry` what its code assumes where it is entered,
/// which the skip checks too: the head's constants, its parameters'
/// classes; no virtual objects, and no integer range of a parameter the
/// loop reads.
pub fn skip_of(f: &Function, fields: Option<&ProgramFacts>, entry: &super::LoopEntry) -> Option<Skip> {
    use super::{Fact, Shape as AtHead};
    let lp = super::loop_block(f)?;
    let before = straight_way(f, lp)?;
    let shape = shape(f, lp)?;
    (!shape.tests_old).then_some(())?;
    let mut skip = Skip {
        objects: Vec::new(),
        cells: Vec::new(),
        counter: shape.counter,
        same: Vec::new(),
        values: Vec::new(),
        classes: Vec::new(),
        ranges: Vec::new(),
        consts: Vec::new(),
        per_round: shape.per_round,
    };
    // Every cell is read by the loop before its test: the skip reads
    // nothing a round that leaves at once would not. (Guards before it
    // on constant cells pass alike where the skip holds.)
    let insts = &f.blocks[lp].insts;
    let guard_at = insts.iter().position(|&i| i == shape.test)?;
    for first in &shape.first_read {
        let at = first.and_then(|i| insts.iter().position(|&j| j == i));
        at.filter(|&k| k < guard_at)?;
    }
    // What the code assumes where it is entered.
    let read = |v: ValueId| {
        f.layout
            .iter()
            .flat_map(|&b| f.blocks[b].phis.iter().chain(f.blocks[b].insts.iter()))
            .any(|&i| f.insts[i].kind.operands().any(|o| *o == Operand::Value(v)))
    };
    for (name, shape) in &entry.vars {
        match shape {
            AtHead::Const(Value::Object(_)) | AtHead::Object(_) => return None,
            AtHead::Const(c) => skip.values.push((*name, c.clone())),
            AtHead::Input(k) => match &entry.inputs.get(*k)?.1 {
                Fact::Any => {}
                Fact::Is(c) => skip.values.push((*name, c.clone())),
                Fact::Class(c) => skip.classes.push((*name, *c)),
                Fact::Int(lo, hi) => {
                    let p = *f.params.get(*k)?;
                    if read(p) {
                        skip.ranges.push((*name, *lo, *hi));
                    }
                }
            },
        }
    }
    // The class each guard checks a value to be.
    let classes: HashMap<ValueId, Symbol> = f
        .layout
        .iter()
        .flat_map(|&b| f.blocks[b].insts.iter())
        .filter_map(|&i| match &f.insts[i].kind {
            InstKind::Guard {
                kind: GuardKind::Class(Operand::Value(x), c) | GuardKind::Link(Operand::Value(x), c),
                ..
            } => Some((*x, *c)),
            _ => None,
        })
        .collect();
    let object = |skip: &mut Skip, v: ValueId| -> Option<usize> {
        let p = path(f, &classes, v)?;
        Some(match skip.objects.iter().position(|q| *q == p) {
            Some(k) => k,
            None => {
                skip.objects.push(p);
                skip.objects.len() - 1
            }
        })
    };
    let mut by_value: Vec<(ValueId, usize)> = Vec::new();
    for u in &shape.updates {
        let Cell::Field(o, field) = u.cell else { return None };
        let k = object(&mut skip, o)?;
        by_value.push((o, k));
        let reduced = reduced(f, u, lp, &[], fields);
        skip.cells.push(SkipCell { object: k, field, step: u.step, modulus: u.modulus, reduced });
    }
    for c in &shape.consts {
        let k = object(&mut skip, c.obj)?;
        by_value.push((c.obj, k));
        skip.consts.push(SkipConst { object: k, field: c.field, value: c.value, read: c.read.is_some() });
    }
    // Two stepped fields of one name on two values must be two cells.
    for (i, &(o1, f1)) in shape.written.iter().enumerate() {
        for &(o2, f2) in &shape.written[i + 1..] {
            if f1 == f2 && o1 != o2 {
                let a = by_value.iter().find(|(v, _)| *v == o1)?.1;
                let b = by_value.iter().find(|(v, _)| *v == o2)?.1;
                skip.same.push((a, b, false));
            }
        }
    }
    // The guards before the loop.
    let counter = match shape.updates[shape.counter].cell {
        Cell::Field(o, field) => (o, field),
        Cell::Phi(_) => return None,
    };
    // Whether the first iteration has stepped the counter yet: only its
    // new value's test is the loop's own.
    let mut stepped_counter = false;
    // What the first iteration stored in the counter last.
    let mut counter_stored: Option<Operand> = None;
    // The first iteration's values computed from constant cells (which
    // the skip checks) and constants, and what it wrote to those cells.
    let mut known: HashMap<ValueId, i64> = HashMap::default();
    let mut wrote: Vec<((ValueId, Symbol), Option<i64>)> = Vec::new();
    // The places `guard_at`s found links at: base, distance, link.
    let mut places: Vec<(Operand, i64, ValueId)> = Vec::new();
    let const_of = |o: ValueId, field: Symbol| shape.consts.iter().find(|c| c.obj == o && c.field == field);
    let value_of = |known: &HashMap<ValueId, i64>, x: &Operand| match x {
        Operand::Value(v) => known.get(v).copied(),
        Operand::Const(Value::Int(k)) => Some(*k),
        Operand::Const(_) => None,
    };
    for &b in &before {
        for &i in &f.blocks[b].insts {
            if let InstKind::Set { obj: Operand::Value(o), field, value, .. } = &f.insts[i].kind {
                if (*o, *field) == counter {
                    stepped_counter = true;
                    counter_stored = Some(value.clone());
                }
            }
            match (&f.insts[i].kind, f.insts[i].result) {
                (InstKind::Get { obj: Operand::Value(o), field, .. }, Some(r)) => {
                    let now = match wrote.iter().find(|w| w.0 == (*o, *field)) {
                        Some(&(_, k)) => k,
                        None => const_of(*o, *field).filter(|c| c.read.is_some()).map(|c| c.value),
                    };
                    if let Some(k) = now {
                        known.insert(r, k);
                    }
                }
                (InstKind::Set { obj: Operand::Value(o), field, value, .. }, _) if const_of(*o, *field).is_some() => {
                    let k = value_of(&known, value);
                    match wrote.iter_mut().find(|w| w.0 == (*o, *field)) {
                        Some(w) => w.1 = k,
                        None => wrote.push(((*o, *field), k)),
                    }
                }
                (
                    InstKind::Op { op: Operator::Known(op @ (Op::Add | Op::Sub | Op::Mul | Op::Mod)), args, .. },
                    Some(r),
                ) => {
                    if let (Some(x), Operand::Const(Value::Int(k))) = (value_of(&known, &args[0]), &args[1]) {
                        if let Some(v) = fold_constant(*op, x, *k) {
                            known.insert(r, v);
                        }
                    }
                }
                _ => {}
            }
            let InstKind::Guard { kind, .. } = &f.insts[i].kind else { continue };
            // A test the first iteration passes alike where the skip
            // holds (a loop inside entered).
            match value_of(&known, kind.operand()).and_then(|x| passes_on(kind, x)) {
                Some(true) => continue,
                Some(false) => return None,
                None => {}
            }
            match kind {
                // Each link's class is checked by the walk.
                // A parameter's class is checked where the skip starts.
                GuardKind::Class(Operand::Value(v), c) | GuardKind::Link(Operand::Value(v), c)
                    if matches!(f.values[*v].def, ValueDef::Param(_)) =>
                {
                    skip.classes.push((param_name(f, *v)?, *c));
                }
                // A link's class is checked by the walk to it.
                GuardKind::Class(Operand::Value(v), _) | GuardKind::Link(Operand::Value(v), _) => {
                    object(&mut skip, *v)?;
                }
                // Where a link lies is no matter of what the loop does —
                // but a link found where an earlier `guard_at` found a
                // cell is that cell in the code that follows (`walk.rs`,
                // places): the skip checks the two are one object.
                GuardKind::At(Operand::Value(link), base, d) => {
                    match places.iter().find(|(b, e, _)| b == base && e == d).map(|p| p.2) {
                        Some(first) if first != *link => {
                            let (a, b) = (object(&mut skip, *link)?, object(&mut skip, first)?);
                            skip.same.push((a, b, true));
                        }
                        Some(_) => {}
                        None => places.push((base.clone(), *d, *link)),
                    }
                }
                GuardKind::At(..) | GuardKind::Row(..) => {}
                GuardKind::Value(Operand::Value(v), c) => {
                    let var = param_name(f, *v)?;
                    (!matches!(c, Value::Object(_))).then_some(())?;
                    skip.values.push((var, c.clone()));
                }
                GuardKind::Int(Operand::Value(v), lo, hi) if lo == hi => {
                    skip.values.push((param_name(f, *v)?, Value::Int(*lo)));
                }
                GuardKind::Int(Operand::Value(v), lo, hi) => {
                    skip.ranges.push((param_name(f, *v)?, *lo, *hi));
                }
                // The first iteration's test of the value it stored in
                // its counter: the loop's own test.
                GuardKind::True(t) if counter_stored.as_ref() == Some(t) => {}
                GuardKind::True(Operand::Value(t)) | GuardKind::False(Operand::Value(t)) => {
                    let expected = matches!(kind, GuardKind::True(_));
                    match def_kind(f, *t) {
                        // The first iteration's test of its counter's new
                        // value (a test of the value before it, not the
                        // loop's, would say the loop may not run at all).
                        Some(InstKind::Get { obj: Operand::Value(o), field, .. })
                            if expected && stepped_counter && (*o, *field) == counter => {}
                        Some(InstKind::Op { op: Operator::Known(Op::Eq), args, .. }) => {
                            let (Operand::Value(a), Operand::Value(b)) = (&args[0], &args[1]) else { return None };
                            let (a, b) = (object(&mut skip, *a)?, object(&mut skip, *b)?);
                            skip.same.push((a, b, expected));
                        }
                        // An ordering of a parameter and a constant: a
                        // range of the parameter.
                        Some(InstKind::Op { op: Operator::Known(op), args, form: Form::Int | Form::Word }) => {
                            let (var, lo, hi) = bound(f, *op, args, expected)?;
                            skip.ranges.push((var, lo, hi));
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
    }
    // The first iteration changes no link the walks read, nor makes
    // objects or calls: the walks at the head find what the loop works on.
    let stepped: Vec<Symbol> = skip.cells.iter().map(|c| c.field).chain(skip.consts.iter().map(|c| c.field)).collect();
    let quiet = before.iter().flat_map(|&b| f.blocks[b].insts.iter()).all(|&i| match &f.insts[i].kind {
        InstKind::Set { field, .. } => stepped.contains(field),
        InstKind::New(_) | InstKind::Call { .. } => false,
        _ => true,
    });
    let links_apart = skip.objects.iter().flat_map(|p| &p.links).all(|(field, _)| !stepped.contains(field));
    (quiet && links_apart && skip.fits()).then_some(skip)
}

/// `x op k` for the operations a constant cell's values are computed
/// with (the language's floored `mod`, by a positive `k`); `None` for
/// another operation or where it overflows.
fn fold_constant(op: Op, x: i64, k: i64) -> Option<i64> {
    match op {
        Op::Add => x.checked_add(k),
        Op::Sub => x.checked_sub(k),
        Op::Mul => x.checked_mul(k),
        Op::Mod => (k > 0).then(|| x.rem_euclid(k)),
        _ => None,
    }
}

/// Whether guard `kind` passes where its operand is the integer `x`;
/// `None` for a guard that tests more than an integer's value.
fn passes_on(kind: &GuardKind, x: i64) -> Option<bool> {
    match kind {
        GuardKind::True(_) => Some(x != 0),
        GuardKind::False(_) => Some(x == 0),
        GuardKind::Value(_, Value::Int(c)) => Some(x == *c),
        GuardKind::Int(_, lo, hi) => Some(*lo <= x && x <= *hi),
        _ => None,
    }
}

/// The range of a parameter an ordering of it and an integer constant
/// (`args`, integers) says it is in, where the ordering is `holds`.
fn bound(f: &Function, op: Op, args: &[Operand], holds: bool) -> Option<(Symbol, i64, i64)> {
    // `var op k`, or `k op var` turned round.
    let [a, b] = args else { return None };
    let (var, op, k) = match (a, b) {
        (Operand::Value(v), Operand::Const(Value::Int(k))) => (*v, op, *k),
        (Operand::Const(Value::Int(k)), Operand::Value(v)) => {
            let mirrored = match op {
                Op::Lt => Op::Gt,
                Op::Le => Op::Ge,
                Op::Gt => Op::Lt,
                Op::Ge => Op::Le,
                _ => return None,
            };
            (*v, mirrored, *k)
        }
        _ => return None,
    };
    let name = param_name(f, var)?;
    // The ordering that holds: its negation where it fails.
    let op = match (op, holds) {
        (op, true) => op,
        (Op::Lt, false) => Op::Ge,
        (Op::Le, false) => Op::Gt,
        (Op::Gt, false) => Op::Le,
        (Op::Ge, false) => Op::Lt,
        _ => return None,
    };
    match op {
        Op::Lt => Some((name, i64::MIN, k.checked_sub(1)?)),
        Op::Le => Some((name, i64::MIN, k)),
        Op::Gt => Some((name, k.checked_add(1)?, i64::MAX)),
        Op::Ge => Some((name, k, i64::MAX)),
        _ => None,
    }
}

/// The instruction that defines `v`, if one does.
fn def_kind(f: &Function, v: ValueId) -> Option<&InstKind> {
    match f.values[v].def {
        ValueDef::Inst(i) => Some(&f.insts[i].kind),
        _ => None,
    }
}

/// The variable parameter `v` is, if it is a parameter.
fn param_name(f: &Function, v: ValueId) -> Option<Symbol> {
    matches!(f.values[v].def, ValueDef::Param(_)).then_some(())?;
    f.values[v].name
}

/// How object `v` is reached from a parameter: links read, each with the
/// class a guard checks it to be (`classes`).
fn path(f: &Function, classes: &HashMap<ValueId, Symbol>, v: ValueId) -> Option<Path> {
    let mut links = Vec::new();
    let mut at = v;
    let var = loop {
        match def_kind(f, at) {
            None => break param_name(f, at)?,
            Some(InstKind::Get { obj: Operand::Value(o), field, .. }) => {
                links.push((*field, *classes.get(&at)?));
                at = *o;
            }
            Some(InstKind::Guard { kind: GuardKind::At(Operand::Value(link), ..), .. }) => at = *link,
            Some(_) => return None,
        }
    };
    links.reverse();
    Some(Path { var, links })
}

/// What a value of the loop block is, as far as the shape goes.
#[derive(Clone, Copy)]
enum Term {
    /// The cell's value where the iteration started.
    Old(Cell),
    /// The cell's value plus `k`; the modulus already taken on the way,
    /// if any (`(x + a) mod M + b` is `x + a + b` modulo `M`).
    Plus(Cell, i64, Option<i64>),
    /// `(cell + k) mod M` (a field read after its write is what was
    /// written).
    Stepped(Cell, i64, i64),
    /// An integer every iteration computes alike: from a *constant
    /// cell*'s value (see [`ConstCell`]) and constants.
    Const(i64),
}

/// A field every iteration leaves holding the same integer (its last
/// write in the loop block stores that constant): BF's `[-]` inside a
/// counted loop, done at once by the skip. Where the iteration starts it
/// holds that integer — if the loop was entered with it there, which the
/// skip checks when the loop reads it before writing it.
#[derive(Clone, Copy, Debug)]
struct ConstCell {
    obj: ValueId,
    field: Symbol,
    value: i64,
    /// The loop's first read of it before any write in the iteration, if
    /// it has one (before the guard): the skip reads it there.
    read: Option<InstId>,
}

/// The loop's updates, which one is the counter, and how it is tested.
struct Shape {
    updates: Vec<Update>,
    counter: usize,
    /// The guard tests the counter's value where the iteration started
    /// (before its update), not its new value.
    tests_old: bool,
    /// Per update of a field, the loop's first read of it (before the
    /// guard), whose site the skip's read takes.
    first_read: Vec<Option<InstId>>,
    /// The fields written: the updated fields, the fields a phi's new
    /// value is stored in, and the constant cells.
    written: Vec<(ValueId, Symbol)>,
    /// The fields every iteration leaves holding one integer.
    consts: Vec<ConstCell>,
    /// The loop's test: the guard of the counter.
    test: InstId,
    /// The rounds each iteration counts as run besides itself (the
    /// `iterations` of a loop inside done at once, [`crate::skip`]).
    per_round: i64,
}

/// The shape of loop block `lp` (see the module docs), if it has it.
fn shape(f: &Function, lp: BlockId) -> Option<Shape> {
    let block = &f.blocks[lp];
    let members: rustc_hash::FxHashSet<InstId> = block.phis.iter().chain(block.insts.iter()).copied().collect();
    let inside = |v: ValueId| matches!(f.values[v].def, ValueDef::Inst(i) if members.contains(&i));
    let mut terms: HashMap<ValueId, Term> = HashMap::default();
    for &p in block.phis.iter() {
        let r = f.insts[p].result?;
        terms.insert(r, Term::Old(Cell::Phi(p)));
    }
    let mut updates: Vec<Update> = Vec::new();
    // Each field written, and what was written there.
    let mut written: Vec<(ValueId, Symbol, Term)> = Vec::new();
    // Made when a cell is first read after the guard: the fields read or
    // written before the loop (set where it starts).
    let mut set_before: Option<rustc_hash::FxHashSet<(ValueId, Symbol)>> = None;
    let mut guard: Option<Term> = None;
    // Whether any guard came before (one on constants too: a round may
    // leave there when a constant cell does not hold its integer, so a
    // read after it is one the round may not do).
    let mut guarded = false;
    // Where constant cells are written in the block.
    let mut const_written: Vec<usize> = Vec::new();
    // The counter's guard, and where it is in the block.
    let mut test: Option<(InstId, usize)> = None;
    // The fields read before they are written, and where each field cell
    // is first read (its skip reads it with that site).
    let mut old_reads: Vec<Symbol> = Vec::new();
    let mut first_read: Vec<(Cell, InstId)> = Vec::new();
    // The constant cells: fields of objects from before the loop whose
    // last write in the block stores an integer constant.
    let mut consts: Vec<ConstCell> = Vec::new();
    // The fields whose last write was seen (walking back from the end).
    let mut last_written: Vec<(ValueId, Symbol)> = Vec::new();
    for &i in block.insts.iter().rev() {
        let InstKind::Set { obj: Operand::Value(o), field, value, .. } = &f.insts[i].kind else { continue };
        if inside(*o) || last_written.contains(&(*o, *field)) {
            continue;
        }
        last_written.push((*o, *field));
        if let Operand::Const(Value::Int(k)) = value {
            if k.unsigned_abs() < MAX_CONSTANT as u64 {
                consts.push(ConstCell { obj: *o, field: *field, value: *k, read: None });
            }
        }
    }
    let const_cell = |o: ValueId, field: Symbol| consts.iter().position(|c| c.obj == o && c.field == field);
    let mut const_reads: Vec<Option<InstId>> = vec![None; consts.len()];
    let mut per_round: i64 = 0;
    for (at, &i) in block.insts.iter().enumerate() {
        let r = f.insts[i].result;
        let term_of = |terms: &HashMap<ValueId, Term>, o: &Operand| match o {
            Operand::Value(v) => terms.get(v).copied(),
            Operand::Const(Value::Int(k)) => Some(Term::Const(*k)),
            Operand::Const(_) => None,
        };
        match &f.insts[i].kind {
            InstKind::Get { obj: Operand::Value(o), field, .. } if !inside(*o) && const_cell(*o, *field).is_some() => {
                let term = match written.iter().find(|w| w.0 == *o && w.1 == *field) {
                    Some(&(_, _, stored)) => stored,
                    None => {
                        // Read before any write of this iteration: what the
                        // iteration before left, checked where the loop is
                        // entered (so read before the guard).
                        if guarded {
                            let set = set_before.get_or_insert_with(|| fields_set_before(f, lp));
                            set.contains(&(*o, *field)).then_some(())?;
                        }
                        let k = const_cell(*o, *field)?;
                        const_reads[k].get_or_insert(i);
                        Term::Const(consts[k].value)
                    }
                };
                terms.insert(r?, term);
            }
            InstKind::Op {
                op: Operator::Known(op @ (Op::Add | Op::Sub | Op::Mul | Op::Mod)),
                form: Form::Int | Form::Word,
                args,
            } if matches!(args.first().and_then(|a| term_of(&terms, a)), Some(Term::Const(_))) => {
                let (Some(Term::Const(x)), Operand::Const(Value::Int(k))) = (term_of(&terms, &args[0]), &args[1])
                else {
                    return None;
                };
                let value = fold_constant(*op, x, *k)?;
                (value.unsigned_abs() < MAX_CONSTANT as u64).then_some(())?;
                terms.insert(r?, Term::Const(value));
            }
            InstKind::Set { obj: Operand::Value(o), field, value, .. }
                if !inside(*o) && const_cell(*o, *field).is_some() =>
            {
                let Some(stored @ Term::Const(_)) = term_of(&terms, value) else { return None };
                match written.iter_mut().find(|w| w.0 == *o && w.1 == *field) {
                    Some(w) => w.2 = stored,
                    None => written.push((*o, *field, stored)),
                }
                const_written.push(at);
            }
            // A test every iteration passes alike (a loop inside entered,
            // a constant cell's check).
            InstKind::Guard { kind, .. } if matches!(term_of(&terms, kind.operand()), Some(Term::Const(_))) => {
                let Some(Term::Const(x)) = term_of(&terms, kind.operand()) else { unreachable!() };
                passes_on(kind, x)?.then_some(())?;
                guarded = true;
            }
            InstKind::Iterations(n) => {
                let Some(Term::Const(k)) = term_of(&terms, n) else { return None };
                (k >= 0).then_some(())?;
                per_round = per_round.checked_add(k).filter(|&p| p < MAX_CONSTANT)?;
            }
            InstKind::Get { obj: Operand::Value(o), field, .. } if !inside(*o) => {
                let term = match written.iter().find(|w| w.0 == *o && w.1 == *field) {
                    Some(&(_, _, stored)) => stored,
                    None => {
                        let cell = Cell::Field(*o, *field);
                        old_reads.push(*field);
                        if !first_read.iter().any(|&(c, _)| c == cell) {
                            // A cell first read after the guard may never
                            // be read by the loop: the skip must not read
                            // it either, unless it is known to be set (it
                            // may be unset).
                            if guarded {
                                let set = set_before.get_or_insert_with(|| fields_set_before(f, lp));
                                set.contains(&(*o, *field)).then_some(())?;
                            }
                            first_read.push((cell, i));
                        }
                        Term::Old(cell)
                    }
                };
                terms.insert(r?, term);
            }
            InstKind::Op { op: Operator::Known(op @ (Op::Add | Op::Sub)), form: Form::Int | Form::Word, args } => {
                let (Operand::Value(x), Operand::Const(Value::Int(k))) = (&args[0], &args[1]) else { return None };
                let k = if *op == Op::Sub { k.checked_neg()? } else { *k };
                let term = match terms.get(x).copied()? {
                    Term::Old(cell) => Term::Plus(cell, k, None),
                    Term::Stepped(cell, k0, m) => Term::Plus(cell, k0.checked_add(k)?, Some(m)),
                    _ => return None,
                };
                let Term::Plus(_, k, _) = term else { unreachable!() };
                (k.unsigned_abs() < MAX_CONSTANT as u64).then_some(())?;
                terms.insert(r?, term);
            }
            InstKind::Op { op: Operator::Known(Op::Mod), form: Form::Int | Form::Word, args } => {
                let (Operand::Value(x), Operand::Const(Value::Int(m))) = (&args[0], &args[1]) else { return None };
                let Some(Term::Plus(cell, k, taken)) = terms.get(x).copied() else { return None };
                (*m > 1 && *m < MAX_CONSTANT && taken.is_none_or(|t| t == *m)).then_some(())?;
                terms.insert(r?, Term::Stepped(cell, k, *m));
            }
            InstKind::Set { obj: Operand::Value(o), field, value: Operand::Value(v), .. } => {
                let Some(stored @ Term::Stepped(cell, k, m)) = terms.get(v).copied() else { return None };
                if written.iter().any(|w| w.0 == *o && w.1 == *field) {
                    return None;
                }
                match cell {
                    Cell::Field(co, cf) if co == *o && cf == *field => {
                        updates.push(Update { cell, step: k, modulus: m })
                    }
                    // A phi's value, kept in a field too (a carried field:
                    // BF's `[-]`), before the guard: the last iteration
                    // writes it before the loop leaves. Or after a guard of
                    // a value where the iteration started (`while c`):
                    // every iteration that passes it writes it, the loop
                    // leaves where the phi holds what the last one wrote,
                    // and a skip leaves one such iteration to run.
                    Cell::Phi(_) if matches!(guard, None | Some(Term::Old(_))) => {}
                    Cell::Phi(_) => return None,
                    Cell::Field(..) => return None,
                }
                written.push((*o, *field, stored));
            }
            InstKind::Guard { kind: GuardKind::True(Operand::Value(t)), .. } if guard.is_none() => {
                guard = Some(terms.get(t).copied()?);
                guarded = true;
                test = Some((i, at));
            }
            _ => return None,
        }
    }
    // Each phi carries its own update round the loop.
    for &p in block.phis.iter() {
        let InstKind::Phi(inputs) = &f.insts[p].kind else { return None };
        let Some((_, Operand::Value(back))) = inputs.iter().find(|(b, _)| *b == lp) else { return None };
        match terms.get(back).copied()? {
            Term::Stepped(cell, k, m) if cell == Cell::Phi(p) => updates.push(Update { cell, step: k, modulus: m }),
            _ => return None,
        }
    }
    (updates.len() <= MAX_CELLS && written.len() <= MAX_CELLS).then_some(())?;
    // A field a phi's value is stored in is not written by the skip: no
    // read of a field of that name may see it before the loop writes it.
    for &(_, field, stored) in &written {
        if matches!(stored, Term::Stepped(Cell::Phi(_), ..)) && old_reads.contains(&field) {
            return None;
        }
    }
    // The guard: the counter's value, truthy to go round again.
    let tested = guard?;
    let (cell, tests_old) = match tested {
        Term::Stepped(c, ..) => (c, false),
        Term::Old(c) => (c, true),
        Term::Plus(..) | Term::Const(_) => return None,
    };
    let counter = updates.iter().position(|u| u.cell == cell)?;
    // Testing the new value, the last round leaves at the test: a
    // constant cell written only after it is not written then, and the
    // skip, which writes none, must find each written before the test.
    let (test, test_at) = test?;
    if !tests_old {
        const_written.iter().all(|&w| w < test_at).then_some(())?;
    }
    let u = updates[counter];
    (u.step.rem_euclid(u.modulus) == u.modulus - 1).then_some(())?;
    // The new value tested is the iteration's whole step, not a value
    // part of the way.
    if let Term::Stepped(_, k, m) = tested {
        (k == u.step && m == u.modulus).then_some(())?;
    }
    let written = written.into_iter().map(|(o, field, _)| (o, field)).collect();
    (consts.len() <= MAX_CELLS).then_some(())?;
    for (c, read) in consts.iter_mut().zip(const_reads) {
        c.read = read;
    }
    let first_read = updates
        .iter()
        .map(|u| match u.cell {
            Cell::Field(..) => first_read.iter().find(|&&(c, _)| c == u.cell).map(|&(_, i)| i),
            Cell::Phi(_) => None,
        })
        .collect();
    Some(Shape { updates, counter, tests_old, written, first_read, consts, test, per_round })
}

/// The fields of objects read or written before loop `lp` is entered: on
/// the straight way to it (every other block jumps to the next, as in a
/// trace), so set where the loop starts; none when the way is not
/// straight.
fn fields_set_before(f: &Function, lp: BlockId) -> rustc_hash::FxHashSet<(ValueId, Symbol)> {
    let Some(before) = straight_way(f, lp) else { return Default::default() };
    before
        .iter()
        .flat_map(|&b| f.blocks[b].insts.iter())
        .filter_map(|&i| match &f.insts[i].kind {
            InstKind::Get { obj: Operand::Value(o), field, .. }
            | InstKind::Set { obj: Operand::Value(o), field, .. } => Some((*o, *field)),
            _ => None,
        })
        .collect()
}

/// The blocks before loop `lp`, in layout order, when they are one
/// straight way to it (each ends in a jump, as a trace's do); `None`
/// otherwise.
fn straight_way(f: &Function, lp: BlockId) -> Option<Vec<BlockId>> {
    let before: Vec<BlockId> = f.layout.iter().copied().filter(|&b| b != lp).collect();
    before.iter().all(|&b| matches!(f.blocks[b].term, Terminator::Jump(_))).then_some(before)
}

/// Whether update `u`'s cell holds a value in `[0, M)` where the loop is
/// entered from `pre`: a field the program facts say holds only such
/// integers, or a phi whose input from `pre` is known (`before`) to be one
/// (the value a peeled iteration left: `(x - 1) mod M`).
fn reduced(f: &Function, u: &Update, pre: BlockId, before: &[Info], fields: Option<&ProgramFacts>) -> bool {
    let info = match (u.cell, fields) {
        (Cell::Field(_, field), Some(facts)) => facts.read(&Info::of_kinds(Kinds::OBJECT), field),
        (Cell::Field(..), None) => return false,
        (Cell::Phi(p), _) => match entry_input(f, p, pre) {
            Some(o) => super::ranges::operand_info(before, &o),
            None => return false,
        },
    };
    !info.is_bottom()
        && info.kinds.within(Kinds::INT)
        && info.range.lo() >= 0
        && info.range.hi() < i128::from(u.modulus)
}

/// Phi `p`'s input from block `pre`.
fn entry_input(f: &Function, p: InstId, pre: BlockId) -> Option<Operand> {
    match &f.insts[p].kind {
        InstKind::Phi(inputs) => inputs.iter().find(|(b, _)| *b == pre).map(|(_, o)| o.clone()),
        _ => None,
    }
}

/// What is known of each value where loop `lp` is entered: the blocks
/// before it run abstractly in layout order (operations by the op table's
/// transfer functions, guards narrowing what they test, fields read as
/// the program facts say), when they are one straight way to it, as a
/// trace's are; nothing otherwise.
fn facts_before(f: &Function, lp: BlockId, fields: Option<&ProgramFacts>) -> Vec<Info> {
    let mut info = vec![Info::bottom(); f.values.len()];
    let Some(before) = straight_way(f, lp) else { return info };
    for &b in &before {
        for &i in &f.blocks[b].insts {
            super::ranges::abstract_step(f, &mut info, i, fields);
        }
    }
    info
}

/// Emits the skip at the end of `pre`, which enters the loop; `reduced`
/// says per update whether its cell is known to be in `[0, M)` there.
fn emit(f: &mut Function, pre: BlockId, shape: &Shape, reduced: &[bool]) {
    let updates = &shape.updates;
    let mut e = Emitter { f, block: pre };
    // Each cell's value where the loop is entered: a field read where the
    // loop's first read of it is, as far as an error's place goes (unset,
    // it fails as the loop's read would).
    let olds: Vec<Operand> = updates
        .iter()
        .zip(&shape.first_read)
        .map(|(u, first)| match u.cell {
            Cell::Field(o, field) => {
                let v = e.inst(InstKind::get(Operand::Value(o), field)).expect("a read");
                let read = edit::def_inst(e.f, v).expect("a read's instruction");
                if let Some(site) = first.and_then(|i| e.f.sites.inst(i)) {
                    e.f.sites.set_inst(read, site);
                }
                Operand::Value(v)
            }
            Cell::Phi(p) => entry_input(e.f, p, pre).expect("a phi's input from the entry"),
        })
        .collect();
    // m = (c - 1) mod M: the iterations before the last; none if the
    // guard tests the counter before its update and it is 0 already.
    let c = &updates[shape.counter];
    let old_c = olds[shape.counter].clone();
    let form = if reduced[shape.counter] { Form::Word } else { Form::Int };
    let less = e.op(Op::Sub, form, old_c.clone(), int(1));
    let mut m = e.op(Op::Mod, form, less, int(c.modulus));
    if shape.tests_old {
        let runs = e.op(Op::Ne, Form::Word, old_c, int(0));
        m = e.op(Op::Mul, Form::Word, m, runs);
    }
    // Nothing skipped where two written fields may be one.
    for (i, &(o1, f1)) in shape.written.iter().enumerate() {
        for &(o2, f2) in &shape.written[i + 1..] {
            if f1 == f2 && o1 != o2 {
                let same = e.op(Op::Eq, Form::Word, Operand::Value(o1), Operand::Value(o2));
                let other = e.op(Op::Sub, Form::Word, int(1), same);
                m = e.op(Op::Mul, Form::Word, m, other);
            }
        }
    }
    // Nothing skipped where a constant cell the loop reads before
    // writing it does not hold its integer yet (where the loop's first
    // read of it is, as far as an error's place goes).
    for c in &shape.consts {
        let Some(first) = c.read else { continue };
        let x = e.inst(InstKind::get(Operand::Value(c.obj), c.field)).expect("a read");
        let read = edit::def_inst(e.f, x).expect("a read's instruction");
        if let Some(site) = e.f.sites.inst(first) {
            e.f.sites.set_inst(read, site);
        }
        let holds = e.op(Op::Eq, Form::Generic, Operand::Value(x), int(c.value));
        m = e.op(Op::Mul, Form::Word, m, holds);
    }
    // The JIT's clock counts the skipped iterations as run, and the
    // rounds each of them counted.
    e.inst(InstKind::Iterations(m.clone()));
    if shape.per_round > 0 {
        let inside = e.op(Op::Mul, Form::Word, m.clone(), int(shape.per_round));
        e.inst(InstKind::Iterations(inside));
    }
    // A cell that skipped nothing keeps its value exactly, not reduced
    // modulo M: old + ((old + k*m) mod M - old) * (m != 0) (a cell known
    // to be in [0, M) is its own reduction).
    let moved = (!reduced.iter().all(|&r| r)).then(|| e.op(Op::Ne, Form::Word, m.clone(), int(0)));
    for ((u, old), &reduced) in updates.iter().zip(olds).zip(reduced) {
        // `x + k*m`: an addition or a subtraction of `m` for steps of 1
        // and -1 (in a loop's block the optimizer keeps `m * 1`).
        let form = if reduced { Form::Word } else { Form::Int };
        let sum = match u.step {
            1 => e.op(Op::Add, form, old.clone(), m.clone()),
            -1 => e.op(Op::Sub, form, old.clone(), m.clone()),
            step => {
                let by = e.op(Op::Mul, Form::Word, m.clone(), int(step));
                e.op(Op::Add, form, old.clone(), by)
            }
        };
        if reduced {
            let new = e.op(Op::Mod, Form::Word, sum, int(u.modulus));
            e.write(u.cell, pre, new);
            continue;
        }
        let moved = moved.clone().expect("a flag where a cell is not reduced");
        let new = e.op(Op::Mod, Form::Int, sum, int(u.modulus));
        let change = e.op(Op::Sub, Form::Int, new, old.clone());
        let change = e.op(Op::Mul, Form::Int, change, moved);
        let new = e.op(Op::Add, Form::Int, old, change);
        e.write(u.cell, pre, new);
    }
}

impl Emitter<'_> {
    /// Makes `new` cell `cell`'s value where the loop is entered from
    /// `pre`: stored in its field, or its phi's input from `pre`.
    fn write(&mut self, cell: Cell, pre: BlockId, new: Operand) {
        match cell {
            Cell::Field(o, field) => {
                self.inst(InstKind::set(Operand::Value(o), field, new));
            }
            Cell::Phi(p) => {
                if let InstKind::Phi(inputs) = &mut self.f.insts[p].kind {
                    for (b, x) in inputs.iter_mut() {
                        if *b == pre {
                            *x = new.clone();
                        }
                    }
                }
            }
        }
    }
}

fn int(k: i64) -> Operand {
    Operand::Const(Value::Int(k))
}

/// Appends instructions to a block, before its terminator.
struct Emitter<'f> {
    f: &'f mut Function,
    block: BlockId,
}

impl Emitter<'_> {
    /// Appends `kind`; its result (a fresh value), if it has one.
    fn inst(&mut self, kind: InstKind) -> Option<ValueId> {
        edit::append(self.f, self.block, kind, None)
    }

    /// Appends `op` in `form` on `a` and `b`; its result.
    fn op(&mut self, op: Op, form: Form, a: Operand, b: Operand) -> Operand {
        let args = [a, b].into_iter().collect();
        Operand::Value(self.inst(InstKind::Op { op: Operator::Known(op), form, args }).expect("a result"))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use flowc_passes::propagate::ProgramFacts;

    /// `[->+++<]` on two cells the trace takes as parameters, as the JIT
    /// leaves it: the counter's field re-read for the guard.
    const TRANSFER: &str = "trace 'xfer.body'(v0:c, v1:d) {
b0:
    jump b1
b1 xfer:
    v2:x = get v0, v
    v3:x = sub.word v2, 1
    v4:x = mod.word v3, 256
    set v0, v, v4
    v5:y = get v1, v
    v6:y = add.word v5, 3
    v7:y = mod.word v6, 256
    set v1, v, v7
    v8:z = get v0, v
    guard_true v8, r0 else moved
    jump b1
resume r0 {
    frame [c = v0, d = v1]
}
}
";

    fn forwarded(text: &str) -> Option<String> {
        forwarded_with(text, None)
    }

    /// Trace `text` fast-forwarded with program facts `facts`, checked; its
    /// text if a loop was skipped.
    fn forwarded_with(text: &str, facts: Option<&ProgramFacts>) -> Option<String> {
        let mut f = flowc_ir::parse::function("test.ir", text).expect("parses");
        let done = super::fast_forward(&mut f, facts);
        flowc_ir_checker::check(&f).expect("valid IR");
        done.then(|| flowc_ir::print::function(&f))
    }

    /// The program facts of a program that stores only bytes in field `v`.
    fn byte_facts() -> ProgramFacts {
        super::super::check::facts_of(
            "entry start(n = 3)\nstart:\n    c = new cell\n    c.v = 0\n    x = n % 256\n    c.v = x\n    print_and_stop(x)\n",
        )
    }

    /// `[->+<]` on a tape of `cell`s as the JIT leaves it peeled: the
    /// cell to the right found once, before the loop, its link back
    /// checked to come back to the tape.
    const COPY_RIGHT: &str = "trace 'copy.body'(v0:tape) {
b0:
    v1:r = get v0, r
    guard_link v1, cell, r0 else grow
    v2:l = get.object v1, l
    guard_link v2, cell, r0 else grow
    v3 = eq.word v2, v0
    guard_true v3, r0 else left
    jump b1
b1 copy:
    v4:x = get v0, v
    v5:x = sub.word v4, 1
    v6:x = mod.word v5, 256
    set v0, v, v6
    v7:y = get.object v1, v
    v8:y = add.word v7, 1
    v9:y = mod.word v8, 256
    set.object v1, v, v9
    v10:z = get v0, v
    guard_true v10, r1 else next
    jump b1
resume r0 {
    frame [tape = v0]
}
resume r1 {
    frame [tape = v0]
}
}
";

    /// The skip of loop trace `text`, entered with its parameters bound
    /// to anything.
    fn skip_of(text: &str) -> Option<crate::skip::Skip> {
        let f = flowc_ir::parse::function("test.ir", text).expect("parses");
        flowc_ir_checker::check(&f).expect("valid IR");
        let names: Vec<flowc_lang::Symbol> = f.params.iter().map(|&p| f.values[p].name.expect("named")).collect();
        let entry = crate::opt::LoopEntry {
            anchor: f.name,
            function: None,
            vars: names.iter().enumerate().map(|(k, n)| (*n, crate::opt::Shape::Input(k))).collect(),
            objects: Vec::new(),
            inputs: names.iter().map(|n| (*n, crate::opt::Fact::Any)).collect(),
        };
        super::skip_of(&f, None, &entry)
    }

    #[test]
    fn a_counted_loop_states_what_it_does_for_the_loops_around_it() {
        // The counter at the tape, the cell to its right by a link, the
        // link back to the tape, and the two cells two objects.
        expect![[r#"
            Some(
                Skip {
                    objects: [
                        Path {
                            var: "tape",
                            links: [],
                        },
                        Path {
                            var: "tape",
                            links: [
                                (
                                    "r",
                                    "cell",
                                ),
                            ],
                        },
                        Path {
                            var: "tape",
                            links: [
                                (
                                    "r",
                                    "cell",
                                ),
                                (
                                    "l",
                                    "cell",
                                ),
                            ],
                        },
                    ],
                    cells: [
                        SkipCell {
                            object: 0,
                            field: "v",
                            step: -1,
                            modulus: 256,
                            reduced: false,
                        },
                        SkipCell {
                            object: 1,
                            field: "v",
                            step: 1,
                            modulus: 256,
                            reduced: false,
                        },
                    ],
                    counter: 0,
                    same: [
                        (
                            0,
                            1,
                            false,
                        ),
                        (
                            2,
                            0,
                            true,
                        ),
                    ],
                    values: [],
                    classes: [],
                    ranges: [],
                    consts: [],
                    per_round: 0,
                },
            )"#]]
        .assert_eq(&format!("{:#?}", skip_of(COPY_RIGHT)));
        // The fields the transfer steps, on two parameters.
        let transfer = skip_of(TRANSFER).expect("a skip");
        assert_eq!((transfer.objects.len(), transfer.cells.len(), transfer.same.len()), (2, 2, 1));
    }

    /// A way in that walks two cells right and one back, the way back's
    /// link found where the first step's was: the code that follows has
    /// the first cell in its place (`walk.rs`, places), so the skip
    /// states that the link back is that cell, checked where it is
    /// recorded, as a link compared with the cell it comes back to is.
    #[test]
    fn a_link_found_where_another_was_is_stated_to_be_it() {
        let text = "trace 'copy.body'(v0:tape) {
b0:
    v1:r = get v0, r
    guard_link v1, cell, r0 else grow
    v2:r = guard_at v1, v0, 56, r0 else right
    v3:r = get.object v2, r
    guard_link v3, cell, r0 else grow
    v4:r = guard_at v3, v0, 112, r0 else right
    v5:l = get.object v4, l
    guard_link v5, cell, r0 else grow
    v6:l = guard_at v5, v0, 56, r0 else left
    jump b1
b1 copy:
    v7:x = get v0, v
    v8:x = sub.word v7, 1
    v9:x = mod.word v8, 256
    set v0, v, v9
    v10:y = get.object v2, v
    v11:y = add.word v10, 1
    v12:y = mod.word v11, 256
    set.object v2, v, v12
    v13:z = get v0, v
    guard_true v13, r1 else next
    jump b1
resume r0 {
    frame [tape = v0]
}
resume r1 {
    frame [tape = v0]
}
}
";
        let skip = skip_of(text).expect("a skip");
        let at = |links: &[&str]| {
            skip.objects.iter().position(|p| p.links.iter().map(|(f, _)| f.as_str()).eq(links.iter().copied()))
        };
        let (back, first) = (at(&["r", "r", "l"]).expect("the link back"), at(&["r"]).expect("the first cell"));
        assert!(skip.same.contains(&(back, first, true)), "{skip:#?}");
    }

    #[test]
    fn a_loop_whose_way_in_writes_a_link_states_nothing() {
        // The way in relinks the tape: the walk at the loop's head would
        // not find the cell the loop steps.
        let relinked = COPY_RIGHT.replace("    jump b1\nb1 copy:", "    set v1, l, v0\n    jump b1\nb1 copy:");
        assert!(skip_of(&relinked).is_none());
        // A first iteration testing the counter before its step states
        // nothing: the loop might not run from its head.
        let tested_first = COPY_RIGHT.replace(
            "    jump b1\nb1 copy:",
            "    v11 = get v0, v\n    guard_true v11, r0 else next\n    jump b1\nb1 copy:",
        );
        assert!(skip_of(&tested_first).is_none());
        // A loop testing its counter before the step is done at once where
        // entered, but states nothing (a recording's last round would not
        // end it).
        assert!(skip_of(&COPY_RIGHT.replace("v10:z = get v0, v\n    guard_true v10", "guard_true v4")).is_none());
    }

    #[test]
    fn a_counted_loop_over_fields_skips_to_its_last_iteration() {
        // Where the loop is entered: m = (c - 1) mod 256 iterations at
        // once, none if the two cells are one object; the loop itself as
        // it was.
        expect![[r#"
            trace 'xfer.body'(v0:c, v1:d) {
            b0:
                v9 = get v0, v
                v10 = get v1, v
                v11 = sub.int v9, 1
                v12 = mod.int v11, 256
                v13 = eq.word v0, v1
                v14 = sub.word 1, v13
                v15 = mul.word v12, v14
                iterations v15
                v16 = ne.word v15, 0
                v17 = sub.int v9, v15
                v18 = mod.int v17, 256
                v19 = sub.int v18, v9
                v20 = mul.int v19, v16
                v21 = add.int v9, v20
                set v0, v, v21
                v22 = mul.word v15, 3
                v23 = add.int v10, v22
                v24 = mod.int v23, 256
                v25 = sub.int v24, v10
                v26 = mul.int v25, v16
                v27 = add.int v10, v26
                set v1, v, v27
                jump b1
            b1 xfer:
                v2:x = get v0, v
                v3:x = sub.word v2, 1
                v4:x = mod.word v3, 256
                set v0, v, v4
                v5:y = get v1, v
                v6:y = add.word v5, 3
                v7:y = mod.word v6, 256
                set v1, v, v7
                v8:z = get v0, v
                guard_true v8, r0 else moved
                jump b1
            resume r0 {
                frame [c = v0, d = v1]
            }
            }
        "#]]
        .assert_eq(&forwarded(TRANSFER).expect("fast-forwarded"));
    }

    #[test]
    fn cells_the_facts_keep_in_range_skip_in_machine_words() {
        // The program stores only bytes in `v`: the skip is
        // `(x + k*m) mod 256` in the `.word` forms, no blend.
        let text = forwarded_with(TRANSFER, Some(&byte_facts())).expect("fast-forwarded");
        let skip = &text[..text.find("b1 xfer").expect("the loop")];
        expect![[r#"
            trace 'xfer.body'(v0:c, v1:d) {
            b0:
                v9 = get v0, v
                v10 = get v1, v
                v11 = sub.word v9, 1
                v12 = mod.word v11, 256
                v13 = eq.word v0, v1
                v14 = sub.word 1, v13
                v15 = mul.word v12, v14
                iterations v15
                v16 = sub.word v9, v15
                v17 = mod.word v16, 256
                set v0, v, v17
                v18 = mul.word v15, 3
                v19 = add.word v10, v18
                v20 = mod.word v19, 256
                set v1, v, v20
                jump b1
        "#]]
        .assert_eq(skip);
    }

    #[test]
    fn a_carried_counter_entered_from_a_field_the_facts_keep_in_range_skips_in_machine_words() {
        // The phi's entry value is read from a field before the loop: the
        // program facts bound it (the program stores only bytes in `v`),
        // so the skip needs no blend; without the facts it blends.
        let text = "trace 'clear.body'(v0:c) {
b0:
    v1:v = get v0, v
    jump b1
b1 clear:
    v2:v = phi [b0: v1, b1: v4]
    v3:v = sub.word v2, 1
    v4:v = mod.word v3, 256
    set v0, v, v4
    guard_true v4, r0 else next
    jump b1
resume r0 {
    frame [c = v0]
}
}
";
        let with_facts = forwarded_with(text, Some(&byte_facts())).expect("fast-forwarded");
        expect![[r#"
            trace 'clear.body'(v0:c) {
            b0:
                v1:v = get v0, v
                v5 = sub.word v1, 1
                v6 = mod.word v5, 256
                iterations v6
                v7 = sub.word v1, v6
                v8 = mod.word v7, 256
                jump b1
        "#]]
        .assert_eq(&with_facts[..with_facts.find("b1 clear").expect("the loop")]);
        let without = forwarded(text).expect("fast-forwarded");
        assert!(without.contains("mul.int"), "blends without the facts:\n{without}");
    }

    #[test]
    fn a_counter_in_a_phi_takes_its_skipped_value_from_the_entry() {
        let text = "trace 'count.body'(v0:i, v1:s) {
b0:
    jump b1
b1 count:
    v2:i = phi [b0: v0, b1: v5]
    v3:s = phi [b0: v1, b1: v7]
    v4:i = add.int v2, 255
    v5:i = mod.int v4, 256
    v6:s = add.int v3, 5
    v7:s = mod.int v6, 1000
    guard_true v5, r0 else counted
    jump b1
resume r0 {
    frame [i = v5, s = v7]
}
}
";
        expect![[r#"
            trace 'count.body'(v0:i, v1:s) {
            b0:
                v8 = sub.int v0, 1
                v9 = mod.int v8, 256
                iterations v9
                v10 = ne.word v9, 0
                v11 = mul.word v9, 255
                v12 = add.int v0, v11
                v13 = mod.int v12, 256
                v14 = sub.int v13, v0
                v15 = mul.int v14, v10
                v16 = add.int v0, v15
                v17 = mul.word v9, 5
                v18 = add.int v1, v17
                v19 = mod.int v18, 1000
                v20 = sub.int v19, v1
                v21 = mul.int v20, v10
                v22 = add.int v1, v21
                jump b1
            b1 count:
                v2:i = phi [b0: v16, b1: v5]
                v3:s = phi [b0: v22, b1: v7]
                v4:i = add.int v2, 255
                v5:i = mod.int v4, 256
                v6:s = add.int v3, 5
                v7:s = mod.int v6, 1000
                guard_true v5, r0 else counted
                jump b1
            resume r0 {
                frame [i = v5, s = v7]
            }
            }
        "#]]
        .assert_eq(&forwarded(text).expect("fast-forwarded"));
    }

    #[test]
    fn a_loop_testing_its_counter_first_skips_nothing_from_zero() {
        // `while c.v { c.v -= 1; e.v += 2 (in two steps) }`, `e.v` read
        // with `c.v`: the skip is times `c != 0`, and a cell that skipped
        // nothing keeps its value exactly (`x + (new - x) * (m != 0)`).
        let text = "trace 'top.body'(v0:c, v1:e) {
b0:
    jump b1
b1 top:
    v2:z = get v0, v
    v5:y = get v1, v
    guard_true v2, r0 else topped
    v3:x = sub.int v2, 1
    v4:x = mod.int v3, 256
    set v0, v, v4
    v6:y = add.int v5, 1
    v7:y = mod.int v6, 256
    v8:y = add.word v7, 1
    v9:y = mod.word v8, 256
    set v1, v, v9
    jump b1
resume r0 {
    frame [c = v0, e = v1]
}
}
";
        expect![[r#"
            trace 'top.body'(v0:c, v1:e) {
            b0:
                v10 = get v0, v
                v11 = get v1, v
                v12 = sub.int v10, 1
                v13 = mod.int v12, 256
                v14 = ne.word v10, 0
                v15 = mul.word v13, v14
                v16 = eq.word v0, v1
                v17 = sub.word 1, v16
                v18 = mul.word v15, v17
                iterations v18
                v19 = ne.word v18, 0
                v20 = sub.int v10, v18
                v21 = mod.int v20, 256
                v22 = sub.int v21, v10
                v23 = mul.int v22, v19
                v24 = add.int v10, v23
                set v0, v, v24
                v25 = mul.word v18, 2
                v26 = add.int v11, v25
                v27 = mod.int v26, 256
                v28 = sub.int v27, v11
                v29 = mul.int v28, v19
                v30 = add.int v11, v29
                set v1, v, v30
                jump b1
            b1 top:
                v2:z = get v0, v
                v5:y = get v1, v
                guard_true v2, r0 else topped
                v3:x = sub.int v2, 1
                v4:x = mod.int v3, 256
                set v0, v, v4
                v6:y = add.int v5, 1
                v7:y = mod.int v6, 256
                v8:y = add.word v7, 1
                v9:y = mod.word v8, 256
                set v1, v, v9
                jump b1
            resume r0 {
                frame [c = v0, e = v1]
            }
            }
        "#]]
        .assert_eq(&forwarded(text).expect("fast-forwarded"));
    }

    #[test]
    fn a_carried_counter_stored_before_its_guard_is_counted_down_at_once() {
        // BF's `[-]` as the optimizer leaves it: the cell's value carried
        // in a phi, stored every iteration before the guard.
        let text = "trace 'clear.body'(v0:c, v1:x) {
b0:
    jump b1
b1 clear:
    v2:v = phi [b0: v1, b1: v4]
    v3:v = sub.word v2, 1
    v4:v = mod.word v3, 256
    set v0, v, v4
    guard_true v4, r0 else next
    jump b1
resume r0 {
    frame [c = v0]
}
}
";
        expect![[r#"
            trace 'clear.body'(v0:c, v1:x) {
            b0:
                v5 = sub.int v1, 1
                v6 = mod.int v5, 256
                iterations v6
                v7 = ne.word v6, 0
                v8 = sub.int v1, v6
                v9 = mod.int v8, 256
                v10 = sub.int v9, v1
                v11 = mul.int v10, v7
                v12 = add.int v1, v11
                jump b1
            b1 clear:
                v2:v = phi [b0: v12, b1: v4]
                v3:v = sub.word v2, 1
                v4:v = mod.word v3, 256
                set v0, v, v4
                guard_true v4, r0 else next
                jump b1
            resume r0 {
                frame [c = v0]
            }
            }
        "#]]
        .assert_eq(&forwarded(text).expect("fast-forwarded"));
        // Stored after the guard, the field would keep what the skipped
        // iterations did not write.
        let after = text.replace(
            "    set v0, v, v4\n    guard_true v4, r0 else next\n",
            "    guard_true v4, r0 else next\n    set v0, v, v4\n",
        );
        assert_eq!(forwarded(&after), None);
    }

    #[test]
    fn a_carried_counter_tested_before_its_step_and_stored_after_is_counted_down_at_once() {
        // `while c { c = c - 1 }` with the cell carried in a phi (a loop
        // recorded from its test, its first iteration peeled): stored
        // after the guard, by every iteration that passes it.
        let text = "trace 'clear.body'(v0:c, v1:x) {
b0:
    jump b1
b1 clear:
    v2:v = phi [b0: v1, b1: v4]
    guard_true v2, r0 else next
    v3:v = sub.word v2, 1
    v4:v = mod.word v3, 256
    set v0, v, v4
    jump b1
resume r0 {
    frame [c = v0]
}
}
";
        expect![[r#"
            trace 'clear.body'(v0:c, v1:x) {
            b0:
                v5 = sub.int v1, 1
                v6 = mod.int v5, 256
                v7 = ne.word v1, 0
                v8 = mul.word v6, v7
                iterations v8
                v9 = ne.word v8, 0
                v10 = sub.int v1, v8
                v11 = mod.int v10, 256
                v12 = sub.int v11, v1
                v13 = mul.int v12, v9
                v14 = add.int v1, v13
                jump b1
            b1 clear:
                v2:v = phi [b0: v14, b1: v4]
                guard_true v2, r0 else next
                v3:v = sub.word v2, 1
                v4:v = mod.word v3, 256
                set v0, v, v4
                jump b1
            resume r0 {
                frame [c = v0]
            }
            }
        "#]]
        .assert_eq(&forwarded(text).expect("fast-forwarded"));
    }

    #[test]
    fn a_carried_counter_known_in_range_where_the_loop_is_entered_skips_in_machine_words() {
        // `[-]` as the JIT compiles it: the first iteration peeled, so the
        // phi's entry value is `(x - 1) mod 256`, nonzero past the guard.
        // The skip needs no blend and no overflow checks.
        let text = "trace 'clear.body'(v0:c) {
b0:
    jump b1
b1 clear:
    v1:v = get v0, v
    v2:v = sub.word v1, 1
    v3:v = mod.word v2, 256
    set v0, v, v3
    guard_true v3, r0 else next
    jump b2
b2 clear:
    v4:v = phi [b1: v3, b2: v6]
    v5:v = sub.word v4, 1
    v6:v = mod.word v5, 256
    set v0, v, v6
    guard_true v6, r1 else next
    jump b2
resume r0 {
    frame [c = v0]
}
resume r1 {
    frame [c = v0]
}
}
";
        let done = forwarded(text).expect("fast-forwarded");
        let skip =
            &done[done.find("guard_true v3").expect("the peeled guard")..done.find("b2 clear").expect("the loop")];
        expect![[r#"
            guard_true v3, r0 else next
                v7 = sub.word v3, 1
                v8 = mod.word v7, 256
                iterations v8
                v9 = sub.word v3, v8
                v10 = mod.word v9, 256
                jump b2
        "#]]
        .assert_eq(skip);
        // Entered with a value not known to be reduced, the skip blends.
        let unknown = text.replace("    v3:v = mod.word v2, 256\n", "    v3:v = add.word v2, 0\n");
        let blended = forwarded(&unknown).expect("fast-forwarded");
        assert!(blended.contains("mul.int"), "{blended}");
    }

    #[test]
    fn a_skip_reads_only_what_the_loop_reads_before_its_guard() {
        // `while c.v { c.v -= 1; e.v += 1 }`: `e.v` is first read after the
        // guard, so a loop entered with `c.v` = 0 never reads it (it may be
        // unset): left alone.
        let text = "trace 'top.body'(v0:c, v1:e) {
b0:
    jump b1
b1 top:
    v2:z = get v0, v
    guard_true v2, r0 else topped
    v3:x = sub.word v2, 1
    v4:x = mod.word v3, 256
    set v0, v, v4
    v5:y = get v1, v
    v6:y = add.word v5, 1
    v7:y = mod.word v6, 256
    set v1, v, v7
    jump b1
resume r0 {
    frame [c = v0, e = v1]
}
}
";
        assert_eq!(forwarded(text), None);
        // Known to be set before the loop, it may be read by the skip.
        let set = text.replace("b0:\n    jump b1", "b0:\n    v8:w = get v1, v\n    jump b1");
        assert!(forwarded(&set).is_some());
        // Read before the guard, it is read by the skip too.
        let before = text
            .replace("    v5:y = get v1, v\n", "")
            .replace("    v2:z = get v0, v\n", "    v2:z = get v0, v\n    v5:y = get v1, v\n");
        assert!(forwarded(&before).is_some());
    }

    #[test]
    fn a_field_a_carried_counter_is_kept_in_is_read_by_nothing_else() {
        // `v0.v` holds the phi's value, which the skip does not write: a
        // read of a field `v` (of `v1`, which may be `v0`) before the
        // store would see what the skipped iterations did not store.
        let text = "trace 'clear.body'(v0:c, v1:d, v2:x) {
b0:
    jump b1
b1 clear:
    v3:v = phi [b0: v2, b1: v5]
    v6:w = get v1, v
    v4:v = sub.word v3, 1
    v5:v = mod.word v4, 256
    set v0, v, v5
    guard_true v5, r0 else next
    jump b1
resume r0 {
    frame [c = v0, w = v6]
}
}
";
        assert_eq!(forwarded(text), None);
    }

    #[test]
    fn dead_code_elimination_keeps_the_count() {
        // `iterations` has no result and cannot fail, but it is an effect
        // (the JIT's clock): removing dead code keeps it.
        let mut f = flowc_ir::parse::function("test.ir", TRANSFER).expect("parses");
        assert!(super::fast_forward(&mut f, None));
        let mut module = flowc_ir::Module { functions: vec![f], ..Default::default() };
        flowc_passes::dce::function(&mut module, 0, true);
        let text = flowc_ir::print::function(&module.functions[0]);
        assert!(text.contains("    iterations v15\n"), "{text}");
    }

    /// BF's `[>++++++++++[-]<-]` as the JIT leaves its loop: each round
    /// sets the cell to its right to 10, and does the `[-]` inside at
    /// once (its test passed, its 9 rounds counted), leaving 0 there.
    /// The counter is read before the loop (by the peeled first round):
    /// a round reads it after the test of the cell to the right, so a
    /// skip may read it only where it is known to be set.
    const CLEARS: &str = "trace 'clears.body'(v0:c, v1:d) {
b0:
    v10:x = get v0, v
    jump b1
b1 clears:
    v2:y = get v1, v
    v3:y = add.word v2, 9
    v4:y = mod.word v3, 256
    v5:y = add.word v2, 10
    v6:y = mod.word v5, 256
    set v1, v, v6
    guard_true v6, r0 else inner
    iterations v4
    set v1, v, 0
    v7:x = get v0, v
    v8:x = sub.word v7, 1
    v9:x = mod.word v8, 256
    set v0, v, v9
    guard_true v9, r0 else next
    jump b1
resume r0 {
    frame [c = v0, d = v1]
}
}
";

    #[test]
    fn a_counted_loop_that_leaves_a_cell_at_a_constant_skips_where_it_holds_it() {
        // A round that starts with 0 to the right does what the one
        // before did: the skip checks the 0 is there where the loop is
        // entered (else skips nothing), counts 9 rounds inside each, and
        // leaves the cell as the rounds before left it.
        expect![[r#"
            trace 'clears.body'(v0:c, v1:d) {
            b0:
                v10:x = get v0, v
                v11 = get v0, v
                v12 = sub.int v11, 1
                v13 = mod.int v12, 256
                v14 = eq.word v1, v0
                v15 = sub.word 1, v14
                v16 = mul.word v13, v15
                v17 = get v1, v
                v18 = eq v17, 0
                v19 = mul.word v16, v18
                iterations v19
                v20 = mul.word v19, 9
                iterations v20
                v21 = ne.word v19, 0
                v22 = sub.int v11, v19
                v23 = mod.int v22, 256
                v24 = sub.int v23, v11
                v25 = mul.int v24, v21
                v26 = add.int v11, v25
                set v0, v, v26
                jump b1
            b1 clears:
                v2:y = get v1, v
                v3:y = add.word v2, 9
                v4:y = mod.word v3, 256
                v5:y = add.word v2, 10
                v6:y = mod.word v5, 256
                set v1, v, v6
                guard_true v6, r0 else inner
                iterations v4
                set v1, v, 0
                v7:x = get v0, v
                v8:x = sub.word v7, 1
                v9:x = mod.word v8, 256
                set v0, v, v9
                guard_true v9, r0 else next
                jump b1
            resume r0 {
                frame [c = v0, d = v1]
            }
            }
        "#]]
        .assert_eq(&forwarded(CLEARS).expect("fast-forwarded"));
        // What it states for the loops around it: the cell to the right
        // holds 0 where it starts, and each round counts 9 inside.
        let skip = skip_of(CLEARS).expect("a skip");
        assert_eq!(skip.per_round, 9);
        assert_eq!(
            skip.consts,
            vec![crate::skip::SkipConst { object: 1, field: flowc_lang::Symbol::intern("v"), value: 0, read: true }]
        );
    }

    #[test]
    fn a_cell_left_at_a_constant_only_where_each_round_passes_alike() {
        // The loop inside never entered: every round leaves by that test.
        assert_eq!(forwarded(&CLEARS.replace("add.word v2, 10", "add.word v2, 0")), None);
        // The cell's last write is not a constant: it is no cell counted
        // either (written twice).
        assert_eq!(forwarded(&CLEARS.replace("set v1, v, 0", "set v1, v, v4")), None);
        // Rounds counted from a value the shape does not know.
        assert_eq!(forwarded(&CLEARS.replace("iterations v4", "iterations v0")), None);
        // A cell written only after the test of the counter's new value:
        // the last round leaves before it writes it, and the skip writes
        // none (a second read's review found the loop skipped, leaving
        // the cell as it was entered).
        let after =
            CLEARS.replace("    guard_true v9, r0 else next\n", "    guard_true v9, r0 else next\n    set v1, w, 0\n");
        assert_eq!(forwarded(&after), None);
        // The cell's last write a constant too big to carry: it is no
        // constant cell, though an earlier write stores a small one (a
        // second read found that cell taken for 0, each round leaving
        // 70,000 there).
        let big = CLEARS.replace("    set v1, v, 0\n", "    set v1, v, 0\n    set v1, v, 70000\n");
        assert_eq!(forwarded(&big), None);
    }

    #[test]
    fn an_ordering_of_a_parameter_and_a_constant_is_a_range() {
        let f = flowc_ir::parse::function(
            "test.ir",
            "trace 't'(v0:n) {\nb0:\n    v1 = lt.word 146, v0\n    exit r0 to out\nresume r0 {\n    frame [n = v0]\n}\n}\n",
        )
        .expect("parses");
        let n = flowc_lang::Symbol::intern("n");
        let (k, v) = (flowc_ir::Operand::Const(flowc_lang::Value::Int(146)), flowc_ir::Operand::Value(f.params[0]));
        let bound = |op, args: &[flowc_ir::Operand], holds| super::bound(&f, op, args, holds);
        use flowc_lang::ops::Op;
        // `146 < n` holds: n from 147; fails: n up to 146.
        assert_eq!(bound(Op::Lt, &[k.clone(), v.clone()], true), Some((n, 147, i64::MAX)));
        assert_eq!(bound(Op::Lt, &[k.clone(), v.clone()], false), Some((n, i64::MIN, 146)));
        // `n <= 146` holds: up to 146; `n >= 146` fails: up to 145.
        assert_eq!(bound(Op::Le, &[v.clone(), k.clone()], true), Some((n, i64::MIN, 146)));
        assert_eq!(bound(Op::Ge, &[v.clone(), k.clone()], false), Some((n, i64::MIN, 145)));
        // No ordering, no constant, one operand.
        assert_eq!(bound(Op::Eq, &[v.clone(), k.clone()], true), None);
        assert_eq!(bound(Op::Lt, &[v.clone(), v.clone()], true), None);
        assert_eq!(bound(Op::Neg, &[v], true), None);
    }

    #[test]
    fn loops_of_other_shapes_are_left_alone() {
        // Counting up to 0 modulo 256 is not counting down by one.
        assert_eq!(forwarded(&TRANSFER.replace("sub.word v2, 1", "add.word v2, 1")), None);
        // An update of a cell that is not the counter's is tested.
        assert_eq!(forwarded(&TRANSFER.replace("guard_true v8", "guard_true v7")), None);
        // A field read that is no update.
        assert_eq!(forwarded(&TRANSFER.replace("v8:z = get v0, v", "v8:z = get v0, w")), None);
        // A cell updated twice.
        assert_eq!(forwarded(&TRANSFER.replace("set v1, v, v7", "set v0, v, v7")), None);
        // The guard tests a value part of the way through the counter's
        // step (+1 then -2: the counter steps -1, the guard sees +1).
        let part = TRANSFER
            .replace("v3:x = sub.word v2, 1\n    v4:x = mod.word v3, 256", "v3:x = add.word v2, 1\n    v4:x = mod.word v3, 256\n    v9:x = sub.word v4, 2\n    v10:x = mod.word v9, 256")
            .replace("set v0, v, v4", "set v0, v, v10")
            .replace("guard_true v8", "guard_true v4");
        assert_eq!(forwarded(&part), None);
        // A step no machine word can negate.
        assert_eq!(forwarded(&TRANSFER.replace("add.word v5, 3", "add.int v5, -9223372036854775808")), None);
        // Two guards.
        assert_eq!(
            forwarded(
                &TRANSFER.replace("    v8:z = get v0, v\n", "    v8:z = get v0, v\n    guard_true v7, r0 else moved\n")
            ),
            None
        );
    }
}

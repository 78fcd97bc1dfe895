//! Counted loops run to their end at once: final values for loops whose
//! every iteration steps a counter down by one and other cells by
//! constants, modulo constants (a Brainfeck-style `[->+<]`, a byte
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
//!   the guard, so that the last iteration writes it;
//! - reads of an updated field after its update;
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
//! own resume data: nothing the interpreter sees differs. For `m = 0`
//! the cell's value reduced modulo `M` is what the next step maps where
//! `x` maps; where the loop may leave before writing every cell again
//! (the guard is not last), a cell is given `x + ((x + k*m) mod M - x)
//! * (m != 0)` instead, `x` itself when nothing was skipped.
//!
//! Two written fields of the same name on two objects could be one cell
//! (the same object twice): then iterations do not compose as above. The
//! skip is multiplied by `1 - (o1 == o2)` per such pair, so such a loop
//! skips nothing and runs as it did.
//!
//! The skip ends with `iterations m`: the JIT's clock (its compile
//! budget, [`crate::jit`]) counts compiled loop iterations as the run's
//! work, and the skipped ones were work done.
//!
//! The operations made take the forms the loop's own have (`.int`: the
//! cells are integers; `.word`: words, so `x + k * m` is a word too, as
//! `|k|` and `M` are small); `m` is in `[0, M)`, so `k * m` is a word.

use flowc_ir::{
    BlockId, Function, GuardKind, InstData, InstId, InstKind, Operand, Terminator, ValueData, ValueDef, ValueId,
};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Symbol, Value};

use rustc_hash::FxHashMap as HashMap;

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
    /// The form of the update's operations (`Int` or `Word`).
    form: Form,
}

/// Makes loop trace `f`'s counted loop (see the module docs) skip to its
/// last iteration where it is entered. Returns whether it did; `f` is
/// unchanged when the loop has another shape.
pub fn fast_forward(f: &mut Function) -> bool {
    let Some(lp) = super::loop_block(f) else { return false };
    let entering: Vec<BlockId> =
        f.layout.iter().copied().filter(|&b| b != lp && f.blocks[b].term == Terminator::Jump(lp)).collect();
    let [pre] = entering[..] else { return false };
    let Some(shape) = shape(f, lp) else { return false };
    emit(f, pre, &shape);
    true
}

/// What a value of the loop block is, as far as the shape goes.
#[derive(Clone, Copy)]
enum Term {
    /// The cell's value where the iteration started.
    Old(Cell),
    /// The cell's value plus `k`, in a form; the modulus already taken on
    /// the way, if any (`(x + a) mod M + b` is `x + a + b` modulo `M`).
    Plus(Cell, i64, Form, Option<i64>),
    /// `(cell + k) mod M`, in a form (a field read after its write is
    /// what was written).
    Stepped(Cell, i64, i64, Form),
}

/// The loop's updates, which one is the counter, and how it is tested.
struct Shape {
    updates: Vec<Update>,
    counter: usize,
    /// The guard tests the counter's value where the iteration started
    /// (before its update), not its new value.
    tests_old: bool,
    /// The guard is not the iteration's last instruction: where the loop
    /// leaves, some cells were not written again.
    guard_inside: bool,
    /// The fields written: the updated fields, and the fields a phi's
    /// new value is stored in.
    written: Vec<(ValueId, Symbol)>,
}

/// The shape of loop block `lp` (see the module docs), if it has it.
fn shape(f: &Function, lp: BlockId) -> Option<Shape> {
    let block = &f.blocks[lp];
    let inside = |v: ValueId| matches!(f.values[v].def, ValueDef::Inst(i) if in_block(f, lp, i));
    let mut terms: HashMap<ValueId, Term> = HashMap::default();
    for &p in block.phis.iter() {
        let r = f.insts[p].result?;
        terms.insert(r, Term::Old(Cell::Phi(p)));
    }
    let mut updates: Vec<Update> = Vec::new();
    // Each field written, and what was written there.
    let mut written: Vec<(ValueId, Symbol, Term)> = Vec::new();
    let mut guard: Option<(usize, Term)> = None;
    let n = block.insts.len();
    for (at, &i) in block.insts.iter().enumerate() {
        let r = f.insts[i].result;
        match &f.insts[i].kind {
            InstKind::Get { obj: Operand::Value(o), field } if !inside(*o) => {
                let term = match written.iter().find(|w| w.0 == *o && w.1 == *field) {
                    Some(&(_, _, stored)) => stored,
                    None => Term::Old(Cell::Field(*o, *field)),
                };
                terms.insert(r?, term);
            }
            InstKind::Op {
                op: Operator::Known(op @ (Op::Add | Op::Sub)),
                form: form @ (Form::Int | Form::Word),
                args,
            } => {
                let (Operand::Value(x), Operand::Const(Value::Int(k))) = (&args[0], &args[1]) else { return None };
                let k = if *op == Op::Sub { k.checked_neg()? } else { *k };
                let term = match terms.get(x).copied()? {
                    Term::Old(cell) => Term::Plus(cell, k, *form, None),
                    Term::Stepped(cell, k0, m, f0) => Term::Plus(cell, k0.checked_add(k)?, weaker(f0, *form), Some(m)),
                    _ => return None,
                };
                let Term::Plus(_, k, _, _) = term else { unreachable!() };
                (k.abs() < MAX_CONSTANT).then_some(())?;
                terms.insert(r?, term);
            }
            InstKind::Op { op: Operator::Known(Op::Mod), form, args } => {
                let (Operand::Value(x), Operand::Const(Value::Int(m))) = (&args[0], &args[1]) else { return None };
                let Some(Term::Plus(cell, k, plus, before)) = terms.get(x).copied() else { return None };
                (*m > 1 && *m < MAX_CONSTANT && *form != Form::Generic && before.is_none_or(|b| b == *m))
                    .then_some(())?;
                terms.insert(r?, Term::Stepped(cell, k, *m, weaker(plus, *form)));
            }
            InstKind::Set { obj: Operand::Value(o), field, value: Operand::Value(v) } => {
                let Some(stored @ Term::Stepped(cell, k, m, form)) = terms.get(v).copied() else { return None };
                if written.iter().any(|w| w.0 == *o && w.1 == *field) {
                    return None;
                }
                match cell {
                    Cell::Field(co, cf) if co == *o && cf == *field => {
                        updates.push(Update { cell, step: k, modulus: m, form })
                    }
                    // A phi's value, kept in a field too (a carried field:
                    // BF's `[-]`), before the guard: the last iteration
                    // writes it before the loop leaves.
                    Cell::Phi(_) if guard.is_none() => {}
                    Cell::Phi(_) => return None,
                    Cell::Field(..) => return None,
                }
                written.push((*o, *field, stored));
            }
            InstKind::Guard { kind: GuardKind::True(Operand::Value(t)), .. } if guard.is_none() => {
                guard = Some((at, terms.get(t).copied()?));
            }
            _ => return None,
        }
    }
    // Each phi carries its own update round the loop.
    for &p in block.phis.iter() {
        let InstKind::Phi(inputs) = &f.insts[p].kind else { return None };
        let Some((_, Operand::Value(back))) = inputs.iter().find(|(b, _)| *b == lp) else { return None };
        match terms.get(back).copied()? {
            Term::Stepped(cell, k, m, form) if cell == Cell::Phi(p) => {
                updates.push(Update { cell, step: k, modulus: m, form })
            }
            _ => return None,
        }
    }
    (updates.len() <= MAX_CELLS && written.len() <= MAX_CELLS).then_some(())?;
    // The guard: the counter's value, truthy to go round again.
    let (at, tested) = guard?;
    let (cell, tests_old) = match tested {
        Term::Stepped(c, ..) => (c, false),
        Term::Old(c) => (c, true),
        Term::Plus(..) => return None,
    };
    let counter = updates.iter().position(|u| u.cell == cell)?;
    let u = updates[counter];
    (u.step.rem_euclid(u.modulus) == u.modulus - 1).then_some(())?;
    // The new value tested is the iteration's whole step, not a value
    // part of the way.
    if let Term::Stepped(_, k, m, _) = tested {
        (k == u.step && m == u.modulus).then_some(())?;
    }
    let written = written.into_iter().map(|(o, field, _)| (o, field)).collect();
    Some(Shape { updates, counter, tests_old, guard_inside: at + 1 != n, written })
}

/// The form that promises less of the two (`Int` or `Word`): what an
/// operation standing for both may take.
fn weaker(a: Form, b: Form) -> Form {
    if a == Form::Word && b == Form::Word {
        Form::Word
    } else {
        Form::Int
    }
}

fn in_block(f: &Function, b: BlockId, i: InstId) -> bool {
    let block = &f.blocks[b];
    block.phis.iter().chain(block.insts.iter()).any(|&x| x == i)
}

/// Emits the skip at the end of `pre`, which enters loop `lp`.
fn emit(f: &mut Function, pre: BlockId, shape: &Shape) {
    let updates = &shape.updates;
    let mut e = Emitter { f, block: pre };
    // Each cell's value where the loop is entered.
    let olds: Vec<Operand> = updates
        .iter()
        .map(|u| match u.cell {
            Cell::Field(o, field) => {
                Operand::Value(e.inst(InstKind::Get { obj: Operand::Value(o), field }).expect("a read"))
            }
            Cell::Phi(p) => match &e.f.insts[p].kind {
                InstKind::Phi(inputs) => {
                    inputs.iter().find(|(b, _)| *b == pre).map(|(_, o)| o.clone()).expect("an input from the entry")
                }
                _ => unreachable!("a phi cell is a phi"),
            },
        })
        .collect();
    // m = (c - 1) mod M: the iterations before the last; none if the
    // guard tests the counter before its update and it is 0 already.
    let c = &updates[shape.counter];
    let old_c = olds[shape.counter].clone();
    let less = e.op(Op::Sub, c.form, old_c.clone(), int(1));
    let mut m = e.op(Op::Mod, c.form, less, int(c.modulus));
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
    // The JIT's clock counts the skipped iterations as run.
    e.inst(InstKind::Iterations(m.clone()));
    // Where the loop may leave before writing every cell again, a cell
    // skipped nothing keeps its value exactly (not reduced modulo M).
    let moved = shape.guard_inside.then(|| e.op(Op::Ne, Form::Word, m.clone(), int(0)));
    for (u, old) in updates.iter().zip(olds) {
        let by = e.op(Op::Mul, Form::Word, m.clone(), int(u.step));
        let sum = e.op(Op::Add, u.form, old.clone(), by);
        let mut new = e.op(Op::Mod, u.form, sum, int(u.modulus));
        if let Some(moved) = &moved {
            // old + (new - old) * moved
            let change = e.op(Op::Sub, u.form, new, old.clone());
            let change = e.op(Op::Mul, u.form, change, moved.clone());
            new = e.op(Op::Add, u.form, old, change);
        }
        match u.cell {
            Cell::Field(o, field) => {
                e.inst(InstKind::Set { obj: Operand::Value(o), field, value: new });
            }
            Cell::Phi(p) => {
                if let InstKind::Phi(inputs) = &mut e.f.insts[p].kind {
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
        let has_result = kind.has_result();
        let i = self.f.insts.alloc(InstData { kind, result: None });
        self.f.blocks[self.block].insts.push(i);
        has_result.then(|| {
            let v = self.f.values.alloc(ValueData { def: ValueDef::Inst(i), name: None });
            self.f.insts[i].result = Some(v);
            v
        })
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
        let mut f = flowc_ir::parse::function("test.ir", text).expect("parses");
        let done = super::fast_forward(&mut f);
        flowc_ir_checker::check(&f).expect("valid IR");
        done.then(|| flowc_ir::print::function(&f))
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
                v11 = sub.word v9, 1
                v12 = mod.word v11, 256
                v13 = eq.word v0, v1
                v14 = sub.word 1, v13
                v15 = mul.word v12, v14
                iterations v15
                v16 = mul.word v15, -1
                v17 = add.word v9, v16
                v18 = mod.word v17, 256
                set v0, v, v18
                v19 = mul.word v15, 3
                v20 = add.word v10, v19
                v21 = mod.word v20, 256
                set v1, v, v21
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
                v10 = mul.word v9, 255
                v11 = add.int v0, v10
                v12 = mod.int v11, 256
                v13 = mul.word v9, 5
                v14 = add.int v1, v13
                v15 = mod.int v14, 1000
                jump b1
            b1 count:
                v2:i = phi [b0: v12, b1: v5]
                v3:s = phi [b0: v15, b1: v7]
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
        // `while c.v { c.v -= 1; e.v += 2 (in two steps) }`: the skip is
        // times `c != 0`, and as the guard comes first a cell that skipped
        // nothing keeps its value exactly (`x + (new - x) * (m != 0)`).
        let text = "trace 'top.body'(v0:c, v1:e) {
b0:
    jump b1
b1 top:
    v2:z = get v0, v
    guard_true v2, r0 else topped
    v3:x = sub.int v2, 1
    v4:x = mod.int v3, 256
    set v0, v, v4
    v5:y = get v1, v
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
                v20 = mul.word v18, -1
                v21 = add.int v10, v20
                v22 = mod.int v21, 256
                v23 = sub.int v22, v10
                v24 = mul.int v23, v19
                v25 = add.int v10, v24
                set v0, v, v25
                v26 = mul.word v18, 2
                v27 = add.int v11, v26
                v28 = mod.int v27, 256
                v29 = sub.int v28, v11
                v30 = mul.int v29, v19
                v31 = add.int v11, v30
                set v1, v, v31
                jump b1
            b1 top:
                v2:z = get v0, v
                guard_true v2, r0 else topped
                v3:x = sub.int v2, 1
                v4:x = mod.int v3, 256
                set v0, v, v4
                v5:y = get v1, v
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
                v5 = sub.word v1, 1
                v6 = mod.word v5, 256
                iterations v6
                v7 = mul.word v6, -1
                v8 = add.word v1, v7
                v9 = mod.word v8, 256
                jump b1
            b1 clear:
                v2:v = phi [b0: v9, b1: v4]
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
        // Two guards.
        assert_eq!(
            forwarded(
                &TRANSFER.replace("    v8:z = get v0, v\n", "    v8:z = get v0, v\n    guard_true v7, r0 else moved\n")
            ),
            None
        );
    }
}

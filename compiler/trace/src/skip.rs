//! Inner loops skipped in outer recordings: a counted loop's iterations
//! but its last, done at once by a recording that arrives at the loop's
//! head, so that the loop around it records as one loop of its own.
//!
//! A loop trace that runs to its end at once ([`crate::opt::fast_forward`])
//! has a shape simple enough to state without its code: every iteration
//! steps some fields of objects the loop reaches from its frame's
//! variables by links by constants modulo constants, one of them (the
//! *counter*) by -1, and the loop goes round again while the counter's
//! new value is not 0 (BF's `[->+<]`). That statement is a [`Skip`]: the
//! objects as [`Path`]s from variables, the stepped fields as
//! [`SkipCell`]s, the pairs of objects that must or must not be one
//! (links that come back; two stepped fields of one name would otherwise
//! be one cell), and what the loop's code assumes where it is entered
//! (variables' values and classes), which the skip checks first.
//!
//! An outer loop's recording that arrives at the head of such a loop
//! (where it would stop and jump into the loop's code) records instead
//! the operations of [`Skip::ops`] and goes on recording: the checks of
//! the entry's assumptions, the walk to the objects with a class guard
//! per link and a guard per pair of objects (each leaving, on failure,
//! at the head where the recording arrived, nothing changed yet), then `m = (c - 1) mod M` for counter
//! `c` and each cell `x` set to `(x + k * m) mod M`: the `m` iterations
//! before the last (`x + m` or `x - m` for steps of 1 and -1; the
//! counter's new value is `1 mod M` whatever it was, a constant the
//! optimizer carries into the last round's test). The recording then follows the interpreter through
//! the last iteration, which ends with the counter at 0 and leaves the
//! loop, as it would have anyway — so the frame's variables after the
//! loop are what the interpreter makes them, recorded as usual, and
//! nothing the skip computes needs to outlive it. A cell known to hold an
//! integer in `[0, M)` ([`SkipCell::reduced`]) is its own reduction; any
//! other keeps its value exactly when `m` is 0 (`x + ((x + k*m) mod M -
//! x) * (m != 0)`), as the fast forward does. And `iterations m` counts
//! the rounds as work run, as the fast forward's does: the JIT's compile
//! budget measures the run by compiled rounds, and without it the
//! run-length interpreter's `digits 200` held bridges back as over the
//! budget some runs and took 1-2.6 s instead of 0.3.
//!
//! A loop whose rounds each leave a field at one integer (a *constant
//! cell*: BF's `[-]` inside it, itself done at once) states that field
//! ([`SkipConst`]): its skip checks the field holds the integer where it
//! starts, when the loop reads it before writing it (rounds that start
//! with it there compute alike), and counts the rounds done at once
//! inside each round (`iterations m * k`, [`Skip::per_round`]). So a
//! nest of counted loops skips a level more at each recording around it.
//!
//! The skip's values live in *temporaries*, variables no program can
//! name ([`is_temporary`]: their names start with `%`): the recorder
//! drops them from the frame after the skip, and the conversion to IR
//! keeps them out of resume data and loop phis ([`crate::to_ir`]).
//!
//! A skip is recorded only where it holds when recorded ([`Skip::holds`]:
//! the links are objects of their classes and the objects that must
//! differ do), so that the recording, which runs the program, runs it as
//! the trace will.

use flowc_lang::ast::{Arg, Operator};
use flowc_lang::interp::objects;
use flowc_lang::ops::Op;
use flowc_lang::{Env, Symbol, Value};

use crate::trace::{Check, TraceOp};

/// An object reached from a variable of the loop's frame (where the loop
/// starts) by reading link fields, each an object of its class.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    pub var: Symbol,
    /// Field read, then the class its value is checked to be.
    pub links: Vec<(Symbol, Symbol)>,
}

/// A field every iteration sets to `(x + step) mod modulus`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkipCell {
    /// The object, an index into [`Skip::objects`].
    pub object: usize,
    pub field: Symbol,
    pub step: i64,
    pub modulus: i64,
    /// The field holds an integer in `[0, modulus)` wherever the loop is
    /// entered (the program's facts say so of every value stored there).
    pub reduced: bool,
}

/// A field every round leaves holding one integer (a constant cell of
/// [`crate::opt::fast_forward`]: BF's `[-]` inside the loop, itself done
/// at once): rounds that start with it there compute alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkipConst {
    /// The object, an index into [`Skip::objects`].
    pub object: usize,
    pub field: Symbol,
    pub value: i64,
    /// The loop reads it before writing it: the skip checks it holds
    /// `value` where it starts.
    pub read: bool,
}

/// What a counted loop does, without its code (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// The objects whose fields are stepped, each one value of the loop.
    pub objects: Vec<Path>,
    pub cells: Vec<SkipCell>,
    /// Which cell is the counter (its step is -1 modulo its modulus).
    pub counter: usize,
    /// Objects (indices into `objects`) that must be (`true`), or must
    /// not be, one object: links that come back to where the walk
    /// started, and two stepped fields of one name on two objects.
    pub same: Vec<(usize, usize, bool)>,
    /// Variables of the frame the loop's code was made for these values
    /// of (promoted there, or constant at its head).
    pub values: Vec<(Symbol, Value)>,
    /// Variables of the frame the loop's code assumes objects of these
    /// classes.
    pub classes: Vec<(Symbol, Symbol)>,
    /// Variables of the frame the loop's code assumes integers in these
    /// ranges (`lo..=hi`): its entry's facts, and the first iteration's
    /// tests of them against constants (an interpreter's `pc < n` at a
    /// promoted `pc`). A skip checks each is the integer it is where the
    /// skip is recorded (an interpreter's program length is one).
    pub ranges: Vec<(Symbol, i64, i64)>,
    /// The fields every round leaves holding one integer.
    pub consts: Vec<SkipConst>,
    /// The rounds each round counts as run besides itself (those of the
    /// loops inside it, done at once).
    pub per_round: i64,
}

/// The kinds of temporaries a skip writes, each numbered from 0 up to
/// [`MOST_TEMPS`].
const KINDS: [&str; 13] = ["w", "same", "x", "less", "m", "moved", "by", "sum", "new", "change", "kept", "c", "rounds"];
const W: usize = 0;
const SAME: usize = 1;
const X: usize = 2;
const LESS: usize = 3;
const M: usize = 4;
const MOVED: usize = 5;
const BY: usize = 6;
const SUM: usize = 7;
const NEW: usize = 8;
const CHANGE: usize = 9;
const KEPT: usize = 10;
const CONST: usize = 11;
const ROUNDS: usize = 12;

/// How many temporaries of one kind a skip may write: a skip has at most
/// this many links to walk, cells, and pairs of objects to tell apart.
pub const MOST_TEMPS: usize = 80;

/// The temporaries, by kind and number, and all of them as a set:
/// interned the first time a skip is made.
struct Temps {
    names: Vec<Vec<Symbol>>,
    all: rustc_hash::FxHashSet<Symbol>,
}

static TEMPS: std::sync::OnceLock<Temps> = std::sync::OnceLock::new();

fn temps() -> &'static Temps {
    TEMPS.get_or_init(|| {
        let names: Vec<Vec<Symbol>> = KINDS
            .iter()
            .map(|kind| (0..MOST_TEMPS).map(|k| Symbol::intern(&format!("%{kind}{k}"))).collect())
            .collect();
        let all = names.iter().flatten().copied().collect();
        Temps { names, all }
    })
}

/// Whether `name` is a temporary of a skip rather than a program's
/// variable (no program's variable starts with `%`).
pub fn is_temporary(name: Symbol) -> bool {
    TEMPS.get().is_some_and(|t| t.all.contains(&name))
}

fn temp(kind: usize, k: usize) -> Symbol {
    temps().names[kind][k]
}

fn op2(dst: Symbol, op: Op, lhs: Arg, rhs: Arg) -> TraceOp {
    TraceOp::Op2 { dst, op: Operator::Known(op), lhs, rhs }
}

fn var(s: Symbol) -> Arg {
    Arg::Var(s)
}

fn int(k: i64) -> Arg {
    Arg::Const(Value::Int(k))
}

impl Skip {
    /// The objects in `env` (the frame where the loop starts), if every
    /// link is an object of its class and the objects that must differ
    /// do.
    fn objects_in(&self, env: &Env) -> Option<Vec<Value>> {
        let mut found = Vec::with_capacity(self.objects.len());
        for p in &self.objects {
            let mut at = env.get(&p.var)?.clone();
            for &(field, class) in &p.links {
                at = objects::get(&at, field).ok()?;
                if !objects::is_class(&at, class) {
                    return None;
                }
            }
            // The stepped fields are read and written: the object must
            // be one.
            matches!(at, Value::Object(_)).then_some(())?;
            found.push(at);
        }
        self.same.iter().all(|&(a, b, same)| (found[a] == found[b]) == same).then_some(found)
    }

    /// Whether the skip's guards hold in `env` and its fields are set: a
    /// recording may skip the loop here.
    pub fn holds(&self, env: &Env) -> bool {
        if !self.values.iter().all(|(var, v)| env.get(var) == Some(v)) {
            return false;
        }
        if !self.classes.iter().all(|(var, class)| env.get(var).is_some_and(|v| objects::is_class(v, *class))) {
            return false;
        }
        let within = |v: Option<&Value>, lo: i64, hi: i64| matches!(v, Some(Value::Int(k)) if lo <= *k && *k <= hi);
        if !self.ranges.iter().all(|&(var, lo, hi)| within(env.get(&var), lo, hi)) {
            return false;
        }
        let Some(found) = self.objects_in(env) else { return false };
        let consts_hold = self
            .consts
            .iter()
            .filter(|c| c.read)
            .all(|c| objects::get(&found[c.object], c.field) == Ok(Value::Int(c.value)));
        consts_hold
            && self
                .cells
                .iter()
                .all(|c| matches!(objects::get(&found[c.object], c.field), Ok(Value::Int(_) | Value::Big(_))))
    }

    /// Whether the skip fits the temporaries ([`MOST_TEMPS`] of a kind).
    pub fn fits(&self) -> bool {
        let links: usize = self.objects.iter().map(|p| p.links.len()).sum();
        !self.cells.is_empty()
            && links <= MOST_TEMPS
            && self.cells.len() <= MOST_TEMPS
            && self.same.len() <= MOST_TEMPS
            && self.consts.len() <= MOST_TEMPS
            && self.ranges.len() <= MOST_TEMPS
    }

    /// The operations that do all iterations but the last, for a
    /// recording at the loop's head `label` (where its guards leave).
    /// The skip [`fits`](Skip::fits).
    pub fn ops(&self, label: Symbol, env: &Env) -> Vec<TraceOp> {
        let mut ops = Vec::new();
        let guard = |check| TraceOp::Guard { check, resume: Vec::new(), label };
        for (var, v) in &self.values {
            ops.push(guard(Check::Value(*var, v.clone())));
        }
        for &(var, class) in &self.classes {
            ops.push(guard(Check::Class(Arg::Var(var), class, true)));
        }
        // A variable the loop's code assumed in a range: checked to be
        // the integer it is here (`holds` found it in the range), which a
        // guard can test of any value — a comparison would raise an error
        // where the variable is no integer, and the program may raise
        // none there.
        for &(v, _, _) in &self.ranges {
            if let Some(now @ Value::Int(_)) = env.get(&v) {
                ops.push(guard(Check::Value(v, now.clone())));
            }
        }
        // The walks, sharing the links they have in common.
        let mut read: Vec<(Arg, Symbol, Symbol)> = Vec::new();
        let mut objects: Vec<Arg> = Vec::with_capacity(self.objects.len());
        for p in &self.objects {
            let mut at = var(p.var);
            for &(field, class) in &p.links {
                let known = read.iter().find(|(from, f, _)| *from == at && *f == field).map(|r| r.2);
                let next = match known {
                    Some(t) => t,
                    None => {
                        let t = temp(W, read.len());
                        ops.push(TraceOp::Get { dst: t, obj: at.clone(), field });
                        ops.push(guard(Check::Class(var(t), class, true)));
                        read.push((at.clone(), field, t));
                        t
                    }
                };
                at = var(next);
            }
            objects.push(at);
        }
        for (k, &(a, b, expected)) in self.same.iter().enumerate() {
            let same = temp(SAME, k);
            ops.push(op2(same, Op::Eq, objects[a].clone(), objects[b].clone()));
            ops.push(guard(if expected { Check::True(same) } else { Check::False(same) }));
        }
        // The constant cells the rounds start from.
        for (k, c) in self.consts.iter().enumerate().filter(|(_, c)| c.read) {
            let x = temp(CONST, k);
            ops.push(TraceOp::Get { dst: x, obj: objects[c.object].clone(), field: c.field });
            ops.push(guard(Check::Value(x, Value::Int(c.value))));
        }
        // Every cell's value before the skip, then m.
        let olds: Vec<Symbol> = (0..self.cells.len()).map(|k| temp(X, k)).collect();
        for (c, &old) in self.cells.iter().zip(&olds) {
            ops.push(TraceOp::Get { dst: old, obj: objects[c.object].clone(), field: c.field });
        }
        let counter = &self.cells[self.counter];
        let (less, m) = (temp(LESS, 0), temp(M, 0));
        ops.push(op2(less, Op::Sub, var(olds[self.counter]), int(1)));
        ops.push(op2(m, Op::Mod, var(less), int(counter.modulus)));
        // The JIT's clock counts the rounds done at once as work run.
        ops.push(TraceOp::Iterations(var(m)));
        if self.per_round > 0 {
            let rounds = temp(ROUNDS, 0);
            ops.push(op2(rounds, Op::Mul, var(m), int(self.per_round)));
            ops.push(TraceOp::Iterations(var(rounds)));
        }
        let moved = temp(MOVED, 0);
        if self.cells.iter().any(|c| !c.reduced) {
            ops.push(op2(moved, Op::Ne, var(m), int(0)));
        }
        for (k, (c, &old)) in self.cells.iter().zip(&olds).enumerate() {
            let (by, sum, new) = (temp(BY, k), temp(SUM, k), temp(NEW, k));
            let new = if k == self.counter {
                // `(c - ((c - 1) mod M)) mod M` is `1 mod M` for every
                // integer `c`: a constant, which the last round's test
                // then folds.
                int(1i64.rem_euclid(c.modulus))
            } else {
                match c.step {
                    1 => ops.push(op2(sum, Op::Add, var(old), var(m))),
                    -1 => ops.push(op2(sum, Op::Sub, var(old), var(m))),
                    step => {
                        ops.push(op2(by, Op::Mul, var(m), int(step)));
                        ops.push(op2(sum, Op::Add, var(old), var(by)));
                    }
                }
                ops.push(op2(new, Op::Mod, var(sum), int(c.modulus)));
                var(new)
            };
            let value = if c.reduced {
                new
            } else {
                let (change, kept) = (temp(CHANGE, k), temp(KEPT, k));
                ops.push(op2(change, Op::Sub, new, var(old)));
                ops.push(op2(change, Op::Mul, var(change), var(moved)));
                ops.push(op2(kept, Op::Add, var(old), var(change)));
                var(kept)
            };
            ops.push(TraceOp::Set { obj: objects[c.object].clone(), field: c.field, value });
        }
        ops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{readable, Trace};

    fn s(x: &str) -> Symbol {
        Symbol::intern(x)
    }

    /// BF's `[->>+<<]` on a tape of `cell`s: the counter at `tape`, the
    /// cell two to the right.
    fn copy_right() -> Skip {
        let right = (s("r"), s("cell"));
        Skip {
            objects: vec![Path { var: s("tape"), links: vec![] }, Path { var: s("tape"), links: vec![right, right] }],
            cells: vec![
                SkipCell { object: 0, field: s("v"), step: -1, modulus: 256, reduced: true },
                SkipCell { object: 1, field: s("v"), step: 1, modulus: 256, reduced: false },
            ],
            counter: 0,
            same: vec![(0, 1, false)],
            values: vec![],
            classes: vec![(s("tape"), s("cell"))],
            ranges: vec![],
            consts: vec![],
            per_round: 0,
        }
    }

    #[test]
    fn a_skip_walks_checks_and_steps_each_cell() {
        let trace = Trace { ops: copy_right().ops(s("dispatch"), &Env::default()), ..Trace::empty(s("dispatch")) };
        expect_test::expect![[r#"
            guard tape is cell else resume at dispatch
            '%w0' = tape.r
            guard '%w0' is cell else resume at dispatch
            '%w1' = '%w0'.r
            guard '%w1' is cell else resume at dispatch
            '%same0' = tape == '%w1'
            guard not '%same0' else resume at dispatch
            '%x0' = tape.v
            '%x1' = '%w1'.v
            '%less0' = '%x0' - 1
            '%m0' = '%less0' % 256
            iterations '%m0'
            '%moved0' = '%m0' != 0
            tape.v = 1
            '%sum1' = '%x1' + '%m0'
            '%new1' = '%sum1' % 256
            '%change1' = '%new1' - '%x1'
            '%change1' = '%change1' * '%moved0'
            '%kept1' = '%x1' + '%change1'
            '%w1'.v = '%kept1'
            loop"#]]
        .assert_eq(&readable(&trace).lines().map(str::trim).collect::<Vec<_>>().join("\n"));
    }

    #[test]
    fn a_skip_checks_the_ranges_and_constant_cells_it_starts_from_and_counts_the_rounds_inside() {
        // `[->>[-]<<]` with a `+` run before the `[-]`: the cell two to
        // the right holds 0 where each round starts; 5 rounds inside.
        let mut skip = copy_right();
        skip.cells.truncate(1);
        skip.same.clear();
        skip.consts = vec![SkipConst { object: 1, field: s("v"), value: 0, read: true }];
        skip.per_round = 5;
        // And the program's length past the loop's last position, as the
        // loop's entry knew it (`pc < n`).
        skip.ranges = vec![(s("n"), 147, i64::MAX)];
        let env: Env = [(s("n"), Value::Int(197))].into_iter().collect();
        let trace = Trace { ops: skip.ops(s("dispatch"), &env), ..Trace::empty(s("dispatch")) };
        expect_test::expect![[r#"
            guard tape is cell else resume at dispatch
            guard n == 197 else resume at dispatch
            '%w0' = tape.r
            guard '%w0' is cell else resume at dispatch
            '%w1' = '%w0'.r
            guard '%w1' is cell else resume at dispatch
            '%c0' = '%w1'.v
            guard '%c0' == 0 else resume at dispatch
            '%x0' = tape.v
            '%less0' = '%x0' - 1
            '%m0' = '%less0' % 256
            iterations '%m0'
            '%rounds0' = '%m0' * 5
            iterations '%rounds0'
            tape.v = 1
            loop"#]]
        .assert_eq(&readable(&trace).lines().map(str::trim).collect::<Vec<_>>().join("\n"));
    }

    #[test]
    fn temporaries_are_names_no_program_has() {
        assert!(copy_right().fits());
        assert!(is_temporary(temp(W, 0)));
        assert!(is_temporary(s("%w0")));
        assert!(!is_temporary(s("%w80")));
        assert!(!is_temporary(s("w0")));
        assert!(!is_temporary(s("tape")));
    }
}

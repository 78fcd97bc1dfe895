//! Traces in the series' form: a straight line of operations and guards
//! that ends in `loop` (a jump back to the start).
//!
//! Printing follows SWI-Prolog's `write/1` ([`Style::Write`]): the nested
//! term of Parts 2–3 (`op2(res,mul,var(res),var(x),loop)`), or Part 4's
//! "nicer way to print traces", one operation per line without its rest.

use flowc_lang::ast::{Arg, Operator};
use flowc_lang::syntax::prolog::arg_term;
use flowc_lang::syntax::term::{Style, Term};
use flowc_lang::{Symbol, Value};

/// What a guard checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Check {
    /// The variable is not 0.
    True(Symbol),
    /// The variable is 0.
    False(Symbol),
    /// The variable equals the value (`promote`).
    Value(Symbol, Value),
    /// The operand is (or, with `false`, is not) an object of the class.
    Class(Arg, Symbol, bool),
    /// The JIT's dispatch tier, where a promotion of the variable stood:
    /// the position it holds has no code of its own and is not hot yet
    /// (`guard_cold`; the recorder writes it only when asked, and a run of
    /// the trace outside the JIT lets it pass).
    Cold(Symbol),
}

/// One operation of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceOp {
    Op1 {
        dst: Symbol,
        op: Operator,
        arg: Arg,
    },
    Op2 {
        dst: Symbol,
        op: Operator,
        lhs: Arg,
        rhs: Arg,
    },
    New {
        dst: Symbol,
        class: Symbol,
    },
    Get {
        dst: Symbol,
        obj: Arg,
        field: Symbol,
    },
    Set {
        obj: Arg,
        field: Symbol,
        value: Arg,
    },
    /// A guard: on failure, write `resume` into the environment and
    /// continue interpreting at `label`.
    Guard {
        check: Check,
        resume: Vec<(Symbol, Value)>,
        label: Symbol,
    },
    /// A call the trace follows (beyond the series): the arguments are read
    /// in the caller, a new frame binds them to the callee's parameters;
    /// the callee's return value goes to `dst`, then the caller continues
    /// at `next`.
    Enter {
        dst: Symbol,
        func: Symbol,
        args: Vec<Arg>,
        next: Symbol,
    },
    /// The callee returns `value`; its frame ends.
    Leave {
        value: Arg,
    },
    /// A call the trace does not follow (of a recursive function): run as
    /// a call, its value goes to `dst`.
    Call {
        dst: Symbol,
        func: Symbol,
        args: Vec<Arg>,
    },
    /// Rounds of a loop done at once ([`crate::skip`]), counted as work
    /// run (the JIT's clock, `iterations` in the IR); does nothing else.
    Iterations(Arg),
}

/// A recorded (or optimized) trace: its operations, then `loop`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub anchor: Symbol,
    pub ops: Vec<TraceOp>,
    /// The source site of each operation (for error messages); empty when
    /// unknown (an optimized trace).
    pub sites: Vec<flowc_ir::Site>,
    /// Which objects the recording met (empty when unknown).
    pub objects: ObjectIds,
    /// The variables live where the trace may resume the interpreter
    /// (the JIT's recordings; `None`: every variable is kept, as the
    /// series' traces keep them).
    pub live: Option<std::sync::Arc<ResumeLive>>,
}

/// The variables live at the labels a trace may resume the interpreter
/// at, by name: where its guards and its end leave, and where the frames
/// around its calls continue. A resume record (`to_ir`) lists only these:
/// a variable dead at its label is written before any path from there
/// reads it, so restoring it changes nothing a program can observe (the
/// JIT's loops already leave such variables out of their heads,
/// [`flowc_lang::interp::live`]). What a record does not hold, the code
/// before it need not keep or store: a BF interpreter's `op`, `hit` and
/// `v` at the `next` its guards leave for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResumeLive {
    /// Per function (`None`: the main graph) and label: the live
    /// variables, sorted. A label not listed keeps every variable.
    labels: rustc_hash::FxHashMap<(Option<Symbol>, Symbol), std::sync::Arc<[Symbol]>>,
}

impl ResumeLive {
    /// Notes that `live` (sorted) are the variables live at `label` of
    /// `function`.
    pub fn insert(&mut self, function: Option<Symbol>, label: Symbol, live: std::sync::Arc<[Symbol]>) {
        debug_assert!(live.windows(2).all(|w| w[0] < w[1]), "live variables are sorted");
        self.labels.insert((function, label), live);
    }

    /// The variables (sorted) a record resuming at `label` of `function`
    /// keeps; `None` where it keeps every one. For the records of a frame,
    /// looked up once rather than per variable.
    pub fn live_at(&self, function: Option<Symbol>, label: Symbol) -> Option<&[Symbol]> {
        self.labels.get(&(function, label)).map(|live| &live[..])
    }

    /// The labels (with their functions) a recording in frames of
    /// `functions` (base first) may resume at: `anchor` (where its
    /// promotions leave), each guard's label and each link check's
    /// (`passed`), each call's continuation, and `end` if it leaves there.
    /// Sorted, without repeats.
    pub fn labels_of(
        trace: &Trace,
        functions: &[Option<Symbol>],
        continuations: &[(Option<Symbol>, Symbol)],
        end: Option<Symbol>,
    ) -> Vec<(Option<Symbol>, Symbol)> {
        let mut stack: Vec<Option<Symbol>> = functions.to_vec();
        let top = |stack: &[Option<Symbol>]| stack.last().copied().flatten();
        let mut out: Vec<(Option<Symbol>, Symbol)> = continuations.to_vec();
        out.push((top(&stack), trace.anchor));
        let mut passed = trace.objects.passed.iter().peekable();
        for (k, op) in trace.ops.iter().enumerate() {
            while let Some(&&(i, label)) = passed.peek() {
                if i as usize > k {
                    break;
                }
                out.push((top(&stack), label));
                passed.next();
            }
            match op {
                TraceOp::Guard { label, .. } => out.push((top(&stack), *label)),
                TraceOp::Enter { func, next, .. } => {
                    out.push((top(&stack), *next));
                    stack.push(Some(*func));
                }
                TraceOp::Leave { .. } => {
                    stack.pop();
                }
                _ => {}
            }
        }
        if let Some(label) = end {
            out.push((top(&stack), label));
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// What a recording saw of objects, by identity ([`flowc_lang::heap`]'s
/// `Obj::id`; no handle, so a trace can cross threads), for the
/// conversion's link speculation ([`crate::to_ir`], "Links that come
/// back"). Indices are into [`Trace::ops`], ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectIds {
    /// The objects the frames held where the recording started: frame
    /// (base first), variable, object.
    pub start: Vec<(u32, Symbol, u64)>,
    /// The operations whose result was an object (`get`, `new`): index,
    /// object.
    pub results: Vec<(u32, u64)>,
    /// The class guards the recording passed (the value was an object of
    /// the class), and its truth tests of objects: index, and the label
    /// the recording went on to.
    pub passed: Vec<(u32, Symbol)>,
    /// The `get`s that read an object from an object in the same block of
    /// the heap: index, and how many bytes past the object read from the
    /// result's cell lay ([`flowc_lang::heap`]'s `Obj::offset_from`).
    pub offsets: Vec<(u32, i64)>,
    /// Of `passed`, the class checks and truth tests whose links are not
    /// assumed to lie where `offsets` says (the JIT found them laid out
    /// otherwise there).
    pub unassumed: Vec<(u32, Symbol)>,
    /// The heap's rows (a bit each) some link of `offsets` of their class
    /// and fields was not held by when recorded
    /// ([`flowc_lang::heap::rows::Found::Missed`]): the trace's walks may
    /// be vouched for by the others (`opt::row`).
    pub row_misses: u32,
}

impl ObjectIds {
    /// Notes the objects `env`, frame `frame`'s variables where the
    /// recording starts, holds.
    pub fn add_start(&mut self, frame: u32, env: &[(Symbol, Value)]) {
        for (name, v) in env {
            if let Value::Object(o) = v {
                self.start.push((frame, *name, o.id()));
            }
        }
    }

    /// The part of `self` from operation `at` on, renumbered from 0 (its
    /// start left empty: the caller knows the frames there); `self` keeps
    /// the part before.
    fn split_off(&mut self, at: usize) -> ObjectIds {
        let at = at as u32;
        let results = split_indexed(&mut self.results, at);
        let passed = split_indexed(&mut self.passed, at);
        let offsets = split_indexed(&mut self.offsets, at);
        let unassumed = split_indexed(&mut self.unassumed, at);
        ObjectIds { start: Vec::new(), results, passed, offsets, unassumed, row_misses: self.row_misses }
    }
}

/// The entries of `v` at index `at` or later, renumbered from `at`.
fn split_indexed<T>(v: &mut Vec<(u32, T)>, at: u32) -> Vec<(u32, T)> {
    let from = v.partition_point(|(k, _)| *k < at);
    v.split_off(from).into_iter().map(|(k, x)| (k - at, x)).collect()
}

impl Trace {
    /// An empty trace anchored at `anchor`.
    pub fn empty(anchor: Symbol) -> Trace {
        Trace { anchor, ops: Vec::new(), sites: Vec::new(), objects: ObjectIds::default(), live: None }
    }

    /// Cuts the trace before operation `at`: the operations before it, and
    /// those from it on as a trace anchored at `label` (where the base
    /// frame was when the first of them was recorded; what its frames held
    /// there is not known: [`ObjectIds::start`] is empty).
    pub fn split_at(mut self, at: usize, label: Symbol) -> (Trace, Trace) {
        let ops = self.ops.split_off(at);
        let sites = if self.sites.len() >= at { self.sites.split_off(at) } else { Vec::new() };
        let objects = self.objects.split_off(at);
        let live = self.live.clone();
        (self, Trace { anchor: label, ops, sites, objects, live })
    }
}

fn env_term(env: &[(Symbol, Value)]) -> Term {
    Term::list(env.iter().map(|(k, v)| Term::compound("/", vec![Term::sym(*k), Term::value(v)])).collect())
}

impl TraceOp {
    /// Calls `f` on every value the operation names: an argument's
    /// constant, a promotion's value, a guard's resume values.
    pub fn each_value_mut(&mut self, f: &mut impl FnMut(&mut Value)) {
        fn arg(a: &mut Arg, f: &mut impl FnMut(&mut Value)) {
            if let Arg::Const(c) = a {
                f(c)
            }
        }
        match self {
            TraceOp::Op1 { arg: a, .. }
            | TraceOp::Get { obj: a, .. }
            | TraceOp::Leave { value: a }
            | TraceOp::Iterations(a) => arg(a, f),
            TraceOp::Op2 { lhs: a, rhs: b, .. } | TraceOp::Set { obj: a, value: b, .. } => {
                arg(a, f);
                arg(b, f);
            }
            TraceOp::New { .. } => {}
            TraceOp::Enter { args, .. } | TraceOp::Call { args, .. } => args.iter_mut().for_each(|a| arg(a, f)),
            TraceOp::Guard { check, resume, .. } => {
                match check {
                    Check::Value(_, v) => f(v),
                    Check::Class(a, ..) => arg(a, f),
                    Check::True(_) | Check::False(_) | Check::Cold(_) => {}
                }
                resume.iter_mut().for_each(|(_, v)| f(v));
            }
        }
    }

    /// The term's functor and arguments, without the rest of the trace.
    fn parts(&self) -> (&'static str, Vec<Term>) {
        let s = |x: &Symbol| Term::sym(*x);
        match self {
            TraceOp::Op1 { dst, op, arg } => ("op1", vec![s(dst), Term::atom(op.name()), arg_term(arg)]),
            TraceOp::Op2 { dst, op, lhs, rhs } => {
                ("op2", vec![s(dst), Term::atom(op.name()), arg_term(lhs), arg_term(rhs)])
            }
            TraceOp::New { dst, class } => ("new", vec![s(dst), s(class)]),
            TraceOp::Get { dst, obj, field } => ("get", vec![s(dst), arg_term(obj), s(field)]),
            TraceOp::Set { obj, field, value } => ("set", vec![arg_term(obj), s(field), arg_term(value)]),
            TraceOp::Enter { dst, func, args, next } => {
                ("enter", vec![s(dst), s(func), Term::list(args.iter().map(arg_term).collect()), s(next)])
            }
            TraceOp::Leave { value } => ("leave", vec![arg_term(value)]),
            TraceOp::Iterations(rounds) => ("iterations", vec![arg_term(rounds)]),
            TraceOp::Call { dst, func, args } => {
                ("call", vec![s(dst), s(func), Term::list(args.iter().map(arg_term).collect())])
            }
            TraceOp::Guard { check, resume, label } => {
                let (name, mut args) = match check {
                    Check::True(v) => ("guard_true", vec![s(v)]),
                    Check::False(v) => ("guard_false", vec![s(v)]),
                    Check::Value(v, c) => ("guard_value", vec![s(v), Term::value(c)]),
                    Check::Class(a, c, true) => ("guard_class", vec![arg_term(a), s(c)]),
                    Check::Class(a, c, false) => ("guard_not_class", vec![arg_term(a), s(c)]),
                    Check::Cold(v) => ("guard_cold", vec![s(v)]),
                };
                args.push(env_term(resume));
                args.push(s(label));
                (name, args)
            }
        }
    }

    /// The operation as a term without its rest: Part 4's line form.
    pub fn head_term(&self) -> Term {
        let (name, args) = self.parts();
        Term::compound(name, args)
    }
}

impl Trace {
    /// Whether the trace follows calls (the series' optimizer and trace
    /// runner work on one flat environment and cannot).
    pub fn crosses_calls(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, TraceOp::Enter { .. } | TraceOp::Leave { .. } | TraceOp::Call { .. }))
    }

    /// The nested term: each operation holds the rest, the last one `loop`.
    pub fn term(&self) -> Term {
        self.ops.iter().rev().fold(Term::atom("loop"), |rest, op| {
            let (name, mut args) = op.parts();
            args.push(rest);
            Term::compound(name, args)
        })
    }

    /// As Parts 2 and 3 print it: `write/1` of the nested term.
    pub fn nested(&self) -> String {
        self.term().to_string_in(Style::Write)
    }

    /// As Part 4 prints it: one operation per line, indented, then `loop`.
    pub fn lines(&self) -> String {
        let mut out = String::new();
        for op in &self.ops {
            out.push_str("  ");
            op.head_term().write(&mut out, Style::Write);
            out.push('\n');
        }
        out.push_str("  loop\n");
        out
    }
}

/// The trace in the readable syntax: one operation per line.
pub fn readable(t: &Trace) -> String {
    use flowc_lang::ast::{Stmt, Terminator};
    use flowc_lang::syntax::readable_print::{arg, constant, name, stmt, terminator};
    let mut out = String::new();
    for op in &t.ops {
        out.push_str("  ");
        let s = match op {
            TraceOp::Op1 { dst, op, arg } => Some(Stmt::Op1 { dst: *dst, op: *op, arg: arg.clone() }),
            TraceOp::Op2 { dst, op, lhs, rhs } => {
                Some(Stmt::Op2 { dst: *dst, op: *op, lhs: lhs.clone(), rhs: rhs.clone() })
            }
            TraceOp::New { dst, class } => Some(Stmt::New { dst: *dst, class: *class }),
            TraceOp::Get { dst, obj, field } => Some(Stmt::Get { dst: *dst, obj: obj.clone(), field: *field }),
            TraceOp::Set { obj, field, value } => {
                Some(Stmt::Set { obj: obj.clone(), field: *field, value: value.clone() })
            }
            TraceOp::Guard { .. } => None,
            TraceOp::Iterations(rounds) => {
                out.push_str("iterations ");
                arg(&mut out, rounds);
                out.push('\n');
                continue;
            }
            // Calls in the readable syntax's words: a followed call is the
            // `call` terminator the trace went through, its frame's end the
            // `return` it reached.
            TraceOp::Enter { dst, func, args, next } => {
                out.push_str("enter ");
                let call = Terminator::Call { dst: *dst, func: *func, args: args.clone(), next: *next };
                terminator(&mut out, &call);
                out.push('\n');
                continue;
            }
            TraceOp::Leave { value } => {
                out.push_str("leave ");
                terminator(&mut out, &Terminator::Return(value.clone()));
                out.push('\n');
                continue;
            }
            TraceOp::Call { dst, func, args } => {
                let mut call = String::new();
                let next = Symbol::intern("_");
                terminator(&mut call, &Terminator::Call { dst: *dst, func: *func, args: args.clone(), next });
                out.push_str(call.trim_end_matches(" then _"));
                out.push_str(" (not followed)\n");
                continue;
            }
        };
        match (s, op) {
            (Some(s), _) => stmt(&mut out, &s),
            (None, TraceOp::Guard { check, resume, label }) => {
                match check {
                    Check::True(v) => {
                        out.push_str("guard ");
                        name(&mut out, *v);
                    }
                    Check::False(v) => {
                        out.push_str("guard not ");
                        name(&mut out, *v);
                    }
                    Check::Value(v, c) => {
                        out.push_str("guard ");
                        name(&mut out, *v);
                        out.push_str(" == ");
                        constant(&mut out, c);
                    }
                    Check::Class(a, c, is) => {
                        out.push_str("guard ");
                        arg(&mut out, a);
                        out.push_str(if *is { " is " } else { " is not " });
                        name(&mut out, *c);
                    }
                    Check::Cold(v) => {
                        out.push_str("guard cold ");
                        name(&mut out, *v);
                    }
                }
                out.push_str(" else resume at ");
                name(&mut out, *label);
                if !resume.is_empty() {
                    out.push_str(" with ");
                    for (i, (k, v)) in resume.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        name(&mut out, *k);
                        out.push_str(" = ");
                        constant(&mut out, v);
                    }
                }
            }
            _ => {}
        }
        out.push('\n');
    }
    out.push_str("  loop\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str) -> Symbol {
        Symbol::intern(name)
    }

    #[test]
    fn a_recording_resumes_at_its_guards_labels_and_its_calls_continuations() {
        let guard = |label: &str| TraceOp::Guard { check: Check::True(s("c")), resume: Vec::new(), label: s(label) };
        let trace = Trace {
            ops: vec![
                guard("out"),
                TraceOp::Enter { dst: s("r"), func: s("f"), args: Vec::new(), next: s("back") },
                guard("inner"),
                TraceOp::Leave { value: Arg::Var(s("c")) },
                guard("later"),
            ],
            objects: ObjectIds { passed: vec![(2, s("taken"))], ..ObjectIds::default() },
            ..Trace::empty(s("head"))
        };
        let labels = ResumeLive::labels_of(&trace, &[None], &[], Some(s("end")));
        let mut want = vec![
            (None, s("head")),
            (None, s("out")),
            (None, s("back")),
            (Some(s("f")), s("inner")),
            (Some(s("f")), s("taken")),
            (None, s("later")),
            (None, s("end")),
        ];
        want.sort_unstable();
        assert_eq!(labels, want);
        let mut live = ResumeLive::default();
        live.insert(None, s("out"), vec![s("c")].into());
        let keeps =
            |label: &str, var: &str| live.live_at(None, s(label)).is_none_or(|l| l.binary_search(&s(var)).is_ok());
        assert!(keeps("out", "c"));
        assert!(!keeps("out", "r"), "a variable dead at its label is left out");
        assert!(keeps("later", "r"), "a label not listed keeps every variable");
    }
}

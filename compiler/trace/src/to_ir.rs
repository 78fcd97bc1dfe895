//! A recorded trace as SSA IR (docs/architecture.md "Traces").
//!
//! A trace starts from a [`Start`] — its parameters, and the frames
//! (base frame first) whose variables it starts with: parameters,
//! constants, or objects a parent trace never allocated (which the trace
//! allocates first, in the order resuming would) — and ends as its
//! [`End`] says:
//! - [`End::Loop`]: one loop whose loop-carried variables are phis, so
//!   nothing like Part 3's "superfluous assignments" is needed before
//!   `loop`. Block `b0` (the preheader) holds the start's allocations and
//!   the `unbound` values of variables the trace creates; it jumps to
//!   `b1`, the loop, which holds one phi per variable the base frame
//!   writes, the trace's operations in order, and a jump back to itself;
//! - [`End::Exit`]: straight-line code in one block, leaving for the
//!   interpreter at a label with the frames as they are;
//! - [`End::Jump`]: straight-line code ending in `jump_trace`, which
//!   continues in another trace with base-frame variables as its
//!   arguments.
//!
//! Guards carry resume data: for each frame from the base inwards, its
//! variables (not a skip's temporaries, [`crate::skip`]) in the
//! interpreter's order (the start's, then new variables
//! in the order the trace first writes them; a variable not yet written
//! in the first iteration is unbound there and is not restored) and, for
//! callers, the pending call. A JIT recording ([`Trace::live`]) keeps
//! only the variables live where each frame resumes — the innermost at
//! the guard's label, a caller at its call's continuation
//! ([`ResumeLive`]); the series' traces keep them all. Calls the trace followed leave no call
//! instruction: their operations are inlined, in a frame of their own —
//! except calls of `pure` functions, which stay calls (their recorded
//! operations are skipped): the optimizer folds them when their arguments
//! are constants, and nothing inside them needs guarding; and calls the
//! tracer did not follow (recorded as `call`), which stay calls too.
//!
//! ## Links that come back
//! A value read from a field and checked to be an object of a class
//! (`r = tape.r; if r is cell ...`), or tested true where it was an
//! object (`if r ...`, a field of objects or 0), that the recording
//! found to be an object the trace already held in another value — the
//! start's, or an earlier read's or allocation's
//! ([`crate::trace::ObjectIds`]) — is assumed to be that value: after
//! the class guard (or truth test), a guard that the two
//! are the same object (leaving, with the guard's record, at the label
//! the recording went on to), and from there the trace uses the earlier
//! value. A doubly linked structure walked out and back (a BF tape's
//! `>>><<<`, whose cells link both ways) then reads each cell's link
//! once: the way back is checked by loads that no later operation waits
//! for, where it was a chain of loads each waiting for the one before
//! (Brainfuck fractal: a third of the compiled code's time), and what
//! the trace knows of the earlier value's fields holds for it.
//!
//! ## Links laid out in a row
//! A link read from a field and checked to be an object of a class (or
//! tested true, where it held an object: a field of objects or 0) that
//! the recording found in the same block of the heap as the object it was
//! read from, some bytes past it ([`crate::trace::ObjectIds::offsets`]),
//! is assumed to lie there every time: after the class guard, a
//! `guard_at` (leaving as above) whose result the trace uses from there.
//! (After a truth test the optimizer keeps it only where the program's
//! facts make the link an object once it is not 0.)
//! Code computes that result from the object read from, so a walk along
//! a chain allocated link after link (a BF tape grown cell by cell, and
//! `[>>>>>>>>>]` over it) is a chain of additions: the links' loads no
//! longer wait for one another, only the guards' comparisons read them.
//! A chain laid out otherwise fails the guard, and its exit gets a bridge
//! as any other; the JIT then assumes nothing at that place again (its
//! class checks listed in [`crate::trace::ObjectIds::unassumed`]) and
//! records a loop leaving there again. The optimizer keeps only the
//! guards on the chain a loop carries round and those of long walks in
//! straight code (`opt/rows.rs`).

use flowc_ir::{
    BlockId, Builder, Function, FunctionKind, GuardKind, InstKind, Operand, ResumeData, ResumeFrame, ResumeValue,
    Terminator, ValueId,
};
use flowc_lang::ast::{Arg, Operator};
use flowc_lang::index::ProgramIndex;
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Program, Symbol, Value};

use crate::trace::{Check, ObjectIds, ResumeLive, Trace, TraceOp};

use rustc_hash::FxHashMap as HashMap;

/// A start value of a variable or field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartValue {
    /// The trace's parameter at this position.
    Param(usize),
    Const(Value),
    /// The start's object at this position ([`Start::objects`]).
    Object(usize),
}

/// One frame a trace starts in.
#[derive(Clone, Debug)]
pub struct StartFrame {
    pub function: Option<Symbol>,
    pub env: Vec<(Symbol, StartValue)>,
    /// For every frame but the innermost: its pending call.
    pub call: Option<(Symbol, Symbol)>,
}

/// An object the trace allocates before its first operation (a parent
/// trace kept it virtual).
#[derive(Clone, Debug)]
pub struct StartObject {
    pub class: Symbol,
    pub fields: Vec<(Symbol, StartValue)>,
}

/// What a trace starts from.
#[derive(Clone, Debug)]
pub struct Start {
    /// The parameters' names (for printing).
    pub params: Vec<Symbol>,
    /// The frames, base first; the innermost runs the trace's first block.
    pub frames: Vec<StartFrame>,
    pub objects: Vec<StartObject>,
    /// Variables of the innermost frame the trace is specialized to: it
    /// starts by guarding each has its value (a bridge of a failing
    /// `guard_value`, for the value that failed it).
    pub promoted: Vec<(Symbol, Value)>,
}

impl Start {
    /// Calls `f` on every value the start names: constants of its frames
    /// and objects, the promoted values.
    pub fn each_value_mut(&mut self, f: &mut impl FnMut(&mut Value)) {
        let envs = self.frames.iter_mut().map(|f| &mut f.env).chain(self.objects.iter_mut().map(|o| &mut o.fields));
        for (_, v) in envs.flatten() {
            if let StartValue::Const(c) = v {
                f(c)
            }
        }
        self.promoted.iter_mut().for_each(|(_, v)| f(v));
    }

    /// A trace that starts in one frame (of `function`, `None` for the main
    /// graph) whose variables `vars`, in order, are its parameters.
    pub fn frame(function: Option<Symbol>, vars: &[Symbol]) -> Start {
        let env = vars.iter().enumerate().map(|(k, v)| (*v, StartValue::Param(k))).collect();
        Start {
            params: vars.to_vec(),
            frames: vec![StartFrame { function, env, call: None }],
            objects: Vec::new(),
            promoted: Vec::new(),
        }
    }

    /// A trace that starts where exit `record` of a trace leaves, with the
    /// exit's `values` (in order: what the code stores there) as its
    /// parameters; `name_of` names the trace's values.
    pub fn exit(name_of: impl Fn(ValueId) -> Option<Symbol>, record: &ResumeData, values: &[ValueId]) -> Start {
        let value = |rv: &ResumeValue| match rv {
            ResumeValue::Operand(Operand::Const(c)) => StartValue::Const(c.clone()),
            ResumeValue::Operand(Operand::Value(v)) => StartValue::Param(
                values.iter().position(|x| x == v).expect("an exit stores the values its record uses"),
            ),
            ResumeValue::Virtual(k) => StartValue::Object(*k as usize),
        };
        let frames = record
            .frames
            .iter()
            .map(|f| StartFrame {
                function: f.function,
                env: f.env.iter().map(|(n, rv)| (*n, value(rv))).collect(),
                call: f.call,
            })
            .collect();
        let objects = record
            .virtuals
            .iter()
            .map(|o| StartObject { class: o.class, fields: o.fields.iter().map(|(n, rv)| (*n, value(rv))).collect() })
            .collect();
        // A parameter is named after the first variable it is the value of,
        // else after the parent's value.
        let params = values
            .iter()
            .map(|v| {
                let named = record
                    .frames
                    .iter()
                    .flat_map(|f| &f.env)
                    .find(|(_, rv)| matches!(rv, ResumeValue::Operand(Operand::Value(x)) if x == v));
                named.map(|(n, _)| *n).or_else(|| name_of(*v)).unwrap_or_else(|| Symbol::intern("v"))
            })
            .collect();
        Start { params, frames, objects, promoted: Vec::new() }
    }
}

/// How a trace ends.
#[derive(Clone, Debug)]
pub enum End {
    /// Back to its start: a loop (single-frame starts only).
    Loop,
    /// A loop that carries only the variables `live` of its frame, those
    /// live at its head (the JIT's): the others the trace writes start
    /// every iteration unbound, so their values from one iteration never
    /// tie the next. The variables `same` (objects the recorded iteration
    /// ended with as it started) are assumed to come back to what they
    /// were: each iteration ends with a guard that the value it made is
    /// the one it started with (leaving at the head, with the values it
    /// made, if not), and the next iteration starts with that one — so
    /// what the loop reads through it is the same every iteration.
    LiveLoop { live: Vec<Symbol>, same: Vec<Symbol> },
    /// Leaving for the interpreter at this label of the innermost frame.
    Exit(Symbol),
    /// Continuing in trace `target`, whose parameters are these variables
    /// of the base frame (every one bound there).
    Jump { target: Symbol, params: Vec<Symbol> },
}

/// One frame's variables while converting.
struct Frame {
    function: Option<Symbol>,
    vars: flowc_lang::symbol::SymbolIndexMap<Operand>,
    call: Option<(Symbol, Symbol)>,
}

impl Frame {
    fn read(&self, a: &Arg) -> Operand {
        match a {
            Arg::Var(v) => self.vars.get(v).cloned().unwrap_or_else(|| panic!("the trace reads {v} after writing it")),
            Arg::Const(c) => Operand::Const(c.clone()),
        }
    }

    fn write(&mut self, var: Symbol, value: Operand) {
        self.vars.insert(var, value);
    }
}

/// Variables the base frame writes, in the order of their first write.
fn base_writes(trace: &Trace) -> Vec<Symbol> {
    let mut depth = 0usize;
    let mut out: Vec<Symbol> = Vec::new();
    for op in &trace.ops {
        let dst = match op {
            TraceOp::Enter { dst, .. } => {
                depth += 1;
                // The result lands in the caller.
                (depth == 1).then_some(*dst)
            }
            TraceOp::Leave { .. } => {
                depth -= 1;
                None
            }
            TraceOp::Op1 { dst, .. }
            | TraceOp::Op2 { dst, .. }
            | TraceOp::New { dst, .. }
            | TraceOp::Get { dst, .. }
            | TraceOp::Call { dst, .. } => (depth == 0).then_some(*dst),
            TraceOp::Set { .. } | TraceOp::Guard { .. } | TraceOp::Iterations(_) => None,
        };
        if let Some(d) = dst.filter(|d| !crate::skip::is_temporary(*d)) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// Converts `trace` of the program `index` indexes, recorded from
/// `start`, into trace function `name` ending as `end` says.
pub fn convert(index: &ProgramIndex, name: Symbol, trace: &Trace, start: &Start, end: &End) -> Function {
    convert_with_links(index, name, trace, start, end, true).0
}

/// [`convert`], assuming links come back (module docs) if `links`; and
/// how many it assumed. Links laid out in a row are assumed either way.
pub fn convert_with_links(
    index: &ProgramIndex,
    name: Symbol,
    trace: &Trace,
    start: &Start,
    end: &End,
    links: bool,
) -> (Function, usize) {
    // About an instruction per recorded operation (and the start's
    // objects and checks): the arenas are not regrown as the trace fills.
    let insts = trace.ops.len() + start.params.len() + start.objects.len() * 4 + 8;
    let mut b = Builder::with_capacity(FunctionKind::Trace, name, flowc_ir::Capacity { blocks: 2, insts });
    let entry = b.entry();
    let params: Vec<ValueId> = start.params.iter().map(|n| b.param(Some(*n))).collect();
    let objects = allocate(&mut b, entry, start, &params);
    let live = trace.live.as_deref();
    let value = |v: &StartValue| match v {
        StartValue::Param(k) => Operand::Value(params[*k]),
        StartValue::Const(c) => Operand::Const(c.clone()),
        StartValue::Object(k) => Operand::Value(objects[*k]),
    };
    let mut frames: Vec<Frame> = start
        .frames
        .iter()
        .map(|f| Frame {
            function: f.function,
            vars: f.env.iter().map(|(n, v)| (*n, value(v))).collect(),
            call: f.call,
        })
        .collect();
    for (var, value) in &start.promoted {
        let top = frames.len() - 1;
        let kind = GuardKind::Value(frames[top].read(&Arg::Var(*var)), value.clone());
        let resume = b.resume(snapshot(&frames, live, trace.anchor));
        b.inst(entry, InstKind::Guard { kind, resume, label: trace.anchor }, None);
        frames[top].write(*var, Operand::Const(value.clone()));
    }
    let looping = match end {
        End::Loop => Some(None),
        End::LiveLoop { live, .. } => Some(Some(live.as_slice())),
        _ => None,
    };
    let body = match looping {
        Some(_) => {
            assert_eq!(frames.len(), 1, "loops start in one frame");
            b.block(Some(trace.anchor))
        }
        None => entry,
    };
    // Loop-carried variables get phis; new ones start unbound.
    let mut phis: Vec<(Symbol, ValueId)> = Vec::new();
    if let Some(live) = looping {
        for var in base_writes(trace) {
            if live.is_some_and(|l| !l.contains(&var)) {
                frames[0].vars.shift_remove(&var);
                continue;
            }
            let initial = match frames[0].vars.get(&var) {
                Some(o) => o.clone(),
                None => Operand::Value(b.inst(entry, InstKind::Unbound(var), Some(var)).expect("unbound has a result")),
            };
            let phi = b.phi(body, vec![(entry, initial)], Some(var));
            frames[0].write(var, Operand::Value(phi));
            phis.push((var, phi));
        }
        b.terminate(entry, Terminator::Jump(body));
    }
    let mut links = Links::new(&trace.objects, links, &frames);
    let mut skipping = 0usize;
    for (k, op) in trace.ops.iter().enumerate() {
        let before = b.func.blocks[body].insts.len();
        match op {
            _ if skipping > 0 => match op {
                TraceOp::Enter { .. } => skipping += 1,
                TraceOp::Leave { .. } => skipping -= 1,
                _ => {}
            },
            TraceOp::Enter { dst, func, args, .. } if index.is_pure(*func) => {
                let top = frames.len() - 1;
                let args = args.iter().map(|a| frames[top].read(a)).collect();
                let v = b.inst(body, InstKind::Call { func: *func, args }, Some(*dst)).unwrap();
                frames[top].write(*dst, Operand::Value(v));
                skipping = 1;
            }
            _ => {
                emit(index, &mut b, body, &mut frames, op, live);
                links.after(k, op, &mut b, body, &mut frames, live);
            }
        }
        if let Some(&site) = trace.sites.get(k) {
            for n in before..b.func.blocks[body].insts.len() {
                let i = b.func.blocks[body].insts[n];
                b.func.sites.set_inst(i, site);
            }
        }
    }
    match end {
        End::Loop | End::LiveLoop { .. } => {
            let same: &[Symbol] = match end {
                End::LiveLoop { same, .. } => same,
                _ => &[],
            };
            let mut checked = None;
            for (var, phi) in phis {
                let mut back = frames[0].vars[&var].clone();
                if same.contains(&var) && back != Operand::Value(phi) {
                    // The record of the head as this iteration leaves it.
                    let resume = *checked.get_or_insert_with(|| b.resume(snapshot(&frames, live, trace.anchor)));
                    guard_same(&mut b, body, back, phi, resume, trace.anchor);
                    back = Operand::Value(phi);
                }
                let flowc_ir::ValueDef::Inst(i) = b.func.values[phi].def else { unreachable!("phis are instructions") };
                if let InstKind::Phi(inputs) = &mut b.func.insts[i].kind {
                    inputs.push((body, back));
                }
            }
            b.terminate(body, Terminator::Jump(body));
        }
        End::Exit(label) => {
            let resume = b.resume(snapshot(&frames, live, *label));
            b.terminate(body, Terminator::Exit { resume, label: *label });
        }
        End::Jump { target, params } => {
            let args = params.iter().map(|p| frames[0].read(&Arg::Var(*p))).collect();
            b.terminate(body, Terminator::JumpTrace { target: *target, args });
        }
    }
    (b.finish(), links.assumed)
}

/// `eq made, known; guard_true`, leaving with record `resume` at `label`:
/// the object `made` is the one `known` holds.
fn guard_same(
    b: &mut Builder,
    block: BlockId,
    made: Operand,
    known: ValueId,
    resume: flowc_ir::ResumeId,
    label: Symbol,
) {
    let eq = InstKind::Op {
        op: Operator::Known(Op::Eq),
        form: Form::Generic,
        args: [made, Operand::Value(known)].into_iter().collect(),
    };
    let c = b.inst(block, eq, None).expect("ops have results");
    b.inst(block, InstKind::Guard { kind: GuardKind::True(Operand::Value(c)), resume, label }, None);
}

/// The link speculation of the conversion (module docs, "Links that come
/// back"): which value first held each object the recording met.
struct Links<'t> {
    seen: &'t ObjectIds,
    /// Each object, the first value that held it.
    holder: HashMap<u64, ValueId>,
    /// Each value known to hold an object, that object.
    object: HashMap<ValueId, u64>,
    /// The values read from fields (only those are assumed to be another:
    /// two variables the start gives one object are not assumed to stay
    /// one).
    read: rustc_hash::FxHashSet<ValueId>,
    /// The next entries of `seen.results` and `seen.passed`.
    result: usize,
    passed: usize,
    /// The values read by a `get` the recording found laid out next to
    /// the object read from: that object, and how many bytes past it.
    near: HashMap<ValueId, (Operand, i64)>,
    /// The next entry of `seen.offsets`.
    offset: usize,
    /// Whether links are assumed to come back.
    back: bool,
    /// Links assumed to come back so far.
    assumed: usize,
}

impl<'t> Links<'t> {
    /// Knowing what the start's `frames` (the loop's phis in place) hold;
    /// assuming links come back if `back`.
    fn new(seen: &'t ObjectIds, back: bool, frames: &[Frame]) -> Links<'t> {
        let mut links = Links {
            seen,
            holder: HashMap::default(),
            object: HashMap::default(),
            read: Default::default(),
            result: 0,
            passed: 0,
            near: HashMap::default(),
            offset: 0,
            back,
            assumed: 0,
        };
        for &(k, var, id) in &seen.start {
            if let Some(Operand::Value(v)) = frames.get(k as usize).and_then(|f| f.vars.get(&var)) {
                links.note(*v, id);
            }
        }
        links
    }

    fn note(&mut self, v: ValueId, id: u64) {
        self.object.insert(v, id);
        self.holder.entry(id).or_insert(v);
    }

    /// After operation `k` (`op`) was converted into `block`.
    fn after(
        &mut self,
        k: usize,
        op: &TraceOp,
        b: &mut Builder,
        block: BlockId,
        frames: &mut [Frame],
        live: Option<&ResumeLive>,
    ) {
        let k = k as u32;
        let top = frames.len() - 1;
        if let Some(&id) = at(&self.seen.results, &mut self.result, k) {
            if let TraceOp::Get { dst, .. } | TraceOp::New { dst, .. } = op {
                if let Some(&Operand::Value(v)) = frames[top].vars.get(dst) {
                    self.note(v, id);
                    if matches!(op, TraceOp::Get { .. }) {
                        self.read.insert(v);
                    }
                }
            }
        }
        if let Some(&delta) = at(&self.seen.offsets, &mut self.offset, k) {
            if let TraceOp::Get { dst, .. } = op {
                if let Some(&Operand::Value(v)) = frames[top].vars.get(dst) {
                    // The conversion made the read a `get` of the object
                    // read from (not a constant it folded).
                    if let flowc_ir::ValueDef::Inst(i) = b.func.values[v].def {
                        if let InstKind::Get { obj, .. } = &b.func.insts[i].kind {
                            self.near.insert(v, (obj.clone(), delta));
                        }
                    }
                }
            }
        }
        let Some(&taken) = at(&self.seen.passed, &mut self.passed, k) else { return };
        let a = match op {
            TraceOp::Guard { check: Check::Class(a, _, true), .. } => a.clone(),
            TraceOp::Guard { check: Check::True(var), .. } => Arg::Var(*var),
            _ => return,
        };
        let Operand::Value(made) = frames[top].read(&a) else { return };
        if !self.read.contains(&made) {
            return;
        }
        let Some(&id) = self.object.get(&made) else { return };
        let known = self.holder.get(&id).copied().filter(|&known| known != made && self.back);
        let unassumed = self.seen.unassumed.binary_search_by_key(&k, |&(i, _)| i).is_ok();
        let near = self.near.get(&made).cloned().filter(|_| !unassumed);
        if known.is_none() && near.is_none() {
            return;
        }
        // The class guard's record, the state the guard saw, where it
        // leaves for the same label (records keep what is live there).
        let last = b.func.blocks[block].insts.last().copied();
        let resume = match last.map(|i| &b.func.insts[i].kind) {
            Some(InstKind::Guard { resume, label, .. }) if live.is_none() || *label == taken => *resume,
            _ => b.resume(snapshot(frames, live, taken)),
        };
        let now = if let Some(known) = known {
            guard_same(b, block, Operand::Value(made), known, resume, taken);
            self.assumed += 1;
            known
        } else if let Some((base, delta)) = near {
            let kind = GuardKind::At(Operand::Value(made), base, delta);
            let name = match a {
                Arg::Var(var) => Some(var),
                Arg::Const(_) => None,
            };
            let at = b.inst(block, InstKind::Guard { kind, resume, label: taken }, name);
            let at = at.expect("guard_at has a result");
            // Where the trace meets this object again, it is this.
            self.holder.insert(id, at);
            self.object.insert(at, id);
            self.read.insert(at);
            at
        } else {
            return;
        };
        for f in frames.iter_mut() {
            for v in f.vars.values_mut() {
                if *v == Operand::Value(made) {
                    *v = Operand::Value(now);
                }
            }
        }
    }
}

/// The entry of `entries` (ascending by index) for index `k`, moving
/// `next` past it and past those of operations not converted (skipped).
fn at<'e, T>(entries: &'e [(u32, T)], next: &mut usize, k: u32) -> Option<&'e T> {
    while entries.get(*next).is_some_and(|(i, _)| *i < k) {
        *next += 1;
    }
    let (i, x) = entries.get(*next)?;
    (*i == k).then(|| {
        *next += 1;
        x
    })
}

/// Allocates the start's objects in `block`, in the order resuming the
/// same record would (first reference, walking frames then fields), so
/// objects get the numbers they would have got in the interpreter.
fn allocate(b: &mut Builder, block: BlockId, start: &Start, params: &[ValueId]) -> Vec<ValueId> {
    let mut made: Vec<Option<ValueId>> = vec![None; start.objects.len()];
    let mut sets: Vec<(ValueId, Symbol, StartValue)> = Vec::new();
    fn make(
        k: usize,
        b: &mut Builder,
        block: BlockId,
        start: &Start,
        made: &mut Vec<Option<ValueId>>,
        sets: &mut Vec<(ValueId, Symbol, StartValue)>,
    ) {
        if made[k].is_some() {
            return;
        }
        let v = b.inst(block, InstKind::New(start.objects[k].class), None).expect("new has a result");
        made[k] = Some(v);
        for (field, fv) in &start.objects[k].fields {
            if let StartValue::Object(j) = fv {
                make(*j, b, block, start, made, sets);
            }
            sets.push((v, *field, fv.clone()));
        }
    }
    for f in &start.frames {
        for (_, v) in &f.env {
            if let StartValue::Object(k) = v {
                make(*k, b, block, start, &mut made, &mut sets);
            }
        }
    }
    let made: Vec<ValueId> = made
        .into_iter()
        .enumerate()
        .map(|(k, v)| match v {
            Some(v) => v,
            // An object only another unreferenced object refers to.
            None => b.inst(block, InstKind::New(start.objects[k].class), None).expect("new has a result"),
        })
        .collect();
    for (obj, field, fv) in sets {
        let value = match fv {
            StartValue::Param(k) => Operand::Value(params[k]),
            StartValue::Const(c) => Operand::Const(c),
            StartValue::Object(j) => Operand::Value(made[j]),
        };
        b.inst(block, InstKind::set(Operand::Value(obj), field, value), None);
    }
    made
}

fn emit(
    index: &ProgramIndex,
    b: &mut Builder,
    body: BlockId,
    frames: &mut Vec<Frame>,
    op: &TraceOp,
    live: Option<&ResumeLive>,
) {
    let top = frames.len() - 1;
    match op {
        TraceOp::Op1 { dst, op: Operator::Known(flowc_lang::ops::Op::Same), arg } => {
            let o = frames[top].read(arg);
            frames[top].write(*dst, o);
        }
        TraceOp::Op1 { dst, op, arg } => {
            let args = [frames[top].read(arg)];
            if let Some(c) = folded(op, &args) {
                frames[top].write(*dst, Operand::Const(c));
                return;
            }
            let v = b.inst(body, InstKind::generic_op(*op, flowc_ir::Args::from_iter(args)), Some(*dst)).unwrap();
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::Op2 { dst, op, lhs, rhs } => {
            let args = [frames[top].read(lhs), frames[top].read(rhs)];
            if let Some(c) = folded(op, &args) {
                frames[top].write(*dst, Operand::Const(c));
                return;
            }
            let v = b.inst(body, InstKind::generic_op(*op, args), Some(*dst)).unwrap();
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::New { dst, class } => {
            let v = b.inst(body, InstKind::New(*class), Some(*dst)).unwrap();
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::Get { dst, obj, field } => {
            let obj = frames[top].read(obj);
            let v = b.inst(body, InstKind::get(obj, *field), Some(*dst)).unwrap();
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::Set { obj, field, value } => {
            let (obj, value) = (frames[top].read(obj), frames[top].read(value));
            b.inst(body, InstKind::set(obj, *field, value), None);
        }
        TraceOp::Iterations(rounds) => {
            b.inst(body, InstKind::Iterations(frames[top].read(rounds)), None);
        }
        TraceOp::Guard { check, label, .. } => {
            let f = &frames[top];
            let kind = match check {
                Check::True(v) => GuardKind::True(f.read(&Arg::Var(*v))),
                Check::False(v) => GuardKind::False(f.read(&Arg::Var(*v))),
                Check::Value(v, c) => GuardKind::Value(f.read(&Arg::Var(*v)), c.clone()),
                Check::Class(a, class, true) => GuardKind::Class(f.read(a), *class),
                Check::Class(a, class, false) => GuardKind::NotClass(f.read(a), *class),
                Check::Cold(v) => GuardKind::Cold(f.read(&Arg::Var(*v))),
            };
            // A guard on a constant the recording passed holds every time.
            if kind.operand().as_const().is_some_and(|c| kind.holds(c, None)) {
                return;
            }
            let resume = b.resume(snapshot(frames, live, *label));
            b.inst(body, InstKind::Guard { kind, resume, label: *label }, None);
            // Past a promotion the variable is that constant.
            if let Check::Value(v, c) = check {
                frames[top].write(*v, Operand::Const(c.clone()));
            }
        }
        TraceOp::Enter { dst, func, args, next } => {
            let values: Vec<Operand> = args.iter().map(|a| frames[top].read(a)).collect();
            frames[top].call = Some((*dst, *next));
            let params = &index.function(*func).expect("the tracer found the function").params;
            let vars = params.iter().copied().zip(values).collect();
            frames.push(Frame { function: Some(*func), vars, call: None });
        }
        TraceOp::Call { dst, func, args } => {
            let args = args.iter().map(|a| frames[top].read(a)).collect();
            let v = b.inst(body, InstKind::Call { func: *func, args }, Some(*dst)).expect("calls have results");
            frames[top].write(*dst, Operand::Value(v));
        }
        TraceOp::Leave { value } => {
            let v = frames[top].read(value);
            frames.pop();
            let caller = frames.last_mut().expect("a caller");
            let (dst, _) = caller.call.take().expect("the caller waits");
            caller.write(dst, v);
        }
    }
}

/// The value of `op` on `args` when they are constants and computing it
/// here is what running it would do: it succeeds and gives a small
/// integer or an atom (a list, a big integer or an object made here would
/// be one shared value, not one per run). A dispatch on a constant program
/// at a promoted position folds so as it is converted, and the optimizer
/// is not given the if-chain only to fold it again.
fn folded(op: &Operator, args: &[Operand]) -> Option<Value> {
    let Operator::Known(op) = op else { return None };
    if op.arity() != args.len() {
        return None;
    }
    let value = match args {
        [a] => op.eval1(a.as_const()?),
        [a, b] => op.eval2(a.as_const()?, b.as_const()?),
        _ => return None,
    };
    value.ok().filter(|v| matches!(v, Value::Int(_) | Value::Atom(_)))
}

fn snapshot(frames: &[Frame], live: Option<&ResumeLive>, label: Symbol) -> ResumeData {
    let top = frames.len().saturating_sub(1);
    let frames = frames
        .iter()
        .enumerate()
        .map(|(k, f)| {
            // The innermost frame resumes at `label`, the others where
            // their calls continue.
            let at = if k == top { Some(label) } else { f.call.map(|(_, next)| next) };
            let kept = live.zip(at).and_then(|(live, at)| live.live_at(f.function, at));
            // A skip's temporaries are no variables of the program (and
            // so in no list of live ones).
            let keeps = |n: Symbol| match kept {
                Some(kept) => kept.binary_search(&n).is_ok(),
                None => !crate::skip::is_temporary(n),
            };
            // Room for all it keeps at once (grown from nothing, a record
            // of 20 variables was made four times over).
            let mut env = Vec::with_capacity(kept.map_or(f.vars.len(), <[Symbol]>::len).min(f.vars.len()));
            env.extend(f.vars.iter().filter(|(n, _)| keeps(**n)).map(|(n, o)| (*n, ResumeValue::Operand(o.clone()))));
            ResumeFrame { function: f.function, env, call: if k < top { f.call } else { None } }
        })
        .collect();
    ResumeData { frames, virtuals: Vec::new() }
}

/// The series' conversion: `trace`, recorded from main-graph environment
/// `start` (whose variables, in order, become the parameters), as a loop.
pub fn to_ir(program: &Program, trace: &Trace, start: &flowc_lang::Env) -> Function {
    let vars: Vec<Symbol> = start.keys().copied().collect();
    convert(&ProgramIndex::new(program), trace.anchor, trace, &Start::frame(None, &vars), &End::Loop)
}

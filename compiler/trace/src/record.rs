//! The tracer of Part 2 (`trace/4`): normal interpretation that also logs
//! every operation, from an anchor label until control jumps back to it.
//! `if` becomes `guard_true`/`guard_false` (the label of the branch not
//! taken is where a failing guard resumes), `promote` becomes `guard_value`
//! with the value seen, and — beyond the series — `if_class` becomes a class
//! guard and objects are traced like other operations.
//!
//! One departure: the series' tracer looks a promoted variable up and so
//! fails on an unbound one, where the interpreter (for which `promote` is a
//! jump) does not; here an unbound promoted variable records no guard, so
//! tracing never changes what a program does.
//!
//! The environment is the series' ordered one ([`Env`]). Objects are
//! numbered by a counter shared with the run that follows ([`Heap`]), so
//! they print as they would under the interpreter alone.

use flowc_lang::ast::{Arg, Block, Program, Stmt, Terminator};
use flowc_lang::heap::Layout;
use flowc_lang::index::ProgramIndex;
use flowc_lang::interp::objects;
use flowc_lang::interp::{ErrorKind, Location, ResumeFrame, RuntimeError};
use flowc_lang::syntax::readable_print::{stmt_to_string, terminator_to_string};
use flowc_lang::{env, Env, Symbol, Value};

use flowc_ir::Site;

use crate::constant_loops::{runs_as_constants_say, ConstantLoops};
use crate::trace::{Check, ObjectIds, Trace, TraceOp};

/// How tracing ended.
#[derive(Debug)]
pub enum Recorded {
    /// The loop closed: the trace, and the environment at the jump back.
    Loop { trace: Box<Trace>, env: Env },
    /// The program printed (and stopped) before the loop closed.
    Printed(Value),
}

#[derive(Debug)]
pub enum TraceError {
    Runtime(RuntimeError),
    /// No stop within `limit` operations. Recording is execution, so the
    /// program has run up to `state`, where an interpreter can carry on.
    /// `biggest`: the called function whose frames recorded the most
    /// operations (PyPy's `find_biggest_function`), if calls were
    /// followed: a trace that calls it rather than follow it may close.
    TooLong {
        limit: usize,
        state: Suspended,
        biggest: Option<Symbol>,
    },
    /// A called function's frame arrived at one of its labels `limit`
    /// times: its loop would unroll into the trace (a loop of its own,
    /// better called than followed). `state` as for `TooLong`.
    Unrolls {
        function: Symbol,
        label: Symbol,
        limit: u32,
        state: Suspended,
    },
}

impl TraceError {
    /// For a recording stopped by its limits: where the program is, and
    /// the function better called than followed.
    pub fn suspended(self) -> (Suspended, Option<Symbol>) {
        match self {
            TraceError::TooLong { state, biggest, .. } => (state, biggest),
            TraceError::Unrolls { state, function, .. } => (state, Some(function)),
            TraceError::Runtime(e) => panic!("not a stopped recording: {e}"),
        }
    }
}

/// How far recording goes.
#[derive(Copy, Clone, Debug)]
pub struct Limits<'a> {
    /// Most operations.
    pub ops: usize,
    /// Most arrivals at one label of one called function's frame.
    pub unroll: u32,
    /// Promotions not to guard, by function (`None`: the main graph) and
    /// the label they go on to: megamorphic ones, whose variable the
    /// trace keeps as a variable (see the JIT's "Megamorphic
    /// promotions").
    pub unpromoted: Option<&'a PromoteSites>,
    /// Promotions recorded as `guard_cold` (the JIT's dispatch tier,
    /// `Check::Cold`), resuming at the promoting block itself: the trace
    /// runs for any value of the variable, and leaves where the position
    /// has code of its own or is hot. By function and the label of the
    /// promoting block (not the label it goes on to: another block
    /// promoting on to the same label is not the tier's, and what it
    /// runs first was never judged to be safe to run again).
    pub cold: Option<&'a PromoteSites>,
    /// Whether the lists the recording starts with are constants of the
    /// trace (it assumes them: the JIT's `speculate::assume_lists`), for
    /// what the recording takes for constants ([`Consts`]).
    pub lists_assumed: bool,
    /// Per frame it starts with, the variables that are constants of the
    /// trace besides (a bridge's: those its exit's record holds as
    /// constants).
    pub start_constants: &'a [Vec<Symbol>],
    /// Loops of the base frame the recording follows rather than stops
    /// at, where the trace's constants decide their rounds
    /// ([`crate::constant_loops`]; the JIT's recordings, while they are
    /// shorter than a quarter of `ops`).
    pub constant_loops: Option<&'a ConstantLoops>,
}

/// Promotions, by function and a label: the one they go on to, or for
/// [`Limits::cold`] the promoting block's.
pub type PromoteSites = std::collections::HashSet<(Option<Symbol>, Symbol)>;

impl Limits<'_> {
    /// `ops` operations, loops in called functions unrolled without limit
    /// (the series' tracer).
    pub fn ops(ops: usize) -> Limits<'static> {
        Limits {
            ops,
            unroll: u32::MAX,
            unpromoted: None,
            cold: None,
            lists_assumed: false,
            start_constants: &[],
            constant_loops: None,
        }
    }
}

/// Where recording stopped: the frames from the recording's base frame
/// inwards, the innermost about to run block `label`.
#[derive(Debug)]
pub struct Suspended {
    pub frames: Vec<ResumeFrame>,
    pub label: Symbol,
}

/// What the recorder does on arriving at a label of its base frame
/// ([`record_path`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    Continue,
    Stop,
    /// Records and runs these operations (a counted inner loop's
    /// iterations but its last, [`crate::skip`]), then goes on: their
    /// guards leave at the label arrived at, and must hold here.
    Skip(Vec<TraceOp>),
}

/// How recording a path ended.
#[derive(Debug)]
pub enum Path {
    /// Recording stopped on arriving at `label` in the base frame (the
    /// caller said so): the trace, and the base frame there.
    Stopped { trace: Trace, frame: ResumeFrame, label: Symbol },
    /// The base frame is about to run block `label`, which returns from
    /// it: a trace cannot follow (its caller is not recorded).
    Returns { trace: Trace, frame: ResumeFrame, label: Symbol },
    /// The program printed (and stopped) first.
    Printed(Value),
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceError::Runtime(e) => write!(f, "{e}"),
            TraceError::TooLong { limit, .. } => {
                write!(f, "the loop did not close within {limit} traced operations")
            }
            TraceError::Unrolls { function, label, limit, .. } => {
                write!(f, "the loop at {function}:{label} ran {limit} iterations in one call")
            }
        }
    }
}

/// What tracing, running traces and resuming share to make objects: the
/// allocation counter and the slots of the program's objects.
#[derive(Debug, Clone, Copy)]
pub struct Heap {
    pub allocations: u64,
    pub layout: &'static Layout,
}

impl Heap {
    /// Objects of `program`, numbered from 1.
    pub fn new(program: &Program) -> Heap {
        Heap { allocations: 0, layout: program.layout() }
    }
}

/// Reads an operand (`resolve/3`).
pub fn resolve(a: &Arg, env: &Env) -> Result<Value, ErrorKind> {
    borrow(a, env).cloned()
}

/// Reads an operand without a copy (an object read from or written to,
/// integers tried for the fast path: [`resolve`] without the clone).
fn borrow<'e>(a: &'e Arg, env: &'e Env) -> Result<&'e Value, ErrorKind> {
    match a {
        // (The error made only when it is one: an eager `ErrorKind` was
        // built and dropped for every operand read.)
        Arg::Var(v) => env.get(v).ok_or_else(|| ErrorKind::Unbound(*v)),
        Arg::Const(c) => Ok(c),
    }
}

/// Executes one straight-line operation on `env` — the interpreter's rules,
/// shared by the tracer and by trace execution.
pub fn exec(
    op: &TraceOp,
    env: &mut Env,
    heap: &mut Heap,
    immutable: &dyn Fn(Symbol, Symbol) -> bool,
) -> Result<(), ErrorKind> {
    match op {
        TraceOp::Op1 { dst, op, arg } => {
            let a = resolve(arg, env)?;
            let v = apply(*op, &[a])?;
            env::write(env, *dst, v);
        }
        TraceOp::Op2 { dst, op, lhs, rhs } => {
            // Integers of 64 bits: no copies, no call (the interpreter's
            // fast path; anything else takes the general one below).
            if let (flowc_lang::ast::Operator::Known(o), Ok(Value::Int(x)), Ok(Value::Int(y))) =
                (op, borrow(lhs, env), borrow(rhs, env))
            {
                if let Some(r) = o.eval_ints(*x, *y) {
                    env::write(env, *dst, Value::Int(r));
                    return Ok(());
                }
            }
            let a = resolve(lhs, env)?;
            let b = resolve(rhs, env)?;
            let v = apply(*op, &[a, b])?;
            env::write(env, *dst, v);
        }
        TraceOp::New { dst, class } => {
            heap.allocations += 1;
            env::write(env, *dst, objects::new_object(heap.allocations, *class, heap.layout));
        }
        TraceOp::Get { dst, obj, field } => {
            let v = objects::get(borrow(obj, env)?, *field)?;
            env::write(env, *dst, v);
        }
        TraceOp::Set { obj, field, value } => {
            let o = borrow(obj, env)?;
            let v = resolve(value, env)?;
            objects::set(o, *field, v, immutable)?;
        }
        // Counted work, nothing the program sees.
        TraceOp::Iterations(_) => {}
        TraceOp::Guard { .. } | TraceOp::Enter { .. } | TraceOp::Leave { .. } | TraceOp::Call { .. } => {
            unreachable!("control operations are not executed by exec")
        }
    }
    Ok(())
}

fn apply(op: flowc_lang::ast::Operator, args: &[Value]) -> Result<Value, ErrorKind> {
    match op {
        flowc_lang::ast::Operator::Known(o) if o.arity() == args.len() => o.eval(args).map_err(ErrorKind::from_op),
        other => Err(ErrorKind::MissingOp(Symbol::intern(other.name()))),
    }
}

/// The trace operation of a statement (its operands as written).
fn op_of(s: &Stmt) -> TraceOp {
    match s {
        Stmt::Op1 { dst, op, arg } => TraceOp::Op1 { dst: *dst, op: *op, arg: arg.clone() },
        Stmt::Op2 { dst, op, lhs, rhs } => TraceOp::Op2 { dst: *dst, op: *op, lhs: lhs.clone(), rhs: rhs.clone() },
        Stmt::New { dst, class } => TraceOp::New { dst: *dst, class: *class },
        Stmt::Get { dst, obj, field } => TraceOp::Get { dst: *dst, obj: obj.clone(), field: *field },
        Stmt::Set { obj, field, value } => TraceOp::Set { obj: obj.clone(), field: *field, value: value.clone() },
    }
}

fn error(kind: ErrorKind, function: Option<Symbol>, b: &Block, index: usize) -> TraceError {
    let is_terminator = index >= b.body.len();
    let text = if is_terminator { terminator_to_string(&b.term) } else { stmt_to_string(&b.body[index]) };
    TraceError::Runtime(RuntimeError {
        kind,
        at: Some(Location { function, block: b.label, statement: index + 1, is_terminator, text }),
    })
}

/// The site of statement `index` (0-based; the body's length for the
/// terminator) of block `b` of `function`.
fn site(function: Option<Symbol>, b: &Block, index: usize) -> Site {
    Site { function, block: b.label, statement: index as u32 + 1, is_terminator: index >= b.body.len() }
}

/// One activation while tracing: its blocks are found by label in the
/// program's index.
struct TraceFrame {
    function: Option<Symbol>,
    env: Env,
    /// When this frame is waiting for a callee: the result variable and
    /// the label to continue at.
    call: Option<(Symbol, Symbol)>,
    /// Arrivals at each label of the frame's blocks while recording (kept
    /// for called functions' frames only).
    arrivals: Vec<(Symbol, u32)>,
    /// Variables whose values the trace holds as constants
    /// ([`Consts`]).
    consts: Consts,
    /// Whether every test of a variable in a loop of this frame tested a
    /// constant so far, and every class test that may leave a loop
    /// ([`ProgramIndex::leaves_loop`]) did too: its loops run the rounds
    /// its constants say (a BF interpreter's `move` by a distance the
    /// program fixes, whose test of the link it walks stays in the loop
    /// either way), so a called function's are unrolled past
    /// [`Limits::unroll`] (see "Loops in called functions").
    fixed: bool,
}

/// The variables of a frame that hold constants of the trace: bound to a
/// constant, to an operation of constants (operations read no heap but
/// immutable lists), a promoted variable once promoted, a list (lists are
/// immutable, and a trace assumes those it starts with), a parameter
/// passed a constant, a call's result that returned one.
#[derive(Clone, Debug, Default)]
struct Consts(rustc_hash::FxHashSet<Symbol>);

impl Consts {
    /// A frame's start: its lists, if the trace assumes them.
    fn of_env(env: &Env, lists_assumed: bool) -> Consts {
        if !lists_assumed {
            return Consts::default();
        }
        Consts(env.iter().filter(|(_, v)| matches!(v, Value::List(_))).map(|(n, _)| *n).collect())
    }

    fn holds(&self, a: &Arg) -> bool {
        match a {
            Arg::Const(_) => true,
            Arg::Var(v) => self.0.contains(v),
        }
    }

    fn set(&mut self, v: Symbol, constant: bool) {
        if constant {
            self.0.insert(v);
        } else {
            self.0.remove(&v);
        }
    }

    /// After operation `op` ran.
    fn after(&mut self, op: &TraceOp) {
        match op {
            TraceOp::Op1 { dst, arg, .. } => self.set(*dst, self.holds(arg)),
            TraceOp::Op2 { dst, lhs, rhs, .. } => self.set(*dst, self.holds(lhs) && self.holds(rhs)),
            TraceOp::New { dst, .. } | TraceOp::Get { dst, .. } | TraceOp::Call { dst, .. } => self.set(*dst, false),
            _ => {}
        }
    }
}

impl TraceFrame {
    fn of(
        index: &ProgramIndex,
        f: &ResumeFrame,
        lists_assumed: bool,
        constants: &[Symbol],
    ) -> Result<TraceFrame, TraceError> {
        if let Some(name) = f.function.filter(|name| index.function(*name).is_none()) {
            let kind = ErrorKind::UnknownFunction(name);
            return Err(TraceError::Runtime(RuntimeError { kind, at: None }));
        }
        let env: Env = f.env.iter().cloned().collect();
        let mut consts = Consts::of_env(&env, lists_assumed);
        consts.0.extend(constants.iter().copied());
        Ok(TraceFrame { function: f.function, consts, env, call: f.call, arrivals: Vec::new(), fixed: true })
    }

    fn resume_frame(&self) -> ResumeFrame {
        ResumeFrame {
            function: self.function,
            env: self.env.iter().map(|(k, v)| (*k, v.clone())).collect(),
            call: self.call,
        }
    }
}

/// Traces `program` from main-graph label `anchor` with environment `env`,
/// following calls (their operations are recorded between `enter` and
/// `leave`). The loop closes only at a jump to `anchor` in the main graph
/// (the series' `do_trace`).
pub fn record(
    program: &Program,
    anchor: Symbol,
    env: Env,
    heap: &mut Heap,
    limit: usize,
) -> Result<Recorded, TraceError> {
    let start = [ResumeFrame { function: None, env: env.into_iter().collect(), call: None }];
    let mut at = |l: Symbol, _: &Env, _: usize| if l == anchor { Arrival::Stop } else { Arrival::Continue };
    let index = ProgramIndex::new(program);
    Ok(match record_path(&index, &start, anchor, heap, Limits::ops(limit), &mut at, &mut |_, _, _, _| None)? {
        Path::Stopped { trace, frame, .. } => {
            Recorded::Loop { trace: Box::new(trace), env: frame.env.into_iter().collect() }
        }
        Path::Printed(v) => Recorded::Printed(v),
        Path::Returns { .. } => unreachable!("the main graph's frame does not stop before returning"),
    })
}

/// Runs a call the tracer does not follow: `Some` of its result, or
/// `None` to follow it ([`record_path`]). Its arguments: the function,
/// how many calls of it the recording is inside already, the arguments.
pub type Residual<'a> = dyn FnMut(Symbol, usize, &[Value], &mut Heap) -> Option<Result<Value, RuntimeError>> + 'a;

/// The operations a thread's first recording has room for before it
/// grows ([`Scratch`]).
const RECORDING_CAPACITY: usize = 256;

/// The most operations [`Scratch`] keeps room for between recordings: a
/// recording longer than that (the JIT's limit is 10,000 operations)
/// gives its buffers back.
const MOST_KEPT: usize = 1 << 14;

thread_local! {
    /// The buffers of the thread's last recording ([`Scratch`]).
    static SCRATCH: std::cell::Cell<Option<(Vec<TraceOp>, Vec<Site>)>> = const { std::cell::Cell::new(None) };
}

/// A recording's operations and their sites as they are recorded, in
/// buffers a thread keeps from one recording to the next: each recording
/// used to start from room for [`RECORDING_CAPACITY`] and double as it
/// went, copying what it had at each step (a JIT's recordings average 400
/// operations, many go to thousands: 8% of the tutorial BF fractal 5's
/// recording instructions were those copies). The trace gets copies of
/// exactly its size ([`record_path`]).
struct Scratch {
    ops: Vec<TraceOp>,
    sites: Vec<Site>,
}

impl Scratch {
    /// The thread's buffers, empty (new ones if a recording holds them).
    fn take() -> Scratch {
        let (ops, sites) = SCRATCH
            .with(std::cell::Cell::take)
            .unwrap_or_else(|| (Vec::with_capacity(RECORDING_CAPACITY), Vec::with_capacity(RECORDING_CAPACITY)));
        Scratch { ops, sites }
    }
}

/// What `buffer` holds, moved into a vector of exactly its size; the
/// buffer is left empty with its room.
fn moved_out<T>(buffer: &mut Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(buffer.len());
    out.append(buffer);
    out
}

impl Drop for Scratch {
    /// Gives the buffers back to the thread, emptied, unless they grew
    /// past [`MOST_KEPT`].
    fn drop(&mut self) {
        if self.ops.capacity() > MOST_KEPT {
            return;
        }
        self.ops.clear();
        self.sites.clear();
        let buffers = (std::mem::take(&mut self.ops), std::mem::take(&mut self.sites));
        // (Not at all while the thread ends.)
        let _ = SCRATCH.try_with(|s| s.set(Some(buffers)));
    }
}

/// How many links past the one read [`in_a_row`] looks at.
const ROW_LOOKAHEAD: usize = 4;

/// How many bytes past `from`'s cell `link`'s lies, read from `from`'s
/// `field`, if they lie in one block of the heap, are of one class (a
/// chain links objects of one class), and the chain through `field` goes
/// on from `link` so, each link that far past the one before, for the
/// next [`ROW_LOOKAHEAD`] links or until it ends (at an object of
/// another class, or none) or leaves the block: what a trace assuming the
/// layout ([`crate::to_ir`], "Links laid out in a row") needs to hold
/// beyond the one pair it saw. A chain laid out otherwise (cells of the
/// class allocated in between, now and then) would fail the assumption at
/// every few links, each failure a trip through a bridge (a list walked
/// so: 2.7x the time of the walk assuming nothing).
fn in_a_row(from: &flowc_lang::heap::Obj, link: &flowc_lang::heap::Obj, field: Symbol) -> Option<i64> {
    let d = link.offset_from(from).filter(|_| link.class() == from.class())?;
    let mut at = link.clone();
    for _ in 0..ROW_LOOKAHEAD {
        let next = match at.get(field) {
            Some(Value::Object(next)) if next.class() == at.class() => next,
            _ => break,
        };
        match next.offset_from(&at) {
            Some(e) if e == d => at = next,
            Some(_) => return None,
            None => break,
        }
    }
    Some(d)
}

/// Traces from `start` (frames from the base inwards; the innermost about
/// to run block `label`), following calls, until control arrives in the
/// base frame at a label for which `at` says stop, or the base frame is
/// about to return (a function frame; the main graph's `return` is an
/// error). `at` sees each label the base frame jumps to, with
/// the base frame's environment and the number of operations recorded so
/// far (where the trace would be cut to start there: [`Trace::split_at`]),
/// before its block runs. A call for which
/// `residual` gives a result is recorded as a `call` instead of followed.
/// Recording stops with an error past `limits`.
pub fn record_path(
    index: &ProgramIndex,
    start: &[ResumeFrame],
    label: Symbol,
    heap: &mut Heap,
    limits: Limits,
    at: &mut dyn FnMut(Symbol, &Env, usize) -> Arrival,
    residual: &mut Residual,
) -> Result<Path, TraceError> {
    let immutable = |c: Symbol, f: Symbol| index.is_immutable(c, f);
    let unknown = |l: Symbol| TraceError::Runtime(RuntimeError { kind: ErrorKind::UnknownLabel(l), at: None });
    let mut frames = Vec::with_capacity(start.len());
    for f in start {
        let constants = limits.start_constants.get(frames.len()).map_or(&[][..], Vec::as_slice);
        frames.push(TraceFrame::of(index, f, limits.lists_assumed, constants)?);
    }
    let innermost = frames.last().ok_or_else(|| unknown(label))?;
    let mut block = index.block(innermost.function, label).ok_or_else(|| unknown(label))?;
    let mut scratch = Scratch::take();
    let Scratch { ops, sites } = &mut scratch;
    let mut objects = ObjectIds::default();
    for (k, f) in start.iter().enumerate() {
        objects.add_start(k as u32, &f.env);
    }
    // Recordings wait for the worker in its queue: without the room
    // they were made with (the copies are exactly their size).
    let trace = |ops: &mut Vec<TraceOp>, sites: &mut Vec<Site>, objects| Trace {
        anchor: label,
        ops: moved_out(ops),
        sites: moved_out(sites),
        objects,
        live: None,
    };
    // Operations recorded in the frames of each called function.
    let mut per_function: Vec<(Symbol, usize)> = Vec::new();
    let limit = limits.ops;
    // Constants matter only to calls of functions ([`TraceFrame::fixed`]):
    // a program of none is spared tracking them per operation (6% of the
    // tutorial BF interpreter's recording time).
    let track_consts = index.has_functions() || limits.constant_loops.is_some();
    // The loops of the base frame followed for their constants, by
    // header, and the block each was entered from.
    let mut entered: rustc_hash::FxHashMap<Symbol, Symbol> = rustc_hash::FxHashMap::default();
    loop {
        if ops.len() > limit {
            // Too long inside a called loop unrolled past the unroll limit
            // (its rounds constants: [`TraceFrame::fixed`]): that call
            // unrolls, as past the limit it would have, which stops
            // following it for this hot spot alone.
            let unrolled = frames.iter().skip(1).rev().find_map(|f| {
                let (label, _) = f.arrivals.iter().find(|(_, n)| *n >= limits.unroll)?;
                Some((f.function?, *label))
            });
            let state = suspend(&frames, block.label);
            if let Some((function, label)) = unrolled {
                return Err(TraceError::Unrolls { function, label, limit: limits.unroll, state });
            }
            let biggest = per_function.iter().max_by_key(|(_, n)| *n).map(|(f, _)| *f);
            return Err(TraceError::TooLong { limit, state, biggest });
        }
        if frames.len() == 1 && frames[0].function.is_some() && matches!(block.term, Terminator::Return(_)) {
            let frame = frames[0].resume_frame();
            return Ok(Path::Returns { trace: trace(ops, sites, objects), frame, label: block.label });
        }
        let depth = frames.len();
        let (outer, innermost) = frames.split_at_mut(depth - 1);
        let frame = &mut innermost[0];
        let fun = frame.function;
        for (i, s) in block.body.iter().enumerate() {
            let op = op_of(s);
            let from = read_from(&op, &frame.env);
            exec(&op, &mut frame.env, heap, &immutable).map_err(|k| error(k, fun, block, i))?;
            if track_consts {
                frame.consts.after(&op);
            }
            note_result(&op, from, &frame.env, ops.len() as u32, &mut objects);
            ops.push(op);
            sites.push(site(fun, block, i));
        }
        let n = block.body.len();
        if let (true, Some(f)) = (depth > 1, fun) {
            match per_function.iter_mut().find(|(g, _)| *g == f) {
                Some((_, count)) => *count += n + 1,
                None => per_function.push((f, n + 1)),
            }
        }
        let env = &frame.env;
        let next = match &block.term {
            Terminator::Jump(l) => *l,
            Terminator::If { cond, then_label, else_label } => {
                let v = env.get(cond).ok_or_else(|| error(ErrorKind::Unbound(*cond), fun, block, n))?;
                // A test of the data in a loop may decide its rounds,
                // whether it leaves the loop or changes how its count
                // goes on.
                if let Some(f) = fun.filter(|_| !frame.consts.0.contains(cond)) {
                    frame.fixed &= !index.in_loop(f, block.label);
                }
                let (check, resume_at, next) = if v.is_truthy() {
                    (Check::True(*cond), *else_label, *then_label)
                } else {
                    (Check::False(*cond), *then_label, *else_label)
                };
                // An object found true: a link tested for 0 (a field that
                // holds objects of one class or 0, as the class test it
                // stands for where the program's facts made it one).
                if matches!(v, Value::Object(_)) {
                    objects.passed.push((ops.len() as u32, next));
                }
                ops.push(TraceOp::Guard { check, resume: Vec::new(), label: resume_at });
                next
            }
            Terminator::Promote { var, label } => {
                // The interpreter does not read a promoted variable, so an
                // unbound one is no error: there is just nothing to promote.
                let megamorphic = limits.unpromoted.is_some_and(|u| u.contains(&(fun, *label)));
                if limits.cold.is_some_and(|c| c.contains(&(fun, block.label))) {
                    // Left, where it fails, at this block's start: what it
                    // runs before the promotion runs again there, which
                    // the tier allows only where that goes unnoticed
                    // (`jit::tier`'s `repeatable`).
                    ops.push(TraceOp::Guard { check: Check::Cold(*var), resume: Vec::new(), label: block.label });
                } else if let (Some(v), false) = (env.get(var), megamorphic) {
                    ops.push(TraceOp::Guard {
                        check: Check::Value(*var, v.clone()),
                        resume: Vec::new(),
                        label: *label,
                    });
                    frame.consts.set(*var, true);
                }
                *label
            }
            Terminator::IfClass { obj, class, then_label, else_label } => {
                let v = resolve(obj, env).map_err(|k| error(k, fun, block, n))?;
                if let Some(f) = fun {
                    frame.fixed &= !index.leaves_loop(f, block.label);
                }
                let is = objects::is_class(&v, *class);
                let (resume_at, next) = if is { (*else_label, *then_label) } else { (*then_label, *else_label) };
                if is {
                    objects.passed.push((ops.len() as u32, next));
                }
                ops.push(TraceOp::Guard {
                    check: Check::Class(obj.clone(), *class, is),
                    resume: Vec::new(),
                    label: resume_at,
                });
                next
            }
            Terminator::PrintAndStop(a) => {
                let v = resolve(a, env).map_err(|k| error(k, fun, block, n))?;
                return Ok(Path::Printed(v));
            }
            Terminator::Error(r) => return Err(error(ErrorKind::User(*r), fun, block, n)),
            Terminator::Call { dst, func, args, next } => {
                let Some(callee) = index.function(*func) else {
                    return Err(error(ErrorKind::UnknownFunction(*func), fun, block, n));
                };
                if callee.params.len() != args.len() {
                    let kind = ErrorKind::ArgumentCount { func: *func, expected: callee.params.len(), got: args.len() };
                    return Err(error(kind, fun, block, n));
                }
                let mut values = Vec::with_capacity(args.len());
                for a in args {
                    values.push(resolve(a, env).map_err(|k| error(k, fun, block, n))?);
                }
                let open = outer.iter().chain([&*frame]).filter(|f| f.function == Some(*func)).count();
                if let Some(result) = residual(*func, open, &values, heap) {
                    let v = result.map_err(TraceError::Runtime)?;
                    ops.push(TraceOp::Call { dst: *dst, func: *func, args: args.clone() });
                    env::write(&mut frame.env, *dst, v);
                    frame.consts.set(*dst, false);
                    sites.push(site(fun, block, n));
                    *next
                } else {
                    if depth >= 10_000 {
                        return Err(error(ErrorKind::StackOverflow { depth: 10_000 }, fun, block, n));
                    }
                    let callee_env: Env = callee.params.iter().copied().zip(values).collect();
                    let consts = Consts(
                        callee
                            .params
                            .iter()
                            .zip(args)
                            .filter(|(_, a)| frame.consts.holds(a))
                            .map(|(p, _)| *p)
                            .collect(),
                    );
                    ops.push(TraceOp::Enter { dst: *dst, func: *func, args: args.clone(), next: *next });
                    sites.push(site(fun, block, n));
                    frame.call = Some((*dst, *next));
                    frames.push(TraceFrame {
                        function: Some(*func),
                        env: callee_env,
                        call: None,
                        arrivals: Vec::new(),
                        consts,
                        fixed: true,
                    });
                    block = &callee.blocks[0];
                    continue;
                }
            }
            Terminator::Return(a) => {
                // Only inner frames return here (see the check above), or
                // the main graph, which cannot.
                let v = resolve(a, env).map_err(|k| error(k, fun, block, n))?;
                if depth == 1 {
                    return Err(error(ErrorKind::ReturnOutsideFunction, fun, block, n));
                }
                ops.push(TraceOp::Leave { value: a.clone() });
                let constant = frame.consts.holds(a);
                frames.pop();
                let caller = frames.last_mut().expect("a caller");
                let (dst, next) = caller.call.take().expect("the caller waits for this call");
                env::write(&mut caller.env, dst, v);
                caller.consts.set(dst, constant);
                next
            }
        };
        // The guard or `leave` of the terminator, if any.
        sites.resize(ops.len(), site(fun, block, n));
        let depth = frames.len();
        let frame = frames.last_mut().expect("a frame");
        if depth > 1 && limits.unroll != u32::MAX {
            let count = match frame.arrivals.iter_mut().find(|(l, _)| *l == next) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    frame.arrivals.push((next, 1));
                    1
                }
            };
            // (A fixed frame's rounds are capped too: a cycle of `goto`s
            // adds no operation that would stop it.)
            let cap =
                if frame.fixed { limits.unroll.max(u32::try_from(limit).unwrap_or(u32::MAX)) } else { limits.unroll };
            if count >= cap {
                let function = frame.function.expect("a called function's frame");
                let state = suspend(&frames, next);
                return Err(TraceError::Unrolls { function, label: next, limit: limits.unroll, state });
            }
        }
        let frame = frames.last().expect("a frame");
        // (Not the loop it started in: a hot spot's own. A loop followed
        // is the loop it was entered as at each round: `entered`.)
        let mut followed = |loops: &ConstantLoops| {
            let from = *entered.get(&next).unwrap_or(&block.label);
            let fits = ops.len() < limit / 4;
            let follows = next != label
                && runs_as_constants_say(loops, index, frame.function, (from, next), &|v| frame.consts.0.contains(&v));
            if follows {
                loops.note(frame.function, next, fits);
                if fits {
                    entered.entry(next).or_insert(from);
                }
            }
            follows && fits
        };
        let followed = frames.len() == 1 && limits.constant_loops.is_some_and(&mut followed);
        if frames.len() == 1 && !followed {
            match at(next, &frame.env, ops.len()) {
                Arrival::Continue => {}
                Arrival::Stop => {
                    let frame = frames[0].resume_frame();
                    return Ok(Path::Stopped { trace: trace(ops, sites, objects), frame, label: next });
                }
                Arrival::Skip(skip) => {
                    // Its walks' links are noted as the statements' are,
                    // so that the conversion checks those laid out in a
                    // row by their place and those that come back as the
                    // same object (the skip's guards leave at `next`, with
                    // the state before it).
                    let frame = &mut frames[0];
                    for op in skip {
                        if let TraceOp::Guard { check, .. } = &op {
                            if !holds(check, &frame.env) {
                                let kind =
                                    ErrorKind::User(Symbol::intern("internal: a skip's guard fails where recorded"));
                                return Err(error(kind, fun, block, n));
                            }
                            if let Check::Class(_, _, true) = check {
                                objects.passed.push((ops.len() as u32, next));
                            }
                        } else {
                            let from = read_from(&op, &frame.env);
                            exec(&op, &mut frame.env, heap, &immutable).map_err(|k| error(k, fun, block, n))?;
                            note_result(&op, from, &frame.env, ops.len() as u32, &mut objects);
                        }
                        ops.push(op);
                        sites.push(site(fun, block, n));
                    }
                    frame.env.retain(|name, _| !crate::skip::is_temporary(*name));
                }
            }
        }
        let frame = frames.last().expect("a frame");
        block = index.block(frame.function, next).ok_or_else(|| error(ErrorKind::UnknownLabel(next), fun, block, n))?;
    }
}

/// The object and field `op` reads, where it is a `get` of an object.
fn read_from(op: &TraceOp, env: &Env) -> Option<(flowc_lang::heap::Obj, Symbol)> {
    match op {
        TraceOp::Get { obj, field, .. } => match resolve(obj, env) {
            Ok(Value::Object(o)) => Some((o, *field)),
            _ => None,
        },
        _ => None,
    }
}

/// Notes the object `op` (the `index`-th operation) made or read, now in
/// `env`, in `objects`: its number, and for a link read `from` an object,
/// where it lies ([`in_a_row`]) and whether the heap's row holds it.
fn note_result(
    op: &TraceOp,
    from: Option<(flowc_lang::heap::Obj, Symbol)>,
    env: &Env,
    index: u32,
    objects: &mut ObjectIds,
) {
    let (TraceOp::Get { dst, .. } | TraceOp::New { dst, .. }) = op else { return };
    let Some(Value::Object(o)) = env.get(dst) else { return };
    objects.results.push((index, o.id()));
    let Some((from, field)) = from else { return };
    if let Some(d) = in_a_row(&from, o, field) {
        objects.offsets.push((index, d));
        use flowc_lang::heap::rows::{establish, Found};
        if let Found::Missed(rows) = establish(&from, o, field) {
            objects.row_misses |= rows;
        }
    }
}

/// Whether guard `check` holds in `env` (an unbound variable fails it).
fn holds(check: &Check, env: &Env) -> bool {
    match check {
        Check::True(v) => env.get(v).is_some_and(Value::is_truthy),
        Check::False(v) => env.get(v).is_some_and(|x| !x.is_truthy()),
        Check::Value(v, c) => env.get(v) == Some(c),
        Check::Class(a, class, expected) => resolve(a, env).is_ok_and(|x| objects::is_class(&x, *class) == *expected),
        Check::Cold(_) => true,
    }
}

/// The interpreter's view of the tracer's frames.
fn suspend(frames: &[TraceFrame], label: Symbol) -> Suspended {
    Suspended { frames: frames.iter().map(TraceFrame::resume_frame).collect(), label }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flowc_lang::syntax;

    /// A called function whose loop tests nothing (a cycle of `goto`s)
    /// keeps its frame fixed ([`TraceFrame::fixed`]) and adds no
    /// operation: its rounds are capped at the operation limit, where the
    /// recording stops as a loop unrolled in one call would, not spinning.
    #[test]
    fn a_called_cycle_that_tests_nothing_stops_the_recording() {
        let text = "entry start(n = 3)
function spin(x):
    top:
        goto top
start:
    goto loop
loop:
    y = call spin(n) then loop
";
        let program = syntax::parse("spin.fg", text).unwrap_or_else(|e| panic!("{e}"));
        let index = ProgramIndex::new(&program);
        let env = [(Symbol::intern("n"), Value::Int(3))].into_iter().collect();
        let start = [ResumeFrame { function: None, env, call: None }];
        let limits = Limits { unroll: 64, ..Limits::ops(1_000) };
        let mut heap = Heap::new(&program);
        let mut at = |_: Symbol, _: &Env, _: usize| Arrival::Continue;
        let loop_ = Symbol::intern("loop");
        match record_path(&index, &start, loop_, &mut heap, limits, &mut at, &mut |_, _, _, _| None) {
            Err(TraceError::Unrolls { function, limit, .. }) => {
                assert_eq!((function.as_str(), limit), ("spin", 64));
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("the recording closed"),
        }
    }

    /// Recordings on one thread share its buffers ([`Scratch`]): each
    /// trace holds its own operations alone, exactly as many as it has
    /// room for — a long recording, a short one after it (which must not
    /// see the long one's operations), one that fails in between (whose
    /// buffers go back all the same) and the short one again.
    #[test]
    fn recordings_in_a_row_each_get_exactly_their_operations() {
        let text = "entry start(n = 3)
start:
    i = 0
    goto loop
loop:
    i = i + 1
    c = i < n
    if c goto loop else goto done
done:
    x = i // 0
    print_and_stop(x)
";
        let program = syntax::parse("row.fg", text).unwrap_or_else(|e| panic!("{e}"));
        let record_to = |n: i64, at_label: &str| {
            let env = [(Symbol::intern("n"), Value::Int(n))].into_iter().collect();
            let anchor = Symbol::intern(at_label);
            let mut heap = Heap::new(&program);
            let index = ProgramIndex::new(&program);
            let start = [ResumeFrame { function: None, env, call: None }];
            let mut at = |l: Symbol, _: &Env, _: usize| if l == anchor { Arrival::Stop } else { Arrival::Continue };
            record_path(
                &index,
                &start,
                Symbol::intern("start"),
                &mut heap,
                Limits::ops(100_000),
                &mut at,
                &mut |_, _, _, _| None,
            )
        };
        let ops = |path: Result<Path, TraceError>| match path {
            Ok(Path::Stopped { trace, .. }) => {
                assert_eq!(trace.ops.capacity(), trace.ops.len());
                assert_eq!(trace.sites.len(), trace.ops.len());
                trace.ops.len()
            }
            Ok(_) => panic!("the recording did not stop"),
            Err(e) => panic!("{e}"),
        };
        // Up to `done`: 1 operation, then 3 per round (two and a guard).
        let long = ops(record_to(5_000, "done"));
        assert_eq!(long, 1 + 3 * 5_000);
        let short = ops(record_to(2, "done"));
        assert_eq!(short, 1 + 3 * 2);
        let failed = record_to(2, "nowhere");
        assert!(matches!(failed, Err(TraceError::Runtime(_))), "{failed:?}");
        assert_eq!(ops(record_to(2, "done")), short);
    }
}

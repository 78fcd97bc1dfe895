//! The tracing JIT (`flowc run --engine jit`): the series' model made real.
//!
//! The reference interpreter runs the program with a [`HotCounter`] on the
//! main graph's loop headers — the `can_enter_jit` labels, or when a program
//! declares none, the natural-loop headers that loop detection finds in the
//! lowered main graph. When a header gets hot the tracer records one
//! iteration from there ([`crate::record`]); the trace becomes IR
//! ([`crate::to_ir`]), is optimized ([`crate::opt`]) and compiled by the
//! code generator the AOT route uses. Compiled traces are cached per label;
//! from then on the interpreter hands over at once whenever it reaches the
//! label with the variables the trace starts from.
//!
//! A trace runs until a guard fails. The guard's resume record rebuilds the
//! interpreter's frames and objects ([`crate::resume`]), and interpretation
//! continues at the guard's label (never straight back into code: in the
//! state it left, the same guard would fail again), unless the guard has a
//! bridge. All traces and bridges of a run share one code cache
//! ([`TraceCache`]), where the program's functions are compiled once.
//!
//! **Bridges.** A guard that fails `bridge_threshold` times gets a bridge:
//! a trace recorded from the guard's failure state up to the next label of
//! the main graph that has a loop trace. It is optimized and compiled like
//! a loop trace (it is straight-line code that ends by leaving to that
//! label), attached to the guard, and runs whenever the guard fails again;
//! a bridge's end enters that label's trace at once, and its own guards can
//! get bridges too. A `guard_value` that fails for many values gets one
//! bridge per value seen, specialized to it and found by a hash lookup on
//! the value rather than a chain of guards.
//!
//! **Speculation.** A loop trace assumes its loop-carried integers keep
//! the sign (and 32-bit size) they had when it was compiled; with that,
//! the optimizer's loop ranges make a counter that steps towards a guard a
//! word, free of overflow and tag checks. Every entry checks the
//! assumption; a trace entered with values it does not admit is dropped,
//! and its label gets a trace that assumes nothing (`despecialized`).
//!
//! **State handed over.** Entering code needs exactly the variables it was
//! recorded with, in order: a trace's resume records list those, so an
//! environment with other variables would not be restored faithfully on
//! exit. The interpreter runs the block itself in that case.
//!
//! **Errors** raised in compiled code name their place like the
//! interpreter's: the tracer records each operation's source site.
//!
//! **What the JIT does not do.** Loops inside functions are not traced
//! (the series anchors traces in the main graph); bridges start only from
//! guards in the main frame.
//!
//! **Fuel.** Under `--fuel`, traces are compiled with fuel checks: the
//! interpreter counts statements, compiled code one step per loop
//! iteration, both against the same limit — so a runaway loop stops with
//! `fuel_exhausted` in compiled code too, though later (in statements)
//! than the interpreter alone would.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use flowc_codegen::{CompiledTrace, TraceCache, TraceEnd};
use flowc_ir::{Function, Module, Operand, ResumeValue, ValueId};
use flowc_lang::interp::{Compiled, Config, HotCounter, Machine, Outcome, ResumeFrame, RuntimeError, Step};
use flowc_lang::{Env, Program, Symbol, Value};

use crate::record::{record_path, Heap, Path, TraceError};
use crate::{opt, resume, ssa, to_ir};

/// Tuning of the JIT.
#[derive(Clone, Debug)]
pub struct Options {
    /// Jumps to a loop header before it is traced.
    pub threshold: u32,
    /// Failures of one guard (for a `guard_value`, of one value) before it
    /// gets a bridge.
    pub bridge_threshold: u32,
    /// Most operations a recording may take before it is abandoned.
    pub trace_limit: usize,
    /// Most bridges per trace (a guard that keeps seeing new values stops
    /// getting bridges).
    pub max_bridges: usize,
    /// Called with every trace and bridge after conversion (`"conversion"`)
    /// and after optimization (`"optimization"`); tests run the IR
    /// checker here.
    pub inspect: Option<fn(&Function, &str)>,
}

impl Default for Options {
    fn default() -> Options {
        Options { threshold: 50, bridge_threshold: 20, trace_limit: 100_000, max_bridges: 64, inspect: None }
    }
}

/// What the JIT did during one run (`--stats`).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Loop traces compiled.
    pub traces: usize,
    /// Bridges compiled.
    pub bridges: usize,
    /// Recordings abandoned (too long) or traces the code generator refused.
    pub aborted: usize,
    /// Times compiled code was entered from the driver.
    pub entries: u64,
    /// Guards that failed.
    pub guard_failures: u64,
    /// Of those, failures that ran a bridge (the rest went to the
    /// interpreter).
    pub bridged: u64,
    /// Operations recorded, over all traces and bridges.
    pub recorded_ops: usize,
    /// Instructions left after optimization, over all traces and bridges.
    pub optimized_ops: usize,
    /// Time spent recording.
    pub record_time: Duration,
    /// Time spent converting, optimizing and compiling traces.
    pub compile_time: Duration,
    /// Of that, time spent converting to IR and optimizing (the rest is
    /// code generation).
    pub optimize_time: Duration,
    /// Loop traces dropped because an entry broke what they assumed of
    /// their integer inputs (their labels then get traces that assume
    /// nothing).
    pub despecialized: usize,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "traces:          {}", self.traces)?;
        writeln!(f, "bridges:         {}", self.bridges)?;
        writeln!(f, "aborted:         {}", self.aborted)?;
        writeln!(f, "entries:         {}", self.entries)?;
        writeln!(f, "guard failures:  {} ({} into bridges)", self.guard_failures, self.bridged)?;
        writeln!(f, "despecialized:   {}", self.despecialized)?;
        writeln!(f, "operations:      {} recorded, {} after optimization", self.recorded_ops, self.optimized_ops)?;
        writeln!(f, "record time:     {:.3} ms", self.record_time.as_secs_f64() * 1e3)?;
        write!(
            f,
            "compile time:    {:.3} ms ({:.3} ms optimizing)",
            self.compile_time.as_secs_f64() * 1e3,
            self.optimize_time.as_secs_f64() * 1e3
        )
    }
}

/// Compiled code for one start point: a loop trace or a bridge.
pub struct Code {
    /// The optimized trace IR (kept for printing).
    pub function: Function,
    native: CompiledTrace,
    /// Failures per exit (for a `guard_value`, per value seen).
    failures: HashMap<ExitKey, u32>,
    /// Bridges attached to exits: a hash lookup, however many values a
    /// `guard_value` has seen.
    bridges: HashMap<ExitKey, CodeId>,
    /// Exits whose bridge could not be recorded.
    refused: HashSet<ExitKey>,
    /// What a loop trace assumes of its arguments: by name, an integer
    /// within these bounds ([`speculation`]); checked on entry.
    assume: Vec<(Symbol, i64, i64)>,
}

impl Code {
    /// Whether `args` meet what the code assumes of them.
    fn admits(&self, args: &[Value]) -> bool {
        let params = self.native.params();
        self.assume.iter().all(|&(name, lo, hi)| {
            let arg = params.iter().position(|&p| p == name).and_then(|k| args.get(k));
            matches!(arg, Some(Value::Int(v)) if (lo..=hi).contains(v))
        })
    }
}

/// What a loop trace may assume of its loop-carried integer inputs, from
/// the values they have when it is compiled: the 32-bit integers of the same sign
/// (positive, non-negative, negative), so that a counter stepping towards
/// a guard keeps word arithmetic ([`opt::optimize_assuming`]). Inputs that
/// break it on a later entry make the JIT drop the trace for one that
/// assumes nothing.
fn speculation(function: &Function, env: &Env) -> Vec<(Symbol, i64, i64)> {
    let (min, max) = (flowc_lang::ops::range::SMALL_PARAM.0 as i64, flowc_lang::ops::range::SMALL_PARAM.1 as i64);
    use flowc_ir::{InstKind, Operand};
    use flowc_lang::ast::Operator;
    use flowc_lang::ops::Op;
    // Only the initial values of loop-carried variables the loop computes
    // with: a phi of the parameter read by arithmetic or a comparison (a
    // variable the loop overwrites before reading says nothing).
    let mut phi_of: HashMap<flowc_ir::ValueId, flowc_ir::ValueId> = HashMap::new();
    for (_, i) in function.all_insts() {
        if let (InstKind::Phi(inputs), Some(r)) = (&function.insts[i].kind, function.insts[i].result) {
            for (_, o) in inputs {
                if let Operand::Value(p) = o {
                    if function.params.contains(p) {
                        phi_of.insert(r, *p);
                    }
                }
            }
        }
    }
    let mut computed: HashSet<flowc_ir::ValueId> = HashSet::new();
    for (_, i) in function.all_insts() {
        let InstKind::Op { op: Operator::Known(op), args, .. } = &function.insts[i].kind else { continue };
        if matches!(
            op,
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Mod | Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Eq | Op::Ne
        ) {
            computed.extend(args.iter().filter_map(|a| a.as_value()).filter_map(|v| phi_of.get(&v)));
        }
    }
    function
        .params
        .iter()
        .filter(|p| computed.contains(p))
        .filter_map(|&p| {
            let name = function.values[p].name?;
            match env.get(&name)? {
                Value::Int(v) if (min..=max).contains(v) => Some(match *v {
                    v if v > 0 => (name, 1, max),
                    0 => (name, 0, max),
                    _ => (name, min, -1),
                }),
                _ => None,
            }
        })
        .collect()
}

/// An exit of a piece of code: its number, and for a `guard_value` the
/// value that made it fail.
type ExitKey = (usize, Option<Value>);

/// Index of a piece of code in [`Jit::codes`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct CodeId(usize);

/// The JIT for one program.
pub struct Jit<'p> {
    program: &'p Program,
    options: Options,
    hints: Module,
    remove_allocations: bool,
    /// Every loop trace and bridge.
    codes: Vec<Code>,
    /// Loop traces by anchor label.
    traces: HashMap<Symbol, CodeId>,
    /// Labels whose traces assume nothing of their inputs (a speculating
    /// trace there was entered with inputs it did not admit).
    generic: HashSet<Symbol>,
    /// The machine code of every trace and bridge, made on first use.
    cache: Option<TraceCache>,
    /// Whether the code counts fuel (compiled for a run with `--fuel`).
    fuel_checks: bool,
    /// During a run with `--fuel`: steps left for compiled code, and the
    /// limit.
    fuel: Option<(u64, u64)>,
    stats: Stats,
}

/// Where the driver stands between engines.
enum At {
    /// The interpreter stopped at a hot label with this environment.
    Hot(Symbol, Env),
    /// Code left for `label` with these frames.
    Exit(Vec<ResumeFrame>, Symbol),
}

/// What dispatching came to: the program printed, or the interpreter
/// takes over from these frames at this label.
enum Handover {
    Printed(Value),
    Interpret(Vec<ResumeFrame>, Symbol),
}

/// The main-graph labels the JIT counts: `can_enter_jit` labels, or the
/// loop headers of the main graph lowered from `entry`.
pub fn hot_labels(program: &Program, entry: Symbol) -> Vec<Symbol> {
    let declared: Vec<Symbol> = program.can_enter_jit_labels().collect();
    if !declared.is_empty() {
        return declared;
    }
    let Ok(module) = flowc_frontend::lower(program, entry) else { return Vec::new() };
    let Some(main) = module.functions.iter().find(|f| f.kind == flowc_ir::FunctionKind::Main) else {
        return Vec::new();
    };
    let loops = flowc_ir::loops::LoopForest::new(main);
    let mut labels: Vec<Symbol> = loops.headers().filter_map(|b| main.blocks[b].name).collect();
    labels.dedup();
    labels
}

impl<'p> Jit<'p> {
    pub fn new(program: &'p Program, options: Options) -> Jit<'p> {
        let hints = ssa::hints(program);
        let remove_allocations = match program.default_entry().map(|e| flowc_frontend::lower(program, e)) {
            Some(Ok(m)) => !flowc_passes::observe::allocations_observable(&m),
            _ => false,
        };
        Jit {
            program,
            options,
            hints,
            remove_allocations,
            codes: Vec::new(),
            traces: HashMap::new(),
            generic: HashSet::new(),
            cache: None,
            fuel_checks: false,
            fuel: None,
            stats: Stats::default(),
        }
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The compiled loop traces, by anchor label, in label order.
    pub fn traces(&self) -> Vec<(Symbol, &Function)> {
        let mut out: Vec<(Symbol, &Function)> =
            self.traces.iter().map(|(l, c)| (*l, &self.codes[c.0].function)).collect();
        out.sort_by_key(|(l, _)| l.as_str().to_owned());
        out
    }

    /// Runs the program from main-graph `entry` with `env`. The outcome's
    /// steps count the interpreted statements only.
    pub fn run(&mut self, entry: Symbol, env: &[(Symbol, Value)], config: &Config) -> Result<Outcome, RuntimeError> {
        let program = self.program;
        let names: Vec<Symbol> = env.iter().map(|(k, _)| *k).collect();
        let compiled = Compiled::new(program, &names);
        let mut machine = Machine::new(program, &compiled, config);
        let labels = hot_labels(program, entry);
        machine.set_hot(HotCounter::new(&compiled, &labels, self.options.threshold.max(1)));
        if config.fuel.is_some() && !self.fuel_checks {
            // Code made without fuel checks could loop forever: start over.
            (self.codes, self.traces, self.cache, self.fuel_checks) = (Vec::new(), HashMap::new(), None, true);
        }
        let mut heap = Heap::default();
        let mut step = machine.run_hot(entry, env)?;
        loop {
            let (label, env) = match step {
                Step::Done(outcome) => return Ok(outcome),
                Step::Hot { label, env } => (label, env),
            };
            heap.allocations = machine.allocations();
            // Compiled code takes one step per loop iteration from what the
            // interpreter left; the interpreter is charged what it took.
            self.fuel = config.fuel.map(|limit| (limit.saturating_sub(machine.steps()).max(1), limit));
            let before = self.fuel.map_or(0, |(left, _)| left);
            let handover = self.dispatch(At::Hot(label, env), &compiled, &mut machine, &mut heap, config);
            if let Some((left, _)) = self.fuel.take() {
                machine.charge(before - left);
            }
            match handover? {
                Handover::Printed(value) => {
                    return Ok(Outcome { value, steps: 0, allocations: heap.allocations });
                }
                Handover::Interpret(frames, label) => {
                    machine.set_allocations(heap.allocations);
                    step = machine.resume_hot(&frames, label)?;
                }
            }
        }
    }

    /// Runs compiled code — recording and compiling it first if needed —
    /// for as long as one piece of code leads to another.
    fn dispatch(
        &mut self,
        mut at: At,
        compiled: &Compiled,
        machine: &mut Machine,
        heap: &mut Heap,
        config: &Config,
    ) -> Result<Handover, RuntimeError> {
        loop {
            let (label, env) = match at {
                At::Hot(label, env) if self.traces.contains_key(&label) => (label, env),
                At::Hot(label, env) => match self.record_loop(label, env, heap)? {
                    Recording::Compiled(label, env) => (label, env),
                    Recording::Done(handover) => {
                        if let Handover::Interpret(_, label) = &handover {
                            if let Some(counter) = machine.hot_mut() {
                                counter.forget(compiled, *label);
                            }
                        }
                        return Ok(handover);
                    }
                },
                At::Exit(frames, label) if frames.len() == 1 && self.traces.contains_key(&label) => {
                    let frame = frames.into_iter().next().expect("one frame");
                    (label, frame.env.into_iter().collect())
                }
                At::Exit(frames, label) => return Ok(Handover::Interpret(frames, label)),
            };
            let id = self.traces[&label];
            let Some(args) = arguments(&self.codes[id.0].native, &env) else {
                return Ok(Handover::Interpret(vec![main_frame(env)], label));
            };
            if !self.codes[id.0].admits(&args) {
                // The trace speculated on its inputs' ranges and these break
                // it: from now on this label gets a trace that assumes nothing.
                self.traces.remove(&label);
                self.generic.insert(label);
                self.stats.despecialized += 1;
                return Ok(Handover::Interpret(vec![main_frame(env)], label));
            }
            at = match self.run_code(id, args, heap, config)? {
                Ok(next) => next,
                Err(handover) => return Ok(handover),
            };
        }
    }

    /// Runs code `id` and the bridges its exits lead to; returns where the
    /// run goes on.
    fn run_code(
        &mut self,
        mut id: CodeId,
        mut args: Vec<Value>,
        heap: &mut Heap,
        config: &Config,
    ) -> Result<Result<At, Handover>, RuntimeError> {
        let mut promoted: Vec<(Symbol, Value)>;
        loop {
            self.stats.entries += 1;
            let code = &self.codes[id.0];
            let fuel = self.fuel.as_mut().map(|(left, limit)| (left, *limit));
            let (frames, label, key) = match code.native.run(&args, &mut heap.allocations, config.max_depth, fuel) {
                TraceEnd::Exit { resume, label, values, exit, key, guard } => {
                    let values: HashMap<ValueId, Value> = values.into_iter().collect();
                    let record = &code.function.resumes[resume];
                    let frames = resume::frames(record, &values, heap);
                    if !guard {
                        // A bridge's end: on to the loop trace at `label`.
                        return Ok(Ok(At::Exit(frames, label)));
                    }
                    // The main-frame variables a failing guard_value tested.
                    promoted = match (&key, record.frames.first()) {
                        (Some((tested, v)), Some(main)) => main
                            .env
                            .iter()
                            .filter(|(_, rv)| matches!(rv, ResumeValue::Operand(Operand::Value(x)) if x == tested))
                            .map(|(name, _)| (*name, v.clone()))
                            .collect(),
                        _ => Vec::new(),
                    };
                    (frames, label, (exit, key.map(|k| k.1)))
                }
                TraceEnd::Error(e) => return Err(e),
                TraceEnd::Printed(v) => return Ok(Err(Handover::Printed(v))),
            };
            self.stats.guard_failures += 1;
            if let Some(&bridge) = code.bridges.get(&key) {
                match bridge_arguments(&self.codes[bridge.0].native, &frames) {
                    Some(a) => {
                        self.stats.bridged += 1;
                        (id, args) = (bridge, a);
                        continue;
                    }
                    None => return Ok(Err(Handover::Interpret(frames, label))),
                }
            }
            // A failing guard goes to the interpreter, even at a label with
            // a trace: entering code again in the state it just left would
            // fail the same guard.
            if frames.len() > 1 || self.traces.is_empty() || code.refused.contains(&key) {
                return Ok(Err(Handover::Interpret(frames, label)));
            }
            let code = &mut self.codes[id.0];
            let failures = code.failures.entry(key.clone()).or_insert(0);
            *failures += 1;
            if *failures < self.options.bridge_threshold || code.bridges.len() >= self.options.max_bridges {
                return Ok(Err(Handover::Interpret(frames, label)));
            }
            return self.record_bridge(id, key, frames, label, &promoted, heap);
        }
    }

    /// Records a bridge from the failure state of exit `key` of code
    /// `parent` (one main-graph frame at `label`) to the next label with a
    /// loop trace, compiles it and attaches it. Recording runs the program:
    /// the run goes on from where it ended. A bridge of a `guard_value`
    /// runs only for the value it was made for: the `promoted` variables
    /// are constants in it.
    fn record_bridge(
        &mut self,
        parent: CodeId,
        key: ExitKey,
        frames: Vec<ResumeFrame>,
        label: Symbol,
        promoted: &[(Symbol, Value)],
        heap: &mut Heap,
    ) -> Result<Result<At, Handover>, RuntimeError> {
        let start: Env = frames.into_iter().next().expect("one frame").env.into_iter().collect();
        let started = Instant::now();
        let traces = &self.traces;
        let stop = |l: Symbol| traces.contains_key(&l);
        let recorded = record_path(self.program, label, start.clone(), heap, self.options.trace_limit, &stop);
        self.stats.record_time += started.elapsed();
        let (trace, env, end) = match recorded {
            Ok(Path::Reached { trace, env, label }) => (trace, env, label),
            Ok(Path::Printed(v)) => {
                self.codes[parent.0].refused.insert(key);
                return Ok(Err(Handover::Printed(v)));
            }
            Err(TraceError::Runtime(e)) => return Err(e),
            Err(TraceError::TooLong { state, .. }) => {
                self.stats.aborted += 1;
                self.codes[parent.0].refused.insert(key);
                return Ok(Err(Handover::Interpret(state.frames, state.label)));
            }
        };
        let started = Instant::now();
        let mut function = to_ir::bridge(self.program, &trace, &start, end);
        let mut constants = flowc_passes::edit::Substitution::new(&function);
        for &p in &function.params {
            let name = function.values[p].name;
            if let Some((_, v)) = promoted.iter().find(|(n, _)| Some(*n) == name) {
                constants.set(p, Operand::Const(v.clone()));
            }
        }
        constants.apply(&mut function);
        self.optimize(&mut function, &[]);
        let native = self.compile(&function);
        self.stats.compile_time += started.elapsed();
        match native {
            Ok(native) => {
                self.stats.bridges += 1;
                self.stats.recorded_ops += trace.ops.len();
                self.stats.optimized_ops += instructions(&function);
                let id = self.add(function, native, Vec::new());
                self.codes[parent.0].bridges.insert(key, id);
            }
            Err(_) => {
                self.stats.aborted += 1;
                self.codes[parent.0].refused.insert(key);
            }
        }
        Ok(Ok(At::Exit(vec![main_frame(env)], end)))
    }

    /// Compiles a trace or bridge into the run's code cache.
    fn compile(&mut self, function: &Function) -> Result<CompiledTrace, String> {
        if self.cache.is_none() {
            let options = flowc_codegen::Options { fuel: self.fuel_checks };
            self.cache = Some(TraceCache::new(&self.hints, options)?);
        }
        self.cache.as_ref().expect("made above").compile(function)
    }

    fn optimize(&mut self, function: &mut Function, assume: &[(Symbol, i64, i64)]) {
        if let Some(inspect) = self.options.inspect {
            inspect(function, "conversion");
        }
        let started = Instant::now();
        let assume: Vec<(flowc_ir::ValueId, flowc_lang::ops::range::Interval)> = function
            .params
            .iter()
            .filter_map(|&p| {
                let name = function.values[p].name?;
                let &(_, lo, hi) = assume.iter().find(|(n, _, _)| *n == name)?;
                Some((p, flowc_lang::ops::range::Interval::new(lo as i128, hi as i128)))
            })
            .collect();
        opt::optimize_assuming(function, &self.hints, self.remove_allocations, &assume);
        self.stats.optimize_time += started.elapsed();
        if let Some(inspect) = self.options.inspect {
            inspect(function, "optimization");
        }
    }

    /// The compiled bridges, in the order they were made.
    pub fn bridges(&self) -> Vec<&Function> {
        let loops: HashSet<usize> = self.traces.values().map(|c| c.0).collect();
        (0..self.codes.len()).filter(|k| !loops.contains(k)).map(|k| &self.codes[k].function).collect()
    }

    fn add(&mut self, function: Function, native: CompiledTrace, assume: Vec<(Symbol, i64, i64)>) -> CodeId {
        self.codes.push(Code {
            function,
            native,
            failures: HashMap::new(),
            bridges: HashMap::new(),
            refused: HashSet::new(),
            assume,
        });
        CodeId(self.codes.len() - 1)
    }

    /// Records a loop trace at `label` and compiles it. Recording runs
    /// the program, so whatever happens the run goes on from where the
    /// recording left it.
    fn record_loop(&mut self, label: Symbol, env: Env, heap: &mut Heap) -> Result<Recording, RuntimeError> {
        let started = Instant::now();
        let recorded = record_path(self.program, label, env, heap, self.options.trace_limit, &|l| l == label);
        self.stats.record_time += started.elapsed();
        let (trace, env) = match recorded {
            Ok(Path::Reached { trace, env, .. }) => (trace, env),
            Ok(Path::Printed(v)) => return Ok(Recording::Done(Handover::Printed(v))),
            Err(TraceError::Runtime(e)) => return Err(e),
            Err(TraceError::TooLong { state, .. }) => {
                self.stats.aborted += 1;
                return Ok(Recording::Done(Handover::Interpret(state.frames, state.label)));
            }
        };
        let started = Instant::now();
        let mut function = to_ir::to_ir(self.program, &trace, &env);
        let assume = if self.generic.contains(&label) { Vec::new() } else { speculation(&function, &env) };
        self.optimize(&mut function, &assume);
        let native = self.compile(&function);
        self.stats.compile_time += started.elapsed();
        match native {
            Ok(native) => {
                self.stats.traces += 1;
                self.stats.recorded_ops += trace.ops.len();
                self.stats.optimized_ops += instructions(&function);
                let id = self.add(function, native, assume);
                self.traces.insert(label, id);
                Ok(Recording::Compiled(label, env))
            }
            Err(_) => {
                self.stats.aborted += 1;
                Ok(Recording::Done(Handover::Interpret(vec![main_frame(env)], label)))
            }
        }
    }
}

enum Recording {
    /// The trace is compiled; run it from this label and environment.
    Compiled(Symbol, Env),
    /// No trace; this is where the run goes on.
    Done(Handover),
}

/// The trace's arguments from `env`, if `env` holds exactly its
/// parameters, in order.
fn arguments(native: &CompiledTrace, env: &Env) -> Option<Vec<Value>> {
    let params = native.params();
    if params.len() != env.len() || params.iter().zip(env.keys()).any(|(p, k)| p != k) {
        return None;
    }
    Some(env.values().cloned().collect())
}

/// A bridge's arguments from the frames its exit left: the main frame's
/// variables, if they are exactly the bridge's parameters.
fn bridge_arguments(native: &CompiledTrace, frames: &[ResumeFrame]) -> Option<Vec<Value>> {
    let [frame] = frames else { return None };
    let params = native.params();
    if params.len() != frame.env.len() || params.iter().zip(&frame.env).any(|(p, (k, _))| p != k) {
        return None;
    }
    Some(frame.env.iter().map(|(_, v)| v.clone()).collect())
}

fn main_frame(env: Env) -> ResumeFrame {
    ResumeFrame { function: None, env: env.into_iter().collect(), call: None }
}

/// Instructions of a function, phis included.
fn instructions(f: &Function) -> usize {
    f.layout.iter().map(|&b| f.blocks[b].phis.len() + f.blocks[b].insts.len()).sum()
}

/// Runs `program` under the JIT; returns the printed value and the stats.
pub fn run(
    program: &Program,
    entry: Symbol,
    env: &[(Symbol, Value)],
    config: &Config,
    options: Options,
) -> (Result<Outcome, RuntimeError>, Stats) {
    let mut jit = Jit::new(program, options);
    let result = jit.run(entry, env, config);
    (result, jit.stats)
}

//! The interpreter loop over a [`Resolved`] program.
//!
//! State: a stack of [`Frame`]s, each with its flow graph, a slot vector
//! (`None` = unbound) and the order in which its variables were first
//! written. That order is the series' environment order (docs/language.md §4:
//! writing an existing variable replaces it in place, a new one is
//! appended); the interpreter never removes variables, so slots plus a
//! first-write list are exactly the ordered environment, at the cost of one
//! branch per write.

use super::call_code::{CallCode, CallEnd, CallState};
use super::error::{ErrorKind, Location, RuntimeError};
use super::hot::{CallArrival, Key, Profiler};
use super::resolve::{CStmt, CTerm, Graph, OpRef, Operand, Resolved, Slot, Target};
use crate::ast::Program;
use crate::env::Env;
use crate::heap::{
    self,
    word::{self, Word},
};
use crate::symbol::Symbol;
use crate::syntax::readable_print::{stmt_to_string, terminator_to_string};
use crate::value::Value;
use smallvec::SmallVec;

use super::objects;

/// Limits for one run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Maximum statements (and terminators) executed; `None` = unbounded.
    pub fuel: Option<u64>,
    /// Maximum depth of nested calls.
    pub max_depth: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config { fuel: None, max_depth: 100_000 }
    }
}

/// What a finished run produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The value `print_and_stop` printed.
    pub value: Value,
    /// Statements and terminators executed.
    pub steps: u64,
    /// Objects allocated.
    pub allocations: u64,
}

impl Outcome {
    /// The program's standard output: the printed value and a newline.
    pub fn output(&self) -> String {
        let mut s = self.value.to_print_string();
        s.push('\n');
        s
    }
}

/// One activation of a flow graph.
#[derive(Debug)]
pub struct Frame {
    pub graph: u32,
    pub slots: Vec<Option<Value>>,
    /// Slots in the order they were first written.
    pub order: Vec<Slot>,
    /// Where the caller continues: the slot for the result, the label, and
    /// the caller's block (whose `call` terminator reports a bad label).
    ret: Option<(Slot, Target, u32)>,
}

impl Frame {
    fn new(graph: &Graph, index: u32) -> Frame {
        Frame { graph: index, slots: vec![None; graph.slot_names.len()], order: Vec::new(), ret: None }
    }

    /// Unbinds every variable, keeping the vectors: only the slots
    /// written are visited (a residual program's main graph has tens of
    /// thousands of slots, and a guard failure rebuilds its frame).
    fn clear(&mut self) {
        for &s in &self.order {
            self.slots[s as usize] = None;
        }
        self.order.clear();
    }

    #[inline(always)]
    fn write(&mut self, slot: Slot, v: Value) {
        let s = &mut self.slots[slot as usize];
        match s {
            // Replaced in place: the old value is dropped after the new one
            // is written, so the new one need not wait in a temporary
            // (which cost a stalled copy per statement).
            Some(old) => drop(std::mem::replace(old, v)),
            None => {
                self.order.push(slot);
                *s = Some(v);
            }
        }
    }

    /// Writes the value of `w`, a word read from a field (never unbound).
    /// Integers and objects are written straight into the slot: a value
    /// built in a temporary by several paths is copied with a load that
    /// waits for the temporary's partial stores (a stalled copy per read).
    ///
    /// # Safety
    /// `w` was just read from a live object's slot (so it is an immediate
    /// or points at a live cell: `heap::to_value`'s contract).
    #[inline(always)]
    unsafe fn write_word(&mut self, slot: Slot, w: Word) {
        let s = &mut self.slots[slot as usize];
        let old = s.take();
        if old.is_none() {
            self.order.push(slot);
        }
        if word::is_int(w) {
            *s = Some(Value::Int(word::untag_int(w)));
        // SAFETY: `w` is a word of the heap or an immediate (this
        // function's contract).
        } else if let Some(o) = unsafe { heap::to_object(w) } {
            *s = Some(Value::Object(o));
        } else {
            // SAFETY: as above.
            let v = unsafe { heap::to_value(w) };
            debug_assert!(v.is_ok(), "fields hold bound words");
            *s = v.ok();
        }
        drop(old);
    }

    /// The value of `slot`, if bound.
    pub fn get(&self, slot: Slot) -> Option<&Value> {
        self.slots.get(slot as usize).and_then(|v| v.as_ref())
    }

    /// The ordered environment of this frame, as pairs.
    pub fn pairs(&self, graph: &Graph) -> Vec<(Symbol, Value)> {
        self.order
            .iter()
            .map(|&s| (graph.slot_names[s as usize], self.slots[s as usize].clone().expect("ordered slot is bound")))
            .collect()
    }

    /// The ordered environment of this frame.
    pub fn env(&self, graph: &Graph) -> Env {
        self.order
            .iter()
            .map(|&s| (graph.slot_names[s as usize], self.slots[s as usize].clone().expect("ordered slot is bound")))
            .collect()
    }
}

/// What a run with a [`Profiler`] came to.
#[derive(Debug)]
pub enum Step {
    Done(Outcome),
    /// The interpreter reached a key the profiler stops at: the frames
    /// (the innermost, running the key's graph, last), about to run `block`.
    Hot {
        key: Key,
        stack: Vec<Frame>,
        block: u32,
    },
}

enum Exit {
    Printed(Value),
    /// The run reached its pause ([`Machine::run_until`]): the frames,
    /// about to run `block` of the innermost.
    Paused {
        stack: Vec<Frame>,
        block: u32,
    },
    Hot {
        key: Key,
        stack: Vec<Frame>,
        block: u32,
    },
    /// The bottom frame, a function's ([`Machine::call`]), returned.
    Returned(Value),
}

/// A frame to rebuild with its variables resolved to slots
/// ([`Machine::replace_top_with`]): what compiled code hands back when it
/// has resolved names once, ahead of time.
#[derive(Clone, Debug)]
pub struct SlotFrame {
    pub graph: u32,
    /// Its variables, in environment order.
    pub vars: Vec<(Slot, Value)>,
    /// For every frame but the innermost: the slot the callee's result
    /// goes to, and where the frame continues when the callee returns.
    pub call: Option<(Slot, Target)>,
}

/// One frame to resume ([`Machine::resume`]).
#[derive(Clone, Debug)]
pub struct ResumeFrame {
    /// The function, or `None` for the main flow graph.
    pub function: Option<Symbol>,
    /// The frame's ordered environment.
    pub env: Vec<(Symbol, Value)>,
    /// For every frame but the innermost: its pending call's result
    /// variable and the label to continue at when the call returns.
    pub call: Option<(Symbol, Symbol)>,
}

/// How [`Machine::run_until`] ended.
#[derive(Debug)]
pub enum Stage {
    Done(Outcome),
    /// Paused: the frames (the innermost last), about to run `block` of
    /// the innermost; [`Machine::steps`] and [`Machine::allocations`] say
    /// what the run did so far. Another machine over the same program and
    /// environment names (a JIT's) can go on from here.
    Paused {
        stack: Vec<Frame>,
        block: u32,
    },
}

/// Where execution stands, for error locations: graph, block, statement index.
#[derive(Copy, Clone)]
struct Pc {
    graph: u32,
    block: u32,
    stmt: usize,
}

/// Runs `program` from main-graph `entry` with the ordered environment `env`.
pub fn run(
    program: &Program,
    entry: Symbol,
    env: &[(Symbol, Value)],
    config: &Config,
) -> Result<Outcome, RuntimeError> {
    run_counted(program, entry, env, config).0
}

/// What a run did, whether it ended in a value or an error (`--stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Statements and terminators executed (by compiled code: loop
    /// iterations, and only under `--fuel`).
    pub steps: u64,
    /// Objects allocated.
    pub allocations: u64,
}

/// [`run`], also returning what the run did when it ends in an error.
pub fn run_counted(
    program: &Program,
    entry: Symbol,
    env: &[(Symbol, Value)],
    config: &Config,
) -> (Result<Outcome, RuntimeError>, Counts) {
    let names: Vec<Symbol> = env.iter().map(|(k, _)| *k).collect();
    let resolved = Resolved::new(program, &names);
    let mut machine = Machine::new(program, &resolved, config);
    let result = machine.run(entry, env);
    (result, Counts { steps: machine.steps, allocations: machine.allocations })
}

/// The interpreter state over one resolved program.
pub struct Machine<'a> {
    program: &'a Program,
    resolved: &'a Resolved,
    fuel: u64,
    /// The least of `fuel` and the step count a run pauses after
    /// ([`Machine::run_until`]): what each statement's step is compared
    /// with, so a pause costs the loop nothing more than the fuel check.
    limit: u64,
    max_depth: usize,
    steps: u64,
    allocations: u64,
    /// The frame that executed `print_and_stop`, kept for inspection.
    last_frame: Option<Frame>,
    hot: Option<Profiler>,
    /// Compiled code for calls whose key has code ([`super::call_code`]).
    call_code: Option<Box<dyn CallCode + 'a>>,
}

impl<'a> Machine<'a> {
    pub fn new(program: &'a Program, resolved: &'a Resolved, config: &Config) -> Machine<'a> {
        Machine {
            program,
            resolved,
            fuel: config.fuel.unwrap_or(u64::MAX),
            limit: config.fuel.unwrap_or(u64::MAX),
            max_depth: config.max_depth,
            steps: 0,
            allocations: 0,
            last_frame: None,
            hot: None,
            call_code: None,
        }
    }

    /// Hands calls whose key has code to `code` from now on (`None`: to
    /// no one; such calls stop the run as hot keys do).
    pub fn set_call_code(&mut self, code: Option<Box<dyn CallCode + 'a>>) {
        self.call_code = code;
    }

    /// Whether calls whose key has code are handed to compiled code.
    pub fn has_call_code(&self) -> bool {
        self.call_code.is_some()
    }

    /// Stops at the keys `profiler` says are hot ([`Machine::run_hot`]).
    pub fn set_profiler(&mut self, profiler: Profiler) {
        self.hot = Some(profiler);
    }

    pub fn profiler(&self) -> Option<&Profiler> {
        self.hot.as_ref()
    }

    pub fn profiler_mut(&mut self) -> Option<&mut Profiler> {
        self.hot.as_mut()
    }

    /// The resolved program the machine runs.
    pub fn resolved(&self) -> &'a Resolved {
        self.resolved
    }

    /// Allocations so far.
    pub fn allocations(&self) -> u64 {
        self.allocations
    }

    /// Statements executed so far (what `--fuel` bounds).
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Counts `steps` done elsewhere (compiled code) against the fuel.
    pub fn charge(&mut self, steps: u64) {
        self.steps = self.steps.saturating_add(steps);
    }

    /// The main graph's frame holding `env`, and the block of `entry`.
    fn entry_frame(&self, entry: Symbol, env: &[(Symbol, Value)]) -> Result<(Frame, u32), RuntimeError> {
        let main = &self.resolved.graphs[0];
        let Some(&block) = main.labels.get(&entry) else {
            return Err(RuntimeError { kind: ErrorKind::UnknownLabel(entry), at: None });
        };
        let mut frame = Frame::new(main, 0);
        for (k, v) in env {
            let slot = main.slot_of(*k).ok_or(RuntimeError { kind: ErrorKind::Unbound(*k), at: None })?;
            frame.write(slot, v.clone());
        }
        Ok((frame, block))
    }

    /// [`Machine::run`] that also stops at hot blocks.
    pub fn run_hot(&mut self, entry: Symbol, env: &[(Symbol, Value)]) -> Result<Step, RuntimeError> {
        let (frame, block) = self.entry_frame(entry, env)?;
        let exit = self.execute(vec![frame], block)?;
        Ok(self.step(exit))
    }

    /// [`Machine::resume`] that also stops at hot blocks.
    pub fn resume_hot(&mut self, frames: &[ResumeFrame], label: Symbol) -> Result<Step, RuntimeError> {
        let (stack, block) = self.resume_stack(frames, label, None, false)?;
        let exit = self.execute(stack, block)?;
        Ok(self.step(exit))
    }

    /// Runs `stack` (non-empty; the innermost frame last) from `block` of
    /// the innermost frame's graph, stopping at hot keys.
    pub fn continue_hot(&mut self, stack: Vec<Frame>, block: u32) -> Result<Step, RuntimeError> {
        let exit = self.execute(stack, block)?;
        Ok(self.step(exit))
    }

    /// Replaces the innermost frame of `stack` with the frames `frames`
    /// describe (from the outermost, which runs the same graph as the frame
    /// it replaces and returns where that one would, inwards); returns the
    /// block of `label` in the new innermost frame's graph. How compiled
    /// code that ran the innermost frame hands it back.
    pub fn replace_top(
        &self,
        stack: &mut Vec<Frame>,
        frames: &[ResumeFrame],
        label: Symbol,
    ) -> Result<u32, RuntimeError> {
        self.replace_top_as(stack, frames, label, false)
    }

    /// [`Machine::replace_top`] where `frames`' base frame says only what
    /// changed in the top frame (a recording started from the variables
    /// live at its label, and those it wrote): the top frame keeps its
    /// other variables, in their order, as running the statements would
    /// have left them.
    pub fn replace_top_keeping(
        &self,
        stack: &mut Vec<Frame>,
        frames: &[ResumeFrame],
        label: Symbol,
    ) -> Result<u32, RuntimeError> {
        self.replace_top_as(stack, frames, label, true)
    }

    fn replace_top_as(
        &self,
        stack: &mut Vec<Frame>,
        frames: &[ResumeFrame],
        label: Symbol,
        keep: bool,
    ) -> Result<u32, RuntimeError> {
        let fail = |kind| RuntimeError { kind, at: None };
        let old = stack.pop().ok_or(fail(ErrorKind::UnknownLabel(label)))?;
        let (graph, ret) = (old.graph, old.ret);
        let (mut new, block) = self.resume_stack(frames, label, Some(old), keep)?;
        if let Some(first) = new.first_mut() {
            if first.graph != graph {
                return Err(fail(ErrorKind::UnknownLabel(label)));
            }
            first.ret = ret;
        }
        stack.extend(new);
        Ok(block)
    }

    /// [`Machine::replace_top`] with frames already resolved to slots.
    pub fn replace_top_with(&self, stack: &mut Vec<Frame>, frames: Vec<SlotFrame>) {
        let mut old = stack.pop().expect("a frame to replace");
        let mut ret = old.ret;
        for (k, spec) in frames.into_iter().enumerate() {
            let mut frame = if k == 0 && spec.graph == old.graph {
                // The frame the code ran, cleared: its vectors are reused.
                old.clear();
                std::mem::replace(&mut old, Frame { graph: 0, slots: Vec::new(), order: Vec::new(), ret: None })
            } else {
                Frame::new(&self.resolved.graphs[spec.graph as usize], spec.graph)
            };
            for (slot, v) in spec.vars {
                frame.write(slot, v);
            }
            frame.ret = ret;
            ret = spec.call.map(|(slot, target)| (slot, target, target.block().unwrap_or(0)));
            stack.push(frame);
        }
    }

    /// [`Machine::replace_top_with`] for one frame of the top frame's own
    /// graph: the top frame, cleared (its vectors kept), is bound to
    /// `vars` in their order, and returns where it did.
    pub fn rebind_top(&self, stack: &mut [Frame], vars: impl IntoIterator<Item = (Slot, Value)>) {
        let top = stack.last_mut().expect("a frame to rebind");
        top.clear();
        for (slot, v) in vars {
            top.write(slot, v);
        }
    }

    fn step(&self, exit: Exit) -> Step {
        match exit {
            Exit::Printed(value) => Step::Done(Outcome { value, steps: self.steps, allocations: self.allocations }),
            Exit::Hot { key, stack, block } => Step::Hot { key, stack, block },
            Exit::Returned(_) => unreachable!("only a call of a function on its own returns"),
            Exit::Paused { .. } => unreachable!("only a run until a pause pauses"),
        }
    }

    /// Calls function `graph` (of the resolved program) with `args`, on its
    /// own (no caller frame, no profiler): its return value. How the
    /// tracer runs a call it does not follow.
    pub fn call(&mut self, graph: u32, args: &[Value]) -> Result<Value, RuntimeError> {
        let fail = |kind| RuntimeError { kind, at: None };
        let g = self
            .resolved
            .graphs
            .get(graph as usize)
            .filter(|_| graph != 0)
            .ok_or(fail(ErrorKind::UnknownLabel(Symbol::intern("?"))))?;
        if args.len() != g.params {
            let func = g.name.expect("functions have names");
            return Err(fail(ErrorKind::ArgumentCount { func, expected: g.params, got: args.len() }));
        }
        let mut frame = Frame::new(g, graph);
        for (k, v) in args.iter().enumerate() {
            frame.write(k as Slot, v.clone());
        }
        let hot = self.hot.take();
        let exit = self.execute(vec![frame], 0);
        self.hot = hot;
        match exit? {
            Exit::Returned(v) => Ok(v),
            Exit::Printed(v) => {
                Err(fail(ErrorKind::User(Symbol::intern(&format!("internal: a call printed {}", v.to_print_string())))))
            }
            Exit::Hot { .. } => unreachable!("no profiler during a call"),
            Exit::Paused { .. } => unreachable!("only a run until a pause pauses"),
        }
    }

    /// Ends the call the innermost frame of `stack` runs, as its `return`
    /// would, with `value` (computed elsewhere: compiled code ran it);
    /// returns the block the caller continues at, and the key there when
    /// the profiler says to stop at it. The caller's arrival at a watched
    /// label is counted as the interpreter's `return` counts it: a loop
    /// whose back edge is a call's continuation (`u = call exec(b) then
    /// while`) arrives at its header only so, once the call is compiled.
    pub fn finish_call(&mut self, stack: &mut Vec<Frame>, value: Value) -> Result<(u32, Option<Key>), RuntimeError> {
        let frame = stack.pop().expect("a frame");
        let fail = |kind| RuntimeError { kind, at: None };
        let (dst, next, _) = frame.ret.ok_or(fail(ErrorKind::ReturnOutsideFunction))?;
        let caller = stack.last_mut().ok_or(fail(ErrorKind::ReturnOutsideFunction))?;
        caller.write(dst, value);
        match next {
            Target::Block(b) => Ok((b, None)),
            Target::Watched(b) => {
                let key = match &mut self.hot {
                    Some(hot) => hot.arrive_at(caller.graph, b, &caller.slots, self.steps),
                    None => None,
                };
                Ok((b, key))
            }
            Target::Missing(l) => Err(fail(ErrorKind::UnknownLabel(l))),
        }
    }

    /// Runs `stack` from `block` to the end, ignoring any hot counter.
    fn execute_to_end(&mut self, stack: Vec<Frame>, block: u32) -> Result<Outcome, RuntimeError> {
        let exit = self.execute_plain(stack, block)?;
        self.outcome(exit)
    }

    /// [`Machine::execute`] with no profiler, as the plain interpreter.
    fn execute_plain(&mut self, stack: Vec<Frame>, block: u32) -> Result<Exit, RuntimeError> {
        let hot = self.hot.take();
        let exit = self.execute(stack, block);
        self.hot = hot;
        exit
    }

    /// What a run without a profiler came to, once it did not pause.
    fn outcome(&self, exit: Exit) -> Result<Outcome, RuntimeError> {
        match exit {
            Exit::Printed(value) => Ok(Outcome { value, steps: self.steps, allocations: self.allocations }),
            Exit::Hot { key, .. } => unreachable!("key {key:?} reported hot without a profiler"),
            Exit::Paused { .. } => unreachable!("only a run until a pause pauses"),
            Exit::Returned(_) => Err(RuntimeError { kind: ErrorKind::ReturnOutsideFunction, at: None }),
        }
    }

    /// Continues the allocation count of an earlier run (objects are
    /// numbered from 1 across a whole program run, however many engines
    /// take part in it).
    pub fn set_allocations(&mut self, n: u64) {
        self.allocations = n;
    }

    /// The frame that was running when the program printed and stopped.
    pub fn last_frame(&self) -> Option<&Frame> {
        self.last_frame.as_ref()
    }

    /// Runs from main-graph label `entry` with environment `env`.
    pub fn run(&mut self, entry: Symbol, env: &[(Symbol, Value)]) -> Result<Outcome, RuntimeError> {
        match self.run_until(entry, env, u64::MAX)? {
            Stage::Done(outcome) => Ok(outcome),
            Stage::Paused { .. } => unreachable!("no pause before the fuel runs out"),
        }
    }

    /// Makes frames another machine paused (over the same program and
    /// environment names, [`Machine::run_until`]) this machine's: each
    /// pending call returns to the target this machine's resolved program
    /// has for it (a label the JIT watches is a `Watched` target here, a
    /// plain one there).
    pub fn adopt(&self, stack: &mut [Frame]) {
        for k in 1..stack.len() {
            let caller = stack[k - 1].graph as usize;
            if let Some((dst, next, block)) = stack[k].ret {
                let term = &self.resolved.graphs[caller].blocks[block as usize].term;
                let next = match term {
                    CTerm::Call { next, .. } => *next,
                    _ => next,
                };
                stack[k].ret = Some((dst, next, block));
            }
        }
    }

    /// [`Machine::run`] that pauses once it has done more than `steps`
    /// statements, at the start of the next block that has any: a run
    /// that ends sooner is done as by [`Machine::run`]. How `flowc run`
    /// leaves short runs to the interpreter alone and hands longer ones
    /// to the JIT (`flowc_trace::jit`, "Starting late").
    pub fn run_until(&mut self, entry: Symbol, env: &[(Symbol, Value)], steps: u64) -> Result<Stage, RuntimeError> {
        let (frame, block) = self.entry_frame(entry, env)?;
        self.continue_until(vec![frame], block, steps)
    }

    /// [`Machine::run_until`] going on from where it paused (`stack`, at
    /// `block` of the innermost frame's graph) until the run has done more
    /// than `steps` statements in all.
    pub fn continue_until(&mut self, stack: Vec<Frame>, block: u32, steps: u64) -> Result<Stage, RuntimeError> {
        self.limit = self.fuel.min(steps);
        let exit = self.execute_plain(stack, block);
        self.limit = self.fuel;
        match exit? {
            Exit::Paused { stack, block } => Ok(Stage::Paused { stack, block }),
            exit => self.outcome(exit).map(Stage::Done),
        }
    }

    /// Resumes execution in the middle of a run: `frames` from the
    /// outermost (the main graph) to the innermost, each with its ordered
    /// environment and, for all but the innermost, its pending call (the
    /// variable for the result and the label to continue at); the innermost
    /// frame continues at `label`. This is how a failing guard of a trace
    /// hands over to the interpreter.
    pub fn resume(&mut self, frames: &[ResumeFrame], label: Symbol) -> Result<Outcome, RuntimeError> {
        let (stack, block) = self.resume_stack(frames, label, None, false)?;
        self.execute_to_end(stack, block)
    }

    /// The interpreter frames `frames` describe, and the block to start at.
    /// The frames `frames` describe, and the block of `label` in the
    /// innermost one's graph. `spare`, a frame no longer needed, lends
    /// its vectors to the outermost frame when it ran the same graph.
    fn resume_stack(
        &self,
        frames: &[ResumeFrame],
        label: Symbol,
        mut spare: Option<Frame>,
        keep: bool,
    ) -> Result<(Vec<Frame>, u32), RuntimeError> {
        let resolved = self.resolved;
        let fail = |kind| RuntimeError { kind, at: None };
        let mut stack: Vec<Frame> = Vec::with_capacity(frames.len());
        for (k, spec) in frames.iter().enumerate() {
            let index = match spec.function {
                None => 0,
                Some(f) => *resolved.functions.get(&f).ok_or(fail(ErrorKind::UnknownFunction(f)))?,
            };
            let graph = &resolved.graphs[index as usize];
            let mut frame = match spare.take() {
                Some(mut old) if k == 0 && old.graph == index => {
                    if !keep {
                        old.clear();
                    }
                    old.ret = None;
                    old
                }
                _ => Frame::new(graph, index),
            };
            for (name, v) in &spec.env {
                let slot = graph.slot_of(*name).ok_or(fail(ErrorKind::Unbound(*name)))?;
                frame.write(slot, v.clone());
            }
            if k > 0 {
                // This frame's caller is waiting for it to return.
                let caller = &frames[k - 1];
                let (dst, next) = caller.call.ok_or(fail(ErrorKind::ReturnOutsideFunction))?;
                let caller_graph = &resolved.graphs[stack[k - 1].graph as usize];
                let slot = caller_graph.slot_of(dst).ok_or(fail(ErrorKind::Unbound(dst)))?;
                let target = caller_graph.target(next);
                frame.ret = Some((slot, target, target.block().unwrap_or(0)));
            }
            stack.push(frame);
        }
        let innermost = stack.last().ok_or(fail(ErrorKind::UnknownLabel(label)))?;
        let graph = &resolved.graphs[innermost.graph as usize];
        let Some(&block) = graph.labels.get(&label) else {
            return Err(fail(ErrorKind::UnknownLabel(label)));
        };
        Ok((stack, block))
    }

    fn error(&self, kind: ErrorKind, pc: Pc) -> RuntimeError {
        RuntimeError { kind, at: Some(self.location(pc)) }
    }

    fn location(&self, pc: Pc) -> Location {
        let block = if pc.graph == 0 {
            self.program.main_blocks().nth(pc.block as usize)
        } else {
            self.program.functions().nth(pc.graph as usize - 1).and_then(|f| f.blocks.get(pc.block as usize))
        }
        .expect("compiled block has a source block");
        let is_terminator = pc.stmt >= block.body.len();
        let text = if is_terminator { terminator_to_string(&block.term) } else { stmt_to_string(&block.body[pc.stmt]) };
        Location {
            function: self.resolved.graphs[pc.graph as usize].name,
            block: block.label,
            statement: pc.stmt + 1,
            is_terminator,
            text,
        }
    }

    /// Runs until `print_and_stop` or an error. `stack` is non-empty; the
    /// last frame runs from block `block`.
    fn execute(&mut self, stack: Vec<Frame>, block: u32) -> Result<Exit, RuntimeError> {
        match self.hot {
            Some(_) => self.execute_in::<true>(stack, block),
            None => self.execute_in::<false>(stack, block),
        }
    }

    /// [`Machine::execute`], compiled twice: with `HOT` it counts arrivals
    /// at watched blocks and calls (the JIT's interpreter), without it
    /// the interpreter's jumps test nothing.
    fn execute_in<const HOT: bool>(&mut self, mut stack: Vec<Frame>, block: u32) -> Result<Exit, RuntimeError> {
        let resolved = self.resolved;
        let mut frame = stack.pop().expect("a frame to run");
        let mut graph = &resolved.graphs[frame.graph as usize];
        let mut pc = Pc { graph: frame.graph, block, stmt: 0 };
        macro_rules! fail {
            ($kind:expr, $stmt:expr) => {
                return Err(self.error($kind, Pc { stmt: $stmt, ..pc }))
            };
        }
        macro_rules! read {
            ($operand:expr, $stmt:expr) => {
                match $operand {
                    Operand::Slot(s) => match &frame.slots[*s as usize] {
                        Some(v) => v.clone(),
                        None => fail!(ErrorKind::Unbound(graph.slot_names[*s as usize]), $stmt),
                    },
                    Operand::Const(c) => c.clone(),
                }
            };
        }
        // A read without a copy, for operands used in place (an object
        // read from: cloning would pin it for nothing).
        macro_rules! borrow {
            ($operand:expr, $stmt:expr) => {
                match $operand {
                    Operand::Slot(s) => match &frame.slots[*s as usize] {
                        Some(v) => v,
                        None => fail!(ErrorKind::Unbound(graph.slot_names[*s as usize]), $stmt),
                    },
                    Operand::Const(c) => c,
                }
            };
        }
        macro_rules! goto {
            ($target:expr, $stmt:expr) => {
                match $target {
                    Target::Block(b) => pc.block = *b,
                    Target::Watched(b) => {
                        pc.block = *b;
                        if HOT {
                            if let Some(hot) = &mut self.hot {
                                // Inline up to counting a key seen before.
                                if let Some(key) = hot.arrive_at(pc.graph, *b, &frame.slots, self.steps) {
                                    stack.push(frame);
                                    return Ok(Exit::Hot { key, stack, block: *b });
                                }
                            }
                        }
                    }
                    Target::Missing(l) => fail!(ErrorKind::UnknownLabel(*l), $stmt),
                }
            };
        }
        loop {
            let b = &graph.blocks[pc.block as usize];
            let n = b.stmts.len();
            for (i, s) in b.stmts.iter().enumerate() {
                self.steps += 1;
                if self.steps > self.limit {
                    if self.steps > self.fuel {
                        fail!(ErrorKind::FuelExhausted { fuel: self.fuel }, i);
                    }
                    // Past the pause: taken at the start of a block (the
                    // statement not yet run), else at the next one's.
                    if i == 0 {
                        self.steps -= 1;
                        stack.push(frame);
                        return Ok(Exit::Paused { stack, block: pc.block });
                    }
                }
                match s {
                    CStmt::Op2 { dst, op, lhs, rhs } => {
                        // Integers of 64 bits: no copies, no call.
                        if let OpRef::Op(o) = op {
                            if let (Value::Int(x), Value::Int(y)) = (borrow!(lhs, i), borrow!(rhs, i)) {
                                if let Some(r) = o.eval_ints(*x, *y) {
                                    frame.write(*dst, Value::Int(r));
                                    continue;
                                }
                            }
                        }
                        let (x, y) = (borrow!(lhs, i), borrow!(rhs, i));
                        let r = match op {
                            OpRef::Op(op) => op.eval2(x, y),
                            OpRef::Missing(name) => fail!(ErrorKind::MissingOp(*name), i),
                        };
                        match r {
                            Ok(v) => frame.write(*dst, v),
                            Err(e) => fail!(ErrorKind::from_op(e), i),
                        }
                    }
                    CStmt::Op1 { dst, op, arg } => {
                        let x = borrow!(arg, i);
                        let r = match op {
                            OpRef::Op(op) => op.eval1(x),
                            OpRef::Missing(name) => fail!(ErrorKind::MissingOp(*name), i),
                        };
                        match r {
                            Ok(v) => frame.write(*dst, v),
                            Err(e) => fail!(ErrorKind::from_op(e), i),
                        }
                    }
                    CStmt::New { dst, class } => {
                        self.allocations += 1;
                        frame.write(*dst, objects::new_object(self.allocations, *class, resolved.layout));
                    }
                    CStmt::Get { dst, obj, field, slot } => {
                        let o = borrow!(obj, i);
                        match objects::try_get_at(o, *field, resolved.layout, *slot) {
                            // SAFETY: `w` is the word of a live object's slot.
                            Some(w) => unsafe { frame.write_word(*dst, w) },
                            None => fail!(objects::get_error(o, *field), i),
                        }
                    }
                    CStmt::Set { obj, field, value, slot } => {
                        let o = borrow!(obj, i);
                        let v = borrow!(value, i);
                        let immutable = |c, f| resolved.immutable.contains(&(c, f));
                        let set = objects::settable(o, *field, immutable)
                            .and_then(|o| o.set_at(resolved.layout, *slot, *field, v).map_err(objects::no_slot));
                        if let Err(e) = set {
                            fail!(e, i);
                        }
                    }
                }
            }
            self.steps += 1;
            if self.steps > self.limit && self.steps > self.fuel {
                fail!(ErrorKind::FuelExhausted { fuel: self.fuel }, n);
            }
            match &b.term {
                CTerm::Jump(t) | CTerm::Promote { target: t, .. } => goto!(t, n),
                CTerm::If { cond, then_t, else_t } => {
                    let truthy = match &frame.slots[*cond as usize] {
                        Some(v) => v.is_truthy(),
                        None => fail!(ErrorKind::Unbound(graph.slot_names[*cond as usize]), n),
                    };
                    goto!(if truthy { then_t } else { else_t }, n);
                }
                CTerm::Print(a) => {
                    let v = read!(a, n);
                    self.last_frame = Some(frame);
                    return Ok(Exit::Printed(v));
                }
                CTerm::IfClass { obj, class, then_t, else_t } => {
                    let is = objects::is_class(borrow!(obj, n), *class);
                    goto!(if is { then_t } else { else_t }, n);
                }
                CTerm::Call { dst, func, args, next } => {
                    let f = match func {
                        Ok(f) => *f,
                        Err(name) => fail!(ErrorKind::UnknownFunction(*name), n),
                    };
                    let callee = &resolved.graphs[f as usize];
                    if args.len() != callee.params {
                        fail!(
                            ErrorKind::ArgumentCount {
                                func: callee.name.expect("functions have names"),
                                expected: callee.params,
                                got: args.len()
                            },
                            n
                        );
                    }
                    if stack.len() + 1 >= self.max_depth {
                        fail!(ErrorKind::StackOverflow { depth: self.max_depth }, n);
                    }
                    let arrival = match &mut self.hot {
                        Some(hot) if HOT => hot.arrive_call(f, self.steps),
                        _ => CallArrival::Pass,
                    };
                    if arrival == CallArrival::Compiled && self.call_code.is_some() {
                        let mut values: SmallVec<[Value; 4]> = SmallVec::with_capacity(args.len());
                        for a in args.iter() {
                            values.push(read!(a, n));
                        }
                        let fuel =
                            (self.fuel != u64::MAX).then(|| (self.fuel.saturating_sub(self.steps).max(1), self.fuel));
                        let mut state = CallState { allocations: self.allocations, depth: stack.len() + 1, fuel };
                        let ended = self.call_code.as_mut().and_then(|code| code.call(f, &values, &mut state));
                        if let Some(end) = ended {
                            self.allocations = state.allocations;
                            if let (Some((before, _)), Some((left, _))) = (fuel, state.fuel) {
                                self.steps += before - left;
                            }
                            match end {
                                CallEnd::Returned(v) => frame.write(*dst, v),
                                CallEnd::Printed(v) => {
                                    self.last_frame = Some(frame);
                                    return Ok(Exit::Printed(v));
                                }
                                CallEnd::Error(e) => return Err(e),
                            }
                            goto!(next, n);
                            continue;
                        }
                    }
                    let mut new = Frame::new(callee, f);
                    for (k, a) in args.iter().enumerate() {
                        let v = read!(a, n);
                        new.write(k as Slot, v);
                    }
                    new.ret = Some((*dst, *next, pc.block));
                    // Remember where the caller stands for its later errors.
                    stack.push(std::mem::replace(&mut frame, new));
                    graph = callee;
                    pc = Pc { graph: f, block: 0, stmt: 0 };
                    if arrival != CallArrival::Pass {
                        let key = Key { graph: f, block: super::hot::CALL, greens: Default::default() };
                        stack.push(frame);
                        return Ok(Exit::Hot { key, stack, block: 0 });
                    }
                    continue;
                }
                CTerm::Return(a) => {
                    let v = read!(a, n);
                    let Some((dst, next, caller_block)) = frame.ret else {
                        if frame.graph != 0 && stack.is_empty() {
                            return Ok(Exit::Returned(v));
                        }
                        fail!(ErrorKind::ReturnOutsideFunction, n);
                    };
                    frame = stack.pop().expect("a function frame has a caller");
                    graph = &resolved.graphs[frame.graph as usize];
                    frame.write(dst, v);
                    pc.graph = frame.graph;
                    pc.block = caller_block;
                    let stmt = graph.blocks[caller_block as usize].stmts.len();
                    goto!(&next, stmt);
                }
                CTerm::Error(r) => fail!(ErrorKind::User(*r), n),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;

    /// A recording starts from the variables live at its label and says
    /// what it changed; the frame it replaces keeps its other variables in
    /// their order ([`Machine::replace_top_keeping`]), where
    /// [`Machine::replace_top`] makes the frame anew.
    #[test]
    fn replacing_the_top_frame_keeping_its_other_variables() {
        let text = "start:\n    a = 1\n    b = 2\n    c = 3\n    goto next\nnext:\n    d = 4\n    print_and_stop(a)\n";
        let p = syntax::parse("test", text).expect("it parses");
        let resolved = Resolved::new(&p, &[]);
        let machine = Machine::new(&p, &resolved, &Config::default());
        let graph = &resolved.graphs[0];
        let name = Symbol::intern;
        let frame = || {
            let mut f = Frame::new(graph, 0);
            for (n, v) in [("a", 1), ("b", 2), ("c", 3)] {
                f.write(graph.slot_of(name(n)).expect("a variable"), Value::Int(v));
            }
            f
        };
        let changed = ResumeFrame {
            function: None,
            env: vec![(name("b"), Value::Int(20)), (name("d"), Value::Int(4))],
            call: None,
        };
        let show = |stack: &[Frame]| -> Vec<(String, Value)> {
            stack[0].pairs(graph).into_iter().map(|(n, v)| (n.to_string(), v)).collect()
        };
        let mut stack = vec![frame()];
        let block = machine.replace_top_keeping(&mut stack, std::slice::from_ref(&changed), name("next")).unwrap();
        assert_eq!(graph.blocks[block as usize].label, name("next"));
        let kept: Vec<(String, Value)> =
            [("a", 1), ("b", 20), ("c", 3), ("d", 4)].iter().map(|(n, v)| (n.to_string(), Value::Int(*v))).collect();
        assert_eq!(show(&stack), kept);
        let mut stack = vec![frame()];
        machine.replace_top(&mut stack, std::slice::from_ref(&changed), name("next")).unwrap();
        let anew: Vec<(String, Value)> =
            [("b", 20), ("d", 4)].iter().map(|(n, v)| (n.to_string(), Value::Int(*v))).collect();
        assert_eq!(show(&stack), anew);
    }

    /// A run paused after any number of statements ([`Machine::run_until`])
    /// stops at the start of a block, having done at least that many and
    /// less than a block more, inside a called function too; going on from
    /// there (on another machine, as the JIT does) ends as the run does
    /// uninterrupted: the same value, statements and allocations. A pause
    /// past the end is the whole run; fuel below the pause runs out as
    /// without one. A machine that watches a label adopts paused frames
    /// so that their pending calls return to it watched
    /// ([`Machine::adopt`]).
    #[test]
    fn a_run_paused_anywhere_goes_on_to_the_same_end() {
        let text = "entry start(n = 6)\n\nfunction sq(x):\n    s:\n        y = x * x\n        c = new cell\n        c.v = y\n        return y\n\nstart:\n    acc = 0\n    goto loop\nloop:\n    if n goto body else goto done\nbody:\n    s = call sq(n) then back\nback:\n    acc = acc + s\n    n = n - 1\n    goto loop\ndone:\n    print_and_stop(acc)\n";
        let p = syntax::parse("test", text).expect("it parses");
        let env = [(Symbol::intern("n"), Value::Int(6))];
        let resolved = Resolved::new(&p, &[Symbol::intern("n")]);
        let whole = Machine::new(&p, &resolved, &Config::default()).run(Symbol::intern("start"), &env).unwrap();
        assert_eq!(whole.value, Value::Int(91));
        // A pause comes within the rest of a block and the terminators of
        // the blocks without statements on the way to the next.
        let blocks = || resolved.graphs.iter().flat_map(|g| &g.blocks);
        let longest = blocks().map(|b| b.stmts.len() as u64 + 1).max().unwrap()
            + blocks().filter(|b| b.stmts.is_empty()).count() as u64;
        let mut in_function = 0;
        for pause in 0..whole.steps + 2 {
            let mut first = Machine::new(&p, &resolved, &Config::default());
            match first.run_until(Symbol::intern("start"), &env, pause).unwrap() {
                Stage::Done(o) => {
                    assert!(pause + longest >= whole.steps, "paused at {pause}: ran to the end");
                    assert_eq!(
                        (o.value, o.steps, o.allocations),
                        (whole.value.clone(), whole.steps, whole.allocations)
                    );
                }
                Stage::Paused { stack, block } => {
                    let done = first.steps();
                    assert!(done >= pause && done < pause + longest, "paused at {pause} after {done}");
                    let graph = &resolved.graphs[stack.last().unwrap().graph as usize];
                    assert!(!graph.blocks[block as usize].stmts.is_empty(), "a pause starts a block with statements");
                    in_function += usize::from(stack.len() > 1);
                    let mut second = Machine::new(&p, &resolved, &Config::default());
                    second.charge(done);
                    second.set_allocations(first.allocations());
                    let Step::Done(o) = second.continue_hot(stack, block).unwrap() else { panic!("no profiler") };
                    assert_eq!(
                        (o.value, o.steps, o.allocations),
                        (whole.value.clone(), whole.steps, whole.allocations)
                    );
                }
            }
        }
        assert!(in_function > 0, "some pause falls inside sq");
        // A machine whose resolved program watches `back` (the label the
        // call returns to) adopts a pause inside sq: its pending call now
        // returns to the watched label, which the plain machine's did not.
        let mut watching = Resolved::new(&p, &[Symbol::intern("n")]);
        let back = watching.graphs[0].labels[&Symbol::intern("back")];
        let _profiler = super::super::hot::Profiler::new(&mut watching, &[(0, back)], 1000);
        let first = (0..whole.steps).find_map(|pause| {
            let mut m = Machine::new(&p, &resolved, &Config::default());
            match m.run_until(Symbol::intern("start"), &env, pause).unwrap() {
                Stage::Paused { stack, .. } if stack.len() > 1 => Some(stack),
                _ => None,
            }
        });
        let mut stack = first.expect("a pause inside sq");
        assert!(matches!(stack[1].ret, Some((_, Target::Block(b), _)) if b == back));
        Machine::new(&p, &watching, &Config::default()).adopt(&mut stack);
        assert!(matches!(stack[1].ret, Some((_, Target::Watched(b), _)) if b == back));
        let fuel = Config { fuel: Some(10), ..Config::default() };
        let short = Machine::new(&p, &resolved, &fuel).run_until(Symbol::intern("start"), &env, 50).unwrap_err();
        let plain = Machine::new(&p, &resolved, &fuel).run(Symbol::intern("start"), &env).unwrap_err();
        assert_eq!(short.to_string(), plain.to_string());
        assert!(matches!(short.kind, ErrorKind::FuelExhausted { fuel: 10 }));
    }
}

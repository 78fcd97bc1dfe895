//! Compiled calls: a function's calls run by its compiled code, for the
//! interpreter.
//!
//! **Which functions.** Recursive ones, whose calls the profiler watches
//! from the start (a trace cannot inline them). And, since a loop entered
//! from the interpreter pays only if it runs enough per entry to pay
//! its round trip ([`super::TRANSITION_STEPS`]), a function whose loop's
//! code was given up for running too few rounds per entry — a helper
//! whose loop runs five rounds per call, called from code no trace
//! covers — has its calls compiled instead ([`Jit::calls_instead`]), and
//! so has a function whose loop pays but spends a fifth or more of what
//! it saves in round trips (`crossings_weigh`; the loop keeps its code): a
//! compiled call replaces the whole call (the statements around the loop
//! too) for one round trip, where the loop's code replaced only its
//! rounds. The program's functions are compiled together, once
//! (`TraceCache::call`), so the first time this is charged to the compile
//! budget with all their instructions, and done only if affordable.
//!
//! **How.** Once a function's calls are hot ([`super::CALL`] keys), the
//! first call stops the interpreter and runs here ([`Jit::call_compiled`]);
//! its key is then set to have code, and the machine is given a
//! [`CallCode`] ([`Compiled`]) through which it runs each later call
//! without leaving its loop: no callee frame, no stop and start (the
//! round trip through the driver cost about as much as interpreting a
//! five-round loop). A flush drops it with the cache.

use std::cell::Cell;
use std::rc::Rc;

use flowc_lang::interp::{CallCode, CallEnd, CallState};

use super::*;

/// The machine's way to the compiled functions of one trace cache.
struct Compiled {
    cache: Rc<TraceCache>,
    /// Per graph of the run: the function's name (`None`: the main graph).
    names: Vec<Option<Symbol>>,
    max_depth: usize,
    /// Calls run, for the JIT's statistics.
    calls: Rc<Cell<u64>>,
}

impl CallCode for Compiled {
    fn call(&mut self, graph: u32, args: &[Value], state: &mut CallState) -> Option<CallEnd> {
        let name = (*self.names.get(graph as usize)?)?;
        let mut r = flowc_codegen::RunState {
            allocations: state.allocations,
            max_depth: self.max_depth,
            depth: state.depth,
            fuel: state.fuel,
            iterations: 0,
            work: 0,
            // Functions have no `guard_cold`.
            positions: None,
            linked: None,
            link_pins: None,
        };
        let end = self.cache.call(name, args, &mut r);
        state.allocations = r.allocations;
        state.fuel = r.fuel;
        self.calls.set(self.calls.get() + 1);
        Some(match end {
            flowc_codegen::CallEnd::Returned(v) => CallEnd::Returned(v),
            flowc_codegen::CallEnd::Printed(v) => CallEnd::Printed(v),
            flowc_codegen::CallEnd::Error(e) => CallEnd::Error(e),
        })
    }
}

impl<'p> Jit<'p> {
    /// A call whose key is hot or has code, the interpreter stopped at
    /// (the callee's frame on top of `stack`, about to start): its
    /// compiled function runs it, and the caller goes on with its value.
    /// The key is set to have code, and the machine given the way to run
    /// later calls itself ([`Compiled`]).
    pub(super) fn call_compiled(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        key: &Key,
        stack: &mut Vec<Frame>,
    ) -> Result<Next, RuntimeError> {
        if !self.start_complete(machine, key) {
            // The interpreter runs the call meanwhile.
            self.resumed = Resumed::Starting;
            return Ok(Next::Interpret(0));
        }
        let top = stack.last().expect("the callee's frame");
        let graph = &run.resolved.graphs[top.graph as usize];
        let name = graph.name.expect("a function");
        let args: Vec<Value> =
            (0..graph.params as u32).map(|s| top.get(s).cloned().expect("parameters are bound")).collect();
        if self.cache.is_none() {
            self.cache = self.new_cache().map(Rc::new);
        }
        let Some(cache) = self.cache.clone() else {
            // No compiled code to call: the interpreter runs the calls.
            if let Some(p) = machine.profiler_mut() {
                p.set(key, KeyState::Ignored);
            }
            return Ok(Next::Interpret(0));
        };
        if let Some(p) = machine.profiler_mut() {
            p.set(key, KeyState::Enter);
        }
        if !machine.has_call_code() {
            let names = run.resolved.graphs.iter().map(|g| g.name).collect();
            let (max_depth, calls) = (run.config.max_depth, self.inline_calls.clone());
            machine.set_call_code(Some(Box::new(Compiled { cache: cache.clone(), names, max_depth, calls })));
        }
        self.stats.calls += 1;
        let mut r = self.code_run(run, stack.len() - 1);
        let end = cache.call(name, &args, &mut r);
        self.code_ran(run, &r);
        match end {
            flowc_codegen::CallEnd::Returned(v) => match machine.finish_call(stack, v)? {
                // The caller arrived at a hot spot (a loop whose back edge
                // is this call's continuation): as if the interpreter had
                // stopped there (a stop for the dispatch tier's sake alone
                // goes on as the interpreter would: `Jit::hot` sends it to
                // the tier).
                (block, Some(key)) if self.stopped_for_tier(machine, &key) => Ok(Next::Interpret(block)),
                (block, Some(key)) => self.at_key(machine, run, &key, stack, block),
                (block, None) => Ok(Next::Interpret(block)),
            },
            flowc_codegen::CallEnd::Printed(v) => Ok(Next::Printed(v)),
            flowc_codegen::CallEnd::Error(e) => Err(e),
        }
    }

    /// Compiles the calls of function graph `graph` from now on, whose
    /// loop runs too few rounds per entry for its round trips
    /// ([`super::crossings_weigh`]): the profiler watches its calls. The first
    /// time, only if the compile budget affords the program's functions,
    /// which it is then charged.
    pub(super) fn calls_instead(&mut self, machine: &mut Machine, run: &Run, graph: u32) {
        if machine.profiler_mut().is_none_or(|p| p.watches_calls(graph)) {
            return;
        }
        let name = run.resolved.graphs[graph as usize].name.map_or("?".to_string(), |n| n.to_string());
        let ops = if self.function_ops_charged > 0 { 0 } else { self.function_ops() };
        if ops > 0 && !self.affordable_with(machine, run, ops) {
            self.log(format_args!(
                "calls of {name} not compiled: the program's functions ({ops} instructions) are over the compile budget"
            ));
            return;
        }
        self.function_ops_charged += ops;
        self.stats.calls_instead += 1;
        if let Some(p) = machine.profiler_mut() {
            p.watch_calls(graph);
        }
        self.log(format_args!("calls of {name} compiled instead of its loop"));
    }

    /// The instructions of the program's functions, as lowered: what
    /// compiling them all costs, in operations.
    fn function_ops(&self) -> u64 {
        self.shared.hints().functions.iter().map(|f| f.insts.len() as u64).sum()
    }
}

//! What passes hand on to later passes: per function, the results of the
//! analyses (propagate, loops, escape, def-use). A transforming pass that
//! invalidates an earlier result clears it.

use flowc_ir::Module;
use flowc_lang::{Symbol, Value};

use crate::defuse::DefUse;
use crate::escape::Escape;
use crate::propagate::Propagation;
use flowc_ir::loops::LoopForest;

/// Tunable limits.
#[derive(Clone, Debug)]
pub struct Options {
    /// Statements a pure call with constant arguments may execute when
    /// propagate folds it by running it.
    pub fold_fuel: u64,
    /// Largest callee (in instructions) cleanup inlines.
    pub inline_limit: usize,
    /// Calls of functions that call others are inlined only where the
    /// frames they make stay under this depth (call depth limits of runs
    /// are far above: 100,000 by default), so that inlining them never
    /// changes where a run exceeds its limit
    /// ([`flowc_ir::calls::CallGraph::inlines_exactly`]; a leaf's one
    /// frame may, see `cleanup::inline`).
    pub inline_depth: usize,
    /// Parameters of the main function propagate assumes to be 32-bit
    /// integers ([`flowc_lang::ops::range::SMALL_PARAM`]): the small
    /// version of [`crate::versions`], which code runs only when they are.
    pub small_params: Vec<Symbol>,
    /// Parameters of the main function and the lists the run is known to
    /// bind them to (code compiled for one environment: `flowc run
    /// --engine native`, [`crate::versions::Wanted::For`]): propagate
    /// takes each as that constant, so an interpreter's program and its
    /// jump table, read with `readlist`, give integers in known ranges
    /// and indexes proven inside the lists.
    pub known_lists: Vec<(Symbol, Value)>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            fold_fuel: 100_000,
            inline_limit: 24,
            inline_depth: 10_000,
            small_params: Vec::new(),
            known_lists: Vec::new(),
        }
    }
}

/// A result one pass hands on to later passes: a field of
/// [`FunctionFacts`] (present for every function) or of [`Context`]. The
/// pipeline table says which each pass reads and writes
/// ([`crate::Pass`]), checked in debug builds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Fact {
    Propagation,
    Loops,
    Escape,
    DefUse,
    AllocationsObservable,
    CallGraph,
}

/// Analysis results of one function.
#[derive(Default)]
pub struct FunctionFacts {
    pub propagation: Option<Propagation>,
    pub loops: Option<LoopForest>,
    pub escape: Option<Escape>,
    pub defuse: Option<DefUse>,
}

/// Results shared between passes, indexed like `Module::functions`.
#[derive(Default)]
pub struct Context {
    pub options: Options,
    pub functions: Vec<FunctionFacts>,
    /// Whether the module may print an object
    /// ([`crate::observe::allocations_observable`]), if a pass computed it
    /// for the current IR. Unbox computes it and only removes allocations
    /// when it is false, which keeps it false; dce takes it.
    pub allocations_observable: Option<bool>,
    /// The module's call graph, with the call depths inlining keeps
    /// ([`flowc_ir::calls`]): propagate makes it, cleanup (which changes
    /// the calls) takes it.
    pub call_graph: Option<flowc_ir::calls::CallGraph>,
    /// What the program may store in each field, pass to each function
    /// and return from it ([`crate::propagate::ProgramFacts`]): propagate
    /// solves them with its analyses; the trace optimizer reads them too.
    pub program_facts: Option<crate::propagate::ProgramFacts>,
}

impl Context {
    pub fn new(module: &Module) -> Context {
        Context::with_options(module, Options::default())
    }

    pub fn with_options(module: &Module, options: Options) -> Context {
        Context {
            options,
            functions: module.functions.iter().map(|_| FunctionFacts::default()).collect(),
            allocations_observable: None,
            call_graph: None,
            program_facts: None,
        }
    }

    /// Whether `fact` is known: for a per-function fact, known for every
    /// function of `module`.
    pub fn has(&self, module: &Module, fact: Fact) -> bool {
        let each = |known: fn(&FunctionFacts) -> bool| {
            (0..module.functions.len()).all(|i| self.functions.get(i).is_some_and(known))
        };
        match fact {
            Fact::Propagation => each(|f| f.propagation.is_some()),
            Fact::Loops => each(|f| f.loops.is_some()),
            Fact::Escape => each(|f| f.escape.is_some()),
            Fact::DefUse => each(|f| f.defuse.is_some()),
            Fact::AllocationsObservable => self.allocations_observable.is_some(),
            Fact::CallGraph => self.call_graph.is_some(),
        }
    }

    /// The facts of function `i`, growing the table if functions were added.
    pub fn facts(&mut self, i: usize) -> &mut FunctionFacts {
        while self.functions.len() <= i {
            self.functions.push(FunctionFacts::default());
        }
        &mut self.functions[i]
    }
}

//! Compiling IR in memory and running it: a whole module
//! (`flowc run --engine native`), a trace on its own, or the traces and
//! bridges of a JIT run in one shared [`TraceCache`].

use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::rc::Rc;

use flowc_ir::{Function, FunctionKind, Module};
use flowc_lang::heap::{Layout, Root};
use flowc_lang::interp::{Counts, ErrorKind, Outcome, RuntimeError};
use flowc_lang::{Symbol, Value};

use crate::code_map::FunctionCode;
use crate::define::{self, Options, Version};
use crate::lower::{Constants, ExitSlots, ObjectInfo, TraceExit};
use crate::runtime::{Activation, Ctx};
use crate::word::{self, Word};

mod apart;
mod code_heap;
mod tiered;
mod unit;
pub use apart::{Apart, Emitted};
pub use code_heap::CodeHeap;
use tiered::Tiers;
use unit::{builder, size, Code, CodeUnit};

/// How tiered code gets the IR of the functions it compiles again
/// ([`Unit::compile`]).
#[derive(Copy, Clone, PartialEq, Eq)]
enum Ir {
    /// Copied from the caller's.
    Copied,
    /// Moved in from the caller's module afterwards ([`Unit::adopt`]).
    Moved,
}

/// Machine code for a set of IR functions with an entry wrapper around
/// one of them: `entry(args, ctx)` loads that function's arguments from an
/// array and calls it.
struct Unit {
    /// The code and what its runs need (shared with the tiers, which add
    /// to it while it runs).
    unit: Rc<RefCell<CodeUnit>>,
    entry: *const u8,
    params: Vec<Symbol>,
    /// The compiler of the optimized tier, if the code is tiered.
    tiers: Option<Rc<Tiers>>,
}

impl Unit {
    /// Compiles `functions` (traces and functions; calls go to functions
    /// by name) with an entry for `functions[entry]`.
    fn compile(
        functions: &[&Function],
        entry: usize,
        version: Option<Version>,
        hints: &Module,
        layout: &'static Layout,
        options: Options,
        ir: Ir,
    ) -> Result<Unit, String> {
        // Two versions of each function may be compiled (see `Version`),
        // and tiered ones twice more.
        let room = if options.tiering.is_some() { 4 } else { 2 };
        let mut jit = Code::new(builder(room * size(functions.iter().copied()))?);
        let mut pool = Vec::new();
        let constants = Constants::Rooted(&mut pool);
        let all: Vec<&Function> = functions.iter().copied().chain(version.as_ref().map(|v| v.function)).collect();
        let objects = ObjectInfo::of_program(layout, &hints.immutable, true, all.iter().copied());
        let defined = define::define(&mut *jit, functions, entry, version, constants, &objects, options)?;
        jit.finalize_definitions().map_err(|e| e.to_string())?;
        let code = jit.get_finalized_function(defined.entry);
        let mut unit = CodeUnit::new(jit, defined.runtime, defined.funcs, layout, hints);
        (unit.pool, unit.traps, unit.sites) = (pool, defined.traps, defined.sites);
        unit.register(defined.safepoints);
        let by_region = defined.by_region;
        let tiers = defined.tiers.map(|tables| {
            for ((slot, tiered), &id) in tables.slots.iter().zip(&tables.tiered).zip(&defined.ids) {
                if tiered.is_some() {
                    slot.set(unit.jit.get_finalized_function(id) as u64);
                }
            }
            // The version's function is made here, the others are the
            // caller's: copied, or moved in by `Unit::adopt`.
            let copied = |k: usize| ir == Ir::Copied || k == functions.len();
            let functions = all
                .iter()
                .enumerate()
                .map(|(k, f)| (Unit::tiers_keep(&tables, &by_region, k) && copied(k)).then(|| (*f).clone()))
                .collect();
            (tables, functions)
        });
        let unit = Rc::new(RefCell::new(unit));
        let tiers = tiers.map(|(tables, functions)| {
            Rc::new(Tiers {
                functions,
                by_region,
                tables,
                unit: unit.clone(),
                objects: objects.clone(),
                options,
                compiler: RefCell::new(crate::compile::Compiler::serial()),
                pending: RefCell::new(Vec::new()),
                counts: Default::default(),
            })
        });
        Ok(Unit { unit, entry: code, params: defined.params, tiers })
    }

    /// Whether the tiers keep the IR of function `k` (to compile its
    /// optimized tier, or its regions', from it).
    fn tiers_keep(tables: &crate::tiers::Tables, by_region: &[Option<define::RegionTiered>], k: usize) -> bool {
        tables.tiered[k].is_some() || by_region[k].is_some()
    }

    /// Moves into the tiers the IR they keep of the functions of `m`,
    /// which the unit was compiled from with [`Ir::Moved`].
    fn adopt(&mut self, m: Module) {
        let Some(tiers) = self.tiers.as_mut() else { return };
        let tiers = Rc::get_mut(tiers).expect("no run holds the tiers before the unit is made");
        let functions = m.functions.into_iter().filter(|f| f.kind != FunctionKind::Trace);
        for (k, f) in functions.enumerate() {
            if Unit::tiers_keep(&tiers.tables, &tiers.by_region, k) {
                tiers.functions[k] = Some(f);
            }
        }
    }

    /// Where the failing runtime call of a run came from (without the
    /// statement's text: see `Location::with_text`).
    fn location(&self, ctx: &Ctx) -> Option<flowc_lang::interp::Location> {
        self.unit.borrow().location(ctx.error_site)
    }

    /// A context for one run (see [`CodeUnit::context`]).
    fn context(&self, max_depth: usize) -> Ctx {
        let mut ctx = self.unit.borrow().context(max_depth);
        if let Some(tiers) = &self.tiers {
            // SAFETY: the unit holds the tiers as long as it lives, and
            // contexts do not outlive the run that made them.
            unsafe { ctx.set_tiers(&**tiers) };
        }
        ctx
    }

    /// Calls the entry with `args` (one word per parameter).
    fn call(&self, args: &[Word], ctx: &mut Ctx) -> Word {
        assert_eq!(args.len(), self.params.len(), "one word per parameter");
        // SAFETY: (the type) `entry` was compiled by `Unit::compile` with
        // the signature `extern "C" fn(*const u64, *mut Ctx) -> u64`, the
        // ABI of `EntryFn` (`Word` is a `repr(transparent)` u64). It is
        // typed `unsafe`: generated code trusts its arguments.
        let entry: EntryFn = unsafe { std::mem::transmute::<*const u8, EntryFn>(self.entry) };
        // SAFETY: (the call) it reads exactly `params.len()` words from
        // `args`, which holds that many (checked above), and hands `ctx`
        // to the runtime, which requires a live, otherwise unborrowed
        // context: `ctx` is a unique reference for the whole call. The
        // code stays alive as long as `self`.
        unsafe { entry(args.as_ptr(), ctx) }
    }
}

/// The type of a module's entry wrapper (`define::define`): the
/// arguments as an array of words, and the run's context. `unsafe`:
/// generated code trusts both.
type EntryFn = unsafe extern "C" fn(*const Word, *mut Ctx) -> Word;

/// The type of a trace cache's wrappers ([`crate::baseline::trace_entry`],
/// and functions' entries): a trace's address or a pointer to the
/// arguments, and the run's context; what the code returned: a trace's
/// exit number plus one, a function's result word.
type WrapperFn = unsafe extern "C" fn(u64, *mut Ctx) -> u64;

/// What tiering up did while a [`Native`] program ran ([`crate::tiers`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TierUpStats {
    /// Optimized tiers compiled: a function's code for calls, its
    /// on-stack replacement entries, and a region of a huge function
    /// count one each.
    pub count: u32,
    /// How many of them are regions of huge functions
    /// ([`crate::plan::Plan::by_region`]).
    pub regions: u32,
    /// The time they took on the running thread.
    pub time: std::time::Duration,
}

/// A whole module compiled ahead of time.
pub struct Native {
    unit: Unit,
}

impl Native {
    /// Compiles every function of `m`; `m` must have a main function.
    pub fn compile(m: &Module) -> Result<Native, String> {
        Native::compile_owned_versions(m.clone(), None, Options::default())
    }

    /// The final machine code of each compiled function, in the order they
    /// were defined (a function's small version after the others, tiered
    /// functions' optimized code, compiled while running, last): its IR
    /// name, address and bytes.
    pub fn code(&self) -> Vec<(Symbol, u64, &[u8])> {
        self.unit
            .unit
            .borrow()
            .placed()
            .iter()
            .map(|p| {
                // SAFETY: `p.address` is where the JIT module placed the
                // function (`get_finalized_function`) and `p.size` the
                // length of the code Cranelift emitted for it; finalized
                // code is mapped readable and executable, and stays mapped
                // while the module (owned by `self.unit`) lives, which the
                // returned slices' lifetime (`&self`) ensures. Nothing
                // writes to it.
                let bytes = unsafe { std::slice::from_raw_parts(p.address as *const u8, p.size) };
                (p.name, p.address as u64, bytes)
            })
            .collect()
    }

    /// [`Native::code`] with, for each function, which IR instruction
    /// each stretch of its code came from ([`crate::code_map`]).
    pub fn functions(&self) -> Vec<FunctionCode> {
        let unit = self.unit.unit.borrow();
        self.code()
            .into_iter()
            .zip(unit.placed())
            .map(|((name, address, bytes), p)| FunctionCode {
                name,
                address,
                bytes: bytes.to_vec(),
                places: p.places.clone(),
            })
            .collect()
    }

    /// Bytes of machine code over all compiled functions.
    pub fn code_size(&self) -> usize {
        self.unit.unit.borrow().placed().iter().map(|p| p.size).sum()
    }

    /// How many times compiling an optimized tier failed while running
    /// (the tier-0 code stayed: slower, still correct).
    pub fn tier_up_failures(&self) -> u32 {
        self.unit.tiers.as_ref().map_or(0, |t| t.counts.failures.get())
    }

    /// What tiering up did in the runs so far ([`TierUpStats`]).
    pub fn tier_ups(&self) -> TierUpStats {
        self.unit.tiers.as_ref().map_or_else(TierUpStats::default, |t| TierUpStats {
            count: t.counts.tier_ups.get(),
            regions: t.counts.regions.get(),
            time: t.counts.time.get(),
        })
    }

    /// Compiles both versions of a program (`flowc_passes::versions`): the
    /// generic module `m`, and the main function of `words`, optimized
    /// assuming the parameters `small` are 32-bit integers, which runs when
    /// they are. With `options.fuel` the code counts fuel ([`Native::run_with`]).
    pub fn compile_versions(
        m: &Module,
        words: Option<(&Module, &[Symbol])>,
        options: Options,
    ) -> Result<Native, String> {
        let m = crate::walks::with_walks(m, options.walks_everywhere);
        let words = words.map(|(w, small)| (crate::walks::with_walks(w, options.walks_everywhere), small));
        Native::compile_versions_with(&m, words.as_ref().map(|(w, small)| (&**w, *small)), options, Ir::Copied)
    }

    /// [`Native::compile_versions`], taking the generic module: tiered
    /// code keeps the IR of its functions to compile their optimized tier
    /// from, and a module that is not the caller's any more is moved
    /// there rather than copied (a main graph of 45,000 instructions:
    /// 5 MB of the peak of compiling it).
    pub fn compile_owned_versions(
        m: Module,
        words: Option<(&Module, &[Symbol])>,
        options: Options,
    ) -> Result<Native, String> {
        let mut m = m;
        crate::walks::rewrite_module(&mut m, options.walks_everywhere);
        let words = words.map(|(w, small)| (crate::walks::with_walks(w, options.walks_everywhere), small));
        let words = words.as_ref().map(|(w, small)| (&**w, *small));
        let mut native = Native::compile_versions_with(&m, words, options, Ir::Moved)?;
        native.unit.adopt(m);
        Ok(native)
    }

    fn compile_versions_with(
        m: &Module,
        words: Option<(&Module, &[Symbol])>,
        options: Options,
        ir: Ir,
    ) -> Result<Native, String> {
        let functions: Vec<&Function> = m.functions.iter().filter(|f| f.kind != FunctionKind::Trace).collect();
        let main =
            functions.iter().position(|f| f.kind == FunctionKind::Main).ok_or("the module has no main function")?;
        let version = words.map(|(w, small)| define::version(functions[main], w, small)).transpose()?;
        // One layout for both versions (each lays out what it keeps).
        let fields = m.layout().fields().iter().chain(words.map_or(&[][..], |(w, _)| w.layout().fields()));
        let layout = Layout::of(fields.copied());
        Ok(Native { unit: Unit::compile(&functions, main, version, m, layout, options, ir)? })
    }

    /// Runs the program with environment `env` (parameters by name;
    /// missing ones are unbound). Deep recursion needs a big stack: call
    /// this on a thread with one (see [`crate::with_stack`]).
    pub fn run(&self, env: &[(Symbol, Value)], max_depth: usize) -> Result<Outcome, RuntimeError> {
        self.run_with(env, &flowc_lang::interp::Config { fuel: None, max_depth })
    }

    /// [`Native::run`] under `config`: its call depth, and its fuel if the
    /// code was compiled to count it (one step per loop iteration, so a
    /// run may go further than the interpreter's count of statements
    /// before it runs out, but a runaway loop stops).
    pub fn run_with(
        &self,
        env: &[(Symbol, Value)],
        config: &flowc_lang::interp::Config,
    ) -> Result<Outcome, RuntimeError> {
        self.run_counted(env, config).0
    }

    /// [`Native::run_with`], also returning what the run did when it ends
    /// in an error: the allocations, and the loop iterations counted
    /// under `--fuel` (compiled code counts nothing else).
    pub fn run_counted(
        &self,
        env: &[(Symbol, Value)],
        config: &flowc_lang::interp::Config,
    ) -> (Result<Outcome, RuntimeError>, Counts) {
        // The heap's rows are found anew (`crate::walks`): another run's
        // rows are other objects.
        flowc_lang::heap::with(|h| h.rows.reset());
        let mut ctx = self.unit.context(config.max_depth);
        if let Some(fuel) = config.fuel {
            (ctx.fuel, ctx.fuel_limit) = (fuel.max(1), fuel);
        }
        let roots: Vec<Option<Root>> = self
            .unit
            .params
            .iter()
            .map(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| Root::new(v)))
            .collect();
        let args: Vec<Word> = self
            .unit
            .params
            .iter()
            .zip(&roots)
            .map(|(name, root)| root.as_ref().map_or(word::unbound(*name), Root::word))
            .collect();
        // SAFETY: `ctx` lives, unmoved, until the activation ends.
        let activation = unsafe { Activation::enter(&mut ctx) };
        self.unit.call(&args, &mut ctx);
        drop(activation);
        let counts = Counts {
            steps: if config.fuel.is_some() { ctx.fuel_limit.saturating_sub(ctx.fuel) } else { 0 },
            allocations: ctx.allocations,
        };
        if let Some(kind) = ctx.error.take() {
            return (Err(RuntimeError { kind, at: self.unit.location(&ctx) }), counts);
        }
        let result = match ctx.output.take() {
            Some(value) => Ok(Outcome { value, steps: counts.steps, allocations: ctx.allocations }),
            None => Err(RuntimeError { kind: ErrorKind::ReturnOutsideFunction, at: None }),
        };
        (result, counts)
    }
}

/// The state a run of compiled code starts from and hands back: the
/// allocation counter, the call depth limit and the depth of the frames
/// below (the interpreter's), under `--fuel` the steps left and the limit;
/// and, handed back, the loop iterations the traces ran and the work
/// their straight pieces did (`Ctx::work`).
#[derive(Clone, Debug, Default)]
pub struct RunState {
    pub allocations: u64,
    pub max_depth: usize,
    pub depth: usize,
    pub fuel: Option<(u64, u64)>,
    pub iterations: u64,
    /// Interpreter statements the run's straight pieces stood in for
    /// (`Ctx::work`, [`crate::lower::Shape::work`]).
    pub work: u64,
    /// The dispatch tier's tables of positions (`Ctx::positions`, for
    /// integers, and `Ctx::object_positions`, for objects by allocation
    /// number), which `guard_cold` reads and counts down: each one's first
    /// word and its length in positions (two words each: the count, and
    /// the address of a code slot of this cache or 0). The words must stay
    /// where they are, and nothing else may touch them, while the code
    /// runs; a link's code must take the parameters the dispatch loop's
    /// trace takes, in its order, from any state the loop arrives there in.
    pub positions: Option<[(std::ptr::NonNull<u64>, usize); 2]>,
    /// Where the run last entered a position's code through its link
    /// (set when it ends).
    pub linked: Option<Linked>,
    /// What the values a link passes must hold (`Ctx::link_pins`): pairs
    /// of an exit buffer offset and a word, ended by an offset of
    /// `u64::MAX`. Must stay where it is while the code runs.
    pub link_pins: Option<std::ptr::NonNull<u64>>,
}

/// Where a run of traces last entered a position's code through its link
/// ([`RunState::linked`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Linked {
    /// The link: the address of a code slot.
    pub slot: u64,
    /// The loop iterations counted before it (of the run's `iterations`;
    /// the rest are the linked code's).
    pub iterations: u64,
    /// How many links the run took in all.
    pub links: u64,
}

/// A trace compiled into a [`TraceCache`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TraceId(pub u32);

/// An exit (a guard, or an `exit` terminator) of a trace in a
/// [`TraceCache`]; exits are numbered across the cache, since a run that
/// continues from trace to trace leaves by an exit of whichever it is in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExitId(pub u32);

/// How a run of compiled traces ended.
pub enum TraceEnd {
    /// It left by `exit` (of whichever trace the run had reached): the
    /// values the exit stores ([`TraceExit::values`], in order; `None` for
    /// an unbound one).
    Exit { exit: ExitId, values: Vec<Option<Value>> },
    /// The program stopped with an error.
    Error(RuntimeError),
    /// The program printed (a trace does not print; kept for completeness).
    Printed(Value),
}

/// How a call of a compiled function ended ([`TraceCache::call`]).
pub enum CallEnd {
    Returned(Value),
    /// The program printed (and so ended) inside the call.
    Printed(Value),
    Error(RuntimeError),
}

/// Instructions' worth of JIT memory a trace cache reserves for the
/// traces and bridges Cranelift compiles (those baseline code refuses,
/// and trees; baseline code goes in the [`CodeHeap`]): 64 MiB of address
/// space at 512 bytes each. A trace that does not fit is not compiled;
/// the interpreter goes on running that path.
const TRACE_ROOM: usize = 1 << 17;

/// One JIT module for all the traces and bridges of a run: the program's
/// functions (which traces call) are compiled once, and each trace adds
/// its code to the same module.
///
/// Traces are compiled in the tail-call convention and continue in one
/// another without returning: a `jump_trace` is a tail call of a trace
/// compiled earlier, and every exit has a link slot ([`crate::lower::ExitSlot`]) that
/// [`TraceCache::link`] can point at a bridge — a trace whose parameters
/// are the exit's values — so that from then on the exit continues there
/// instead of returning to the caller. A run returns only at an exit with
/// no link, an error, or the program's end.
pub struct TraceCache {
    inner: Rc<RefCell<CacheInner>>,
}

/// A compiled trace's code and parameters.
struct Entry {
    /// The trace's code (entered through the cache's `trace_entry`).
    code: *const u8,
    params: Vec<Symbol>,
    /// The trace's record in the unit ([`CodeUnit::placed`]).
    placed: usize,
}

/// A program function as the cache defines it (`CacheInner::versions`).
struct Defined {
    /// As `optimize` made it (`optimized`), or as given.
    function: Function,
    optimized: bool,
    /// Whether it is defined: those called, or called by traces, and every
    /// function they may call — not the whole program (300 functions the
    /// run never calls, beside a recursive one it calls compiled, had cost
    /// the run 150 ms, twice the interpreter's whole run).
    defined: bool,
}

struct CacheInner {
    /// The context of the last run, kept for the next (a run is entered
    /// and left often: building a context each time cost more than the
    /// code it ran). Before the unit: dropped first.
    /// A context kept from the last run of code (boxed: moving it, some
    /// forty words, in and out of here cost five copies per entry).
    spare: Option<Box<Ctx>>,
    /// The Cranelift module, with what the code of the traces and of the
    /// program's functions needs while it runs.
    unit: CodeUnit,
    /// Where baseline traces' code goes ([`CodeHeap`]); Cranelift's goes
    /// in the unit's module.
    code_heap: CodeHeap,
    /// The program's functions' code, for baseline traces to call (empty
    /// until they are defined).
    function_code: crate::baseline::Functions,
    /// The program's functions (the hints, shared with whoever made the
    /// cache), declared, until the first is defined: they are compiled
    /// (Cranelift's optimizing settings, milliseconds each) only when a
    /// trace that calls one is compiled or one is called, so a run whose
    /// traces call nothing never pays for them.
    undefined: Option<std::sync::Arc<Module>>,
    /// How the functions are optimized before they are first defined
    /// ([`TraceCache::optimize_functions_with`]).
    optimize: Option<OptimizeFunctions>,
    /// The version of each function that is defined when it is needed,
    /// chosen when the first is ([`define_functions`]).
    versions: Vec<Defined>,
    /// The position in `versions` of each function, by name.
    version_of: HashMap<Symbol, usize>,
    /// How many of the functions were defined as `optimize` made them.
    optimized_functions: usize,
    /// Every trace compiled, by name, for `jump_trace`.
    names: HashMap<Symbol, crate::lower::TraceRef>,
    /// Each trace's code slot ([`crate::lower::CodeSlots`]), by number.
    code_slots: crate::lower::CodeSlots,
    entries: Vec<Entry>,
    /// The wrapper every trace is entered through
    /// ([`crate::baseline::trace_entry`]), in the code heap.
    trace_entry: *const u8,
    /// Every exit, by [`ExitId`], with the trace it belongs to (sorted by
    /// trace: a trace's exits are added when it is compiled).
    exits: crate::chunked::Chunked<(TraceExit, TraceId)>,
    /// For the exits of baseline code, the words their values are in
    /// (offsets from their trace's stack pointer): one table per trace,
    /// never changed, which each exit's slot points into
    /// ([`ExitSlot::words`]; read back by [`exit_words`]). A table per
    /// exit cost public BF hanoi.b's 42,000 exits 1.7 MB.
    word_tables: Vec<Box<[i32]>>,
    /// The stubs of baseline code's exits
    /// ([`crate::baseline::Compiled::stubs`]), which a direct link makes
    /// jumps into the bridge: their exits, ascending, and their
    /// addresses ([`CacheInner::stubs_of`]).
    stub_exits: Vec<u32>,
    stub_addresses: Vec<u64>,
    /// What a direct link overwrote of a stub, by the stub's address, to
    /// put back when the link is undone ([`TraceCache::unlink`]).
    unpatched: HashMap<u64, [u8; 5]>,
    /// By [`TraceId`]: how baseline code's frame is laid out (`None` for
    /// Cranelift's code).
    frames: Vec<Option<BaselineFrame>>,
    slots: ExitSlots,
    /// The slots of objects (the program's, shared with the interpreter).
    objects: ObjectInfo,
    /// Entry wrappers of the program's functions, made when first called.
    function_entries: HashMap<Symbol, *const u8>,
    /// The most values an exit stores.
    widest_exit: usize,
    /// Bytes of machine code of the traces and bridges compiled.
    code_size: usize,
    /// The sites of code generated away from the running thread
    /// ([`Apart`]), numbered from [`apart::SITES`] on.
    apart_sites: std::sync::Arc<std::sync::Mutex<crate::lower::SiteTable>>,
    /// The words of the lists baseline code holds, by table ([`rooted`]).
    rooted_lists: HashMap<*const u64, u64>,
    options: Options,
}

impl CacheInner {
    /// Where exit `e`'s stubs are in `stub_exits` and `stub_addresses`.
    fn stubs_of(&self, e: ExitId) -> std::ops::Range<usize> {
        let from = self.stub_exits.partition_point(|&n| n < e.0);
        from..from + self.stub_exits[from..].partition_point(|&n| n == e.0)
    }
}

impl TraceCache {
    /// Tells the cache's code that fields `fields` are never read unset
    /// (`lower::fields_always_set` over every function of the program
    /// that may run, the main graph included): baseline code reads them
    /// from an object without the unset test. Sound for traces too,
    /// though a trace may leave between an object's `new` and its `set`:
    /// whatever continues there — the interpreter, a bridge recorded from
    /// there — runs the rest of that block of the program, its `set`s
    /// before anything reads a field. For code compiled after the call.
    pub fn assume_always_set(&self, mut fields: Vec<Symbol>) {
        fields.sort_unstable();
        fields.dedup();
        self.inner.borrow_mut().objects.always_set = fields;
    }

    /// Assumes that of the program's fields only `fields` ever hold an
    /// object ([`crate::fields_holding_objects`] over the lowered main
    /// graph and every function): only their `set`s in code compiled
    /// after the call test the heap's row's mask
    /// ([`ObjectInfo::links`]; a field that holds no object is no link).
    pub fn assume_links(&self, mut fields: Vec<Symbol>) {
        fields.sort_unstable();
        fields.dedup();
        self.inner.borrow_mut().objects.links = Some(fields);
    }

    /// A cache for the traces of a program with `hints` (its functions and
    /// `immutable` declarations, shared, not copied: a program of
    /// thousands of functions was copied once more for its cache);
    /// compiles the functions.
    pub fn new(hints: std::sync::Arc<Module>, layout: &'static Layout, options: Options) -> Result<TraceCache, String> {
        // The functions (declared now, defined when first needed), and
        // room for the traces and bridges to come.
        let functions: Vec<&Function> = hints.functions.iter().filter(|g| g.kind == FunctionKind::Function).collect();
        let mut jit = Code::new(builder(size(functions.iter().copied()) + TRACE_ROOM)?);
        let runtime = define::declare_runtime(&mut *jit)?;
        let (_, funcs) = define::declare_functions(&mut *jit, &functions, "f")?;
        let objects = ObjectInfo { watch_rows: true, ..ObjectInfo::new(layout, &hints.immutable, true) };
        let mut code_heap = CodeHeap::new();
        // The baseline compiler's seven instructions on x86-64; elsewhere
        // (where every trace goes to Cranelift) Cranelift's wrapper.
        let trace_entry = if cfg!(target_arch = "x86_64") {
            code_heap.install("flowc_trace_entry", &crate::baseline::trace_entry())?
        } else {
            let id = define::define_trace_entry(&mut *jit, "flowc_trace_entry")?;
            jit.finalize_definitions().map_err(|e| e.to_string())?;
            jit.get_finalized_function(id)
        };
        // Where a `jump_trace` that passes its arguments in registers goes
        // for code without a register entry (`crate::baseline::regs_adapter`).
        let mut code_slots = crate::lower::CodeSlots::default();
        if cfg!(target_arch = "x86_64") {
            code_slots.adapter = code_heap.install("flowc_regs_adapter", &crate::baseline::regs_adapter())? as u64;
        }
        let inner = CacheInner {
            spare: None,
            unit: CodeUnit::new(jit, runtime, funcs, layout, &hints),
            code_heap,
            function_code: Default::default(),
            undefined: (!functions.is_empty()).then(|| hints.clone()),
            optimize: None,
            versions: Vec::new(),
            version_of: HashMap::default(),
            optimized_functions: 0,
            names: HashMap::default(),
            code_slots,
            entries: Vec::new(),
            trace_entry,
            exits: Default::default(),
            word_tables: Vec::new(),
            stub_exits: Vec::new(),
            stub_addresses: Vec::new(),
            unpatched: HashMap::default(),
            frames: Vec::new(),
            slots: ExitSlots::default(),
            objects,
            function_entries: HashMap::default(),
            // The adapter stores every argument register to the buffer.
            widest_exit: crate::baseline::ARG_REGS.len(),
            code_size: 0,
            apart_sites: std::sync::Arc::new(std::sync::Mutex::new(crate::lower::SiteTable::starting_at(apart::SITES))),
            rooted_lists: HashMap::default(),
            options,
        };
        Ok(TraceCache { inner: Rc::new(RefCell::new(inner)) })
    }

    /// Compiles trace `f` into the cache. Its name must be new to the
    /// cache, and every trace its `jump_trace`s name must be compiled
    /// already, with as many parameters as they pass.
    pub fn compile(&self, f: &Function) -> Result<TraceId, String> {
        Ok(self.compile_all(&[f], crate::compile::Codegen::Optimized)?[0])
    }

    /// Compiles traces `fs` into the cache together (their code is made
    /// executable at once), in order: each may jump to those before it.
    /// Nothing is compiled when a name is taken or a jump goes nowhere;
    /// when the code generator fails on one, those before it are compiled
    /// (the cache's [`TraceCache::len`] says how many traces it holds).
    /// `tier` says how ([`crate::lower::Links::tier`]).
    pub fn compile_all(&self, fs: &[&Function], tier: crate::compile::Codegen) -> Result<Vec<TraceId>, String> {
        self.compile_in(fs, Vec::new(), tier, None)
    }

    /// [`TraceCache::compile_all`] (or, with `from`,
    /// [`TraceCache::compile_bridge`] of the one trace) given each trace's
    /// [`crate::lower::Shape`], made ahead, where there is time (the JIT
    /// makes them on the thread that optimizes): the running thread does
    /// not make them again. No shapes: the cache makes them.
    pub fn compile_shaped(
        &self,
        fs: &[&Function],
        shapes: Vec<crate::lower::Shape>,
        tier: crate::compile::Codegen,
        from: Option<ExitId>,
    ) -> Result<Vec<TraceId>, String> {
        if !(shapes.is_empty() || shapes.len() == fs.len()) || (from.is_some() && fs.len() != 1) {
            return Err("a shape for each trace (or none), and one trace for a bridge".into());
        }
        self.compile_in(fs, shapes, tier, from)
    }

    /// Compiles bridge `f` for exit `from` (`tier` as in
    /// [`TraceCache::compile_all`]): when both it and the exit's trace are
    /// baseline code, to run in that trace's frame ([`crate::baseline`]),
    /// so that once [`TraceCache::link`]ed to `from` (and to no other
    /// exit) the exit jumps straight into it.
    pub fn compile_bridge(&self, f: &Function, from: ExitId, tier: crate::compile::Codegen) -> Result<TraceId, String> {
        Ok(self.compile_in(&[f], Vec::new(), tier, Some(from))?[0])
    }

    /// [`TraceCache::compile_all`], the first of `fs` a bridge for exit
    /// `from` if given; `shapes`, if not empty, those of `fs`.
    fn compile_in(
        &self,
        fs: &[&Function],
        shapes: Vec<crate::lower::Shape>,
        tier: crate::compile::Codegen,
        from: Option<ExitId>,
    ) -> Result<Vec<TraceId>, String> {
        let mut shapes = shapes.into_iter();
        let mut guard = self.inner.borrow_mut();
        let inner = &mut *guard;
        let callees: Vec<Symbol> = fs.iter().flat_map(|f| f.callees()).collect();
        if !callees.is_empty() {
            define_functions(inner, callees)?;
        }
        let mut arity: HashMap<Symbol, usize> = HashMap::default();
        for f in fs {
            if inner.names.contains_key(&f.name) || arity.contains_key(&f.name) {
                return Err(format!("a trace named {} is compiled already", f.name));
            }
            for &b in &f.layout {
                if let flowc_ir::Terminator::JumpTrace { target, args } = &f.blocks[b].term {
                    match inner.names.get(target).map(|t| t.params).or_else(|| arity.get(target).copied()) {
                        Some(n) if n == args.len() => {}
                        Some(n) => return Err(format!("{target} takes {n} arguments, not {}", args.len())),
                        None => return Err(format!("no trace named {target} is compiled")),
                    }
                }
            }
            arity.insert(f.name, f.params.len());
        }
        let mut made = Vec::with_capacity(fs.len());
        let mut failed = None;
        let mut safepoints = Vec::new();
        // Traces are compiled as they come: what counts is latency.
        let mut compiler = crate::compile::Compiler::serial();
        let mut frames = Vec::with_capacity(fs.len());
        // A bridge in its parent's frame: the parent's frame, the words of
        // the exit's values, and the root (its name, its first block).
        let inherit = from.and_then(|e| inherited(inner, e));
        let link_check = inner.options.link_check.map(u64::next_power_of_two);
        for (k, f) in fs.iter().enumerate() {
            let t = TraceId((inner.entries.len() + made.len()) as u32);
            let shape = shapes.next().unwrap_or_else(|| crate::lower::Shape::new(f));
            let inherits = inherit.as_ref().filter(|_| k == 0);
            if tier == crate::compile::Codegen::Baseline {
                let mut target = crate::baseline::Target {
                    objects: &inner.objects,
                    traces: &inner.names,
                    sites: &mut inner.unit.sites,
                    traps: Some(&mut inner.unit.traps),
                    fuel: inner.options.fuel,
                    link_check,
                };
                let parent = inherits.map(Inherited::as_parent);
                // Refused: Cranelift compiles it, cheaply.
                if let Ok(code) = crate::baseline::compile(&mut target, f, &shape, &inner.function_code, parent) {
                    let piece = Piece { name: f.name, params: define::params(f), code, code_slot: None };
                    match install_piece(inner, t, piece, inherits) {
                        Ok((record, frame)) => {
                            frames.push(Some(frame));
                            made.push((t, Placed::Installed(record), define::params(f)));
                        }
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                    continue;
                }
            }
            let tier = if tier == crate::compile::Codegen::Baseline { crate::compile::Codegen::Cheap } else { tier };
            let mut exits = Vec::new();
            let first_exit = inner.exits.len();
            let mut env =
                inner.unit.env(&mut exits, &mut safepoints, &inner.objects, &mut compiler, inner.options.fuel);
            env.links = Some(crate::lower::Links {
                slots: &mut inner.slots,
                traces: &inner.names,
                first_exit,
                tier,
                link_check,
            });
            frames.push(None);
            let facts = crate::lower::Facts::with_shape(shape, f);
            let defined = define::declare_functions(&mut *env.module, &[*f], &format!("t{}_", t.0))
                .and_then(|(ids, _)| define::define_function(&mut env, f, ids[0], facts).map(|()| ids[0]));
            let id = match defined {
                Ok(id) => id,
                Err(e) => {
                    frames.pop();
                    failed = Some(e);
                    break;
                }
            };
            inner.widest_exit = inner.widest_exit.max(exits.iter().map(|e| e.values.len()).max().unwrap_or(0));
            inner.exits.extend(exits.into_iter().map(|e| (e, t)));
            inner.widest_exit = inner.widest_exit.max(f.params.len());
            bind_name(inner, f.name, t, f.params.len());
            made.push((t, Placed::Defined(id), define::params(f)));
        }
        if made.iter().any(|(_, placed, ..)| matches!(placed, Placed::Defined(_))) {
            inner.unit.jit.finalize_definitions().map_err(|e| e.to_string())?;
        }
        // Cranelift's traces are recorded in the unit in the order they
        // were defined, after those before.
        let first = inner.unit.placed().len();
        let defined: Vec<cranelift_module::FuncId> = safepoints.iter().map(|d| d.id).collect();
        inner.unit.register(safepoints);
        let mut out = Vec::with_capacity(made.len());
        inner.frames.extend(frames);
        for (t, placed, params) in made {
            let placed = match placed {
                Placed::Installed(k) => k,
                Placed::Defined(id) => first + defined.iter().position(|&d| d == id).expect("a trace defined"),
            };
            add_entry(inner, t, placed, params);
            out.push(t);
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// The final machine code of trace `t`, with the places of its
    /// ranges ([`crate::code_map`]).
    pub fn code(&self, t: TraceId) -> FunctionCode {
        let inner = self.inner.borrow();
        let p = &inner.unit.placed()[inner.entries[t.0 as usize].placed];
        // SAFETY: `p.address` is where the trace's code was placed (the
        // code heap's executable view, or the JIT module's finalized code)
        // and `p.size` its length; the code stays mapped and readable
        // while the cache's heap and module live, and unchanged but by a
        // link (which patches an exit stub under a mutable borrow of
        // `inner`), which the borrow of `inner` ensures for the copy made
        // here.
        let bytes = unsafe { std::slice::from_raw_parts(p.address as *const u8, p.size) }.to_vec();
        FunctionCode { name: p.name, address: p.address as u64, bytes, places: p.places.clone() }
    }

    /// Bytes of machine code of the traces and bridges compiled so far
    /// (the functions the cache was made with not counted).
    pub fn code_size(&self) -> usize {
        self.inner.borrow().code_size
    }

    /// How many exits the cache's traces have.
    pub fn exit_count(&self) -> usize {
        self.inner.borrow().exits.len()
    }

    /// How many traces the cache holds (they are numbered from 0).
    pub fn len(&self) -> usize {
        self.inner.borrow().entries.len()
    }

    /// Whether the cache holds no trace.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The parameters of trace `t`, by name, in order.
    pub fn params(&self, t: TraceId) -> Vec<Symbol> {
        self.inner.borrow().entries[t.0 as usize].params.clone()
    }

    /// The exits of trace `t`, in the order its code made them.
    pub fn exits_of(&self, t: TraceId) -> Vec<ExitId> {
        let inner = self.inner.borrow();
        // Traces are numbered in the order they are compiled, and each
        // adds its exits at the end: the list is sorted by trace.
        let first = inner.exits.partition_point_from(0, |(_, owner)| *owner < t);
        let end = inner.exits.partition_point_from(first, |(_, owner)| *owner == t);
        (first..end).map(|k| ExitId(k as u32)).collect()
    }

    /// What exit `e` stores, and the trace it belongs to.
    pub fn exit(&self, e: ExitId) -> (TraceExit, TraceId) {
        self.inner.borrow().exits[e.0 as usize].clone()
    }

    /// From now on, exit `e` continues in trace `bridge`, which must take
    /// the exit's values as its parameters (as many).
    pub fn link(&self, e: ExitId, bridge: TraceId) -> Result<(), String> {
        let inner = &mut *self.inner.borrow_mut();
        let (exit, _) = inner.exits.get(e.0 as usize).ok_or("no such exit")?;
        let entry = inner.entries.get(bridge.0 as usize).ok_or("no such trace")?;
        if entry.params.len() != exit.values.len() {
            return Err(format!(
                "the bridge takes {} parameters but the exit stores {} values",
                entry.params.len(),
                exit.values.len()
            ));
        }
        let address = entry.code as u64;
        let slot = inner.slots.get(e.0 as usize).ok_or("the exit has no slot")?;
        match inner.frames.get(bridge.0 as usize).and_then(Option::as_ref).filter(|f| f.from.is_some()) {
            Some(frame) if frame.from != Some(e) => {
                let name = inner.unit.placed()[entry.placed].name;
                return Err(format!("{name} runs in the frame of another exit's trace"));
            }
            Some(frame) => {
                let direct = address + frame.direct.expect("an inheriting bridge's") as u64;
                slot.direct.set(direct);
                // Its stubs jump there: no load of the slot, no indirect
                // jump (a stub out of reach keeps reading the slot).
                let stubs = inner.stubs_of(e);
                for k in stubs {
                    let stub = inner.stub_addresses[k];
                    if let std::collections::hash_map::Entry::Vacant(v) = inner.unpatched.entry(stub) {
                        if let Some(bytes) = inner.code_heap.read::<5>(stub) {
                            v.insert(bytes);
                        }
                    }
                    inner.code_heap.patch_jump(stub, direct);
                }
            }
            None => {}
        }
        slot.target.set(address);
        Ok(())
    }

    /// Undoes exit `e`'s link ([`TraceCache::link`]): from now on the exit
    /// leaves as one without a bridge does, and its bridge is no longer
    /// run from there. The JIT's to link it to a bridge again.
    /// Changes nothing where it fails.
    pub fn unlink(&self, e: ExitId) -> Result<(), String> {
        let inner = &mut *self.inner.borrow_mut();
        inner.slots.get(e.0 as usize).ok_or("the exit has no slot")?;
        let stubs: Vec<u64> = inner.stubs_of(e).map(|k| inner.stub_addresses[k]).collect();
        if stubs.iter().any(|&s| inner.unpatched.contains_key(&s) && inner.code_heap.read::<5>(s).is_none()) {
            return Err("an exit stub out of the code heap".to_string());
        }
        for stub in stubs {
            if let Some(bytes) = inner.unpatched.remove(&stub) {
                // (In the heap: checked above.)
                inner.code_heap.patch(stub, &bytes);
            }
        }
        let slot = inner.slots.get(e.0 as usize).expect("looked at");
        slot.target.set(0);
        slot.direct.set(0);
        Ok(())
    }

    /// From now on, what jumps to trace `t` (a `jump_trace`, the
    /// interpreter entering it) runs trace `code` instead, which must take
    /// the same parameters: an optimized version of it, or a tree it is
    /// the root of. Code running `t`'s own code finishes it.
    pub fn install(&self, t: TraceId, code: TraceId) -> Result<(), String> {
        let mut inner = self.inner.borrow_mut();
        let (a, b) = (
            inner.entries.get(t.0 as usize).ok_or("no such trace")?,
            inner.entries.get(code.0 as usize).ok_or("no such trace")?,
        );
        if a.params.len() != b.params.len() {
            let name = |e: &Entry| inner.unit.placed()[e.placed].name;
            return Err(format!("{} takes {} parameters, {} {}", name(a), a.params.len(), name(b), b.params.len()));
        }
        let address = b.code as u64;
        let regs = regs_entry(&inner, code, b.code);
        inner.code_slots.set(t.0 as usize, address, regs);
        Ok(())
    }

    /// The address of trace `t`'s code slot, which holds the code running
    /// for it (its own, or what replaced it) for as long as the cache
    /// lives: what a dispatch tier's position links to (see
    /// [`RunState::positions`]). `None` for no trace of the cache.
    pub fn code_slot(&self, t: TraceId) -> Option<u64> {
        let mut inner = self.inner.borrow_mut();
        inner.entries.get(t.0 as usize)?;
        Some(inner.code_slots.slot(t.0 as usize) as *const std::cell::Cell<u64> as u64)
    }

    /// Whether exit `e` jumps straight into its bridge, which runs in the
    /// frame of `e`'s trace ([`TraceCache::compile_bridge`]): those
    /// crossings are not counted.
    pub fn linked_directly(&self, e: ExitId) -> bool {
        self.inner.borrow().slots.get(e.0 as usize).is_some_and(|s| s.direct.get() != 0)
    }

    /// Failures of exit `e` that continued in its link (through the
    /// exit buffer: not those of a direct link).
    pub fn linked_failures(&self, e: ExitId) -> u64 {
        self.inner.borrow().slots.get(e.0 as usize).map_or(0, |s| s.count.get())
    }

    /// Runs trace `t` from `args` (one value per parameter) until it
    /// leaves, in `run`: objects are numbered on from its count, and code
    /// compiled with fuel checks takes one step per loop iteration (and
    /// per trace entered) from its fuel.
    pub fn run(&self, t: TraceId, args: &[Value], run: &mut RunState) -> TraceEnd {
        let (wrapper, code, n) = {
            let mut inner = self.inner.borrow_mut();
            // The code in the trace's slot (its own, or what replaced it).
            let code = inner.code_slots.slot(t.0 as usize).get() as *const u8;
            (inner.trace_entry, code, inner.entries[t.0 as usize].params.len())
        };
        assert_eq!(args.len(), n, "one value per parameter");
        let (mut ctx, returned) = self.enter(wrapper, Entering::Trace(code), args, run);
        let end = if let Some(kind) = ctx.error.take() {
            let at = self.location(&ctx);
            TraceEnd::Error(RuntimeError { kind, at })
        } else if let Some(v) = ctx.output.take() {
            TraceEnd::Printed(v)
        } else {
            let exit = ExitId((returned - 1) as u32);
            let count = self.inner.borrow().exits[exit.0 as usize].0.values.len();
            // SAFETY: the trace stored these words for its exit just now,
            // and no collection ran since it returned.
            let values = ctx.exit_values(count).iter().map(|&w| unsafe { ctx.value(w) }.ok()).collect();
            TraceEnd::Exit { exit, values }
        };
        self.inner.borrow_mut().spare = Some(ctx);
        end
    }

    /// Calls the program's function `name` (compiled with the cache) with
    /// `args`, in a run ([`RunState`]) whose interpreter has `run.depth` frames
    /// below the callee's.
    pub fn call(&self, name: Symbol, args: &[Value], run: &mut RunState) -> CallEnd {
        let code = match self.function_entry(name, args.len()) {
            Ok(code) => code,
            Err(e) => {
                let kind = ErrorKind::User(Symbol::intern(&format!("internal: calling {name}: {e}")));
                return CallEnd::Error(RuntimeError { kind, at: None });
            }
        };
        let (mut ctx, returned) = self.enter(code, Entering::Function, args, run);
        let end = if let Some(kind) = ctx.error.take() {
            let at = self.location(&ctx);
            CallEnd::Error(RuntimeError { kind, at })
        } else if let Some(v) = ctx.output.take() {
            CallEnd::Printed(v)
        } else {
            // SAFETY: `returned` is the word the compiled function returned
            // just now, and no collection ran since.
            match unsafe { ctx.value(Word::from_bits(returned)) } {
                Ok(v) => CallEnd::Returned(v),
                Err(kind) => CallEnd::Error(RuntimeError { kind, at: None }),
            }
        };
        self.inner.borrow_mut().spare = Some(ctx);
        end
    }

    /// How many of the program's functions were compiled as the cache's
    /// [`TraceCache::optimize_functions_with`] made them (0 until they are
    /// compiled; only those compiled: see [`Defined`]).
    pub fn optimized_functions(&self) -> usize {
        self.inner.borrow().optimized_functions
    }

    /// Has the program's functions optimized by `optimize` before they
    /// are first defined (the JIT: the eight passes over the program, so
    /// a function called compiled runs what native code would).
    pub fn optimize_functions_with(&self, optimize: OptimizeFunctions) {
        self.inner.borrow_mut().optimize = Some(optimize);
    }

    /// The entry wrapper of function `name` with `arity` parameters, made
    /// on first use.
    fn function_entry(&self, name: Symbol, arity: usize) -> Result<*const u8, String> {
        let mut guard = self.inner.borrow_mut();
        let inner = &mut *guard;
        if let Some(&code) = inner.function_entries.get(&name) {
            return Ok(code);
        }
        let &(id, n) = inner.unit.funcs.get(&name).ok_or("no such function")?;
        if n != arity {
            return Err(format!("it takes {n} arguments, not {arity}"));
        }
        define_functions(inner, [name])?;
        let k = inner.function_entries.len();
        let jit = &mut inner.unit.jit;
        let entry = define::define_entry_of(&mut **jit, n, id, None, &|_| None, &format!("flowc_call_{k}"))?;
        jit.finalize_definitions().map_err(|e| e.to_string())?;
        let code = jit.get_finalized_function(entry);
        inner.function_entries.insert(name, code);
        Ok(code)
    }

    /// Calls entry wrapper `code` with `args` in a context for `run` — a
    /// trace's in the exit buffer (`buffered`), a function's in an array;
    /// the context afterwards, and what the code returned (see [`WrapperFn`]).
    fn enter(&self, wrapper: *const u8, entering: Entering, args: &[Value], run: &mut RunState) -> (Box<Ctx>, u64) {
        let mut ctx = {
            let mut inner = self.inner.borrow_mut();
            // Traps are added as traces are compiled: a kept context must
            // know them all, else a new one is made.
            match inner.spare.take().and_then(|ctx| inner.unit.refresh(ctx, run.max_depth)) {
                Some(ctx) => ctx,
                None => Box::new(inner.unit.context(run.max_depth)),
            }
        };
        let widest = self.inner.borrow().widest_exit;
        ctx.allocations = run.allocations;
        ctx.depth = run.depth as u64;
        let [ints, objects] = run
            .positions
            .map_or([(std::ptr::null_mut(), 0); 2], |tables| tables.map(|(words, n)| (words.as_ptr(), n as u64)));
        ((ctx.positions, ctx.positions_len), (ctx.object_positions, ctx.object_positions_len)) = (ints, objects);
        (ctx.linked_slot, ctx.linked_iterations, ctx.links, ctx.work) = (0, 0, 0, 0);
        ctx.link_pins = run.link_pins.map_or(std::ptr::null(), |p| p.as_ptr().cast_const());
        if let Some((left, limit)) = run.fuel {
            (ctx.fuel, ctx.fuel_limit) = (left, limit);
        }
        ctx.exit_buffer(widest.max(args.len()));
        // No collection while the arguments are boxed: a word boxed first
        // is held by nothing the collector sees until the code reads it
        // (which it does before anything allocates).
        flowc_lang::heap::with(|h| h.pause());
        let words: smallvec::SmallVec<[Word; 16]> = {
            let inner = self.inner.borrow();
            args.iter()
                .map(|v| match v {
                    // A list the code holds as a constant (an
                    // interpreter's program, passed to every trace it
                    // enters) is the cell the cache keeps rooted for it:
                    // boxed at each entry, the tutorial BF interpreter's
                    // `counters 30` made two cells per entry, 17,000
                    // entries, a tenth of its run's page faults. Any other
                    // list is boxed (rooted for good, a list made anew
                    // each round would never be freed).
                    Value::List(l) => match inner.rooted_lists.get(&l.words()) {
                        // SAFETY: a word of a cell the cache keeps rooted.
                        Some(&w) => unsafe { Word::from_bits(w) },
                        None => ctx.word(v.clone()),
                    },
                    _ => ctx.word(v.clone()),
                })
                .collect()
        };
        flowc_lang::heap::with(|h| h.resume());
        let first = match entering {
            // A trace finds its arguments in the exit buffer.
            Entering::Trace(code) => {
                ctx.set_exit_values(&words);
                code as u64
            }
            Entering::Function => words.as_ptr() as u64,
        };
        // SAFETY: `wrapper` is an entry wrapper compiled by the cache with
        // the signature `extern "C" fn(u64, *mut Ctx) -> u64`: the trace
        // wrapper, whose first argument is the address of a trace the
        // cache compiled (it reads its arguments from the exit buffer,
        // which holds one word per parameter — the callers check `args`
        // has that many), or a function's wrapper, whose first argument
        // points at `words` (one per parameter, checked by the caller). It
        // hands `ctx`, a unique reference for the whole call, to the code
        // and the runtime. The code lives as long as the cache, which
        // `self` keeps.
        let entry: WrapperFn = unsafe { std::mem::transmute::<*const u8, WrapperFn>(wrapper) };
        // SAFETY: `ctx` lives, unmoved, until the activation ends.
        let activation = unsafe { Activation::enter(&mut *ctx) };
        // SAFETY: the arguments are what the wrapper expects (above).
        let returned = unsafe { entry(first, &mut *ctx) };
        drop(activation);
        run.allocations = ctx.allocations;
        run.iterations = ctx.iterations;
        run.work = ctx.work;
        run.linked = (ctx.links != 0).then_some(Linked {
            slot: ctx.linked_slot,
            iterations: ctx.linked_iterations,
            links: ctx.links,
        });
        if let Some((left, _)) = &mut run.fuel {
            *left = ctx.fuel;
        }
        (ctx, returned)
    }

    /// Where the failing runtime call of a run came from (code generated
    /// away from the running thread numbers its sites in a table of its
    /// own: [`Apart`]).
    fn location(&self, ctx: &Ctx) -> Option<flowc_lang::interp::Location> {
        let inner = self.inner.borrow();
        inner.unit.location(ctx.error_site).or_else(|| apart::location(&inner.apart_sites, ctx.error_site))
    }
}

/// A bridge's parent frame, as a bridge compiled to run in it sees it
/// ([`crate::baseline::Inherit`]): the exit it is compiled for, the words
/// of the exit's values, the parent's frame, and its root trace (its
/// number, name and the address of its first block).
#[derive(Clone)]
pub(crate) struct Inherited {
    exit: ExitId,
    params: Box<[i32]>,
    frame: crate::baseline::Frame,
    root: TraceId,
    root_entry: (Symbol, u64),
}

impl Inherited {
    fn as_parent(&self) -> crate::baseline::Inherit<'_> {
        crate::baseline::Inherit { parent: &self.frame, params: &self.params, root: Some(self.root_entry) }
    }
}

/// The words exit `e`'s values are in, when its trace is baseline code
/// (`CacheInner::word_tables`).
fn exit_words(inner: &CacheInner, e: ExitId) -> Option<&[i32]> {
    let slot = inner.slots.get(e.0 as usize)?;
    let (at, n) = (slot.words.get(), slot.word_count.get());
    if at == 0 {
        return None;
    }
    // SAFETY: a slot's words are set only by `install_piece`, to a range
    // of one of `inner.word_tables`' boxed tables, which are never changed
    // or dropped while the cache lives; the borrow of `inner` keeps it.
    Some(unsafe { std::slice::from_raw_parts(at as *const i32, n as usize) })
}

/// The frame a bridge of exit `e` runs in, when the exit's trace is
/// baseline code.
fn inherited(inner: &CacheInner, e: ExitId) -> Option<Inherited> {
    let words = exit_words(inner, e)?;
    let parent = inner.exits.get(e.0 as usize)?.1;
    let frame = inner.frames.get(parent.0 as usize)?.as_ref()?;
    let root = &inner.entries[frame.root.0 as usize];
    let body = root.code as u64 + inner.frames[frame.root.0 as usize].as_ref()?.body as u64;
    Some(Inherited {
        exit: e,
        params: words.into(),
        frame: frame.frame.clone(),
        root: frame.root,
        root_entry: (inner.unit.placed()[root.placed].name, body),
    })
}

/// The word of constant `c` for code of the cache: a cell of the running
/// thread's heap, pinned while the cache lives. A list is boxed once, by
/// its table (traces of an interpreter all name the program it runs: a
/// cell each was some 2,000 cells, and collections, per BF run).
fn rooted(inner: &mut CacheInner, c: &Value) -> u64 {
    let table = match c {
        Value::List(l) => Some(l.words()),
        _ => None,
    };
    if let Some(&w) = table.and_then(|t| inner.rooted_lists.get(&t)) {
        return w;
    }
    let root = Root::new(c);
    let w = root.word().as_i64() as u64;
    inner.unit.pool.push(root);
    if let Some(t) = table {
        inner.rooted_lists.insert(t, w);
    }
    w
}

/// A trace's baseline code, to install as trace number `t`: its name and
/// parameters, and the code slot its code was generated to jump through
/// when something else made it ([`Apart`]; `None`: the cache's own).
pub(crate) struct Piece {
    name: Symbol,
    params: Vec<Symbol>,
    code: crate::baseline::Compiled,
    code_slot: Option<Box<crate::lower::CodeSlot>>,
}

/// Installs baseline code `pieces` made away from the cache ([`Apart`]),
/// in order, the first a bridge in the frame `inherits` describes if
/// given; their numbers. When one fails, those before it stay.
fn install_baseline_batch(
    inner: &mut CacheInner,
    pieces: Vec<Piece>,
    inherits: Option<&Inherited>,
) -> Result<Vec<TraceId>, String> {
    let mut out = Vec::with_capacity(pieces.len());
    for (k, piece) in pieces.into_iter().enumerate() {
        let t = TraceId(inner.entries.len() as u32);
        let params = piece.params.clone();
        let (placed, frame) = install_piece(inner, t, piece, inherits.filter(|_| k == 0))?;
        inner.frames.push(Some(frame));
        add_entry(inner, t, placed, params);
        out.push(t);
    }
    Ok(out)
}

/// Makes trace `t`, taking `params`, whose code is the unit's record
/// `placed`, enterable: its code slot holds its code, its entry is added.
fn add_entry(inner: &mut CacheInner, t: TraceId, placed: usize, params: Vec<Symbol>) {
    let p = &inner.unit.placed()[placed];
    let code = p.address as *const u8;
    inner.code_size += p.size;
    let regs = regs_entry(inner, t, code);
    inner.code_slots.set(t.0 as usize, code as u64, regs);
    inner.entries.push(Entry { code, params, placed });
}

/// The address of the register entry of trace `t`'s own code (at `code`),
/// if it has one: baseline code of few enough parameters.
fn regs_entry(inner: &CacheInner, t: TraceId, code: *const u8) -> Option<u64> {
    let frame = inner.frames.get(t.0 as usize)?.as_ref()?;
    Some(code as u64 + u64::from(frame.regs?))
}

/// Binds trace name `name` (of trace `t`, taking `params` parameters) to
/// `t`'s code slot, for the `jump_trace`s of code compiled after it.
fn bind_name(inner: &mut CacheInner, name: Symbol, t: TraceId, params: usize) {
    let slot = inner.code_slots.slot(t.0 as usize) as *const std::cell::Cell<u64>;
    inner.names.insert(name, crate::lower::TraceRef { params, slot });
}

/// Installs `piece` as trace `t` (a bridge in the frame `inherits`
/// describes): its constants given their words (cells pinned while the
/// cache lives), its code copied to the code heap and registered, its
/// exits numbered on from the cache's (their slots adopted, told their
/// numbers and words), its name bound to its code slot. Returns its
/// record in the unit and its frame; the caller sets its code slot and
/// adds its entry once the batch is placed.
fn install_piece(
    inner: &mut CacheInner,
    t: TraceId,
    piece: Piece,
    inherits: Option<&Inherited>,
) -> Result<(usize, BaselineFrame), String> {
    let Piece { name, params, mut code, code_slot } = piece;
    let words: Vec<u64> = code.constants.iter().map(|c| rooted(inner, c)).collect();
    for &(at, k) in &code.fills {
        code.code[at as usize..at as usize + 8].copy_from_slice(&words[k].to_le_bytes());
    }
    let exits = std::mem::take(&mut code.exits);
    let slots = std::mem::take(&mut code.slots);
    let exit_words = std::mem::take(&mut code.exit_words);
    let mut stubs = std::mem::take(&mut code.stubs);
    let frame = BaselineFrame {
        frame: code.frame.clone(),
        root: inherits.map_or(t, |i| i.root),
        from: inherits.map(|i| i.exit),
        direct: code.direct,
        body: code.body,
        regs: code.regs_entry,
    };
    let (record, at) = install_baseline(&mut inner.code_heap, &mut inner.unit, t, name, code)?;
    let first_exit = inner.exits.len();
    // The stubs' addresses, by exit (the exits after every earlier
    // trace's).
    stubs.sort_by_key(|&(n, _)| n);
    for &(n, offset) in &stubs {
        inner.stub_exits.push(first_exit as u32 + n);
        inner.stub_addresses.push(at + offset as u64);
    }
    inner.widest_exit = inner.widest_exit.max(exits.iter().map(|e| e.values.len()).max().unwrap_or(0));
    inner.widest_exit = inner.widest_exit.max(params.len());
    // The exits' slots, as the code made them; each told its number and
    // the words its values are in (boxed: the code reads them there).
    inner.slots.adopt(first_exit, slots);
    let table: Box<[i32]> = exit_words.iter().flatten().copied().collect();
    let mut from = 0;
    for (k, w) in exit_words.iter().enumerate() {
        let slot = inner.slots.slot(first_exit + k);
        slot.words.set(table[from..].as_ptr() as u64);
        slot.word_count.set(w.len() as u64);
        slot.number.set((first_exit + k + 1) as u64);
        from += w.len();
    }
    // Moving the box moves no element: the slots' pointers stay good.
    inner.word_tables.push(table);
    inner.exits.extend(exits.into_iter().map(|e| (e, t)));
    if let Some(slot) = code_slot {
        inner.code_slots.adopt(t.0 as usize, slot);
    }
    bind_name(inner, name, t, params.len());
    Ok((record, frame))
}

/// How a cache's functions are optimized before they are first defined
/// (the whole program's, as `flowc_passes` would: this crate does not
/// depend on the passes): the module of the program's functions in,
/// the optimized program out, or `None`.
pub type OptimizeFunctions = Box<dyn FnOnce(&Module) -> Option<std::sync::Arc<Module>>>;

/// Defines program functions, if not yet done: optimized where the
/// cache was given a way ([`TraceCache::optimize_functions_with`]: each
/// function the optimized program has by the same name and arity, the
/// hints' own otherwise), compiled with Cranelift's optimizing settings,
/// their code made executable and their safepoints registered — those
/// `roots` names and every function they may call (their closure over the
/// call graph) that is not defined yet, the versions chosen the first time
/// (`CacheInner::versions`). Names that are no function of the program are
/// left out (their calls trap).
fn define_functions(inner: &mut CacheInner, roots: impl IntoIterator<Item = Symbol>) -> Result<(), String> {
    if let Some(hints) = inner.undefined.take() {
        let optimized = inner.optimize.take().and_then(|optimize| optimize(&hints));
        let by_name: HashMap<Symbol, &Function> = optimized
            .iter()
            .flat_map(|m| &m.functions)
            .filter(|o| o.kind == FunctionKind::Function)
            .map(|o| (o.name, o))
            .collect();
        for f in hints.functions.iter().filter(|g| g.kind == FunctionKind::Function) {
            let optimized = by_name.get(&f.name).filter(|o| o.params.len() == f.params.len());
            let function = optimized.map_or_else(|| f.clone(), |o| (*o).clone());
            inner.version_of.insert(f.name, inner.versions.len());
            inner.versions.push(Defined { function, optimized: optimized.is_some(), defined: false });
        }
    }
    // The closure, in the program's order (deterministic code).
    let mut batch: Vec<usize> = Vec::new();
    let mut todo: Vec<Symbol> = roots.into_iter().collect();
    while let Some(name) = todo.pop() {
        let Some(&k) = inner.version_of.get(&name) else { continue };
        let version = &mut inner.versions[k];
        if std::mem::replace(&mut version.defined, true) {
            continue;
        }
        batch.push(k);
        todo.extend(version.function.callees());
    }
    if batch.is_empty() {
        return Ok(());
    }
    batch.sort_unstable();
    inner.optimized_functions += batch.iter().filter(|&&k| inner.versions[k].optimized).count();
    let functions: Vec<&Function> = batch.iter().map(|&k| &inner.versions[k].function).collect();
    let mut safepoints = Vec::new();
    let mut compiler = crate::compile::Compiler::for_work(size(functions.iter().copied()));
    for (k, &f) in functions.iter().enumerate() {
        let mut exits = Vec::new();
        let mut env = inner.unit.env(&mut exits, &mut safepoints, &inner.objects, &mut compiler, inner.options.fuel);
        let id = env.funcs[&f.name].0;
        define::define_function(&mut env, f, id, crate::lower::Facts::new(f))?;
        if k + 1 == functions.len() {
            crate::compile::finish(&mut env)?;
        }
    }
    let unit = &mut inner.unit;
    unit.jit.finalize_definitions().map_err(|e| e.to_string())?;
    for f in &functions {
        let (id, _) = unit.funcs[&f.name];
        inner.function_code.insert(f.name, unit.jit.get_finalized_function(id) as i64);
    }
    unit.register(safepoints);
    Ok(())
}

/// Copies baseline trace `t`'s code (named `name`) into `heap` and
/// registers it in `unit`; returns its record's index there and its
/// address.
fn install_baseline(
    heap: &mut CodeHeap,
    unit: &mut CodeUnit,
    t: TraceId,
    name: Symbol,
    code: crate::baseline::Compiled,
) -> Result<(usize, u64), String> {
    let address = heap.install(&format!("t{}_{name}", t.0), &code.code)?;
    if flowc_lang::flags::on("FLOWC_DISASM") {
        // As for Cranelift's code (`define`): the bytes as they will run.
        eprint!("{}", crate::disasm::listing(&[(name, 0, &code.code)]));
    }
    let record = unit.register_at(name, address as usize, code.code.len(), &code.safepoints, code.frame.slots.clone());
    Ok((record, address as u64))
}

/// Where a trace's code went: copied into the cache's [`CodeHeap`] (its
/// record in the unit), or defined in the unit's module, to be finalized.
enum Placed {
    Installed(usize),
    Defined(cranelift_module::FuncId),
}

/// How a baseline trace's frame is laid out ([`crate::baseline::Frame`]),
/// the trace at its bottom, and for a bridge compiled to run in its
/// parent's frame the exit it was compiled for and its direct entry.
struct BaselineFrame {
    frame: crate::baseline::Frame,
    root: TraceId,
    from: Option<ExitId>,
    direct: Option<u32>,
    /// Offset of the code of the first block.
    body: u32,
    /// Offset of the register entry, if the code has one.
    regs: Option<u32>,
}

/// What [`TraceCache::enter`] enters.
#[derive(Clone, Copy)]
enum Entering {
    /// The trace at this address, through the cache's trace wrapper.
    Trace(*const u8),
    /// A function, through its own wrapper.
    Function,
}

/// A trace compiled on its own (with the functions it calls), to run it
/// once: a [`TraceCache`] holding just that trace.
pub struct CompiledTrace {
    cache: TraceCache,
    trace: TraceId,
}

impl CompiledTrace {
    /// Compiles trace `f`; `hints` supplies the functions its calls name
    /// and the `immutable` declarations, `layout` the slots of objects.
    pub fn compile(f: &Function, hints: &Module, layout: &'static Layout) -> Result<CompiledTrace, String> {
        let cache = TraceCache::new(std::sync::Arc::new(hints.clone()), layout, Options::default())?;
        let trace = cache.compile(f)?;
        Ok(CompiledTrace { cache, trace })
    }

    /// The trace's parameters, in order (the variables of the environment
    /// it starts from).
    pub fn params(&self) -> Vec<Symbol> {
        self.cache.params(self.trace)
    }

    /// What exit `e` stores (its resume record, label and values).
    pub fn exit(&self, e: ExitId) -> TraceExit {
        self.cache.exit(e).0
    }

    /// Number of exits (guards, and an `exit` terminator).
    pub fn exits(&self) -> usize {
        self.cache.exits_of(self.trace).len()
    }

    /// Runs the trace from `args` until it leaves ([`TraceCache::run`]).
    pub fn run(&self, args: &[Value], allocations: &mut u64, max_depth: usize) -> TraceEnd {
        let mut run = RunState { allocations: *allocations, max_depth, ..RunState::default() };
        let end = self.cache.run(self.trace, args, &mut run);
        *allocations = run.allocations;
        end
    }
}

//! What the JIT needs of a program before it runs ([`Prepared`]), and
//! preparing it on another thread while the interpreter warms up
//! ([`Preparing`]).
//!
//! A JIT starts from the program lowered by the front end: its functions
//! (which traces call, and whose purity and fields the optimizer reads),
//! its main graph (where anything needs it lowered: [`super::main_wanted`];
//! else the loop headers of the graph are found in its text), the loop
//! headers it watches, its recursive functions,
//! whether the program can observe allocations, and — prepared on the
//! other thread, if any code reads a field — what the program may store
//! in each field (a whole-program propagation; the take-over waits for it
//! as for the rest, the interpreter going on meanwhile). For a big program
//! that is most of what the JIT's start costs (2,000 functions: lowering
//! 7.5 ms, the rest 5 ms, against an interpreted run of 60-80 ms). `flowc
//! run` starts the JIT late ("Starting late" in `jit/mod.rs`): while the
//! interpreter runs alone on one core, the other prepares the program,
//! and the JIT takes over with it ready. A run that ends within the
//! warm-up never waits for it: the preparing thread is left to finish on
//! its own (it holds the program by an `Arc`), and the process's exit
//! ends it.

use std::sync::Arc;
use std::thread::JoinHandle;

use flowc_ir::{Function, FunctionKind, Module};
use flowc_lang::interp::ErrorKind;
use flowc_lang::{Program, Symbol};
use flowc_passes::propagate::ProgramFacts;
use rustc_hash::FxHashSet as HashSet;

/// The program as the JIT starts from it.
pub struct Prepared {
    /// The program's functions and declarations (the module without its
    /// main graph): `background::Shared::hints`.
    pub(super) hints: Module,
    /// The main graph as lowered, and its index in the module (`None`
    /// where it was not lowered: [`super::main_wanted`]; or, once the
    /// field facts are solved, where it went into them).
    pub(super) main: Option<(usize, Function)>,
    /// The labels the profiler watches ([`super::watched_labels`]).
    pub(super) watched: Vec<(Option<Symbol>, Symbol)>,
    /// The labels held in reserve for hints that key nothing
    /// ([`super::reserved_labels`]).
    pub(super) reserved: Vec<super::Reserve>,
    /// Functions that may call themselves.
    pub(super) recursive: HashSet<Symbol>,
    /// Whether objects may be virtual (the program cannot observe
    /// allocation numbers).
    pub(super) remove_allocations: bool,
    /// The fields no read finds unset (`flowc_codegen::fields_always_set`
    /// over the main graph and every function: all that may run), which
    /// trace code reads without the unset test
    /// (`TraceCache::assume_always_set`).
    pub(super) always_set: Vec<Symbol>,
    /// The fields that may hold an object (`flowc_codegen::fields_holding_objects`):
    /// the only ones whose `set`s the heap's row must see
    /// (`TraceCache::assume_links`).
    pub(super) links: Vec<Symbol>,
    /// The slots of the program's objects (`Program::layout`: a scan of
    /// the whole program).
    pub(super) layout: &'static flowc_lang::heap::Layout,
    /// What the program may store in each field, solved ahead
    /// ([`Prepared::solve_fields`]); else solved by the first trace that
    /// reads a field (`Jit::fields_for`).
    pub(super) fields: Option<Arc<ProgramFacts>>,
    /// Whether this is a light start ([`Prepared::light`]): the JIT records
    /// nothing until it has adopted its rest (`Jit::prepare_later`); its
    /// `hints` are empty.
    pub(super) light: bool,
}

impl Prepared {
    /// From `module`, `program` lowered, which it takes apart (its
    /// functions move into the hints: nothing is copied).
    pub fn new(program: &Program, module: Module) -> Prepared {
        let watched = super::watched_labels(program, &module);
        Prepared::with_watched(program, module, watched)
    }

    /// From `module`, `program` lowered from label `entry` — its main
    /// graph left out where the JIT does not need it
    /// ([`super::main_wanted`]): the labels that graph's loops start at
    /// are then found in its text.
    pub fn new_at(program: &Program, module: Module, entry: Symbol) -> Prepared {
        let watched = super::watched_labels_from(program, &module, entry);
        Prepared::with_watched(program, module, watched)
    }

    /// The rest of a light start ([`Prepared::light`]), from `module`,
    /// `program` lowered: all but the watched labels, which the light
    /// start found and the JIT keeps (found again, they were 7% of this
    /// preparation on a partial evaluator's residual program, 18% on
    /// 2,000 functions).
    pub fn rest(program: &Program, module: Module) -> Prepared {
        Prepared::with_watched(program, module, Vec::new())
    }

    fn with_watched(program: &Program, mut module: Module, watched: Vec<(Option<Symbol>, Symbol)>) -> Prepared {
        let reserved = super::reserved_labels(program, &module);
        let recursive = flowc_ir::calls::CallGraph::new(&module).recursive().into_iter().collect();
        let remove_allocations = !flowc_passes::observe::allocations_observable(&module);
        let always_set = flowc_codegen::fields_always_set(&module.functions);
        let links = flowc_codegen::fields_holding_objects(&module.functions);
        let main_at = module.functions.iter().position(|f| f.kind == FunctionKind::Main);
        let mut main = None;
        let mut functions = Vec::with_capacity(module.functions.len());
        for (k, f) in std::mem::take(&mut module.functions).into_iter().enumerate() {
            match f.kind {
                FunctionKind::Main if Some(k) == main_at => main = Some((k, f)),
                FunctionKind::Function => functions.push(f),
                FunctionKind::Main | FunctionKind::Trace => {}
            }
        }
        module.functions = functions;
        let layout = program.layout();
        Prepared {
            hints: module,
            main,
            watched,
            reserved,
            recursive,
            remove_allocations,
            always_set,
            links,
            layout,
            fields: None,
            light: false,
        }
    }

    /// Solves what the program may store in each field now, if any of its
    /// code reads one: on the preparing thread, where it costs the run
    /// nothing, rather than on the running thread when the first trace
    /// that reads a field is optimized (a propagation over the whole
    /// program: a ledger of 300 functions, 7,500 lines, 10 ms against an
    /// interpreted run of 16).
    pub fn solve_fields(&mut self) {
        if self.fields.is_some() || !self.functions().any(reads_fields) {
            return;
        }
        // The JIT needs the main graph once the facts are solved only to
        // optimize the program's functions (`compiling::FunctionsProgram`);
        // else it goes into the facts' copy of the program rather than
        // being copied (the JIT on tutorial BF `escape 20` partially
        // evaluated, a main graph of 77,000 instructions: process peak
        // 99-104 -> 82-90 MB; `fractal 5`'s 160 -> 136 MB).
        let keep =
            self.main.as_ref().is_some_and(|(_, main)| super::compiling::FunctionsProgram::wanted(&self.hints, main));
        let main = if keep { self.main.clone() } else { self.main.take() };
        self.fields =
            Some(Arc::new(flowc_passes::propagate::program_facts_of(program_module(self.hints.clone(), main))));
    }

    /// What the JIT needs of `program` to take a run over from label
    /// `entry` and count its hot spots, found from its text alone (a
    /// *light start*: see "A start in proportion to use" in `jit/mod.rs`):
    /// the labels it watches (the targets of retreating edges, as
    /// [`super::watched_labels_from`] finds them for a graph that promotes
    /// nothing), its recursive functions ([`recursive_in_text`]), the
    /// objects' layout. Nothing is lowered: the JIT records nothing until
    /// the rest is prepared ([`PrepareLater`]), whose [`Prepared`] it then
    /// adopts. Only for a program [`starts_light`] says so of.
    pub fn light(program: &Program, entry: Symbol) -> Prepared {
        debug_assert!(starts_light_shape(program), "a light start watches what the text says");
        Prepared {
            hints: Module { pure: Vec::new(), immutable: Vec::new(), functions: Vec::new() },
            main: None,
            watched: super::watched_labels_in_text(program, entry),
            reserved: Vec::new(),
            recursive: recursive_in_text(program),
            remove_allocations: false,
            always_set: Vec::new(),
            links: Vec::new(),
            layout: program.layout(),
            fields: None,
            light: true,
        }
    }

    /// The program's lowered functions, its main graph included.
    fn functions(&self) -> impl Iterator<Item = &Function> {
        self.hints.functions.iter().chain(self.main.as_ref().map(|(_, main)| main))
    }
}

/// The program as lowered from `hints`, its functions, and `main`, its main
/// graph and that graph's place among them: what the field facts are
/// solved from, here or by the JIT (`Jit::fields_for`).
pub(super) fn program_module(mut hints: Module, main: Option<(usize, Function)>) -> Module {
    if let Some((k, main)) = main {
        hints.functions.insert(k.min(hints.functions.len()), main);
    }
    hints
}

/// Whether `flowc run` starts the JIT light for `program`
/// ([`Prepared::light`]; "A start in proportion to use" in `jit/mod.rs`):
/// a big program ([`super::prepare_apart`]), whose watched labels its text
/// gives — no graph promotes and no label is a `can_enter_jit` hint (a
/// loop that promotes is watched where the promotion is, found in the
/// graph as lowered; hints hold labels in reserve, found the same way).
pub fn starts_light(program: &Program) -> bool {
    super::prepare_apart(program) && starts_light_shape(program)
}

/// [`starts_light`] but for the program's size.
pub fn starts_light_shape(program: &Program) -> bool {
    use flowc_lang::ast::Terminator;
    let promotes = |b: &flowc_lang::ast::Block| matches!(b.term, Terminator::Promote { .. });
    program.can_enter_jit_labels().next().is_none()
        && !program.main_blocks().any(promotes)
        && !program.functions().any(|f| f.blocks.iter().any(promotes))
}

/// The functions of `program` that may call themselves, from its text: a
/// function is recursive when a call in a block reachable from its first
/// one leads back to it (the call graph's strongly connected components,
/// as [`flowc_ir::calls::CallGraph`] finds them in the program as lowered,
/// which lowers the blocks reachable from a graph's entry).
pub fn recursive_in_text(program: &Program) -> HashSet<Symbol> {
    use flowc_lang::ast::Terminator;
    let signatures = flowc_lang::flow::Signatures::of(program);
    let functions: Vec<&flowc_lang::ast::Function> = program.functions().collect();
    let names: Vec<Symbol> = functions.iter().map(|f| f.name).collect();
    let index: rustc_hash::FxHashMap<Symbol, usize> = names.iter().enumerate().map(|(k, &n)| (n, k)).collect();
    let mut calls = Vec::new();
    for (from, f) in functions.iter().enumerate() {
        // (Most functions call nothing: no blocks to walk.)
        if !f.blocks.iter().any(|b| b.term.callee().is_some()) {
            continue;
        }
        let Some(entry) = f.blocks.first().map(|b| b.label) else { continue };
        let blocks: Vec<&flowc_lang::ast::Block> = f.blocks.iter().collect();
        for b in flowc_lang::flow::reachable(&blocks, entry, &signatures) {
            // A call of the wrong number of arguments is lowered to a trap,
            // no call (the front end's `lower_graph`).
            if let Terminator::Call { func, args, .. } = &b.term {
                if let Some(&to) = index.get(func).filter(|_| signatures.first(*func) == Some(args.len())) {
                    calls.push((from, to));
                }
            }
        }
    }
    flowc_ir::calls::recursive_among(&names, calls).into_iter().collect()
}

/// Whether `f` reads a field.
fn reads_fields(f: &Function) -> bool {
    f.all_insts().any(|(_, i)| matches!(f.insts[i].kind, flowc_ir::InstKind::Get { .. }))
}

/// How the program is lowered (the front end's `lower_unless_main` from
/// the run's label, asking [`super::main_wanted`]: this crate does not
/// depend on the front end).
pub type Lower = Box<dyn FnOnce(&Program) -> Result<Module, ErrorKind> + Send>;

/// [`Prepared`] made on a thread of its own.
pub struct Preparing {
    thread: JoinHandle<Crossing<Result<Prepared, ErrorKind>>>,
}

impl Preparing {
    /// Starts preparing `program`, lowered by `lower`, on a new thread;
    /// `None` if no thread could be started (then prepare it here).
    pub fn start(program: Arc<Program>, entry: Symbol, lower: Lower) -> Option<Preparing> {
        Preparing::lowering(program, lower, move |program, module| Prepared::new_at(program, module, entry))
    }

    /// Starts preparing the rest of `program`'s light start
    /// ([`Prepared::rest`]), lowered by `lower`, on a new thread; `None` if
    /// no thread could be started.
    pub fn start_rest(program: Arc<Program>, lower: Lower) -> Option<Preparing> {
        Preparing::lowering(program, lower, Prepared::rest)
    }

    /// Starts preparing `program`, lowered by `lower`, as `prepare` makes
    /// it of the module, on a new thread; its field facts solved there.
    fn lowering(
        program: Arc<Program>,
        lower: Lower,
        prepare: impl FnOnce(&Program, Module) -> Prepared + Send + 'static,
    ) -> Option<Preparing> {
        Preparing::making(program, move |program| {
            let prepared = lower(program).map(|module| {
                let mut prepared = prepare(program, module);
                prepared.solve_fields();
                prepared
            });
            // What the first trace's code needs of the machine, found
            // here rather than by the running thread.
            flowc_codegen::define::detect_host();
            prepared
        })
    }

    /// Starts preparing `program`'s light start ([`Prepared::light`]) from
    /// `entry` on a new thread; `None` if no thread could be started.
    pub fn start_light(program: Arc<Program>, entry: Symbol) -> Option<Preparing> {
        Preparing::making(program, move |program| Ok(Prepared::light(program, entry)))
    }

    /// Starts `make` on `program` on a new thread.
    fn making(
        program: Arc<Program>,
        make: impl FnOnce(&Program) -> Result<Prepared, ErrorKind> + Send + 'static,
    ) -> Option<Preparing> {
        let program = Crossing(program);
        let thread = std::thread::Builder::new()
            .name("flowc-prepare".into())
            // As much as the running thread's: lowering runs here what it
            // runs there (the stack is only reserved).
            .stack_size(1 << 30)
            .spawn(move || {
                let program = program;
                Crossing(make(&program.0))
            })
            .ok()?;
        Some(Preparing { thread })
    }

    /// Whether the thread is done: [`Preparing::finish`] would not wait.
    pub fn done(&self) -> bool {
        self.thread.is_finished()
    }

    /// The prepared program, once the thread is done (waiting for it if
    /// need be). A thread that panicked prepares nothing: the panic goes
    /// on here.
    pub fn finish(self) -> Result<Prepared, ErrorKind> {
        match self.thread.join() {
            Ok(prepared) => prepared.0,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// The JIT's start prepared apart while the interpreter warms up
/// ([`super::interpret_first_preparing`]).
pub trait PrepareApart {
    /// Starts preparing: called once, when the run has done
    /// [`super::prepare_after`] statements.
    fn start(&mut self);
    /// Whether what was started is done: until it is, the interpreter
    /// goes on past its warm-up rather than the take-over waiting.
    fn done(&self) -> bool;
}

/// Preparing on a thread of its own ([`Preparing`]), as `flowc run` does
/// for a big program: started when the warm-up says, done when the
/// thread is.
pub struct PrepareOnThread {
    program: Arc<Program>,
    /// The label the run starts at (the main graph's entry).
    entry: Symbol,
    /// How the program is lowered (`None` once the thread has it, or for
    /// a light start, which lowers nothing).
    lower: Option<Lower>,
    /// What it prepares.
    what: What,
    preparing: Option<Preparing>,
}

/// What a [`PrepareOnThread`] prepares.
#[derive(Copy, Clone, PartialEq, Eq)]
enum What {
    /// A start ([`Prepared::new_at`]).
    Full,
    /// A light start ([`Prepared::light`]).
    Light,
    /// The rest of a light start ([`Prepared::rest`]).
    Rest,
}

impl PrepareOnThread {
    pub fn new(program: Arc<Program>, entry: Symbol, lower: Lower) -> PrepareOnThread {
        PrepareOnThread { program, entry, lower: Some(lower), what: What::Full, preparing: None }
    }

    /// Preparing `program`'s light start ([`Prepared::light`], for a
    /// program [`starts_light`] says so of) from `entry`.
    pub fn light(program: Arc<Program>, entry: Symbol) -> PrepareOnThread {
        PrepareOnThread { program, entry, lower: None, what: What::Light, preparing: None }
    }

    /// Preparing the rest of `program`'s light start ([`Prepared::rest`]),
    /// lowered by `lower`.
    pub fn rest(program: Arc<Program>, entry: Symbol, lower: Lower) -> PrepareOnThread {
        PrepareOnThread { program, entry, lower: Some(lower), what: What::Rest, preparing: None }
    }

    /// The prepared program: the thread's, once it is done (waiting for
    /// it if need be), else — none was started, or none could be — made
    /// here, lowering with `lower` (a light start lowers nothing).
    pub fn finish(self, lower: impl FnOnce(&Program) -> Result<Module, ErrorKind>) -> Result<Prepared, ErrorKind> {
        let program = &self.program;
        match (self.preparing, self.what) {
            (Some(preparing), _) => preparing.finish(),
            (None, What::Light) => Ok(Prepared::light(program, self.entry)),
            (None, What::Full) => lower(program).map(|module| Prepared::new_at(program, module, self.entry)),
            (None, What::Rest) => lower(program).map(|module| Prepared::rest(program, module)),
        }
    }
}

impl PrepareApart for PrepareOnThread {
    /// Starts the thread where the machine has a second core; on one,
    /// nothing starts, and [`PrepareOnThread::finish`] prepares on the
    /// running thread at the take-over.
    fn start(&mut self) {
        if flowc_codegen::cores() < 2 || self.preparing.is_some() {
            return;
        }
        let program = self.program.clone();
        self.preparing = match (self.what, self.lower.take()) {
            (What::Light, _) => Preparing::start_light(program, self.entry),
            (What::Full, Some(lower)) => Preparing::start(program, self.entry, lower),
            (What::Rest, Some(lower)) => Preparing::start_rest(program, lower),
            (_, None) => None,
        };
    }

    fn done(&self) -> bool {
        self.preparing.as_ref().is_none_or(Preparing::done)
    }
}

/// The rest of a light start ([`Prepared::light`]): the program lowered
/// and prepared as for any start, made when the JIT first wants to record
/// (see "A start in proportion to use" in `jit/mod.rs`), which adopts it
/// ([`super::Jit::prepare_later`]).
pub trait PrepareLater {
    /// Starts preparing (on another thread where there is a second core).
    fn start(&mut self);
    /// Whether what was started is done: [`PrepareLater::finish`] would not
    /// wait.
    fn done(&self) -> bool;
    /// The program prepared (made here if nothing was started, or could
    /// be).
    fn finish(self: Box<Self>) -> Result<Prepared, ErrorKind>;
}

/// The rest of a light start prepared on a thread of its own, as `flowc
/// run` does: [`PrepareOnThread`], lowering with `lower` there, or here
/// where no thread starts.
pub struct Later {
    apart: PrepareOnThread,
    here: Lower,
}

impl Later {
    pub fn new(
        program: Arc<Program>,
        entry: Symbol,
        lower: impl Fn(&Program) -> Result<Module, ErrorKind> + Send + Clone + 'static,
    ) -> Later {
        Later { apart: PrepareOnThread::rest(program, entry, Box::new(lower.clone())), here: Box::new(lower) }
    }
}

impl PrepareLater for Later {
    fn start(&mut self) {
        PrepareApart::start(&mut self.apart);
    }

    fn done(&self) -> bool {
        PrepareApart::done(&self.apart)
    }

    fn finish(self: Box<Self>) -> Result<Prepared, ErrorKind> {
        let Later { apart, here } = *self;
        apart.finish(here)
    }
}

/// A closure starts preparing, and is done at once (what prepares is
/// its own business).
impl<F: FnMut()> PrepareApart for F {
    fn start(&mut self) {
        self()
    }

    fn done(&self) -> bool {
        true
    }
}

/// The program, and what preparing it makes, crossing between threads.
struct Crossing<T>(T);

// SAFETY: what crosses is the program, its lowered functions, the facts
// solved of them and the errors lowering raises, whose values are the
// constants of the program text: integers, atoms, lists of those — no object, so no handle into a
// thread's heap. Lists and big integers are shared by atomic counts
// (`Arc`), symbols and object layouts are interned for the process behind
// a lock, and nothing in them has interior mutability: the running thread and the preparing one only
// read the program (as `background::Shared` is shared with the worker).
#[allow(unsafe_code)]
unsafe impl Send for Crossing<Arc<Program>> {}
// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl Send for Crossing<Result<Prepared, ErrorKind>> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> flowc_lang::Program {
        flowc_lang::syntax::parse("test", text).expect("it parses")
    }

    fn prepared(program: &flowc_lang::Program) -> Prepared {
        let entry = program.default_entry().expect("an entry");
        Prepared::new(program, flowc_frontend::lower(program, entry).expect("it lowers"))
    }

    /// A light start finds from the program's text the labels the JIT
    /// watches and the recursive functions, the same (in the same order)
    /// as the program lowered gives them, on every program of the corpus
    /// whose graphs promote nothing, and on one whose functions call one
    /// another in a cycle, call themselves, call from a block no jump
    /// reaches, and call themselves with the wrong number of arguments.
    #[test]
    fn a_light_start_finds_from_the_text_what_lowering_finds() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
        let mut files = Vec::new();
        let mut dirs = vec![corpus];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).expect("the corpus") {
                let path = e.expect("an entry").path();
                match path.extension().and_then(|e| e.to_str()) {
                    _ if path.is_dir() => dirs.push(path),
                    Some("fg") => files.push(path),
                    _ => {}
                }
            }
        }
        files.sort();
        let mut texts: Vec<(String, String)> =
            files.iter().map(|f| (f.display().to_string(), std::fs::read_to_string(f).expect("read"))).collect();
        texts.push((
            "calls".to_string(),
            "entry start(n = 3)\n\nfunction even(k):\n    s:\n        if k goto o else goto y\n    o:\n        \
             j = k - 1\n        r = call odd(j) then d\n    d:\n        return r\n    y:\n        return 1\n\n\
             function odd(k):\n    s:\n        if k goto o else goto y\n    o:\n        j = k - 1\n        \
             r = call even(j) then d\n    d:\n        return r\n    y:\n        return 0\n\n\
             function again(k):\n    s:\n        if k goto o else goto y\n    o:\n        j = k - 1\n        \
             r = call again(j) then d\n    d:\n        return r\n    y:\n        return 0\n\n\
             function island(k):\n    s:\n        return k\n    never:\n        r = call island(k) then d\n    \
             d:\n        return r\n\n\
             function wrong(k):\n    s:\n        if k goto o else goto y\n    o:\n        \
             r = call wrong(k, 0) then d\n    d:\n        return r\n    y:\n        return 0\n\n\
             start:\n    a = call even(n) then b\nb:\n    c = call again(n) then e\ne:\n    f = call island(n) then g\n\
             g:\n    h = call wrong(0) then i\ni:\n    print_and_stop(a)\n"
                .to_string(),
        ));
        let mut compared = 0;
        for (name, text) in texts {
            let Ok(program) = flowc_lang::syntax::parse(&name, &text) else { continue };
            let Some(entry) = program.default_entry() else { continue };
            if !starts_light_shape(&program) {
                continue;
            }
            let Ok(module) = flowc_frontend::lower_unless_main(&program, entry, |functions, signatures| {
                super::super::main_wanted(&program, entry, functions, signatures)
            }) else {
                continue;
            };
            let full = Prepared::new_at(&program, module, entry);
            let light = Prepared::light(&program, entry);
            assert_eq!(light.watched, full.watched, "{name}: the watched labels");
            assert_eq!(light.recursive, full.recursive, "{name}: the recursive functions");
            assert_eq!(light.layout, full.layout, "{name}: the objects' layout");
            compared += 1;
            if name == "calls" {
                let mut recursive: Vec<&str> = light.recursive.iter().map(|s| s.as_str()).collect();
                recursive.sort();
                assert_eq!(
                    recursive,
                    ["again", "even", "odd"],
                    "the cycle and the call of itself, not the island nor the call of the wrong arity"
                );
            }
        }
        assert!(compared > 40, "only {compared} programs compared");
    }

    /// The preparing thread solves the field facts of a program that reads
    /// a field — those the JIT's first trace reading one would solve
    /// itself (`Jit::fields_for`), from the main graph put back in its
    /// place — and the JIT then keeps no main graph for them; it leaves
    /// those of a program that reads none unsolved.
    #[test]
    fn the_facts_of_fields_are_solved_ahead_for_a_program_that_reads_one() {
        let reads = parsed(
            "entry start(n = 10)\n\nfunction bump(p):\n    s:\n        v = p.count\n        v = v + 1\n        \
             p.count = v\n        return v\n\nstart:\n    p = new point\n    p.count = 0\n    i = 0\n    \
             goto loop\nloop:\n    more = i < n\n    if more goto body else goto done\nbody:\n    \
             i = call bump(p) then loop\ndone:\n    print_and_stop(i)\n",
        );
        let module = flowc_frontend::lower(&reads, reads.default_entry().unwrap()).unwrap();
        let mut ahead = prepared(&reads);
        assert!(ahead.fields.is_none(), "nothing is solved before it is asked");
        ahead.solve_fields();
        assert!(ahead.fields.is_some(), "a program that reads a field has its facts solved");
        let render = |jit: &super::super::Jit| {
            let mut out = String::new();
            jit.fields_for(true).expect("facts").render(&module, &mut out);
            out
        };
        let ahead = super::super::Jit::prepared(&reads, ahead, Default::default());
        assert!(ahead.main.take().is_none(), "no main graph kept for facts solved ahead");
        let lazily = super::super::Jit::prepared(&reads, prepared(&reads), Default::default());
        let (a, b) = (render(&ahead), render(&lazily));
        assert!(a.contains("count"), "the field's facts: {a}");
        assert_eq!(a, b, "the facts solved ahead are those the JIT solves when asked");

        let none = "entry start(n = 10)\n\nstart:\n    i = 0\n    goto loop\nloop:\n    more = i < n\n    \
                    if more goto body else goto done\nbody:\n    i = i + 1\n    goto loop\ndone:\n    print_and_stop(i)\n";
        let none = parsed(none);
        let mut not_read = prepared(&none);
        not_read.solve_fields();
        assert!(not_read.fields.is_none(), "no field is read: nothing to solve");
    }

    /// Solving the facts ahead takes the main graph into the facts' copy
    /// of the program, not a copy of it, where the JIT will not keep it
    /// (no functions to optimize with it: `FunctionsProgram::wanted`), and
    /// the facts are those the JIT solves when asked; where it will keep
    /// it, it stays.
    #[test]
    fn the_main_graph_goes_into_the_facts_unless_the_jit_keeps_it() {
        let main_only = parsed(
            "entry start(n = 10)\n\nstart:\n    p = new point\n    p.count = 0\n    i = 0\n    goto loop\n\
             loop:\n    more = i < n\n    if more goto body else goto done\nbody:\n    v = p.count\n    \
             v = v + 1\n    p.count = v\n    i = i + 1\n    goto loop\ndone:\n    print_and_stop(i)\n",
        );
        let mut ahead = prepared(&main_only);
        ahead.solve_fields();
        assert!(ahead.fields.is_some(), "the facts are solved");
        assert!(ahead.main.is_none(), "the main graph went into the facts' program");
        let module = flowc_frontend::lower(&main_only, main_only.default_entry().unwrap()).unwrap();
        let render = |jit: &super::super::Jit| {
            let mut out = String::new();
            jit.fields_for(true).expect("facts").render(&module, &mut out);
            out
        };
        let ahead = super::super::Jit::prepared(&main_only, ahead, Default::default());
        let lazily = super::super::Jit::prepared(&main_only, prepared(&main_only), Default::default());
        let (a, b) = (render(&ahead), render(&lazily));
        assert!(a.contains("count"), "the field's facts: {a}");
        assert_eq!(a, b, "the facts solved from the main graph itself are those the JIT solves when asked");

        // A small function the JIT optimizes with the main graph: kept.
        let with_function = parsed(
            "entry start(n = 10)\n\nfunction bump(p):\n    s:\n        v = p.count\n        v = v + 1\n        \
             p.count = v\n        return v\n\nstart:\n    p = new point\n    p.count = 0\n    \
             i = call bump(p) then done\ndone:\n    print_and_stop(i)\n",
        );
        let mut kept = prepared(&with_function);
        kept.solve_fields();
        assert!(kept.fields.is_some() && kept.main.is_some(), "the main graph stays for the functions' program");
    }
}

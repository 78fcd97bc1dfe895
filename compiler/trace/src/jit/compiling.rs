//! Compiling what was recorded: a straight trace (a bridge, a preamble), a
//! loop in two pieces (its preamble and its body, when the optimizer split
//! it), the checks of the IR after each step, and the code records the JIT
//! keeps. Each is a job ([`super::optimizing`]), optimized here or on the
//! worker ([`super::background`]), then compiled and registered here.

use std::sync::Arc;

use super::background::Job;
use super::optimizing::{self, LoopJob, Optimized, Source, StraightJob, Wanted};
use super::*;

/// What a loop's recording saw: the values of the head's variables where
/// it started (in order) and the frame's where it closed.
#[derive(Clone, Copy)]
pub(super) struct Seen<'a> {
    pub start: &'a [Value],
    pub end: &'a [(Symbol, Value)],
}

/// Every how many compiles the JIT gives the memory its compiles freed
/// back to the system (`flowc_codegen::release_freed_memory`). Never, and
/// the freed pages of early compiles add to a long run's peak; after every
/// compile, and the next one faults fresh pages in again (short runs were
/// slower for it). At this interval a long BF run peaks where it did when
/// releasing every sixteenth compile, and runs a few percent faster (the
/// commit that set it has the measurements).
pub(super) const RELEASE_EVERY: u64 = 256;

impl<'p> Jit<'p> {
    /// The key a loop or entry trace starts at.
    pub(super) fn key_of_code(&self, code: TraceId) -> Option<Key> {
        self.keys.iter().find(|(_, kc)| kc.variants.contains(&code)).map(|(k, _)| k.clone())
    }

    /// What the program may store in each field, for a trace that reads
    /// one (`reads`) — the one thing the facts answer: solving them is a
    /// propagation over the whole program (a fifth of a short run of 2,000
    /// functions that never touch an object), paid on the first trace
    /// that reads one, unless the preparing thread solved them ahead.
    pub(super) fn fields_for(&self, reads: bool) -> Option<Arc<ProgramFacts>> {
        reads.then(|| {
            self.fields
                .get_or_init(|| {
                    let module = super::prepare::program_module((**self.shared.hints()).clone(), self.main.take());
                    Arc::new(flowc_passes::propagate::program_facts_of(module))
                })
                .clone()
        })
    }

    /// The job of optimizing straight trace `source` (recorded from
    /// `recorded` operations). When it ends by jumping to a loop's
    /// preamble (`target`), it jumps into the loop instead if its state
    /// matches the loop's entry — unless `plain` (the trace leaves a
    /// restart guard of that entry: the state is known not to match).
    pub(super) fn straight_job(
        &self,
        source: Source,
        recorded: usize,
        target: Option<Symbol>,
        plain: bool,
    ) -> StraightJob {
        let target = target.and_then(|t| self.names.get(&t).copied().flatten());
        let into = target.filter(|_| !plain).and_then(|t| {
            let c = &self.codes[t.0 as usize];
            Some((c.entry.clone()?, self.codes[c.body?.0 as usize].function.name))
        });
        let reads = trace_reads_fields(&source.trace);
        let rows = rows_of(&source.trace);
        StraightJob { source, recorded, into, fields: self.fields_for(reads), facts: Vec::new(), rows }
    }

    /// `trace`, recorded from `start` (and leaving at `end`, if it ends
    /// by leaving), with the variables live where it may resume the
    /// interpreter ([`crate::trace::ResumeLive`]): its records keep only
    /// those.
    pub(super) fn with_resume_live(
        &mut self,
        run: &mut Run,
        mut trace: crate::trace::Trace,
        start: &Start,
        end: Option<Symbol>,
    ) -> crate::trace::Trace {
        let functions: Vec<Option<Symbol>> = start.frames.iter().map(|f| f.function).collect();
        let continuations: Vec<(Option<Symbol>, Symbol)> =
            start.frames.iter().filter_map(|f| f.call.map(|(_, next)| (f.function, next))).collect();
        let mut live = crate::trace::ResumeLive::default();
        for (function, label) in crate::trace::ResumeLive::labels_of(&trace, &functions, &continuations, end) {
            if let Some(names) = self.live_names(run, function, label) {
                live.insert(function, label, names);
            }
        }
        trace.live = Some(Arc::new(live));
        trace
    }

    /// The variables live at `label` of `function` (`None`: the main
    /// graph), sorted; `None` where the program has no such label.
    fn live_names(&mut self, run: &mut Run, function: Option<Symbol>, label: Symbol) -> Option<Arc<[Symbol]>> {
        if let Some(names) = self.live_names.get(&(function, label)) {
            return Some(names.clone());
        }
        let g = run.resolved.graph_of(function)?;
        let &block = run.resolved.graphs[g as usize].labels.get(&label)?;
        let live = Self::liveness(run, g).live_at(block);
        let graph = &run.resolved.graphs[g as usize];
        let mut names: Vec<Symbol> = live.iter().map(|&s| graph.slot_names[s as usize]).collect();
        names.sort_unstable();
        names.dedup();
        let names: Arc<[Symbol]> = names.into();
        self.live_names.insert((function, label), names.clone());
        Some(names)
    }

    /// The job of optimizing a loop recorded as `trace` from `start`, the
    /// head's variables `names` (of `function`'s frame; with the
    /// variables live there but unbound, `live`), as two pieces of code
    /// ([`opt::LoopEntry`]): the preamble, named `name`, whose first
    /// checks are those speculation finds for the values `args` (none
    /// when `None`), and the loop, which the preamble jumps into; the
    /// loop assumes the objects the recorded iteration ended with as it
    /// started (`end`: the frame's values where it closed) come back
    /// every iteration ([`speculate::same_objects`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn loop_job(
        &mut self,
        run: &mut Run,
        name: Symbol,
        trace: crate::trace::Trace,
        start: &Start,
        names: &[Symbol],
        live: &[Symbol],
        args: Option<Seen>,
        function: Option<Symbol>,
    ) -> LoopJob {
        let trace = self.with_resume_live(run, trace, start, None);
        let body = self.fresh_name(Symbol::intern(&format!("{name}.body")));
        // Worth a peeled first iteration only where the loop reaches far
        // through the objects ([`speculate::SAME_OBJECT_READS`]).
        let reads = trace.ops.iter().filter(|op| matches!(op, crate::trace::TraceOp::Get { .. })).count();
        let same = match args {
            Some(s) if reads >= speculate::SAME_OBJECT_READS => speculate::same_objects(names, s.start, s.end),
            _ => Vec::new(),
        };
        let looping = End::LiveLoop { live: live.to_vec(), same };
        let args = args.map(|s| s.start);
        let start = speculate::assume_lists(start, args.unwrap_or(&[]));
        // The checks read only integers: an object is given as an atom,
        // which they pass over alike (and which the worker need not be
        // lent).
        let args =
            args.map(|a| a.iter().map(|v| if v.holds_objects() { Value::atom("object") } else { v.clone() }).collect());
        let fields = self.fields_for(reads > 0);
        let rows = rows_of(&trace);
        LoopJob { name, body, trace, start, names: names.to_vec(), looping, args, function, fields, rows, tier: None }
    }

    /// Optimizes `job` here, on the running thread.
    pub(super) fn optimize_here(&self, job: Job) -> Option<Optimized> {
        match job {
            Job::Loop(job) => optimizing::optimize_loop(&self.shared, *job, Wanted::ALWAYS),
            Job::Straight(job) => optimizing::optimize_straight(&self.shared, *job, Wanted::ALWAYS),
        }
    }

    /// Optimizes and compiles loop `job` here ([`Jit::loop_job`]);
    /// registers both pieces; returns the preamble.
    pub(super) fn compile_loop(&mut self, job: LoopJob, what: &str) -> Option<(TraceId, Duration)> {
        let optimized = self.optimize_here(Job::Loop(Box::new(job)))?;
        self.finish(optimized, what, None, false)
    }

    /// Compiles `optimized` (code starting at `what`; `background`: it
    /// was optimized on the worker) and registers its pieces: a loop's
    /// body and preamble, which it returns, or a straight trace. A bridge
    /// of exit `from` is compiled to run in the frame of the exit's trace
    /// (when trees are not grown: they are grown from the crossings of
    /// links that go through the driver's exit path).
    pub(super) fn finish(
        &mut self,
        optimized: Optimized,
        what: &str,
        from: Option<ExitId>,
        background: bool,
    ) -> Option<(TraceId, Duration)> {
        self.count_optimizing(&optimized, background);
        let Optimized {
            pieces, restarts, shapes, entry, skips, skip, time, emitted, emit_time, kept, exit_facts, ..
        } = optimized;
        let from = from.filter(|_| !self.options.trees);
        let here = Here { shapes, tier: self.options.tier, from };
        let made = emitted.map(|code| Made { code, kept });
        let (ids, time) = self.compile_pieces(pieces, here, made, restarts, what, time + emit_time)?;
        self.stats.fast_forwarded += usize::from(skips);
        for (&id, facts) in ids.iter().zip(exit_facts) {
            self.codes[id.0 as usize].exit_facts = facts;
        }
        let id = *ids.last()?;
        if entry.is_some() {
            let c = &mut self.codes[id.0 as usize];
            c.body = Some(ids[0]);
            c.entry = entry;
            c.skip = skip;
        }
        Some((id, time))
    }

    /// Counts the optimizing of `optimized` (done on the worker when
    /// `background`).
    fn count_optimizing(&mut self, optimized: &Optimized, background: bool) {
        self.stats.optimize_time += optimized.time;
        self.stats.loop_bodies += optimized.bodies as usize;
        if background {
            self.stats.background_time += optimized.time + optimized.emit_time;
            self.stats.background_jobs += 1;
        }
        if optimized.emitted.is_some() {
            self.stats.emitted_apart += 1;
        }
    }

    /// Runs the IR checker hook on `f`.
    pub(super) fn inspect(&self, f: &Function, after: &str) {
        if let Some(inspect) = self.options.inspect {
            inspect(f, after);
        }
    }

    /// Compiles optimized, compacted traces `pieces` (each with its kind
    /// and the operations it was recorded from; starting at `start`, work
    /// that took `spent` so far) into the cache together, in order (each
    /// may jump to those before it): installs `made`, their code made on
    /// the worker, else generates it as `here` says; registers them (their
    /// code records keep them). `restarts` are the first piece's restart
    /// records ([`opt::Optimized::restarts`]). Returns the pieces' ids and
    /// the compile's whole time. Pieces the worker reduced (`made.kept`)
    /// are only installed: should their code not install, they fail.
    pub(super) fn compile_pieces(
        &mut self,
        pieces: Vec<(Function, Kind, usize)>,
        here: Here,
        made: Option<Made>,
        mut restarts: Vec<flowc_ir::ResumeId>,
        start: &str,
        spent: Duration,
    ) -> Option<(Vec<TraceId>, Duration)> {
        let started = Instant::now();
        self.made_cache()?;
        // (The dispatch tier's pieces keep their IR for its tree.)
        let tier_piece = self.options.tier_tree.is_some()
            && (self.compiling_tier || here.from.is_some_and(|e| self.in_tier_tree(e)));
        let functions: Vec<&Function> = pieces.iter().map(|(f, _, _)| f).collect();
        let cache = self.cache.as_ref()?;
        let before = cache.len();
        let (code, kept) = match made {
            Some(Made { code, kept }) => (Some(code), kept.filter(|k| k.len() == functions.len())),
            None => (None, None),
        };
        let installed = code.filter(|code| code.len() == functions.len()).map(|code| cache.install_emitted(code));
        let compiled = match installed {
            Some(Ok(ids)) => Ok(ids),
            Some(Err(e)) if cache.len() != before || kept.is_some() => Err(e),
            // Code the worker made that cannot be installed (nothing of
            // it was) is generated here.
            _ => {
                let Here { mut shapes, tier, from } = here;
                if shapes.is_empty() {
                    // Dropped once the worker made their code (or never
                    // made, for a tree): made again, with the work each
                    // piece counts when it runs.
                    shapes =
                        pieces.iter().map(|(f, kind, recorded)| super::optimizing::shape(f, kind, *recorded)).collect();
                }
                let from = from.filter(|_| functions.len() == 1);
                cache.compile_shaped(&functions, shapes, tier, from)
            }
        };
        // A compile's temporaries (the recording, its conversions, the
        // optimizer's copies) are freed by now; the allocator would keep
        // their pages a while, and a run compiles hundreds of times
        // between its long-lived data ([`RELEASE_EVERY`]).
        self.compiles += 1;
        if self.compiles.is_multiple_of(RELEASE_EVERY) {
            flowc_codegen::release_freed_memory();
        }
        let time = spent + started.elapsed();
        self.stats.compile_time += time;
        let ids = match compiled {
            Ok(ids) => ids,
            Err(e) => {
                let names: Vec<String> = functions.iter().map(|f| f.name.to_string()).collect();
                self.log(format_args!("code generation failed for {}: {e}", names.join(", ")));
                // What did compile is never entered; it keeps its number.
                let cache = self.cache.as_ref()?;
                let done = cache.len() - self.codes.len();
                for (f, kind, _) in pieces.into_iter().take(done) {
                    self.codes.push(Code::new(kind, f, start.to_string(), 0));
                }
                return None;
            }
        };
        let n = ids.len() as u32;
        let mut kept = kept.map(Vec::into_iter);
        for (&id, (function, kind, recorded)) in ids.iter().zip(pieces) {
            debug_assert_eq!(id.0 as usize, self.codes.len());
            let mut code = match kept.as_mut().and_then(Iterator::next) {
                Some(reduced) => Code::reduced(kind, function, start.to_string(), recorded, reduced),
                None => Code::new(kind, function, start.to_string(), recorded),
            };
            self.stats.recorded_ops += recorded;
            self.stats.optimized_ops += code.optimized_ops;
            self.log(format_args!(
                "compiled {} from {start}: {recorded} operations recorded, {} after optimization",
                code.function.name, code.optimized_ops
            ));
            if let Some(log) = &mut self.log {
                log.indented(&flowc_ir::print::function(&log::brief(&code.function)));
            }
            self.names.insert(code.function.name, Some(id));
            if code.kept.is_none() && !(self.options.keep_ir || self.options.trees || tier_piece) {
                code.kept = Some(without_body(&mut code.function));
            }
            code.compile_time = time / n;
            code.root = id;
            code.restarts = std::mem::take(&mut restarts);
            self.codes.push(code);
        }
        Some((ids, time))
    }

    /// The run's trace cache, made when first needed (`None` if it
    /// cannot be).
    pub(super) fn made_cache(&mut self) -> Option<&TraceCache> {
        if self.cache.is_none() {
            self.cache = self.new_cache().map(std::rc::Rc::new);
        }
        self.cache.as_deref()
    }

    /// A trace cache for the run: its options, and the fields the program
    /// never reads unset.
    pub(super) fn new_cache(&self) -> Option<TraceCache> {
        let cache = TraceCache::new(self.shared.hints().clone(), self.layout, self.cache_options()).ok()?;
        if let Some(program) = self.functions_program.clone() {
            cache.optimize_functions_with(Box::new(move |hints| program.optimized(hints)));
        }
        cache.assume_always_set(self.always_set.clone());
        cache.assume_links(self.links.clone());
        Some(cache)
    }

    /// Gives the loop of code `code`, if it was split in two, the graph,
    /// anchor and tree of its preamble.
    pub(super) fn adopt_body(&mut self, code: TraceId) {
        let c = &self.codes[code.0 as usize];
        let Some(b) = c.body else { return };
        let (graph, anchor, root) = (c.graph, c.anchor, c.root);
        let body = &mut self.codes[b.0 as usize];
        (body.graph, body.anchor, body.root) = (graph, anchor, root);
    }
}

/// Pieces' code made on the worker, and what the worker reduced them to
/// (`None` where it did not: [`super::background::Emit::reduce`]).
pub(super) struct Made {
    pub code: flowc_codegen::Emitted,
    pub kept: Option<Vec<(Kept, usize)>>,
}

/// How optimized pieces' code is generated on the running thread
/// ([`Jit::compile_pieces`]): from their `shapes` (or made here when none
/// are given), as `tier` says; the one piece of a bridge for exit `from`
/// runs in the frame of the exit's trace ([`TraceCache::compile_bridge`]).
pub(super) struct Here {
    pub shapes: Vec<flowc_codegen::lower::Shape>,
    pub tier: flowc_codegen::compile::Codegen,
    pub from: Option<ExitId>,
}

/// Whether recording `trace` read a field.
fn trace_reads_fields(trace: &crate::trace::Trace) -> bool {
    trace.ops.iter().any(|op| matches!(op, crate::trace::TraceOp::Get { .. }))
}

/// The shapes of the heap's rows a job of `trace` may assume: those
/// that held every link of their shape the recording found laid out in a
/// row ([`crate::opt::row`]), where it found one.
pub(super) fn rows_of(trace: &crate::trace::Trace) -> Vec<crate::opt::row::RowShape> {
    if trace.objects.offsets.is_empty() {
        return Vec::new();
    }
    flowc_lang::heap::with(|h| {
        (0..flowc_lang::heap::rows::ROWS)
            .filter(|&r| trace.objects.row_misses & 1 << r == 0)
            .filter_map(|r| {
                let shape = h.rows.shape(r)?;
                let fields = shape.layout.fields();
                Some(crate::opt::row::RowShape {
                    class: shape.class,
                    next: *fields.get(shape.next as usize)?,
                    prev: *fields.get(shape.prev as usize)?,
                    stride: shape.stride as i64,
                    row: r as u8,
                })
            })
            .collect()
    })
}

/// A program whose functions are optimized by the eight passes before they
/// are compiled for calls (recursive functions, functions not followed,
/// calls compiled for the interpreter): the main graph kept for that (the
/// passes need the whole program: what each function's parameters hold
/// is what its calls pass, what a field holds what the program's `set`s
/// store), and the program so optimized, once for every trace cache.
/// Optimized, a function does what native code does; not, it ran generic
/// arithmetic and tag tests on every value.
pub(super) struct FunctionsProgram {
    main: (usize, Function),
    optimized: std::cell::OnceCell<Option<Arc<Module>>>,
}

impl FunctionsProgram {
    /// For the program of `hints` and `main`, if it has functions and is
    /// small enough ([`super::OPTIMIZE_FUNCTIONS_INSTS`]), its main graph
    /// no bigger than [`super::OPTIMIZE_MAIN_INSTS`] or twice its
    /// functions: the passes go over the main graph too, for the
    /// functions' sake (a main loop of 2,000 calls of one small function
    /// cost 16 ms, more than the run it was for).
    pub(super) fn of(hints: &Module, main: Option<&(usize, Function)>) -> Option<std::rc::Rc<FunctionsProgram>> {
        let main = main.filter(|main| FunctionsProgram::wanted(hints, &main.1))?;
        Some(std::rc::Rc::new(FunctionsProgram { main: main.clone(), optimized: Default::default() }))
    }

    /// Whether the program of `hints` and `main` gets its functions
    /// optimized ([`FunctionsProgram::of`]), which keeps the main graph.
    pub(super) fn wanted(hints: &Module, main: &Function) -> bool {
        FunctionsProgram::wanted_for(hints, main.insts.len())
    }

    /// [`FunctionsProgram::wanted`] for a main graph of `main_insts`
    /// instructions (also asked before the main graph is lowered, of the
    /// least it may lower to: [`super::main_wanted`]): the program has
    /// functions, and both together are small enough.
    pub(super) fn wanted_for(hints: &Module, main_insts: usize) -> bool {
        let functions: usize =
            hints.functions.iter().filter(|f| f.kind == flowc_ir::FunctionKind::Function).map(|f| f.insts.len()).sum();
        let small = functions + main_insts <= super::OPTIMIZE_FUNCTIONS_INSTS
            && main_insts <= super::OPTIMIZE_MAIN_INSTS.max(2 * functions);
        functions > 0 && small
    }

    /// The program optimized (`hints` its functions), made the first time.
    fn optimized(&self, hints: &Module) -> Option<Arc<Module>> {
        self.optimized
            .get_or_init(|| {
                let module = super::prepare::program_module(hints.clone(), Some(self.main.clone()));
                let options = flowc_passes::context::Options::default();
                let versions = flowc_passes::versions::pipeline(
                    module,
                    &options,
                    flowc_passes::versions::Wanted::Generic,
                    |_, _, _| {},
                );
                Some(Arc::new(versions.generic))
            })
            .clone()
    }
}

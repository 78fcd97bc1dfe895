//! Compiling what was recorded: a straight trace (a bridge, a preamble), a
//! loop in two pieces (its preamble and its body, when the optimizer split
//! it), the checks of the IR after each step, and the code records the JIT
//! keeps.

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

    /// What the program may store in each field, for optimizing trace
    /// `f` — only where `f` reads a field, the one thing the facts
    /// answer: solving them is a propagation over the whole program (a
    /// fifth of a short run of 2,000 functions that never touch an
    /// object), paid on the first trace that reads one.
    fn fields_for(&self, f: &Function) -> Option<&ProgramFacts> {
        let reads = f.all_insts().any(|(_, i)| matches!(f.insts[i].kind, flowc_ir::InstKind::Get { .. }));
        reads.then(|| {
            self.fields.get_or_init(|| {
                let mut module = (*self.hints).clone();
                if let Some((k, main)) = self.main.take() {
                    module.functions.insert(k.min(module.functions.len()), main);
                }
                flowc_passes::propagate::program_facts_of(module)
            })
        })
    }

    /// Optimizes and compiles straight trace `function` (a bridge or an
    /// entry trace, recorded from `recorded` operations, starting at
    /// `start`); registers it. When it ends by jumping to a loop's
    /// preamble, it jumps into the loop instead if its state matches the
    /// loop's entry — unless `plain` (the trace leaves a restart guard of
    /// that entry: the state is known not to match). A bridge of exit
    /// `from` is compiled to run in the frame of the exit's trace (when
    /// trees are not grown: they are grown from the crossings of links
    /// that go through the driver's exit path).
    pub(super) fn compile_straight(
        &mut self,
        mut function: Function,
        recorded: usize,
        start: String,
        plain: bool,
        from: Option<ExitId>,
    ) -> Option<(TraceId, Duration)> {
        let started = Instant::now();
        self.inspect(&function, "conversion");
        let target = jumps_to(&function).and_then(|t| self.names.get(&t).copied().flatten());
        let into = target.filter(|_| !plain).and_then(|t| {
            let c = &self.codes[t.0 as usize];
            Some((c.entry.clone()?, self.codes[c.body?.0 as usize].function.name))
        });
        let jump = match &into {
            Some((entry, body)) => opt::Jump::Enters { entry, body: *body },
            None => opt::Jump::Plain,
        };
        let options =
            opt::Options { jump, fields: self.fields_for(&function), ..opt::Options::new(self.remove_allocations) };
        let optimized = opt::optimize_trace(&mut function, &self.hints, &options);
        self.stats.optimize_time += started.elapsed();
        self.inspect(&function, "optimization");
        let tier = self.options.tier;
        let from = from.filter(|_| !self.options.trees);
        let pieces = vec![(function, Kind::Bridge, recorded)];
        let id = self.compile_pieces(pieces, optimized.restarts, &start, started, tier, from)?[0];
        Some((id, started.elapsed()))
    }

    /// Compiles a loop recorded as `trace` from `start`, the head's
    /// variables `names` (of `function`'s frame, at label `anchor`; with
    /// the variables live there but unbound, `live`), as two pieces of
    /// code ([`opt::LoopEntry`]): the preamble, named `name`, whose first
    /// checks are those speculation finds for the values `args` (none
    /// when `None`), and the loop, which the preamble jumps into; the
    /// loop assumes the objects the recorded iteration ended with as it
    /// started (`end`: the frame's values where it closed) come back
    /// every iteration ([`speculate::same_objects`]).
    /// Registers both; returns the preamble.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn compile_loop(
        &mut self,
        name: Symbol,
        trace: &crate::trace::Trace,
        start: &Start,
        names: &[Symbol],
        live: &[Symbol],
        args: Option<Seen>,
        function: Option<Symbol>,
        what: String,
    ) -> Option<(TraceId, Duration)> {
        let started = Instant::now();
        let anchor = trace.anchor;
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
        let assumed_lists = speculate::assume_lists(start, args.unwrap_or(&[]));
        let mut preamble = to_ir::convert(
            &self.index,
            name,
            trace,
            &assumed_lists,
            &End::Jump { target: body, params: names.to_vec() },
        );
        let checks = match args {
            Some(args) => speculate::checks(&preamble, names, args),
            None => Vec::new(),
        };
        speculate::insert(&mut preamble, &checks, anchor, function);
        self.inspect(&preamble, "conversion");
        // The loop keeps assuming what the preamble speculates on.
        let assumed: Vec<(Symbol, i64, i64)> = checks.iter().map(|&(k, lo, hi)| (start.params[k], lo, hi)).collect();
        let jump = opt::Jump::Defines { anchor, function, names, assumed: &assumed };
        let options =
            opt::Options { jump, fields: self.fields_for(&preamble), ..opt::Options::new(self.remove_allocations) };
        let optimized = opt::optimize_trace(&mut preamble, &self.hints, &options);
        self.inspect(&preamble, "optimization");
        let entry = optimized.entry?;
        let mut looped = to_ir::convert(&self.index, body, trace, &entry.start(), &looping);
        self.inspect(&looped, "conversion");
        // The loop is peeled again only where its iterations would reuse
        // work of the first ([`opt::Peel::WhenInvariant`]): its preamble
        // is its first iteration already, and what that proved reaches
        // the loop as the facts of its entry. Peeling every loop doubled
        // its compile cost, and the BF interpreters' runs were slower for
        // it (docs/architecture.md, "Measurements behind the comments").
        let facts = entry.infos();
        let peel = opt::Peel::WhenInvariant;
        let options = opt::Options {
            facts: &facts,
            peel,
            fields: self.fields_for(&looped),
            ..opt::Options::new(self.remove_allocations)
        };
        opt::optimize_trace(&mut looped, &self.hints, &options);
        // Under `--fuel` too: a loop that skips iterations still ends (and
        // compiled code's fuel is counted per iteration run, [`crate::jit`]).
        let fields = self.fields_for(&looped);
        let skips = opt::fast_forward(&mut looped, fields);
        self.stats.optimize_time += started.elapsed();
        self.inspect(&looped, "optimization");
        let pieces = vec![(looped, Kind::Body, 0), (preamble, Kind::Loop, trace.ops.len())];
        let ids = self.compile_pieces(pieces, Vec::new(), &what, started, self.options.tier, None)?;
        self.stats.fast_forwarded += usize::from(skips);
        let (body_id, id) = (ids[0], ids[1]);
        let c = &mut self.codes[id.0 as usize];
        c.body = Some(body_id);
        c.entry = Some(entry);
        Some((id, started.elapsed()))
    }

    /// Runs the IR checker hook on `f`.
    pub(super) fn inspect(&self, f: &Function, after: &str) {
        if let Some(inspect) = self.options.inspect {
            inspect(f, after);
        }
    }

    /// Compiles optimized traces `pieces` (each with its kind and the
    /// operations it was recorded from; starting at `start`, work begun
    /// at `started`) into the cache together, in order (each may jump to
    /// those before it); registers them (their code records keep them).
    /// The one piece of a bridge for exit `from` runs in the frame of the
    /// exit's trace ([`TraceCache::compile_bridge`]). `restarts` are the
    /// first piece's restart records ([`opt::Optimized::restarts`]).
    pub(super) fn compile_pieces(
        &mut self,
        pieces: Vec<(Function, Kind, usize)>,
        mut restarts: Vec<flowc_ir::ResumeId>,
        start: &str,
        started: Instant,
        tier: flowc_codegen::compile::Codegen,
        from: Option<ExitId>,
    ) -> Option<Vec<TraceId>> {
        if self.cache.is_none() {
            let options = self.cache_options();
            self.cache = TraceCache::new(self.hints.clone(), self.layout, options).ok();
        }
        // Compacted before their code is generated (the exits name their
        // values by the new numbers): the code records keep each trace's
        // IR for the whole run, and its arenas otherwise hold every
        // operation recorded and every copy peeling made, most of them
        // removed (hundreds of MB on a long BF run).
        let pieces: Vec<(Function, Kind, usize)> = pieces
            .into_iter()
            .enumerate()
            .map(|(k, (f, kind, recorded))| {
                let f = match k {
                    0 => flowc_ir::compact::compact_owned(f, &mut restarts),
                    _ => flowc_ir::compact::compact_owned(f, &mut Vec::new()),
                };
                self.inspect(&f, "compaction");
                (f, kind, recorded)
            })
            .collect();
        let functions: Vec<&Function> = pieces.iter().map(|(f, _, _)| f).collect();
        let cache = self.cache.as_ref()?;
        let compiled = match (from, &functions[..]) {
            (Some(e), [f]) => cache.compile_bridge(f, e, tier).map(|t| vec![t]),
            _ => cache.compile_all(&functions, tier),
        };
        // A compile's temporaries (the recording, its conversions, the
        // optimizer's copies) are freed by now; the allocator would keep
        // their pages a while, and a run compiles hundreds of times
        // between its long-lived data ([`RELEASE_EVERY`]).
        self.compiles += 1;
        if self.compiles.is_multiple_of(RELEASE_EVERY) {
            flowc_codegen::release_freed_memory();
        }
        let time = started.elapsed();
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
        for (&id, (function, kind, recorded)) in ids.iter().zip(pieces) {
            debug_assert_eq!(id.0 as usize, self.codes.len());
            let mut code = Code::new(kind, function, start.to_string(), recorded);
            self.stats.recorded_ops += recorded;
            self.stats.optimized_ops += code.optimized_ops;
            self.log(format_args!(
                "compiled {} from {start}: {recorded} operations recorded, {} after optimization",
                code.function.name, code.optimized_ops
            ));
            if let Some(log) = &mut self.log {
                log.indented(&flowc_ir::print::function(&code.function));
            }
            self.names.insert(code.function.name, Some(id));
            if !(self.options.keep_ir || self.options.trees) {
                code.function = without_body(code.function);
            }
            code.compile_time = time / n;
            code.root = id;
            code.restarts = std::mem::take(&mut restarts);
            self.codes.push(code);
        }
        Some(ids)
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

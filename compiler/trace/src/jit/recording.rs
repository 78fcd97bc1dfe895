//! Recording: a loop trace from a hot key (until the path closes, fails or
//! grows too long), and a bridge from a guard that fails often; the limits
//! and the aborts that blacklist a key.

use super::background::{Job, Then};
use super::compiling::Seen;
use super::optimizing::{Optimized, Pins, Source};
use super::*;

/// A frame's variables with their values, in order (as a
/// [`ResumeFrame`](flowc_lang::interp::ResumeFrame) holds them).
type Pairs = Vec<(Symbol, Value)>;

/// The most times a hot spot's loop is recorded again from inside an
/// inner loop it left ([`Jit::left_its_loop`]), and again for links found
/// laid out otherwise ([`Jit::irregular`]).
const RECORD_INSIDE: u32 = 3;

/// How many times an exit's bridge is not made because it goes round the
/// loop around its own loop, which a recording could do at once
/// ([`crate::skip`]): the exit counts to the bridge threshold again each
/// time while the interpreter runs the loop around, whose hot spot (at the
/// JIT's threshold, 50 arrivals by default, against a bridge's 20
/// failures) gets that loop recorded by the third. Where it does not (its
/// recording given up), the fourth makes the bridge.
pub(super) const AROUND_TRIES: u32 = 3;

/// What became of an inner loop cut from a recording
/// ([`Jit::install_inner_loop`]).
enum Inner {
    /// Compiled here: its preamble.
    Here(TraceId),
    /// Sent to the worker.
    Sent,
    /// The code generator refused it.
    Refused,
}

/// What bridges unlinked from their exits give way to
/// ([`Jit::unlink_bridges`]).
#[derive(Clone, Copy)]
enum GiveWay {
    /// A loop recorded again, replacing the one they went round.
    Again,
    /// A hot spot's first loop, one that does an inner loop at once,
    /// whose head they went through.
    First,
    /// A loop they jump into, to be recorded again round an inner loop
    /// done at once.
    Nest,
}

/// Why a loop is recorded again ([`Jit::replace_loop`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Again {
    /// It left an inner loop at once, mostly.
    Inside,
    /// A link it assumed laid out in a row is not.
    Relaid,
    /// A loop it went through a round of runs to its end at once now.
    Nest,
}

impl<'p> Jit<'p> {
    /// Records a loop at `key` from the top frame of `stack` (about to run
    /// `block`), compiles it, and says where the run goes on: recording
    /// runs the program, so the stack's top frame is where it left it.
    ///
    /// Inner loops first (PyPy's `cut_trace_from`): a recording that
    /// arrives a second time at a watched key other than its own has gone
    /// round a loop inside the one it started in. It is cut there: the
    /// operations since the first arrival are that inner loop's trace,
    /// compiled for its key, and the operations before it an entry trace
    /// of `key` that jumps into it. The outer loop then runs as a bridge
    /// from the inner loop's exit, recorded when that exit gets hot.
    ///
    /// Loops from their head ([`Head`]): with `anchor` (a hot spot the
    /// driver found hot: [`Anchor::hot`]), a recording that finds it
    /// started inside a loop records that loop from its head instead.
    pub(super) fn record_loop(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        key: &Key,
        stack: &mut Vec<Frame>,
        block: u32,
        anchor: Option<Anchor>,
    ) -> Result<Next, RuntimeError> {
        let top = stack.last().expect("a frame");
        let g = top.graph;
        let graph: &Graph = &run.resolved.graphs[g as usize];
        let label = graph.blocks[block as usize].label;
        if key.greens.is_empty() && self.constant_loops.followed(graph.name, label) {
            self.leave_to_constants(machine, key, run.resolved);
            return Ok(Next::Interpret(block));
        }
        let (params, args, unbound) = self.frame_start(run, top, block);
        let graph: &Graph = &run.resolved.graphs[g as usize];
        // The recording starts from the variables live here (a variable
        // dead here is written before it is read); the frame keeps the
        // others ([`Machine::replace_top_keeping`]). A main graph of
        // thousands of loops binds thousands of variables: copying them
        // all into every recording was most of its recording time.
        let env: Vec<(Symbol, Value)> = params.iter().copied().zip(args.iter().cloned()).collect();
        let frame = ResumeFrame { function: graph.name, env, call: None };
        if self.log.is_some() {
            self.log(format_args!("record loop at {}", describe(key, run.resolved)));
        }
        let started = Instant::now();
        let profiler = machine.profiler().expect("the JIT runs with a profiler");
        let mut target = None;
        // Watched keys passed on the way (not `key`, no code): where the
        // trace was, the base frame's environment there, the label.
        // (The environment as its pairs: one allocation, where a copy of
        // the map is two and its table.)
        let mut passed: Vec<(Key, usize, Pairs, Symbol)> = Vec::new();
        // Which of `passed` each key is (a dispatch loop passes a key per
        // instruction it interprets: a scan of `passed` at every arrival
        // was most of recording's own cost).
        let mut passed_at: HashMap<Key, usize> = HashMap::default();
        let mut inner = None;
        // Where the inner loop closed: the base frame's environment.
        let mut inner_end: Option<Env> = None;
        let this = &*self;
        // Whether the recording jumped back across its start ([`Head`]):
        // the head of a loop it started inside, which it does not do at
        // once (it would go on past that loop's end), and, with turns
        // left to an anchor, records from instead.
        let mut head = Head::new(key, true);
        let reanchors = anchor.as_ref().is_some_and(|a| a.turns > 0);
        // The key it arrived at then.
        let mut rehead = None;
        let mut busy = false;
        let worker = run.worker.as_ref();
        // The heads of counted inner loops done at once on the way, and
        // the hot spots of entry traces into them gone through.
        let mut skipped: Vec<Key> = Vec::new();
        let mut entered: Vec<Key> = Vec::new();
        // Whether this recording is a loop's recorded again round an inner
        // loop done at once ([`Jit::record_nest`]), and the hot spots of
        // entry traces it went through, as hot spots without code: a loop
        // is wanted, and an entry trace met inside its round leads into
        // the old loop or, recorded in a last round of it, out of the loop
        // (`digits 200` at threshold 70 met one of each inside its round,
        // and became an entry trace into it at every try).
        let nesting = self.keys.get(key).is_some_and(|kc| kc.nesting);
        let mut through: Vec<Key> = Vec::new();
        // A loop not closed by `segment_at` operations is cut at the next
        // hot spot or join it arrives at, or past `segment_at_any` at any
        // label ("Long loops in segments").
        let segment_at = this.segment_at();
        let mut segment = false;
        let mut at = |l: Symbol, env: &Env, ops: usize| {
            let cut = ops >= segment_at;
            let Some(k) = stop_key(profiler, graph, g, l, env) else {
                // (At a hot spot if one comes soon: the next segment
                // starts there.)
                segment = ops >= this.segment_at_any();
                return if segment { Arrival::Stop } else { Arrival::Continue };
            };
            let back = head.arrive(&k);
            let crossing = back && reanchors;
            if k == *key {
                target = None;
                return Arrival::Stop;
            }
            // An entry trace into a loop done at once is gone through the
            // first time, so that the recording arrives at the loop's head.
            let code = this.linkable(&k, env);
            if code.is_some_and(|c| this.enters_skip(c)) && !entered.contains(&k) {
                entered.push(k);
                return Arrival::Continue;
            }
            let entry = |c: TraceId| matches!(this.codes[c.0 as usize].kind, Kind::Entry);
            let code = match code {
                Some(c) if nesting && entry(c) && !through.contains(&k) => {
                    through.push(k.clone());
                    None
                }
                code => code,
            };
            match code {
                Some(code) => match (!back).then(|| this.skip_at(code, &k, l, env, &mut skipped)).flatten() {
                    Some(ops) => Arrival::Skip(ops),
                    None => {
                        target = Some(code);
                        Arrival::Stop
                    }
                },
                // A join without code for this state is no loop header:
                // passed as any label.
                None if this.joins.is_join(g, l) => {
                    segment = cut;
                    if cut {
                        Arrival::Stop
                    } else {
                        Arrival::Continue
                    }
                }
                // It started inside the loop whose head this is: recorded
                // from there, or, where that loop is on its way, not at all
                // for now (where the head has code for other states or was
                // given up, the loop closes at its start, as before).
                None if crossing && !this.settled(&k) => {
                    busy = this.on_its_way(worker, &k);
                    rehead = Some(k);
                    Arrival::Stop
                }
                None => match passed_at.get(&k) {
                    Some(&i) => {
                        inner = Some(i);
                        inner_end = Some(env.clone());
                        Arrival::Stop
                    }
                    None if cut => {
                        segment = true;
                        Arrival::Stop
                    }
                    None => {
                        passed_at.insert(k.clone(), passed.len());
                        passed.push((k, ops, env.iter().map(|(n, v)| (*n, v.clone())).collect(), l));
                        Arrival::Continue
                    }
                },
            }
        };
        let recorded = {
            let mut residual = residual_calls(this, run.resolved, run.config, Some(key));
            // A loop's preamble assumes the lists it starts with unless
            // its key's loops assume nothing; entry traces and segments
            // always do.
            let limits = crate::record::Limits { lists_assumed: this.speculates(key), ..this.limits() };
            record_path(this.shared.index(), &[frame], label, &mut run.heap, limits, &mut at, &mut residual)
        };
        self.stats.record_time += started.elapsed();
        self.leave_followed_to_constants(machine, run.resolved);
        self.stats.skipped += skipped.len();
        if self.log.is_some() {
            for k in &skipped {
                self.log(format_args!("the loop at {} done at once but its last round", describe(k, run.resolved)));
            }
        }
        let (mut trace, frame, end_label) = match recorded {
            Ok(Path::Stopped { trace, frame, label }) => (trace, frame, label),
            Ok(Path::Printed(v)) => return Ok(Next::Printed(v)),
            Ok(Path::Returns { frame, label, .. }) => {
                self.abort(machine, key, &describe(key, run.resolved), "the loop returns from its function");
                let block = machine.replace_top_keeping(stack, &[frame], label)?;
                return Ok(Next::Interpret(block));
            }
            Err(TraceError::Runtime(e)) => return Err(e),
            Err(e @ (TraceError::TooLong { .. } | TraceError::Unrolls { .. })) => {
                let why = match &e {
                    TraceError::TooLong { limit, .. } => format!("no loop closed within {limit} operations"),
                    _ => e.to_string(),
                };
                let unrolled = matches!(e, TraceError::Unrolls { .. });
                let (state, biggest) = e.suspended();
                // Not an abort that counts when the next recording calls a
                // function it followed: it may close then. A call whose
                // loop ran past the limit is called instead by this hot
                // spot's code alone ([`Jit::stop_following_at`]).
                let calls = match (unrolled, biggest) {
                    (true, Some(f)) => self.stop_following_at(machine, f, key.clone(), run.resolved),
                    _ => self.stop_following(machine, biggest),
                };
                let counts = !calls;
                self.abort_if(machine, key, &describe(key, run.resolved), &why, counts);
                let block = machine.replace_top_keeping(stack, &state.frames, state.label)?;
                return Ok(Next::Interpret(block));
            }
        };
        self.forget_irregular(&mut trace);
        // The program is at `end_label` now.
        let block = machine.replace_top_keeping(stack, std::slice::from_ref(&frame), end_label)?;
        let what = describe(key, run.resolved);
        // The hot spot the loop is judged by, and its density.
        let (judge, density) = self.judged(machine, key, anchor.as_ref());
        if let (Some(h), Some(a)) = (rehead, anchor.as_ref()) {
            if self.too_sparse_with(machine, &judge, density, Round::Any, || what.clone()) {
                return Ok(Next::Interpret(block));
            }
            if busy {
                // Its code is being made: the hot spot counts again, and
                // by its next threshold the loop's code stands in for it
                // (a loop closed here would be a second copy, rotated).
                self.log(format_args!("{what} is inside the loop at {}, on its way", describe(&h, run.resolved)));
                if *key == a.judge {
                    self.count_again(machine, key);
                }
                return Ok(Next::Interpret(block));
            }
            // The loop is recorded from its head, here, instead (its
            // positions strictly earlier at each such turn, and at most
            // `MOST_TURNS` turns); the hot spot counts again, its loop's
            // code standing in for it.
            if self.log.is_some() {
                self.log(format_args!(
                    "{what} is inside the loop at {}: recorded from there",
                    describe(&h, run.resolved)
                ));
            }
            self.stats.reheaded += 1;
            if *key == a.judge {
                self.count_again(machine, key);
            }
            let next = Anchor { judge, density, turns: a.turns - 1 };
            return self.record_loop(machine, run, &h, stack, block, Some(next));
        }
        // (Recording leaves the profiler's counts and clock as they were.)
        if inner.is_none()
            && target.is_none()
            && self.too_sparse_with(machine, &judge, density, Round::Recorded(trace.ops.len()), || what.clone())
        {
            return Ok(Next::Interpret(block));
        }
        let (trace, target) = match inner {
            None => (trace, target),
            Some(i) => {
                // The trace went round a loop inside its own: that loop first.
                // The keys passed inside the inner loop are its rotations.
                let inside: Vec<Key> = passed[i + 1..].iter().map(|(k, ..)| k.clone()).collect();
                let (k, at, mut pairs, l) = passed.swap_remove(i);
                if run.worker.as_ref().is_some_and(|w| w.has_key(&k)) {
                    // That loop's code is on its way: the outer one is
                    // recorded again once it is there.
                    self.abort_if(machine, key, &what, "its inner loop is being optimized", false);
                    self.wait_for_inner(key, k);
                    return Ok(Next::Interpret(block));
                }
                let (outer, looped) = trace.split_at(at, l);
                let end = inner_end.take().expect("where the inner loop closed");
                // The variables there in the frame's order: the recording
                // started from the live ones only, and the frame (merged
                // back above) has every variable where the interpreter
                // would have put it.
                let top = stack.last().expect("a frame");
                let names = &run.resolved.graphs[g as usize].slot_names;
                let place: HashMap<Symbol, usize> =
                    top.order.iter().enumerate().map(|(k, &s)| (names[s as usize], k)).collect();
                pairs.sort_by_key(|(n, _)| place.get(n).copied().unwrap_or(usize::MAX));
                match self.install_inner_loop(machine, run, &k, g, l, &pairs, &end, looped, inside) {
                    // An inner loop that runs to its end at once: the
                    // outer recording is dropped (an abort that does not
                    // count), and the outer loop recorded again at its
                    // next threshold does the inner loop at once on the
                    // way round and closes as a loop of its own. (With a
                    // worker, the outer hot spot is asked again at its
                    // next arrival once the inner loop's code is there;
                    // here that arrival was a worse place to record from:
                    // `digits 200` 80 -> 205 ms.) An entry trace into
                    // the inner loop would be the outer loop's code for
                    // good: every outer round through it, the inner loop
                    // round by round and the rest of the outer loop by
                    // bridges of the inner one (the tutorial BF
                    // interpreter's `digits 200` with the worker off: the
                    // divmod loop at position 2705, around two copy loops).
                    Inner::Here(code) if self.options.skip_inner && self.codes[code.0 as usize].skip.is_some() => {
                        self.abort_if(machine, key, &what, "its inner loop runs at once: recorded again", false);
                        // Recording the key's loop again, whose old loop is
                        // its code again once no loop came of this: the old
                        // loop is recorded again at the next arrival, while
                        // tries are left ([`Jit::nest_done_at_once`]).
                        if let Some(kc) = self.keys.get_mut(key).filter(|kc| kc.replaced.is_some()) {
                            kc.renest = kc.replaced;
                        }
                        return Ok(Next::Interpret(block));
                    }
                    Inner::Here(code) => (outer, Some(code)),
                    Inner::Sent => {
                        // Sent to the worker: the outer loop is recorded
                        // again once its code is there (LuaJIT's
                        // "inner loop first" abort), an entry trace then.
                        self.abort_if(machine, key, &what, "its inner loop is being optimized", false);
                        self.wait_for_inner(key, k);
                        return Ok(Next::Interpret(block));
                    }
                    Inner::Refused => {
                        self.abort(machine, key, &what, "the code generator refused the inner loop");
                        return Ok(Next::Interpret(block));
                    }
                }
            }
        };
        self.note_followed(key, &trace);
        let start = Start::frame(graph.name, &params);
        let name = self.fresh_name(label);
        let passed: Vec<Key> = passed.into_iter().map(|(k, ..)| k).collect();
        // (An inner loop cut from the recording took the keys it passed.)
        let passed_keys = inner.is_none() && !passed.is_empty();
        let passed_list = if inner.is_none() { Passed::of(&passed) } else { Passed::default() };
        // An outer loop asked again once its inner loop's code came, whose
        // round went out of the loop this time (its last round): no entry
        // trace, which would be the key's code for good, the loop going on
        // by bridges; it counts again and is recorded at its threshold.
        // (Once per ask.)
        if self.outers_asked.remove(key) && inner.is_none() && (target.is_some() || segment) {
            self.stats.outer_closed_none += 1;
            self.abort_if(machine, key, &what, "asked again for its loop, it closed none", false);
            return Ok(Next::Interpret(block));
        }
        if (target.is_some() || segment) && self.keys.get(key).is_some_and(|kc| kc.nesting) {
            // Recorded again round an inner loop done at once, it went out
            // of its loop (or ran too long): no loop, nothing compiled.
            self.log(format_args!("{what}: no loop closed, nothing compiled"));
            return Ok(Next::Interpret(block));
        }
        let at_once = does_at_once(&trace);
        let (job, kind) = match target {
            None if segment => {
                // The loop's first segment: straight code from the hot spot
                // that leaves at the label it was cut at, where the
                // interpreter goes on and a bridge, once that exit is hot,
                // records the next segment.
                self.stats.segments += 1;
                self.log(format_args!(
                    "{what}: no loop closed within {} operations, a segment to {end_label} instead",
                    trace.ops.len()
                ));
                let start = speculate::assume_lists(&start, &args);
                let recorded = trace.ops.len();
                let trace = self.with_resume_live(run, trace, &start, Some(end_label));
                let pins = Pins::new(&params, &args, label, graph.name, true);
                let source = Source { name, trace, start, end: End::Exit(end_label), pins: Some(pins) };
                (Job::Straight(Box::new(self.straight_job(source, recorded, None, false))), Kind::Entry)
            }
            None => {
                let speculating = self.speculates(key);
                let args = speculating.then_some(Seen { start: &args, end: &frame.env });
                let live: Vec<Symbol> = params.iter().chain(&unbound).copied().collect();
                let job = self.loop_job(run, name, trace, &start, &params, &live, args, graph.name);
                (Job::Loop(Box::new(job)), Kind::Loop)
            }
            Some(t) => {
                let start = speculate::assume_lists(&start, &args);
                let trace = self.with_resume_live(run, trace, &start, None);
                let c = &self.codes[t.0 as usize];
                let (jumps, end) = (c.function.name, End::Jump { target: c.function.name, params: c.params.clone() });
                let pins = Pins::new(&c.params, &args, label, graph.name, false);
                let recorded = trace.ops.len();
                let source = Source { name, trace, start, end, pins: Some(pins) };
                (Job::Straight(Box::new(self.straight_job(source, recorded, Some(jumps), false))), Kind::Entry)
            }
        };
        // (Its pins come with the job's result: [`KeyDone::pinned`].)
        let into_inner = inner.is_some();
        let done = KeyDone {
            key: key.clone(),
            kind,
            g,
            label,
            params,
            unbound,
            pins: Vec::new(),
            into: target,
            passed_keys,
            passed: passed_list,
            into_inner,
            at_once,
        };
        // Go on in the code the entry trace reached, or in the new loop
        // once compiled here (a loop optimized in the background is
        // entered once it is there).
        // A loop replacing the key's code ([`Jit::left_its_loop`]) is
        // compiled here: until it is there the key has none, and the
        // labels round it would get hot and be given code of their own,
        // which the outer loop's bridges would then stop at.
        let replacing = self.keys.get(key).is_some_and(|kc| kc.replaced.is_some());
        let submitted = if replacing {
            Err(job)
        } else {
            self.submit(machine, run, job, what.clone(), passed, || Then::Key(done.clone()))
        };
        let go = match submitted {
            Ok(()) => target,
            Err(job) => {
                let mut optimized = self.optimize_here(job);
                let done = done.pinned(optimized.as_mut());
                let compiled = optimized.and_then(|o| self.finish(o, &what, None, false));
                let Some(code) = self.key_compiled(machine, done, compiled, &what) else {
                    return Ok(Next::Interpret(block));
                };
                // (Not a segment's: the program is where it ends, not at
                // its start.)
                target.or((!segment).then_some(code))
            }
        };
        match go {
            Some(go) if self.admits_frame(run, go, stack.last().expect("a frame")) => Ok(Next::Enter(go)),
            _ => Ok(Next::Interpret(block)),
        }
    }

    /// Whether hot spot `key`, a loop's head, is settled: it has code (for
    /// some state: variants are the driver's to count) or was given up, so
    /// a loop recording that jumps back to it closes at its own start.
    fn settled(&self, key: &Key) -> bool {
        self.keys.get(key).is_some_and(|kc| kc.ignored || !kc.variants.is_empty())
    }

    /// Whether the loop at hot spot `key`, a loop's head, is on its way:
    /// on the worker, on the path of a loop there (rotated), or waiting
    /// for its inner loop's code. Not where only a bridge there passed
    /// it: installed, that bridge goes round the loop at every crossing,
    /// bypassing its head, which the interpreter then never arrives at
    /// (the tutorial BF `digits 200`: its divmod loop never got code, its
    /// copy loops ran round by round, 160-180 ms against 70-80, in the
    /// runs where the worker's timing had such a bridge on its way when
    /// a hot spot inside that loop found its head).
    fn on_its_way(&self, worker: Option<&super::background::Worker>, key: &Key) -> bool {
        worker.is_some_and(|w| w.has_key(key) || w.loop_passed(key))
            || self.outer_waiting.values().any(|outers| outers.contains(key))
    }

    /// The hot spot `key` got hot and its recording stopped: it counts
    /// again, as after an abort that does not count ([`Jit::abort_if`]):
    /// from zero, or, with code for other states, stopping to enter it.
    fn count_again(&mut self, machine: &mut Machine, key: &Key) {
        let has_code = self.keys.get(key).is_some_and(|kc| !kc.variants.is_empty());
        if let Some(p) = machine.profiler_mut() {
            p.set(key, if has_code { KeyState::Enter } else { KeyState::Counting });
        }
    }

    /// The hot spot loop `key` is judged by for how densely it runs
    /// ([`Jit::too_sparse`]), and its density: the one that got hot, its
    /// counts taken before a turn to the loop's head started them again
    /// ([`Anchor`]).
    fn judged(&self, machine: &Machine, key: &Key, anchor: Option<&Anchor>) -> (Key, Option<Density>) {
        match anchor {
            Some(a) => (a.judge.clone(), a.density.or_else(|| self.density(machine, &a.judge))),
            None => (key.clone(), self.density(machine, key)),
        }
    }

    /// Whether loop trace `root`, code of hot spot `key`, is a loop round
    /// an outer loop that a bridge of its tree has just found an inner
    /// loop of: the bridge goes back to `key` passing no other hot spot
    /// where `root`'s recording passed some (a shorter way round), and
    /// `root` ran fewer iterations than it was entered (left at once,
    /// mostly). A recording that starts in an inner loop's last iteration
    /// (a BF `[-]` arrived at when its cell is 1) goes out of it and round
    /// the outer loop back to its start; the inner loop's back edge is
    /// then a guard that fails nine times in ten, and every iteration of
    /// the inner loop went through its bridge back into the outer loop's
    /// preamble (LuaJIT refuses such a root trace: "leaving loop in root
    /// trace"). When so, `root` stops being `key`'s code, and the caller
    /// records `key`'s loop again from inside the inner loop, where the
    /// bridge arrived. That may be a last round again: tried up to
    /// [`RECORD_INSIDE`] times per hot spot, so two ways round
    /// alternating cannot make it record forever.
    pub(super) fn left_its_loop(&self, key: &Key, root: TraceId) -> bool {
        let r = &self.codes[root.0 as usize];
        r.passed_keys && r.iterations < r.entries && self.may_record_again(key, root, Again::Inside)
    }

    /// Whether entry trace `root`, code of hot spot `key` (a loop's head,
    /// whose recording left the loop), is what a bridge of its own tree
    /// goes back to ([`Jit::record_bridge`]): the loop is recorded again
    /// from the bridge's start, at most [`RECORD_INSIDE`] times per hot
    /// spot, as [`Jit::left_its_loop`]'s are. Not a loop's segment (a
    /// loop longer than a trace, whose last segment's bridge is to link
    /// back into the first): an entry trace that jumps into other code.
    /// Nor one into the inner loop cut from its own recording, whose
    /// bridges come back to its head round the outer loop, in a round
    /// that went past the inner one: its hot spot's loop is not the one
    /// it left.
    pub(super) fn entry_came_back(&self, key: &Key, root: TraceId) -> bool {
        let c = &self.codes[root.0 as usize];
        matches!(c.kind, Kind::Entry)
            && c.into.is_some()
            && !c.into_inner
            && self.keys.get(key).is_some_and(|kc| kc.recorded_inside < RECORD_INSIDE && kc.variants.contains(&root))
    }

    /// Whether loop `root`, code of `key`, may be dropped and `key`
    /// recorded again for `why` (at most [`RECORD_INSIDE`] times each).
    fn may_record_again(&self, key: &Key, root: TraceId, why: Again) -> bool {
        let tries = |kc: &KeyCode| match why {
            Again::Inside => kc.recorded_inside,
            Again::Relaid => kc.relaid,
            Again::Nest => kc.renested,
        };
        let most = if why == Again::Nest { NEST_TRIES } else { RECORD_INSIDE };
        matches!(self.codes[root.0 as usize].kind, Kind::Loop)
            && self.keys.get(key).is_some_and(|kc| tries(kc) < most && kc.variants.contains(&root))
    }

    /// Where a link `exit` of `parent` assumed laid out in a row is
    /// checked (its `guard_at`, [`crate::to_ir`], "Links laid out in a
    /// row"): the flow graph and the label the class check of the link
    /// goes on to; `None` for any other exit.
    pub(super) fn irregular_link(&self, parent: TraceId, exit: &flowc_codegen::lower::TraceExit) -> Option<Place> {
        if !exit.at {
            return None;
        }
        Some((self.codes[parent.0 as usize].innermost_function(exit.resume)?, exit.label))
    }

    /// Notes the class checks and truth tests of links of `trace` at
    /// irregular places ([`Jit::irregular`]): the conversion assumes
    /// nothing of where their links lie.
    fn forget_irregular(&self, trace: &mut crate::trace::Trace) {
        if self.irregular.is_empty() {
            return;
        }
        let sites = &trace.sites;
        let irregular = |&(k, taken): &(u32, Symbol)| {
            sites.get(k as usize).is_some_and(|s| self.irregular.contains(&(s.function, taken)))
        };
        trace.objects.unassumed = trace.objects.passed.iter().copied().filter(irregular).collect();
    }

    /// Drops loop `root` and records `key`'s loop again from `block` of the
    /// top frame of `stack`, where the run is (`why`: see [`Again`]); keeps
    /// `root` where no loop comes of that.
    #[allow(clippy::too_many_arguments)]
    fn record_again(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        key: &Key,
        root: TraceId,
        why: Again,
        stack: &mut Vec<Frame>,
        block: u32,
    ) -> Result<Next, RuntimeError> {
        self.replace_loop(machine, key, root, why);
        let next = self.record_loop(machine, run, key, stack, block, None);
        // No loop came of it (an abort, an entry trace into another
        // loop): nothing is to be replaced by what the key gets later, and
        // the loop it was to replace stays the key's first code. Dropped
        // from the key, that loop still ran where code compiled earlier
        // jumps into its body, and grew bridges of a tree no hot spot held
        // until the tree was full; its exits then all went through the
        // interpreter (the objects BF interpreter's `escape 20`: 1.0 s
        // instead of 0.5, in the runs where the recording inside met
        // another loop's code first). Not where the key waits for an inner
        // loop on the worker: it is recorded again once that is there
        // ([`Jit::inner_arrived`], which asks only keys that count). A key
        // that the recording's aborts gave up keeps the loop, and is not
        // given up.
        let waits = self.outer_waiting.values().any(|outers| outers.contains(key));
        if let Some(kc) = self.keys.get_mut(key) {
            // (A loop recorded again round an inner loop done at once is
            // the key's code until a loop replaces it, waiting or not.)
            if kc.replaced.take() == Some(root) && !kc.variants.contains(&root) && (!waits || why == Again::Nest) {
                kc.variants.insert(0, root);
                if std::mem::take(&mut kc.ignored) {
                    self.stats.ignored = self.stats.ignored.saturating_sub(1);
                }
                self.stats.kept_loops += 1;
                if let Some(p) = machine.profiler_mut() {
                    p.set(key, KeyState::Enter);
                }
                let name = self.codes[root.0 as usize].function.name;
                self.log(format_args!("no loop came of it: {name} stays the code of {}", describe(key, run.resolved)));
                // A loop to record round an inner one done at once (one
                // recorded in its last round goes on out of it), or one
                // whose recording met an inner loop that now runs at once,
                // is recorded again at a later arrival, while tries are
                // left ([`Jit::nest_done_at_once`]).
                let kc = self.keys.get_mut(key).expect("looked at");
                if why == Again::Nest {
                    kc.renest = Some(root);
                }
                if kc.renest == Some(root) {
                    self.unlink_position(machine, key);
                    // (Marked while it was not the key's code: the bridges
                    // jumping into it give way now, as `mark_nest` has
                    // them do.)
                    if why != Again::Nest {
                        self.unlink_bridges_into(root);
                    }
                }
            }
        }
        next
    }

    /// `root`, a loop trace (or an entry trace recorded in its loop's
    /// last round, [`Jit::entry_came_back`]), stops being `key`'s code
    /// ([`Jit::left_its_loop`], a link found laid out otherwise): the loop
    /// recorded next replaces it.
    fn replace_loop(&mut self, machine: &mut Machine, key: &Key, root: TraceId, why: Again) {
        self.unlink_position(machine, key);
        let kc = self.keys.get_mut(key).expect("a key with code");
        match why {
            Again::Inside => {
                kc.recorded_inside += 1;
                self.stats.recorded_inside += 1;
            }
            Again::Relaid => {
                kc.relaid += 1;
                self.stats.relaid += 1;
            }
            Again::Nest => {
                kc.renested += 1;
                self.stats.renested += 1;
            }
        }
        kc.replaced = Some(root);
        kc.variants.retain(|&c| c != root);
    }

    /// The code a jump to `code` ends up running round: `code`, or the
    /// loop that replaced it, or for an entry trace the code it jumps
    /// into, followed so.
    pub(super) fn loop_reached(&self, mut code: TraceId) -> TraceId {
        // (The chain ends: a replaced loop points at the loop that
        // replaced it, made later, which points on only if replaced too;
        // an entry trace at code made before it.)
        loop {
            let c = &self.codes[code.0 as usize];
            match (c.replaced_by, c.into) {
                (Some(next), _) => code = next,
                (None, Some(next)) if matches!(c.kind, Kind::Entry) => code = next,
                _ => return code,
            }
        }
    }

    /// What a loop trace at `block` of graph `g` starts from, given the
    /// base frame's bound variables there (`bound`: slot and value, in the
    /// frame's order): its parameters (the variables bound and live
    /// there), their values, and the variables live there but unbound.
    /// Only the live values are copied (a main graph of thousands of loops
    /// binds thousands of variables).
    /// [`Jit::loop_start`] of frame `top` (its bound variables) about to
    /// run `block`.
    pub(super) fn frame_start(&self, run: &mut Run, top: &Frame, block: u32) -> (Vec<Symbol>, Vec<Value>, Vec<Symbol>) {
        let bound = top.order.iter().map(|&s| (s, top.slots[s as usize].as_ref().expect("an ordered slot is bound")));
        self.loop_start(run, top.graph, block, bound)
    }

    fn loop_start<'v>(
        &self,
        run: &mut Run,
        g: u32,
        block: u32,
        bound: impl Iterator<Item = (Slot, &'v Value)>,
    ) -> (Vec<Symbol>, Vec<Value>, Vec<Symbol>) {
        let live = Self::liveness(run, g).live_at(block);
        let names = &run.resolved.graphs[g as usize].slot_names;
        let (mut is_live, mut is_bound) = (vec![false; names.len()], vec![false; names.len()]);
        for &s in &live {
            is_live[s as usize] = true;
        }
        let (mut params, mut args) = (Vec::new(), Vec::new());
        for (s, v) in bound {
            is_bound[s as usize] = true;
            if is_live[s as usize] {
                params.push(names[s as usize]);
                args.push(v.clone());
            }
        }
        let unbound = live.iter().filter(|&&s| !is_bound[s as usize]).map(|&s| names[s as usize]).collect();
        (params, args, unbound)
    }

    /// Makes `looped`, a loop recorded inside another recording, the loop
    /// trace of `key` (label `label` of graph `g`, where the base frame's
    /// variables were `pairs`, in the frame's order; `inside`: the hot
    /// spots passed within it). With a worker it is optimized there, as
    /// any loop, and the outer recording is dropped: a compile here was
    /// most of the running thread's compile time on programs of thousands
    /// of nested loops (BF statements 4: 0.4 s of 0.7). Else compiled and
    /// registered here, the outer recording's entry trace jumping into it.
    #[allow(clippy::too_many_arguments)]
    fn install_inner_loop(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        key: &Key,
        g: u32,
        label: Symbol,
        pairs: &[(Symbol, Value)],
        end: &Env,
        mut looped: crate::trace::Trace,
        inside: Vec<Key>,
    ) -> Inner {
        looped.objects.add_start(0, pairs);
        let resolved = run.resolved;
        let graph = &resolved.graphs[g as usize];
        let Some(&block) = graph.labels.get(&label) else { return Inner::Refused };
        let bound = pairs.iter().filter_map(|(n, v)| Some((graph.slot_of(*n)?, v)));
        let (params, args, unbound) = self.loop_start(run, g, block, bound);
        let function = run.resolved.graphs[g as usize].name;
        let what = describe(key, run.resolved);
        self.log(format_args!("inner loop first: {what}, {} operations", looped.ops.len()));
        let start = Start::frame(function, &params);
        let name = self.fresh_name(label);
        let speculating = self.speculates(key);
        let live: Vec<Symbol> = params.iter().chain(&unbound).copied().collect();
        let end: Vec<(Symbol, Value)> = end.iter().map(|(k, v)| (*k, v.clone())).collect();
        let args = speculating.then_some(Seen { start: &args, end: &end });
        let at_once = does_at_once(&looped);
        let job = self.loop_job(run, name, looped, &start, &params, &live, args, function);
        self.stats.inner_first += 1;
        let done = KeyDone {
            key: key.clone(),
            kind: Kind::Loop,
            g,
            label,
            params,
            unbound,
            pins: Vec::new(),
            into: None,
            passed_keys: false,
            passed: Passed::of(&inside),
            into_inner: false,
            at_once,
        };
        let job = Job::Loop(Box::new(job));
        let Err(job) = self.submit(machine, run, job, what.clone(), inside, || Then::Key(done.clone())) else {
            self.stats.inner_sent += 1;
            return Inner::Sent;
        };
        let compiled = self.optimize_here(job).and_then(|o| self.finish(o, &what, None, false));
        if compiled.is_none() {
            return Inner::Refused;
        }
        self.key_compiled(machine, done, compiled, &what).map_or(Inner::Refused, Inner::Here)
    }

    /// Notes that `outer`'s recording was dropped for its inner loop at
    /// `inner`, being optimized.
    fn wait_for_inner(&mut self, outer: &Key, inner: Key) {
        let waiting = self.outer_waiting.entry(inner).or_default();
        if !waiting.contains(outer) {
            waiting.push(outer.clone());
        }
    }

    /// `inner`'s loop was installed (`made`: its code is there). The hot
    /// spots whose recordings were dropped for it then stop at their next
    /// arrival and are recorded again, entry traces into it, as if the
    /// inner loop had been compiled while they recorded (waiting for their
    /// count instead, an outer loop of a few dozen rounds, as a long
    /// program's are, was not recorded again before it ended).
    pub(super) fn inner_arrived(&mut self, machine: &mut Machine, inner: &Key, made: bool) {
        let Some(outers) = self.outer_waiting.remove(inner) else { return };
        let Some(p) = machine.profiler_mut().filter(|_| made) else { return };
        for outer in outers {
            if p.state(&outer) == KeyState::Counting {
                p.ask_after(&outer, 1);
                self.stats.outer_asked += 1;
                self.outers_asked.insert(outer);
            }
        }
    }

    /// Makes `code`, a loop or entry trace just compiled, one of `key`'s.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn register(
        &mut self,
        machine: &mut Machine,
        key: &Key,
        code: TraceId,
        kind: Kind,
        g: u32,
        label: Symbol,
        params: Vec<Symbol>,
        unbound: Vec<Symbol>,
        time: Duration,
    ) {
        let c = &mut self.codes[code.0 as usize];
        c.kind = kind;
        c.anchor = label;
        c.graph = g;
        c.params = params;
        c.unbound = unbound;
        c.compile_time = time;
        self.adopt_body(code);
        match self.codes[code.0 as usize].kind {
            Kind::Loop => self.stats.traces += 1,
            _ => self.stats.entry_traces += 1,
        }
        // Judged again from the start if it loses its code.
        self.sparse_rows.remove(key);
        let kc = self.keys.entry(key.clone()).or_default();
        kc.variants.push(code);
        let is_loop = matches!(self.codes[code.0 as usize].kind, Kind::Loop);
        if let Some(old) = kc.replaced.take_if(|_| is_loop) {
            kc.renest = None;
            // What jumps to the loop this one replaces (recorded round an
            // outer loop, [`Jit::left_its_loop`]) comes here instead.
            let cache = self.cache.as_ref().expect("code exists");
            if self.codes[old.0 as usize].params == self.codes[code.0 as usize].params {
                // The old loop's preamble, and those it had replaced: a
                // slot holds code addresses, not other slots.
                let params = self.codes[code.0 as usize].params.clone();
                for t in 0..self.codes.len() {
                    let c = &self.codes[t];
                    if (t == old.0 as usize || c.replaced_by == Some(old)) && c.params == params {
                        cache.install(TraceId(t as u32), code).expect("the same parameters");
                        self.codes[t].replaced_by = Some(code);
                    }
                }
            }
            self.give_way(machine, key, Some(old));
        }
        if let Some(p) = machine.profiler_mut() {
            p.set(key, KeyState::Enter);
        }
    }

    /// `key`'s loop, just made, replaces `old` (recorded again: see
    /// [`Again`]) or, `None`, is the key's first and does an inner loop at
    /// once ([`Jit::key_compiled`]): the code that would go on bypassing
    /// it gives way. Entry traces into `old` stop being their hot spots' code, which
    /// count again and are recorded again. Bridges that went through
    /// `key` when it had no code (unrolling a round of its loop), or jump
    /// into `old` (into its body, where their state fits it: its slot,
    /// which now leads to the new loop, is not read there) or into such
    /// an entry trace, are unlinked from their exits, which record their
    /// bridges again at their next failure (their counts are past the
    /// threshold): those stop at `key` and jump into the new loop. Not
    /// the dispatch tier's bridges, nor where bridges are grafted into
    /// trees, which hold their code. (Code made unreachable so stays in
    /// the cache, and the bridges of an unlinked bridge's exits count
    /// against their tree's `max_bridges` until a flush.)
    ///
    /// Without this, the loops of a nest that got code first kept running
    /// round by round, linked by bridges recorded before the loop around
    /// them had code: `digits 200` kept its slow mode after its outer
    /// loop was recorded again to do them at once — and, where the outer
    /// loop's first code came only after bridges had linked up the way
    /// round it (the worker's timing decides which), that loop ran only
    /// where the interpreter entered it, and the copy loops inside round
    /// by round everywhere else (116-280 ms against 75-85).
    fn give_way(&mut self, machine: &mut Machine, key: &Key, old: Option<TraceId>) {
        let print = Passed::print(key);
        let entries: Vec<TraceId> = (0..self.codes.len())
            .map(|t| TraceId(t as u32))
            .filter(|t| {
                let c = &self.codes[t.0 as usize];
                matches!(c.kind, Kind::Entry) && old.is_some() && c.into == old
            })
            .collect();
        // (Not the dispatch tier's bridges, which go back into the tier
        // at the next position: a few operations each, past many hot
        // spots.)
        let bypass = |c: &Code| {
            c.passed.has(print) && self.tier_end(c.root, c.graph).is_none()
                || c.jumps_to.is_some_and(|j| Some(j) == old || entries.contains(&j))
        };
        let bridges = self.linked_bridges(bypass);
        self.unlink_bridges(bridges, if old.is_some() { GiveWay::Again } else { GiveWay::First });
        for t in entries {
            let Some(k) = self.key_of(t) else { continue };
            if let Some(kc) = self.keys.get_mut(&k) {
                kc.variants.retain(|&c| c != t);
                if kc.variants.is_empty() {
                    if let Some(p) = machine.profiler_mut() {
                        p.set(&k, KeyState::Counting);
                    }
                }
            }
            self.unlink_position(machine, &k);
            self.stats.gave_way += 1;
            if self.log.is_some() {
                let name = self.codes[t.0 as usize].function.name;
                self.log(format_args!("{name} gives way to the loop recorded again"));
            }
        }
    }

    /// The bridges linked to their exits that `pick` holds, with those
    /// exits; none where bridges are grafted into trees, which hold their
    /// code ([`Jit::give_way`]).
    fn linked_bridges(&self, pick: impl Fn(&Code) -> bool) -> Vec<(TraceId, ExitId)> {
        (0..self.codes.len())
            .filter_map(|t| {
                let c = &self.codes[t];
                let e = c.linked_from?;
                (!self.options.trees && matches!(c.kind, Kind::Bridge) && pick(c)).then_some((TraceId(t as u32), e))
            })
            .collect()
    }

    /// Unlinks `bridges` from their exits ([`Jit::give_way`]), which
    /// record their bridges again at their next failure, and counts and
    /// logs them as giving way to `to`.
    fn unlink_bridges(&mut self, bridges: Vec<(TraceId, ExitId)>, to: GiveWay) {
        for (b, e) in bridges {
            if self.exits.get(e.0 as usize).and_then(Option::as_ref).and_then(|s| s.bridge) != Some(b) {
                continue;
            }
            // (A link that cannot be undone stays, unchanged: the bridge
            // goes on bypassing the loop, as before.)
            if self.cache.as_ref().expect("code exists").unlink(e).is_err() {
                continue;
            }
            self.exit_state(e).bridge = None;
            let c = &mut self.codes[b.0 as usize];
            c.linked_from = None;
            // (Not one of its tree's bridges any more; still a piece of
            // the cache, as any code there.)
            let (root, empty) = (c.root, c.recorded_ops == 0);
            if !empty {
                let r = &mut self.codes[root.0 as usize];
                r.bridges = r.bridges.saturating_sub(1);
            }
            let (count, which) = match to {
                GiveWay::Again => (&mut self.stats.gave_way, "the loop recorded again"),
                GiveWay::First => (&mut self.stats.gave_way_first, "the loop it went through"),
                GiveWay::Nest => (&mut self.stats.gave_way_nest, "the loop to be recorded again"),
            };
            *count += 1;
            if self.log.is_some() {
                let name = self.codes[b.0 as usize].function.name;
                self.log(format_args!("{name} gives way to {which}"));
            }
        }
    }

    /// The code at `key` that environment `env` can enter, if any.
    pub(super) fn linkable(&self, key: &Key, env: &Env) -> Option<TraceId> {
        let kc = self.keys.get(key)?;
        kc.variants.iter().copied().find(|&c| self.admits_env(c, env))
    }

    /// The operations a recording arriving at hot spot `key` (label
    /// `label`, environment `env`), whose code is `code`, records instead
    /// of jumping into that code: its loop's iterations but the last, when
    /// the loop runs to its end at once and its skip holds here
    /// ([`crate::skip`]). Once per hot spot and recording (`skipped`): a
    /// recording that comes back to it goes into its code.
    ///
    /// Loop recordings only: a loop recording closes at its own hot spot,
    /// so what it does at once runs every round of the loop around. A
    /// bridge may instead go on through a program's straight run of
    /// loops, each run a few times: bridges that did tripled what the
    /// tutorial BF interpreter recorded on `statements 2` and made the
    /// run half again as slow, and `bottles 99` twice as slow.
    pub(super) fn skip_at(
        &self,
        code: TraceId,
        key: &Key,
        label: Symbol,
        env: &Env,
        skipped: &mut Vec<Key>,
    ) -> Option<Vec<crate::trace::TraceOp>> {
        if !self.options.skip_inner || skipped.contains(key) {
            return None;
        }
        let skip = self.codes[code.0 as usize].skip.as_ref().filter(|s| s.holds(env))?;
        skipped.push(key.clone());
        Some(skip.ops(label, env))
    }

    /// Whether `code` is an entry trace into a loop that recordings do at
    /// once where they arrive at its head ([`Jit::skip_at`]): they go on
    /// through its hot spot to the loop's head instead of into it.
    pub(super) fn enters_skip(&self, code: TraceId) -> bool {
        let c = &self.codes[code.0 as usize];
        self.options.skip_inner
            && matches!(c.kind, Kind::Entry)
            && c.into.is_some_and(|t| self.codes[t.0 as usize].skip.is_some())
    }

    /// Whether loop traces of hot spot `key` speculate (assume what their
    /// entry state holds: [`speculate`]), which they do until one that
    /// assumes nothing replaced them (the key is `generic`).
    fn speculates(&self, key: &Key) -> bool {
        !self.keys.get(key).is_some_and(|k| k.generic)
    }

    /// The operations after which a recording that has not closed its
    /// loop (or, a bridge, reached code) ends at the next label it arrives
    /// at: a tenth short of `trace_limit`, where it would be given up.
    pub(super) fn segment_at(&self) -> usize {
        self.options.trace_limit - self.options.trace_limit / 10
    }

    /// Past [`Jit::segment_at`], where a recording that has met no hot
    /// spot since ends at any label: halfway to `trace_limit`.
    pub(super) fn segment_at_any(&self) -> usize {
        let at = self.segment_at();
        at + (self.options.trace_limit - at) / 2
    }

    /// The limits of a recording (one that assumes the lists it starts
    /// with says so: `lists_assumed`).
    pub(super) fn limits(&self) -> crate::record::Limits<'_> {
        let unpromoted = (!self.unpromoted.is_empty()).then_some(&self.unpromoted);
        crate::record::Limits {
            ops: self.options.trace_limit,
            unroll: self.options.unroll_limit,
            unpromoted,
            cold: None,
            lists_assumed: false,
            start_constants: &[],
            constant_loops: (self.options.constant_loops
                && self.constant_loops.possible(self.shared.index(), self.shared.program, &self.watched))
            .then_some(&self.constant_loops),
        }
    }

    /// After a recording too long: traces call `biggest`, the function it
    /// spent most operations in, from now on. Whether that is new.
    ///
    /// The hot spots whose code followed `biggest` are recorded again
    /// (their code dropped from the key, counted from zero): code that
    /// unrolled one call's rounds of its loop holds guards for that call
    /// alone, and leaves at every other (a loop calling a function that
    /// counts a Collatz chain: its one trace, made while the calls were
    /// followed, was left at each call, and the interpreter ran the loop).
    pub(super) fn stop_following(&mut self, machine: &mut Machine, biggest: Option<Symbol>) -> bool {
        let Some(f) = biggest else { return false };
        if self.recursive.contains(&f) || !self.not_followed.insert(f) {
            return false;
        }
        self.log(format_args!("calls of {f} are not followed from now on: traces call it"));
        for key in self.followers.remove(&f).unwrap_or_default() {
            self.record_key_again(machine, &key);
        }
        true
    }

    /// [`Jit::stop_following`] for the code of hot spot `key` alone (its
    /// loop, entry traces and bridges): a call of `f` whose loop ran past
    /// the unroll limit there. A BF interpreter's `move` by 265 cells,
    /// once a round, where its other moves are a few cells: followed
    /// nowhere, every trace called it (the run-length interpreter's
    /// `digits 200`: 0.3 -> 2 s, in the runs where that came first).
    /// Its code, if it followed `f`, is recorded again. Whether that is new.
    pub(super) fn stop_following_at(
        &mut self,
        machine: &mut Machine,
        f: Symbol,
        key: Key,
        resolved: &Resolved,
    ) -> bool {
        if self.recursive.contains(&f) || self.not_followed.contains(&f) {
            return false;
        }
        if !self.not_followed_at.insert((f, key.clone())) {
            return false;
        }
        self.log(format_args!(
            "calls of {f} are not followed from now on by the code of {}: it calls it",
            describe(&key, resolved)
        ));
        if self.followers.get(&f).is_some_and(|keys| keys.contains(&key)) {
            self.record_key_again(machine, &key);
        }
        true
    }

    /// Counts a bridge of tree `root` from exit `exit` of `parent` (to
    /// `label`, with resume record `record`) if the exit is a round of a
    /// loop in a followed call, one of several the trace unrolled: another
    /// exit of `parent` leaves at the same label of the same function,
    /// inside the same call (its callers' frames the same, values and
    /// constants alike; an interpreter's step function called once per
    /// instruction is not, its callers' promoted position differing), and
    /// none of the function's parameters is a constant there (a call
    /// given constants folds on them: an interpreter's step function at
    /// its promoted position, whose loop for one instruction may take
    /// bridges, is followed still).
    /// Where [`Options::call_bridges`] such bridges of the tree left one
    /// function's loop, the tree's hot spot stops following that function
    /// and is recorded again calling it ([`Jit::stop_following_at`]);
    /// `true` then. A loop unrolled into a trace is one path of its rounds:
    /// where the rounds branch on data (a search tree's walk left or right,
    /// 16 levels deep), every other path is a bridge, more than the tree
    /// holds, where the function called, its own code, has them all.
    fn branchy_call(
        &mut self,
        machine: &mut Machine,
        (root, parent, exit): (TraceId, TraceId, ExitId),
        label: Symbol,
        record: &ResumeData,
        resolved: &Resolved,
    ) -> bool {
        let frames = &record.frames;
        let (Some(innermost), [callers @ .., _]) = (frames.last(), &frames[..]) else { return false };
        let Some(f) =
            innermost.function.filter(|&f| frames.len() > 1 && self.watched.iter().any(|(w, _)| *w == Some(f)))
        else {
            return false;
        };
        let (Some(cache), p) = (self.cache.as_ref(), &self.codes[parent.0 as usize]) else { return false };
        let round = cache.exits_of(parent).into_iter().filter(|&e| e != exit).any(|e| {
            let (other, _) = cache.exit(e);
            if other.label != label || p.record_shape(other.resume).0 != frames.len() {
                return false;
            }
            let other = p.record(other.resume);
            other.frames.last().is_some_and(|o| o.function == Some(f)) && other.frames[..callers.len()] == *callers
        });
        if !round {
            return false;
        }
        self.stats.round_bridges += 1;
        let Some(graph) = resolved.graph_of(Some(f)).map(|g| &resolved.graphs[g as usize]) else { return false };
        let constant = |name: &Symbol| {
            innermost.env.iter().any(|(n, v)| n == name && matches!(v, ResumeValue::Operand(Operand::Const(_))))
        };
        if graph.slot_names[..graph.params].iter().any(constant) {
            return false;
        }
        let n = self.call_bridges.entry((root, f)).or_default();
        *n += 1;
        if *n < self.options.call_bridges {
            return false;
        }
        let Some(key) = self.key_of(root) else { return false };
        if !self.stop_following_at(machine, f, key, resolved) {
            return false;
        }
        self.stats.branchy_calls += 1;
        true
    }

    /// Gives up the hot spots at the heads of loops recordings followed
    /// for their constants since last asked ([`crate::constant_loops`]).
    pub(super) fn leave_followed_to_constants(&mut self, machine: &mut Machine, resolved: &Resolved) {
        let (followed, too_long) = self.constant_loops.newly_followed();
        let key = |(function, header): (Option<Symbol>, Symbol)| {
            let g = resolved.graph_of(function)?;
            let &block = resolved.graphs[g as usize].labels.get(&header)?;
            Some(Key { graph: g, block, greens: Default::default() })
        };
        let followed: Vec<Key> =
            followed.into_iter().filter(|&(f, h)| self.constant_loops.followed(f, h)).filter_map(key).collect();
        for k in followed {
            self.leave_to_constants(machine, &k, resolved);
        }
        // One too long to follow is a hot spot again, given up or not:
        // its own code runs what recordings leave to it.
        for k in too_long.into_iter().filter_map(key) {
            let Some(kc) = self.keys.get_mut(&k).filter(|kc| kc.ignored && kc.left_to_constants) else { continue };
            kc.ignored = false;
            kc.left_to_constants = false;
            if let Some(p) = machine.profiler_mut() {
                p.set(&k, KeyState::Counting);
            }
            let what = describe(&k, resolved);
            self.log(format_args!("hot spot counted again: {what}: its loop is too long for the recordings to follow"));
        }
    }

    /// Gives up hot spot `key`, a loop's head without greens that
    /// recordings follow for their constants, and drops its code from it
    /// (the code stays for what jumps to it): an interpreter's scan for a
    /// bracket's partner, whose own code is generic in the position it
    /// starts from and leaves to every position after a bracket, each a
    /// `guard_value` of a chain that fills (the promotion was given up as
    /// megamorphic, and every position ran generic from then on: BF
    /// `digits 200` 10-17 s in two runs of ten instead of 0.2).
    fn leave_to_constants(&mut self, machine: &mut Machine, key: &Key, resolved: &Resolved) {
        let kc = self.keys.entry(key.clone()).or_default();
        if kc.ignored {
            return;
        }
        kc.variants.clear();
        kc.ignored = true;
        kc.left_to_constants = true;
        self.stats.ignored += 1;
        self.stats.left_to_constants += 1;
        if let Some(p) = machine.profiler_mut() {
            p.set(key, KeyState::Ignored);
        }
        let what = describe(key, resolved);
        self.log(format_args!(
            "hot spot given up: {what}: recordings that arrive there follow its loop for their constants"
        ));
    }

    /// The hot spot whose code `code` is, if it is a hot spot's.
    pub(super) fn key_of(&self, code: TraceId) -> Option<Key> {
        self.keys.iter().find(|(_, kc)| kc.variants.contains(&code)).map(|(k, _)| k.clone())
    }

    /// Drops hot spot `key`'s code from the key, which counts from zero
    /// and is recorded again at its threshold, the way recordings go now
    /// ([`Jit::stop_following`], [`Jit::megamorphic`]); the code itself
    /// stays for what jumps to it.
    pub(super) fn record_key_again(&mut self, machine: &mut Machine, key: &Key) {
        let Some(kc) = self.keys.get_mut(key).filter(|kc| !kc.variants.is_empty()) else { return };
        kc.variants.clear();
        if let Some(p) = machine.profiler_mut() {
            p.set(key, KeyState::Counting);
        }
        self.stats.refollowed += 1;
    }

    /// Notes that the code recorded at `key` as `trace` followed the
    /// functions it enters ([`Jit::stop_following`]).
    fn note_followed(&mut self, key: &Key, trace: &crate::trace::Trace) {
        for op in &trace.ops {
            if let crate::trace::TraceOp::Enter { func, .. } = op {
                let keys = self.followers.entry(*func).or_default();
                if !keys.contains(key) {
                    keys.push(key.clone());
                }
            }
        }
    }

    /// A recording at `key` failed: count it, and give up on the key after
    /// `max_aborts`.
    pub(super) fn abort(&mut self, machine: &mut Machine, key: &Key, what: &str, why: &str) {
        self.abort_if(machine, key, what, why, true);
    }

    /// A recording from `key` abandoned; counted against `max_aborts`
    /// when `counts` (the hot spot is given up at the limit).
    pub(super) fn abort_if(&mut self, machine: &mut Machine, key: &Key, what: &str, why: &str, counts: bool) {
        self.stats.aborted += 1;
        let kc = self.keys.entry(key.clone()).or_default();
        kc.aborts += counts as u32;
        let give_up = counts && kc.aborts >= self.options.max_aborts && kc.variants.is_empty();
        let state = if give_up {
            kc.ignored = true;
            self.stats.ignored += 1;
            KeyState::Ignored
        } else if kc.variants.is_empty() {
            KeyState::Counting
        } else {
            KeyState::Enter
        };
        if let Some(p) = machine.profiler_mut() {
            p.set(key, state);
        }
        if counts {
            let (n, most) = (self.keys[key].aborts, self.options.max_aborts);
            self.log(format_args!("abort at {what}: {why} ({n} of {most})"));
        } else {
            self.log(format_args!("abort at {what}: {why}"));
        }
        if give_up {
            self.log(format_args!("hot spot given up: {what}"));
        }
    }

    /// Records a bridge from exit `exit` of code `parent`, whose state the
    /// frames `frames` are (the exit stored `values`), compiles it and
    /// links the exit to it; `jump` when the bridge is an empty one into a
    /// join's code ([`Jit::jumps_to_join`], which the exit asked before
    /// the compile budget).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_bridge(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        exit: ExitId,
        parent: TraceId,
        values: &[Option<Value>],
        frames: Vec<ResumeFrame>,
        stack: &mut Vec<Frame>,
        jump: bool,
    ) -> Result<Next, RuntimeError> {
        let cache = self.cache.as_ref().expect("code exists");
        let (texit, _) = cache.exit(exit);
        let index = cache.exits_of(parent).iter().position(|e| *e == exit).unwrap_or(0);
        let p = &self.codes[parent.0 as usize];
        let root = p.root;
        // An exit whose state a bridge cannot start from (an unbound value
        // the trace stores, which resuming drops) gets none.
        if values.iter().any(Option::is_none) {
            self.exit_state(exit).refused = Some(NoBridge::Unbound);
            let block = machine.replace_top(stack, &frames, texit.label)?;
            return Ok(Next::Interpret(block));
        }
        let record = p.record(texit.resume).into_owned();
        let mut start = Start::exit(|v| p.value_name(v), &record, &texit.values);
        // A speculation check of a loop trace (its preheader's guards):
        // the bridge is the same loop, assuming nothing.
        let retrace = is_check(p, &texit);
        // A guard checking a loop's fact on the way into it: the state does
        // not fit the loop, so the bridge goes to its preamble.
        let restart = p.restarts.contains(&texit.resume);
        let (base_graph, parent_name) = (p.graph, p.function.name);
        // A failing guard_value: the bridge is for the value that failed it,
        // the next in a chain that stops at `max_values`.
        let values_depth = if texit.key.is_some() { p.values + 1 } else { 0 };
        // Values that came back to a `guard_value`: an interpreter's
        // positions, which a hint that keys nothing lumps together (see
        // "A hint that keys nothing"); its hot spot gives way to the
        // promotion's.
        if values_depth > 0 && self.hints_may_move() && self.exit_state(exit).came_back {
            let function = record.frames.last().and_then(|f| f.function);
            if self.move_hint(machine, run, root, function, texit.label) {
                let block = machine.replace_top(stack, &frames, texit.label)?;
                return Ok(Next::Interpret(block));
            }
        }
        if values_depth > self.options.max_values {
            // A promoted variable that took more values at this guard
            // than a chain of bridges holds: the promotion is given up —
            // but not for a chain in the tree of a loop that promotes
            // nothing itself (a loop generic in what the interpreter
            // promotes after it: an interpreter's scan for a bracket's
            // partner too long for recordings to follow, which leaves to
            // every position after a bracket): the exit leaves to the
            // driver, which finds each position's code.
            let promotes = |t: TraceId| self.promotes(run, t);
            let r = &self.codes[root.0 as usize];
            let generic = matches!(r.kind, Kind::Loop) && !promotes(root) && !r.body.is_some_and(promotes);
            // Nor where values came back among those that failed the last
            // guard before its bridge: positions of an interpreter, each
            // with its code, not values new every time.
            let came_back = self.exit_state(exit).came_back;
            if self.options.megamorphic_chains && !generic && !came_back {
                let function = record.frames.last().and_then(|f| f.function);
                if self.hint_to_move(run, root, function, texit.label).is_some() {
                    // Whether values come back tells: decided from more
                    // of them (`Jit::decide_chain`).
                    self.exit_state(exit).deciding = true;
                } else {
                    let why = format!("a guard_value there failed for more than {} values", self.options.max_values);
                    self.megamorphic(machine, run, function, texit.label, &why);
                }
            }
            self.exit_state(exit).refused = Some(NoBridge::Megamorphic);
            let block = machine.replace_top(stack, &frames, texit.label)?;
            return Ok(Next::Interpret(block));
        }
        if let (Some(k), Some(innermost)) = (texit.key.map(|k| k as usize), record.frames.last()) {
            let tested = texit.values[k];
            let var = innermost
                .env
                .iter()
                .find(|(_, rv)| matches!(rv, ResumeValue::Operand(Operand::Value(x)) if *x == tested));
            if let Some((var, _)) = var {
                start.promoted.push((*var, values[k].clone().expect("checked above")));
            }
        }
        let graph = &run.resolved.graphs[base_graph as usize];
        let profiler = machine.profiler().expect("the JIT runs with a profiler");
        let single = frames.len() == 1;
        let start_env: Env = frames[0].env.iter().cloned().collect();
        // Where the bridge starts, if that is a hot spot: arriving there
        // again makes it a loop (a retrace), else it is a key like others.
        let start_key = if single { stop_key(profiler, graph, base_graph, texit.label, &start_env) } else { None };
        // A tail bridges keep recording from here ([`joins`]): the exit
        // records the join's trace, which it and the others then share.
        // (Not in the dispatch tier's tree, whose bridges go back to the
        // tier at the next instruction: shared tails of the dispatch loop
        // are what the tier is.)
        let plain = single
            && !retrace
            && !restart
            && start.promoted.is_empty()
            && record.virtuals.is_empty()
            && self.tier_end(root, base_graph).is_none();
        // A bridge into a join's code is a jump (the empty bridge below,
        // `jump`: [`Jit::jumps_to_join`]): not one of the tree's bridges.
        if !jump && self.codes[root.0 as usize].bridges >= self.options.max_bridges {
            self.exit_state(exit).refused = Some(NoBridge::TreeFull);
            let block = machine.replace_top(stack, &frames, texit.label)?;
            return Ok(Next::Interpret(block));
        }
        if frames.len() > 1 && self.branchy_call(machine, (root, parent, exit), texit.label, &record, run.resolved) {
            // Its hot spot is recorded again calling the function: the
            // interpreter goes on from the exit.
            let block = machine.replace_top(stack, &frames, texit.label)?;
            return Ok(Next::Interpret(block));
        }
        // A bridge into the dispatch tier where the cache is full: it
        // ends at its first arrival at the tier's label, entering the tier
        // (or the code of the position there), and is made past the full
        // cache (see "Short bridges past a full cache").
        //
        // The tier's own exits are not held back by a full cache (up to
        // `max_bridges` of them until the next flush: the tier's tree is
        // not bounded by it, and the scanning interpreter's chains of
        // bridges along its scans took 3,000): their bridges go back into
        // the tier at its next arrival at its label, and are the tier's
        // code for the positions the program runs now. Held back, each
        // crossing went to the driver: the run-length interpreter's moves
        // of more cells than its tier's tree had seen, after a program's
        // first phase had filled the cache, crossed 10 million times
        // (`phases 4`: 12-14 s, now 1.4-1.7).
        let mut short = false;
        let full = self.cache_full(run, machine.steps());
        if full && self.in_tier_tree(exit) && self.tier_past_full < self.options.max_bridges {
            self.tier_past_full += 1;
            self.stats.tier_bridges_past_full += 1;
        } else if full {
            // The cache is full: the interpreter goes on from the exit,
            // and all code goes if it may (see "A full cache"). What is
            // hot comes round again and is compiled anew.
            let into_the_tier = self.tier_at(base_graph).is_some() && !retrace && start.promoted.is_empty();
            if self.may_flush(machine.steps()) {
                let block = machine.replace_top(stack, &frames, texit.label)?;
                self.flush(machine, run);
                return Ok(Next::Interpret(block));
            }
            if !into_the_tier || self.short_bridges >= self.options.short_bridges {
                let block = machine.replace_top(stack, &frames, texit.label)?;
                self.exit_state(exit).refused = Some(NoBridge::CacheFull);
                return Ok(Next::Interpret(block));
            }
            short = true;
        }
        // At the head of a loop a bridge ended at for the interpreter to
        // count, still without code: no bridge for now, which would go
        // through the head again ([`BackJump`]) — while the head's loop is
        // on its way, or the first [`AROUND_TRIES`] times otherwise (the
        // count of tries the round-about rule below uses too: an exit
        // spends them on either). Not an exit of the dispatch tier's
        // tree, which goes back into the tier.
        let waiting_head = start_key.as_ref().filter(|k| {
            !short
                && self.heads_ended_at.contains(k)
                && !self.settled(k)
                && !self.in_tier_tree(exit)
                && (self.exit_state(exit).left_around < AROUND_TRIES || self.on_its_way(run.worker.as_ref(), k))
        });
        if let Some(key) = waiting_head.cloned() {
            let state = self.exit_state(exit);
            state.left_around += 1;
            state.to_driver = 0;
            let block = machine.replace_top(stack, &frames, texit.label)?;
            // The interpreter resumes at the head, which a jump there
            // would have counted and resuming does not: counted here, and
            // where that makes it hot (asked by the bridge that ended
            // there), the driver goes on as at any hot spot. (Without the
            // dispatch tier, whose code counts every position, a loop
            // around entered once was never counted again.)
            let now = machine.steps();
            if machine.profiler_mut().is_some_and(|p| p.arrive(&key, now)) {
                return self.hot(machine, run, &key, stack, block);
            }
            return Ok(Next::Interpret(block));
        }
        if let Some(key) = start_key.as_ref().filter(|k| !short && self.nest_waits(k, &start_env)) {
            // At the head of a loop to be recorded again round an inner
            // loop done at once: recorded from here, the exit's state
            // (else, the interpreter goes on, and arrives there again).
            let block = machine.replace_top(stack, &frames, texit.label)?;
            let top = stack.last().expect("a frame");
            if let Some(root) = self.nest_again(machine, run, key, top) {
                return self.record_nest(machine, run, key, root, stack, block);
            }
            return Ok(Next::Interpret(block));
        }
        self.log(format_args!("record bridge from exit {index} of {parent_name} (to {})", texit.label));
        if plain && !short && start_key.is_none() {
            if let Some(key) = self.join_at(machine, run, base_graph, texit.label, &start_env) {
                self.log(format_args!("join at {}", describe(&key, run.resolved)));
                let block = machine.replace_top(stack, &frames, texit.label)?;
                return self.record_loop(machine, run, &key, stack, block, None);
            }
        }
        if let Some(key) = start_key.as_ref().filter(|_| plain && !short && self.joins.is_join(base_graph, texit.label))
        {
            // The join's trace, made on the worker, is installed here: the
            // interpreter never arrives at a join to install it.
            if let Some((pending, result)) = run.worker.as_mut().and_then(|w| w.take_key(key)) {
                self.install(machine, pending, result);
            }
            if run.worker.as_ref().is_some_and(|w| w.has_key(key)) {
                // The join's trace is on the way: the exit waits for it.
                let block = machine.replace_top(stack, &frames, texit.label)?;
                return Ok(Next::Interpret(block));
            }
        }
        let profiler = machine.profiler().expect("the JIT runs with a profiler");
        let graph = &run.resolved.graphs[base_graph as usize];
        let mut target = None;
        // The hot spot whose code it reached.
        let mut target_key = None;
        let mut closes = false;
        // Whether the recording stopped at code whose key has greens (an
        // interpreter's dispatch on its `pc`): a tail specialized to them.
        let mut into_greens = false;
        // The hot spots passed, with the operations recorded when first.
        let mut seen: HashMap<Key, usize> = start_key.iter().map(|k| (k.clone(), 0)).collect();
        // A bridge of the dispatch tier's tree goes back into the tier
        // where it arrives at the tier's label, whatever the position.
        let tier_end = self.tier_end(root, base_graph);
        // Any other bridge that has passed `tier_bridge_positions` hot
        // spots without code ends at the tier's label by entering the tier.
        let into_tier = if tier_end.is_none() { self.tier_at(base_graph) } else { None };
        let long = if short { 0 } else { self.options.tier_bridge_positions };
        let mut cut = false;
        let mut around = false;
        // The hot spot the bridge went round a loop back to, if it did,
        // and the operations of that round.
        let mut loops_at: Option<(Key, usize)> = None;
        // The hot spot whose code the bridge's tree grows from.
        // (Looked up only when some code calls a function so: a scan of
        // the hot spots.)
        let root_key = if self.not_followed_at.is_empty() { None } else { self.key_of(root) };
        let may_leave_around = self.exit_state(exit).left_around < AROUND_TRIES;
        // The head of the loop around the bridge's start it jumped back
        // to, where it ended ([`BackJump`]).
        let mut back_jump = BackJump::default();
        let mut ended_at_head: Option<Key> = None;
        let this = &*self;
        let segment_at = this.segment_at();
        let mut at = |l: Symbol, env: &Env, ops: usize| {
            if let Some(&(_, tier)) = tier_end.as_ref().filter(|(t, _)| *t == l) {
                if this.admits_env(tier, env) {
                    target = Some(tier);
                    return Arrival::Stop;
                }
            }
            // Long: it ends here, leaving to the interpreter (the next
            // segment is this exit's bridge once it is hot).
            let too_long = ops >= segment_at;
            let Some(k) = stop_key(profiler, graph, base_graph, l, env) else {
                let most = if short { SHORT_BRIDGE_OPS } else { this.segment_at_any() };
                return if ops >= most { Arrival::Stop } else { Arrival::Continue };
            };
            let back = back_jump.arrive(&k, &this.codes[root.0 as usize].passed);
            if retrace && Some(&k) == start_key.as_ref() {
                closes = true;
                return Arrival::Stop;
            }
            // A loop to be recorded again: the bridge leaves to the
            // interpreter at its head, where it is ([`Jit::mark_nest`]).
            if this.nest_waits(&k, env) {
                return Arrival::Stop;
            }
            // An entry trace into the bridge's own tree is the way back
            // into its loop (an outer loop's path round a nest, made into
            // an entry trace while the interpreter ran it): the bridge goes
            // on through its key to the loop rather than into it, whose
            // entry checks would run at every round of the outer loop. (A
            // join's trace is the way every exit there shares: jumped to.)
            let through = |code: TraceId| {
                let c = &this.codes[code.0 as usize];
                // (Not a segment, which has no loop of its own to go on
                // to: its bridges link back into it.)
                matches!(c.kind, Kind::Entry)
                    && c.into.is_some()
                    && this.loop_reached(code) == root
                    && !seen.contains_key(&k)
                    && !this.joins.is_join(base_graph, l)
            };
            if let Some(code) = this.linkable(&k, env).filter(|&c| !through(c)) {
                // Round the loop around its own tree's loop, back at that
                // loop's head, where a recording could do it at once: the
                // loop around is left to the interpreter, whose hot spots
                // there get it recorded as a loop that does so.
                if this.options.skip_inner
                    && may_leave_around
                    && this.loop_reached(code) == root
                    && this.codes[code.0 as usize].skip.as_ref().is_some_and(|s| s.holds(env))
                {
                    around = true;
                    return Arrival::Stop;
                }
                target = Some(code);
                into_greens = !k.greens.is_empty();
                target_key = Some(k);
                return Arrival::Stop;
            }
            // Back at the head of a loop around its start that has no code
            // (nor was given up): it ends there ([`BackJump`]). (Not a
            // bridge of the dispatch tier's tree, which goes back into the
            // tier at the tier's label, above.)
            if back && !short && !this.settled(&k) && tier_end.is_none() {
                ended_at_head = Some(k);
                return Arrival::Stop;
            }
            if seen.len() >= long {
                if let Some(&(_, tier)) = into_tier.as_ref().filter(|(t, _)| *t == l) {
                    if this.admits_env(tier, env) {
                        target = Some(tier);
                        cut = true;
                        return Arrival::Stop;
                    }
                }
            }
            if short {
                // Past a full cache, a bridge goes no further than the
                // tier or code it can enter.
                return Arrival::Stop;
            }
            if let Some(&first) = seen.get(&k) {
                // The bridge loops by itself: leave it to the interpreter,
                // which records that hot spot's loop at its next arrival
                // (below), a loop of the operations since.
                loops_at = Some((k, ops.saturating_sub(first)));
                return Arrival::Stop;
            }
            if too_long {
                return Arrival::Stop;
            }
            seen.insert(k, ops);
            Arrival::Continue
        };
        let started = Instant::now();
        // An exit at a hot spot whose code takes its state: an empty bridge.
        let immediate = start_key
            .as_ref()
            .and_then(|k| this.linkable(k, &start_env))
            .filter(|_| !retrace && start.promoted.is_empty());
        let recorded = match immediate {
            Some(code) => {
                target = Some(code);
                target_key = start_key.clone();
                let trace = crate::trace::Trace::empty(texit.label);
                Ok(Path::Stopped { trace, frame: frames[0].clone(), label: texit.label })
            }
            None => {
                let mut residual = residual_calls(this, run.resolved, run.config, root_key.as_ref());
                // What the exit's record holds as constants (the trace's
                // assumed lists, its promoted and pinned values) is
                // constant in the bridge too, and so is the value of a
                // failing `guard_value` the bridge is for (its innermost
                // frame's).
                let mut start_constants: Vec<Vec<Symbol>> = record
                    .frames
                    .iter()
                    .map(|f| {
                        f.env
                            .iter()
                            .filter(|(_, v)| matches!(v, ResumeValue::Operand(Operand::Const(_))))
                            .map(|(n, _)| *n)
                            .collect()
                    })
                    .collect();
                if let Some(innermost) = start_constants.last_mut() {
                    innermost.extend(start.promoted.iter().map(|(n, _)| *n));
                }
                let limits = crate::record::Limits { start_constants: &start_constants, ..this.limits() };
                record_path(this.shared.index(), &frames, texit.label, &mut run.heap, limits, &mut at, &mut residual)
            }
        };
        self.stats.record_time += started.elapsed();
        self.leave_followed_to_constants(machine, run.resolved);
        self.stats.bridges_into_tier += u64::from(cut && !short);
        let (mut trace, frame, end_label) = match recorded {
            Ok(Path::Stopped { trace, frame, label }) => (trace, frame, label),
            Ok(Path::Returns { trace, frame, label }) if trace.ops.is_empty() && label == texit.label => {
                // Nothing to record (the exit's block returns): the exit
                // stays one.
                self.exit_state(exit).refused = Some(NoBridge::Nothing);
                let block = machine.replace_top(stack, &[frame], label)?;
                return Ok(Next::Interpret(block));
            }
            Ok(Path::Returns { trace, frame, label }) => (trace, frame, label),
            Ok(Path::Printed(v)) => {
                self.exit_state(exit).refused = Some(NoBridge::Nothing);
                return Ok(Next::Printed(v));
            }
            Err(TraceError::Runtime(e)) => return Err(e),
            Err(e @ (TraceError::TooLong { .. } | TraceError::Unrolls { .. })) => {
                self.stats.aborted += 1;
                self.log(format_args!("abort bridge: {e}"));
                let e_unrolled = matches!(e, TraceError::Unrolls { .. });
                let (state, biggest) = e.suspended();
                // Calling the function instead, the next try may get
                // somewhere; else the exit stays one: everywhere where the
                // recording ran too long, where a call's loop ran past the
                // limit only in the code of the tree's hot spot
                // ([`Jit::stop_following_at`]). Not for a bridge of
                // the dispatch tier's tree, which runs every position
                // without code of its own, and so every call: a BF
                // interpreter's `move` by 265 cells, once a round, where
                // its other moves are a few cells, made every trace call
                // `move` (the run-length interpreter's `digits 200`: 0.3
                // -> 2 s, in the runs where that came before its loops).
                // Nor for a bridge of code no hot spot holds any more
                // (dropped to be recorded again, as `stop_following_at`
                // does): the run-length interpreter's `escape 20` had a
                // bridge of such code meet a `move` by 64 cells and every
                // trace call `move` after it, 1.85 s against 0.2, in the
                // runs where the worker's timing made that bridge.
                let root_key = root_key.or_else(|| self.key_of(root));
                let calls = match (&e_unrolled, biggest, root_key) {
                    // (Nor for a bridge past a full cache, which goes no
                    // further than the tier.)
                    _ if tier_end.is_some() || short => false,
                    (true, Some(f), Some(k)) => self.stop_following_at(machine, f, k, run.resolved),
                    (true, ..) => false,
                    _ => self.stop_following(machine, biggest),
                };
                if !calls {
                    self.exit_state(exit).refused = Some(NoBridge::RecordingFailed);
                }
                let block = machine.replace_top(stack, &state.frames, state.label)?;
                return Ok(Next::Interpret(block));
            }
        };
        self.forget_irregular(&mut trace);
        let block = machine.replace_top(stack, std::slice::from_ref(&frame), end_label)?;
        if short && (target.is_none() || around) {
            // It reached neither the tier nor code: no bridge, as for a
            // full cache. (It never closes a loop: a retrace is never
            // short.)
            self.exit_state(exit).refused = Some(NoBridge::CacheFull);
            return Ok(Next::Interpret(block));
        }
        if let Some(h) = &ended_at_head {
            // The head is recorded at the next arrival there (as the loop
            // a bridge went round is, below) unless its arrivals so far
            // say a loop of the bridge's operations would not pay back:
            // counted to its threshold (in the dispatch tier, sixteen
            // times it), it lost to the exit at the bridge's end, whose
            // bridge (at the bridge threshold, which comes first) went
            // through the head into the next inner loop's code again. That
            // exit gets no bridge of its own for now (above).
            self.stats.bridges_to_heads += 1;
            self.heads_ended_at.insert(h.clone());
            let round = trace.ops.len() as u64;
            let promising = self.density(machine, h).is_none_or(|d| d.promises(round));
            if let Some(p) = machine.profiler_mut().filter(|p| promising && p.state(h) == KeyState::Counting) {
                p.ask_after(h, 1);
            }
            if self.log.is_some() {
                let head = describe(h, run.resolved);
                self.log(format_args!(
                    "exit {index} of {parent_name} goes round the loop at {head}: its bridge ends there"
                ));
            }
        }
        if let Some((k, round)) = loops_at.clone() {
            // Inner loops first: the loop the bridge went round is recorded
            // where the interpreter goes on, at once. Counted to its
            // threshold instead, it lost to the bridge's exit there, whose
            // failures (the bridge threshold) came first: that exit's
            // bridge went round the loop once more and left at the same
            // place, and so on, a chain of bridges one round each until
            // the tree was full (the tutorial BF `digits 200`, its loop
            // at position 2729 inside the one at 2705).
            // Not a hot spot the interpreter arrived at so sparsely that a
            // loop of that round could not pay back, as its count so far
            // says. One it never arrived at (reached only through compiled
            // code) is asked too: the bridge found a loop there that went
            // round. That is a bet: `bottles 99` asks 77 loops so, and
            // compiles half again as long; asking only hot spots with a
            // count, the fractal rows' gains shrank from 6-8% to 1-5%.
            let promising = self.density(machine, &k).is_none_or(|d| d.promises(round as u64));
            if let Some(p) = machine.profiler_mut().filter(|p| promising && p.state(&k) == KeyState::Counting) {
                p.ask_after(&k, 1);
                if self.log.is_some() {
                    let what = describe(&k, run.resolved);
                    self.log(format_args!("{what}: a bridge went round its loop ({round} operations), recorded next"));
                }
            }
        }
        if around {
            // No bridge for now: the exit counts its failures again while
            // the interpreter runs the loop around and counts its hot spots.
            self.stats.left_around += 1;
            let state = self.exit_state(exit);
            state.left_around += 1;
            state.to_driver = 0;
            self.log(format_args!(
                "exit {index} of {parent_name} goes round a loop around its own, which it does at once: left to the interpreter"
            ));
            return Ok(Next::Interpret(block));
        }
        // A link the loop assumed laid out in a row that is not (in this
        // run, any longer): no recording assumes it again, and a bridge
        // back into the loop means the loop would leave there round after
        // round — it is recorded again, from here.
        if !short && self.irregular_link(parent, &texit).is_some_and(|p| self.irregular.contains(&p)) {
            let again = |k: &Key| !closes && target == Some(root) && self.may_record_again(k, root, Again::Relaid);
            if let Some(key) = target_key.clone().filter(again) {
                self.log(format_args!(
                    "exit {index} of {parent_name} finds a link laid out otherwise: {} recorded again",
                    describe(&key, run.resolved)
                ));
                return self.record_again(machine, run, &key, root, Again::Relaid, stack, block);
            }
        }
        // A shorter way round: the bridge passed no hot spot (its start
        // aside) — an empty one, at the loop's own label, is the shortest
        // (a plain nest's inner back edge goes straight to its header).
        // An exit of a loop's entry checks (`restart`) is none: its state
        // does not fit the loop.
        let shortcut = !restart && !short && seen.keys().all(|k| Some(k) == start_key.as_ref());
        if let Some(key) = target_key.filter(|k| {
            !closes
                && shortcut
                && target == Some(root)
                && (self.left_its_loop(k, root) || self.entry_came_back(k, root))
        }) {
            // The tree's own loop, entered mostly to leave at once by this
            // exit: the loop inside it is recorded from here. Or the tree
            // is the entry trace of a loop's head, recorded in the loop's
            // last round (it left the loop and went on into other code),
            // and this exit is the loop's back edge: every round of the
            // loop would cross it into the entry trace again, from the
            // top. The loop is recorded from here, in a round that goes
            // on, and replaces the entry trace. A retry
            // waits one more failure per try (LuaJIT puts random bits in
            // its penalties for the same reason): in a nest whose counts
            // keep their phase, the exit's failures at the bridge
            // threshold were in the inner loop's last round at every try.
            let tries = self.keys.get(&key).map_or(0, |kc| kc.recorded_inside);
            let failures = self.exits[exit.0 as usize].as_ref().map_or(0, |e| e.to_driver);
            if failures < u64::from(self.options.bridge_threshold + tries) {
                return Ok(Next::Interpret(block));
            }
            let how = if matches!(self.codes[root.0 as usize].kind, Kind::Entry) {
                "comes back to the head of its entry trace, the loop at"
            } else {
                "goes round an inner loop at"
            };
            self.log(format_args!(
                "exit {index} of {parent_name} {how} {}: recorded again from inside",
                describe(&key, run.resolved)
            ));
            return self.record_again(machine, run, &key, root, Again::Inside, stack, block);
        }
        let name = self.fresh_name(texit.label);
        let what = format!("exit {index} (to {}) of {parent_name}", texit.label);
        let done = BridgeDone {
            exit,
            root,
            values: values_depth,
            graph: base_graph,
            label: texit.label,
            closes,
            passed: Passed::of(seen.keys()),
            jumps_to: target.filter(|_| !closes),
            short,
        };
        if closes {
            let names: Vec<Symbol> = start.frames[0].env.iter().map(|(n, _)| *n).collect();
            let function = start.frames[0].function;
            let graph = &run.resolved.graphs[base_graph as usize];
            let live = match graph.labels.get(&texit.label) {
                Some(&b) => Self::liveness(run, base_graph).live_at(b),
                None => Vec::new(),
            };
            let graph = &run.resolved.graphs[base_graph as usize];
            let live: Vec<Symbol> = live.iter().map(|&s| graph.slot_names[s as usize]).collect();
            let retraced = start.params.clone();
            let job = self.loop_job(run, name, trace, &start, &names, &live, None, function);
            let compiled = self.compile_loop(job, &what);
            let Some(code) = self.bridge_compiled(&done, compiled) else {
                return Ok(Next::Interpret(block));
            };
            if let Some(k) = &start_key {
                // The loop that assumes nothing goes first: the interpreter
                // and bridges enter it without failing the other's checks
                // — if it takes the variables a loop trace of the key takes.
                let kc = self.keys.entry(k.clone()).or_default();
                kc.generic = true;
                let model = kc.variants.iter().map(|v| &self.codes[v.0 as usize]).find(|c| c.params == retraced);
                if let Some((params, unbound)) = model.map(|c| (c.params.clone(), c.unbound.clone())) {
                    let c = &mut self.codes[code.0 as usize];
                    (c.params, c.unbound) = (params, unbound);
                    kc.variants.insert(0, code);
                    self.unlink_position(machine, k);
                }
            }
        } else {
            let (end, jumps) = match target {
                Some(t) => {
                    let c = &self.codes[t.0 as usize];
                    (End::Jump { target: c.function.name, params: c.params.clone() }, Some(c.function.name))
                }
                None => (End::Exit(end_label), None),
            };
            if plain && !short && start_key.is_none() {
                self.joins.recorded(base_graph, texit.label, &trace, into_greens);
            }
            let recorded = trace.ops.len();
            let leaves = match end {
                End::Exit(label) => Some(label),
                _ => None,
            };
            let trace = self.with_resume_live(run, trace, &start, leaves);
            let source = Source { name, trace, start, end, pins: None };
            let mut job = self.straight_job(source, recorded, jumps, restart);
            // What its exit's optimizer knew of the parameters
            // ([`opt::known`]), and those its exit's code knew to be
            // objects.
            let notes = self.codes[parent.0 as usize].exit_facts.of_record(texit.resume);
            job.facts = texit
                .values
                .iter()
                .enumerate()
                .map(|(k, &v)| {
                    let known = notes.and_then(|n| opt::known::facts_of(&record, n, v));
                    let info = known.unwrap_or_else(flowc_passes::lattice::Info::value);
                    if texit.object_param(k) {
                        info.restrict_kinds(flowc_passes::lattice::Kinds::OBJECT)
                    } else {
                        info
                    }
                })
                .collect();
            // (Not where it stopped, going round a loop by itself: that
            // loop is recorded at the interpreter's next arrival there.)
            let stopped = loops_at.as_ref().map(|(k, _)| k.clone());
            let passed: Vec<Key> = seen.into_keys().filter(|k| Some(k) != stopped.as_ref()).collect();
            let job = Job::Straight(Box::new(job));
            // Optimized in the background, the exit returns to the driver
            // until the bridge is there. A bridge of the dispatch tier's
            // tree is compiled here: a few, short, and every position
            // without code runs through them (behind the hot spots of a
            // program of thousands of loops, the worker had them wait).
            // So is a bridge made past a full cache, whose result the
            // worker would hand back to a cache that takes none.
            let submitted = match self.tier_end(root, base_graph) {
                Some(_) => Err(job),
                None if short => Err(job),
                None => self.submit(machine, run, job, what.clone(), passed, || Then::Bridge(done.clone())),
            };
            if let Err(job) = submitted {
                let compiled = self.optimize_here(job).and_then(|o| self.finish(o, &what, Some(exit), false));
                if self.bridge_compiled(&done, compiled).is_none() {
                    return Ok(Next::Interpret(block));
                }
            }
        }
        // The recording ran the program to `end_label`: on into the code it
        // reached, else the interpreter.
        match target {
            Some(t) if !closes && self.admits_frame(run, t, stack.last().expect("a frame")) => Ok(Next::Enter(t)),
            _ => Ok(Next::Interpret(block)),
        }
    }
}

/// What code recorded at a hot spot becomes once compiled: one of hot
/// spot `key`'s, a loop or an entry trace (`kind`), recorded at `label`
/// of graph `g`, taking the variables `params` (those `unbound` must be
/// unbound), entered only with the values `pins` of its parameters.
#[derive(Clone)]
pub(super) struct KeyDone {
    pub key: Key,
    pub kind: Kind,
    pub g: u32,
    pub label: Symbol,
    pub params: Vec<Symbol>,
    pub unbound: Vec<Symbol>,
    pub pins: Vec<(usize, Value)>,
    /// For an entry trace, the code it jumps into.
    pub into: Option<TraceId>,
    /// Whether the recording passed other hot spots (not an inner loop cut
    /// from another recording).
    pub passed_keys: bool,
    /// For a loop trace, the hot spots without code its recording passed.
    pub passed: Passed,
    /// Whether the code an entry trace jumps into is the inner loop cut
    /// from its recording.
    pub into_inner: bool,
    /// Whether its recording did an inner loop at once ([`crate::skip`]):
    /// a loop's first code of this kind has the bridges that went through
    /// its head give way ([`Jit::give_way`]), which run the inner loops
    /// round by round.
    pub at_once: bool,
}

impl KeyDone {
    /// With the pins the job made as it converted the recording
    /// ([`super::optimizing::Pins`]), if it made any.
    pub fn pinned(mut self, result: Option<&mut Optimized>) -> KeyDone {
        if let Some(pins) = result.and_then(|o| o.pins.take()) {
            self.pins = pins;
        }
        self
    }
}

/// Whether recording `trace` did an inner loop at once ([`crate::skip`]:
/// the loop's rounds but the last as one step, which counts them).
fn does_at_once(trace: &crate::trace::Trace) -> bool {
    trace.ops.iter().any(|op| matches!(op, crate::trace::TraceOp::Iterations(_)))
}

/// What a bridge's code becomes once compiled: the bridge of `exit` (of
/// a tree rooted at `root`, the `values`-th of a `guard_value` chain),
/// starting at `label` of graph `graph`; a loop if it `closes` (a
/// retrace).
#[derive(Clone)]
pub(super) struct BridgeDone {
    pub exit: ExitId,
    pub root: TraceId,
    pub values: u32,
    pub graph: u32,
    pub label: Symbol,
    pub closes: bool,
    /// The hot spots without code its recording passed.
    pub passed: Passed,
    /// The code it jumps to at its end.
    pub jumps_to: Option<TraceId>,
    /// Whether it is a bridge into the tier made past a full cache
    /// ([`Options::short_bridges`]).
    pub short: bool,
}

impl Jit<'_> {
    /// Makes `compiled` (code starting at `what`; `None`: it did not
    /// compile, an abort at its hot spot) one of its hot spot's.
    pub(super) fn key_compiled(
        &mut self,
        machine: &mut Machine,
        done: KeyDone,
        compiled: Option<(TraceId, Duration)>,
        what: &str,
    ) -> Option<TraceId> {
        let KeyDone { key, kind, g, label, params, unbound, pins, into, passed_keys, passed, into_inner, at_once } =
            done;
        let Some((code, time)) = compiled else {
            self.abort(machine, &key, what, "the code generator refused the trace");
            return None;
        };
        // The key's first loop, not one recorded again to replace another
        // (which gives way as it registers).
        let first_loop = matches!(kind, Kind::Loop)
            && self.keys.get(&key).is_none_or(|kc| {
                kc.replaced.is_none()
                    && !kc.variants.iter().any(|v| matches!(self.codes[v.0 as usize].kind, Kind::Loop))
            });
        self.register(machine, &key, code, kind, g, label, params, unbound, time);
        if first_loop && at_once {
            self.give_way(machine, &key, None);
        }
        let c = &mut self.codes[code.0 as usize];
        c.pins = pins;
        c.into = into;
        c.passed_keys = passed_keys;
        c.into_inner = into_inner;
        if matches!(c.kind, Kind::Loop) && !passed.prints().is_empty() {
            for &p in passed.prints() {
                self.passed_by.entry(p).or_default().push(code);
            }
            self.loop_keys.insert(code, key.clone());
        }
        let c = &mut self.codes[code.0 as usize];
        c.passed = passed;
        if self.options.skip_inner && matches!(c.kind, Kind::Loop) {
            if c.skip.is_some() {
                self.skip_loops.insert(Passed::print(&key), key.clone());
                self.nest_done_at_once(machine, &key);
            }
            self.passed_done_at_once(machine, &key, code);
        }
        Some(code)
    }

    /// Loop `code` of hot spot `key`, just made, went through a hot spot
    /// whose loop has code now that runs to its end at once (made while
    /// this one was optimized on the worker): it is to be recorded again
    /// doing that loop at once, as [`Jit::nest_done_at_once`] has others.
    /// (By the fingerprints of `skip_loops`, each hot spot found there
    /// checked to hold such a loop still.) Not where the key's tries are
    /// spent.
    fn passed_done_at_once(&mut self, machine: &mut Machine, key: &Key, code: TraceId) {
        if !self.may_record_again(key, code, Again::Nest) {
            return;
        }
        let own = Passed::print(key);
        let runs_at_once = |c: &TraceId| {
            let c = &self.codes[c.0 as usize];
            matches!(c.kind, Kind::Loop) && c.skip.is_some()
        };
        let holds = |k: &Key| self.keys.get(k).is_some_and(|kc| kc.variants.iter().any(runs_at_once));
        let passed = self.codes[code.0 as usize].passed.prints();
        if passed.iter().any(|p| *p != own && self.skip_loops.get(p).is_some_and(holds)) {
            self.mark_nest(machine, key, code);
        }
    }

    /// Loop `key`'s code, just made, runs to its end at once where it is
    /// entered ([`crate::skip`]): each loop trace whose recording went
    /// through a round of it (passed `key` without code, and so recorded
    /// the round that ran then, not the loop) is recorded again the next
    /// time the interpreter arrives at its hot spot, doing `key`'s loop at
    /// once ([`Jit::nest_again`]); until then it runs. The dispatch tier's
    /// link to it is undone, so that the tier leaves to the driver there.
    ///
    /// Which loops of a nest get code first depends on which hot spot
    /// counts its threshold first: an outer loop whose recording met its
    /// inner loops in a round that ran them once each, before they got
    /// code, unrolled them once; every longer run of them then left the
    /// outer loop by that guard and went round them in bridges and their
    /// own loops, round by round (the tutorial BF interpreter's `digits
    /// 200`: 186 ms at threshold 60 against 80 at 50, where the inner
    /// loops came first; with the worker, some of the runs).
    fn nest_done_at_once(&mut self, machine: &mut Machine, key: &Key) {
        let mut around: Vec<(Key, TraceId)> = Vec::new();
        let print = Passed::print(key);
        // The hot spots of the loops whose recordings passed it.
        let mut keys: Vec<&Key> = self
            .passed_by
            .get(&print)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(|t| self.loop_keys.get(t))
            .collect();
        keys.sort_unstable_by_key(|k| Passed::print(k));
        keys.dedup();
        for k in keys {
            let Some(kc) = self.keys.get(k) else { continue };
            if k == key || kc.renested >= NEST_TRIES || kc.renest.is_some_and(|t| kc.variants.contains(&t)) {
                continue;
            }
            // (Its loop being recorded again for another reason is one:
            // if no loop comes of that, it is back, and goes round this.)
            let outer = kc.variants.iter().copied().chain(kc.replaced).find(|&t| {
                let c = &self.codes[t.0 as usize];
                matches!(c.kind, Kind::Loop) && c.passed.has(print)
            });
            if let Some(t) = outer {
                around.push((k.clone(), t));
            }
        }
        // (The order of a hash map's keys: sorted, so that logs and
        // decisions stay the same from run to run.)
        around.sort_by_key(|(_, t)| *t);
        for (k, t) in around {
            // (Being recorded again already, it is recorded again for this
            // if no loop comes of that: [`Jit::record_again`].)
            self.mark_nest(machine, &k, t);
        }
    }

    /// Marks loop `t`, hot spot `key`'s, to be recorded again round an
    /// inner loop done at once ([`Jit::nest_again`]), which happens where
    /// the interpreter arrives at `key`. So that it does, the dispatch
    /// tier's link to the loop is undone (the tier leaves to the driver
    /// there), and so are the bridges that jump into it: recorded again,
    /// they end at `key`, leaving to the interpreter ([`Jit::nest_waits`]).
    /// (Entered only from code — an outer loop made of bridges that jump
    /// into it — it was never recorded again: the tutorial BF `digits
    /// 200` at threshold 70, 180 ms against 80.)
    fn mark_nest(&mut self, machine: &mut Machine, key: &Key, t: TraceId) {
        if self.log.is_some() {
            let name = self.codes[t.0 as usize].function.name;
            self.log(format_args!("{name} went through a round of a loop now done at once: recorded again"));
        }
        if let Some(kc) = self.keys.get_mut(key) {
            kc.renest = Some(t);
        }
        self.unlink_position(machine, key);
        // (Not a loop being recorded again for another reason, whose old
        // loop is not the key's code for now: if no loop comes of that,
        // it is back, and its bridges give way then: `record_again`.)
        if self.keys.get(key).is_some_and(|kc| kc.variants.contains(&t)) {
            self.unlink_bridges_into(t);
        }
    }

    /// The bridges that jump into loop `t`, marked to be recorded again,
    /// give way ([`Jit::mark_nest`]).
    fn unlink_bridges_into(&mut self, t: TraceId) {
        let bridges = self.linked_bridges(|c| c.jumps_to == Some(t));
        self.unlink_bridges(bridges, GiveWay::Nest);
    }

    /// Whether hot spot `key`'s loop is marked to be recorded again round
    /// an inner loop done at once, tries are left and environment `env`
    /// fits it ([`Jit::mark_nest`]): a bridge arriving at `key` so ends
    /// there rather than jump into that loop, and leaves to the
    /// interpreter, whose arrival records it again. (A state that fits
    /// another of the key's variants, or none, goes on as before.)
    pub(super) fn nest_waits(&self, key: &Key, env: &Env) -> bool {
        self.keys
            .get(key)
            .and_then(|kc| kc.renest)
            .is_some_and(|t| self.may_record_again(key, t, Again::Nest) && self.admits_env(t, env))
    }

    /// The loop the interpreter is about to enter at hot spot `key` with
    /// top frame `top`, if it is to be recorded again round an inner loop
    /// done at once ([`Jit::nest_done_at_once`]) and may be now: tries are
    /// left, the frame is one the loop takes (the loop recorded again is
    /// for the same variables), no job for the key is on the worker, and
    /// the cache and the compile budget allow a compile, as for any hot
    /// spot.
    pub(super) fn nest_again(&mut self, machine: &Machine, run: &mut Run, key: &Key, top: &Frame) -> Option<TraceId> {
        let t = self.keys.get(key)?.renest.filter(|&t| self.may_record_again(key, t, Again::Nest))?;
        let busy = run.worker.as_ref().is_some_and(|w| w.has_key(key));
        let fits = self.admits_frame(run, t, top);
        (fits && !busy && !self.cache_full(run, machine.steps()) && self.affordable(machine, run)).then_some(t)
    }

    /// The interpreter arrived at hot spot `key`, whose loop `root` is to
    /// be recorded again ([`Jit::nest_again`]): it is, from here. A
    /// recording that gives no loop (an arrival in the loop's last round
    /// goes out of it) compiles nothing and leaves `root` the key's code,
    /// to be tried at a later arrival.
    pub(super) fn record_nest(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        key: &Key,
        root: TraceId,
        stack: &mut Vec<Frame>,
        block: u32,
    ) -> Result<Next, RuntimeError> {
        if let Some(kc) = self.keys.get_mut(key) {
            kc.renest = None;
            kc.nesting = true;
        }
        self.resumed = Resumed::Recorded;
        let next = self.record_again(machine, run, key, root, Again::Nest, stack, block);
        if let Some(kc) = self.keys.get_mut(key) {
            kc.nesting = false;
        }
        next
    }

    /// Links bridge `compiled` (`None`: it did not compile, and the exit
    /// gets no other) to its exit and makes it one of its tree's.
    pub(super) fn bridge_compiled(
        &mut self,
        done: &BridgeDone,
        compiled: Option<(TraceId, Duration)>,
    ) -> Option<TraceId> {
        let Some((code, time)) = compiled else {
            self.stats.aborted += 1;
            self.exit_state(done.exit).refused = Some(NoBridge::CodeGen);
            return None;
        };
        self.cache.as_ref().expect("code exists").link(done.exit, code).expect("a bridge takes its exit's values");
        let c = &mut self.codes[code.0 as usize];
        c.kind = if done.closes { Kind::Loop } else { Kind::Bridge };
        c.anchor = done.label;
        c.graph = done.graph;
        c.compile_time = time;
        c.root = done.root;
        c.values = done.values;
        if !done.closes {
            c.linked_from = Some(done.exit);
            c.passed = done.passed.clone();
            c.jumps_to = done.jumps_to;
        }
        let empty = self.codes[code.0 as usize].recorded_ops == 0;
        if empty {
            // A jump into code that exists (to a join, a hot spot's loop):
            // nothing the budget prices ([`Jit::affordable`]), not one of
            // the tree's `max_bridges`.
            self.empty_bridges += 1;
        }
        if done.short {
            self.short_bridges += 1;
            self.stats.short_bridges += 1;
        }
        let root = &mut self.codes[done.root.0 as usize];
        root.bridges += usize::from(!empty);
        root.judged_from = (root.entries, root.iterations, root.straight);
        self.adopt_body(code);
        self.exit_state(done.exit).linked(code);
        if done.closes {
            self.stats.traces += 1;
            self.stats.retraces += 1;
        } else {
            self.stats.bridges += 1;
        }
        Some(code)
    }
}

/// The most operations a bridge made past a full cache records before
/// it must have reached the dispatch tier's label or code it can enter
/// (see "Short bridges past a full cache"): a loop's exit of a BF
/// interpreter reaches the next position in a few.
const SHORT_BRIDGE_OPS: usize = 64;

/// The most times a hot spot's loop is recorded again round an inner loop
/// done at once ([`Jit::nest_done_at_once`]). More than
/// [`RECORD_INSIDE`]: a try costs a recording and no compile where no
/// loop comes of it, and the interpreter arrives at the loop's head where
/// code left to it, often in the loop's last round (`digits 200` at
/// threshold 60 spent three tries so).
const NEST_TRIES: u32 = 8;

/// The most turns from a hot spot to a loop's head and on outwards
/// (each a loop around the last, whose last round a recording left): a
/// promoted counter rather than a position would turn at every round.
const MOST_TURNS: u32 = 8;

/// What a loop recording anchored again at its head is judged by: the hot
/// spot that got hot and its density then, and the turns left.
pub(super) struct Anchor {
    judge: Key,
    density: Option<Density>,
    turns: u32,
}

impl Anchor {
    /// For hot spot `key`, which the driver found hot.
    pub(super) fn hot(key: &Key) -> Anchor {
        Anchor { judge: key.clone(), density: None, turns: MOST_TURNS }
    }
}

/// Where a loop recorded from a key inside it goes round. An interpreter
/// whose last green is an integer position (`promote pc`) jumps back to a
/// loop's head at the end of each round; a recording that starts at a
/// position inside the loop (every position of a loop's body is arrived
/// at once a round, so any may be the first to get hot) sees that jump
/// cross its start: arriving at a key of its own label whose position is
/// below the start's from one at or past it. Such a recording stops there
/// and the loop is recorded again from that key, its head
/// ([`Jit::record_loop`] with an [`Anchor`]; where the head is settled,
/// [`Jit::settled`], the recording goes on and closes at its start, and
/// where its loop is on its way, [`Jit::on_its_way`], nothing is
/// recorded), at most [`MOST_TURNS`] times: anchored where the program's own loop begins,
/// as PyPy's `can_enter_jit` at back edges anchors it, rather than at
/// whichever position of its body was counted to the threshold first (a
/// loop anchored mid-body is entered through an entry trace that runs the
/// rest of a round, and a nest's bridges stop at its anchor, not its
/// head). A return lands past its call and crosses nothing; a call into
/// code placed before the start does, and anchors the loop at the
/// callee's entry, a position on the loop's way as the start was. Keys
/// whose greens are not an integer last are never compared.
struct Head<'k> {
    start: &'k Key,
    /// The positions of the start's label arrived at.
    turns: Turns,
}

impl<'k> Head<'k> {
    /// A head for a recording from `start`: none found unless `enabled`.
    fn new(start: &'k Key, enabled: bool) -> Head<'k> {
        Head { start, turns: Turns::from(position(start).filter(|_| enabled)) }
    }

    /// Notes an arrival at `k`; whether it is the jump back across the
    /// start (the first one only).
    fn arrive(&mut self, k: &Key) -> bool {
        if !comparable(self.start, k) {
            return false;
        }
        position(k).is_some_and(|x| self.turns.arrive(x))
    }
}

/// The positions of one label a recording arrives at in turn, from a
/// start: whether one is the jump back across the start ([`Head`],
/// [`BackJump`]).
#[derive(Default)]
struct Turns {
    /// The start's position (`None`: nothing is looked for).
    start: Option<i64>,
    /// The position of the last arrival.
    last: Option<i64>,
    /// Whether a jump back across the start was seen.
    crossed: bool,
}

impl Turns {
    fn from(start: Option<i64>) -> Turns {
        Turns { start, last: start, crossed: false }
    }

    /// Notes an arrival at position `x`; whether it is the jump back
    /// across the start: below it, from at or past it (the first one
    /// only).
    fn arrive(&mut self, x: i64) -> bool {
        let crossing = match (self.start, self.last) {
            (Some(start), Some(last)) => !self.crossed && x < start && start <= last,
            _ => false,
        };
        self.crossed |= crossing;
        self.last = Some(x);
        crossing
    }
}

/// Where a bridge goes round the loop around its start: [`Head`] for a
/// recording that starts at an exit, not a key, so its start is the first
/// key it arrives at. A bridge from the exit of a loop inside another
/// (BF `[-<+>]` inside the loop at 2705 of `digits`) runs the rest of the
/// outer loop's round and jumps back to its head; where that head has no
/// code, the bridge ends there ([`Jit::record_bridge`]), so that the
/// interpreter counts it and records the loop around from its head. Gone
/// on, the bridge would run through the head into the next inner loop's
/// code, every round of the loop around made of inner loops and bridges,
/// its head never arrived at, never recorded. Only for an exit that left
/// its loop: one whose first key is not one its loop passed (a guard
/// inside a round, a `guard_at` of a scan whose links turn, goes on
/// round its own loop as before).
#[derive(Default)]
struct BackJump {
    /// The first key arrived at with a position.
    start: Option<Key>,
    /// The positions of its label since (none looked for where the bridge
    /// started inside its loop).
    turns: Turns,
}

impl BackJump {
    /// Notes an arrival at `k`; whether it is the jump back across the
    /// start (the first one only). `passed`: the keys the bridge's loop
    /// passed.
    fn arrive(&mut self, k: &Key, passed: &Passed) -> bool {
        let Some(x) = position(k) else { return false };
        match &self.start {
            None => {
                let inside = passed.has(Passed::print(k));
                self.start = Some(k.clone());
                self.turns = Turns::from(Some(x).filter(|_| !inside));
                false
            }
            Some(s) => comparable(s, k) && self.turns.arrive(x),
        }
    }
}

/// Whether the positions of keys `s` and `k` compare: one label of one
/// graph, the same greens but the last.
fn comparable(s: &Key, k: &Key) -> bool {
    k.graph == s.graph
        && k.block == s.block
        && k.greens.len() == s.greens.len()
        && k.greens[..k.greens.len().saturating_sub(1)] == s.greens[..s.greens.len().saturating_sub(1)]
}

/// A key's last green, if an integer.
fn position(k: &Key) -> Option<i64> {
    match k.greens.last() {
        Some(flowc_lang::interp::hot::Green(Some(Value::Int(i)))) => Some(*i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flowc_lang::interp::hot::Green;

    fn at(pc: i64) -> Key {
        Key { graph: 0, block: 3, greens: vec![Green(Some(Value::Int(pc)))].into() }
    }

    /// The arrivals' positions in turn; the index of the crossing, if any.
    fn crossing(start: i64, arrivals: &[i64]) -> Option<usize> {
        let start = at(start);
        let mut head = Head::new(&start, true);
        arrivals.iter().position(|&pc| head.arrive(&at(pc)))
    }

    /// A BF copy loop `[->+<]` at positions 10-15, recorded from its `+`
    /// (13): the jump back from `]` lands at 11, its head. From its head
    /// (11) the recording comes back to its start and closes there: no
    /// crossing. A call from 13 to 40 returning to 14 does not cross it;
    /// nor does a forward jump past the loop's end.
    #[test]
    fn a_jump_back_across_the_start_finds_the_head() {
        assert_eq!(crossing(13, &[14, 15, 11, 12, 13]), Some(2));
        assert_eq!(crossing(11, &[12, 13, 14, 15, 11]), None);
        assert_eq!(crossing(13, &[40, 41, 14, 15]), None);
        assert_eq!(crossing(13, &[14, 15, 16, 17, 30]), None);
        // The loop's last round, then the loop around it (head 5) goes
        // round: that head, not the inner loop's.
        assert_eq!(crossing(13, &[14, 15, 16, 20, 5, 6, 10, 11]), Some(4));
        // One crossing only: later jumps back are the loop's own.
        assert_eq!(crossing(13, &[14, 15, 11, 12, 13, 14, 15, 11]), Some(2));
    }

    /// A bridge's arrivals in turn, its loop having passed `passed`; the
    /// index of the jump back across its start, if any ([`BackJump`]).
    fn back_jump(passed: &[i64], arrivals: &[i64]) -> Option<usize> {
        let passed = Passed::of(&passed.iter().map(|&pc| at(pc)).collect::<Vec<_>>());
        let mut b = BackJump::default();
        arrivals.iter().position(|&pc| b.arrive(&at(pc), &passed))
    }

    /// A `[-]` at 20-22 (its loop passes 21 and 22) inside a loop whose
    /// head is 5 and whose `]` is 30: the bridge from the `[-]`'s exit
    /// starts at 23, runs to 30, jumps back to 5 — the crossing — and goes
    /// on. From an exit inside the `[-]`'s round (its first key 22, one the
    /// loop passed) nothing is looked for, and a bridge that only goes
    /// forward crosses nothing.
    #[test]
    fn a_bridge_from_a_loops_exit_finds_the_loop_around() {
        let inner = [21, 22];
        assert_eq!(back_jump(&inner, &[23, 24, 30, 5, 6, 20]), Some(3));
        assert_eq!(back_jump(&inner, &[22, 20, 21, 22, 23, 30, 5]), None);
        assert_eq!(back_jump(&inner, &[23, 24, 25, 40]), None);
        // One crossing only.
        assert_eq!(back_jump(&inner, &[23, 30, 5, 6, 20, 23, 30, 5]), Some(2));
    }

    /// Keys of another label, or whose position is not an integer, are
    /// never compared.
    #[test]
    fn only_integer_positions_of_the_start_label_are_compared() {
        let start = at(13);
        let mut head = Head::new(&start, true);
        let other = Key { block: 4, ..at(11) };
        assert!(!head.arrive(&at(15)));
        assert!(!head.arrive(&other));
        let atom = Key { greens: vec![Green(Some(Value::Atom(Symbol::intern("op"))))].into(), ..at(0) };
        assert!(!head.arrive(&atom));
        assert!(head.arrive(&at(11)));
        let start = Key { greens: vec![Green(None)].into(), ..at(0) };
        let mut head = Head::new(&start, true);
        assert!(!head.arrive(&at(20)) && !head.arrive(&at(1)));
    }
}

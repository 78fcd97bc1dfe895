//! Joins: one trace for a tail that bridges keep recording again.
//!
//! A loop whose body has several independent branches (`if` after `if`,
//! each taken by the data) has a path per combination of them. A bridge
//! records from its exit to the loop's header, so it holds every branch
//! after its guard, and its own guards get bridges of their own: a bridge
//! per path, 2^k of them for k branches, the same tails recorded over and
//! over from different parents (a loop of eight such branches: 33 bridges
//! after 6 ms, a tail from one label recorded six times, and the loop given
//! up as not paying while most rounds still left for the interpreter).
//! PyPy and LuaJIT grow their trees the same way.
//!
//! A *join* cuts that: once [`JOIN_AFTER`] bridges were recorded from one
//! label (of one graph, without a promote chain, the exit in one frame)
//! that specialized on nothing — no value promoted, no jump into code kept
//! per value, nothing of the parent's state kept virtual — and held a
//! guard, the label becomes a hot spot of its own
//! ([`Profiler::watch_later`]), and the next exit there records a trace
//! keyed at it ([`Jit::record_loop`]: an entry trace into the loop it
//! reaches, or a loop of its own). An exit there from then on whose state
//! that code takes (one frame, nothing promoted or virtual, not a loop's
//! check) gets an empty bridge that jumps to it (`record_bridge`'s
//! "immediate" case), as an exit at any hot spot with code does; its
//! guards' bridges reach the next join. The code grows with the branches,
//! not their combinations.
//!
//! What a join gives up is the parent's knowledge: a bridge knows what
//! its parent proved and keeps its objects virtual; a jump to a join
//! passes plain values. Tails that specialize (an interpreter's dispatch,
//! which promotes its `pc`) do not count towards a join, and exits holding
//! virtual objects do not jump to one.

use super::*;

/// Bridges recorded from one label, specializing on nothing, before the
/// label becomes a join: the next exit there records the join's trace
/// (the default of `Options::join_after`; the fuzzer's 0 makes every
/// exit that could start a join start one).
pub const JOIN_AFTER: u32 = 2;

/// What the JIT knows of joins.
#[derive(Default)]
pub(super) struct Joins {
    /// Per (graph, label): bridges recorded from there that specialized
    /// on nothing.
    tails: HashMap<(u32, Symbol), u32>,
    /// The labels made joins.
    made: HashSet<(u32, Symbol)>,
}

impl Joins {
    /// Counts a bridge recorded from `label` of graph `g`, as `trace`,
    /// starting in one frame with nothing promoted and nothing virtual,
    /// and jumping into code whose key has greens if `into_greens`: a tail
    /// another exit there may share, if it specializes on nothing — it
    /// promotes no value and goes into no code kept per value (a BF
    /// interpreter's `next`, from which every exit reaches the dispatch
    /// of its own `pc`).
    pub(super) fn recorded(&mut self, g: u32, label: Symbol, trace: &crate::trace::Trace, into_greens: bool) {
        use crate::trace::{Check, TraceOp};
        let guards = || {
            trace.ops.iter().filter_map(|op| match op {
                TraceOp::Guard { check, .. } => Some(check),
                _ => None,
            })
        };
        let promotes = guards().any(|c| matches!(c, Check::Value(..)));
        // A tail without a guard is a straight run into the code it
        // reaches: a bridge of its own per exit costs no more than the
        // join would (Euclid's `found`, two operations, ran 8% slower
        // joined: one more jump, its values passed).
        let branches = guards().next().is_some();
        if branches && !promotes && !into_greens {
            *self.tails.entry((g, label)).or_default() += 1;
        }
    }

    /// Whether `label` of graph `g` is a join.
    pub(super) fn is_join(&self, g: u32, label: Symbol) -> bool {
        self.made.contains(&(g, label))
    }

    /// Watches the joins made so far in profiler `p` (a new run's: the
    /// joins' code outlives a run, the profiler does not).
    pub(super) fn watch(&self, p: &mut Profiler, resolved: &Resolved) {
        for &(g, label) in &self.made {
            if let Some(&b) = resolved.graphs.get(g as usize).and_then(|graph| graph.labels.get(&label)) {
                p.watch_later(g, b);
            }
        }
    }

    /// Whether an exit to `label` of graph `g` should record the join
    /// there rather than a bridge of its own, joins due `after` tails.
    pub(super) fn due(&self, g: u32, label: Symbol, after: u32) -> bool {
        self.tails.get(&(g, label)).copied().unwrap_or(0) >= after
    }
}

impl<'p> Jit<'p> {
    /// Makes `label` of graph `g` a join, if it is due and not yet one:
    /// watched from now on, its key for the environment `env` returned.
    pub(super) fn join_at(
        &mut self,
        machine: &mut Machine,
        run: &Run,
        g: u32,
        label: Symbol,
        env: &Env,
    ) -> Option<Key> {
        let after = self.options.join_after?;
        if !self.joins.due(g, label, after) {
            return None;
        }
        let graph = &run.resolved.graphs[g as usize];
        let &block = graph.labels.get(&label)?;
        // A label with a promote chain is an interpreter's dispatch: its
        // tails specialize, and its keys are the values promoted.
        if !graph.promote_chain(block).is_empty() {
            return None;
        }
        let profiler = machine.profiler_mut()?;
        if profiler.watches(g, block) {
            return None;
        }
        profiler.watch_later(g, block);
        self.joins.made.insert((g, label));
        self.stats.joins += 1;
        stop_key(profiler, graph, g, label, env)
    }

    /// Whether exit `exit`, leaving with `values`, jumps into a join's
    /// code: its bridge is empty (`record_bridge`), so neither the compile
    /// budget nor its tree's `max_bridges` holds it back. One frame,
    /// nothing virtual or promoted, not a loop's check or a restart, at a
    /// join whose code takes its state.
    pub(super) fn jumps_to_join(
        &mut self,
        machine: &Machine,
        run: &mut Run,
        exit: ExitId,
        values: &[Option<Value>],
    ) -> bool {
        let state = self.exit_state(exit);
        let (parent, check) = (state.parent, state.check);
        let texit = state.exit.clone();
        let p = &self.codes[parent.0 as usize];
        if check
            || texit.key.is_some()
            || !self.joins.is_join(p.graph, texit.label)
            || p.restarts.contains(&texit.resume)
        {
            return false;
        }
        if p.record_shape(texit.resume) != (1, 0) || values.iter().any(Option::is_none) {
            return false;
        }
        let record = p.record(texit.resume);
        let map: HashMap<ValueId, Value> =
            texit.values.iter().zip(values).filter_map(|(id, v)| Some((*id, v.clone()?))).collect();
        // Nothing virtual: nothing is allocated to read the frame.
        let frames = resume::frames(&record, &map, &mut run.heap);
        let env: Env = frames[0].env.iter().cloned().collect();
        let graph = &run.resolved.graphs[p.graph as usize];
        let Some(profiler) = machine.profiler() else { return false };
        stop_key(profiler, graph, p.graph, texit.label, &env).is_some_and(|k| self.linkable(&k, &env).is_some())
    }
}

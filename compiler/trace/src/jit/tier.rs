//! The dispatch tier: an interpreter's dispatch loop compiled once, for
//! any position, running the positions that have no code of their own.
//!
//! A promoting label (`promote pc`) makes a hot spot per position of the
//! interpreted program ([`Key`]), each compiled on its own once hot. A
//! program whose positions run briefly — thousands of loops run a few
//! rounds each, the straight stretches between loops, the rounds after
//! a guard left a loop's code before its exit has a bridge — spends its
//! time interpreting them. The tier is the dispatch loop recorded once
//! with its promotion kept a variable and a `guard_cold` where the
//! promotion stood ([`crate::record::Limits`]'s `cold`): the trace runs
//! for any position, counting each arrival down in a table of the label's
//! positions that the profiler keeps and compiled code reaches
//! ([`Profiler::dispatch`], the runtime's `Ctx::positions`), and leaves
//! where a position has code of its own (its word is 0) or has used up
//! the arrivals it had left before it is hot. The driver then enters that
//! code, or records the hot position, as if the interpreter had stopped
//! there. So a position without code runs compiled, as the dispatch loop
//! compiled once for every position (what PyPy and LuaJIT run for an
//! interpreter whose `pc` is not promoted), and a position with code of
//! its own runs that, specialized to it.
//!
//! **When.** At the first hot spot of a label whose block ends in a
//! `promote` of one variable and runs nothing before it but what may run
//! again unnoticed ([`repeatable`]: `op = code[pc]` computed again from
//! the same `pc`; no allocation, no write, no variable the block reads
//! written), so leaving for the interpreter at that block repeats
//! nothing anyone can tell, holding an integer or an
//! object (an interpreter's instructions made objects; the tables count
//! those by allocation number): the
//! tier is recorded from there (one round of the dispatch loop, ending
//! where it arrives at the label again), compiled on the running thread,
//! and from then on the interpreter stops at every arrival at the label,
//! for the driver to send each position without code to the tier
//! ([`Jit::tier_instead`]). One label per run.
//!
//! **Leaving.** `guard_cold` resumes the interpreter at the label's block;
//! the driver marks the position hot ([`Profiler::found_hot`]) unless it
//! has code, and goes on as at a hot spot ([`Jit::left_tier`]). Those
//! exits are never bridged. A position whose code the worker has made
//! has its word set to 0 when the driver takes the result
//! ([`Profiler::ready`]), so the tier leaves there at the next arrival
//! rather than at its next ask. The tier's other exits — the paths of the
//! other instructions — get bridges like any code's, which end where
//! they arrive at the label again by jumping back into the tier.
//!
//! **Links.** Where a position has code of its own, taking the tier's
//! parameters in their order, the driver links the position to it when it
//! enters it ([`Jit::link_position`]): the position's second word in the
//! table is the code's slot, and baseline code's `guard_cold` finding the
//! count 0 there passes the loop's values to that code and enters it, as a
//! `jump_trace` enters a trace, without going through the driver. The
//! code's pins but the position (values it was specialized to: the
//! program's length) are checked on the way in (`Ctx::link_pins`); the run
//! tells the driver where it linked and after how many of the tier's
//! iterations, which counts the entry and the iterations to the code they
//! are of. The profiler clears a link whenever the key stops having code,
//! the JIT whenever its code changes.
//!
//! **Bridges cut short.** Any other bridge recording on through positions
//! without code of their own ends, once it has passed
//! `Options::tier_bridge_positions` of them, where it next arrives at the
//! label: by entering the tier, which runs on from there and links into
//! the code of positions that have some (the recordings the tier left to
//! bridges had run to thousands of operations through rarely run
//! positions, each such path compiled apart).
//!
//! **Clocks.** A position the tier found hot is judged for how densely
//! it was arrived at (a loop too sparse is not compiled) over the work
//! the JIT's clock counted since its word was written ([`Jit::work`],
//! [`Profiler::set_clock`]): the interpreter's clock stands still while
//! code runs.
//!
//! **Paying.** The tier is judged like other code ([`Jit::paid`]): one
//! left as soon as it is entered costs a round trip per instruction more
//! than interpreting it. Given up, the label's stops go with it
//! ([`Jit::give_up_tier`]).

use flowc_lang::interp::resolve::CTerm;

use super::background::Job;
use super::compiling::Seen;
use super::*;
use crate::record::PromoteSites;

/// Whether `block` ends in a promotion and leaving for the interpreter at
/// its start, where the promotion fails, repeats nothing anyone can tell:
/// what runs before the promotion only computes and reads fields
/// (`op = code[pc]`, `i = p.instr`), allocates and writes nothing, and
/// writes neither the promoted variable nor one whose value from before
/// the block it reads, so running it again from the block's start
/// computes what it did.
fn repeatable(block: &flowc_lang::interp::resolve::CBlock) -> bool {
    use flowc_lang::interp::resolve::{CStmt, Operand};
    let CTerm::Promote { var, .. } = block.term else { return false };
    // Variables read with the value they came in with, and those written.
    let (mut came_in, mut written) = (vec![var], Vec::new());
    for s in &block.stmts {
        let (dst, operands): (_, &[&Operand]) = match s {
            CStmt::Op1 { dst, arg, .. } => (dst, &[arg]),
            CStmt::Op2 { dst, lhs, rhs, .. } => (dst, &[lhs, rhs]),
            CStmt::Get { dst, obj, .. } => (dst, &[obj]),
            CStmt::New { .. } | CStmt::Set { .. } => return false,
        };
        for o in operands {
            if let Operand::Slot(s) = o {
                if !written.contains(s) {
                    came_in.push(*s);
                }
            }
        }
        written.push(*dst);
    }
    !written.iter().any(|w| came_in.contains(w))
}

/// The variables of `graph` no block reachable from block `from` writes
/// (an interpreter's program, its bracket map, the program's length):
/// whatever path the dispatch loop takes, they keep the values they had
/// at its label. The tier pins the integers among them
/// ([`speculate::tier_checks`]).
fn never_written(graph: &flowc_lang::interp::resolve::Graph, from: u32) -> Vec<Symbol> {
    let mut written = vec![false; graph.slot_names.len()];
    let mut seen = vec![false; graph.blocks.len()];
    let mut work = vec![from];
    while let Some(b) = work.pop() {
        if std::mem::replace(&mut seen[b as usize], true) {
            continue;
        }
        let block = &graph.blocks[b as usize];
        for d in block.stmts.iter().filter_map(|s| s.dst()) {
            written[d as usize] = true;
        }
        let targets = match &block.term {
            CTerm::Jump(t) | CTerm::Promote { target: t, .. } => vec![*t],
            CTerm::If { then_t, else_t, .. } | CTerm::IfClass { then_t, else_t, .. } => vec![*then_t, *else_t],
            CTerm::Call { dst, next, .. } => {
                written[*dst as usize] = true;
                vec![*next]
            }
            CTerm::Print(_) | CTerm::Return(_) | CTerm::Error(_) => Vec::new(),
        };
        work.extend(targets.into_iter().filter_map(|t| t.block()));
    }
    graph.slot_names.iter().zip(&written).filter(|(_, w)| !**w).map(|(n, _)| *n).collect()
}

/// The end of the pins the values a link passes must hold
/// ([`Jit::link_position`]).
pub(super) const PINS_END: [u64; 2] = [u64::MAX, 0];

/// The dispatch tier of one label.
pub(super) struct Tier {
    /// The label: its graph and block, and its name.
    pub g: u32,
    pub block: u32,
    pub label: Symbol,
    /// The variable the label promotes (an interpreter's `pc`).
    pub green: Symbol,
    /// Its loop trace (the preamble), once compiled.
    pub code: Option<TraceId>,
    /// Given up: it could not be recorded or compiled, or did not pay.
    pub refused: bool,
}

impl<'p> Jit<'p> {
    /// Whether hot spot `key` is at a label that may have the tier, and
    /// the tier is to be recorded there now.
    pub(super) fn wants_tier(&self, run: &Run, key: &Key) -> bool {
        if !self.options.dispatch_tier || key.block == CALL {
            return false;
        }
        if let Some(t) = &self.tier {
            // (After a flush, the label's tier is made again.)
            if t.refused || t.code.is_some() || (t.g, t.block) != (key.graph, key.block) {
                return false;
            }
        }
        if !matches!(&key.greens[..], [Green(Some(Value::Int(_) | Value::Object(_)))]) {
            return false;
        }
        let block = &run.resolved.graphs[key.graph as usize].blocks[key.block as usize];
        repeatable(block)
    }

    /// Records the tier at hot spot `key` (the top frame of `stack`
    /// about to run `block`, the label's), compiles it here and turns it
    /// on. The recording runs the program one round of the dispatch loop.
    pub(super) fn record_tier(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        key: &Key,
        stack: &mut Vec<Frame>,
        block: u32,
    ) -> Result<Next, RuntimeError> {
        let top = stack.last().expect("a frame");
        let g = top.graph;
        let graph: &Graph = &run.resolved.graphs[g as usize];
        let (label, function) = (graph.blocks[block as usize].label, graph.name);
        let (next, green) = match &graph.blocks[block as usize].term {
            CTerm::Promote { target, var } => {
                (target.block().map(|t| graph.blocks[t as usize].label), graph.slot_names[*var as usize])
            }
            _ => (None, label),
        };
        self.tier = Some(Tier { g, block, label, green, code: None, refused: false });
        if next.is_none() {
            self.give_up_tier(machine, "its promotion goes to no label of its graph");
            return Ok(Next::Interpret(block));
        }
        let (params, args, unbound) = self.frame_start(run, top, block);
        let env: Vec<(Symbol, Value)> = params.iter().copied().zip(args.iter().cloned()).collect();
        let frame = ResumeFrame { function, env, call: None };
        let what = format!("{} (the dispatch tier)", describe(key, run.resolved));
        if self.log.is_some() {
            self.log(format_args!("record the dispatch tier at {what}"));
        }
        let started = Instant::now();
        let sites: PromoteSites = [(function, label)].into_iter().collect();
        let recorded = {
            let this = &*self;
            let mut limits = this.limits();
            limits.cold = Some(&sites);
            // One round: the loop closes at the label's next arrival,
            // whatever the position.
            let mut at = |l: Symbol, _: &Env, _: usize| if l == label { Arrival::Stop } else { Arrival::Continue };
            let mut residual = residual_calls(this, run.resolved, run.config, None);
            record_path(this.shared.index(), &[frame], label, &mut run.heap, limits, &mut at, &mut residual)
        };
        self.stats.record_time += started.elapsed();
        let (trace, frame, end_label) = match recorded {
            Ok(Path::Stopped { trace, frame, label }) => (trace, frame, label),
            Ok(Path::Printed(v)) => return Ok(Next::Printed(v)),
            Ok(Path::Returns { frame, label, .. }) => {
                self.give_up_tier(machine, "its dispatch loop returns from its function");
                let block = machine.replace_top_keeping(stack, &[frame], label)?;
                return Ok(Next::Interpret(block));
            }
            Err(TraceError::Runtime(e)) => return Err(e),
            Err(e @ (TraceError::TooLong { .. } | TraceError::Unrolls { .. })) => {
                self.give_up_tier(machine, &e.to_string());
                let (state, _) = e.suspended();
                let block = machine.replace_top_keeping(stack, &state.frames, state.label)?;
                return Ok(Next::Interpret(block));
            }
        };
        let block = machine.replace_top_keeping(stack, std::slice::from_ref(&frame), end_label)?;
        let start = Start::frame(function, &params);
        let name = self.fresh_name(Symbol::intern(&format!("{label}.tier")));
        let live: Vec<Symbol> = params.iter().chain(&unbound).copied().collect();
        let seen = Seen { start: &args, end: &frame.env };
        let mut job = self.loop_job(run, name, trace, &start, &params, &live, Some(seen), function);
        job.tier = Some(never_written(graph, block));
        self.compiling_tier = true;
        let compiled = self.optimize_here(Job::Loop(Box::new(job))).and_then(|o| self.finish(o, &what, None, false));
        self.compiling_tier = false;
        match compiled {
            Some((code, time)) => {
                // Registered as a loop, but under no hot spot: the
                // positions without code enter it, through the driver
                // ([`Jit::tier_instead`]) and the bridges of its tree.
                let c = &mut self.codes[code.0 as usize];
                (c.kind, c.anchor, c.graph, c.params, c.unbound, c.compile_time) =
                    (Kind::Loop, label, g, params, unbound, time);
                self.adopt_body(code);
                self.tier_on(machine, code, what);
            }
            None => self.give_up_tier(machine, "the code generator refused it"),
        }
        Ok(Next::Interpret(block))
    }

    /// The tier's code `code` is there: the profiler keeps the label's
    /// table of positions and stops at every arrival there.
    fn tier_on(&mut self, machine: &mut Machine, code: TraceId, what: String) {
        let Some(t) = self.tier.as_mut() else { return };
        t.code = Some(code);
        let (g, block) = (t.g, t.block);
        if let Some(p) = machine.profiler_mut() {
            p.dispatch(g, block);
        }
        self.stats.tier = Some(what);
    }

    /// Gives the tier up for `why`: the label's stops go, its code is no
    /// longer entered.
    pub(super) fn give_up_tier(&mut self, machine: &mut Machine, why: &str) {
        let Some(t) = self.tier.as_mut() else { return };
        t.refused = true;
        let (g, block) = (t.g, t.block);
        if let Some(p) = machine.profiler_mut() {
            p.end_dispatch(g, block);
        }
        self.stats.tier_given_up = Some(why.to_string());
        self.log(format_args!("dispatch tier given up: {why}"));
    }

    /// Whether the interpreter stopped at `key` only because its label
    /// has the tier: the key is not hot and has no code.
    pub(super) fn stopped_for_tier(&self, machine: &Machine, key: &Key) -> bool {
        let Some(t) = self.tier.as_ref().filter(|t| t.code.is_some() && !t.refused) else { return false };
        (key.graph, key.block) == (t.g, t.block) && machine.profiler().is_some_and(|p| !p.stops(key))
    }

    /// Where the interpreter would go on at `block` of the top frame of
    /// `stack`: the tier's code instead, when that is the tier's label and
    /// the position there has neither code of its own nor is hot.
    pub(super) fn tier_instead(
        &mut self,
        machine: &Machine,
        run: &mut Run,
        stack: &[Frame],
        block: u32,
    ) -> Option<Next> {
        let t = self.tier.as_ref().filter(|t| !t.refused)?;
        let code = t.code?;
        let top = stack.last()?;
        if (top.graph, block) != (t.g, t.block) {
            return None;
        }
        let p = machine.profiler()?;
        let key = p.key(t.g, t.block, &top.slots);
        if p.stops(&key) || p.position(&key).is_none_or(|w| w == 0) || !self.admits_frame(run, code, top) {
            return None;
        }
        self.stats.tier_entries += 1;
        Some(Next::Enter(code))
    }

    /// The tier's `guard_cold` left at exit `exit` with `values`: back at
    /// the label, the position there has code (entered) or is hot
    /// (recorded), as the driver does at a hot spot.
    pub(super) fn left_tier(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        exit: ExitId,
        values: Vec<Option<Value>>,
        stack: &mut Vec<Frame>,
    ) -> Result<Next, RuntimeError> {
        self.stats.tier_exits += 1;
        if let Some(after) = self.options.tier_tree {
            self.grow_tier_tree(after);
        }
        let block = self.resume_at(machine, run, exit, &values, stack)?;
        let top = stack.last().expect("a frame");
        self.tier_clock(machine);
        let now = machine.steps();
        let p = machine.profiler_mut().expect("the JIT runs with a profiler");
        let key = p.key(top.graph, block, &top.slots);
        match p.position(&key) {
            Some(0) => p.found_hot(&key, now),
            // A position compiled code reached first: the table grows to
            // it, and the tier goes on there ([`Jit::tier_instead`]).
            None => {
                p.reach(&key);
            }
            Some(_) => {}
        }
        if !p.stops(&key) {
            return Ok(Next::Interpret(block));
        }
        self.at_key(machine, run, &key, stack, block)
    }

    /// The driver enters code `code` at hot spot `key`: where that is a
    /// position of the tier's label and the code takes the tier's
    /// parameters (in their order), the position's link is set to the
    /// code's slot, so the tier's `guard_cold` enters the code directly
    /// from then on (baseline code: see the profiler's `Position`). The
    /// code's pins but the position's own (values it was specialized to:
    /// an interpreter's program length) join the pins every link checks
    /// on the way in (`Ctx::link_pins`); code pinning a value another
    /// link's pins hold otherwise, or one that is not a word of its own,
    /// is not linked. The profiler clears the link whenever the key stops
    /// having code; the JIT, whenever its code changes
    /// ([`Jit::unlink_position`]).
    pub(super) fn link_position(&mut self, machine: &mut Machine, key: &Key, code: TraceId) {
        let Some(t) = self.tier.as_ref().filter(|t| !t.refused && (t.g, t.block) == (key.graph, key.block)) else {
            return;
        };
        let Some(tier) = t.code.filter(|&c| c != code && self.options.tier_links) else { return };
        let (c, tc) = (&self.codes[code.0 as usize], &self.codes[tier.0 as usize]);
        if c.graph != t.g || c.params != tc.params {
            return;
        }
        let green = key.greens.first().and_then(|g| g.0.as_ref());
        let mut pins = Vec::new();
        for (k, v) in &c.pins {
            if c.params.get(*k) == Some(&t.green) && Some(v) == green {
                continue;
            }
            let Some(word) = flowc_codegen::word::immediate(v) else { return };
            let pin = [8 * *k as u64, word.bits()];
            match self.link_pins.iter().find(|p| p[0] == pin[0]) {
                Some(p) if *p == pin => {}
                Some(_) => return,
                None => pins.push(pin),
            }
        }
        let Some(slot) = self.cache.as_ref().and_then(|cache| cache.code_slot(code)) else { return };
        if machine.profiler_mut().is_some_and(|p| p.link(key, slot)) {
            self.linked_codes.insert(slot, code);
            let end = self.link_pins.len() - 1;
            self.link_pins.splice(end..end, pins);
        }
    }

    /// Clears hot spot `key`'s link ([`Jit::link_position`]): its code
    /// changed.
    pub(super) fn unlink_position(&self, machine: &mut Machine, key: &Key) {
        if let Some(p) = machine.profiler_mut() {
            p.unlink(key);
        }
    }

    /// Tells the tier's label the JIT's clock ([`Jit::work`]).
    pub(super) fn tier_clock(&self, machine: &mut Machine) {
        let Some(t) = self.tier.as_ref().filter(|t| t.code.is_some() && !t.refused) else { return };
        let clock = self.work(machine.steps());
        if let Some(p) = machine.profiler_mut() {
            p.set_clock(t.g, t.block, clock);
        }
    }

    /// The positions tables compiled code runs with, if the tier is on.
    pub(super) fn tier_positions(&self, machine: &mut Machine) -> Option<[(std::ptr::NonNull<u64>, usize); 2]> {
        let t = self.tier.as_ref().filter(|t| t.code.is_some() && !t.refused)?;
        machine.profiler_mut()?.positions(t.g, t.block)
    }

    /// For a bridge recorded from code of the tier's tree (`root`), in
    /// graph `g`: the label it ends at and the tier's code, which it
    /// jumps back into there.
    pub(super) fn tier_end(&self, root: TraceId, g: u32) -> Option<(Symbol, TraceId)> {
        self.tier_at(g).filter(|&(_, code)| code == root)
    }

    /// The tier's label and code, if it has some, in graph `g`.
    pub(super) fn tier_at(&self, g: u32) -> Option<(Symbol, TraceId)> {
        let t = self.tier.as_ref().filter(|t| t.g == g && !t.refused)?;
        Some((t.label, t.code?))
    }

    /// Whether exit `exit` (which failed: the JIT knows it) is of code of
    /// the tier's tree.
    pub(super) fn in_tier_tree(&self, exit: ExitId) -> bool {
        let Some(state) = self.exits.get(exit.0 as usize).and_then(Option::as_ref) else { return false };
        let parent = &self.codes[state.parent.0 as usize];
        self.tier_end(parent.root, parent.graph).is_some()
    }

    /// Whether `code` is the tier's (its loop trace).
    pub(super) fn is_tier(&self, code: TraceId) -> bool {
        self.tier.as_ref().is_some_and(|t| t.code == Some(code))
    }

    /// The profiler no longer keeps the tier's table (its label's
    /// promotion was given up as megamorphic, which counts one key
    /// there): the tier goes too.
    pub(super) fn tier_lost(&mut self, machine: &mut Machine) {
        let Some(t) = self.tier.as_ref().filter(|t| t.code.is_some() && !t.refused) else { return };
        if machine.profiler().is_some_and(|p| !p.dispatches(t.g, t.block)) {
            self.give_up_tier(machine, "its label's promotion was given up as megamorphic");
        }
    }
}

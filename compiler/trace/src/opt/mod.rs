//! The SSA trace optimizer (`--optimizer ssa`, and the JIT's): one
//! forward walk over a trace's blocks (docs/architecture.md "Traces"), then the
//! shared `dce` pass.
//!
//! - A loop trace (a preheader `b0` and a loop `b1`, as
//!   [`crate::to_ir`] makes them) is first peeled ([`peel`]): `b1` becomes
//!   the first iteration and a copy `b2` the loop. The walk
//!   ([`walk`]) goes through `b0`, `b1` and `b2` in order, so the loop
//!   knows everything the first iteration proved; at the loop's head the
//!   objects the first iteration left virtual stay virtual around the
//!   loop ([`state`]), with the phis of their fields' values; the loop's
//!   other phis get kinds and ranges first ([`ranges`]).
//! - A straight trace (a bridge, or a trace that ends by jumping into
//!   another) is walked once; objects still virtual at its exit stay
//!   virtual in the exit's record. What its final `jump_trace` passes is
//!   as [`Jump`] says: real values, or — at the end of a loop's preamble
//!   and of code jumping to that preamble — the loop's entry state
//!   ([`entry`]), so that objects stay virtual into the loop.
//!
//! Facts about the trace's inputs come from guards in `b0` (the JIT puts
//! `guard_int` there for what it speculates on, [`crate::jit`]) and from
//! the facts the caller gives its parameters (a loop's entry facts).

mod counted;
mod entry;
mod finish;
mod heap;
pub mod known;
mod peel;
mod ranges;
pub mod row;
mod rows;
mod state;
mod stats;
mod stores;
mod virtuals;
mod walk;

/// What the optimizer's tests share: a trace written as IR text,
/// optimized, checked by the IR checker, and printed.
#[cfg(test)]
mod check {
    /// Optimizes the one trace of IR `text` (allocations removed), runs the
    /// IR checker on the result, and compares its printed form with
    /// `expected`.
    pub fn optimized(text: &str, expected: expect_test::Expect) {
        optimized_with(text, None, expected);
    }

    /// [`optimized`] knowing what the program may store in each field.
    pub fn optimized_with(
        text: &str,
        fields: Option<&flowc_passes::propagate::ProgramFacts>,
        expected: expect_test::Expect,
    ) {
        let mut m = flowc_ir::parse::module("trace", text).unwrap();
        let hints = flowc_ir::Module { functions: Vec::new(), ..m.clone() };
        let f = &mut m.functions[0];
        super::optimize_trace(f, &hints, &super::Options { fields, ..super::Options::new(true) });
        if let Err(vs) = flowc_ir_checker::check(f) {
            panic!("{vs:?}\n{}", flowc_ir::print::function(f));
        }
        expected.assert_eq(&flowc_ir::print::function(f));
    }

    /// What the program of source `text` (entry label `start`) may store
    /// in each field: the facts a trace of it is optimized with.
    pub fn facts_of(text: &str) -> flowc_passes::propagate::ProgramFacts {
        let program = flowc_lang::syntax::parse("facts.fg", text).expect("parses");
        let module = flowc_frontend::lower(&program, flowc_lang::Symbol::intern("start")).expect("lowers");
        flowc_passes::propagate::program_facts(&module)
    }
}

use flowc_ir::{
    BlockId, Function, GuardKind, InstId, InstKind, Module, Operand, ResumeId, Terminator, ValueDef, ValueId,
};
use flowc_lang::Symbol;
use flowc_passes::lattice::Info;
use flowc_passes::propagate::ProgramFacts;

pub use counted::{fast_forward, skip_of};
pub use entry::{Fact, LoopEntry, ObjectShape, Shape};
pub use peel::MAX_PEELED;
pub use stats::TraceStats;

use walk::Opt;

/// The loop block of a trace: the block that jumps to itself.
fn loop_block(f: &Function) -> Option<BlockId> {
    f.layout.iter().copied().find(|&b| f.blocks[b].term == Terminator::Jump(b))
}

/// How a trace is optimized.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// Whether objects may be virtual (the program cannot observe
    /// allocation numbers).
    pub remove_allocations: bool,
    /// What is known of the trace's parameters, in order (any bound
    /// value where missing).
    pub facts: &'a [Info],
    /// What the program may store in each field (propagate's
    /// [`ProgramFacts`]), when known: what a `get` reads.
    pub fields: Option<&'a ProgramFacts>,
    /// Whether a loop is peeled (its first iteration made straight code
    /// before it).
    pub peel: Peel,
    /// What the `jump_trace` that ends a straight trace passes.
    pub jump: Jump<'a>,
    /// The shapes of the heap's rows the trace may assume: walks along
    /// them get a `guard_row` ([`row`]).
    pub rows: &'a [row::RowShape],
    /// Whether the trace's caller may stop wanting it meanwhile (see
    /// [`GiveUp`]).
    pub give_up: Option<GiveUp<'a>>,
}

/// Says whether the caller no longer wants the trace being optimized:
/// the JIT's worker, whose run ended or whose code was all dropped since
/// the job was sent. Walks ask every [`ASK_EVERY`] instructions and stop
/// once it says yes: the trace is then left unusable, and
/// [`Optimized::gave_up`] says so. (A loop of 900 operations takes some
/// 1.5 ms to optimize, and the end of a short run waited for it.)
#[derive(Clone, Copy)]
pub struct GiveUp<'a>(pub &'a dyn Fn() -> bool);

impl std::fmt::Debug for GiveUp<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GiveUp")
    }
}

/// How many instructions a walk does between two questions to
/// [`Options::give_up`].
pub const ASK_EVERY: usize = 8;

impl Options<'_> {
    /// Peeled loops, real values passed by jumps.
    pub fn new(remove_allocations: bool) -> Options<'static> {
        Options {
            remove_allocations,
            facts: &[],
            fields: None,
            peel: Peel::Always,
            jump: Jump::Plain,
            rows: &[],
            give_up: None,
        }
    }
}

/// Whether a loop is peeled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peel {
    Always,
    Never,
    /// When the loop reads a field of, or checks, a value it does not
    /// change ([`reuses_invariants`]): the first iteration then does that
    /// once for all. The JIT's loops, whose preamble is their first
    /// iteration already, are peeled so: peeling every one of them cost
    /// twice the optimizing and code of each, mostly for nothing.
    WhenInvariant,
}

/// What the `jump_trace` that ends a straight trace passes.
#[derive(Clone, Copy, Debug)]
pub enum Jump<'a> {
    /// Real values: virtual objects are materialized.
    Plain,
    /// The trace is the preamble of a loop whose head has the variables
    /// `names` (the jump's arguments, in order), at label `anchor` of
    /// `function`'s frame: the jump passes the loop's entry state, which
    /// [`Optimized::entry`] describes; the loop assumes the variables of
    /// `assumed` are integers in those ranges.
    /// With `constant_inputs`, the loop takes every variable of its head,
    /// those the preamble found constant too ([`Fact::Is`]).
    Defines {
        anchor: Symbol,
        function: Option<Symbol>,
        names: &'a [Symbol],
        assumed: &'a [(Symbol, i64, i64)],
        constant_inputs: bool,
    },
    /// The jump goes to the preamble of a loop with entry `entry`: it goes
    /// into the loop, trace `body`, instead when the state matches.
    Enters { entry: &'a LoopEntry, body: Symbol },
}

/// What optimizing a trace found out.
#[derive(Clone, Debug, Default)]
pub struct Optimized {
    /// For [`Jump::Defines`]: the loop's entry state.
    pub entry: Option<LoopEntry>,
    /// For [`Jump::Enters`]: whether the trace jumps into the loop; for
    /// it and [`Jump::Defines`], the records of the guards that check the
    /// loop's facts on the way (they leave at the loop's head).
    pub entered: bool,
    pub restarts: Vec<ResumeId>,
    /// The walk gave up ([`Options::give_up`]): the trace is unusable.
    pub gave_up: bool,
    /// What was known of the values its exits store ([`known`]), by
    /// record, sorted.
    pub exit_facts: known::ExitFacts,
}

/// Optimizes trace `f`; `hints` holds the program's functions and its
/// `pure` and `immutable` declarations; `remove_allocations` allows
/// virtual objects.
pub fn optimize(f: &mut Function, hints: &Module, remove_allocations: bool) {
    optimize_trace(f, hints, &Options::new(remove_allocations));
}

/// [`optimize`] as `options` say.
pub fn optimize_trace(f: &mut Function, hints: &Module, options: &Options) -> Optimized {
    let walked = match loop_block(f) {
        Some(body) if f.layout.len() == 2 && f.layout[1] == body => {
            let peel = match options.peel {
                Peel::WhenInvariant if reuses_invariants(f, body) => Peel::Always,
                Peel::WhenInvariant => Peel::Never,
                peel => peel,
            };
            let options = Options { peel, ..*options };
            optimize_loop(f, hints, &options, body)
                .map(|(placed, exit_facts)| (Optimized { exit_facts, ..Optimized::default() }, placed))
        }
        None if f.layout.len() == 1
            && matches!(f.blocks[f.entry].term, Terminator::Exit { .. } | Terminator::JumpTrace { .. }) =>
        {
            optimize_straight(f, hints, options)
        }
        _ => return Optimized::default(),
    };
    let Some((out, placed)) = walked else {
        return Optimized { gave_up: true, ..Optimized::default() };
    };
    let vouched = row::guard_rows(f, options.rows);
    let mut placed = placed;
    placed.sort_unstable();
    placed.dedup();
    rows::keep_paying(f, &vouched, &placed);
    stores::remove_dead(f, hints);
    let trace = std::mem::replace(f, Function::new(f.kind, f.name));
    let mut module = Module { pure: hints.pure.clone(), immutable: hints.immutable.clone(), functions: vec![trace] };
    flowc_passes::dce::function(&mut module, 0, !options.remove_allocations);
    *f = module.functions.pop().expect("the trace");
    out
}

/// Whether [`Peel::WhenInvariant`] peels loop trace `f` (unoptimized).
pub fn peels_when_invariant(f: &Function) -> bool {
    loop_block(f).is_some_and(|body| f.layout.len() == 2 && f.layout[1] == body && reuses_invariants(f, body))
}

/// Whether loop `body` of unoptimized trace `f` reads a field of a value
/// it does not change, and calls nothing, or checks the class or value of
/// such a value: what a peeled first iteration does once for the whole
/// loop (a field the loop does not write is read there once; one it
/// writes is carried round the loop in a phi from there,
/// [`state`]).
fn reuses_invariants(f: &Function, body: BlockId) -> bool {
    let block = &f.blocks[body];
    let inside: rustc_hash::FxHashSet<InstId> = block.phis.iter().chain(&block.insts).copied().collect();
    let inside = |i: InstId| inside.contains(&i);
    // Values the loop does not change: defined before it, or carried by a
    // phi that takes itself round the loop.
    let invariant = |o: &Operand| match o {
        Operand::Const(_) => false,
        Operand::Value(v) => match f.values[*v].def {
            ValueDef::Inst(i) if inside(i) => match &f.insts[i].kind {
                InstKind::Phi(inputs) => inputs.iter().all(|(b, x)| *b != body || *x == Operand::Value(*v)),
                _ => false,
            },
            _ => true,
        },
    };
    let kinds = || block.insts.iter().map(|&i| &f.insts[i].kind);
    let calls = kinds().any(|k| matches!(k, InstKind::Call { .. }));
    let written: rustc_hash::FxHashSet<Symbol> = kinds()
        .filter_map(|k| match k {
            InstKind::Set { field, .. } => Some(*field),
            _ => None,
        })
        .collect();
    // A field the loop writes of this object only: carried in a phi.
    let only_of = |obj: &Operand, field: &Symbol| {
        kinds().all(|k| !matches!(k, InstKind::Set { obj: o, field: f, .. } if f == field && o != obj))
    };
    kinds().any(|k| match k {
        InstKind::Get { obj, field, .. } => {
            invariant(obj) && !calls && (!written.contains(field) || only_of(obj, field))
        }
        InstKind::Guard {
            kind: GuardKind::Class(o, _) | GuardKind::NotClass(o, _) | GuardKind::Link(o, _) | GuardKind::Value(o, _),
            ..
        } => invariant(o),
        _ => false,
    })
}

/// Optimizes loop trace `f`; the `guard_at`s that must stay
/// ([`Opt::placed`]), or `None` if it gave up ([`Options::give_up`]).
fn optimize_loop(
    f: &mut Function,
    hints: &Module,
    options: &Options,
    body: BlockId,
) -> Option<(Vec<InstId>, known::ExitFacts)> {
    let original = std::mem::replace(f, Function::new(f.kind, f.name));
    // Variables carried round the loop as real objects, after a mismatch;
    // fields not carried, after the back edge did not know them.
    let mut real: Vec<Symbol> = Vec::new();
    let mut dropped: Vec<(ValueId, Symbol)> = Vec::new();
    loop {
        let mut g = original.clone();
        let peeled = if options.peel == Peel::Always { peel::peel(&mut g, body) } else { None };
        let (chain, lp) = match peeled {
            Some(copy) => (vec![g.entry, body], copy),
            None => (vec![g.entry], body),
        };
        let mut o = Opt::new(&mut g, hints, options);
        let pred = *chain.last().expect("a preheader");
        for &b in &chain {
            o.run(b);
            if o.gave_up {
                return None;
            }
            if b != pred {
                o.install(b);
            }
        }
        let header = o.enter_loop(lp, pred, &real, &dropped);
        o.install(pred);
        let carried: Vec<(ValueId, Symbol, ValueId)> =
            header.fields.iter().map(|c| (c.obj, c.field, c.value)).collect();
        o.run_loop(lp, &carried);
        if o.gave_up {
            return None;
        }
        match o.close_loop(header) {
            Ok(()) => {
                o.install(lp);
                o.trivial_phis(lp);
                o.hoist_invariant_guards(lp, pred);
                o.share_records();
                let placed = std::mem::take(&mut o.placed);
                let facts = o.exit_facts.facts();
                *f = g;
                return Some((placed, facts));
            }
            Err(state::Retry::Fields(lost)) => dropped.extend(lost),
            Err(state::Retry::Real(vars)) => {
                let before = real.len();
                real.extend(vars.into_iter().filter(|v| !real.contains(v)).collect::<Vec<_>>());
                if real.len() == before {
                    // Cannot happen (each mismatch names a variable still
                    // carried virtual); never loop: carry everything real.
                    let names = original.values.iter().filter_map(|(_, v)| v.name);
                    real.extend(names);
                }
            }
        }
    }
}

/// Optimizes straight trace `f`: what it found, and the `guard_at`s that
/// must stay ([`Opt::placed`]); `None` if it gave up
/// ([`Options::give_up`]).
fn optimize_straight(f: &mut Function, hints: &Module, options: &Options) -> Option<(Optimized, Vec<InstId>)> {
    let b = f.entry;
    let mut o = Opt::new(f, hints, options);
    o.run(b);
    if o.gave_up {
        return None;
    }
    let mut out = Optimized::default();
    match o.f.blocks[b].term.clone() {
        Terminator::Exit { resume, .. } => {
            // Objects still virtual at the exit stay virtual in its record.
            let record = o.snapshot(resume);
            o.f.resumes[resume] = record;
            o.note_exit(resume);
        }
        Terminator::JumpTrace { target, args } => {
            let (target, args) = match options.jump {
                Jump::Plain => (target, args.iter().map(|a| o.real(a)).collect()),
                Jump::Defines { anchor, function, names, assumed, constant_inputs } => {
                    let vars: Vec<(Symbol, flowc_ir::Operand)> =
                        names.iter().copied().zip(args.iter().cloned()).collect();
                    match o.define_entry(anchor, function, &vars, assumed, constant_inputs) {
                        Some((entry, args, restarts)) => {
                            out.entry = Some(entry);
                            out.restarts = restarts;
                            (target, args)
                        }
                        None => (target, args.iter().map(|a| o.real(a)).collect()),
                    }
                }
                Jump::Enters { entry, body } => match o.enter_loop_at(entry, &args) {
                    Some((inputs, restarts)) => {
                        out.entered = true;
                        out.restarts = restarts;
                        (body, inputs)
                    }
                    None => (target, args.iter().map(|a| o.real(a)).collect()),
                },
            };
            o.f.blocks[b].term = Terminator::JumpTrace { target, args: args.into() };
        }
        _ => {}
    }
    o.install(b);
    o.share_records();
    out.exit_facts = o.exit_facts.facts();
    Some((out, std::mem::take(&mut o.placed)))
}

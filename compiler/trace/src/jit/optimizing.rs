//! Optimizing what was recorded: the part of a compile that reads only
//! the program ([`Shared`]) and the recording, never the interpreter's
//! heap, the code cache or the JIT's tables — conversion to IR, the
//! speculation checks, the optimizer, compaction. A [`LoopJob`] or
//! [`StraightJob`] holds all it needs, so it may run on the second core
//! ([`super::background`]); what comes out ([`Optimized`]) is compiled
//! and installed on the running thread ([`super::compiling`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use flowc_codegen::lower::Shape;
use flowc_ir::{Function, ResumeId};
use flowc_lang::{Symbol, Value};
use flowc_passes::propagate::ProgramFacts;

use super::background::Shared;
use super::{speculate, Kind};
use crate::opt;
use crate::to_ir::{self, End, Start};
use crate::trace::Trace;

/// Whether a job's result is still wanted. The worker's jobs stop being
/// wanted when the run ends ([`super::background::Worker`]'s drop): the
/// running thread then waits for the job in hand, and a compile of a
/// 900-operation loop takes the worker some 6 ms, as long as a short
/// run's whole stretch after its warm-up. They stop being wanted too
/// when the JIT drops all its code (a flush: `Worker::forget_all`),
/// whose cache theirs would go into. So a job looks between its stages
/// (conversion, each optimization, code generation) and gives up once
/// it is not wanted. Jobs done on the running thread are always wanted
/// ([`Wanted::ALWAYS`]).
#[derive(Clone, Copy)]
pub(super) struct Wanted<'a>(Option<Watch<'a>>);

/// What a worker's job watches: the run's end, and the flushes since
/// it was submitted.
#[derive(Clone, Copy)]
struct Watch<'a> {
    stop: &'a AtomicBool,
    flushes: &'a AtomicU64,
    /// The flushes there had been when it was submitted.
    submitted: u64,
}

impl<'a> Wanted<'a> {
    /// Always wanted.
    pub const ALWAYS: Wanted<'static> = Wanted(None);

    /// Wanted until `stop` is set or `flushes` counts past `submitted`.
    pub fn until(stop: &'a AtomicBool, flushes: &'a AtomicU64, submitted: u64) -> Wanted<'a> {
        Wanted(Some(Watch { stop, flushes, submitted }))
    }

    /// Whether the job can stop being wanted (not [`Wanted::ALWAYS`]).
    pub fn may_go(self) -> bool {
        self.0.is_some()
    }

    /// Whether the job is no longer wanted.
    pub fn gone(self) -> bool {
        self.0.is_some_and(|w| w.stop.load(Ordering::Relaxed) || w.flushes.load(Ordering::Relaxed) != w.submitted)
    }
}

/// A loop to optimize into its two pieces ([`opt::LoopEntry`]): the
/// preamble `name`, which checks what speculation found and runs the
/// first iteration, and the loop `body`.
pub(super) struct LoopJob {
    pub name: Symbol,
    pub body: Symbol,
    pub trace: Trace,
    /// Where the preamble starts (the lists among its inputs assumed).
    pub start: Start,
    /// The head's variables, in the order the preamble passes them on.
    pub names: Vec<Symbol>,
    /// How the loop piece ends ([`End::LiveLoop`]).
    pub looping: End,
    /// The values of `names` when the loop was recorded, when speculating
    /// on them ([`speculate::checks`], which reads only integers).
    pub args: Option<Vec<Value>>,
    /// The function whose frame the loop runs in (`None`: the main graph).
    pub function: Option<Symbol>,
    /// What the program stores in fields, when the trace reads one.
    pub fields: Option<Arc<ProgramFacts>>,
    /// The heap's rows that held every link of their shape the recording
    /// found laid out in a row ([`opt::row`]).
    pub rows: Vec<opt::row::RowShape>,
    /// For the dispatch tier's loop ([`super::tier`]), the variables the
    /// dispatch loop never writes: the loop takes every variable of its
    /// head, constants too (its links pass them all), and its preamble
    /// pins the integers among those and assumes nothing else
    /// ([`speculate::tier_checks`]).
    pub tier: Option<Vec<Symbol>>,
}

/// What a straight trace (a bridge, an entry trace, a loop's segment)
/// starts from: a recording, to convert (on the worker, when it does the
/// job): its name, operations, start and end, and for an entry trace or
/// a segment, which of its parameters to pin.
pub(super) struct Source {
    pub name: Symbol,
    pub trace: Trace,
    pub start: Start,
    pub end: End,
    pub pins: Option<Pins>,
}

/// How an entry trace or a loop's segment, once converted, is pinned
/// ([`speculate::pins`], [`speculate::segment_pins`]): its parameters
/// `names` had the values `args` when it was recorded from `label` of
/// graph `function`. The checks are made where the job is done, and come
/// back with its result ([`Optimized::pins`]) for the hot spot's code to
/// be entered only with those values.
pub(super) struct Pins {
    pub names: Vec<Symbol>,
    pub args: Vec<Value>,
    pub label: Symbol,
    pub function: Option<Symbol>,
    /// A segment's: pins of variables its loop writes are left out.
    pub segment: bool,
}

impl Pins {
    /// The pins of a recording from `label` of graph `function` whose
    /// parameters `names` had the values `args`. The checks read only
    /// integers: an object is given as an atom, which they pass over
    /// alike (and which the worker need not be lent, nor the JIT keep
    /// with the result: `Jit::loans`).
    pub fn new(names: &[Symbol], args: &[Value], label: Symbol, function: Option<Symbol>, segment: bool) -> Pins {
        let args = args.iter().map(|v| if v.holds_objects() { Value::atom("object") } else { v.clone() }).collect();
        Pins { names: names.to_vec(), args, label, function, segment }
    }

    /// The checks `f`, converted from the recording, gets, inserted at
    /// its start; returned as the values they pin.
    fn insert(&self, f: &mut Function, index: &flowc_lang::index::ProgramIndex) -> Vec<(usize, Value)> {
        let Pins { names, args, label, function, segment } = self;
        let checks = if *segment {
            speculate::segment_pins(f, names, args, index, *function, *label)
        } else {
            speculate::pins(f, names, args)
        };
        speculate::insert(f, &checks, *label, *function);
        checks.iter().map(|&(k, v, _)| (k, Value::Int(v))).collect()
    }
}

/// A straight trace to optimize.
pub(super) struct StraightJob {
    pub source: Source,
    /// Operations recorded.
    pub recorded: usize,
    /// When it ends by jumping to a loop's preamble whose state it may
    /// fit: the loop's entry and its body ([`opt::Jump::Enters`]).
    pub into: Option<(opt::LoopEntry, Symbol)>,
    pub fields: Option<Arc<ProgramFacts>>,
    /// What is known of its parameters, in order (any bound value where
    /// missing): a bridge's, what its exit knew ([`flowc_codegen::TraceExit::objects`]).
    pub facts: Vec<flowc_passes::lattice::Info>,
    /// As [`LoopJob::rows`].
    pub rows: Vec<opt::row::RowShape>,
}

/// Optimized pieces, compacted, ready for the code generator.
pub(super) struct Optimized {
    /// In the order they are compiled (each may jump to those before it),
    /// with their kinds and the operations they were recorded from.
    pub pieces: Vec<(Function, Kind, usize)>,
    /// The first piece's restart records ([`opt::Optimized::restarts`]).
    pub restarts: Vec<ResumeId>,
    /// By piece, what was known of the values each exit stores
    /// ([`opt::known`]).
    pub exit_facts: Vec<opt::known::ExitFacts>,
    /// What code generation reads of each piece beside it, made here so
    /// that the running thread does not (`TraceCache::compile_shaped`).
    pub shapes: Vec<Shape>,
    /// A loop's entry state.
    pub entry: Option<opt::LoopEntry>,
    /// Whether the loop skips to its last iteration ([`opt::fast_forward`]).
    pub skips: bool,
    /// What the loop does, for the recordings of loops around it to do
    /// at once ([`opt::skip_of`]).
    pub skip: Option<Box<crate::skip::Skip>>,
    /// How many times a loop's body was optimized (once, or again peeled,
    /// unpeeled or converted otherwise, [`peel_order`]); 0 for a straight
    /// trace.
    pub bodies: u32,
    /// Time it took.
    pub time: Duration,
    /// The pieces' baseline code, when the worker generated it
    /// ([`super::background`], "Code made on the worker"), and the time
    /// that took.
    pub emitted: Option<flowc_codegen::Emitted>,
    pub emit_time: Duration,
    /// Where the worker reduced the pieces once it made their code
    /// ([`super::background`], "Leftovers on the worker"): by piece,
    /// what its exits read, and its operations.
    pub kept: Option<Vec<(super::Kept, usize)>>,
    /// An entry trace's or a segment's pins (see [`Pins`]).
    pub pins: Option<Vec<(usize, Value)>>,
}

impl LoopJob {
    /// Calls `f` on every value the job names: its recording's, its
    /// start's, and the values speculated on.
    pub fn each_value_mut(&mut self, f: &mut impl FnMut(&mut Value)) {
        self.trace.ops.iter_mut().for_each(|op| op.each_value_mut(f));
        self.start.each_value_mut(f);
        self.args.iter_mut().flatten().for_each(f);
    }
}

impl StraightJob {
    /// As [`LoopJob::each_value_mut`], and the constants of what is
    /// known of its parameters.
    pub fn each_value_mut(&mut self, f: &mut impl FnMut(&mut Value)) {
        let Source { trace, start, pins, .. } = &mut self.source;
        trace.ops.iter_mut().for_each(|op| op.each_value_mut(f));
        start.each_value_mut(f);
        pins.iter_mut().flat_map(|p| &mut p.args).for_each(&mut *f);
        if let Some((entry, _)) = &mut self.into {
            entry.each_value_mut(f);
        }
        self.facts.iter_mut().filter_map(|i| i.constant.as_mut()).for_each(f);
    }
}

/// Whether trace `f` reads a field.
pub(super) fn reads_fields(f: &Function) -> bool {
    f.all_insts().any(|(_, i)| matches!(f.insts[i].kind, flowc_ir::InstKind::Get { .. }))
}

/// The forms a loop trace's body is optimized in ([`opt::Peel`]), in
/// order: the second, if any, only where the first does not run to its
/// end at once ([`opt::fast_forward`]); where neither does, the peeled one
/// is kept. For a loop that peeling would reuse work of (`peels`,
/// [`opt::peels_when_invariant`]) and that walks `links` links that come
/// back:
/// - peeling reuses nothing: unpeeled only;
/// - no links: unpeeled, then peeled — a skipping loop is cheaper to
///   compile unpeeled;
/// - links: peeled only — unpeeled, the loop checks its links in every
///   iteration, so it does not skip (one that does not skip peeled is
///   converted again assuming no links, below). Measured on tutorial BF
///   fractal 1: of 244 loops, the 175 that walk links never skipped
///   unpeeled and all skipped peeled; the 69 that walk none all skipped
///   unpeeled. (Trying unpeeled after peeled, first done, made two
///   bodies of three wasted on `tests/corpus/shapes/links_back.fg`.)
fn peel_order(peels: bool, links: usize) -> (opt::Peel, Option<opt::Peel>) {
    use opt::Peel::{Always, Never};
    match (peels, links) {
        (false, _) => (Never, None),
        (true, 0) => (Never, Some(Always)),
        (true, _) => (Always, None),
    }
}

/// Optimizes loop `job` (see [`LoopJob`]); `None` when the preamble
/// cannot define an entry for the loop, or once the job is no longer
/// `wanted`.
pub(super) fn optimize_loop(shared: &Shared, job: LoopJob, wanted: Wanted) -> Option<Optimized> {
    let started = Instant::now();
    let gone = || wanted.gone();
    let give_up = wanted.may_go().then_some(opt::GiveUp(&gone));
    let LoopJob { name, body, trace, start, names, looping, args, function, fields, rows, tier } = job;
    let anchor = trace.anchor;
    // Given to each piece only where it reads a field (the job carries
    // them when the recording read one; a read inside a `pure` call the
    // conversion leaves a call).
    let fields = fields.as_deref();
    let fields_for = |f: &Function| fields.filter(|_| reads_fields(f));
    let end = End::Jump { target: body, params: names.clone() };
    let mut preamble = to_ir::convert(shared.index(), name, &trace, &start, &end);
    let checks = match &args {
        Some(args) if tier.is_some() => speculate::tier_checks(&names, args, tier.as_deref().unwrap_or(&[])),
        Some(args) => speculate::checks(&preamble, &names, args),
        None => Vec::new(),
    };
    speculate::insert(&mut preamble, &checks, anchor, function);
    shared.inspect(&preamble, "conversion");
    // The loop keeps assuming what the preamble speculates on.
    let assumed: Vec<(Symbol, i64, i64)> = checks.iter().map(|&(k, lo, hi)| (start.params[k], lo, hi)).collect();
    let jump =
        opt::Jump::Defines { anchor, function, names: &names, assumed: &assumed, constant_inputs: tier.is_some() };
    let options = opt::Options {
        jump,
        fields: fields_for(&preamble),
        rows: &rows,
        give_up,
        ..opt::Options::new(shared.remove_allocations())
    };
    // (The walk asks first thing whether the job is still wanted.)
    let optimized = opt::optimize_trace(&mut preamble, shared.hints(), &options);
    if optimized.gave_up {
        return None;
    }
    shared.inspect(&preamble, "optimization");
    let preamble_facts = optimized.exit_facts;
    let entry = optimized.entry?;
    if wanted.gone() {
        return None;
    }
    let convert = |links| to_ir::convert_with_links(shared.index(), body, &trace, &entry.start(), &looping, links);
    let (mut looped, links) = convert(true);
    shared.inspect(&looped, "conversion");
    // The loop is peeled again only where its iterations would reuse
    // work of the first ([`opt::Peel::WhenInvariant`]): its preamble
    // is its first iteration already, and what that proved reaches
    // the loop as the facts of its entry. Peeling every loop doubled
    // its compile cost, and the BF interpreters' runs were slower for
    // it (docs/architecture.md, "Measurements behind the comments").
    // A loop that runs to its end at once ([`opt::fast_forward`]) runs one
    // iteration: it is not peeled, whatever it reuses (a BF `[->>+<<]`
    // whose cell comes back: most of the fractal's loops, whose peeling
    // made its compiles a quarter dearer). So the loop is optimized
    // unpeeled first, and again peeled only if it then does not skip —
    // unless it walks links that come back ([`to_ir`], "Links that come
    // back"): unpeeled, such a loop checks its links in every iteration,
    // which a loop that skips cannot, so it is optimized peeled only
    // ([`peel_order`]).
    // Nor does a loop that does not skip keep links assumed to come back
    // in its iterations: one that stops holding would fail at every pass
    // and leave through a bridge (`tests/corpus/shapes/links_back.fg`:
    // 1.57x the time of the loop assuming nothing); it is converted again
    // assuming none.
    let facts = entry.infos();
    let bodies = std::cell::Cell::new(0);
    // (`None`: it gave up, the job no longer wanted.)
    let optimize = |f: &mut Function, peel| {
        bodies.set(bodies.get() + 1);
        let options = opt::Options {
            facts: &facts,
            peel,
            fields: fields_for(f),
            rows: &rows,
            give_up,
            ..opt::Options::new(shared.remove_allocations())
        };
        let optimized = opt::optimize_trace(f, shared.hints(), &options);
        if optimized.gave_up {
            return None;
        }
        // Under `--fuel` too: a loop that skips iterations still ends (and
        // compiled code's fuel is counted per iteration run, [`crate::jit`]).
        let reads = fields_for(f);
        // What the loop does, stated from the loop as optimized, before
        // the fast forward adds its reads of every cell ahead of it
        // ([`opt::skip_of`]).
        let skip = opt::skip_of(f, reads, &entry);
        let skips = opt::fast_forward(f, reads);
        Some((skips, skip.filter(|_| skips).map(Box::new), optimized.exit_facts))
    };
    let (first, then) = peel_order(opt::peels_when_invariant(&looped), links);
    let second = then.map(|_| looped.clone());
    let (mut skips, mut skip, mut body_facts) = optimize(&mut looped, first)?;
    if let (false, Some(peel), Some(mut second)) = (skips, then, second) {
        let facts;
        (skips, skip, facts) = optimize(&mut second, peel)?;
        if skips || peel == opt::Peel::Always {
            looped = second;
            body_facts = facts;
        }
    }
    if !skips && links > 0 && !wanted.gone() {
        let (mut plain, _) = convert(false);
        shared.inspect(&plain, "conversion");
        let peel = if opt::peels_when_invariant(&plain) { opt::Peel::Always } else { opt::Peel::Never };
        (skips, skip, body_facts) = optimize(&mut plain, peel)?;
        looped = plain;
    }
    shared.inspect(&looped, "optimization");
    if wanted.gone() {
        return None;
    }
    let pieces = vec![(looped, Kind::Body, 0), (preamble, Kind::Loop, trace.ops.len())];
    let (pieces, restarts, exit_facts) =
        compact_pieces(pieces, Vec::new(), vec![body_facts, preamble_facts], shared.inspect);
    let shapes = pieces.iter().map(|(f, kind, recorded)| shape(f, kind, *recorded)).collect();
    let time = started.elapsed();
    Some(Optimized {
        pieces,
        restarts,
        shapes,
        entry: Some(entry),
        skips,
        skip,
        bodies: bodies.get(),
        time,
        emitted: None,
        emit_time: Duration::ZERO,
        kept: None,
        pins: None,
        exit_facts,
    })
}

/// The shape of piece `f` of kind `kind`, recorded from `recorded`
/// statements. A straight piece (a bridge or an entry trace: both are
/// optimized as [`Kind::Bridge`] pieces) or a loop's preamble counts them
/// as work each time it is entered (`Shape::work`, at most `i32::MAX`:
/// what a piece adds when it is entered, whichever exit it then leaves
/// by, so an upper bound of the statements it stood in for). Runs of them
/// through linked exits pass no loop header and return to no driver, and
/// the JIT's clock, blind to them, closed the compile budget on programs
/// whose work is mostly there (BF `digits`, its numbers walked by scans:
/// one run in three interpreted 1.4 million statements for want of
/// bridges the budget held back, 0.15 s against 0.03).
pub(super) fn shape(f: &Function, kind: &Kind, recorded: usize) -> Shape {
    let mut shape = Shape::new(f);
    if matches!(kind, Kind::Bridge | Kind::Loop) {
        shape.work = u32::try_from(recorded.min(i32::MAX as usize)).expect("within i32");
    }
    shape
}

/// Optimizes straight trace `job` (see [`StraightJob`]).
pub(super) fn optimize_straight(shared: &Shared, job: StraightJob, wanted: Wanted) -> Option<Optimized> {
    let started = Instant::now();
    let StraightJob { source, recorded, into, fields, facts, rows } = job;
    let Source { name, trace, start, end, pins } = source;
    let mut function = to_ir::convert(shared.index(), name, &trace, &start, &end);
    let pins = pins.map(|p| p.insert(&mut function, shared.index()));
    shared.inspect(&function, "conversion");
    let jump = match &into {
        Some((entry, body)) => opt::Jump::Enters { entry, body: *body },
        None => opt::Jump::Plain,
    };
    let fields = fields.as_deref().filter(|_| reads_fields(&function));
    let gone = || wanted.gone();
    let options = opt::Options {
        jump,
        fields,
        facts: &facts,
        rows: &rows,
        give_up: wanted.may_go().then_some(opt::GiveUp(&gone)),
        ..opt::Options::new(shared.remove_allocations())
    };
    let optimized = opt::optimize_trace(&mut function, shared.hints(), &options);
    if optimized.gave_up {
        return None;
    }
    shared.inspect(&function, "optimization");
    if wanted.gone() {
        return None;
    }
    let (pieces, restarts, exit_facts) = compact_pieces(
        vec![(function, Kind::Bridge, recorded)],
        optimized.restarts,
        vec![optimized.exit_facts],
        shared.inspect,
    );
    let shapes = pieces.iter().map(|(f, kind, recorded)| shape(f, kind, *recorded)).collect();
    let time = started.elapsed();
    Some(Optimized {
        pieces,
        restarts,
        shapes,
        entry: None,
        skips: false,
        skip: None,
        bodies: 0,
        time,
        emitted: None,
        emit_time: Duration::ZERO,
        kept: None,
        pins,
        exit_facts,
    })
}

/// A piece of code to compile: its IR, its kind, and the operations it
/// was recorded from.
pub(super) type Piece = (Function, Kind, usize);

/// Compacts optimized traces `pieces` before their code is generated
/// (the exits name their values by the new numbers; `restarts` are the
/// first piece's restart records, renumbered with it): the code records
/// keep each trace's IR for the whole run, and its arenas otherwise hold
/// every operation recorded and every copy peeling made, most of them
/// removed (hundreds of MB on a long BF run).
/// Each piece's notes of what its exits' values were known to be
/// (`facts`, [`opt::known`]; none where missing) are renumbered with it.
pub(super) fn compact_pieces(
    pieces: Vec<Piece>,
    mut restarts: Vec<ResumeId>,
    facts: Vec<opt::known::ExitFacts>,
    inspect: Option<fn(&Function, &str)>,
) -> (Vec<Piece>, Vec<ResumeId>, Vec<opt::known::ExitFacts>) {
    let mut facts = facts.into_iter();
    let (pieces, facts) = pieces
        .into_iter()
        .enumerate()
        .map(|(k, (f, kind, recorded))| {
            let notes = facts.next().unwrap_or_default();
            let (f, notes) = match k {
                0 => opt::known::compact(f, &mut restarts, notes),
                _ => opt::known::compact(f, &mut Vec::new(), notes),
            };
            if let Some(inspect) = inspect {
                inspect(&f, "compaction");
            }
            ((f, kind, recorded), notes)
        })
        .unzip();
    (pieces, restarts, facts)
}

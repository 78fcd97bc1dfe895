//! The tracing JIT (`flowc run --engine jit`), built the way PyPy's and
//! LuaJIT's are.
//!
//! **Hot spots.** The reference interpreter runs the program with a
//! [`Profiler`] watching labels — the `can_enter_jit` labels, or when a
//! program declares none, the loop headers of every flow graph
//! ([`flowc_ir::loops`] on the lowered program). A hot spot is a watched
//! label plus the values of the variables promoted on entry to it (its
//! [`Key`]: PyPy's green key), so the dispatch label of an interpreter
//! written in the language is as many hot spots as the interpreted
//! program has positions. Arrivals are counted per key.
//!
//! **Loops.** At a key's threshold the tracer records from it
//! ([`crate::record`]). Recording closes the loop when it arrives at the
//! same key — arriving at the label with other promoted values goes on, so
//! a dispatch loop unrolls into the interpreted program's own loop — or
//! stops at a key whose code it can jump into (the trace then ends with a
//! `jump_trace` there: an *entry* trace). A trace takes the variables
//! live at its label ([`Liveness`]): a variable that is dead there cannot
//! be read before it is written again, so it need not be carried. A loop
//! becomes two pieces of code, as in PyPy: its *preamble* — its
//! speculation checks ([`speculate`]) and its first iteration, from the
//! interpreter's variables — which jumps into the *loop*, the same trace
//! converted from the state the preamble ends in ([`opt::LoopEntry`]:
//! objects the first iteration made are virtual there, their fields the
//! loop's parameters, and what is known of the values are facts the loop
//! assumes). The loop is optimized ([`crate::opt`]: peeled again only
//! where its iterations reuse work of the first, objects kept virtual
//! round it, only the variables live at its head carried) and both are compiled into the run's [`TraceCache`].
//!
//! **Bridges.** Every exit of compiled code (a guard, or an `exit` at the
//! end of a trace) counts the times it returns to the driver; at
//! `bridge_threshold` it gets a bridge: a trace recorded from the exit's
//! state (its parameters are the values the exit stores, its start the
//! exit's resume record, virtual objects included) until it arrives at a
//! key whose code it can jump into. The exit is then linked to it in
//! machine code ([`TraceCache::link`]): from then on it never returns to
//! the driver, and the bridge's end jumps straight into the other code —
//! into a loop itself when its state fits the loop's entry (objects still
//! virtual, facts known or checked on the way by *restart* guards, whose
//! own bridges go to the preamble), else into the loop's preamble. A
//! bridge that cannot get anywhere compiled ends by leaving for the
//! interpreter, and that exit can get a bridge in turn. A failing
//! `guard_value` gets a bridge specialized to the value that failed it
//! (its first operation guards that value), whose own guard gets the next
//! value's bridge. A speculation check that fails often gets a loop trace
//! of the same loop that assumes nothing (a retrace).
//!
//! **Never slower than the interpreter.** A key whose recordings keep
//! aborting (too long, or leaving their function) is given up after
//! `max_aborts`. Traces count the loop iterations they run; a key whose
//! code does not pay for its entries from the interpreter (judged every
//! `judge_after` entries) is given up too: code that replaces fewer
//! statements per entry than a round trip between the interpreter and
//! code costs ([`TRANSITION_STEPS`]: a loop of five statements in a
//! function, five rounds per call) costs more in transitions than it
//! saves. What it replaced is its iterations and the way its straight
//! pieces ran up to the exit each entry left by ([`entries_pay`]); code
//! running less than an iteration per entry must replace
//! [`STRAIGHT_MARGIN`] round trips per entry, and only a loop trace may
//! (an entry trace is there to get into its loop).
//! Bridges per tree, values per `guard_value` chain and traces in
//! all are bounded. The interpreter stops only at keys that are hot or
//! have code.
//!
//! **Calls instead of short loops** ([`calls`]): a loop in a function
//! given up for too few rounds per entry, or paying mostly in round trips
//! ([`crossings_weigh`]), has its function's calls compiled instead, and the interpreter hands each later call to the
//! compiled function without leaving its loop (as it does a recursive
//! function's calls).
//!
//! **Megamorphic promotions** ([`Jit::megamorphic`]): a promotion whose
//! variable takes new values for good — objects rebuilt every round of
//! a program, each promoted at a dispatch — makes hot spots that are
//! compiled for one round's values and given up the next, or a
//! `guard_value` whose chain of bridges fills. Once `megamorphic_after`
//! (32) hot spots of one promoting label were given up for not paying,
//! or a chain at one of its guards is full (`max_values`, where the
//! promotion is in a called function and keys no hot spot:
//! `megamorphic_chains`; not a chain whose last guard saw values come
//! back among those that failed it: positions), the promotion is given up: recordings keep its
//! variable a variable (no `guard_value`, [`crate::record::Limits`]'s
//! `unpromoted`), the profiler counts one key there
//! ([`Profiler::drop_greens`]), and the hot spots whose code guarded a
//! value there, or whose entry traces jump into such code, are recorded
//! again. The loop then compiles once for any value
//! (tests/corpus/shapes/rebuild.fg, 40 rounds of 20,000 walks of a
//! fresh chain: 0.39 s, slower than the interpreter's 0.30, to 0.04;
//! the promotion moved into a called function: 0.57-0.82 s, about the
//! interpreter's, to 0.05). An interpreter's promoted program counter
//! keeps its hot spots paying and fills no chain (the BF interpreters
//! of `jit_bf`, hanoi.b, mandelbrot.b: never given up).
//!
//! **A hint that keys nothing** ([`reserved_labels`], [`Jit::move_hint`]):
//! a `can_enter_jit` label that promotes nothing, in a loop that promotes
//! further on — an interpreter's hint on the label every instruction ends
//! at (`next: pc = pc + 1`), on its backward jump, on a test of its
//! if-chain — is one hot spot for every position: its code runs one
//! instruction and fails its `guard_value` on `pc` at the next, every
//! other position a bridge off a chain that fills. (The tutorial BF
//! interpreter so hinted ran public-shaped BF programs in 2-60 s, slower
//! than the interpreter, against 0.03-0.3 s with the hint where it
//! promotes.) The loop's own anchor ([`anchor`], what the JIT watches
//! without hints) is held in reserve: marked in the program the
//! interpreter runs, counted by nothing. A `guard_value` of the hint's tree
//! before that promotion whose failing values came back (each exit
//! remembers what failed it before its bridge: positions repeat, a
//! counter's values do not), or the hint's code given up for not paying,
//! moves the hint: the reserved label is watched, keyed by what it
//! promotes, and the hint is watched no more — from then on as without
//! it. A full chain whose values have not come back yet (a program's
//! first 1,300 positions run once) samples up to [`DECIDE_SAMPLES`] before
//! the promotion is given up as megamorphic (below); a loop promoting a
//! counter under such a hint (tests/corpus/shapes/megamorphic.fg) runs
//! that many rounds interpreted before its generic code.
//!
//! **The dispatch tier** ([`tier`]): an interpreter's dispatch label
//! (`promote pc`, alone or after what may run again: `tier::repeatable`) gets, at its first hot spot, its dispatch loop
//! compiled once for any position, a `guard_cold` where the promotion
//! stood; the positions without code of their own run there rather than
//! in the interpreter, and leave for their own code once they have some.
//!
//! **A compile budget** (`compile_allowance`): compiling is paid for by
//! the run it serves. The JIT records a trace or bridge only while what it
//! has recorded so far, at [`COMPILE_STEPS_PER_OP`] interpreted statements
//! of compile time per recorded operation (what compiling one costs a
//! young run, whose compiles are cold; [`WARM_COMPILE_STEPS_PER_OP`] once
//! it has done [`WARM_AFTER`] statements of work) and [`PIECE_STEPS`] per
//! piece of code, stays within a [`COMPILE_SHARE`]-th of the allowance
//! plus the work the run has done (statements interpreted, those the
//! loop iterations run compiled replaced: as many as each iteration was
//! recorded from, and those straight code replaced: as many as each
//! bridge, entry trace or preamble entered was recorded from, counted by
//! its code in `Ctx::work`) — the ski rental's rule, scaled: spend on buying a fixed
//! share of what has been spent on renting, so a short run pays at most
//! that share more than the interpreter would. A hot spot over budget
//! counts again and asks at its next threshold, and after each deferral
//! twice as late (`Profiler::defer`): one that keeps arriving earns its
//! compile, a short-lived one stops asking. While the budget stays
//! spent, every hot spot's threshold doubles, up to `most_raised` (16)
//! times ([`Jit::budget_closed`]), and is back once a hot spot finds it
//! open: hot spots that are new all the time no longer stop one by one
//! to be deferred. An exit over budget asks at its next failure. A loop
//! within budget is compiled only if its hot spot was arrived at
//! densely enough for its code to pay back
//! ([`promises_payback`]): the profiler keeps the clock at the first
//! arrival of each count (`Profiler::since`), and a loop recorded at a
//! hot spot whose arrivals were spread thin — a small loop entered now
//! and then — is deferred like one over budget, not compiled (judged so
//! twice in a row, until the arrivals it is short of have come:
//! [`Density::arrivals_short`]). Where the
//! arrivals are so thin that no loop, however long, could pay back (it
//! would have to promise more arrivals than the price of compiling one of
//! its operations), nothing is recorded (`Jit::too_sparse` before
//! recording), no entry trace either. The clock counts work, not time,
//! so the JIT's decisions stay deterministic.
//!
//! **A full cache** (`Options::max_traces`): the code a run keeps is
//! bounded, in pieces (with what the JIT keeps of each, 2,000 hold a
//! long run of public BF hanoi.b to some 56 MB; a job the worker has not
//! handed back counts as the two pieces it may become, until a full
//! cache drops those done, not taken and stale — kept until the run's
//! work is [`background::READY_PATIENCE`] times more than when they were
//! submitted: [`Jit::cache_full`]). Pieces
//! smaller than common — little machine code, few exits each — get twice
//! the room, until their code or exits reach what `max_traces` pieces of
//! common size have ([`small_pieces_full`]). Once the
//! cache is full, a hot spot that would make one more is deferred, like one
//! over the budget, and an exit gets no bridge until the next flush,
//! while the code held does most of the work. Judged over windows of
//! `Options::full_window` statements the interpreter does, once the
//! interpreter did more in one than the code held (it no longer runs),
//! all of it is dropped ([`Jit::flush`], as LuaJIT flushes its traces
//! when it runs out of trace numbers): the cache, the JIT's tables of
//! pieces, exits and links, the worker's jobs (done and dropped), and
//! the hot spots that had code count again from zero. What is still hot
//! comes round and is compiled again. Refusing more code for good (what
//! the JIT did before) left a program of thousands of loops run once
//! each — Brainfuck compiled from a bigger language — to the interpreter
//! for the rest of the run once its first 2,000 pieces were made: a
//! quarter of the way through. Flushing whenever the cache was full
//! dropped a program's hot code for a tail of lukewarm loops (hanoi.b,
//! the worker off: 55 flushes, 20 s compiling, 30 s instead of 2). The
//! budget's clock goes on across a flush: compiles paid for are not paid
//! again.
//!
//! **Short bridges past a full cache** (`Options::short_bridges`): an
//! exit of code whose graph has the dispatch tier, failing where the cache
//! is full, still gets a bridge if it reaches the tier's label within
//! `SHORT_BRIDGE_OPS` (64) operations: the bridge ends at its
//! first arrival there, entering the position's code or the tier, and is
//! compiled on the running thread (a few operations; the worker's results
//! are not taken while the cache is full). Such bridges are not the
//! cache's pieces (`Jit::short_bridges` counts them) and are bounded by
//! their own number. Without them every crossing of such an exit — a
//! counted loop's end, left once per round of the program — went to the
//! driver and on into the tier from there. The tier's own exits get
//! their bridges past a full cache whatever their length (they go back
//! into the tier at its label), up to `Options::max_bridges` of them
//! until the next flush: held back, an exit the tier first took after
//! the cache filled sent every crossing to the driver.
//!
//! **Starting late** ([`warmup`], `flowc run --warmup`): the JIT's start
//! has a cost of its own — lowering the program, building its tables,
//! counting arrivals, the first compiles running cold code — which a run
//! of a few milliseconds never wins back. So `flowc run` runs the
//! interpreter alone until the run has done [`WARMUP_STEPS`] statements
//! plus [`WARMUP_PER_STATEMENT`] per statement of the program (what the
//! start costs, measured in statements the interpreter runs in the same
//! time: the ski rental's rule for the start itself). A run that ends
//! sooner is the interpreter's, with nothing of the JIT built; a longer
//! one is paused at the start of a block ([`Machine::run_until`]) and
//! the JIT takes over there ([`Jit::take_over`]), its clocks and counters
//! starting then, the statements done counting against the fuel. What
//! the JIT starts from is prepared on the other core meanwhile for a big
//! program, once the run has done [`prepare_after`] statements
//! ([`interpret_first_preparing`]). `Jit::run`
//! (the library's entry, `compare`, `explore`, the tests) starts at once.
//!
//! **A start in proportion to use** ([`starts_light`], [`Prepared::light`],
//! [`Jit::prepare_later`]). What the JIT needs to take a run over and
//! count its hot spots is little: the labels it watches, the recursive
//! functions whose calls it counts, the objects' layout. What it needs to
//! record and compile — the program lowered, the fields' facts solved —
//! is most of its start (2,000 functions of ten statements: 52 million
//! instructions, against 15 for the labels), and a run whose loops are
//! all too short or too sparse to compile uses none of it. Prepared on
//! the other core during the warm-up, it slowed the interpreter there by
//! about half the work it did (two vCPUs that share more than they
//! seem to). So `flowc run` starts a big program whose text gives its
//! watched labels (no graph promotes, no `can_enter_jit` hint) *light*:
//! the warm-up prepares the labels and the recursive functions from the
//! text, the JIT takes over with them, and the rest is prepared when the
//! first hot spot passes every test before recording (the budget, the
//! density of its arrivals): on another thread, the interpreter going
//! on, the hot spot counting again, until it is done and the JIT adopts
//! it ([`Jit::start_complete`]), whose budget's clock starts then, as a
//! full start's starts at the take-over. Its warm-up is as long as a full
//! start's ([`warmup`]): it pays for the rest. A program that promotes
//! starts as before, its labels found in its graphs as lowered.
//!
//! **State handed over.** Entering code needs the live variables it was
//! recorded with (bound, and those it saw unbound still unbound);
//! otherwise the interpreter goes on, and at the next threshold a variant
//! for the other shape is recorded. Leaving code rebuilds the frames from
//! the exit's resume record ([`crate::resume`]) on top of the frames the
//! code did not run ([`Machine::replace_top`]).
//!
//! **Errors** raised in compiled code name their place like the
//! interpreter's: the tracer records each operation's source site.
//!
//! **Fuel.** Under `--fuel`, traces are compiled with fuel checks: the
//! interpreter counts statements, compiled code one step per loop
//! iteration and per trace entered, both against the same limit — so a
//! runaway loop stops with `fuel_exhausted` in compiled code too, though
//! later (in statements) than the interpreter alone would.
//!
//! **Optimizing on a second core** (`Options::background`, which `flowc
//! run` turns on where the machine has one): a recording's conversion and
//! optimization run on a worker thread while the interpreter goes on;
//! the code is generated and installed at the next hot spot or exit after
//! the worker is done ([`background`]).
//!
//! **Where things are.** This module drives the interpreter and enters
//! code; `recording.rs` records loops and bridges (and aborts),
//! `optimizing.rs` turns a recording into optimized IR (anywhere),
//! `compiling.rs` compiles and registers it, `calls.rs` runs compiled
//! calls, `tier.rs` runs the dispatch tier, `background.rs` runs the
//! worker, `speculate.rs` decides what a loop speculates on, `stats.rs`
//! and `view.rs` report what the JIT made, `log.rs` writes `--jit-log`.

mod background;
mod calls;
mod compiling;
mod joins;
mod log;
mod optimizing;
mod prepare;
mod recording;
mod speculate;
mod stats;
mod tier;
mod trees;
mod view;

pub use prepare::{
    recursive_in_text, starts_light, starts_light_shape, Later, Lower, PrepareApart, PrepareLater, PrepareOnThread,
    Prepared, Preparing,
};
pub use view::{CodeView, ExitView};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::time::{Duration, Instant};

use flowc_codegen::{ExitId, TraceCache, TraceEnd, TraceId};
use flowc_ir::{
    BlockId, Function, FunctionKind, Module, Operand, PackedRecords, ResumeData, ResumeId, ResumeValue, ValueId,
};
use flowc_lang::heap::lend::Loan;
use flowc_lang::index::ProgramIndex;
use flowc_lang::interp::resolve::{CTerm, Graph, Slot, Target};
use flowc_lang::interp::{
    Config, Counts, Frame, Green, Key, KeyMap, KeyState, Liveness, Machine, Outcome, Profiler, Resolved, ResumeFrame,
    RuntimeError, Step, CALL,
};
use flowc_lang::{Env, Program, Symbol, Value};
use flowc_passes::propagate::ProgramFacts;
use std::borrow::Cow;

use crate::record::{record_path, Arrival, Heap, Path, TraceError};
use crate::to_ir::{End, Start};
use crate::{opt, resume};

pub use stats::{ExitReport, Interpreted, KeyReport, NoBridge, Resumed, Stats, TraceReport};

/// Tuning of the JIT.
#[derive(Clone, Debug)]
pub struct Options {
    /// Arrivals at a hot spot before it is traced.
    pub threshold: u32,
    /// Returns of an exit to the driver before it gets a bridge.
    pub bridge_threshold: u32,
    /// Failures of a loop trace's speculation check before the loop is
    /// traced again assuming nothing (each costs an entry for nothing).
    pub retrace_threshold: u32,
    /// Most operations a recording may take before it is abandoned
    /// (checked as each block starts: recording stops where the
    /// interpreter can take over).
    pub trace_limit: usize,
    /// Most iterations of a loop in a called function a recording
    /// follows in one call: past it the function is called rather than
    /// followed (its loop has its own trace).
    pub unroll_limit: u32,
    /// Calls of a recursive function a recording follows inside one
    /// another (PyPy's `max_unroll_recursion`): the next is called. An
    /// object passed down a short recursion stays virtual.
    pub recursion_unroll: usize,
    /// Most bridges in one tree (a loop or entry trace, its bridges, their
    /// bridges...).
    pub max_bridges: usize,
    /// Bridges of one tree from exits inside a followed call of a function
    /// with a loop before the tree's hot spot stops following that
    /// function and calls it instead ([`Jit::branchy_call`]).
    pub call_bridges: u32,
    /// Whether recordings follow loops of their base frame whose rounds
    /// the trace's constants decide ([`crate::constant_loops`]).
    pub constant_loops: bool,
    /// Aborted recordings at a hot spot before the JIT gives up on it.
    pub max_aborts: u32,
    /// Most pieces of code (traces and bridges) at once: the JIT drops
    /// them all when it would make one more and what they hold no longer
    /// runs (see "A full cache"). Pieces smaller than common hold up to
    /// `small_pieces_room` times as many ([`small_pieces_full`]). The
    /// environment variable `FLOWC_MAX_TRACES` sets it (for measuring
    /// what a bigger cache would do).
    pub max_traces: usize,
    /// How many times `max_traces` small pieces the cache holds
    /// ([`SMALL_PIECES_ROOM`]; 1: `max_traces` whatever their size).
    pub small_pieces_room: usize,
    /// Most bridges into the dispatch tier made past a full cache
    /// ([`Jit::cache_full`]; see "Short bridges past a full cache"): an
    /// exit whose bridge the full cache refused went to the driver at
    /// every crossing and on into the tier from there. 0: none. The
    /// environment variable `FLOWC_SHORT_BRIDGES` sets it.
    pub short_bridges: usize,
    /// Statements the interpreter does, once the cache is found full,
    /// before the JIT judges whether the code it holds still runs
    /// ([`FULL_WINDOW`]).
    pub full_window: u64,
    /// Most traces per hot spot (for different sets of variables).
    pub max_variants: usize,
    /// Entries from the interpreter after which (and every as many again)
    /// the JIT judges whether code pays ([`Jit`]'s docs); `u64::MAX` never.
    pub judge_after: u64,
    /// How many hot spots of one promoting label may be given up for not
    /// paying before the promotion is ("Megamorphic promotions").
    pub megamorphic_after: u32,
    /// Whether a promotion is given up when a `guard_value` chain of its
    /// values is full (`max_values`).
    pub megamorphic_chains: bool,
    /// The most the hot spots' threshold is multiplied by while the
    /// compile budget is spent ([`Jit::budget_closed`]; 1: never).
    pub most_raised: u32,
    /// Most values a `guard_value` gets bridges for (a chain of bridges,
    /// one per value): a promoted variable that keeps taking new values
    /// is left to the interpreter.
    pub max_values: u32,
    /// How traces and bridges are compiled when recorded
    /// ([`flowc_codegen::lower::Links::tier`]).
    pub tier: flowc_codegen::compile::Codegen,
    /// Whether loops whose bridges are hot are recompiled as trees
    /// ([`crate::tree`]).
    pub trees: bool,
    /// Statements the dispatch tier's bridges run before it becomes a
    /// tree of it and its bridges ([`TIER_TREE_WORK`], what pays for
    /// its compile; `FLOWC_TIER_TREE=N`: N of them; `None`, or
    /// `FLOWC_TIER_TREE=0`: never), trees
    /// of other loops or not.
    pub tier_tree: Option<u64>,
    /// Bridges recorded from one label, specializing on nothing, before
    /// it becomes a join ([`joins`]; `None`: no joins).
    pub join_after: Option<u32>,
    /// Whether each piece of code keeps its whole IR once compiled, for
    /// [`Jit::traces`], [`Jit::bridges`], [`Jit::views`] and trees. Without
    /// it only what exits and bridges read stays (its values' names and
    /// its resume records, packed: `Kept`), and those lists give each
    /// piece's name alone: a run keeps hundreds of traces, and their
    /// instructions were a seventh of the memory of a long run. `flowc
    /// run` turns it off (unless trees are on).
    pub keep_ir: bool,
    /// Every how many crossings a linked exit checks in with the driver,
    /// which may then grow a tree (a power of two; [`LINK_CHECK`]).
    pub link_check: u64,
    /// Crossings of a link before its bridge is grafted into a tree.
    pub graft_crossings: u64,
    /// The compile budget's allowance, in interpreted statements (see
    /// "A compile budget" above); `None`: no budget.
    pub compile_allowance: Option<u64>,
    /// What the budget lets compiles cost before they have paid back half
    /// of it ([`UNPAID_GRACE`]; `u64::MAX`: no such bound).
    pub compile_grace: u64,
    /// How trees are compiled (environment: `FLOWC_TREE_TIER`).
    pub tree_tier: flowc_codegen::compile::Codegen,
    /// Called with every trace and bridge after conversion
    /// (`"conversion"`) and after optimization (`"optimization"`); tests
    /// run the IR checker here.
    pub inspect: Option<fn(&Function, &str)>,
    /// Whether a run optimizes traces on a second thread while it goes on
    /// interpreting ([`background`]). Without it, what the JIT does is
    /// the same from run to run; with it, which code exists when depends
    /// on how fast the worker is (what the program prints never does).
    /// `flowc run` turns it on where the machine has a second core.
    pub background: bool,
    /// How long the worker waits before each job (`None`: not at all): a
    /// test's stand-in for a loaded machine leaving the worker behind.
    pub worker_delay: Option<std::time::Duration>,
    /// Whether a run ends by counting and describing its hot spots for the
    /// statistics (`Stats::keys`, `arrivals`, `per_key`; always with a JIT
    /// log, which lists them). `flowc run` does only under `--stats`:
    /// describing the hundred most arrived at was about 1% of a 9 ms run.
    pub describe_keys: bool,
    /// Whether a run leaves what it held to the process's exit rather
    /// than freeing it when it ends: the program as the interpreter ran it
    /// (`Resolved`), the machine and its profiler, the run's tables
    /// (liveness, resume plans). `flowc run`
    /// does (the process ends with the run, as it leaves the JIT itself):
    /// freeing a residual main graph of 39,000 blocks and its tables was
    /// 1.5 ms of a 110 ms run that compiled nothing. Nor does the run
    /// wait for its worker's job in hand ([`background::Worker::spawn_detached`]):
    /// whoever sets this keeps the program until the process exits (the
    /// heap is kept by the run, and the jobs' loans by the worker; a JIT
    /// dropped by a panic is not read by the worker).
    pub leave_to_exit: bool,
    /// Whether a recording that arrives at the head of a loop whose code
    /// runs it to its end at once does all its iterations but the last
    /// there and goes on, rather than jump into its code ([`crate::skip`];
    /// environment: `FLOWC_SKIP_INNER=0` turns it off).
    pub skip_inner: bool,
    /// Whether an interpreter's dispatch loop gets a tier compiled once for
    /// the positions without code of their own ([`tier`]; environment:
    /// `FLOWC_DISPATCH_TIER=0` turns it off).
    pub dispatch_tier: bool,
    /// Whether the dispatch tier enters a position's code directly where
    /// it has some ([`Jit::link_position`]), rather than through the
    /// driver (environment: `FLOWC_TIER_LINKS=0` turns it off).
    pub tier_links: bool,
    /// A bridge (but the tier's own) that has passed this many hot spots
    /// without code of their own ends where it next arrives at the dispatch
    /// tier's label, by entering the tier, which runs the positions from
    /// there and enters the code of those that have some (environment:
    /// `FLOWC_TIER_BRIDGE_POSITIONS`). Recording on through positions
    /// without code made bridges of thousands of operations, each path
    /// through a nest of rarely run positions compiled apart; but a cut
    /// bridge on a hot path sends every crossing through the tier's
    /// dispatch and a link. Alternated (2026-12-04), against no limit: at
    /// 32, tutorial BF fractal 5 0.289 -> 0.250 s, fractal 20 0.622 ->
    /// 0.562, the objects interpreter's fractal 5 0.568 -> 0.485, but
    /// public BF hanoi.b 0.35-0.42 -> 0.50 (20 million crossings through
    /// the tier) and at 16 counters 30 28% slower; at 128, fractal 5 6%,
    /// counters 30 6% and hanoi.b 4% faster, the others within noise.
    pub tier_bridge_positions: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            threshold: 50,
            bridge_threshold: 20,
            retrace_threshold: 3,
            trace_limit: 10_000,
            unroll_limit: 64,
            recursion_unroll: 2,
            max_bridges: 64,
            call_bridges: CALL_BRIDGES,
            constant_loops: true,
            max_aborts: 3,
            max_traces: std::env::var("FLOWC_MAX_TRACES").ok().and_then(|s| s.parse().ok()).unwrap_or(2_000),
            small_pieces_room: SMALL_PIECES_ROOM,
            short_bridges: std::env::var("FLOWC_SHORT_BRIDGES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(SHORT_BRIDGES),
            full_window: FULL_WINDOW,
            max_variants: 4,
            max_values: 8,
            judge_after: 1000,
            megamorphic_after: 32,
            megamorphic_chains: true,
            most_raised: 16,
            tier: match std::env::var("FLOWC_TRACE_TIER").as_deref() {
                Ok("optimized") => flowc_codegen::compile::Codegen::Optimized,
                Ok("cheap") => flowc_codegen::compile::Codegen::Cheap,
                _ => flowc_codegen::compile::Codegen::Baseline,
            },
            // Off unless asked for (`FLOWC_TREES`): compiled by Cranelift
            // on the JIT's thread, a tree costs more than it saves on the
            // suite's programs (docs/architecture.md, "Trees").
            trees: flowc_lang::flags::on("FLOWC_TREES"),
            tier_tree: match std::env::var("FLOWC_TIER_TREE").ok().and_then(|s| s.parse::<u64>().ok()) {
                Some(0) => None,
                Some(n) => Some(n),
                None => Some(TIER_TREE_WORK),
            },
            join_after: Some(joins::JOIN_AFTER),
            link_check: LINK_CHECK,
            keep_ir: true,
            graft_crossings: 64,
            compile_allowance: Some(400_000),
            compile_grace: UNPAID_GRACE,
            tree_tier: match std::env::var("FLOWC_TREE_TIER").as_deref() {
                Ok("baseline") => flowc_codegen::compile::Codegen::Baseline,
                Ok("cheap") => flowc_codegen::compile::Codegen::Cheap,
                _ => flowc_codegen::compile::Codegen::Optimized,
            },
            inspect: None,
            background: false,
            worker_delay: None,
            describe_keys: true,
            leave_to_exit: false,
            dispatch_tier: std::env::var("FLOWC_DISPATCH_TIER").as_deref() != Ok("0"),
            skip_inner: std::env::var("FLOWC_SKIP_INNER").as_deref() != Ok("0"),
            tier_links: std::env::var("FLOWC_TIER_LINKS").as_deref() != Ok("0"),
            tier_bridge_positions: std::env::var("FLOWC_TIER_BRIDGE_POSITIONS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(128),
        }
    }
}

/// Whether runs should optimize in the background
/// ([`Options::background`]): where the machine has a second core, unless
/// the environment variable `FLOWC_JIT_BACKGROUND` says `0` (or `1`,
/// forcing it on).
pub fn second_core() -> bool {
    match std::env::var("FLOWC_JIT_BACKGROUND").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => flowc_codegen::cores() >= 2,
    }
}

/// What a piece of compiled code is.
#[derive(Clone, Debug)]
enum Kind {
    /// A loop trace of a hot spot.
    Loop,
    /// From a hot spot into the code of another.
    Entry,
    /// From an exit of other code.
    Bridge,
    /// The loop of a loop trace split in two ([`crate::preamble`]): the
    /// loop trace is its preamble, which jumps here.
    Body,
    /// A loop body and the hot bridges grown from it, as one function
    /// ([`crate::tree`]), compiled optimized; it runs in the body's place.
    Tree,
}

impl Kind {
    /// How reports name it.
    fn name(&self) -> &'static str {
        match self {
            Kind::Loop => "loop",
            Kind::Entry => "entry",
            Kind::Bridge => "bridge",
            Kind::Body => "loop body",
            Kind::Tree => "tree",
        }
    }
}

/// A piece of compiled code.
struct Code {
    kind: Kind,
    /// The optimized trace IR (its resume records rebuild frames on exits;
    /// without its body and records once compiled, see [`without_body`]).
    function: Function,
    /// What its exits and bridges read of its IR, once it was compiled
    /// and its IR is not kept ([`Code::record`], [`Code::value_name`]).
    kept: Option<Kept>,
    /// The flow graph its base frame runs (0: the main graph).
    graph: u32,
    /// What the interpreter hands over when entering it: its base frame's
    /// variables, in order (loop and entry traces) ...
    params: Vec<Symbol>,
    /// ... and the variables live there that must be unbound.
    unbound: Vec<Symbol>,
    /// The label it starts at.
    anchor: Symbol,
    /// Where it starts, for reports.
    start: String,
    entries: u64,
    /// Loop iterations run from its entries.
    iterations: u64,
    /// The statements its entries' straight pieces stood in for (its own
    /// and its bridges' and preambles' recorded operations, up to the exit
    /// each entry left by: [`ExitState::unrun`]).
    straight: u64,
    /// Its entries, iterations and straight work when its tree last grew,
    /// or the compile budget first held back the bridge of one of its
    /// exits: what it is judged by ([`Jit::paid`]) is what it ran since,
    /// as it is now.
    judged_from: (u64, u64, u64),
    recorded_ops: usize,
    /// Operations after optimization (its IR may be gone: `keep_ir`).
    optimized_ops: usize,
    compile_time: Duration,
    /// The loop or entry trace whose tree it belongs to (itself, for
    /// those): bridges of bridges count against the tree's budget.
    root: TraceId,
    /// Bridges in its tree (kept on the root).
    bridges: usize,
    /// For a bridge of a `guard_value`: its place in the chain of such
    /// bridges for one variable (1 for the first); 0 for other code.
    values: u32,
    /// For a loop's preamble: the loop, and what it expects at its head.
    /// Code that jumps to the preamble jumps into the loop instead when
    /// its state matches.
    body: Option<TraceId>,
    entry: Option<opt::LoopEntry>,
    /// The records of the guards that check a loop's facts before
    /// jumping into it: failing one leaves at the loop's head.
    restarts: Vec<flowc_ir::ResumeId>,
    /// Parameters (by position) whose value the code checks where it
    /// starts (an entry trace's pinned values, `speculate::pins`): only a
    /// frame with those values enters it.
    pins: Vec<(usize, Value)>,
    /// For an entry trace, the code it jumps into (whose loop its entries'
    /// iterations run).
    into: Option<TraceId>,
    /// The loop trace that replaced it as its hot spot's code, and runs
    /// where code jumps to its preamble through its slot
    /// ([`Jit::left_its_loop`]; code compiled to jump into its body, or
    /// back to its start from inside it, still runs it, and leaves it
    /// by the exit whose bridge then goes to the new loop).
    replaced_by: Option<TraceId>,
    /// For a loop trace, whether its recording passed other hot spots on
    /// its way round (went through code of other loops' headers or, in an
    /// interpreter, of other instructions): [`Jit::left_its_loop`].
    /// Not for an inner loop cut from another recording.
    passed_keys: bool,
    /// For a loop trace, the hot spots without code its recording passed
    /// on its way round, those of an inner loop cut from another
    /// recording too: [`Jit::nest_done_at_once`]. For a bridge, those its
    /// recording passed: [`Jit::give_way`]. As [`Passed`] fingerprints: a
    /// bridge passes tens of an interpreter's positions, and a long run
    /// makes thousands of bridges.
    passed: Passed,
    /// For a bridge, the exit it is linked to (`None` once it gave way:
    /// [`Jit::give_way`]) and the code it jumps to at its end, if any.
    linked_from: Option<ExitId>,
    jumps_to: Option<TraceId>,
    /// For an entry trace, whether the loop it jumps into was cut from
    /// its own recording (inner loops first): a loop inside its hot
    /// spot's, not one its recording left that loop for
    /// ([`Jit::entry_came_back`]).
    into_inner: bool,
    /// For a loop's preamble, what its loop does when it runs to its end
    /// at once: recordings that arrive at its head do it there
    /// ([`crate::skip`]).
    skip: Option<Box<crate::skip::Skip>>,
    /// What its optimizer knew of the values its exits store, by record:
    /// what a bridge from one starts knowing ([`opt::known`]).
    exit_facts: opt::known::ExitFacts,
}

/// The hot spots a recording passed, as fingerprints of their keys (a
/// deterministic hash: a fingerprint shared by another key makes no more
/// than a needless recording again).
#[derive(Clone, Default)]
pub(super) struct Passed(Box<[u64]>);

impl Passed {
    /// Of the keys `keys`.
    pub(super) fn of<'k>(keys: impl IntoIterator<Item = &'k Key>) -> Passed {
        let mut prints: Vec<u64> = keys.into_iter().map(Passed::print).collect();
        prints.sort_unstable();
        prints.dedup();
        Passed(prints.into_boxed_slice())
    }

    /// Whether a key of fingerprint `print` ([`Passed::print`]) is one of
    /// them (or shares its fingerprint with one).
    pub(super) fn has(&self, print: u64) -> bool {
        self.0.binary_search(&print).is_ok()
    }

    /// The fingerprints.
    pub(super) fn prints(&self) -> &[u64] {
        &self.0
    }

    /// `key`'s fingerprint.
    pub(super) fn print(key: &Key) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        key.hash(&mut h);
        h.finish()
    }
}

/// What the JIT knows of an exit.
struct ExitState {
    /// What it stores, and the code it belongs to.
    exit: flowc_codegen::lower::TraceExit,
    parent: TraceId,
    /// One of a loop trace's speculation checks.
    check: bool,
    to_driver: u64,
    bridge: Option<TraceId>,
    /// No bridge will be made, and why.
    refused: Option<NoBridge>,
    /// The budget held its bridge back once already (its tree's judgment
    /// restarted then).
    held_back: bool,
    /// The iterations its tree's loop had run when it first failed.
    first_failed: Option<u64>,
    /// The statements its piece counts as its work on entry that an
    /// entry leaving here did not run: the piece's recorded operations
    /// after it, as far as its place among the piece's exits tells (exits
    /// are numbered in the order of the trace's guards).
    unrun: u64,
    /// Times its bridge was not made, to leave the loop around its loop to
    /// the interpreter ([`recording::AROUND_TRIES`]).
    left_around: u32,
    /// For a `guard_value`'s exit, the values that failed it before its
    /// bridge ([`sample_of`]; the first `bridge_threshold`, or
    /// [`DECIDE_SAMPLES`] while `deciding`): whether they repeat tells an
    /// interpreter's position from a value that is new every time (see
    /// "A hint that keys nothing").
    failed_with: Vec<u64>,
    /// The failures sampled (values [`sample_of`] does not compare
    /// included).
    sampled: usize,
    /// A value came back among `failed_with`.
    came_back: bool,
    /// Its chain of bridges is full, and a hint that keys nothing may give
    /// way to its promotion: whether the values repeat is being decided
    /// ([`Jit::decide_chain`]).
    deciding: bool,
}

/// The values a full chain's exit samples before its promotion is given
/// up as megamorphic, none of them having come back
/// ([`Jit::decide_chain`]): more than the positions an interpreter runs
/// through once before its first loop (public BF programs that print
/// numbers: some 1,300), at a cost of as many rounds interpreted where the
/// values are new for good.
const DECIDE_SAMPLES: usize = 4096;

impl ExitState {
    /// Its bridge is `bridge` from now on: what failed it before is not
    /// looked at again (only whether a value came back).
    fn linked(&mut self, bridge: TraceId) {
        self.bridge = Some(bridge);
        self.failed_with = Vec::new();
    }

    /// Remembers that `value` failed its `guard_value`, if fewer than
    /// `most` have (`failed_with`, `came_back`).
    fn sample(&mut self, value: Option<&Value>, most: usize) {
        if self.sampled >= most {
            return;
        }
        self.sampled += 1;
        if let Some(s) = value.and_then(sample_of) {
            self.came_back |= self.failed_with.contains(&s);
            self.failed_with.push(s);
        }
    }
}

/// What a value that failed a `guard_value` is remembered as (its exit's
/// `failed_with`): integers as themselves, objects by allocation number,
/// atoms by name, each kind apart; `None` for the others (lists and big
/// integers), which are not compared.
fn sample_of(v: &Value) -> Option<u64> {
    match v {
        Value::Int(i) => Some((*i as u64) << 2),
        Value::Object(o) => Some(o.id() << 2 | 1),
        Value::Atom(s) => Some(u64::from(s.index()) << 2 | 2),
        Value::Big(_) | Value::List(_) => None,
    }
}

#[derive(Default)]
struct KeyCode {
    /// Its loop and entry traces, for different sets of variables.
    variants: Vec<TraceId>,
    aborts: u32,
    /// Its loop traces assume nothing (a speculating one was refused).
    generic: bool,
    ignored: bool,
    /// Given up because recordings follow its loop for their constants
    /// (`Jit::leave_to_constants`), not for failing.
    left_to_constants: bool,
    /// The operations of its loop, recorded (or bounded by the program:
    /// [`round_bound`]) and not compiled because the key was arrived at
    /// too sparsely ([`Jit::too_sparse`]): when the key is hot again, the
    /// loop is judged by them before it is recorded again.
    sparse_ops: Option<Round>,
    /// Times its loop trace left its loop at once and it was recorded
    /// again from inside ([`Jit::left_its_loop`]), at most
    /// `RECORD_INSIDE`.
    recorded_inside: u32,
    /// Times its loop trace was recorded again assuming fewer links laid
    /// out in a row ([`Jit::irregular`]), at most `RECORD_INSIDE`.
    relaid: u32,
    /// Times its loop trace was recorded again round an inner loop done at
    /// once ([`Jit::nest_done_at_once`]), at most `NEST_TRIES`.
    renested: u32,
    /// Its loop trace, to be recorded again round an inner loop done at
    /// once where the interpreter next arrives at the key
    /// ([`Jit::nest_done_at_once`]).
    renest: Option<TraceId>,
    /// Whether its loop is being recorded again so ([`Jit::record_nest`]):
    /// a recording that gives no loop compiles nothing.
    nesting: bool,
    /// That loop trace, until the one recorded inside is registered: code
    /// that jumps to its preamble (entry traces, bridges) then runs the
    /// new one.
    replaced: Option<TraceId>,
}

/// The JIT for one program.
pub struct Jit<'p> {
    /// The program, its lowered functions, and what optimizing needs of
    /// them (shared with the worker that optimizes in the background).
    shared: std::sync::Arc<background::Shared<'p>>,
    /// What the program may store in each field (propagate's facts,
    /// solved once for the program): what a trace's `get` reads. Solved
    /// when the first trace that reads a field is optimized
    /// ([`Jit::fields_for`]), unless solved ahead on the preparing thread
    /// ([`Prepared::solve_fields`]), from the program as lowered: `hints`'
    /// functions and `main`. A run that compiles no such trace does not
    /// pay for it (a propagation over the whole program).
    fields: std::cell::OnceCell<std::sync::Arc<ProgramFacts>>,
    /// The lowered main graph, and its place among the module's
    /// functions, kept for solving `fields` (taken then).
    main: std::cell::Cell<Option<(usize, Function)>>,
    /// The program's main graph, kept for optimizing its functions before
    /// they are compiled, and the program so optimized once it is
    /// ([`Jit::new_cache`]): where the program has functions and is small
    /// enough ([`OPTIMIZE_FUNCTIONS_INSTS`]).
    functions_program: Option<std::rc::Rc<compiling::FunctionsProgram>>,
    /// The fields the program never reads unset ([`Prepared`]), for the
    /// trace cache ([`TraceCache::assume_always_set`]).
    always_set: Vec<Symbol>,
    /// The fields that may hold an object, for the trace cache
    /// ([`TraceCache::assume_links`]).
    links: Vec<Symbol>,
    /// The slots of the program's objects (which the interpreter and
    /// compiled code share).
    layout: &'static flowc_lang::heap::Layout,
    /// Watched labels: the flow graph (a function, or `None` for the main
    /// graph) and the label.
    watched: Vec<(Option<Symbol>, Symbol)>,
    /// Labels held in reserve ([`reserved_labels`]): marked in the
    /// program the interpreter runs, not counted until a hint that keys
    /// nothing gives way to one ([`Jit::move_hint`]), which moves it to
    /// `watched`.
    reserved: Vec<Reserve>,
    /// The labels of `reserved` hints gave way to, watched now. Every
    /// hint that keys nothing in the reserved label's loop gives way with
    /// the first (two hints, `next` and `jump`, in the tutorial BF loop:
    /// the second, finding nothing in reserve, kept its code, its chain
    /// filled and the promotion was given up as megamorphic — `digits
    /// 200` 4.7-17 s against 0.14; four, `fetch` among them, where the
    /// others' hot spots entered the code of the one left, 7-8 s), and a
    /// hint's tree that still asks finds its label here.
    moved_to: Vec<Reserve>,
    /// Recursive functions ([`flowc_ir::calls`]): traces call them rather
    /// than follow them, and their hot calls run compiled functions.
    recursive: HashSet<Symbol>,
    /// Functions whose calls traces stopped following: a recording that
    /// did not close within `trace_limit` spent most of its operations in
    /// one of them (an inner loop unrolled into the outer one). Traces call
    /// them as they call recursive ones.
    not_followed: HashSet<Symbol>,
    /// Functions whose calls the code of one hot spot stopped following,
    /// and the bridges of its tree: a call whose loop ran past
    /// `unroll_limit` there ([`Jit::stop_following_at`]).
    not_followed_at: HashSet<(Symbol, Key)>,
    /// Per tree (its root) and function with a loop, the tree's bridges
    /// recorded from exits inside a followed call of that function
    /// ([`Jit::branchy_call`]).
    call_bridges: HashMap<(TraceId, Symbol), u32>,
    /// The shapes of the loops recordings may follow for their constants.
    constant_loops: crate::constant_loops::ConstantLoops,
    /// Where links a loop assumed laid out in a row were found not to be
    /// ([`Jit::irregular_link`]): recordings no longer say where the
    /// links checked there lay, so no trace assumes it of them again.
    irregular: HashSet<Place>,
    /// Per function, the hot spots whose code followed its calls (recorded
    /// again once it is not followed: [`Jit::stop_following`]).
    followers: HashMap<Symbol, Vec<Key>>,
    /// Per hot spot whose loop is being optimized, having been cut from
    /// outer recordings: the hot spots those started at, asked again at
    /// their next arrival once its code is there ([`Jit::inner_arrived`]).
    outer_waiting: HashMap<Key, Vec<Key>>,
    /// The hot spots asked again so, until they are recorded: a job in
    /// flight that went through one of them does not hold it back
    /// ([`Jit::at_key`]).
    outers_asked: HashSet<Key>,
    /// The heads of loops bridges jumped back to and ended at, to be
    /// counted by the interpreter (`recording::BackJump`): an exit there
    /// gets no bridge while the head has no code and its loop is on its
    /// way, or up to [`recording::AROUND_TRIES`] times otherwise.
    heads_ended_at: HashSet<Key>,
    /// The hot spots that got a loop that runs to its end at once, by
    /// fingerprint ([`Passed::print`]; [`Jit::passed_done_at_once`]).
    skip_loops: HashMap<u64, Key>,
    /// The loops whose recordings passed each hot spot, by its
    /// fingerprint ([`Code::passed`]), and the hot spot each loop is of:
    /// where a loop gets code that does it at once, the loops around it
    /// are found here ([`Jit::nest_done_at_once`]), not by a look at every
    /// hot spot (36,000 of them, at each of 800 loops compiled, in BF
    /// `statements 12`).
    passed_by: HashMap<u64, Vec<TraceId>>,
    loop_keys: HashMap<TraceId, Key>,
    /// What the hot spots' threshold is multiplied by while the compile
    /// budget is spent ([`Jit::budget_closed`]); 1 when it is not.
    raised: u32,
    /// Promotions given up ("Megamorphic promotions"): recordings keep
    /// their variable a variable.
    unpromoted: crate::record::PromoteSites,
    /// Per watched block whose keys carry promoted values: how many of
    /// its hot spots were given up for not paying.
    given_up: HashMap<(u32, u32), u32>,
    options: Options,
    cache: Option<std::rc::Rc<TraceCache>>,
    /// Whether the code counts fuel (compiled for a run with `--fuel`).
    fuel_checks: bool,
    /// During a run with `--fuel`: steps left for compiled code, and the
    /// limit.
    fuel: Option<(u64, u64)>,
    /// Every piece of code, by trace id.
    codes: Vec<Code>,
    keys: KeyMap<KeyCode>,
    /// Hot spots judged too sparse to pay back ([`Jit::too_sparse`]) at
    /// their last judgment, and how many times in a row: from the second,
    /// one waits for the arrivals it is short of. (Apart from `keys`,
    /// which holds the keys recorded and is searched for a piece's key:
    /// most of these are never recorded.)
    sparse_rows: KeyMap<u8>,
    /// Per exit of the cache, by number (boxed: most exits never fail,
    /// and a trace has one per guard).
    exits: flowc_codegen::chunked::Chunked<Option<Box<ExitState>>>,
    /// Every piece of code by name (what `jump_trace` names).
    names: HashMap<Symbol, Option<TraceId>>,
    /// Per base name, the suffix [`Jit::fresh_name`] gave last.
    suffixes: HashMap<Symbol, u32>,
    /// The variables live at each label resume records were asked for,
    /// by function and label ([`Jit::with_resume_live`]): by name, they
    /// hold for every run of the program.
    live_names: HashMap<(Option<Symbol>, Symbol), std::sync::Arc<[Symbol]>>,
    /// The objects named by the results of jobs the worker optimized
    /// (their handles lent, [`background`] "What may cross"): kept while
    /// the tables above may hold those handles, until [`Jit::reset`].
    loans: Loan,
    stats: Stats,
    /// What sent the run back to the interpreter last
    /// (`Stats::interpreted`).
    resumed: Resumed,
    /// The statements compiled code replaced: its loop iterations', and
    /// its straight pieces' (`Ctx::work`); the compile budget's clock
    /// counts them.
    compiled_work: u64,
    /// The operations the budget was charged for compiling the program's
    /// functions for calls ([`Jit::calls_instead`]; 0: not yet).
    function_ops_charged: u64,
    /// Calls the machine ran compiled without stopping ([`calls`]).
    inline_calls: std::rc::Rc<std::cell::Cell<u64>>,
    /// Compiles so far (every [`compiling::RELEASE_EVERY`]-th gives freed
    /// memory back).
    compiles: u64,
    /// Trees ([`trees`]): per loop body, what was built of its tree; the
    /// exits of trees and the exits of the pieces they come from.
    trees: trees::Trees,
    /// The dispatch tier's loop is being compiled (its pieces keep their
    /// IR for its tree: [`Options::tier_tree`]).
    compiling_tier: bool,
    /// Joins ([`joins`]): the tails bridges recorded from each label.
    joins: joins::Joins,
    /// The dispatch tier ([`tier`]), once a label has had one.
    tier: Option<tier::Tier>,
    /// The code each of the tier's links ([`Jit::link_position`]) goes
    /// to, by its code slot's address.
    linked_codes: HashMap<u64, TraceId>,
    /// What the values the tier's links pass must hold: the pins of the
    /// code linked, but the position's own (see `Ctx::link_pins`), ended
    /// by [`tier::PINS_END`].
    link_pins: Vec<[u64; 2]>,
    /// Bridges of no operation among `codes` (jumps into code that
    /// exists): compiled in microseconds, not priced as pieces.
    empty_bridges: u64,
    /// Bridges into the dispatch tier made past a full cache, among
    /// `codes` ([`Options::short_bridges`]): not counted as the cache's
    /// pieces.
    short_bridges: usize,
    /// Bridges of the tier's own exits recorded past a full cache since
    /// the last flush (see "Short bridges past a full cache").
    tier_past_full: usize,
    /// When the cache was found full, since it was last flushed.
    full: Option<Full>,
    /// What the last run did ([`Jit::counts`]).
    counts: Counts,
    /// Statements the interpreter did alone before the JIT took the run
    /// over ([`Jit::take_over`]): not work of the JIT's clock.
    work_before: u64,
    /// The rest of a light start ([`Prepared::light`]), until it is
    /// adopted ([`Jit::start_complete`]).
    rest: Rest,
    log: Option<log::Log>,
}

/// What recording and compiling one operation costs, in statements the
/// interpreter runs in the same time (see "A compile budget"), while the
/// run is young: its first compiles run the compiler's code for the first
/// time and fault in fresh memory.
pub const COMPILE_STEPS_PER_OP: u64 = 200;

/// What recording and compiling one operation costs once the run has done
/// [`WARM_AFTER`] statements of work: the compiler warm, a quarter of
/// [`COMPILE_STEPS_PER_OP`] (docs/architecture.md, "Measurements behind
/// the comments").
pub const WARM_COMPILE_STEPS_PER_OP: u64 = 50;

/// The work (statements, as the budget's clock counts them: those
/// interpreted, and those compiled loop iterations and straight code
/// replaced)
/// after which compiling costs [`WARM_COMPILE_STEPS_PER_OP`]: later than
/// every short run of the suite ends (the budget stays as tight as it was
/// there), early enough that a long run stops deferring the keys and
/// exits it had held back.
pub const WARM_AFTER: u64 = 4_000_000;

/// What a round trip from the interpreter into code and back costs, in
/// interpreted statements: taking the frame's values, entering, leaving
/// by an exit to the interpreter and binding the frame again. Measured
/// on a function whose five-statement loop runs `k` rounds per call,
/// called from code the interpreter runs: the JIT lost at k = 10 and won
/// at k = 14, so a round trip costs some 55-75 statements (0.5 µs;
/// docs/architecture.md, "Round trips between the interpreter and
/// code"). Code entered from the interpreter pays when what it runs
/// per entry would take the interpreter longer: about its recorded
/// operations per loop iteration, and once more for the way in.
pub const TRANSITION_STEPS: u64 = 64;

/// Whether code entered `entries` times from the interpreter, its
/// straight pieces standing in for `straight` statements (up to the exits
/// its entries left by) and its loops running `iterations` iterations of
/// `per_iteration` operations each, paid for its transitions
/// ([`TRANSITION_STEPS`]): more statements replaced than the round trips
/// cost. Code that runs less than an iteration per entry must replace
/// [`STRAIGHT_MARGIN`] times that: its straight way is known only as far
/// as the exits' places tell, and it must win its compile back too. It
/// does pay when its way goes far: a ledger's dispatch of 300 tests, its
/// loop's code left at the test that picks the round's posting, replaced
/// some 300 statements per entry before its bridges came (given up as
/// running no iteration, 200,000 rounds took 0.85 s against the
/// interpreter's 0.80; kept, 0.40).
pub fn entries_pay(entries: u64, iterations: u64, straight: u64, per_iteration: u64) -> bool {
    let round_trips = if iterations >= entries { 1 } else { STRAIGHT_MARGIN };
    replaced(iterations, straight, per_iteration) >= entries.saturating_mul(TRANSITION_STEPS * round_trips)
}

/// How many round trips code running less than an iteration per entry
/// must replace per entry to pay ([`entries_pay`]).
pub const STRAIGHT_MARGIN: u64 = 2;

/// The statements code replaced: its straight pieces' `straight`, and
/// `iterations` loop iterations of `per_iteration`.
fn replaced(iterations: u64, straight: u64, per_iteration: u64) -> u64 {
    straight.saturating_add(iterations.saturating_mul(per_iteration.max(1)))
}

/// The statements of code `c`'s piece after exit `exit`, one of its
/// `exits` (in the order its guards made them), that an entry leaving
/// there did not run: of what the piece counts as its work on entry
/// (its recorded operations; a loop's body piece counts none), the share
/// of the exits after it.
fn unrun_after(c: &Code, exits: &[ExitId], exit: ExitId) -> u64 {
    if matches!(c.kind, Kind::Body) {
        return 0;
    }
    let Some(k) = exits.iter().position(|&e| e == exit) else { return 0 };
    let after = (exits.len() - 1 - k) as u64;
    (c.recorded_ops as u64).saturating_mul(after) / exits.len() as u64
}

/// Whether code entered `entries` times from the interpreter spends a
/// fifth or more of what it saves in round trips: it replaced fewer
/// statements per entry than [`CROSSINGS_WEIGH`] round trips cost (so
/// does all code that runs an iteration per entry and does not pay,
/// [`entries_pay`]). A loop in a function that is entered so has its
/// function's calls compiled (`jit/calls.rs`), whether it keeps its code
/// or not: a
/// function whose loop runs 20 five-statement rounds per call, called
/// from 2,000 call sites, ran 1.37 times the interpreter's speed through
/// its loop's entries (44 ms) and 2.3 times through compiled calls (27
/// ms); forty rounds, 46 -> 30 ms. At a hundred rounds per entry the loop
/// is entered as before.
pub fn crossings_weigh(entries: u64, iterations: u64, straight: u64, per_iteration: u64) -> bool {
    replaced(iterations, straight, per_iteration) < entries.saturating_mul(TRANSITION_STEPS * CROSSINGS_WEIGH)
}

/// Round trips per entry ([`TRANSITION_STEPS`] each) below whose cost
/// in statements replaced a paying loop's round trips weigh
/// ([`crossings_weigh`]).
pub const CROSSINGS_WEIGH: u64 = 4;

/// Every this many crossings of a linked exit (a power of two: the code's
/// check is a mask), the exit returns to the driver as if it had no link,
/// with its values ([`Options::link_check`]): the JIT sees which links are
/// hot and may make a tree of them ([`crate::tree`]), then continues in the
/// bridge. The code generator links exits and counts crossings; when to
/// check in is the JIT's to say.
pub const LINK_CHECK: u64 = 1 << 12;

/// Statements the dispatch tier's bridges run (the way its straight
/// pieces count, `Code::straight`) before the tier becomes a tree
/// ([`Options::tier_tree`]). Compiled by Cranelift on the running
/// thread, the tree of the tutorial BF interpreter's tier and its eleven
/// bridges takes some 8 ms; the tree saves a third of the instructions
/// of each BF instruction that leaves the tier's loop for its bridges.
/// At 8 million, `primes 3` (16-32 million in all, a 40 ms run) made its
/// tree a third of the way in, and ran 45 -> 51 ms; at 64 million it
/// makes none; `statements 1` makes its tree a quarter of the way in,
/// `escape 20` at a tenth, `fractal 5` past half (no faster or slower
/// for it).
pub const TIER_TREE_WORK: u64 = 64_000_000;

/// Statements a run does in the interpreter alone before `flowc run`
/// starts the JIT (see "Starting late"): what the JIT's start costs a
/// small program, in statements the interpreter runs in the same time.
pub const WARMUP_STEPS: u64 = 200_000;

/// Statements of warm-up per statement of the program: what lowering the
/// program and building the JIT's tables for it cost, per statement —
/// measured at 66 (a partial evaluator's residual program, 268,000
/// statements: 0.16 s), 115 (2,000 functions) and 120 (5,000 loops in
/// sequence); the low end, since a long run of a big program pays the
/// whole warm-up in statements interpreted rather than compiled. Most of
/// that start is now prepared on the other core meanwhile
/// ([`Preparing`]): the warm-up is the time it has (5,000 loops in
/// sequence and the residual program: done within it; 2,000 functions:
/// 2.5 ms after it, of 15).
pub const WARMUP_PER_STATEMENT: u64 = 60;

/// The warm-up of `program` (see "Starting late"). A program that starts
/// light ([`starts_light`]) warms up as long: the rest of its start is
/// what the warm-up pays for, and it is asked for as soon as the JIT
/// takes over and a loop is hot. A warm-up for the light start alone (20
/// statements per statement of the program) asked for the rest before
/// the run had done as much as it costs, the ski rental's rule broken:
/// 4,000 straight blocks before a 300,000-round loop over an object ran
/// 28.2 ms against the interpreter's 25.8 (24.3 with a full start); it
/// helped long runs (`300 calls n=20000` 71 -> 64 ms, the residual of
/// tutorial BF escape 20 440 -> 415), which do not need it to beat the
/// interpreter.
pub fn warmup(program: &Program) -> u64 {
    WARMUP_STEPS + WARMUP_PER_STATEMENT * program.statement_count() as u64
}

/// Programs of fewer statements are prepared for the JIT where it takes
/// over rather than on a thread of their own during the warm-up: starting
/// a thread costs the running one more than lowering them (some 0.3 µs
/// per statement). From 200 statements up a run that the JIT takes over
/// gains more than the thread costs where it is started late enough
/// ([`prepare_after`]): at 1,000, the shapes of `jit_short` at their
/// crossovers (324-924 statements) had paid their preparation on the
/// running thread at the take-over, 0.3-0.5 ms of 8-11 ms runs.
pub const PREPARE_APART_STATEMENTS: usize = 200;

/// Whether `program`'s start may be prepared on a thread of its own while
/// the interpreter warms up ([`Preparing`]): a big program. The thread is
/// started only on a machine with a second core (on one, it would take
/// the interpreter's time, and a run that ends within the warm-up would
/// have paid for nothing), which [`PrepareOnThread`] asks when the time
/// to start it comes, not before the run: the question reads the
/// cgroup's files (a dozen system calls, 40-70 µs), which a run that
/// ends within its warm-up never needs.
pub fn prepare_apart(program: &Program) -> bool {
    program.statement_count() >= PREPARE_APART_STATEMENTS
}

/// How the interpreter's part of a run that starts the JIT late went
/// ([`interpret_first`]).
pub enum Warmup {
    /// The run ended (or failed) before the JIT could take it over, after
    /// `Counts`: within the warm-up, or (the last number not 0) that many
    /// statements past it, while the JIT's start was still being prepared
    /// ([`interpret_first_preparing`]).
    Done(Result<Outcome, RuntimeError>, Counts, u64),
    /// Paused: what [`Jit::take_over`] goes on from.
    Paused(Paused),
}

/// A run the interpreter paused ([`Machine::run_until`]): the frames
/// `stack` (the innermost last), about to run `block` of the innermost,
/// after `counts` (statements, which count against the fuel, and
/// allocations, which numbering goes on from); `resolved`, the program as
/// the interpreter ran it, which the JIT goes on with (resolving it again
/// cost a big program's take-over 2-4 ms); `waited`, the statements of
/// those run past the warm-up until the JIT's start was seen prepared
/// ([`interpret_first_preparing`], which asks every
/// [`PREPARED_YET_EVERY`] statements).
pub struct Paused {
    pub stack: Vec<Frame>,
    pub block: u32,
    pub counts: Counts,
    pub resolved: Resolved,
    pub waited: u64,
}

/// Runs `program` from `entry` with `env` in the interpreter alone for at
/// most about `steps` statements (see "Starting late").
pub fn interpret_first(
    program: &Program,
    entry: Symbol,
    env: &[(Symbol, Value)],
    config: &Config,
    steps: u64,
) -> Warmup {
    interpret_first_preparing(program, entry, env, config, steps, None)
}

/// Statements the interpreter runs before a big program's start is
/// prepared on a thread of its own ([`Preparing`]): what starting that
/// thread costs the running one. A run of 1,000 statements that ended
/// within its warm-up took 2.8 ms with the thread started at once and
/// 2.5 ms, as the interpreter alone, without it (alternated 80 times);
/// 50,000 statements take the interpreter some 0.3 ms.
pub const PREPARE_AFTER_STEPS: u64 = 50_000;

/// Statements the preparing thread is started ahead of the warm-up's end
/// for starting it ([`prepare_after`]): 0.05-0.3 ms.
pub const PREPARE_LEAD_STEPS: u64 = 30_000;

/// Statements the preparing thread is started ahead of the warm-up's end
/// per statement of the program, for preparing it ([`prepare_after`]):
/// lowering is some 0.3 µs a statement, the time of 30 or so interpreted
/// ones; twice that.
pub const PREPARE_LEAD_PER_STATEMENT: u64 = 70;

/// The statement of a run whose warm-up is `warmup` statements at which
/// `program`'s start begins to be prepared apart: as late as leaves it
/// time to be done by the warm-up's end ([`PREPARE_LEAD_STEPS`] and
/// [`PREPARE_LEAD_PER_STATEMENT`]), and not before
/// [`PREPARE_AFTER_STEPS`]. A run that ends sooner started no thread: for
/// a small program, most runs that end within the warm-up (a program of
/// 900 statements begins at 161,000 of its 254,000), where starting at
/// [`PREPARE_AFTER_STEPS`] cost them 0.3 ms each; a big one's preparation
/// (2,000 functions: 12 ms) begins at [`PREPARE_AFTER_STEPS`] as before.
pub fn prepare_after(program: &Program, warmup: u64) -> u64 {
    let lead = PREPARE_LEAD_STEPS + PREPARE_LEAD_PER_STATEMENT * program.statement_count() as u64;
    warmup.saturating_sub(lead).max(PREPARE_AFTER_STEPS)
}

/// Statements the interpreter runs at a time past its warm-up while the
/// JIT's start is still being prepared apart ([`interpret_first_preparing`]):
/// some 0.2 ms, the longest the take-over waits once it is ready.
pub const PREPARED_YET_EVERY: u64 = 20_000;

/// [`interpret_first`] that starts `prepare` once the run has done
/// [`prepare_after`] statements and goes on: a run that ends sooner
/// never starts it (how `flowc run` starts preparing a big program
/// apart). Past the warm-up the interpreter goes on, [`PREPARED_YET_EVERY`]
/// statements at a time, until the preparation is done: the take-over
/// does not wait for it (2,000 functions waited 3-7 ms, a tenth of the
/// interpreter's whole run, for a thread that took longer than the
/// warm-up).
pub fn interpret_first_preparing(
    program: &Program,
    entry: Symbol,
    env: &[(Symbol, Value)],
    config: &Config,
    steps: u64,
    prepare: Option<&mut dyn PrepareApart>,
) -> Warmup {
    use flowc_lang::interp::Stage;
    let names: Vec<Symbol> = env.iter().map(|(k, _)| *k).collect();
    let resolved = Resolved::new(program, &names);
    let mut machine = Machine::new(program, &resolved, config);
    let mut waited = 0;
    let after = prepare_after(program, steps);
    let stage = match prepare {
        Some(prepare) if steps > after => match machine.run_until(entry, env, after) {
            Ok(Stage::Paused { stack, block }) => {
                prepare.start();
                let mut stage = machine.continue_until(stack, block, steps);
                let warm = machine.steps();
                loop {
                    match stage {
                        Ok(Stage::Paused { stack, block }) if !prepare.done() => {
                            let more = machine.steps().saturating_add(PREPARED_YET_EVERY);
                            stage = machine.continue_until(stack, block, more);
                        }
                        stage => {
                            waited = machine.steps() - warm;
                            break stage;
                        }
                    }
                }
            }
            done => done,
        },
        _ => machine.run_until(entry, env, steps),
    };
    let counts = Counts { steps: machine.steps(), allocations: machine.allocations() };
    drop(machine);
    match stage {
        Ok(Stage::Paused { stack, block }) => Warmup::Paused(Paused { stack, block, counts, resolved, waited }),
        Ok(Stage::Done(outcome)) => Warmup::Done(Ok(outcome), counts, waited),
        Err(e) => Warmup::Done(Err(e), counts, waited),
    }
}

/// What compiling a piece of code (a loop, its preamble, an entry trace
/// or a bridge) costs besides its operations, in interpreted statements:
/// a loop of five operations, two pieces, took some 190,000 instructions
/// to optimize and generate (callgrind), 60 µs, the time of 6,000
/// statements. Without it the budget priced such loops at a twentieth of
/// that, and a program of 2,000 short-lived ones compiled a thousand
/// loops that never paid back.
pub const PIECE_STEPS: u64 = 3_000;

/// The share of the run's work the compile budget spends (one part in
/// this many).
pub const COMPILE_SHARE: u64 = 3;

/// What `recorded` operations in `pieces` of code cost to compile, in
/// interpreted statements, at the prices of a run that has done `work`
/// statements of work (see "A compile budget").
fn compile_cost(recorded: u64, pieces: u64, work: u64) -> u64 {
    recorded * op_price(work) + pieces * PIECE_STEPS
}

/// What recording and compiling one operation costs a run that has done
/// `work` statements of work, in interpreted statements.
fn op_price(work: u64) -> u64 {
    if work >= WARM_AFTER {
        WARM_COMPILE_STEPS_PER_OP
    } else {
        COMPILE_STEPS_PER_OP
    }
}

/// Whether a loop recorded as `ops` operations promises to pay back its
/// compile (see "A compile budget"): its hot spot counted `arrivals`
/// arrivals over the last `span` statements of a run that has done
/// `elapsed` statements in all, the budget's allowance included (`work`
/// on the budget's clock, which sets the compile's price). The run is
/// taken to go on as long as it has gone, plus the allowance,
/// and the hot spot to be arrived at as densely as over its last count,
/// each arrival an iteration the code runs instead of the interpreter's
/// `ops` statements. A loop that is all the work over its count promises
/// the whole run again; a small loop entered now and then (a BF program's
/// loops of one or two rounds, once per verse of a song) promises a few
/// thousand statements, not the tens of thousands its compile costs, and
/// is not compiled until the run is long enough for it to pay.
pub fn promises_payback(arrivals: u64, span: u64, elapsed: u64, work: u64, ops: u64) -> bool {
    future_arrivals(arrivals, span, elapsed).saturating_mul(ops.max(1)) >= compile_cost(ops, 2, work)
}

/// How densely a hot spot was arrived at, and the clocks that judge
/// whether its loop's compile would pay back ([`promises_payback`]):
/// `arrivals` over the last `span` statements of a run that has done
/// `elapsed` statements (the allowance included), `work` on the budget's
/// clock.
#[derive(Copy, Clone, Debug)]
pub(super) struct Density {
    arrivals: u64,
    span: u64,
    elapsed: u64,
    work: u64,
}

impl Density {
    /// [`promises_payback`] for a loop of `ops` recorded operations.
    pub(super) fn promises(&self, ops: u64) -> bool {
        promises_payback(self.arrivals, self.span, self.elapsed, self.work, ops)
    }

    /// [`Density::promises`] for the loop of `ops` operations, or
    /// (`None`, before anything is recorded) for a loop of some length:
    /// then the arrivals promised must exceed the price of an operation,
    /// since a loop of `n` operations saves `n` statements per arrival
    /// and costs more than `n` times that price ([`compile_cost`]).
    fn promises_at(&self, ops: Option<usize>) -> bool {
        match ops {
            Some(ops) => self.promises(ops as u64),
            None => future_arrivals(self.arrivals, self.span, self.elapsed) > op_price(self.work),
        }
    }

    /// How many more arrivals, at this density, a hot spot that does not
    /// promise ([`Density::promises_at`]) needs before it could: each
    /// arrival adds one to the arrivals promised (the run older by the
    /// statements between two of them). Priced at the compile's lowest
    /// price, the warm one, so that a hot spot deferred that long is
    /// asked no later than it could pass.
    fn arrivals_short(&self, ops: Option<usize>) -> u64 {
        let promised = future_arrivals(self.arrivals, self.span, self.elapsed);
        let needed = match ops {
            Some(ops) => compile_cost(ops as u64, 2, WARM_AFTER).div_ceil(ops.max(1) as u64),
            None => op_price(WARM_AFTER) + 1,
        };
        needed.saturating_sub(promised)
    }
}

/// What a loop is judged by for whether it is too sparse to compile
/// ([`Jit::too_sparse`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub(super) enum Round {
    /// Nothing known of it: whether a loop of any length could pay.
    Any,
    /// Its recording's operations.
    Recorded(usize),
    /// The most operations a round of it can record ([`round_bound`]).
    AtMost(usize),
}

impl Round {
    fn ops(self) -> Option<usize> {
        match self {
            Round::Any => None,
            Round::Recorded(ops) | Round::AtMost(ops) => Some(ops),
        }
    }
}

/// Blocks of a loop past which [`round_bound`] says nothing.
const ROUND_BOUND_BLOCKS: usize = 32;

/// The most operations a loop recording from block `head` of `graph` can
/// record in a round, where the program bounds them: the blocks reachable
/// from `head` without passing it again are at most
/// [`ROUND_BOUND_BLOCKS`], form no cycle of their own (each is recorded at
/// most once a round), call no function (whose operations a recording
/// follows) and include no other label `watched` says the profiler
/// watches (a hot spot there, a join's included, could stop the recording
/// or have it run an inner loop at once); each records at most its
/// statements and a guard or jump for its terminator. A main graph's and
/// a function's loops alike; `None` for any other.
///
/// A loop whose hot spot is arrived at too sparsely for even that many
/// operations to pay back is then not recorded at all: 2,000 functions
/// each with a loop of 20 five-statement rounds, called 30 times in turn
/// (`jit_short`'s many functions), recorded each loop once to find out
/// (42 million instructions of a 750 million run), and compiled none.
pub(super) fn round_bound(graph: &Graph, head: u32, watched: impl Fn(u32) -> bool) -> Option<usize> {
    // (Depth-first from `head`, the blocks visited with whether they are
    // done or on the path: at most `ROUND_BOUND_BLOCKS` of them, a list
    // rather than a flag per block of the graph — a residual program's
    // main graph has tens of thousands (BF escape 20's: 39,000), and this
    // runs at every hot spot without greens.)
    let mut state: Vec<(u32, bool)> = vec![(head, false)];
    let mut ops = 0;
    let mut stack: Vec<(u32, usize)> = vec![(head, 0)];
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        let block = graph.blocks.get(b as usize)?;
        let succ: [Option<Target>; 2] = match &block.term {
            CTerm::Jump(t) | CTerm::Promote { target: t, .. } => [Some(*t), None],
            CTerm::If { then_t, else_t, .. } | CTerm::IfClass { then_t, else_t, .. } => [Some(*then_t), Some(*else_t)],
            CTerm::Print(_) | CTerm::Return(_) | CTerm::Error(_) => [None, None],
            CTerm::Call { .. } => return None,
        };
        if *next == 0 {
            ops += block.stmts.len() + 1;
        }
        match succ.get(*next).copied().flatten() {
            Some(t) => {
                *next += 1;
                let s = t.block()?;
                if s == head {
                    continue;
                }
                if watched(s) {
                    return None;
                }
                match state.iter().find(|(v, _)| *v == s) {
                    None if state.len() < ROUND_BOUND_BLOCKS => {
                        state.push((s, false));
                        stack.push((s, 0));
                    }
                    // Too many blocks, or back on the path: a cycle.
                    None | Some((_, false)) => return None,
                    Some((_, true)) => {}
                }
            }
            None => {
                if let Some(v) = state.iter_mut().find(|(v, _)| *v == b) {
                    v.1 = true;
                }
                stack.pop();
            }
        }
    }
    Some(ops)
}

/// Bytes of machine code a piece of code has on average where the cache
/// holds pieces of common size ([`small_pieces_full`]): public BF
/// hanoi.b's 1,500 pieces have 2.4 MB (and 3 MB of resume records).
pub const PIECE_CODE_BYTES: usize = 2_048;

/// Exits a piece of code has on average where the cache holds pieces of
/// common size ([`small_pieces_full`]): hanoi.b's 1,500 pieces have
/// 20,000, `statements 4`'s 2,000 some 15,000.
pub const PIECE_EXITS: usize = 4;

/// Bridges into the dispatch tier a full cache still takes
/// ([`Options::short_bridges`]).
pub const SHORT_BRIDGES: usize = 2_000;

/// The most pieces a cache of small pieces holds, in `max_traces`
/// ([`small_pieces_full`]).
pub const SMALL_PIECES_ROOM: usize = 2;

/// Whether a cache of `pieces` pieces (jobs on the worker counted as
/// two), whose traces have `code` bytes of machine code and `exits`
/// exits, is full at `max_traces` (`Options::max_traces`): at that many
/// pieces if they are of common size — their code `max_traces` times
/// [`PIECE_CODE_BYTES`] or more, or their exits `max_traces` times
/// [`PIECE_EXITS`]; else, small pieces, once they reach either or are
/// `room` ([`SMALL_PIECES_ROOM`]) times as many. The bound is on what the code
/// keeps (its machine code, its exits' stubs, states and resume records,
/// the JIT's tables of it), which small pieces keep less of: 2,000
/// functions each with a 400-round loop, called 30 times in turn, made
/// 1.5 MB of code and 2,000 exits with 2,000 pieces, room for half their
/// loops; the rest of the results the worker handed back were dropped as
/// the cache filled (16,000 of them) and the JIT ran the program hardly
/// faster than the interpreter (0.92 s against 0.94; now 0.51, 44 MB).
/// Counted by bytes of code alone, `statements 4`'s small pieces of many
/// exits took twice the room and 61 MB instead of 49.
fn small_pieces_full(pieces: usize, code: usize, exits: usize, max_traces: usize, room: usize) -> bool {
    let most = |per_piece: usize| max_traces.saturating_mul(per_piece);
    pieces >= max_traces && (code >= most(PIECE_CODE_BYTES) || exits >= most(PIECE_EXITS) || pieces >= most(room))
}

/// The arrivals a hot spot arrived at `arrivals` times over the last
/// `span` statements of a run of `elapsed` promises ([`promises_payback`]).
fn future_arrivals(arrivals: u64, span: u64, elapsed: u64) -> u64 {
    arrivals.saturating_mul(elapsed) / span.max(1)
}

/// The compile budget's rule (see "A compile budget"): whether `recorded`
/// operations recorded so far, in `pieces` of code, are within the budget
/// of a run that has done `work` statements of work, with `allowance`.
fn within_budget(recorded: u64, pieces: u64, work: u64, allowance: u64) -> bool {
    compile_cost(recorded, pieces, work) * COMPILE_SHARE <= allowance + work
}

/// What compiles may cost (at the budget's prices, in interpreted
/// statements) before they have to have paid back half of it in
/// statements their code replaced ([`pays_back`]): some 10 ms of
/// compiles. Where code pays, it pays back far more, and soon: the BF
/// suite's decisions (worker off) are the same with and without it.
/// Where a program's loops are short-lived — 2,000 functions each with
/// a loop of 20 rounds, called 30 times — compiles return a third of
/// their cost, and the budget, which lets compiles take up to a
/// [`COMPILE_SHARE`]-th of the run, spent it all on them (288 loops
/// compiled, 161 with this bound).
pub const UNPAID_GRACE: u64 = 1_000_000;

/// The grace grows with the run's work, by one part in this many (a
/// tenth of the budget's [`COMPILE_SHARE`]): a run whose first compiles
/// did not pay back still compiles a loop that comes later and stays,
/// after some thirty times its compile cost in work.
pub const UNPAID_SHARE: u64 = 10 * COMPILE_SHARE;

/// The grace `grace` of a run that has done `work` statements of work
/// ([`UNPAID_SHARE`]).
fn grace_at(grace: u64, work: u64) -> u64 {
    grace.saturating_add(work / UNPAID_SHARE)
}

/// Whether compiles that cost `spent` (at the budget's prices) have paid
/// back enough in `returned` statements replaced to go on compiling: up
/// to `grace`, always; past it, only while they returned half their cost.
fn pays_back(spent: u64, returned: u64, grace: u64) -> bool {
    spent <= grace || returned >= spent / 2
}

/// What a full cache held its code back for ([`Jit::may_flush`]):
/// statements the interpreter did, and compiled code did, from when the
/// cache was found full.
#[derive(Copy, Clone)]
struct Full {
    interpreted: u64,
    compiled: u64,
}

/// Statements the interpreter does, once the cache is found full, before
/// the JIT judges whether the code it holds still runs, and between two
/// judgments ([`Jit::may_flush`]): some 10 ms. Public BF hanoi.b, whose
/// cache fills while its code does most of the work, kept it at 500,000
/// and flushed it once at 250,000 (2.1-2.2 s against 1.8); the suite's
/// `statements`, whose code stops running, took the same time at 250,000
/// and at 4 million (docs/architecture.md, "A full cache").
pub const FULL_WINDOW: u64 = 1_000_000;

/// The most instructions (the main graph's and the functions') of a
/// program whose functions are optimized by the eight passes before
/// they are compiled for calls ([`Jit::new_cache`]): passing the whole
/// program once, at the first compiled call, costs what compiling it
/// does.
pub const OPTIMIZE_FUNCTIONS_INSTS: usize = 20_000;

/// The most instructions of the main graph of a program whose functions
/// are optimized ([`OPTIMIZE_FUNCTIONS_INSTS`]) unless its functions have
/// half as many or more.
pub const OPTIMIZE_MAIN_INSTS: usize = 1_000;

/// Bridges of one tree from exits inside followed calls of a function
/// with a loop before the tree's hot spot calls the function instead
/// ([`Options::call_bridges`], [`Jit::branchy_call`]).
pub const CALL_BRIDGES: u32 = 8;

/// Hot spots [`Stats::per_key`] describes when there are more and no log
/// wants them all.
const KEYS_DESCRIBED: usize = 100;

/// Where a run of the JIT starts ([`Jit::run`], [`Jit::take_over`]).
enum Begin<'e> {
    /// At a label of the main graph, with an environment.
    Entry(Symbol, &'e [(Symbol, Value)]),
    /// Where the interpreter paused ([`Paused`], its program taken apart
    /// from it), after what it did.
    Paused { stack: Vec<Frame>, block: u32, counts: Counts },
}

/// The rest of the JIT's start ([`Jit::start_complete`]).
enum Rest {
    /// None to wait for: a full start, or a light start's rest adopted.
    None,
    /// A light start's rest, asked for by no hot spot yet.
    Later(Box<dyn PrepareLater>),
    /// A light start's rest being prepared.
    Preparing(Box<dyn PrepareLater>),
    /// A light start without its rest (none given, or its preparation
    /// failed): the JIT records nothing.
    Missing,
}

/// What one run needs besides the JIT: the resolved program, per-graph
/// liveness, per-code slots, the allocation counter.
struct Run<'c> {
    resolved: &'c Resolved,
    liveness: Vec<Option<Liveness>>,
    /// Per code: the slots of its parameters, then of its unbound
    /// variables, in its base graph.
    slots: Vec<Option<Box<[Option<Slot>]>>>,
    /// Per exit: its resume record decoded for this run (`None` inside
    /// when it does not resolve: the slow path then says why).
    plans: flowc_codegen::chunked::Chunked<Option<Option<Box<resume::Plan>>>>,
    heap: Heap,
    config: &'c Config,
    /// The worker optimizing in the background, with `Options::background`
    /// (started by `start_worker` when the first job comes).
    worker: Option<background::Worker>,
    start_worker: Option<&'c dyn Fn() -> background::Worker>,
}

/// Where a run goes on.
enum Next {
    /// The interpreter runs the stack from this block of its top frame.
    Interpret(u32),
    /// Into this code, with the stack's top frame.
    Enter(TraceId),
    /// Into this code with these values of its parameters (a bridge, from
    /// the values its exit stored), the stack's top frame the one it runs
    /// on.
    EnterWith(TraceId, Vec<Value>),
    Printed(Value),
}

/// The labels the JIT watches: `can_enter_jit` labels (of the main graph,
/// else of the functions that have them), or the loop anchors of every
/// flow graph of `module` (the program lowered once by the caller), then
/// for cycles with no natural loop the targets of their retreating edges.
pub fn watched_labels(program: &Program, module: &Module) -> Vec<(Option<Symbol>, Symbol)> {
    watched_labels_with(program, module, None, true)
}

/// [`watched_labels`] found by the loop forest in every flow graph, a graph
/// that promotes nothing included (where the targets of retreating edges
/// are the same labels, found for less): what the shortcut is tested
/// against. The same labels, perhaps in another order.
pub fn watched_labels_by_loop_forests(program: &Program, module: &Module) -> Vec<(Option<Symbol>, Symbol)> {
    watched_labels_with(program, module, None, false)
}

/// [`watched_labels`] of a program whose main graph `module` may leave
/// out ([`main_wanted`]): the main graph's from its text, from `entry`.
pub fn watched_labels_from(program: &Program, module: &Module, entry: Symbol) -> Vec<(Option<Symbol>, Symbol)> {
    watched_labels_with(program, module, Some(entry), true)
}

/// [`watched_labels`], the shortcut for graphs that promote nothing taken
/// where `shortcut`; the main graph, when `module` has none, from its
/// text and `main_entry` (it must promote nothing).
fn watched_labels_with(
    program: &Program,
    module: &Module,
    main_entry: Option<Symbol>,
    shortcut: bool,
) -> Vec<(Option<Symbol>, Symbol)> {
    let mut graphs: Vec<(Option<&Function>, Option<Symbol>)> = flow_graphs(module).map(|(f, g)| (Some(f), g)).collect();
    if main_entry.is_some() && !graphs.iter().any(|&(_, g)| g.is_none()) {
        graphs.insert(0, (None, None));
    }
    watched_labels_of(program, graphs, main_entry, shortcut)
}

/// [`watched_labels_from`] with nothing lowered, for a program none of
/// whose graphs promotes ([`prepare::starts_light_shape`]): the same
/// labels in the same order, each graph's from its text (the main graph's
/// from `entry`, then the functions' in the program's order, which is the
/// order lowering keeps).
pub fn watched_labels_in_text(program: &Program, entry: Symbol) -> Vec<(Option<Symbol>, Symbol)> {
    let graphs = std::iter::once((None, None)).chain(program.functions().map(|f| (None, Some(f.name)))).collect();
    watched_labels_of(program, graphs, Some(entry), true)
}

/// [`watched_labels_with`] over `graphs`: each flow graph (`None`: the
/// main graph) with its lowered form where it has one.
fn watched_labels_of(
    program: &Program,
    graphs: Vec<(Option<&Function>, Option<Symbol>)>,
    main_entry: Option<Symbol>,
    shortcut: bool,
) -> Vec<(Option<Symbol>, Symbol)> {
    let declared: Vec<Symbol> = program.can_enter_jit_labels().collect();
    if !declared.is_empty() {
        let mut out = Vec::new();
        for l in declared {
            if program.main_blocks().any(|b| b.label == l) {
                out.push((None, l));
            } else {
                out.extend(
                    program.functions().filter(|f| f.blocks.iter().any(|b| b.label == l)).map(|f| (Some(f.name), l)),
                );
            }
        }
        return out;
    }
    let mut out = Vec::new();
    // In the order found; a set, not a search of `out`, says which are
    // in (a main graph of 5,000 loops spent 40 ms searching).
    let mut seen: HashSet<(Option<Symbol>, Symbol)> = HashSet::default();
    let index = ProgramIndex::new(program);
    let signatures = flowc_lang::flow::Signatures::of(program);
    for (f, graph) in graphs {
        // The graph as written, and where it starts: the main graph's
        // lowered function is named for its entry label.
        let (blocks, entry): (Vec<&flowc_lang::ast::Block>, Option<Symbol>) = match graph {
            None => (program.main_blocks().collect(), f.map(|f| f.name).or(main_entry)),
            Some(name) => match index.function(name) {
                Some(source) => (source.blocks.iter().collect(), source.blocks.first().map(|b| b.label)),
                None => (Vec::new(), None),
            },
        };
        // A graph that promotes nothing watches each loop at its header
        // ([`anchor`]), and the header of a natural loop is the target of
        // a retreating edge: the targets are all it watches, found from
        // the program's text, without the graph's lowered form, its
        // dominator tree and loop forest (a third of preparing a program
        // of 2,000 functions).
        let promotes = blocks.iter().any(|b| matches!(b.term, flowc_lang::ast::Terminator::Promote { .. }));
        if shortcut && !promotes {
            let Some(entry) = entry else { continue };
            for label in flowc_lang::flow::retreating_labels(&blocks, entry, &signatures) {
                if seen.insert((graph, label)) {
                    out.push((graph, label));
                }
            }
            continue;
        }
        // (A main graph left out promotes nothing: `main_wanted`; nor
        // does a graph of a light start: `starts_light`.)
        let Some(f) = f else {
            debug_assert!(false, "the graph promotes, and was not lowered");
            continue;
        };
        let cfg = flowc_ir::cfg::Cfg::new(f);
        let retreating = cfg.retreating_targets();
        if !retreating.iter().any(|&r| r) {
            // No cycle: nothing to watch.
            continue;
        }
        let dom = flowc_ir::cfg::DomTree::new(f, &cfg);
        let loops = flowc_ir::loops::LoopForest::with(f, &cfg, &dom);
        for l in loops.loops() {
            if let Some(label) = anchor(f, &loops, l, |label| index.block(graph, label)) {
                if seen.insert((graph, label)) {
                    out.push((graph, label));
                }
            }
        }
        // A cycle entered at more than one block (irreducible: `goto`s
        // into a loop's middle, or a residual program that specialized an
        // instruction twice) has no natural loop, but passes through a
        // target of a retreating edge: watched there, else it would run
        // interpreted for good. In a reducible graph these are the
        // natural loops' headers.
        let headers: HashSet<_> = loops.headers().collect();
        for (b, block) in f.blocks.iter() {
            if !retreating[flowc_ir::ix(b)] || headers.contains(&b) {
                continue;
            }
            if let Some(label) = block.name.filter(|&l| index.block(graph, l).is_some()) {
                if seen.insert((graph, label)) {
                    out.push((graph, label));
                }
            }
        }
    }
    out
}

/// Whether the JIT needs the main graph of `program` lowered, given the
/// module of its functions (`functions`, lowered without it) and its
/// `signatures` (as lowering has them): the front
/// end's `lower_unless_main` leaves it out otherwise. It is needed for
/// what only its lowered form answers — what a field may hold (any object
/// statement anywhere: the whole-program facts, which fields are always
/// set or hold objects, whether allocations show), the loops of a graph
/// that promotes ([`anchor`]), the labels held for hints
/// ([`reserved_labels`]) — and where the program's functions may be
/// optimized with it ([`compiling::FunctionsProgram::wanted`], judged by
/// the least the main graph can lower to: an instruction per statement
/// but copies, over the blocks reachable from `entry`, which lowering
/// takes). A big main graph of integers and calls (5,000 loops in
/// sequence: 55,000 lines) is then not lowered at all, and the other core
/// has nothing to do while the interpreter warms up. (Without an object
/// statement no object can exist: the scans answer as if there were
/// none, lowered or not.)
pub fn main_wanted(
    program: &Program,
    entry: Symbol,
    functions: &Module,
    signatures: &flowc_lang::flow::Signatures,
) -> bool {
    use flowc_lang::ast::{Operator, Stmt, Terminator};
    let objects = |b: &flowc_lang::ast::Block| {
        b.body.iter().any(|s| matches!(s, Stmt::New { .. } | Stmt::Get { .. } | Stmt::Set { .. }))
    };
    if program.main_blocks().any(objects) || program.functions().any(|f| f.blocks.iter().any(objects)) {
        return true;
    }
    if program.main_blocks().any(|b| matches!(b.term, Terminator::Promote { .. }))
        || program.can_enter_jit_labels().next().is_some()
    {
        return true;
    }
    let copy = |s: &Stmt| matches!(s, Stmt::Op1 { op: Operator::Known(flowc_lang::ops::Op::Same), .. });
    let main: Vec<&flowc_lang::ast::Block> = program.main_blocks().collect();
    let reachable = flowc_lang::flow::reachable(&main, entry, signatures);
    let least: usize = reachable.iter().map(|b| b.body.iter().filter(|s| !copy(s)).count()).sum();
    compiling::FunctionsProgram::wanted_for(functions, least)
}

/// The flow graphs of `module` (its main graph and functions, not
/// traces), each with the function it is (`None`: the main graph).
fn flow_graphs(module: &Module) -> impl Iterator<Item = (&Function, Option<Symbol>)> {
    module.functions.iter().filter_map(|f| match f.kind {
        FunctionKind::Main => Some((f, None)),
        FunctionKind::Function => Some((f, Some(f.name))),
        FunctionKind::Trace => None,
    })
}

/// A label held in reserve ([`reserved_labels`]): `label` of `function`
/// (`None`: the main graph), and the hints that key nothing in its loop,
/// which give way to it together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reserve {
    pub function: Option<Symbol>,
    pub label: Symbol,
    pub hints: Vec<Symbol>,
}

/// The labels held in reserve for the `can_enter_jit` labels that
/// promote nothing (see "A hint that keys nothing"): for each loop of
/// the program with such a label among its blocks, the loop's anchor
/// ([`anchor`]) when that promotes and is not a hint itself — the label
/// the JIT would have watched without hints. Empty for a program without
/// hints (its anchors are watched already).
pub fn reserved_labels(program: &Program, module: &Module) -> Vec<Reserve> {
    use flowc_lang::ast::Terminator;
    let declared: HashSet<Symbol> = program.can_enter_jit_labels().collect();
    let mut out = Vec::new();
    if declared.is_empty() {
        return out;
    }
    let index = ProgramIndex::new(program);
    for (f, graph) in flow_graphs(module) {
        let source = |label: Symbol| index.block(graph, label);
        let promotes = |label: Symbol| source(label).is_some_and(|b| matches!(b.term, Terminator::Promote { .. }));
        let keyless =
            |b: BlockId| f.blocks[b].name.is_some_and(|l| declared.contains(&l) && source(l).is_some() && !promotes(l));
        if !f.blocks.iter().any(|(b, _)| keyless(b)) {
            continue;
        }
        let cfg = flowc_ir::cfg::Cfg::new(f);
        let dom = flowc_ir::cfg::DomTree::new(f, &cfg);
        let loops = flowc_ir::loops::LoopForest::with(f, &cfg, &dom);
        for l in loops.loops() {
            let Some(label) = anchor(f, &loops, l, source) else { continue };
            let hints: Vec<Symbol> =
                loops.blocks(l).iter().filter(|&&b| keyless(b)).filter_map(|&b| f.blocks[b].name).collect();
            if !promotes(label) || declared.contains(&label) || hints.is_empty() {
                continue;
            }
            // A loop whose anchor another loop holds already (an inner
            // loop anchored where its outer one is) adds its hints there.
            match out.iter_mut().find(|r| r.function == graph && r.label == label) {
                Some(r) => {
                    for h in hints {
                        if !r.hints.contains(&h) {
                            r.hints.push(h);
                        }
                    }
                }
                None => out.push(Reserve { function: graph, label, hints }),
            }
        }
    }
    out
}

/// The label loop `l` of `f` is watched at: its header, unless the
/// header's block promotes nothing and a block of the loop (not of a loop
/// inside it) that every iteration passes promotes a variable it does not
/// write first — the interpreter's hint placed after the loop's head
/// (`dispatch: more = pc < n; if more goto decode …` then `decode: op =
/// prog[pc]; promote pc then …`). Watched there, the loop's keys are the
/// positions it promotes, as they are where the hint heads the loop. (A
/// header watched instead has one key for every position, each position's
/// code a bridge off the last: the tutorial BF interpreter with its hint
/// so placed ran fractal 5 in 4.4 s against 0.4.) The cost: a promotion
/// of a value that never repeats (a loop counter) so placed makes a hot
/// spot per value, none ever hot, as it does with that promotion at the
/// head: the loop runs interpreted until the profiler's map of keys it
/// cannot count densely is full (`MOST_SPARSE_KEYS`; a counter's first
/// 2^18 + 2^16 values), then the label counts one key and the promotion
/// is given up once its guard's chain of bridges fills. `can_enter_jit`
/// at the head has that sooner (tests/corpus/shapes/megamorphic.fg; see
/// "A hint that keys nothing").
/// `source` finds a source block of `f`'s flow graph by its label.
fn anchor<'a>(
    f: &Function,
    loops: &flowc_ir::loops::LoopForest,
    l: flowc_ir::loops::LoopId,
    source: impl Fn(Symbol) -> Option<&'a flowc_lang::ast::Block>,
) -> Option<Symbol> {
    use flowc_lang::ast::Terminator;
    let h = loops.header(l);
    let header = f.blocks[h].name?;
    // A header that promotes, or goes on to a block that may, keeps its
    // loop's hot spots (its promote chain, `Graph::promote_chain`).
    if source(header).is_none_or(|b| matches!(b.term, Terminator::Promote { .. } | Terminator::Jump(_))) {
        return Some(header);
    }
    let promotes = |b: BlockId| {
        let block = f.blocks[b].name.and_then(&source)?;
        match block.term {
            Terminator::Promote { var, .. } if block.body.iter().all(|s| s.dst() != Some(var)) => Some(block.label),
            _ => None,
        }
    };
    // Whether `b` is on every path from the header to each latch: on the
    // chain of immediate dominators from every latch up to the header.
    // The chains are walked once, each block's count of them kept (walked
    // again per block, the main graph of 2,000 functions called in a
    // loop spent a quarter of its preparation here, quadratic in the
    // loop's size).
    let latches = loops.latches(l);
    let mut chains: HashMap<BlockId, usize> = HashMap::default();
    for &latch in latches {
        let mut at = Some(latch);
        while let Some(x) = at.filter(|&x| x != h) {
            *chains.entry(x).or_default() += 1;
            at = loops.idom(x);
        }
    }
    let on_every_iteration = |b: BlockId| chains.get(&b).copied().unwrap_or(0) == latches.len();
    let inside = loops.blocks(l).iter().copied().filter(|&b| b != h && loops.loop_of(b) == Some(l));
    Some(inside.filter(|&b| on_every_iteration(b)).find_map(promotes).unwrap_or(header))
}

impl<'p> Jit<'p> {
    /// A JIT for `program`, given the program lowered once (`module`: its
    /// functions, loop headers and hints).
    pub fn new(program: &'p Program, module: &Module, options: Options) -> Jit<'p> {
        Jit::prepared(program, Prepared::new(program, module.clone()), options)
    }

    /// A JIT for `program` as [`Prepared`] (on another thread, while the
    /// interpreter warmed up: [`Preparing`]).
    pub fn prepared(program: &'p Program, prepared: Prepared, options: Options) -> Jit<'p> {
        let Prepared {
            hints,
            main,
            watched,
            reserved,
            recursive,
            remove_allocations,
            always_set,
            links,
            layout,
            fields,
            light,
        } = prepared;
        // A row another run found (of this program or another) is not
        // this run's to assume.
        flowc_lang::heap::with(|h| h.rows.reset());
        let shared = background::Shared::new(program, options.inspect, options.worker_delay);
        let mut jit = Jit {
            shared: std::sync::Arc::new(shared),
            functions_program: None,
            main: std::cell::Cell::new(None),
            fields: std::cell::OnceCell::new(),
            always_set,
            links,
            layout,
            watched,
            reserved,
            moved_to: Vec::new(),
            recursive,
            not_followed: HashSet::default(),
            not_followed_at: HashSet::default(),
            call_bridges: HashMap::default(),
            constant_loops: Default::default(),
            followers: HashMap::default(),
            outer_waiting: HashMap::default(),
            outers_asked: HashSet::default(),
            heads_ended_at: HashSet::default(),
            skip_loops: HashMap::default(),
            passed_by: HashMap::default(),
            loop_keys: HashMap::default(),
            raised: 1,
            unpromoted: Default::default(),
            given_up: HashMap::default(),
            options,
            cache: None,
            fuel_checks: false,
            fuel: None,
            codes: Vec::new(),
            keys: KeyMap::default(),
            sparse_rows: KeyMap::default(),
            exits: Default::default(),
            names: HashMap::default(),
            suffixes: HashMap::default(),
            live_names: HashMap::default(),
            loans: Loan::default(),
            stats: Stats::default(),
            resumed: Resumed::Start,
            compiled_work: 0,
            function_ops_charged: 0,
            inline_calls: Default::default(),
            compiles: 0,
            trees: trees::Trees::default(),
            compiling_tier: false,
            joins: joins::Joins::default(),
            tier: None,
            linked_codes: HashMap::default(),
            link_pins: vec![tier::PINS_END],
            empty_bridges: 0,
            short_bridges: 0,
            tier_past_full: 0,
            full: None,
            irregular: HashSet::default(),
            counts: Counts::default(),
            work_before: 0,
            rest: if light { Rest::Missing } else { Rest::None },
            log: std::env::var_os("FLOWC_JIT_LOG")
                .and_then(|path| std::fs::File::create(path).ok())
                .map(|f| log::Log::new(Box::new(std::io::BufWriter::new(f)))),
        };
        if !light {
            jit.take_functions(hints, main, fields, remove_allocations);
        }
        jit
    }

    /// Takes the program's functions as prepared — its hints, main graph
    /// and field facts, and whether objects may be virtual: when the JIT is
    /// made, or when a light start adopts its rest ([`Jit::adopt`]).
    fn take_functions(
        &mut self,
        hints: Module,
        main: Option<(usize, Function)>,
        fields: Option<std::sync::Arc<ProgramFacts>>,
        remove_allocations: bool,
    ) {
        self.functions_program = compiling::FunctionsProgram::of(&hints, main.as_ref());
        self.shared.know(std::sync::Arc::new(hints), remove_allocations);
        // Solved ahead, the facts need the main graph no more.
        self.main.set(if fields.is_some() { None } else { main });
        self.fields = fields.map(std::cell::OnceCell::from).unwrap_or_default();
    }

    /// This JIT, made from a light start ([`Prepared::light`]), adopts
    /// `later`'s preparation once it first wants to record (see "A start
    /// in proportion to use").
    pub fn prepare_later(&mut self, later: Box<dyn PrepareLater>) {
        debug_assert!(matches!(self.rest, Rest::Missing), "a light start's rest");
        self.rest = Rest::Later(later);
        self.stats.light_start = true;
    }

    /// Whether the JIT's start is complete, so that hot spot `key` may be
    /// recorded: always but after a light start, whose rest this starts
    /// preparing the first time it is asked, and adopts once it is done.
    /// Until then `key` counts again, the interpreter going on.
    fn start_complete(&mut self, machine: &mut Machine, key: &Key) -> bool {
        let steps = machine.steps();
        let later = match std::mem::replace(&mut self.rest, Rest::None) {
            Rest::None => return true,
            Rest::Missing => {
                self.rest = Rest::Missing;
                return false;
            }
            Rest::Later(mut later) => {
                later.start();
                self.stats.start_rest = Some((steps, None));
                if self.log.is_some() {
                    let what = describe(key, machine.resolved());
                    self.log(format_args!("the rest of the JIT's start being prepared, first wanted at {what}"));
                }
                later
            }
            Rest::Preparing(later) => later,
        };
        if !later.done() {
            self.rest = Rest::Preparing(later);
            // Counted again from zero, its clock too: judged afresh at its
            // next threshold (asked again sooner, with no clock, hot spots
            // that would have been judged too sparse were recorded at once
            // when the rest came: 1,500 loop nests over an object, 40%
            // more code and four times the compiling on the running
            // thread).
            if let Some(p) = machine.profiler_mut() {
                p.set(key, KeyState::Counting);
            }
            return false;
        }
        match later.finish() {
            Ok(prepared) => {
                self.adopt(prepared);
                self.stats.start_rest = self.stats.start_rest.map(|(asked, _)| (asked, Some(steps)));
                // The budget's clock starts now, as it starts at the
                // take-over of a full start: what the interpreter did
                // meanwhile, as in the warm-up, is no work the JIT may
                // spend a share of (counted, 1,500 loop nests over an
                // object compiled a third more, which did not pay back, and
                // ran 7% slower than from a full start).
                self.work_before = steps;
                self.log(format_args!("the JIT's start complete"));
                true
            }
            // Lowering fails only for an entry label the program does not
            // have, which the run had already found: nothing is recorded.
            Err(_) => {
                self.rest = Rest::Missing;
                false
            }
        }
    }

    /// The JIT takes what `rest`, the rest of its light start
    /// ([`Prepared::rest`]), says of the program in place of what the
    /// light start said (its watched labels stay: the profiler counts
    /// them, and the rest has none).
    fn adopt(&mut self, rest: Prepared) {
        debug_assert!(!rest.light, "the rest of a light start is no light start");
        debug_assert!(rest.watched.is_empty(), "the rest of a light start finds no labels");
        debug_assert_eq!(rest.recursive, self.recursive, "a light start finds the recursive functions a full one does");
        debug_assert!(rest.reserved.is_empty(), "a light start holds no labels in reserve");
        self.take_functions(rest.hints, rest.main, rest.fields, rest.remove_allocations);
        (self.always_set, self.links, self.layout, self.recursive) =
            (rest.always_set, rest.links, rest.layout, rest.recursive);
    }

    /// How the trace cache generates code.
    fn cache_options(&self) -> flowc_codegen::Options {
        flowc_codegen::Options {
            fuel: self.fuel_checks,
            link_check: Some(self.options.link_check),
            ..Default::default()
        }
    }

    /// Writes the JIT log to `out` (instead of `FLOWC_JIT_LOG`'s file).
    pub fn set_log(&mut self, out: Box<dyn std::io::Write>) {
        self.log = Some(log::Log::new(out));
    }

    /// Closes the JIT log, writing out what is buffered, as dropping the
    /// JIT does: for a caller that ends the process without dropping it.
    pub fn close_log(&mut self) {
        self.log = None;
    }

    /// What the last run did, also when it ended in an error: statements
    /// interpreted (and loop iterations of compiled code under `--fuel`),
    /// objects allocated.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// What the JIT did so far, per piece of code too.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        s.not_followed = self.not_followed.len() + self.not_followed_at.len();
        s.row = flowc_lang::heap::with(|h| h.row_stats());
        let Some(cache) = &self.cache else { return s };
        s.code_size = cache.code_size();
        s.exits = cache.exit_count();
        s.functions_optimized = cache.optimized_functions();
        s.record_bytes = self.codes.iter().filter_map(|c| c.kept.as_ref()).map(|k| k.records.heap_bytes()).sum();
        s.bridged = 0;
        for k in self.report_order() {
            let code = &self.codes[k];
            let mut exits = Vec::new();
            for (index, e) in self.exit_views(cache, TraceId(k as u32)).into_iter().enumerate() {
                s.bridged += e.linked;
                if e.to_driver + e.linked == 0 && !e.direct {
                    continue;
                }
                exits.push(ExitReport {
                    index,
                    label: e.label.to_string(),
                    to_driver: e.to_driver,
                    linked: e.linked,
                    direct: e.direct,
                    bridge: e.bridge.map(|b| b.to_string()),
                    no_bridge: e.no_bridge,
                });
            }
            s.per_trace.push(TraceReport {
                name: code.function.name.to_string(),
                kind: code.kind.name(),
                start: code.start.clone(),
                recorded_ops: code.recorded_ops,
                optimized_ops: code.optimized_ops,
                entries: code.entries,
                iterations: code.iterations,
                compile_time: code.compile_time,
                exits,
            });
        }
        s
    }

    /// The codes in the order reports show them: as made, except that a
    /// loop's body follows its preamble.
    fn report_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = Vec::with_capacity(self.codes.len());
        for (k, code) in self.codes.iter().enumerate() {
            if !matches!(code.kind, Kind::Body) {
                order.push(k);
                order.extend(code.body.map(|b| b.0 as usize));
            }
        }
        order
    }

    /// The compiled loop and entry traces with the labels they start at,
    /// in the order they were made; a loop trace split in two is its
    /// preamble followed by its loop.
    pub fn traces(&self) -> Vec<(Symbol, &Function)> {
        let mut out = Vec::new();
        for c in self.codes.iter().filter(|c| matches!(c.kind, Kind::Loop | Kind::Entry)) {
            out.push((c.anchor, &c.function));
            if let Some(b) = c.body {
                out.push((c.anchor, &self.codes[b.0 as usize].function));
            }
        }
        out
    }

    /// The compiled bridges, in the order they were made.
    pub fn bridges(&self) -> Vec<&Function> {
        self.codes.iter().filter(|c| matches!(c.kind, Kind::Bridge)).map(|c| &c.function).collect()
    }

    /// Runs the program from main-graph `entry` with `env`. The outcome's
    /// steps count the interpreted statements only.
    pub fn run(&mut self, entry: Symbol, env: &[(Symbol, Value)], config: &Config) -> Result<Outcome, RuntimeError> {
        let names: Vec<Symbol> = env.iter().map(|(k, _)| *k).collect();
        let resolved = Resolved::new(self.shared.program, &names);
        self.run_from(Begin::Entry(entry, env), resolved, config)
    }

    /// Goes on with a run the interpreter began and `paused`
    /// ([`interpret_first`]; see "Starting late" above), with the program
    /// as it resolved it.
    pub fn take_over(&mut self, paused: Paused, config: &Config) -> Result<Outcome, RuntimeError> {
        let Paused { stack, block, counts, resolved, .. } = paused;
        self.run_from(Begin::Paused { stack, block, counts }, resolved, config)
    }

    /// [`Jit::run`] or [`Jit::take_over`], on the program as `resolved`.
    fn run_from(&mut self, begin: Begin, mut resolved: Resolved, config: &Config) -> Result<Outcome, RuntimeError> {
        self.work_before = 0;
        // Judged on this run's clocks, which start again.
        self.full = None;
        if config.fuel.is_some() && !self.fuel_checks {
            // Code made without fuel checks could loop forever: start over.
            self.reset();
            self.fuel_checks = true;
        }
        let shared = self.shared.clone();
        let program = shared.program;
        let profiler = self.profiler(&mut resolved);
        let mut machine = Machine::new(program, &resolved, config);
        machine.set_profiler(profiler);
        let result = std::thread::scope(|scope| {
            // Started with the first job: a run that compiles nothing
            // starts no thread. A run that leaves what it holds to the
            // process's exit does not wait for it either.
            let detached = self.options.leave_to_exit;
            let start = || match detached {
                // SAFETY: `leave_to_exit`'s caller keeps the program until
                // the process exits, and the run frees neither its heap nor
                // its code (`Options::leave_to_exit`).
                #[allow(unsafe_code)]
                true => unsafe { background::Worker::spawn_detached(shared.clone()) },
                false => background::Worker::spawn(scope, shared.clone()),
            };
            let mut run = Run {
                resolved: &resolved,
                liveness: vec![None; resolved.graphs.len()],
                slots: Vec::new(),
                plans: Default::default(),
                // The layout the interpreter resolved the program with (a
                // scan of the whole program, not made again).
                heap: Heap { allocations: 0, layout: resolved.layout },
                config,
                worker: None,
                start_worker: self.options.background.then_some(&start as &dyn Fn() -> background::Worker),
            };
            let result = self.drive(&mut machine, &mut run, begin);
            // Jobs not yet installed are dropped with the worker (which
            // stops after its job in hand).
            if let Some(w) = run.worker.take() {
                self.stats.dropped_jobs += w.pending_jobs();
                self.stats.most_pending = self.stats.most_pending.max(w.most_pending);
                self.stats.lent_jobs += w.lent;
            }
            let allocations = run.heap.allocations;
            if self.options.leave_to_exit {
                std::mem::forget(run);
            }
            (result, allocations)
        });
        let (result, allocations) = result;
        self.stats.calls += self.inline_calls.take();
        self.counts = Counts { steps: machine.steps(), allocations: machine.allocations().max(allocations) };
        if let Some(p) = machine.profiler().filter(|_| self.options.describe_keys || self.log.is_some()) {
            self.stats.keys = p.keys().count();
            self.stats.arrivals = p.keys().map(|(_, n, _)| n as u64).sum();
            // Every hot spot for the log, else those that can be among the
            // most arrived at (describing twelve thousand keys costs what
            // a short run does).
            let mut counts: Vec<u32> = p.keys().map(|(_, n, _)| n).collect();
            let least = if self.log.is_some() || counts.len() <= KEYS_DESCRIBED {
                0
            } else {
                counts.select_nth_unstable_by(KEYS_DESCRIBED - 1, |a, b| b.cmp(a));
                counts[KEYS_DESCRIBED - 1]
            };
            let mut keys: Vec<KeyReport> = p
                .keys()
                .filter(|(_, n, _)| *n >= least)
                .map(|(k, n, state)| KeyReport {
                    key: describe(&k, &resolved),
                    arrivals: n,
                    state: match state {
                        KeyState::Counting => "counting",
                        KeyState::Enter => "compiled",
                        KeyState::Ignored => "given up",
                    },
                })
                .collect();
            keys.sort_by(|a, b| b.arrivals.cmp(&a.arrivals).then_with(|| a.key.cmp(&b.key)));
            self.stats.per_key = keys;
        }
        if self.log.is_some() {
            let stats = self.stats();
            let summary = format!("{stats}\nevery hot spot:\n{}", stats.keys_text());
            if let Some(log) = &mut self.log {
                log.text(&summary);
            }
        }
        if self.options.leave_to_exit {
            std::mem::forget(machine);
            std::mem::forget(resolved);
        }
        result
    }

    /// Drops every piece of code in the middle of a run, at a hot spot or
    /// exit the interpreter goes on from (no code runs): the cache, what
    /// the JIT knows of each piece, the worker's jobs (see "A full
    /// cache"). Hot spots that had code count again from zero.
    fn flush(&mut self, machine: &mut Machine, run: &mut Run) {
        let (pieces, mut jobs) = (self.codes.len(), 0);
        if let Some(w) = run.worker.as_mut() {
            jobs = w.forget_all();
            self.stats.dropped_jobs += jobs;
            self.stats.flushed_jobs += jobs;
        }
        // New code keeps getting new names: a log stays readable.
        let suffixes = std::mem::take(&mut self.suffixes);
        self.reset();
        // The machine's compiled calls ran the cache just dropped.
        machine.set_call_code(None);
        self.suffixes = suffixes;
        run.slots.clear();
        run.plans.clear();
        if let Some(p) = machine.profiler_mut() {
            p.forget_code();
        }
        self.stats.flushes += 1;
        self.log(format_args!("flushed: {pieces} pieces of code and {jobs} jobs, the most the cache holds"));
        flowc_codegen::release_freed_memory();
    }

    /// Drops every piece of code.
    fn reset(&mut self) {
        self.cache = None;
        self.codes.clear();
        self.keys.clear();
        self.sparse_rows.clear();
        self.exits.clear();
        self.names.clear();
        self.suffixes.clear();
        self.trees = trees::Trees::default();
        self.joins = joins::Joins::default();
        // The tier's code goes with the rest; its label may have it again.
        if let Some(t) = &mut self.tier {
            t.code = None;
        }
        self.linked_codes.clear();
        self.link_pins = vec![tier::PINS_END];
        self.followers.clear();
        self.outer_waiting.clear();
        self.outers_asked.clear();
        self.heads_ended_at.clear();
        self.skip_loops.clear();
        self.passed_by.clear();
        self.loop_keys.clear();
        self.empty_bridges = 0;
        self.short_bridges = 0;
        self.tier_past_full = 0;
        self.full = None;
        // Last: the tables above may have held lent handles of these.
        self.loans = Loan::default();
    }

    /// A profiler for `resolved` watching the JIT's labels (marked in
    /// `resolved`), knowing which keys have code and which are ignored.
    fn profiler(&self, resolved: &mut Resolved) -> Profiler {
        let mut labels = Vec::new();
        for (function, label) in &self.watched {
            if let Some(g) = resolved.graph_of(*function) {
                if let Some(&b) = resolved.graphs[g as usize].labels.get(label) {
                    labels.push((g, b));
                }
            }
        }
        for f in &self.recursive {
            if let Some(&g) = resolved.functions.get(f) {
                labels.push((g, CALL));
            }
        }
        let mut p = Profiler::new(resolved, &labels, self.options.threshold);
        for Reserve { function, label, .. } in &self.reserved {
            if let Some(g) = resolved.graph_of(*function) {
                if let Some(&b) = resolved.graphs[g as usize].labels.get(label) {
                    p.reserve(resolved, g, b);
                }
            }
        }
        // Joins made in earlier runs: watched again, for their code.
        self.joins.watch(&mut p, resolved);
        if let Some(t) = self.tier.as_ref().filter(|t| t.code.is_some() && !t.refused) {
            p.dispatch(t.g, t.block);
        }
        for (key, kc) in &self.keys {
            if kc.ignored {
                p.set(key, KeyState::Ignored);
            } else if !kc.variants.is_empty() {
                p.set(key, KeyState::Enter);
            }
        }
        p
    }

    fn drive(&mut self, machine: &mut Machine, run: &mut Run, begin: Begin) -> Result<Outcome, RuntimeError> {
        let mut step = match begin {
            Begin::Entry(entry, env) => machine.run_hot(entry, env)?,
            Begin::Paused { mut stack, block, counts } => {
                machine.charge(counts.steps);
                machine.set_allocations(counts.allocations);
                machine.adopt(&mut stack);
                // The JIT's clock (its compile budget) starts now.
                self.work_before = counts.steps;
                machine.continue_hot(stack, block)?
            }
        };
        self.stats.interpreted.add(Resumed::Start, machine.steps() - self.work_before);
        loop {
            let (key, mut stack, block) = match step {
                Step::Done(outcome) => return Ok(outcome),
                Step::Hot { key, stack, block } => (key, stack, block),
            };
            run.heap.allocations = machine.allocations();
            // Compiled code takes one step per loop iteration from what the
            // interpreter left; the interpreter is charged what it took.
            self.fuel = run.config.fuel.map(|limit| (limit.saturating_sub(machine.steps()).max(1), limit));
            let before = self.fuel.map_or(0, |(left, _)| left);
            let next = self.hot(machine, run, &key, &mut stack, block);
            if let Some((left, _)) = self.fuel.take() {
                machine.charge(before - left);
            }
            match next? {
                Next::Printed(value) => {
                    return Ok(Outcome { value, steps: machine.steps(), allocations: run.heap.allocations });
                }
                Next::Interpret(block) => {
                    machine.set_allocations(run.heap.allocations);
                    let before = machine.steps();
                    step = machine.continue_hot(stack, block)?;
                    self.stats.interpreted.add(self.resumed, machine.steps() - before);
                }
                Next::Enter(_) | Next::EnterWith(..) => unreachable!("hot runs code until the interpreter takes over"),
            }
        }
    }

    /// The interpreter stopped at `key` (the top frame of `stack` about to
    /// run `block`): runs its code, or records some, for as long as one
    /// piece of code leads to another.
    fn hot(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        key: &Key,
        stack: &mut Vec<Frame>,
        block: u32,
    ) -> Result<Next, RuntimeError> {
        self.resumed = Resumed::Other;
        self.tier_clock(machine);
        let mut next = if self.stopped_for_tier(machine, key) {
            Next::Interpret(block)
        } else {
            self.at_key(machine, run, key, stack, block)?
        };
        loop {
            next = match next {
                Next::Enter(code) => {
                    self.resumed = Resumed::Exit;
                    self.execute(machine, run, code, stack)?
                }
                Next::EnterWith(code, args) => {
                    self.resumed = Resumed::Exit;
                    self.execute_with(machine, run, code, &args, stack)?
                }
                // Where the interpreter would go on at the dispatch tier's
                // label, the tier does, for a position without code.
                Next::Interpret(block) => match self.tier_instead(machine, run, stack, block) {
                    Some(tier) => tier,
                    None => return Ok(Next::Interpret(block)),
                },
                other => return Ok(other),
            }
        }
    }

    /// What to do at `key`: enter a trace of it that takes the top frame's
    /// variables, else record one.
    fn at_key(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        key: &Key,
        stack: &mut Vec<Frame>,
        block: u32,
    ) -> Result<Next, RuntimeError> {
        if key.block == CALL {
            return self.call_compiled(machine, run, key, stack);
        }
        self.collect_done(machine, run);
        if let Some((pending, result)) = run.worker.as_mut().and_then(|w| w.take_key(key)) {
            self.install(machine, pending, result);
        }
        let top = stack.last().expect("a frame");
        if let Some(root) = self.nest_again(machine, run, key, top) {
            return self.record_nest(machine, run, key, root, stack, block);
        }
        let top = stack.last().expect("a frame");
        if let Some(kc) = self.keys.get(key) {
            if let Some(code) = kc.variants.iter().copied().find(|&c| self.admits_frame(run, c, top)) {
                self.link_position(machine, key, code);
                return Ok(Next::Enter(code));
            }
        }
        let held = match run.worker.as_mut() {
            Some(w) if w.passed(key) => w.take_holding(key),
            _ => Vec::new(),
        };
        for (pending, result) in held {
            self.install(machine, pending, result);
        }
        if let Some(w) = &run.worker {
            if w.has_key(key) {
                // Its code is being optimized: interpreted, and asked for
                // again a little later ([`background::Worker::next_ask`]).
                let after = run.worker.as_mut().expect("looked at").next_ask(key);
                if let Some(p) = machine.profiler_mut() {
                    p.ask_after(key, after);
                }
                self.resumed = Resumed::Waiting;
                return Ok(Next::Interpret(block));
            }
            // (An outer loop asked again once its inner loop's code came
            // is recorded now: a job that went through its head is no loop
            // of it. Counted again, it went on by bridges round its inner
            // loops, which ran round by round: `digits 200`'s slow mode,
            // its divmod loop at BF position 2705.)
            let asked = self.outers_asked.contains(key);
            if w.passed(key) && !asked && self.keys.get(key).is_none_or(|kc| kc.variants.is_empty()) {
                // On the path of code being optimized: counted again.
                if let Some(p) = machine.profiler_mut() {
                    p.set(key, KeyState::Counting);
                }
                self.resumed = Resumed::Waiting;
                return Ok(Next::Interpret(block));
            }
        }
        if let Some(kc) = self.keys.get(key) {
            let variants = kc.variants.len();
            if variants > 0 {
                // No trace takes these variables. Arrived at as a key with
                // code: count from zero, and record one for them at the
                // threshold (at once if it has as many as it may have:
                // give up on the key). Arrived at by the count: now.
                let p = machine.profiler_mut().expect("the JIT runs with a profiler");
                if variants >= self.options.max_variants {
                    p.set(key, KeyState::Ignored);
                    return Ok(Next::Interpret(block));
                }
                if p.state(key) == KeyState::Enter {
                    p.set(key, KeyState::Counting);
                    return Ok(Next::Interpret(block));
                }
            }
        }
        if self.cache_full(run, machine.steps()) {
            if !self.may_flush(machine.steps()) {
                // The code held is what runs: kept, and this hot spot
                // asks again later.
                self.stats.deferred += 1;
                if let Some(p) = machine.profiler_mut() {
                    p.defer(key);
                }
                self.resumed = Resumed::Deferred;
                return Ok(Next::Interpret(block));
            }
            // All code goes, and this hot spot is the first the JIT
            // compiles again (see "A full cache").
            self.flush(machine, run);
        }
        if !self.affordable(machine, run) {
            // Over budget: count again from zero, ask at the threshold,
            // and after each deferral twice as late (`Profiler::defer`).
            // Every hot spot waits longer while the budget stays spent
            // (`Jit::budget_closed`).
            self.stats.deferred += 1;
            self.budget_closed(machine);
            let deferrals = machine.profiler_mut().map(|p| p.defer(key));
            if self.log.is_some() {
                let what = describe(key, run.resolved);
                let times = deferrals.unwrap_or(0);
                self.log(format_args!("{what} deferred: over the compile budget ({times} times)"));
            }
            self.resumed = Resumed::Deferred;
            return Ok(Next::Interpret(block));
        }
        self.budget_open(machine);
        // A loop too sparse to compile last time is judged by the
        // operations it was recorded as (or bounded by) then, not recorded
        // again while it still is; one whose rounds the program bounds, by
        // that bound (`round_bound`: recording it would say no more than
        // that it is too sparse, where even the bound is); any other, by
        // whether a loop of any length could pay.
        let ops = match self.keys.get(key).and_then(|kc| kc.sparse_ops) {
            Some(ops) => ops,
            // (A hot spot with greens — an interpreter's `pc` — is one of
            // many its label's block stands for: a recording from it goes
            // on through that block, for other greens.)
            None if key.greens.is_empty() => {
                let graph = &run.resolved.graphs[key.graph as usize];
                let profiler = machine.profiler().expect("the JIT runs with a profiler");
                let watched = |b: u32| profiler.watches(key.graph, b);
                round_bound(graph, key.block, watched).map_or(Round::Any, Round::AtMost)
            }
            None => Round::Any,
        };
        if self.too_sparse(machine, key, ops, || describe(key, run.resolved)) {
            self.resumed = Resumed::Sparse;
            return Ok(Next::Interpret(block));
        }
        if !self.start_complete(machine, key) {
            self.resumed = Resumed::Starting;
            return Ok(Next::Interpret(block));
        }
        self.resumed = Resumed::Recorded;
        if self.wants_tier(run, key) {
            return self.record_tier(machine, run, key, stack, block);
        }
        self.record_loop(machine, run, key, stack, block, Some(recording::Anchor::hot(key)))
    }

    /// Whether the cache holds `Options::max_traces` pieces, the jobs the
    /// worker has not handed back counted as the pieces they may become
    /// (see "A full cache").
    ///
    /// Results of the worker not taken yet count as code; when the cache
    /// is full the stale ones are dropped first
    /// ([`background::Worker::drop_ready`]): code that came after its
    /// loop ended, kept for a while in case it did not
    /// ([`background::READY_PATIENCE`]). With inner loops sent to the
    /// worker ("Inner loops first"), public BF hanoi.b kept up to 200 such
    /// results, 400 of the cache's 2,000 pieces, and was deferred so much
    /// more that it ran 1.7 s instead of 1.3; dropping them all, 1.25-1.3
    /// s (2026-11). Dropping them all made a program whose loops come
    /// back once per long round record them again and again (BF
    /// `statements 12`: 1,745 dropped, 1.33 s; kept a while, 77 and 0.74
    /// s); hanoi.b now runs 0.40-0.48 s either way.
    fn cache_full(&mut self, run: &mut Run, steps: u64) -> bool {
        let full = |jit: &Self, run: &Run| {
            let pieces = jit.codes.len() + Self::pending_codes(run) - jit.short_bridges;
            let (code, exits) = jit.cache.as_ref().map_or((0, 0), |c| (c.code_size(), c.exit_count()));
            small_pieces_full(pieces, code, exits, jit.options.max_traces, jit.options.small_pieces_room)
        };
        if !full(self, run) {
            return false;
        }
        let now = self.work(steps);
        if let Some(w) = run.worker.as_mut() {
            let stale = w.drop_ready(now);
            self.stats.dropped_jobs += stale;
            self.stats.stale_jobs += stale;
            if stale > 0 {
                self.log(format_args!("cache full: {stale} results not taken dropped"));
            }
        }
        full(self, run)
    }

    /// Whether the full cache may be dropped ([`Jit::flush`]), the
    /// interpreter having done `interpreted` statements in all: once it
    /// has done `Options::full_window` since the cache was found full or
    /// last judged, and more than the code held did meanwhile (it no
    /// longer runs). While the code held does most of the work it is
    /// kept, and judged again over the next window: a program that moves
    /// on after a long hot phase is not held to that phase's work.
    fn may_flush(&mut self, interpreted: u64) -> bool {
        let now = Full { interpreted, compiled: self.compiled_work };
        let Some(since) = self.full else {
            self.full = Some(now);
            return false;
        };
        let interpreted = now.interpreted.saturating_sub(since.interpreted);
        let compiled = now.compiled.saturating_sub(since.compiled);
        if interpreted < self.options.full_window {
            return false;
        }
        self.full = Some(now);
        interpreted > compiled
    }

    /// Whether the top frame `top` has what code `code` takes.
    fn admits_frame(&self, run: &mut Run, code: TraceId, top: &Frame) -> bool {
        let c = &self.codes[code.0 as usize];
        if c.graph != top.graph {
            return false;
        }
        let k = code.0 as usize;
        if run.slots.len() <= k {
            run.slots.resize(k + 1, None);
        }
        let graph = &run.resolved.graphs[c.graph as usize];
        let slots = run.slots[k].get_or_insert_with(|| {
            c.params.iter().chain(&c.unbound).map(|n| graph.slot_of(*n)).collect::<Vec<_>>().into_boxed_slice()
        });
        let (params, unbound) = slots.split_at(c.params.len());
        params.iter().all(|s| s.is_some_and(|s| top.get(s).is_some()))
            && unbound.iter().all(|s| s.is_none_or(|s| top.get(s).is_none()))
            && c.pins.iter().all(|(k, v)| params[*k].is_some_and(|s| top.get(s) == Some(v)))
    }

    /// Whether environment `env` (of a frame of code `code`'s graph) has
    /// what `code` takes.
    pub(super) fn admits_env(&self, code: TraceId, env: &Env) -> bool {
        let c = &self.codes[code.0 as usize];
        c.params.iter().all(|p| env.contains_key(p))
            && c.unbound.iter().all(|u| !env.contains_key(u))
            && c.pins.iter().all(|(k, v)| env.get(&c.params[*k]) == Some(v))
    }

    /// Runs code `code` from the top frame of `stack`, until it leaves.
    fn execute(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        code: TraceId,
        stack: &mut Vec<Frame>,
    ) -> Result<Next, RuntimeError> {
        let top = stack.last().expect("a frame");
        let c = &self.codes[code.0 as usize];
        // The parameters' slots, resolved when the frame was admitted.
        let slots = run.slots.get(code.0 as usize).and_then(Option::as_deref).expect("admitted");
        let args: Vec<Value> =
            slots[..c.params.len()].iter().map(|s| s.and_then(|s| top.get(s)).cloned().expect("admitted")).collect();
        self.execute_with(machine, run, code, &args, stack)
    }

    /// Runs code `code` from `args` (its parameters' values), the stack's
    /// top frame the one it runs on, until it leaves.
    fn execute_with(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        code: TraceId,
        args: &[Value],
        stack: &mut Vec<Frame>,
    ) -> Result<Next, RuntimeError> {
        let c = &mut self.codes[code.0 as usize];
        c.entries += 1;
        self.stats.entries += 1;
        let mut r = self.code_run(run, stack.len() - 1);
        r.positions = self.tier_positions(machine);
        if r.positions.is_some() {
            r.link_pins = std::ptr::NonNull::new(self.link_pins.as_mut_ptr().cast::<u64>());
        }
        let cache = self.cache.as_ref().expect("code exists, so does its cache");
        let end = cache.run(code, args, &mut r);
        self.code_ran(run, &r);
        // What the straight pieces ran: all they count on entry (an upper
        // bound: a piece left by a linked exit counts its whole way), but
        // for the piece left to the driver, what it ran up to its exit (a
        // linked exit checking in goes on in its bridge, as `exit` does).
        let unrun = match &end {
            TraceEnd::Exit { exit, values } => {
                let state = self.exit_state(*exit);
                if state.bridge.is_some() && values.iter().all(Option::is_some) {
                    0
                } else {
                    state.unrun
                }
            }
            _ => 0,
        };
        let straight = r.work.saturating_sub(unrun);
        // Entered a position's code through its link once: the code
        // entered ran the iterations before it, the position's code the
        // rest, and that code was entered once more. The tier is not judged
        // by such an entry: without the tier, the interpreter would have run
        // those rounds and then entered the code, the one transition the
        // entry took. (Linked more than once — a position's bridge went back
        // into the tier — the run is counted to the code entered, as if
        // unlinked.)
        self.stats.tier_links += r.linked.map_or(0, |l| l.links);
        let once = r.linked.filter(|l| l.links == 1);
        match once.and_then(|l| Some((*self.linked_codes.get(&l.slot)?, l.iterations))) {
            Some((target, before)) => {
                // The tier, not judged by this entry, is not given its work
                // either: the code it linked into ran it (and left by the
                // exit taken back).
                let tier = self.is_tier(code);
                if tier {
                    let tier = &mut self.codes[code.0 as usize];
                    tier.entries = tier.entries.saturating_sub(1);
                }
                let (own, linked) = if tier { (0, straight) } else { (straight, 0) };
                self.paid(machine, run, code, before, own);
                self.codes[target.0 as usize].entries += 1;
                self.stats.entries += 1;
                self.paid(machine, run, target, r.iterations.saturating_sub(before), linked);
            }
            None => self.paid(machine, run, code, r.iterations, straight),
        }
        match end {
            TraceEnd::Error(e) => Err(e),
            TraceEnd::Printed(v) => Ok(Next::Printed(v)),
            TraceEnd::Exit { exit, values } => self.exit(machine, run, exit, values, stack),
        }
    }

    /// The state compiled code starts from when the interpreter has `depth`
    /// frames below the one it runs.
    fn code_run(&self, run: &Run, depth: usize) -> flowc_codegen::RunState {
        flowc_codegen::RunState {
            allocations: run.heap.allocations,
            max_depth: run.config.max_depth,
            depth,
            fuel: self.fuel,
            iterations: 0,
            work: 0,
            positions: None,
            linked: None,
            link_pins: None,
        }
    }

    /// Takes back what compiled code counted: the work its straight
    /// pieces did goes on the JIT's clock (the loops' iterations go there
    /// as [`Jit::paid`] judges them).
    fn code_ran(&mut self, run: &mut Run, r: &flowc_codegen::RunState) {
        run.heap.allocations = r.allocations;
        self.fuel = r.fuel;
        self.compiled_work = self.compiled_work.saturating_add(r.work);
        self.stats.work_straight = self.stats.work_straight.saturating_add(r.work);
    }

    /// Counts what an entry into code `code` from the interpreter ran
    /// (`iterations` of loops, `straight` statements of its straight
    /// pieces' way: [`Code::straight`]); gives up the code's hot spot when, over
    /// many entries, they did not pay ([`entries_pay`]) — left for the
    /// interpreter about as soon as it is entered, or after too little
    /// work, it costs more in transitions than it saves. Judged by what it
    /// ran since its tree last grew (a bridge linked) or the budget first
    /// held back the bridge of one of its exits (a loop of eight branches,
    /// its joins still to come, was given up after 2 ms), every
    /// `judge_after` entries of that, and not while the run's worker is
    /// busy: the code's bridges may be on the way (a stack VM's dispatch
    /// loop, judged while every bridge was still being optimized, was
    /// given up and the run interpreted; judged by all its entries, it
    /// was given up too, on a loaded machine, one run in ten or twenty:
    /// the entries from before its bridges came outweighed those after).
    fn paid(&mut self, machine: &mut Machine, run: &Run, code: TraceId, iterations: u64, straight: u64) {
        let every = self.options.judge_after.max(1);
        // Each iteration replaced about the statements it was recorded
        // from.
        let per_iteration = self.iteration_ops(code);
        let replaced = iterations.saturating_mul(per_iteration);
        self.compiled_work = self.compiled_work.saturating_add(replaced);
        self.stats.work_in_loops = self.stats.work_in_loops.saturating_add(replaced);
        let c = &mut self.codes[code.0 as usize];
        c.iterations += iterations;
        c.straight = c.straight.saturating_add(straight);
        let (entries, iterations, straight) =
            (c.entries - c.judged_from.0, c.iterations - c.judged_from.1, c.straight - c.judged_from.2);
        if entries < every
            || !entries.is_multiple_of(every)
            || run.worker.as_ref().is_some_and(background::Worker::busy)
        {
            return;
        }
        let (name, ops) = (c.function.name, c.recorded_ops as u64);
        // Code whose entries counted no work (none of its pieces counts
        // work on entry, or every entry was a link's) is taken to have run
        // its recorded way once per entry, as before the way was measured.
        let straight = if straight > 0 { straight } else { entries.saturating_mul(ops.max(1)) };
        // Other code (an entry trace) is there to get into its loop: run
        // less than an iteration per entry, it does not pay, however far
        // its way went (entry traces keyed by objects rebuilt every round,
        // tests/corpus/shapes/rebuild.fg, ran hundreds of statements per
        // entry through their bridges, and each round's were new).
        let loop_or_iterations = matches!(c.kind, Kind::Loop) || iterations >= entries;
        let pays = loop_or_iterations && entries_pay(entries, iterations, straight, per_iteration);
        if self.is_tier(code) {
            if !pays {
                let why = format!(
                    "{iterations} iterations of {ops} operations and {straight} statements of straight way in {entries} entries do not pay"
                );
                self.give_up_tier(machine, &why);
            }
            return;
        }
        let Some(key) = self.key_of_code(code) else { return };
        if key.graph != 0
            && key.block != CALL
            && iterations >= entries
            && crossings_weigh(entries, iterations, straight, per_iteration)
        {
            // A loop in a function that runs, but too few rounds per entry
            // for its round trips: its function's calls may pay more (see
            // "Calls instead of short loops"), whether the loop keeps its
            // code (it pays) or not.
            self.calls_instead(machine, run, key.graph);
        }
        if pays {
            return;
        }
        // A hint that keys nothing, whose code does not pay for the
        // positions it lumps together: their promotion's hot spots instead
        // (its chain of bridges may still be filling) — at once where the
        // values there came back, else once it is given up (hot spots
        // that never get hot run as interpreted as a hot spot given up).
        let keyless = key.greens.is_empty() && self.hints_may_move();
        if keyless && self.move_hint_of_tree(machine, run, code, true) {
            return;
        }
        // Not while a full chain of its tree samples the values that fail
        // it ([`Jit::decide_chain`]): that decides.
        if keyless && self.exits.iter().flatten().any(|e| e.deciding && self.codes[e.parent.0 as usize].root == code) {
            return;
        }
        let kc = self.keys.get_mut(&key).expect("code of a key");
        if kc.ignored {
            return;
        }
        kc.ignored = true;
        self.stats.ignored += 1;
        if let Some(p) = machine.profiler_mut() {
            p.set(&key, KeyState::Ignored);
        }
        self.log(format_args!(
            "hot spot given up: {name} does not pay ({iterations} iterations of {ops} operations and {straight} statements of straight way in {entries} entries)"
        ));
        if keyless {
            self.move_hint_of_tree(machine, run, code, false);
        }
        if !key.greens.is_empty() {
            let n = self.given_up.entry((key.graph, key.block)).or_default();
            *n += 1;
            let graph = &run.resolved.graphs[key.graph as usize];
            let promoted_to = match &graph.blocks[key.block as usize].term {
                flowc_lang::interp::resolve::CTerm::Promote { target, .. } => target.block(),
                _ => None,
            };
            if let (true, Some(to)) = (*n == self.options.megamorphic_after, promoted_to) {
                let why = format!("{} of its hot spots did not pay", self.options.megamorphic_after);
                self.megamorphic(machine, run, graph.name, graph.blocks[to as usize].label, &why);
            }
        }
    }

    /// Whether code `code` promotes: one of its `guard_value`s exits to
    /// the label after a `promote` of the program (not one of a loop's
    /// checks of the variables it pins, which exit to its start). Read
    /// from its exits: compiled code no longer has its IR.
    fn promotes(&self, run: &Run, code: TraceId) -> bool {
        let Some(cache) = self.cache.as_ref() else { return false };
        cache.exits_of(code).iter().any(|&e| {
            let (exit, _) = cache.exit(e);
            let function = self.codes[code.0 as usize].innermost_function(exit.resume).flatten();
            let Some(g) = run.resolved.graph_of(function).filter(|_| exit.key.is_some()) else { return false };
            promoting_to(&run.resolved.graphs[g as usize], exit.label).next().is_some()
        })
    }

    /// A full chain's exit `exit` that a hint may give way at (its state's
    /// `deciding`), once more values failed it: the hint gives way as
    /// soon as one came back; after [`DECIDE_SAMPLES`] that did not, the
    /// promotion is megamorphic.
    fn decide_chain(&mut self, machine: &mut Machine, run: &Run, exit: ExitId) {
        let state = self.exit_state(exit);
        let (repeated, done) = (state.came_back, state.sampled >= DECIDE_SAMPLES);
        if !repeated && !done {
            return;
        }
        state.deciding = false;
        state.failed_with = Vec::new();
        let (parent, resume, to) = (state.parent, state.exit.resume, state.exit.label);
        let code = &self.codes[parent.0 as usize];
        let (root, function) = (code.root, code.innermost_function(resume));
        let Some(function) = function else { return };
        // Values that came back are positions, not megamorphic, whether
        // or not the hint could move (its reserved label taken already).
        if repeated {
            self.move_hint(machine, run, root, function, to);
            return;
        }
        let why = format!(
            "a guard_value there failed for more than {} values, then for {DECIDE_SAMPLES} none of which came back",
            self.options.max_values
        );
        self.megamorphic(machine, run, function, to, &why);
    }

    /// Whether a hint that keys nothing may still give way to a label:
    /// one held in reserve, or one a hint gave way to already.
    pub(super) fn hints_may_move(&self) -> bool {
        !self.reserved.is_empty() || !self.moved_to.is_empty()
    }

    /// The label held in reserve that the hot spot of code `root` would
    /// give way to at a `guard_value` before label `to` of `function`
    /// ([`Jit::move_hint`]): its place in `reserved` (`None`: a hint gave
    /// way to it already, `moved_to`), its block, and the hot spot's key.
    fn hint_to_move(
        &self,
        run: &Run,
        root: TraceId,
        function: Option<Symbol>,
        to: Symbol,
    ) -> Option<(Option<usize>, u32, Key)> {
        if !self.hints_may_move() || self.unpromoted.contains(&(function, to)) {
            return None;
        }
        let g = run.resolved.graph_of(function)?;
        let graph = &run.resolved.graphs[g as usize];
        let &to_block = graph.labels.get(&to)?;
        // Whether the promote chain that starts at block `b` goes through
        // `to` (`promote bytecode then p2`, `p2: promote pc then to`).
        let chain_reaches = |mut b: u32| {
            for _ in 0..graph.blocks.len() {
                match &graph.blocks[b as usize].term {
                    CTerm::Promote { target, .. } => match target.block() {
                        Some(t) if t == to_block => return true,
                        Some(t) => b = t,
                        None => return false,
                    },
                    _ => return false,
                }
            }
            false
        };
        // The hot spot of a hint, in the same flow graph (not one of a
        // join's, nor a label's whose promotion was given up: no greens
        // either).
        let key = self.key_of_code(root).filter(|k| k.greens.is_empty() && k.graph == g)?;
        let label = graph.blocks[key.block as usize].label;
        if !self.shared.program.can_enter_jit_labels().any(|l| l == label) {
            return None;
        }
        // In reserve (`Some` of its place in the list), or already given
        // way to by another hint (`None`): the reserve of the hint's own
        // loop first (nested loops may each hold one), else any whose
        // chain reaches `to`.
        let reaching =
            |r: &Reserve| graph.labels.get(&r.label).copied().filter(|&b| r.function == function && chain_reaches(b));
        let found = |own: bool| {
            let fits = |r: &Reserve| (!own || r.hints.contains(&label)).then(|| reaching(r)).flatten();
            match self.reserved.iter().enumerate().find_map(|(at, r)| Some((at, fits(r)?))) {
                Some((at, b)) => Some((Some(at), b)),
                None => self.moved_to.iter().find_map(fits).map(|b| (None, b)),
            }
        };
        let (at, block) = found(true).or_else(|| found(false))?;
        Some((at, block, key))
    }

    /// The hot spot of code `root` gives way to a label held in reserve
    /// whose promote chain goes on through label `to` of `function` (see
    /// "A hint that keys nothing"): the profiler watches that label from
    /// now on, keyed by the values it promotes, and the hot spot is given
    /// up, its label watched no more. Whether there was such a label.
    fn move_hint(
        &mut self,
        machine: &mut Machine,
        run: &Run,
        root: TraceId,
        function: Option<Symbol>,
        to: Symbol,
    ) -> bool {
        let Some((at, block, key)) = self.hint_to_move(run, root, function, to) else { return false };
        let (Some(g), Some(p)) = (run.resolved.graph_of(function), machine.profiler_mut()) else { return false };
        let graph = &run.resolved.graphs[g as usize];
        let label = graph.blocks[block as usize].label;
        let hint = graph.blocks[key.block as usize].label;
        // The hints of the reserved label's loop that give way now: this
        // one, and the others with it the first time.
        let mut hints = vec![hint];
        if let Some(at) = at {
            if !p.watch_reserved(g, block) {
                return false;
            }
            let moved = self.reserved.remove(at);
            hints.extend(moved.hints.iter().copied().filter(|&h| h != hint));
            self.watched.push((moved.function, moved.label));
            self.moved_to.push(moved);
        }
        for h in hints {
            let Some(&b) = graph.labels.get(&h) else { continue };
            // The hint is watched no more: recordings from the
            // promotion's hot spots go on through it (else they would end
            // there in its code, jumping back to what is given up).
            p.unwatch(g, b);
            // (Moved already, with its loop's others: a job of its that
            // the worker installed since asks again, and is not counted
            // twice.)
            let first = self.watched.contains(&(function, h));
            self.watched.retain(|&w| w != (function, h));
            self.stats.hints_moved += usize::from(first);
            // Its code is no key's any more (as after `record_key_again`):
            // nothing recorded from now on jumps into it, nor is it judged
            // or moved again.
            for (k, kc) in self.keys.iter_mut() {
                if k.graph == g && k.block == b {
                    kc.ignored = true;
                    kc.variants.clear();
                }
            }
            if first {
                self.log(format_args!("hot spot {h} gives way to {label}, where it promotes before {to}"));
            }
        }
        true
    }

    /// [`Jit::move_hint`] for the tree of code `root`, at a `guard_value`
    /// of the tree that failed (whose failing values repeated, if
    /// `repeated`); whether it moved.
    fn move_hint_of_tree(&mut self, machine: &mut Machine, run: &Run, root: TraceId, repeated: bool) -> bool {
        let at: Vec<(Option<Symbol>, Symbol)> = self
            .exits
            .iter()
            .flatten()
            .filter(|e| e.exit.key.is_some() && self.codes[e.parent.0 as usize].root == root)
            .filter(|e| !repeated || e.came_back)
            .filter_map(|e| Some((self.codes[e.parent.0 as usize].innermost_function(e.exit.resume)?, e.exit.label)))
            .collect();
        at.into_iter().any(|(function, to)| self.move_hint(machine, run, root, function, to))
    }

    /// Gives up the promotions of `function` (`None`: the main graph)
    /// that go on to label `to` (see "Megamorphic promotions"), for
    /// `why`: recordings keep the variable promoted a variable, the
    /// profiler counts one key at the promoting blocks, and the hot spots
    /// whose code guards a value there (a tree with an exit at such a
    /// guard that failed) are recorded again, as after
    /// [`Jit::stop_following`].
    fn megamorphic(&mut self, machine: &mut Machine, run: &Run, function: Option<Symbol>, to: Symbol, why: &str) {
        if !self.unpromoted.insert((function, to)) {
            return;
        }
        self.stats.megamorphic += 1;
        self.log(format_args!("promotion before {to} given up: {why}"));
        if let (Some(g), Some(p)) = (run.resolved.graph_of(function), machine.profiler_mut()) {
            for b in promoting_to(&run.resolved.graphs[g as usize], to) {
                p.drop_greens(g, b);
            }
        }
        self.tier_lost(machine);
        // The code that guards a value there: the trees of the exits of
        // such guards that failed, and the entry traces that jump into
        // them (left as they were, they kept entering the old loop, whose
        // guard then failed every round).
        let mut roots: Vec<TraceId> = Vec::new();
        for e in self.exits.iter().flatten() {
            let guards_here = e.exit.key.is_some()
                && e.exit.label == to
                && self.codes[e.parent.0 as usize].innermost_function(e.exit.resume) == Some(function);
            let root = self.codes[e.parent.0 as usize].root;
            if guards_here && !roots.contains(&root) {
                roots.push(root);
            }
        }
        let entering = (0..self.codes.len() as u32)
            .map(TraceId)
            .filter(|&c| matches!(self.codes[c.0 as usize].kind, Kind::Entry) && roots.contains(&self.loop_reached(c)));
        let entering: Vec<TraceId> = entering.collect();
        roots.extend(entering);
        let keys: Vec<Key> = roots.into_iter().filter_map(|root| self.key_of_code(root)).collect();
        for key in keys {
            self.record_key_again(machine, &key);
        }
    }

    /// The operations an iteration run from code `code` was recorded from:
    /// its own per iteration, or for an entry trace those of the loop it
    /// jumps into (whose body piece records none: its preamble's, the
    /// root of its tree).
    fn iteration_ops(&self, code: TraceId) -> u64 {
        let c = &self.codes[code.0 as usize];
        let ops = match c.into {
            Some(t) => {
                let target = &self.codes[t.0 as usize];
                target.recorded_ops.max(self.codes[target.root.0 as usize].recorded_ops)
            }
            None => c.recorded_ops,
        };
        ops.max(1) as u64
    }

    /// What the JIT knows of exit `exit` (made on first use).
    fn exit_state(&mut self, exit: ExitId) -> &mut ExitState {
        let k = exit.0 as usize;
        self.exits.grow_with(k + 1, || None);
        let cache = self.cache.as_ref().expect("an exit has code");
        let codes = &self.codes;
        self.exits[k].get_or_insert_with(|| {
            let (texit, parent) = cache.exit(exit);
            let check = is_check(&codes[parent.0 as usize], &texit);
            let unrun = unrun_after(&codes[parent.0 as usize], &cache.exits_of(parent), exit);
            let exit = texit;
            Box::new(ExitState {
                exit,
                parent,
                check,
                to_driver: 0,
                bridge: None,
                refused: None,
                held_back: false,
                first_failed: None,
                unrun,
                left_around: 0,
                failed_with: Vec::new(),
                sampled: 0,
                came_back: false,
                deciding: false,
            })
        })
    }

    /// Code left by `exit` with `values`: a bridge if the exit is hot,
    /// else the interpreter.
    fn exit(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        exit: ExitId,
        values: Vec<Option<Value>>,
        stack: &mut Vec<Frame>,
    ) -> Result<Next, RuntimeError> {
        self.collect_done(machine, run);
        if let Some((pending, result)) = run.worker.as_mut().and_then(|w| w.take_exit(exit)) {
            self.install(machine, pending, result);
        }
        if self.exit_state(exit).exit.cold {
            return self.left_tier(machine, run, exit, values, stack);
        }
        let linked = self.exit_state(exit).bridge;
        if let (Some(bridge), true) = (linked, values.iter().all(Option::is_some)) {
            // A linked exit checking in (every `link_check`-th crossing):
            // its tree may grow, then the run goes on in the bridge.
            if self.options.trees {
                self.grow_tree(exit);
            }
            let args: Vec<Value> = values.into_iter().map(|v| v.expect("checked")).collect();
            return Ok(Next::EnterWith(bridge, args));
        }
        self.stats.guard_failures += 1;
        let (retrace, bridge) = (self.options.retrace_threshold, self.options.bridge_threshold);
        let state = self.exit_state(exit);
        state.to_driver += 1;
        let most = if state.deciding { DECIDE_SAMPLES } else { (bridge as usize).min(DECIDE_SAMPLES) };
        if let Some(k) = state.exit.key.filter(|_| state.bridge.is_none()) {
            state.sample(values.get(k as usize).and_then(Option::as_ref), most);
        }
        if state.deciding {
            self.decide_chain(machine, run, exit);
        }
        let state = self.exit_state(exit);
        let threshold = if state.check { retrace } else { bridge };
        let hot = state.bridge.is_none() && state.refused.is_none() && state.to_driver >= threshold.max(1) as u64;
        if state.exit.at {
            // A link laid out otherwise than assumed, often for the rounds
            // its loop ran since it first was: no recording assumes it
            // there again, whatever comes of this exit. (Now and then — a
            // chain with one gap — its bridge is the cheaper way.)
            let (parent, texit, failures) = (state.parent, state.exit.clone(), state.to_driver);
            let root = self.codes[parent.0 as usize].root;
            let iterations = self.codes[root.0 as usize].iterations;
            let state = self.exit_state(exit);
            let since = iterations - *state.first_failed.get_or_insert(iterations);
            if hot && failures.saturating_mul(IRREGULAR_EVERY) > since {
                self.irregular.extend(self.irregular_link(parent, &texit));
            }
        }
        let hot = hot && !run.worker.as_ref().is_some_and(|w| w.has_exit(exit));
        // An exit into a join's code needs no recording: its bridge is a
        // jump, which the budget does not hold back.
        // So does a bridge of the dispatch tier's tree (a few, short, which
        // every position without code runs through: held back, each
        // instruction of theirs went through the driver).
        let free = hot && (self.in_tier_tree(exit) || self.jumps_to_join(machine, run, exit, &values));
        let hot = hot && {
            let affordable = free || self.affordable(machine, run);
            if !affordable {
                self.stats.deferred += 1;
                // Its bridge held back by the budget, the tree is still
                // growing: judged from now on ([`Jit::paid`]), as after a
                // bridge linked — once per exit, or a tree the budget
                // keeps holding back would never be judged.
                let state = self.exit_state(exit);
                if !state.held_back {
                    state.held_back = true;
                    let parent = state.parent;
                    let root = self.codes[parent.0 as usize].root;
                    let root = &mut self.codes[root.0 as usize];
                    root.judged_from = (root.entries, root.iterations, root.straight);
                }
            }
            affordable
        };
        if !hot {
            return Ok(Next::Interpret(self.resume_at(machine, run, exit, &values, stack)?));
        }
        let parent = self.exit_state(exit).parent;
        let frames = self.exit_frames(run, exit, &values);
        self.record_bridge(machine, run, exit, parent, &values, frames, stack, free)
    }

    /// The frames exit `exit` leaves, from the `values` it stored.
    fn exit_frames(&self, run: &mut Run, exit: ExitId, values: &[Option<Value>]) -> Vec<ResumeFrame> {
        let state = self.exits[exit.0 as usize].as_ref().expect("an exit that failed");
        let code = &self.codes[state.parent.0 as usize];
        let map: HashMap<ValueId, Value> =
            state.exit.values.iter().zip(values).filter_map(|(id, v)| Some((*id, v.clone()?))).collect();
        resume::frames(&code.record(state.exit.resume), &map, &mut run.heap)
    }

    /// The usual way out of code by exit `exit` (which failed: the JIT
    /// knows it), which stored `values`: the frames it leaves replace the
    /// top of `stack`, which goes on at the block returned. The record is
    /// decoded once per run.
    fn resume_at(
        &mut self,
        machine: &mut Machine,
        run: &mut Run,
        exit: ExitId,
        values: &[Option<Value>],
        stack: &mut Vec<Frame>,
    ) -> Result<u32, RuntimeError> {
        let k = exit.0 as usize;
        run.plans.grow_with(k + 1, || None);
        let state = self.exits[k].as_ref().expect("an exit that failed");
        let (code, resume, label) = (&self.codes[state.parent.0 as usize], state.exit.resume, state.exit.label);
        let stored = &state.exit.values;
        let plan = run.plans[k]
            .get_or_insert_with(|| resume::Plan::new(&code.record(resume), stored, label, run.resolved).map(Box::new));
        if let Some(plan) = plan {
            plan.apply(values, &mut run.heap, machine, stack);
            return Ok(plan.block);
        }
        let frames = self.exit_frames(run, exit, values);
        machine.replace_top(stack, &frames, label)
    }

    /// The compile budget was found spent at a hot spot: every counting
    /// hot spot stops twice as late as before, up to `most_raised` (16)
    /// times the threshold, until it is found open again
    /// ([`Jit::budget_open`]). A program whose hot spots are new ones all
    /// the time (objects rebuilt every round, each promoted:
    /// tests/corpus/shapes/rebuild.fg, 3,000 rounds of 100 walks) had
    /// each stop and be deferred in turn, a trip to the JIT and back per
    /// hot spot: 76,600 deferrals, 262 ms; now 6, and 173 ms.
    fn budget_closed(&mut self, machine: &mut Machine) {
        self.raised = (self.raised * 2).min(self.options.most_raised.max(1));
        if let Some(p) = machine.profiler_mut() {
            p.set_threshold(self.options.threshold.saturating_mul(self.raised));
        }
    }

    /// The compile budget was found open: hot spots stop at the
    /// threshold again.
    fn budget_open(&mut self, machine: &mut Machine) {
        if self.raised > 1 {
            self.raised = 1;
            if let Some(p) = machine.profiler_mut() {
                p.set_threshold(self.options.threshold);
            }
        }
    }

    /// Whether the compile budget allows recording another trace (see
    /// "A compile budget").
    /// The run's work when the interpreter has done `steps` statements:
    /// those since the JIT took the run over, and those compiled code
    /// replaced (the clock of the compile budget and the dispatch tier).
    pub(super) fn work(&self, steps: u64) -> u64 {
        steps.saturating_sub(self.work_before) + self.compiled_work
    }

    fn affordable(&self, machine: &Machine, run: &Run) -> bool {
        self.affordable_with(machine, run, 0)
    }

    /// [`Jit::affordable`] once `more` operations more are compiled.
    fn affordable_with(&self, machine: &Machine, run: &Run, more: u64) -> bool {
        let Some(allowance) = self.options.compile_allowance else { return true };
        let pending = run.worker.as_ref().map_or(0, |w| w.pending_ops());
        let work = self.work(machine.steps());
        let pieces = (self.codes.len() + Self::pending_codes(run)) as u64 - self.empty_bridges;
        let recorded = (self.stats.recorded_ops + pending) as u64 + self.function_ops_charged + more;
        let spent = compile_cost(recorded, pieces, work);
        pays_back(spent, self.compiled_work, grace_at(self.options.compile_grace, work))
            && within_budget(recorded, pieces, work, allowance)
    }

    /// Whether hot spot `key` was arrived at too sparsely for its loop to
    /// pay back its compile ([`promises_payback`], by the key's last
    /// count and the clock now; never without a budget or a count): the
    /// loop of `ops` recorded operations, or, before anything is recorded
    /// (`None`), a loop of any length ([`Density::promises_at`]). If so it
    /// is counted and logged, the key deferred like one over budget (from
    /// its second such judgment in a row, for the arrivals it is short
    /// of: [`Density::arrivals_short`]), and
    /// `ops` kept to judge it by when it is hot again. (Where no length
    /// could pay, nothing is recorded, nor an entry trace from there: rle
    /// BF bottles 10 compiled 2 entry traces, 2 bridges and 3 more loops
    /// that saved nothing, from hot spots arrived at once per verse.)
    fn too_sparse(&mut self, machine: &mut Machine, key: &Key, ops: Round, what: impl FnOnce() -> String) -> bool {
        let density = self.density(machine, key);
        self.too_sparse_with(machine, key, density, ops, what)
    }

    /// [`Jit::too_sparse`] by `density`, the key's taken earlier (its
    /// count may have started again since).
    fn too_sparse_with(
        &mut self,
        machine: &mut Machine,
        key: &Key,
        density: Option<Density>,
        ops: Round,
        what: impl FnOnce() -> String,
    ) -> bool {
        let Some(density) = density else { return false };
        if density.promises_at(ops.ops()) {
            self.sparse_rows.remove(key);
            return false;
        }
        self.stats.sparse += 1;
        // Once in a row it may be a count across two bursts of arrivals
        // (a loop's rounds in one call and in a later one): it asks again
        // as deferral says. Twice, it waits for the arrivals it is short
        // of (at most `DEFER_AHEAD` times longer).
        let row = self.sparse_rows.entry(key.clone()).or_default();
        *row = row.saturating_add(1);
        let short = if *row >= 2 { density.arrivals_short(ops.ops()) } else { 0 };
        self.stats.sparse_waits += u64::from(short > 0);
        if self.log.is_some() {
            let (what, arrivals, span) = (what(), density.arrivals, density.span);
            let waits = if short > 0 { format!("; {short} arrivals short, waits for them") } else { String::new() };
            match ops {
                Round::Recorded(ops) => self.log(format_args!(
                    "not compiled: {what}, {ops} operations, {arrivals} arrivals in {span} statements{waits}"
                )),
                Round::AtMost(ops) => self.log(format_args!(
                    "not recorded: {what}, at most {ops} operations a round, {arrivals} arrivals in {span} statements{waits}"
                )),
                Round::Any => {
                    self.log(format_args!("not recorded: {what}, {arrivals} arrivals in {span} statements{waits}"))
                }
            }
        }
        if let Some(p) = machine.profiler_mut() {
            p.defer_at_least(key, short);
        }
        if ops != Round::Any {
            self.keys.entry(key.clone()).or_default().sparse_ops = Some(ops);
        }
        true
    }

    /// How densely hot spot `key` was arrived at over its last count, with
    /// the clocks that judge it ([`promises_payback`]); `None` without a
    /// budget or a count.
    pub(super) fn density(&self, machine: &Machine, key: &Key) -> Option<Density> {
        let allowance = self.options.compile_allowance?;
        let p = machine.profiler()?;
        let (since, arrivals, now) = (p.since(key)?, p.count(key), machine.steps());
        Some(Density {
            arrivals: u64::from(arrivals),
            span: now.saturating_sub(since),
            elapsed: now.saturating_add(self.compiled_work).saturating_add(allowance),
            work: self.work(now),
        })
    }

    /// Pieces of code the worker's pending jobs will add (at most two
    /// each: a loop and its preamble), which count against `max_traces`.
    fn pending_codes(run: &Run) -> usize {
        run.worker.as_ref().map_or(0, |w| 2 * w.pending_jobs())
    }

    /// The liveness of graph `g`.
    fn liveness<'r>(run: &'r mut Run, g: u32) -> &'r Liveness {
        run.liveness[g as usize].get_or_insert_with(|| Liveness::of(&run.resolved.graphs[g as usize]))
    }

    /// A name for new code, from `base`: `base`, else `base.2`, `base.3`...
    /// Names are not given back (a reset forgets them all), so the search
    /// for `base`'s next free suffix starts at the last one given: naming
    /// a label's thousandth trace tries one name, not a thousand.
    fn fresh_name(&mut self, base: Symbol) -> Symbol {
        let k = self.suffixes.entry(base).or_insert(1);
        let named = |k: u32| if k == 1 { base } else { Symbol::intern(&format!("{base}.{k}")) };
        let mut name = named(*k);
        while self.names.contains_key(&name) {
            *k += 1;
            name = named(*k);
        }
        self.names.insert(name, None);
        name
    }

    fn log(&mut self, text: std::fmt::Arguments) {
        if let Some(log) = &mut self.log {
            log.event(text);
        }
    }
}

impl Code {
    /// Its resume record `r`.
    fn record(&self, r: ResumeId) -> Cow<'_, ResumeData> {
        match &self.kept {
            Some(kept) => Cow::Owned(kept.records.get(r)),
            None => Cow::Borrowed(&self.function.resumes[r]),
        }
    }

    /// How many frames and virtual objects its resume record `r` has.
    fn record_shape(&self, r: ResumeId) -> (usize, usize) {
        match &self.kept {
            Some(kept) => kept.records.shape(r),
            None => (self.function.resumes[r].frames.len(), self.function.resumes[r].virtuals.len()),
        }
    }

    /// The function its resume record `r`'s innermost frame runs
    /// ([`PackedRecords::innermost_function`]).
    fn innermost_function(&self, r: ResumeId) -> Option<Option<Symbol>> {
        match &self.kept {
            Some(kept) => kept.records.innermost_function(r),
            None => self.function.resumes[r].frames.last().map(|f| f.function),
        }
    }

    /// The name of its value `v`.
    fn value_name(&self, v: ValueId) -> Option<Symbol> {
        match &self.kept {
            Some(kept) => kept.names.get(u32::from(v.into_raw()) as usize).copied().flatten(),
            None => self.function.values[v].name,
        }
    }

    /// As [`Code::new`], from `function` reduced to its name by the worker
    /// ([`background`], "Leftovers on the worker"), which kept `kept` of
    /// it; it had `ops` operations.
    fn reduced(kind: Kind, function: Function, start: String, recorded_ops: usize, (kept, ops): (Kept, usize)) -> Code {
        Code { optimized_ops: ops, kept: Some(kept), ..Code::new(kind, function, start, recorded_ops) }
    }

    /// Code of `kind` made from `function`, not yet entered.
    fn new(kind: Kind, function: Function, start: String, recorded_ops: usize) -> Code {
        Code {
            kind,
            graph: 0,
            params: Vec::new(),
            unbound: Vec::new(),
            anchor: Symbol::intern("?"),
            start,
            entries: 0,
            iterations: 0,
            straight: 0,
            judged_from: (0, 0, 0),
            recorded_ops,
            optimized_ops: instructions(&function),
            compile_time: Duration::ZERO,
            root: TraceId(0),
            bridges: 0,
            values: 0,
            body: None,
            entry: None,
            restarts: Vec::new(),
            pins: Vec::new(),
            into: None,
            passed_keys: false,
            passed: Passed::default(),
            linked_from: None,
            jumps_to: None,
            into_inner: false,
            skip: None,
            replaced_by: None,
            exit_facts: Default::default(),
            function,
            kept: None,
        }
    }
}

/// What a compiled trace's exits and bridges read of its IR when the IR
/// is not kept ([`Options::keep_ir`]): its resume records, packed, and
/// its values' names. A run keeps them for every trace, and reads them
/// only when a guard fails: packed, public BF hanoi.b's 33,000 records
/// took 3.3 MB instead of 10 ([`PackedRecords`]), and the names 0.3 MB
/// instead of the values' 1.5.
struct Kept {
    records: PackedRecords,
    /// By value index.
    names: Box<[Option<Symbol>]>,
}

/// Reduces `f` to its name; what its exits read of the rest ([`Kept`]).
fn without_body(f: &mut Function) -> Kept {
    let names = f.values.values().map(|d| d.name).collect();
    let kept = Kept { records: PackedRecords::pack(&f.resumes), names };
    *f = Function::new(f.kind, f.name);
    kept
}

/// How the tracer runs the calls it does not follow — of recursive
/// functions already [`Options::recursion_unroll`] calls deep in the
/// recording (following more would unroll the recursion into the trace),
/// of functions recordings got too long in ([`Jit::stop_following`]),
/// and of `pure` ones (the trace calls them, or folds them): on the
/// interpreter, numbering objects on from `heap`.
fn residual_calls<'a, 'p>(
    jit: &'a Jit<'p>,
    resolved: &'a Resolved,
    config: &'a Config,
    key: Option<&'a Key>,
) -> impl FnMut(Symbol, usize, &[Value], &mut Heap) -> Option<Result<Value, RuntimeError>> + use<'a, 'p> {
    move |func, open, args, heap| {
        let deep = jit.recursive.contains(&func) && open >= jit.options.recursion_unroll;
        let here = || key.is_some_and(|k| jit.not_followed_at.contains(&(func, k.clone())));
        if !deep && !jit.not_followed.contains(&func) && !jit.shared.hints().is_pure(func) && !here() {
            return None;
        }
        let &graph = resolved.functions.get(&func)?;
        let mut m = Machine::new(jit.shared.program, resolved, config);
        m.set_allocations(heap.allocations);
        let result = m.call(graph, args);
        heap.allocations = m.allocations();
        Some(result)
    }
}

/// The key of arriving at `label` of graph `g` with environment `env`, if
/// the label is watched.
fn stop_key(profiler: &Profiler, graph: &Graph, g: u32, label: Symbol, env: &Env) -> Option<Key> {
    let &b = graph.labels.get(&label)?;
    if !profiler.watches(g, b) {
        return None;
    }
    Some(profiler.key_with(g, b, |s| env.get(&graph.slot_names[s as usize]).cloned()))
}

/// Whether `exit` of `code` is one of a loop preamble's speculation
/// checks.
fn is_check(code: &Code, exit: &flowc_codegen::lower::TraceExit) -> bool {
    matches!(code.kind, Kind::Loop) && exit.check
}

/// A link assumed laid out in a row that fails its check more often than
/// once in this many rounds of its loop is irregular ([`Jit::irregular`]).
const IRREGULAR_EVERY: u64 = 16;

/// The blocks of `graph` whose `promote` goes on to label `to` (the
/// promotion a `guard_value` exiting to `to` stands for).
fn promoting_to(graph: &Graph, to: Symbol) -> impl Iterator<Item = u32> + '_ {
    let to = graph.labels.get(&to).copied();
    graph.blocks.iter().enumerate().filter_map(move |(b, block)| match &block.term {
        CTerm::Promote { target, .. } if to.is_some() && target.block() == to => Some(b as u32),
        _ => None,
    })
}

/// A place in the program: a flow graph (`None` for the main one) and a
/// label of it.
type Place = (Option<Symbol>, Symbol);

/// A key as people read it: `dispatch[pc=2]`, `f:loop`.
fn describe(key: &Key, resolved: &Resolved) -> String {
    let graph = &resolved.graphs[key.graph as usize];
    if key.block == CALL {
        return format!("calls of {}", graph.name.map_or("?".into(), |n| n.to_string()));
    }
    let mut s = String::new();
    if let Some(f) = graph.name {
        s.push_str(&format!("{f}:"));
    }
    s.push_str(graph.blocks[key.block as usize].label.as_str());
    let chain = graph.promote_chain(key.block);
    if !key.greens.is_empty() {
        let parts: Vec<String> = chain
            .iter()
            .zip(&key.greens)
            .map(|(slot, g)| {
                let v = match &g.0 {
                    None => "unbound".to_string(),
                    Some(Value::List(items)) if items.len() > 4 => format!("<list of {}>", items.len()),
                    Some(v) => v.to_print_string(),
                };
                format!("{}={v}", graph.slot_names[*slot as usize])
            })
            .collect();
        s.push_str(&format!("[{}]", parts.join(",")));
    }
    s
}

/// Instructions of a function, phis included.
fn instructions(f: &Function) -> usize {
    f.layout.iter().map(|&b| f.blocks[b].phis.len() + f.blocks[b].insts.len()).sum()
}

/// Runs `program` (lowered once as `module`) under the JIT; returns the
/// outcome and the stats.
pub fn run(
    program: &Program,
    module: &Module,
    entry: Symbol,
    env: &[(Symbol, Value)],
    config: &Config,
    options: Options,
) -> (Result<Outcome, RuntimeError>, Stats) {
    let mut jit = Jit::new(program, module, options);
    let result = jit.run(entry, env, config);
    (result, jit.stats())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program of `n` statements in one block.
    fn statements(n: usize) -> Program {
        let mut text = String::from("start:\n    x = 0\n");
        for _ in 1..n {
            text.push_str("    x = x + 1\n");
        }
        text.push_str("    print_and_stop(x)\n");
        flowc_lang::syntax::parse("statements.fg", &text).expect("it parses")
    }

    /// A small program's start is prepared apart late in its warm-up, with
    /// the lead its preparation takes, so that runs ending before then
    /// start no thread; a big one's as soon as [`PREPARE_AFTER_STEPS`].
    #[test]
    fn a_small_programs_start_is_prepared_late_in_its_warm_up() {
        let small = statements(900);
        assert!(prepare_apart(&small));
        let w = warmup(&small);
        let after = prepare_after(&small, w);
        let n = small.statement_count() as u64;
        assert_eq!(after, w - PREPARE_LEAD_STEPS - PREPARE_LEAD_PER_STATEMENT * n);
        assert!(after > PREPARE_AFTER_STEPS && after < w);
        let big = statements(20_000);
        assert_eq!(prepare_after(&big, warmup(&big)), PREPARE_AFTER_STEPS);
        assert!(!prepare_apart(&statements(PREPARE_APART_STATEMENTS / 2)));
    }

    /// The interpreter starts preparing apart at [`prepare_after`]: a run
    /// that ends before then never starts it (and ends within its
    /// warm-up), one that goes on past it starts it once and is paused at
    /// the warm-up's end for the take-over.
    #[test]
    fn a_run_that_ends_before_its_preparation_is_due_starts_none() {
        let text = "entry start(n = 3)\nstart:\n    s = 0\n    goto head\nhead:\n    if n goto body else goto done\nbody:\n    s = s + n\n    n = n - 1\n    goto head\ndone:\n    print_and_stop(s)\n";
        let program = flowc_lang::syntax::parse("count.fg", text).expect("it parses");
        let steps = 200_000;
        let due = prepare_after(&program, steps);
        let run = |n: i64| {
            let mut started = 0;
            let mut prepare = || started += 1;
            let env = [(Symbol::intern("n"), Value::Int(n))];
            let start = Symbol::intern("start");
            let warm = interpret_first_preparing(&program, start, &env, &Config::default(), steps, Some(&mut prepare));
            (matches!(warm, Warmup::Paused(_)), started)
        };
        // Some three statements a round: ending short of `due`, and going
        // on past the warm-up.
        assert_eq!(run((due / 4) as i64), (false, 0));
        assert_eq!(run(steps as i64), (true, 1));
    }

    /// A young run pays the cold compile cost for every operation
    /// recorded, up to a share of its work; once it has done
    /// [`WARM_AFTER`] statements, the same recording costs the warm
    /// compiler's rate, so what a young run deferred becomes affordable.
    #[test]
    fn the_budget_loosens_once_the_run_is_warm() {
        let allowance = 400_000;
        // Just before warm: the ops a third of the work pays for at the
        // cold rate, and not one more.
        let young = WARM_AFTER - 1;
        let cold_ops = (allowance + young) / (COMPILE_STEPS_PER_OP * COMPILE_SHARE);
        assert!(within_budget(cold_ops, 0, young, allowance));
        assert!(!within_budget(cold_ops + 1, 0, young, allowance));
        // Warm: four times as many are affordable at the same work.
        let warm_ops = (allowance + WARM_AFTER) / (WARM_COMPILE_STEPS_PER_OP * COMPILE_SHARE);
        assert!(warm_ops >= 4 * cold_ops);
        assert!(within_budget(warm_ops, 0, WARM_AFTER, allowance));
        assert!(!within_budget(warm_ops + 1, 0, WARM_AFTER, allowance));
    }

    /// Up to the grace compiles go on whatever they returned; past it,
    /// only while they returned half their cost.
    #[test]
    fn compiles_past_the_grace_must_pay_back_half() {
        let grace = UNPAID_GRACE;
        assert!(pays_back(grace, 0, grace));
        assert!(!pays_back(grace + 2, 0, grace));
        assert!(!pays_back(4 * grace, 2 * grace - 1, grace));
        assert!(pays_back(4 * grace, 2 * grace, grace));
        assert!(pays_back(u64::MAX - 1, 0, u64::MAX), "no bound");
        // The grace grows with the run's work: compiles that never paid
        // back resume once the run has done thirty times the excess.
        let spent = grace + 10_000;
        assert!(!pays_back(spent, 0, grace_at(grace, 0)));
        assert!(!pays_back(spent, 0, grace_at(grace, UNPAID_SHARE * 10_000 - UNPAID_SHARE)));
        assert!(pays_back(spent, 0, grace_at(grace, UNPAID_SHARE * 10_000)));
        assert_eq!(grace_at(u64::MAX, 1 << 40), u64::MAX);
    }

    #[test]
    fn a_loop_promises_what_its_density_and_the_run_say() {
        // A loop of 150 operations that was all the work of its last 50
        // arrivals (7,500 statements), in a run 400,000 statements old:
        // its code would replace the whole run again.
        assert!(promises_payback(50, 7_500, 400_000, 200_000, 150));
        // The same loop entered once per verse of a song, its 50 arrivals
        // spread over 400,000 statements: 50 more arrivals, 7,500
        // statements replaced, against some 36,000 to compile.
        assert!(!promises_payback(50, 400_000, 400_000, 200_000, 150));
        assert_eq!(compile_cost(150, 2, 200_000), 36_000);
        // Once the run is five times older, the same density promises
        // more than the compile costs.
        assert!(promises_payback(50, 400_000, 2_000_000, 1_800_000, 150));
        // A span of zero (every arrival within one statement) promises.
        assert!(promises_payback(50, 0, 400_000, 200_000, 5));
    }

    /// A hot spot that does not promise waits for as many more arrivals
    /// as its promise falls short of what a warm compile would need, each
    /// arrival promising one more: then it promises.
    #[test]
    fn a_sparse_loop_waits_for_the_arrivals_it_is_short_of() {
        let sparse = Density { arrivals: 50, span: 400_000, elapsed: 400_000, work: WARM_AFTER };
        assert!(!sparse.promises(150));
        let short = sparse.arrivals_short(Some(150));
        // A warm compile of 150 operations in two pieces: 13,500
        // statements, 90 arrivals of them; 50 promised.
        assert_eq!(compile_cost(150, 2, WARM_AFTER), 13_500);
        assert_eq!(short, 40);
        // Those arrivals later, at the same density.
        let later = |more: u64| Density { elapsed: 400_000 + more * 8_000, ..sparse };
        assert!(!later(short - 1).promises(150));
        assert!(later(short).promises(150));
        // A loop of any length: one more than the price of an operation.
        assert_eq!(sparse.arrivals_short(None), op_price(WARM_AFTER) + 1 - 50);
        // One that promises is short of none.
        assert_eq!(later(short).arrivals_short(Some(150)), 0);
    }

    /// Code pays for its entries with what its iterations and straight
    /// pieces replace: an entry trace of four operations into a loop of
    /// thirty, ten rounds per entry, pays; ten rounds of four operations
    /// would not. Less than an iteration per entry pays if the way to
    /// the exits taken was long, not if it was short.
    #[test]
    fn entries_pay_for_what_their_iterations_replace() {
        assert!(entries_pay(1_000, 10_000, 4_000, 30));
        assert!(!entries_pay(1_000, 10_000, 4_000, 4));
        assert!(entries_pay(1_000, 0, 150_000, 100), "150 statements a way, no iteration");
        assert!(!entries_pay(1_000, 0, 70_000, 100), "70 statements a way pay one round trip, not two");
        assert!(!entries_pay(1_000, 999, 10_000, 30), "10 statements a way, about one iteration of 30");
        // The bound itself: 5 + 6 x 10 = 65 statements per entry pay for
        // the round trip's 64, 3 + 60 do not.
        assert!(entries_pay(1_000, 6_000, 5_000, 10));
        assert!(!entries_pay(1_000, 6_000, 3_000, 10));
    }

    /// An entry leaving by a piece's exit ran the piece's way up to it:
    /// of its recorded operations, the share of the exits after it is
    /// taken back from the work the piece counted on entry.
    #[test]
    fn an_exit_takes_back_the_way_after_it() {
        let exits: Vec<ExitId> = (10..14).map(ExitId).collect();
        let f = Function::new(flowc_ir::FunctionKind::Trace, Symbol::intern("b"));
        let mut code = Code::new(Kind::Bridge, f, "b".into(), 400);
        assert_eq!(unrun_after(&code, &exits, ExitId(10)), 300, "the first of four exits");
        assert_eq!(unrun_after(&code, &exits, ExitId(13)), 0, "the last");
        assert_eq!(unrun_after(&code, &exits, ExitId(20)), 0, "not one of its exits");
        code.kind = Kind::Body;
        assert_eq!(unrun_after(&code, &exits, ExitId(10)), 0, "a loop's body counts no work on entry");
    }

    /// Each piece of code costs [`PIECE_STEPS`] besides its operations:
    /// the same operations in more pieces are less affordable.
    #[test]
    fn the_budget_charges_each_piece_of_code() {
        let (allowance, work) = (400_000, 2_000_000);
        let ops = (allowance + work) / (COMPILE_STEPS_PER_OP * COMPILE_SHARE) - 100;
        assert!(within_budget(ops, 0, work, allowance));
        let room = allowance + work - ops * COMPILE_STEPS_PER_OP * COMPILE_SHARE;
        let pieces = room / (PIECE_STEPS * COMPILE_SHARE);
        assert!(pieces > 0);
        assert!(within_budget(ops, pieces, work, allowance));
        assert!(!within_budget(ops, pieces + 1, work, allowance));
    }

    /// The bound of a round of `head`'s loop in graph `graph` (`None`: the
    /// main one) of program `text`, with the labels `watched` watched.
    fn bound_of(text: &str, graph: Option<&str>, head: &str, watched: &[&str]) -> Option<usize> {
        let p = flowc_lang::syntax::parse("test", text).expect("it parses");
        let resolved = flowc_lang::interp::resolve::Resolved::new(&p, &[]);
        let g = resolved.graph_of(graph.map(Symbol::intern)).expect("the graph") as usize;
        let graph = &resolved.graphs[g];
        let blocks: Vec<u32> = watched.iter().map(|l| graph.labels[&Symbol::intern(l)]).collect();
        round_bound(graph, graph.labels[&Symbol::intern(head)], |b| blocks.contains(&b))
    }

    /// A loop whose blocks the program bounds: each block's statements and
    /// terminator once, both arms of a branch and the way out included;
    /// none where the round calls a function, goes round a loop of its
    /// own, or passes another watched label.
    #[test]
    fn the_program_bounds_a_round_of_a_loop_without_calls_or_loops_inside() {
        let text = "entry start(n = 5)
function twice(x):
    s:
        y = x * 2
        return y
start:
    i = n
    s = 0
    goto l
l:
    if i goto body else goto done
body:
    odd = i % 2
    if odd goto one else goto other
one:
    s = s + i
    goto next
other:
    s = s - 1
    s = s * 3
    goto next
next:
    i = i - 1
    goto l
done:
    print_and_stop(s)
";
        // l 1, body 2, one 2, other 3, next 2, done 1.
        assert_eq!(bound_of(text, None, "l", &["l"]), Some(11));
        let called = text.replace("    s = s - 1\n", "    s = call twice(s) then more\nmore:\n");
        assert_eq!(bound_of(&called, None, "l", &["l"]), None);
        // `next` watched: a hot spot inside the round.
        assert_eq!(bound_of(text, None, "l", &["l", "next"]), None);
        let nested = text.replace("    i = i - 1\n    goto l", "    i = i - 1\n    if odd goto body else goto l");
        assert_eq!(bound_of(&nested, None, "l", &["l"]), None);
        // A function's loop: l 1, body 4, done 1.
        let function = "entry start(n = 5)
function f(x):
    s:
        i = 20
        acc = x
        goto l
    l:
        if i goto body else goto done
    body:
        acc = acc * 3
        acc = acc % 1000003
        i = i - 1
        goto l
    done:
        return acc
start:
    r = call f(n) then end
end:
    print_and_stop(r)
";
        assert_eq!(bound_of(function, Some("f"), "l", &["l"]), Some(6));
    }

    /// A cache of pieces of common size is full at `max_traces` pieces;
    /// one of small pieces (little code, few exits each) holds up to
    /// twice as many, until their code or exits reach what that many of
    /// common size would have.
    #[test]
    fn small_pieces_get_more_room_in_the_cache() {
        let max = 2_000;
        assert!(!small_pieces_full(1_999, 10 << 20, 100_000, max, 2), "not yet at max_traces");
        // Common size: hanoi.b's code, statements' exits.
        assert!(small_pieces_full(2_000, 4 << 20, 2_000, max, 2));
        assert!(small_pieces_full(2_000, 1 << 20, 15_000, max, 2));
        // Small pieces: room for twice as many.
        assert!(!small_pieces_full(2_000, 1_500 << 10, 2_000, max, 2));
        assert!(!small_pieces_full(3_999, 3 << 20, 3_999, max, 2));
        assert!(small_pieces_full(4_000, 3 << 20, 4_000, max, 2));
        // Until their code or exits reach the common size's.
        assert!(small_pieces_full(3_000, max * PIECE_CODE_BYTES, 3_000, max, 2));
        assert!(small_pieces_full(3_000, 1 << 20, max * PIECE_EXITS, max, 2));
        // A room of 1: `max_traces` pieces whatever their size.
        assert!(small_pieces_full(2_000, 0, 0, max, 1));
    }
}

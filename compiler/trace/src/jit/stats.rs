//! What the JIT did during a run (`flowc run --engine jit --stats`): the
//! totals, and a line per piece of compiled code with how often it was
//! entered and how often each of its exits was taken.

use std::time::Duration;

/// How one exit of a piece of code fared.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExitReport {
    /// The exit's number in its code, in the order the code made them.
    pub index: usize,
    /// Where it resumes (the guard's label, or the label a trace leaves to).
    pub label: String,
    /// Times it returned to the JIT's driver (interpreter or bridge
    /// recording).
    pub to_driver: u64,
    /// Times it continued in its bridge, in machine code, through the
    /// exit buffer.
    pub linked: u64,
    /// Whether it jumps straight into its bridge, which runs in the same
    /// frame (crossings not counted: the jump is all they cost).
    pub direct: bool,
    /// The bridge attached to it, by name.
    pub bridge: Option<String>,
    /// Why it has none, where it never will ([`NoBridge`]).
    pub no_bridge: Option<NoBridge>,
}

/// Why an exit that returns to the driver gets no bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoBridge {
    /// It stores a value unbound, which resuming drops: no bridge can
    /// start from its state.
    Unbound,
    /// A `guard_value` whose chain of bridges holds the most values.
    Megamorphic,
    /// Its tree holds `Options::max_bridges` bridges.
    TreeFull,
    /// The cache was full and could not be dropped yet.
    CacheFull,
    /// Its bridge would record nothing: the block it leaves to returns,
    /// or the program ends there.
    Nothing,
    /// Its bridge's recording ran too long, or met a called loop past
    /// the unroll limit, and calling the function would not help.
    RecordingFailed,
    /// The code generator refused its bridge.
    CodeGen,
    /// It leaves for the dispatch tier's code, which runs it.
    Cold,
}

impl NoBridge {
    /// Said as `--stats` and the explorer say it.
    pub fn describe(self) -> &'static str {
        match self {
            NoBridge::Unbound => "it stores an unbound value",
            NoBridge::Megamorphic => "its guard_value's chain is full",
            NoBridge::TreeFull => "its tree holds the most bridges",
            NoBridge::CacheFull => "the cache was full",
            NoBridge::Nothing => "nothing to record",
            NoBridge::RecordingFailed => "its recording failed",
            NoBridge::CodeGen => "the code generator refused it",
            NoBridge::Cold => "left to the dispatch tier",
        }
    }
}

impl Stats {
    /// Exits that jump straight into a bridge running in their code's
    /// frame (whose crossings are not counted in [`ExitReport::linked`]).
    pub fn direct_links(&self) -> usize {
        self.per_trace.iter().flat_map(|t| &t.exits).filter(|e| e.direct).count()
    }
}

/// One piece of compiled code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceReport {
    /// The code's name in the IR (`dispatch`, `fetch.2`).
    pub name: String,
    /// `loop`, `entry` (from a key into another key's code) or `bridge`.
    pub kind: &'static str,
    /// The hot spot it starts at (`dispatch[pc=2]`), or for a bridge the
    /// exit it starts from (`exit 3 of dispatch`).
    pub start: String,
    pub recorded_ops: usize,
    pub optimized_ops: usize,
    /// Times the driver entered it from the interpreter.
    pub entries: u64,
    /// Loop iterations run from those entries.
    pub iterations: u64,
    pub compile_time: Duration,
    /// Its exits that were taken at least once.
    pub exits: Vec<ExitReport>,
}

/// What sent a run back to the interpreter once the JIT had started
/// (`Stats::interpreted` counts the statements interpreted until the
/// next stop by it).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Resumed {
    /// The JIT's start: nothing stopped yet.
    Start,
    /// Compiled code left by an exit to the interpreter (one without a
    /// bridge yet, or a bridge that could get to no code).
    Exit,
    /// A hot spot whose code is being optimized on the worker.
    Waiting,
    /// A hot spot that would be recorded, while the rest of a light start
    /// is prepared (`Jit::start_complete`).
    Starting,
    /// A hot spot deferred: the compile budget spent, or the cache full.
    Deferred,
    /// A hot spot arrived at too sparsely for code to pay back.
    Sparse,
    /// A recording: the program goes on from where it ended (code
    /// compiled or not).
    Recorded,
    /// Any other stop without code for the frame (a key given up, one
    /// counting again for other variables, code not admitting it).
    Other,
}

impl Resumed {
    pub const ALL: [Resumed; 8] = [
        Resumed::Start,
        Resumed::Exit,
        Resumed::Waiting,
        Resumed::Starting,
        Resumed::Deferred,
        Resumed::Sparse,
        Resumed::Recorded,
        Resumed::Other,
    ];

    /// How `--stats` names the statements interpreted after it.
    fn name(self) -> &'static str {
        match self {
            Resumed::Start => "at the start",
            Resumed::Exit => "after exits",
            Resumed::Waiting => "waiting for the worker",
            Resumed::Starting => "waiting for the JIT's start",
            Resumed::Deferred => "deferred by the budget or a full cache",
            Resumed::Sparse => "too sparse to compile",
            Resumed::Recorded => "after recordings",
            Resumed::Other => "at other stops",
        }
    }
}

/// Where the interpreter ran once the JIT had started: the statements of
/// each stretch between two stops, by what began the stretch
/// ([`Resumed`]), and the longest stretch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interpreted {
    statements: [u64; Resumed::ALL.len()],
    stretches: [u64; Resumed::ALL.len()],
    longest: u64,
}

impl Interpreted {
    /// Counts a stretch of `statements` begun by `by`.
    pub fn add(&mut self, by: Resumed, statements: u64) {
        self.statements[by as usize] += statements;
        self.stretches[by as usize] += 1;
        self.longest = self.longest.max(statements);
    }

    /// Statements interpreted by what began their stretch.
    pub fn by(&self, by: Resumed) -> u64 {
        self.statements[by as usize]
    }

    /// Stretches `by` began.
    pub fn stretches(&self, by: Resumed) -> u64 {
        self.stretches[by as usize]
    }

    /// The statements of the longest stretch.
    pub fn longest(&self) -> u64 {
        self.longest
    }

    pub fn total(&self) -> u64 {
        self.statements.iter().sum()
    }
}

/// One hot spot: where it is, how many arrivals the interpreter counted
/// there (since it last started counting), and what it does now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyReport {
    pub key: String,
    pub arrivals: u32,
    /// `counting`, `compiled` (entered at once) or `given up`.
    pub state: &'static str,
}

/// What the JIT did during one run.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Loop traces compiled (retraces included).
    pub traces: usize,
    /// Traces that start at a hot spot and end by jumping into the code
    /// of another.
    pub entry_traces: usize,
    /// Bridges compiled.
    pub bridges: usize,
    /// Bridges that jumped back to the head of a loop around their start
    /// without code and ended there, for the interpreter to get that loop
    /// recorded (`jit::recording`'s `BackJump`).
    pub bridges_to_heads: usize,
    /// Trees compiled ([`crate::tree`]), and the bridges grafted into them
    /// in all.
    pub trees: usize,
    pub grafted: usize,
    /// Labels made joins ([`super::joins`]): hot spots whose trace the
    /// exits there share, instead of each recording a bridge.
    pub joins: usize,
    /// Loop traces made for inputs a speculating loop trace refused (the
    /// bridge of its entry check).
    pub retraces: usize,
    /// Loop traces of inner loops, cut from a recording that started in an
    /// outer loop ([`crate::jit`] "Inner loops first").
    pub inner_first: usize,
    /// Loop recordings that started inside a loop of the interpreted
    /// program, dropped where they jumped back to its head and recorded
    /// from there ([`super::recording`]'s `Head`).
    pub reheaded: usize,
    /// Of the inner loops, the ones optimized on the worker (the outer recording
    /// dropped, recorded again once the inner loop's code is there).
    pub inner_sent: usize,
    /// Hot spots whose recording was dropped for an inner loop on the
    /// worker, asked to record again once its code was there
    /// ([`super::Jit::inner_arrived`]).
    pub outer_asked: usize,
    /// Of the inner loops on the worker, the ones installed as soon as
    /// they came back, an outer recording waiting for them
    /// ([`super::Jit::collect_done`]).
    pub inner_installed: usize,
    /// Of the hot spots asked again, the ones whose recording closed no
    /// loop (its round was the loop's last), dropped to count again.
    pub outer_closed_none: usize,
    /// Loop traces recorded round an outer loop that mostly left at an
    /// inner loop's back edge, recorded again from inside it
    /// ([`super::Jit::left_its_loop`]).
    pub recorded_inside: usize,
    /// Of those and the ones recorded again for links laid out otherwise,
    /// the loops that stayed their hot spot's code: recording again gave
    /// no loop ([`super::Jit::record_again`]).
    pub kept_loops: usize,
    /// Loop traces recorded again without assuming a link's place, found
    /// laid out otherwise ([`super::Jit::irregular`]).
    pub relaid: usize,
    /// Loop traces recorded again once a loop their recording went through
    /// a round of got code that runs it to its end at once
    /// ([`super::Jit::nest_done_at_once`]).
    pub renested: usize,
    /// Bridges unlinked from their exits to give way to a loop recorded
    /// again ([`super::Jit::give_way`]), and entry traces dropped from
    /// their hot spots for it.
    pub gave_way: usize,
    /// Bridges unlinked from their exits to give way to the first loop of
    /// a hot spot they went through, one that does an inner loop at once.
    pub gave_way_first: usize,
    /// Bridges unlinked from their exits because they jump into a loop
    /// marked to be recorded again round an inner loop done at once
    /// ([`super::Jit::mark_nest`]).
    pub gave_way_nest: usize,
    /// Loops that skip to their last iteration where they are entered
    /// ([`crate::opt::fast_forward`]).
    pub fast_forwarded: usize,
    /// Arrivals of recordings at the head of such a loop that did its
    /// iterations but the last there and went on ([`crate::skip`]).
    pub skipped: usize,
    /// Exits whose way back to their own loop's head went round a loop
    /// around it that can do it at once: given no bridge, so that the
    /// interpreter gets the loop around recorded (`jit::recording`).
    pub left_around: usize,
    /// Loops not closed within the trace limit, cut into segments.
    pub segments: usize,
    /// Loop bodies optimized: a loop's once, or more where its first form
    /// did not skip (`jit::optimizing::peel_order`).
    pub loop_bodies: usize,
    /// Recordings abandoned (too long, leaving their function) or traces
    /// the code generator refused.
    pub aborted: usize,
    /// Hot spots the JIT gave up on (their traces kept aborting).
    pub ignored: usize,
    /// Times a hot spot or exit was not traced because the compile budget
    /// was spent ([`crate::jit`], "A compile budget") or the cache was
    /// full ("A full cache").
    pub deferred: u64,
    /// Times the code cache was full and all its code dropped
    /// ([`crate::jit`], "A full cache").
    pub flushes: u64,
    /// Jobs of the worker dropped at those flushes, pending or done
    /// (counted in `dropped_jobs` too).
    pub flushed_jobs: usize,
    /// Results of the worker dropped untaken when the cache was full
    /// (counted in `dropped_jobs` too).
    pub stale_jobs: usize,
    /// Loops recorded and then not compiled, because their hot spot was
    /// arrived at too sparsely for their code to pay back its compile
    /// ([`crate::jit::promises_payback`]), and hot spots not recorded at
    /// all because no loop recorded there could have paid back.
    pub sparse: u64,
    /// Of those, the judgments after which the hot spot waited for the
    /// arrivals it was short of (`Density::arrivals_short`) rather than
    /// asking again at the next doubling.
    pub sparse_waits: u64,
    /// Functions traces call rather than follow, because recordings got
    /// too long in them.
    pub not_followed: usize,
    /// Hot spots recorded again because their code followed a function
    /// no longer followed.
    pub refollowed: usize,
    /// Of the functions not followed, those a hot spot stopped following
    /// for its tree's bridges inside their loops ([`super::Options::call_bridges`]).
    pub branchy_calls: usize,
    /// Bridges from exits in a round of a loop unrolled from a followed
    /// call (whether or not its function was then called:
    /// [`super::Jit`]'s `branchy_call`).
    pub round_bridges: usize,
    /// Of the hot spots given up, those whose loops recordings follow for
    /// their constants ([`crate::constant_loops`]).
    pub left_to_constants: usize,
    /// Promotions given up as megamorphic ([`super::Jit`]'s "Megamorphic
    /// promotions").
    pub megamorphic: usize,
    /// Hot spots of hints that key nothing given up for the promotion
    /// after them (`Jit::move_hint`).
    pub hints_moved: usize,
    /// Times compiled code was entered from the interpreter.
    pub entries: u64,
    /// Calls of functions run by their compiled code (recursive ones, and
    /// those whose loops were too short to enter: [`Stats::calls_instead`]).
    pub calls: u64,
    /// Functions whose calls the JIT compiled once their loop's code was
    /// given up for not paying its round trips (see "Calls instead of
    /// short loops" in `jit/mod.rs`).
    pub calls_instead: u64,
    /// Functions compiled for calls as the eight passes optimized them
    /// (the others as the front end lowered them: `OPTIMIZE_FUNCTIONS_INSTS`).
    pub functions_optimized: usize,
    /// Exits that returned to the driver.
    pub guard_failures: u64,
    /// Exits that continued in a bridge without leaving machine code.
    pub bridged: u64,
    /// Statements interpreted once the JIT had started, by what sent the
    /// run back to the interpreter.
    pub interpreted: Interpreted,
    /// The statements compiled code stood in for, on the JIT's clock: its
    /// loops' iterations (each as many as it was recorded from), and its
    /// straight pieces' runs (bridges, entry traces, loops' preambles, each
    /// as many as it was recorded from; `Ctx::work`).
    pub work_in_loops: u64,
    pub work_straight: u64,
    /// The dispatch tier ([`super::tier`]): the label it runs, if one.
    pub tier: Option<String>,
    /// Times the driver entered the tier's code, and times its
    /// `guard_cold` left it (a position with code of its own, or hot).
    pub tier_entries: u64,
    pub tier_exits: u64,
    /// Times its `guard_cold` entered a position's code through the
    /// position's link, without the driver.
    pub tier_links: u64,
    /// Bridges that ended by entering the tier, having passed
    /// `Options::tier_bridge_positions` hot spots without code.
    pub bridges_into_tier: u64,
    /// Bridges into the tier made past a full cache
    /// (`Options::short_bridges`).
    pub short_bridges: u64,
    /// Exits of the tier's own tree recorded past a full cache.
    pub tier_bridges_past_full: u64,
    /// Why the tier was given up, if it was.
    pub tier_given_up: Option<String>,
    /// Operations recorded, over all traces and bridges.
    pub recorded_ops: usize,
    /// Instructions left after optimization, over all traces and bridges.
    pub optimized_ops: usize,
    /// Time spent recording.
    pub record_time: Duration,
    /// Time spent converting, optimizing and compiling traces.
    pub compile_time: Duration,
    /// Bytes of machine code of the traces and bridges.
    pub code_size: usize,
    /// Exits of the compiled code.
    pub exits: usize,
    /// Bytes of the resume records compiled code keeps, packed (0 where
    /// it keeps its IR).
    pub record_bytes: usize,
    /// Of that, time spent converting to IR and optimizing (the rest is
    /// code generation).
    pub optimize_time: Duration,
    /// Of that, time spent optimizing on the worker ([`crate::jit`]'s
    /// `background`), and generating code there, in so many jobs (of
    /// which so many had their code generated there); and jobs dropped at
    /// the end of a run, not yet installed.
    pub background_time: Duration,
    pub background_jobs: usize,
    /// Jobs sent to the worker with object handles lent
    /// (`flowc_lang::heap::lend`), installed or not.
    pub lent_jobs: usize,
    pub emitted_apart: usize,
    pub dropped_jobs: usize,
    /// The most jobs the worker had pending or ready at once.
    pub most_pending: usize,
    /// Hot spots counted, and how many arrivals they saw in all.
    pub keys: usize,
    pub arrivals: u64,
    /// Whether the JIT took over from a light start ([`super::Prepared::light`]),
    /// and if so when (in statements the interpreter ran, warm-up
    /// included) the rest of it was asked for, and adopted.
    pub light_start: bool,
    pub start_rest: Option<(u64, Option<u64>)>,
    /// What became of the heap's row (`flowc_lang::heap::rows`) in the run.
    pub row: flowc_lang::heap::rows::RowStats,
    /// Per piece of compiled code, in the order they were compiled.
    pub per_trace: Vec<TraceReport>,
    /// Per hot spot, most arrivals first (then by name): every one when
    /// there are at most a hundred or the JIT logs, else the hundred or so
    /// most arrived at (all tied with the hundredth).
    pub per_key: Vec<KeyReport>,
}

/// Hot spots `Display` lists (the log lists them all).
const KEYS_SHOWN: usize = 10;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl Stats {
    /// The compile time the running thread spent (the rest was spent on
    /// the worker while it ran on).
    pub fn compile_time_here(&self) -> Duration {
        self.compile_time.saturating_sub(self.background_time)
    }

    /// Every hot spot, a line each.
    pub fn keys_text(&self) -> String {
        self.per_key.iter().map(|k| format!("  {} {}: {} arrivals\n", k.state, k.key, k.arrivals)).collect()
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "traces:          {} ({} retraced, {} inner loops cut from outer recordings ({} sent to the worker; {} times an inner loop's code installed as it came, an outer hot spot waiting for it; {} outer hot spots asked again once it was there, {} of them dropped for a round that closed no loop), {} recorded again inside the loop they left, {} recorded again for links laid out otherwise, {} recorded again round an inner loop done at once ({} of these three kinds kept: no loop came of it), {} counted loops run to their end at once ({} times done at once by a recording around one, {} exits left to the interpreter for one), {} recorded again from their head)",
            self.traces, self.retraces, self.inner_first, self.inner_sent, self.inner_installed, self.outer_asked, self.outer_closed_none, self.recorded_inside, self.relaid, self.renested, self.kept_loops, self.fast_forwarded, self.skipped, self.left_around, self.reheaded
        )?;
        writeln!(
            f,
            "entry traces:    {} ({} of them segments of loops longer than a trace)",
            self.entry_traces, self.segments
        )?;
        writeln!(
            f,
            "bridges:         {} ({} of them and entry traces gave way to a loop recorded again, {} to a loop's first code that does an inner loop at once, {} to a loop to be recorded again round one; {} ended at the head of a loop around their start)",
            self.bridges, self.gave_way, self.gave_way_first, self.gave_way_nest, self.bridges_to_heads
        )?;
        writeln!(f, "trees:           {} ({} bridges grafted)", self.trees, self.grafted)?;
        writeln!(f, "joins:           {} (labels whose exits share one trace)", self.joins)?;
        writeln!(
            f,
            "aborted:         {} ({} hot spots given up ({} loops left to the recordings that follow them), {} functions called rather than followed ({} for their loops' bridges, of {} bridges in rounds of called loops), {} promotions given up as megamorphic, {} hot spots recorded again for those)",
            self.aborted,
            self.ignored,
            self.left_to_constants,
            self.not_followed,
            self.branchy_calls,
            self.round_bridges,
            self.megamorphic,
            self.refollowed
        )?;
        writeln!(
            f,
            "hot spots:       {} ({} arrivals counted; {} hints that key nothing moved to the promotion after them)",
            self.keys, self.arrivals, self.hints_moved
        )?;
        if self.light_start {
            let rest = match self.start_rest {
                None => "the rest never needed".to_string(),
                Some((asked, None)) => format!("the rest asked for at statement {asked}, not ready by the run's end"),
                Some((asked, Some(ready))) => {
                    format!("the rest asked for at statement {asked}, adopted at statement {ready}")
                }
            };
            writeln!(f, "start:           light (labels and recursive functions from the text; {rest})")?;
        }
        match (&self.tier, &self.tier_given_up) {
            (Some(label), given_up) => writeln!(
                f,
                "dispatch tier:   at {label}: {} entries, {} left for positions with code or hot, {} linked into a position's code, {} bridges cut short into it, {} bridges into it past a full cache, {} of its own exits recorded past it{}",
                self.tier_entries,
                self.tier_exits,
                self.tier_links,
                self.bridges_into_tier,
                self.short_bridges,
                self.tier_bridges_past_full,
                given_up.as_ref().map_or(String::new(), |why| format!("; given up: {why}"))
            )?,
            (None, _) => writeln!(f, "dispatch tier:   none")?,
        }
        writeln!(
            f,
            "deferred:        {} (hot spots and exits over the compile budget or held back by a full cache), {} loops and hot spots too sparse to pay back ({} then waiting for the arrivals they were short of)",
            self.deferred, self.sparse, self.sparse_waits
        )?;
        writeln!(
            f,
            "entries:         {} ({} compiled calls; {} functions called compiled for loops too short to enter; {} functions compiled optimized by the passes)",
            self.entries, self.calls, self.calls_instead, self.functions_optimized
        )?;
        writeln!(
            f,
            "guard failures:  {} ({} to the driver, {} into bridges linked through the exit buffer)",
            self.guard_failures + self.bridged,
            self.guard_failures,
            self.bridged
        )?;
        write!(f, "interpreted:     {} statements once the JIT started (", self.interpreted.total())?;
        let mut first = true;
        for by in Resumed::ALL {
            let n = self.interpreted.by(by);
            if n > 0 {
                let sep = if first { "" } else { ", " };
                write!(f, "{sep}{n} {} in {} stretches", by.name(), self.interpreted.stretches(by))?;
                first = false;
            }
        }
        writeln!(f, "); the longest {} statements", self.interpreted.longest())?;
        writeln!(
            f,
            "compiled work:   {} statements stood in for ({} by loop iterations, {} by straight code: bridges, entry traces, preambles)",
            self.work_in_loops.saturating_add(self.work_straight),
            self.work_in_loops,
            self.work_straight
        )?;
        writeln!(
            f,
            "operations:      {} recorded, {} after optimization ({} loop bodies optimized)",
            self.recorded_ops, self.optimized_ops, self.loop_bodies
        )?;
        writeln!(f, "record time:     {:.3} ms", ms(self.record_time))?;
        let per_op = match self.optimized_ops {
            0 => 0.0,
            n => self.compile_time.as_secs_f64() * 1e6 / n as f64,
        };
        write!(
            f,
            "compile time:    {:.3} ms ({:.3} ms optimizing, {:.3} ms generating code; {per_op:.1} µs per operation)",
            ms(self.compile_time),
            ms(self.optimize_time),
            ms(self.compile_time.saturating_sub(self.optimize_time))
        )?;
        if self.background_jobs + self.dropped_jobs > 0 {
            write!(
                f,
                "\nbackground:      {} jobs optimized on the worker in {:.3} ms ({} with their code generated there, {} dropped ({} of them at flushes, {} not taken when the cache was full), at most {} waiting at once); {} sent with objects lent; {:.3} ms compiling on the running thread",
                self.background_jobs,
                ms(self.background_time),
                self.emitted_apart,
                self.dropped_jobs,
                self.flushed_jobs,
                self.stale_jobs,
                self.most_pending,
                self.lent_jobs,
                ms(self.compile_time_here())
            )?;
        }
        if self.row.found > 0 {
            write!(
                f,
                "\nheap row:        found {} times, grown by {} cells, emptied {} times (walks along it checked once, not link by link)",
                self.row.found, self.row.extended, self.row.emptied
            )?;
        }
        write!(
            f,
            "\nmachine code:    {:.1} KB, {} exits, {:.1} KB of resume records",
            self.code_size as f64 / 1024.0,
            self.exits,
            self.record_bytes as f64 / 1024.0
        )?;
        if self.flushes > 0 {
            write!(
                f,
                " (since the last of {} flushes: the cache full, all its code dropped and compiled again as it came round)",
                self.flushes
            )?;
        }
        for t in &self.per_trace {
            write!(
                f,
                "\n  {} {} from {}: {} ops ({} recorded), {} entries, {} iterations, compiled in {:.3} ms",
                t.kind,
                t.name,
                t.start,
                t.optimized_ops,
                t.recorded_ops,
                t.entries,
                t.iterations,
                ms(t.compile_time)
            )?;
            for e in &t.exits {
                write!(f, "\n    exit {} to {}: {} to the driver, ", e.index, e.label, e.to_driver)?;
                match e.direct {
                    true => write!(f, "linked directly")?,
                    false => write!(f, "{} linked", e.linked)?,
                }
                if let Some(b) = &e.bridge {
                    write!(f, " (bridge {b})")?;
                }
                if let Some(why) = e.no_bridge {
                    write!(f, " (no bridge: {})", why.describe())?;
                }
            }
        }
        if !self.per_key.is_empty() {
            write!(f, "\nhot spots by arrivals:")?;
            for k in self.per_key.iter().take(KEYS_SHOWN) {
                write!(f, "\n  {} {}: {} arrivals", k.state, k.key, k.arrivals)?;
            }
            if self.per_key.len() > KEYS_SHOWN {
                write!(f, "\n  ... and {} more (the JIT log lists them all)", self.per_key.len() - KEYS_SHOWN)?;
            }
        }
        Ok(())
    }
}

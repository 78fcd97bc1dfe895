//! `flowc run FILE [--entry L] [--env ENV] [--engine E] [--fuel N] [--stats]`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use flowc_lang::interp::{self, Config, Counts};
use flowc_trace::jit::PrepareApart;

use crate::progress::Progress;
use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    start: input::Start,
    /// The engine that runs the program.
    #[arg(long, value_enum, default_value = "interp")]
    engine: Engine,
    /// Stop with an error after N executed statements.
    #[arg(long)]
    fuel: Option<u64>,
    /// Print run statistics to stderr.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    jit: input::JitArgs,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Engine {
    /// The reference interpreter.
    Interp,
    /// The SSA IR from the front end, run by the IR interpreter.
    Ir,
    /// Compiled ahead of time through the eight passes to native code.
    Native,
    /// The interpreter with the tracing JIT: hot loops traced, optimized
    /// and compiled to native code.
    Jit,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Ir => "ir",
            Engine::Native => "native",
            Engine::Jit => "jit",
        }
    }
}

/// A run of native code: the outcome, what the run did, how long
/// compiling (front end, passes, code generation) and running took, and
/// the bytes of machine code.
pub struct NativeRun {
    pub result: Result<interp::Outcome, interp::RuntimeError>,
    pub counts: Counts,
    pub compile: Duration,
    pub run: Duration,
    pub code_size: usize,
    /// Optimized tiers compiled while running (tiered code,
    /// `flowc_codegen::tiers`), and the time that took on the running
    /// thread (part of the running time).
    pub tier_ups: flowc_codegen::in_memory::TierUpStats,
    /// Each phase of compiling and the time it took
    /// ([`crate::progress::Progress::finish`]).
    pub phases: Vec<(&'static str, Duration)>,
}

/// [`native`], also returning what the run did and cost ([`NativeRun`]).
pub fn native_counted(
    program: &flowc_lang::Program,
    label: flowc_lang::Symbol,
    env: &[(flowc_lang::Symbol, flowc_lang::Value)],
    config: &Config,
) -> Result<NativeRun, Failure> {
    Lowered::new(program, label).compile_and_run(env, config)
}

/// A native run after its first phase: the program lowered by the front
/// end (or the error lowering raised), timed from the start. Nothing after
/// it reads the syntax tree, which the caller may free
/// ([`main`] does).
pub struct Lowered {
    started: Instant,
    progress: Progress,
    module: Result<flowc_ir::Module, interp::ErrorKind>,
}

impl Lowered {
    pub fn new(program: &flowc_lang::Program, label: flowc_lang::Symbol) -> Lowered {
        let started = Instant::now();
        let progress = Progress::for_program(program);
        progress.phase("front end");
        Lowered { started, progress, module: flowc_frontend::lower(program, label) }
    }

    /// The eight passes, code generation, and the run with `env`.
    pub fn compile_and_run(
        self,
        env: &[(flowc_lang::Symbol, flowc_lang::Value)],
        config: &Config,
    ) -> Result<NativeRun, Failure> {
        let Lowered { started, progress, module } = self;
        let module = match module {
            Ok(m) => m,
            Err(kind) => {
                return Ok(NativeRun {
                    result: Err(interp::RuntimeError { kind, at: None }),
                    counts: Counts::default(),
                    compile: started.elapsed(),
                    run: Duration::ZERO,
                    code_size: 0,
                    tier_ups: Default::default(),
                    phases: progress.finish(),
                });
            }
        };
        progress.phase("the eight passes");
        // Only the version this environment runs (a built executable, which
        // takes its environment when it runs, has both).
        let options = flowc_passes::context::Options::default();
        let wanted = flowc_passes::versions::Wanted::For(env);
        let versions = flowc_passes::versions::pipeline(module, &options, wanted, |_, _, _| {});
        progress.phase("code generation");
        // Under --fuel the code counts it (one step per loop iteration).
        // Code that may be hot starts cheap and is compiled optimized once
        // it proves hot (`flowc_codegen::tiers`).
        let options = flowc_codegen::Options {
            fuel: config.fuel.is_some(),
            tiering: Some(flowc_codegen::tiers::Tiering::default()),
            ..Default::default()
        };
        // The IR is moved into the code (tiered code compiles from it),
        // not copied: it is not needed here any more.
        let flowc_passes::versions::Versions { generic, small, .. } = versions;
        let words = small.as_ref().map(|(m, params)| (m, params.as_slice()));
        let native = flowc_codegen::Native::compile_owned_versions(generic, words, options)
            .map_err(|e| Failure::input(format!("code generation failed: {e}")))?;
        drop(small);
        let phases = progress.finish();
        let compile = started.elapsed();
        let ran = Instant::now();
        let (result, counts) = native.run_counted(env, config);
        let run = ran.elapsed();
        let (code_size, tier_ups) = (native.code_size(), native.tier_ups());
        Ok(NativeRun { result, counts, compile, run, code_size, tier_ups, phases })
    }
}

pub fn main(args: Args) -> Result<(), Failure> {
    // Only native runs free the syntax tree and may parse the text again.
    let (text, program, label, env) = match args.engine {
        Engine::Native => {
            let (text, program, label, env) = args.start.load_with_text()?;
            (Some(text), program, label, env)
        }
        Engine::Interp | Engine::Ir | Engine::Jit => {
            let (program, label, env) = args.start.load()?;
            (None, program, label, env)
        }
    };
    let config = Config { fuel: args.fuel, ..Config::default() };
    let started = Instant::now();
    let heap_before = flowc_lang::heap::stats();
    // The compile time of the native engine (the JIT's is in its stats).
    let mut compile_time = None;
    let mut phases = Vec::new();
    let mut tier_ups = flowc_codegen::in_memory::TierUpStats::default();
    let lower_failed = |kind| (Err(interp::RuntimeError { kind, at: None }), Counts::default());
    // The run's result, and the program if the engine kept it.
    let (result, counts, kept) = match args.engine {
        Engine::Native => {
            let lowered = Lowered::new(&program, label);
            // The passes and the code generator read no syntax tree: it
            // goes before they run, and with it 120 KB of the 1.1 MB a
            // 10^3-statement program took beyond a trivial one. An error
            // parses the text again to name its statement
            // ([`input::SourceText`]).
            drop(program);
            let run = lowered.compile_and_run(&env, &config)?;
            compile_time = Some(run.compile);
            phases = run.phases;
            tier_ups = run.tier_ups;
            (run.result, run.counts, None)
        }
        Engine::Interp => {
            let (result, counts) = interp::run_counted(&program, label, &env, &config);
            (result, counts, Some(Arc::new(program)))
        }
        Engine::Ir => {
            let (result, counts) = match flowc_frontend::lower(&program, label) {
                Ok(module) => flowc_ir::interp::run_counted(&module, &env, &config),
                Err(kind) => lower_failed(kind),
            };
            (result, counts, Some(Arc::new(program)))
        }
        Engine::Jit => {
            // Shared with the thread that prepares the JIT's start. Kept
            // until the process exits: the JIT's worker, which the run does
            // not wait for, may still read it (`Options::leave_to_exit`).
            let program = Arc::new(program);
            std::mem::forget(program.clone());
            let (result, counts, took) = run_jit(&args, &program, label, &env, &config)?;
            if let Some(took) = took {
                compile_time = Some(took);
            }
            (result, counts, Some(program))
        }
    };
    let elapsed = started.elapsed();
    if let Ok(outcome) = &result {
        print!("{}", outcome.output());
    }
    if args.stats {
        eprintln!("{}", stats_line(args.engine, args.fuel.is_some(), result.is_ok(), counts, elapsed, compile_time));
        eprintln!("{}", flowc_lang::heap::report(&flowc_lang::heap::stats().since(&heap_before)));
        if !phases.is_empty() {
            eprintln!("compiling: {}", crate::progress::describe(&phases));
        }
        if tier_ups.count > 0 {
            eprintln!("{}", tiering_line(tier_ups));
        }
    }
    match result {
        Ok(_) => Ok(()),
        Err(mut e) => {
            // A file changed since it was read names no statement text.
            let Some(program) = kept.or_else(|| text.as_ref().and_then(input::SourceText::reparse).map(Arc::new))
            else {
                return Err(Failure::input(e));
            };
            // Compiled code knows where an error happened, not the text.
            e.at = e.at.map(|at| if at.text.is_empty() { program.with_text(at) } else { at });
            Err(input::run_failure(&program, label, &env, e))
        }
    }
}

/// What [`run_jit`] came to: the result, what the run did, and with
/// `--stats` the compile time it waited for.
type JitRun = (Result<interp::Outcome, interp::RuntimeError>, Counts, Option<Duration>);

/// `--engine jit`: the interpreter alone for the warm-up (`--warmup`, by
/// default [`flowc_trace::jit::warmup`]), then — if the run goes on — the
/// program lowered and the JIT taking over where the interpreter paused
/// (`flowc_trace::jit`, "Starting late"). The result, what the run did,
/// and with `--stats` the compile time the run waited for.
fn run_jit(
    args: &Args,
    program: &Arc<flowc_lang::Program>,
    label: flowc_lang::Symbol,
    env: &[(flowc_lang::Symbol, flowc_lang::Value)],
    config: &Config,
) -> Result<JitRun, Failure> {
    let warmup = args.jit.warmup.unwrap_or_else(|| flowc_trace::jit::warmup(program));
    // Opened first: a log that cannot be written fails the run before it
    // starts, as it did when the JIT started at once.
    let log = args.jit.open_log()?;
    // The main graph only where the JIT needs it lowered.
    let lower = move |p: &flowc_lang::Program| {
        flowc_frontend::lower_unless_main(p, label, |functions, signatures| {
            flowc_trace::jit::main_wanted(p, label, functions, signatures)
        })
    };
    let mut paused = None;
    // A big program whose text gives the labels to watch starts light:
    // nothing lowered until the JIT first wants to record
    // (`flowc_trace::jit`, "A start in proportion to use").
    let light = flowc_trace::jit::starts_light(program);
    let mut apart = match light {
        true => flowc_trace::jit::PrepareOnThread::light(program.clone(), label),
        false => flowc_trace::jit::PrepareOnThread::new(program.clone(), label, Box::new(lower)),
    };
    if warmup > 0 {
        // The JIT's start prepared on the other core while the interpreter
        // runs alone (`flowc_trace::jit::Preparing`), once the run is long
        // enough to pay for the thread; the interpreter goes on until it
        // is done.
        let prepare = flowc_trace::jit::prepare_apart(program).then_some(&mut apart as &mut dyn PrepareApart);
        match flowc_trace::jit::interpret_first_preparing(program, label, env, config, warmup, prepare) {
            flowc_trace::jit::Warmup::Paused(p) => paused = Some(p),
            flowc_trace::jit::Warmup::Done(result, counts, waited) => {
                // Not waited for: the thread finishes on its own.
                drop(apart);
                input::JitArgs::log_not_started(log, warmup, waited);
                if args.stats && result.is_ok() {
                    eprintln!("jit: not started ({})", input::JitArgs::not_started(warmup, waited));
                }
                return Ok((result, counts, args.stats.then_some(Duration::ZERO)));
            }
        }
    }
    let prepared = match apart.finish(lower) {
        Ok(prepared) => prepared,
        Err(kind) => {
            let counts = paused.map_or_else(Counts::default, |p| p.counts);
            return Ok((Err(interp::RuntimeError { kind, at: None }), counts, None));
        }
    };
    // Nothing reads the traces' IR after they are compiled, and nothing
    // needs the JIT's decisions to be the same from run to run: traces are
    // optimized on a second core where there is one (`compare` and
    // `explore`, which show what the JIT made, keep them deterministic).
    let options = flowc_trace::jit::Options {
        keep_ir: false,
        background: flowc_trace::jit::second_core(),
        describe_keys: args.stats,
        leave_to_exit: true,
        ..args.jit.options()
    };
    let mut jit = input::JitArgs::jit_logging(program, prepared, options, log);
    if light {
        jit.prepare_later(Box::new(flowc_trace::jit::Later::new(program.clone(), label, lower)));
    }
    let waited = paused.as_ref().map_or(0, |p| p.waited);
    let result = match paused {
        Some(p) => jit.take_over(p, config),
        None => jit.run(label, env, config),
    };
    let mut took = None;
    if args.stats {
        let stats = jit.stats();
        took = Some(stats.compile_time_here());
        if warmup > 0 && waited > 0 {
            eprintln!("jit: started after the warm-up of {warmup} statements and {waited} more while it was prepared");
        } else if warmup > 0 {
            eprintln!("jit: started after the warm-up of {warmup} statements");
        }
        // Formatted whole, then written at once: standard error is not
        // buffered, and a long run's listing of its traces written piece
        // by piece was some 45 ms of system calls (the BF fractal 5's
        // 1,300 pieces of code), time the run's process was charged.
        let listing = stats.to_string();
        eprintln!("{listing}");
    }
    let counts = jit.counts();
    // The process ends with the run: what the JIT holds (the lowered
    // program, its code and tables, the heap's objects) is left to the
    // exit instead of freed piece by piece, as compilers do with what
    // they hold at exit (clang's `-disable-free`). Freed, it was 3-4 ms of
    // a 75 ms run of 2,000 functions (`jit_short`'s many functions), much
    // of it blocks the preparing thread allocated, freed on this one. The
    // log is closed first: it buffers.
    jit.close_log();
    std::mem::forget(jit);
    Ok((result, counts, took))
}

/// The `--stats` summary of a run, also of one that ended in an error.
/// Compiled code counts no statements: under `native` the line says so
/// (or, under `--fuel`, gives the loop iterations it counted instead) and
/// gives the compile time.
fn stats_line(
    engine: Engine,
    fuel: bool,
    ok: bool,
    counts: Counts,
    elapsed: Duration,
    compile_time: Option<Duration>,
) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let steps = match engine {
        Engine::Native if fuel => format!("{} loop iterations", counts.steps),
        Engine::Native => "statements not counted by compiled code".to_string(),
        Engine::Jit => format!("{} steps interpreted", counts.steps),
        Engine::Interp | Engine::Ir => format!("{} steps", counts.steps),
    };
    let time = match compile_time {
        Some(c) => format!(
            "{:.3} ms ({:.3} ms compiling, {:.3} ms running; compiling {:.1}% of the run)",
            ms(elapsed),
            ms(c),
            ms(elapsed.saturating_sub(c)),
            100.0 * c.as_secs_f64() / elapsed.as_secs_f64().max(1e-9)
        ),
        None => format!("{:.3} ms", ms(elapsed)),
    };
    let end = if ok { "" } else { ", ended in an error" };
    format!("stats: engine {}, {steps}, {} allocations, {time}{end}", engine.name(), counts.allocations)
}

/// The `--stats` line of what tiering up did (`tiering: ...`; the
/// benchmarks read its count and time).
fn tiering_line(t: flowc_codegen::in_memory::TierUpStats) -> String {
    let n = t.count;
    let tiers = if n == 1 { "tier" } else { "tiers" };
    let regions = match t.regions {
        0 => String::new(),
        1 if n == 1 => " (a region of a huge function)".to_string(),
        r if r == n => " (regions of huge functions)".to_string(),
        r => format!(" ({r} of them regions of huge functions)"),
    };
    let ms = t.time.as_secs_f64() * 1e3;
    format!("tiering: {n} optimized {tiers}{regions} compiled while running, in {ms:.3} ms of the running thread")
}

#[cfg(test)]
mod tests {
    use flowc_codegen::in_memory::TierUpStats;

    #[test]
    fn the_tiering_line_says_how_many_tiers_are_regions() {
        let line = |count, regions| {
            super::tiering_line(TierUpStats { count, regions, time: std::time::Duration::from_micros(1500) })
        };
        let lines = [line(1, 0), line(3, 0), line(1, 1), line(4, 4), line(5, 2)].join("\n");
        expect_test::expect![[r#"
            tiering: 1 optimized tier compiled while running, in 1.500 ms of the running thread
            tiering: 3 optimized tiers compiled while running, in 1.500 ms of the running thread
            tiering: 1 optimized tier (a region of a huge function) compiled while running, in 1.500 ms of the running thread
            tiering: 4 optimized tiers (regions of huge functions) compiled while running, in 1.500 ms of the running thread
            tiering: 5 optimized tiers (2 of them regions of huge functions) compiled while running, in 1.500 ms of the running thread"#]]
        .assert_eq(&lines);
    }
}

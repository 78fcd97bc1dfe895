//! `flowc trace FILE --entry L --env ENV [--optimizer ssa|blog|none]
//! [--format prolog|readable] [--layout nested|lines] [--stats] [--dot FILE]`: the
//! series' `do_trace`: trace from L until the loop closes, print the trace
//! and the optimized trace, run it, resume the interpreter when a guard
//! fails, and print the program's output.
//!
//! `ssa` (the default) optimizes the trace as IR; `blog` is Part 3's
//! optimizer exactly; `none` is Part 2's identity. `--format readable`
//! shows the recorded trace in the readable syntax and an SSA trace in the
//! IR text format.

use flowc_lang::interp::Config;
use flowc_lang::{env, Program};
use flowc_trace::opt::{self, TraceStats};
use flowc_trace::record::{self, Heap, Recorded};
use flowc_trace::trace::{Trace, TraceOp};
use flowc_trace::{blog, run, run_ir, terms, to_ir};

use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    /// The program (`-` reads standard input).
    file: String,
    /// The label to trace from (the trace anchor).
    #[arg(long)]
    entry: String,
    /// The environment, e.g. '[res/1,x/10,y/20]' (default: the entry fact's).
    #[arg(long)]
    env: Option<String>,
    /// The trace optimizer.
    #[arg(long, value_enum, default_value = "ssa")]
    optimizer: Optimizer,
    /// How traces are written.
    #[arg(long, value_enum, default_value = "prolog")]
    format: Format,
    /// Nested terms as Parts 2–3 print them, or one operation per line as Part 4 does.
    #[arg(long, value_enum, default_value = "nested")]
    layout: Layout,
    /// Print operation and guard counts before and after optimization, and
    /// resume-data bytes per guard, to stderr.
    #[arg(long)]
    stats: bool,
    /// Bound on interpreted statements while running the trace and after.
    #[arg(long)]
    fuel: Option<u64>,
    /// Also write the trace IR as Graphviz to FILE (`--optimizer ssa`):
    /// one graph as converted, one as optimized.
    #[arg(long, value_name = "FILE")]
    dot: Option<std::path::PathBuf>,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Optimizer {
    /// The SSA trace optimizer.
    Ssa,
    /// Part 3's optimizer, exactly.
    Blog,
    /// No optimization (Part 2).
    None,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Format {
    Prolog,
    Readable,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Layout {
    Nested,
    Lines,
}

fn render(t: &Trace, format: Format, layout: Layout) -> String {
    match (format, layout) {
        (Format::Prolog, Layout::Nested) => format!("{}\n", t.nested()),
        (Format::Prolog, Layout::Lines) => format!("{}\n", t.lines()),
        (Format::Readable, _) => flowc_trace::trace::readable(t),
    }
}

/// Counts of a series-form trace: operations, guards, resume bytes (a
/// 16-byte header per guard's list and 8 bytes per entry). The whole trace
/// is one iteration.
fn blog_stats(t: &Trace) -> TraceStats {
    let mut s = TraceStats::default();
    for op in &t.ops {
        match op {
            TraceOp::Guard { resume, .. } => {
                s.guards += 1;
                s.resume_bytes += 16 + 8 * resume.len();
            }
            _ => s.operations += 1,
        }
    }
    (s.loop_operations, s.loop_guards) = (s.operations, s.guards);
    s
}

fn report(what: &str, s: &TraceStats) {
    eprintln!(
        "{what:<10} {:>6} operations {:>5} guards {:>8.1} resume bytes per guard, per iteration {} operations {} guards",
        s.operations,
        s.guards,
        s.bytes_per_guard(),
        s.loop_operations,
        s.loop_guards
    );
}

fn check(f: &flowc_ir::Function, after: &str) -> Result<(), Failure> {
    flowc_ir_checker::check(f).map_err(|vs| {
        let lines: Vec<String> = vs.iter().map(|v| format!("  {v}")).collect();
        Failure::input(format!("trace IR invalid after {after}:\n{}", lines.join("\n")))
    })
}

/// The program lowered from `entry` (its functions and hints for the
/// trace optimizer), and whether the optimizer may remove allocations:
/// only when the program cannot observe allocation numbers.
fn lowered(program: &Program, entry: flowc_lang::Symbol) -> (flowc_ir::Module, bool) {
    match flowc_frontend::lower(program, entry) {
        Ok(m) => {
            let removable = !flowc_passes::observe::allocations_observable(&m);
            (run_ir::hints(&m), removable)
        }
        Err(_) => (flowc_ir::Module::default(), false),
    }
}

pub fn main(args: Args) -> Result<(), Failure> {
    let program = input::load(&args.file)?;
    let (label, env) = input::start(&program, Some(&args.entry), args.env.as_deref())?;
    let config = Config { fuel: args.fuel, ..Config::default() };
    let mut heap = Heap::new(&program);
    let recorded = match record::record(&program, label, env::from_pairs(&env), &mut heap, 1_000_000) {
        Ok(recorded) => recorded,
        Err(record::TraceError::Runtime(e)) => return Err(input::run_failure(&program, label, &env, e)),
        Err(e) => return Err(Failure::input(e)),
    };
    let (trace, env) = match recorded {
        Recorded::Printed(v) => {
            println!("{}", v.to_print_string());
            eprintln!(
                "flowc trace: no loop closed: the program ended before it came back to `{label}` (nothing was traced)"
            );
            return Ok(());
        }
        Recorded::Loop { trace, env } => (*trace, env),
    };
    print!("trace\n{}", render(&trace, args.format, args.layout));
    if args.stats {
        report("recorded", &blog_stats(&trace));
    }
    let value = match args.optimizer {
        Optimizer::Ssa => {
            let mut f = to_ir::to_ir(&program, &trace, &env);
            check(&f, "conversion")?;
            let converted_dot = args.dot.as_ref().map(|_| flowc_ir::dot::function(&f));
            if args.stats {
                report("trace IR", &TraceStats::of(&f));
            }
            let (hints, removable) = lowered(&program, label);
            opt::optimize(&mut f, &hints, removable);
            check(&f, "optimization")?;
            if let (Some(path), Some(converted)) = (&args.dot, converted_dot) {
                let text = format!(
                    "// == the trace IR, converted ==\n{converted}// == optimized ==\n{}",
                    flowc_ir::dot::function(&f)
                );
                std::fs::write(path, text)
                    .map_err(|e| Failure::input(format!("cannot write {}: {e}", path.display())))?;
            }
            if args.stats {
                report("ssa", &TraceStats::of(&f));
            }
            match (args.format, args.layout) {
                (Format::Prolog, Layout::Nested) => println!("opttrace\n{}", terms::nested(&f)),
                (Format::Prolog, Layout::Lines) => println!("opttrace\n{}", terms::lines(&f)),
                (Format::Readable, _) => print!("opttrace\n{}", flowc_ir::print::function(&f)),
            }
            run_ir::execute(&program, &hints, &f, env, &mut heap, &config, false).map_err(Failure::input)?
        }
        Optimizer::Blog | Optimizer::None => {
            if args.dot.is_some() {
                return Err(Failure::usage("--dot draws the trace IR, which only --optimizer ssa makes"));
            }
            if trace.crosses_calls() {
                return Err(Failure::input(
                    "the trace follows calls, which the series' trace optimizer and runner cannot (use --optimizer ssa)",
                ));
            }
            let optimized = match args.optimizer {
                Optimizer::Blog => blog::optimize(&trace),
                _ => trace.clone(),
            };
            if args.stats {
                report("blog", &blog_stats(&optimized));
            }
            print!("opttrace\n{}", render(&optimized, args.format, args.layout));
            run::run(&program, &optimized, env, &mut heap, &config).map_err(Failure::input)?.value
        }
    };
    println!("{}", value.to_print_string());
    Ok(())
}

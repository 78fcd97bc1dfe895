//! `flowc trace FILE --entry L --env ENV [--optimizer blog|none]
//! [--format prolog|readable] [--layout nested|lines]`: the series'
//! `do_trace`: trace from L until the loop closes, print the trace and the
//! optimized trace, run it, resume the interpreter when a guard fails, and
//! print the program's output.

use flowc_lang::env;
use flowc_lang::interp::Config;
use flowc_trace::record::{self, Heap, Recorded};
use flowc_trace::trace::Trace;
use flowc_trace::{blog, run};

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
    /// The trace optimizer: Part 3's (`blog`) or none (Part 2's identity).
    #[arg(long, value_enum, default_value = "blog")]
    optimizer: Optimizer,
    /// How traces are written.
    #[arg(long, value_enum, default_value = "prolog")]
    format: Format,
    /// Nested terms as Parts 2–3 print them, or one operation per line as Part 4 does.
    #[arg(long, value_enum, default_value = "nested")]
    layout: Layout,
    /// Bound on interpreted statements while running the trace and after.
    #[arg(long)]
    fuel: Option<u64>,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Optimizer {
    Blog,
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

pub fn main(args: Args) -> Result<(), Failure> {
    let program = input::load(&args.file)?;
    let (label, env) = input::start(&program, Some(&args.entry), args.env.as_deref())?;
    let config = Config { fuel: args.fuel, ..Config::default() };
    let mut heap = Heap::default();
    let recorded =
        record::record(&program, label, env::from_pairs(&env), &mut heap, 1_000_000).map_err(Failure::input)?;
    let (trace, env) = match recorded {
        Recorded::Printed(v) => {
            println!("{}", v.to_print_string());
            return Ok(());
        }
        Recorded::Loop { trace, env } => (trace, env),
    };
    if trace.crosses_calls() {
        return Err(Failure::input(
            "the trace follows calls, which the series' trace optimizer and runner cannot (use --optimizer ssa)",
        ));
    }
    let optimized = match args.optimizer {
        Optimizer::Blog => blog::optimize(&trace),
        Optimizer::None => trace.clone(),
    };
    print!("trace\n{}", render(&trace, args.format, args.layout));
    print!("opttrace\n{}", render(&optimized, args.format, args.layout));
    let out = run::run(&program, &optimized, env, &mut heap, &config).map_err(Failure::input)?;
    println!("{}", out.value.to_print_string());
    Ok(())
}

//! `flowc opt FILE [--entry L] [--dump-after all|PASS] [--emit ir|dot|fgl]
//! [--syntax prolog|readable] [--stats] [--verify-each] [--small-params]`:
//! the program through the eight passes.

use std::time::Instant;

use flowc_ir::{dot, fgl, print, Module};
use flowc_passes::{Context, Pass, PIPELINE};

use crate::cmd::fmt::SyntaxArg;
use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: input::Source,
    /// Print the IR after every pass (`all`) or after one pass, with what analyses found.
    #[arg(long, value_name = "all|PASS")]
    dump_after: Option<String>,
    /// What to print at the end (without --dump-after).
    #[arg(long, value_enum, default_value = "ir")]
    emit: Emit,
    /// The syntax of `--emit fgl`.
    #[arg(long, value_enum, default_value = "prolog")]
    syntax: SyntaxArg,
    /// Print per-pass block, phi and instruction counts and times to stderr.
    #[arg(long)]
    stats: bool,
    /// Run the IR checker after the front end and every pass (and say so
    /// on stderr when all is well).
    #[arg(long)]
    verify_each: bool,
    /// Say nothing on success (of --verify-each).
    #[arg(long, short)]
    quiet: bool,
    /// Optimize the version native code runs when the main graph's integer
    /// parameters are small: assume they are 32-bit integers.
    #[arg(long)]
    small_params: bool,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Emit {
    Ir,
    Dot,
    Fgl,
}

fn counts(m: &Module) -> (usize, usize, usize) {
    m.functions.iter().map(|f| f.counts()).fold((0, 0, 0), |a, c| (a.0 + c.0, a.1 + c.1, a.2 + c.2))
}

fn verify(m: &Module, after: &str) -> Result<(), Failure> {
    flowc_ir_checker::check_module(m).map_err(|vs| {
        let lines: Vec<String> = vs.iter().map(|v| format!("  {v}")).collect();
        Failure::input(format!("IR invalid after {after}:\n{}", lines.join("\n")))
    })
}

pub fn main(args: Args) -> Result<(), Failure> {
    let (program, label) = args.source.load()?;
    if let Some(d) = &args.dump_after {
        if d != "all" && !PIPELINE.iter().any(|p| p.name == d) {
            let names: Vec<&str> = PIPELINE.iter().map(|p| p.name).collect();
            return Err(Failure::usage(format!("--dump-after: no pass `{d}` (all, {})", names.join(", "))));
        }
    }
    let started = Instant::now();
    let mut module = flowc_frontend::lower(&program, label)
        .map_err(|e| Failure::input(format!("cannot lower from `{label}`: {e}")))?;
    let lowered = started.elapsed();
    if args.verify_each {
        verify(&module, "the front end")?;
    }
    if args.stats {
        let (b, p, i) = counts(&module);
        eprintln!(
            "{:<10} {b:>8} blocks {p:>8} phis {i:>8} insts {:>10.3} ms",
            "front end",
            lowered.as_secs_f64() * 1e3
        );
    }
    let mut options = flowc_passes::context::Options::default();
    if args.small_params {
        options.small_params = flowc_passes::versions::integer_params(&module);
    }
    let mut cx = Context::with_options(&module, options);
    let mut failure = None;
    let mut last = Instant::now();
    let mut observe = |pass: &Pass, m: &Module, cx: &Context| {
        let took = last.elapsed();
        if args.stats {
            let (b, p, i) = counts(m);
            eprintln!("{:<10} {b:>8} blocks {p:>8} phis {i:>8} insts {:>10.3} ms", pass.name, took.as_secs_f64() * 1e3);
        }
        if args.verify_each && failure.is_none() {
            if let Err(f) = verify(m, pass.name) {
                failure = Some(f);
            }
        }
        if args.dump_after.as_deref().is_some_and(|d| d == "all" || d == pass.name) {
            println!("== after {} ==", pass.name);
            print!("{}", print::module(m));
            if let Some(annotate) = pass.annotate {
                print!("{}", annotate(m, cx));
            }
        }
        last = Instant::now();
    };
    flowc_passes::optimize(&mut module, &mut cx, &mut observe);
    if let Some(f) = failure {
        return Err(f);
    }
    if args.verify_each && !args.quiet {
        let (b, _, i) = counts(&module);
        eprintln!(
            "flowc opt: the IR checker accepted the module after the front end and each of the {} passes ({} functions, {b} blocks, {i} instructions at the end)",
            PIPELINE.len(),
            module.functions.len()
        );
    }
    if args.dump_after.is_some() {
        return Ok(());
    }
    match args.emit {
        Emit::Ir => print!("{}", print::module(&module)),
        Emit::Dot => module.functions.iter().for_each(|f| print!("{}", dot::function(f))),
        Emit::Fgl => {
            let converted = fgl::module_to_program_from(&module, &program, label).map_err(Failure::input)?;
            flowc_lang::syntax::printable(args.syntax.into(), &converted).map_err(Failure::input)?;
            print!("{}", flowc_lang::syntax::print(args.syntax.into(), &converted));
        }
    }
    Ok(())
}

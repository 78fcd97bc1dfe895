//! `flowc opt FILE [--entry L] [--passes PASS,…] [--dump-before all|PASS,…]
//! [--dump-after all|PASS,…] [--print-changed] [--disasm] [--emit ir|dot|fgl]
//! [--syntax prolog|readable] [--stats] [--verify-each] [--small-params]`:
//! the program through the eight passes, or through the passes `--passes`
//! names, in its order (each must find what it reads left by one before
//! it: `flowc_passes::run_passes`).
//!
//! Dumps print the module before or after the named passes, as IR text
//! (with what the pass's analyses found) or, with `--emit dot`, as one
//! Graphviz graph per function and step. `--print-changed` prints the front
//! end's IR, then each pass that changed it as a unified diff against the
//! step before, and one line for each pass that changed nothing.

use std::time::Instant;

use flowc_ir::{dot, fgl, print, Module};
use flowc_passes::{Context, Pass, PIPELINE};

/// The names of the eight passes, for error messages.
fn pass_names() -> String {
    PIPELINE.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

use crate::cmd::fmt::SyntaxArg;
use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: input::Source,
    /// Run these passes, in this order, instead of the eight (names
    /// separated by commas); each must find what it reads left by a pass
    /// before it.
    #[arg(long, value_name = "PASS,…", value_delimiter = ',')]
    passes: Vec<String>,
    /// Print the IR after these passes (`all`, or names separated by commas), with what analyses found.
    #[arg(long, value_name = "all|PASS,…", value_delimiter = ',')]
    dump_after: Vec<String>,
    /// Print the IR before these passes (`all`, or names separated by commas).
    #[arg(long, value_name = "all|PASS,…", value_delimiter = ',')]
    dump_before: Vec<String>,
    /// Print the front end's IR, then only the passes that changed it, as diffs.
    #[arg(long)]
    print_changed: bool,
    /// Compile the optimized module and print its final machine code,
    /// disassembled, with offsets and sizes (instead of --emit).
    #[arg(long)]
    disasm: bool,
    /// What to print at the end (without dumps), and how dumps print (ir or dot).
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
    for (option, list) in [("--dump-after", &args.dump_after), ("--dump-before", &args.dump_before)] {
        for d in list {
            if d != "all" && !PIPELINE.iter().any(|p| p.name == d) {
                return Err(Failure::usage(format!("{option}: no pass `{d}` (all, {})", pass_names())));
            }
        }
    }
    let chosen: Vec<&'static Pass> = if args.passes.is_empty() {
        PIPELINE.iter().collect()
    } else {
        let mut chosen = Vec::new();
        for name in &args.passes {
            let pass = flowc_passes::pass(name)
                .ok_or_else(|| Failure::usage(format!("--passes: no pass `{name}` ({})", pass_names())))?;
            chosen.push(pass);
        }
        chosen
    };
    if let Some(unmet) = flowc_passes::unmet(&chosen) {
        return Err(Failure::usage(format!("--passes: {unmet}")));
    }
    if args.print_changed && matches!(args.emit, Emit::Fgl) {
        return Err(Failure::usage("--print-changed prints IR (or, with --emit dot, graphs), not --emit fgl"));
    }
    let named = |list: &[String], pass: &str| list.iter().any(|d| d == "all" || d == pass);
    // Step headers; in Graphviz output, comments between the graphs.
    let header = |text: String| match args.emit {
        Emit::Dot => println!("// == {text} =="),
        _ => println!("== {text} =="),
    };
    let dumping = !args.dump_after.is_empty() || !args.dump_before.is_empty() || args.print_changed;
    // A step as dumps print it.
    let render = |m: &Module| match args.emit {
        Emit::Dot => m.functions.iter().map(dot::function).collect::<String>(),
        _ => print::module(m),
    };
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
    // The step before the pass running: what `--dump-before` and
    // `--print-changed` print and compare against.
    let mut previous = if args.print_changed || !args.dump_before.is_empty() { render(&module) } else { String::new() };
    if args.print_changed {
        header("front end".to_owned());
        print!("{previous}");
    }
    let mut next_pass = 0;
    if let Some(first) = chosen.first() {
        if named(&args.dump_before, first.name) {
            header(format!("before {}", first.name));
            print!("{previous}");
        }
    }
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
        let dump_now = named(&args.dump_after, pass.name);
        let now =
            if args.print_changed || !args.dump_before.is_empty() || dump_now { render(m) } else { String::new() };
        if args.print_changed {
            if now == previous {
                header(format!("after {}: no change", pass.name));
            } else if matches!(args.emit, Emit::Dot) {
                // A diff of graphs is no graph: the changed step whole.
                header(format!("after {} (changed)", pass.name));
                print!("{now}");
            } else {
                header(format!("after {} (changed)", pass.name));
                let diff = similar::TextDiff::from_lines(&previous, &now);
                let before = format!("before {}", pass.name);
                let after = format!("after {}", pass.name);
                print!("{}", diff.unified_diff().context_radius(3).header(&before, &after));
            }
        }
        if dump_now {
            header(format!("after {}", pass.name));
            print!("{now}");
            if let (Some(annotate), false) = (pass.annotate, matches!(args.emit, Emit::Dot)) {
                print!("{}", annotate(m, cx));
            }
        }
        next_pass += 1;
        if let Some(next) = chosen.get(next_pass) {
            if named(&args.dump_before, next.name) {
                header(format!("before {}", next.name));
                print!("{now}");
            }
        }
        previous = now;
        last = Instant::now();
    };
    let ran = flowc_passes::run_passes(&mut module, &mut cx, &chosen, &mut observe);
    if let Some(f) = failure {
        return Err(f);
    }
    ran.map_err(|unmet| Failure::usage(format!("--passes: {unmet}")))?;
    if args.verify_each && !args.quiet {
        let (b, _, i) = counts(&module);
        eprintln!(
            "flowc opt: the IR checker accepted the module after the front end and each of the {} passes ({} functions, {b} blocks, {i} instructions at the end)",
            chosen.len(),
            module.functions.len()
        );
    }
    if dumping {
        return Ok(());
    }
    if args.disasm {
        let native =
            flowc_codegen::Native::compile(&module).map_err(|e| Failure::input(format!("cannot compile: {e}")))?;
        print!("{}", flowc_codegen::disasm::listing(&native.code()));
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

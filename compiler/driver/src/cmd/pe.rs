//! `flowc pe FILE --entry L --static ENV [--format prolog|readable]
//! [--optimize] [--max-blocks N] [--linear]`: Part 1's partial
//! evaluator (`--linear`: [`pe::Mode::Linear`]).
//!
//! In Prolog format the residual blocks print one per line as the series'
//! `listing(block)` shows them, in the order `do_pe` asserts them, followed
//! by an `entry` fact naming the residual start, so `flowc run` runs the
//! output. With `--optimize` the residual program goes through the eight
//! passes and is printed back as a program.

use flowc_lang::pe;
use flowc_lang::syntax::prolog::code_term;
use flowc_lang::syntax::term::Style;
use flowc_lang::syntax::{self, Syntax};
use flowc_lang::{Program, Symbol};
use flowc_passes::Context;

use crate::cmd::fmt::SyntaxArg;
use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    /// The program (`-` reads standard input).
    file: String,
    /// The label to specialize from.
    #[arg(long)]
    entry: String,
    /// The static part of the environment, e.g. '[y/5]'.
    #[arg(long = "static", value_name = "ENV")]
    static_env: String,
    /// Output syntax.
    #[arg(long, value_enum, default_value = "prolog")]
    format: SyntaxArg,
    /// Send the residual program through the eight passes.
    #[arg(long)]
    optimize: bool,
    /// Give up after this many residual blocks [default: 100000; with
    /// --linear, 8 per value of the static environment where that is more].
    #[arg(long)]
    max_blocks: Option<usize>,
    /// Not the series' algorithm, for large residual programs: key the
    /// cache by the static variables live at each label, and continue a
    /// residual block through known jumps except into loop headers.
    #[arg(long)]
    linear: bool,
}

pub fn main(args: Args) -> Result<(), Failure> {
    let program = input::load(&args.file)?;
    let static_env = input::env("--static", &args.static_env)?;
    let entry = Symbol::intern(&args.entry);
    let mode = if args.linear { pe::Mode::Linear } else { pe::Mode::Series };
    let max_blocks = args.max_blocks.unwrap_or_else(|| pe::default_max_blocks(mode, &static_env));
    let residual = pe::specialize_with(&program, entry, &static_env, max_blocks, mode).map_err(Failure::input)?;
    let out = residual.program(&program);
    if args.optimize {
        print!("{}", optimize(&out, residual.entry, args.format.into())?);
        return Ok(());
    }
    syntax::printable(args.format.into(), &out).map_err(Failure::input)?;
    match Syntax::from(args.format) {
        Syntax::Prolog => print!("{}", listing(&program, &residual)),
        Syntax::Readable => print!("{}", syntax::print(Syntax::Readable, &out)),
    }
    Ok(())
}

/// The residual program as the series lists it: functions and hints of the
/// source (if any), then one line per residual block, then the entry fact.
fn listing(source: &Program, residual: &pe::Residual) -> String {
    let rest = Program {
        items: residual
            .program(source)
            .items
            .into_iter()
            .filter(|i| !matches!(i, flowc_lang::ast::Item::Block(_) | flowc_lang::ast::Item::Entry(_)))
            .collect(),
    };
    let mut out = syntax::print(Syntax::Prolog, &rest);
    if !out.is_empty() {
        out.push('\n');
    }
    for b in &residual.blocks {
        out.push_str("block(");
        flowc_lang::value::write_atom(&mut out, b.label.as_str(), true);
        out.push_str(", ");
        code_term(&b.body, &b.term).write(&mut out, Style::Listing);
        out.push_str(").\n");
    }
    out.push_str("entry(");
    flowc_lang::value::write_atom(&mut out, residual.entry.as_str(), true);
    out.push_str(").\n");
    out
}

fn optimize(program: &Program, entry: Symbol, syntax: Syntax) -> Result<String, Failure> {
    let mut module = flowc_frontend::lower(program, entry).map_err(|e| Failure::input(format!("cannot lower: {e}")))?;
    let mut cx = Context::new(&module);
    flowc_passes::optimize(&mut module, &mut cx, |_, _, _| {});
    let out = flowc_ir::fgl::module_to_program_from(&module, program, entry).map_err(Failure::input)?;
    syntax::printable(syntax, &out).map_err(Failure::input)?;
    Ok(syntax::print(syntax, &out))
}

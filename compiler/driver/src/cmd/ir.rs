//! `flowc ir FILE [--entry L] [--emit ir|dot|fgl]`: the SSA IR the front end
//! builds, as text, as Graphviz, or converted back into a runnable program.

use flowc_ir::{dot, fgl, print};

use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    source: input::Source,
    /// What to print.
    #[arg(long, value_enum, default_value = "ir")]
    emit: Emit,
    /// The syntax of `--emit fgl`.
    #[arg(long, value_enum, default_value = "prolog")]
    syntax: crate::cmd::fmt::SyntaxArg,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Emit {
    /// The IR text format.
    Ir,
    /// Graphviz of each function's CFG.
    Dot,
    /// A runnable program again (out of SSA), with an `entry` fact.
    Fgl,
}

pub fn main(args: Args) -> Result<(), Failure> {
    let (program, label) = args.source.load()?;
    let module = flowc_frontend::lower(&program, label)
        .map_err(|e| Failure::input(format!("cannot lower from `{label}`: {e}")))?;
    match args.emit {
        Emit::Ir => print!("{}", print::module(&module)),
        Emit::Dot => {
            for f in &module.functions {
                print!("{}", dot::function(f));
            }
        }
        Emit::Fgl => {
            let converted = fgl::module_to_program_from(&module, &program, label).map_err(Failure::input)?;
            flowc_lang::syntax::printable(args.syntax.into(), &converted).map_err(Failure::input)?;
            print!("{}", flowc_lang::syntax::print(args.syntax.into(), &converted));
        }
    }
    Ok(())
}

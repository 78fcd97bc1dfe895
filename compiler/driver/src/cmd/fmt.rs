//! `flowc fmt FILE [--syntax prolog|readable]`: print a program in either
//! syntax, with its comments.

use flowc_lang::syntax::{self, Syntax};

use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    /// The program (`-` reads standard input).
    file: String,
    /// The syntax to print.
    #[arg(long, value_enum, default_value = "prolog")]
    syntax: SyntaxArg,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum SyntaxArg {
    Prolog,
    Readable,
}

impl From<SyntaxArg> for Syntax {
    fn from(s: SyntaxArg) -> Syntax {
        match s {
            SyntaxArg::Prolog => Syntax::Prolog,
            SyntaxArg::Readable => Syntax::Readable,
        }
    }
}

pub fn main(args: Args) -> Result<(), Failure> {
    let src = input::read_source(&args.file)?;
    let name = if args.file == "-" { "<stdin>" } else { &args.file };
    let (program, comments) = syntax::parse_with_comments(name, &src).map_err(Failure::input)?;
    syntax::printable(args.syntax.into(), &program).map_err(|e| Failure::input(format!("{name}: {e}")))?;
    print!("{}", syntax::print_with_comments(args.syntax.into(), &program, &comments));
    Ok(())
}

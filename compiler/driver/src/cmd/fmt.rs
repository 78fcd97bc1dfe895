//! `flowc fmt FILE [--syntax prolog|readable]`: print a program in either syntax.

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
    let program = input::load(&args.file)?;
    print!("{}", syntax::print(args.syntax.into(), &program));
    Ok(())
}

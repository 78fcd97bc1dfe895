//! Reading programs and environments given on the command line.

use std::io::Read;

use flowc_lang::syntax::prolog::parse_env;
use flowc_lang::{syntax, Program, Symbol, Value};

use crate::Failure;

/// Reads FILE (`-` = standard input).
pub fn read_source(file: &str) -> Result<String, Failure> {
    if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| Failure::input(format!("cannot read standard input: {e}")))?;
        Ok(s)
    } else {
        std::fs::read_to_string(file).map_err(|e| Failure::input(format!("cannot read {file}: {e}")))
    }
}

/// Reads and parses FILE in the syntax its content shows.
pub fn load(file: &str) -> Result<Program, Failure> {
    let src = read_source(file)?;
    let name = if file == "-" { "<stdin>" } else { file };
    syntax::parse(name, &src).map_err(Failure::input)
}

/// Parses an `--env`/`--static` list like `[x/10,y/20]`.
pub fn env(text: &str) -> Result<Vec<(Symbol, Value)>, Failure> {
    parse_env(text).map_err(Failure::usage)
}

/// The start label and environment: `--entry` or the first `entry` fact (or
/// the first block); `--env` or the environment of the chosen label's `entry` fact.
pub fn start(
    program: &Program,
    entry: Option<&str>,
    env_text: Option<&str>,
) -> Result<(Symbol, Vec<(Symbol, Value)>), Failure> {
    let label = match entry {
        Some(l) => Symbol::intern(l),
        None => program.default_entry().ok_or_else(|| Failure::input("the program has no blocks to run"))?,
    };
    let env = match env_text {
        Some(t) => env(t)?,
        None => program.entry_env(label).map(<[_]>::to_vec).unwrap_or_default(),
    };
    Ok((label, env))
}

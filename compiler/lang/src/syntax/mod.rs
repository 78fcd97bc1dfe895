//! The two concrete syntaxes and their shared machinery.
//!
//! - [`prolog`]: the canonical Prolog-term syntax of the series (`.pl`);
//! - [`readable`] and [`readable_print`]: the pseudo-code syntax (`.fg`);
//! - [`term`]: Prolog terms, their reader and `write/1`-style writer;
//! - [`diag`]: parse errors with `file:line:column` and the offending line.
//!
//! The content of a file decides its syntax ([`detect`]), not its name.

mod check;
pub mod comments;
pub mod diag;
pub mod lex;
pub mod prolog;
pub mod readable;
pub mod readable_print;
pub mod term;

use crate::ast::Program;
pub use comments::Comments;
pub use diag::ParseError;

/// The two syntaxes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Syntax {
    Prolog,
    Readable,
}

/// Decides the syntax from the content: a Prolog file's first token (after
/// comments) is a name directly followed by `(` (`block(`, `entry(`, …);
/// the readable syntax never writes that at the start of a line.
pub fn detect(src: &str) -> Syntax {
    let mut rest = src;
    loop {
        rest = rest.trim_start();
        if rest.starts_with('%') || rest.starts_with('#') {
            rest = rest.find('\n').map_or("", |i| &rest[i..]);
        } else if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |i| &after[i + 2..]);
        } else {
            break;
        }
    }
    let ident = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    if (ident > 0 && rest[ident..].starts_with('(')) || src.trim_start().starts_with('%') {
        Syntax::Prolog
    } else {
        Syntax::Readable
    }
}

/// Parses `src` in the syntax its content shows.
pub fn parse(file: &str, src: &str) -> Result<Program, ParseError> {
    parse_as(detect(src.strip_prefix('\u{feff}').unwrap_or(src)), file, src)
}

/// A UTF-8 byte-order mark (which some editors write, and nobody sees) is
/// skipped.
pub fn parse_as(syntax: Syntax, file: &str, src: &str) -> Result<Program, ParseError> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    match syntax {
        Syntax::Prolog => prolog::parse(file, src),
        Syntax::Readable => readable::parse(file, src),
    }
}

/// [`parse_as`] in the syntax `src` shows, keeping its comments (for
/// `flowc fmt`).
pub fn parse_with_comments(file: &str, src: &str) -> Result<(Program, Comments), ParseError> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    match detect(src) {
        Syntax::Prolog => prolog::parse_with_comments(file, src),
        Syntax::Readable => readable::parse_with_comments(file, src),
    }
}

/// [`print`] with the comments of the source.
pub fn print_with_comments(syntax: Syntax, program: &Program, comments: &Comments) -> String {
    match syntax {
        Syntax::Prolog => prolog::print_with_comments(program, comments),
        Syntax::Readable => readable_print::print_with_comments(program, comments),
    }
}

pub fn print(syntax: Syntax, program: &Program) -> String {
    match syntax {
        Syntax::Prolog => prolog::print(program),
        Syntax::Readable => readable_print::print(program),
    }
}

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
pub mod lex;
pub mod prolog;
pub mod readable;
pub mod readable_print;

use crate::ast::{Item, Program};
use crate::Symbol;
pub use comments::Comments;
pub use diag::ParseError;
pub use flowc_heap::text::{diag, term};

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

/// Whether `program` can be printed in `syntax` as text flowc reads back:
/// in the Prolog syntax a block's statements nest one level each, and the
/// reader takes at most [`term::MAX_TERM_DEPTH`] levels. An error names the
/// block.
pub fn printable(syntax: Syntax, program: &Program) -> Result<(), String> {
    if syntax == Syntax::Readable {
        return Ok(());
    }
    // `block(L, ...)` or `function(F, Ps, [block(L, ...)])`, then one level
    // per statement and the terminator with its argument.
    let deepest = |b: &crate::ast::Block, around: usize| (around + b.body.len() + 2, b.label);
    let mut worst = None;
    for item in &program.items {
        let found: Vec<(usize, Symbol)> = match item {
            Item::Block(b) => vec![deepest(b, 1)],
            Item::Function(f) => f.blocks.iter().map(|b| deepest(b, 3)).collect(),
            _ => Vec::new(),
        };
        worst = found.into_iter().chain(worst).max_by_key(|(d, _)| *d);
    }
    match worst {
        Some((depth, label)) if depth > term::MAX_TERM_DEPTH => Err(format!(
            "block {label} has too many statements for the Prolog syntax: its terms would nest {depth} deep, and \
             flowc reads at most {} levels (keep the program in the readable syntax, or split the block)",
            term::MAX_TERM_DEPTH
        )),
        _ => Ok(()),
    }
}

pub fn print(syntax: Syntax, program: &Program) -> String {
    match syntax {
        Syntax::Prolog => prolog::print(program),
        Syntax::Readable => readable_print::print(program),
    }
}

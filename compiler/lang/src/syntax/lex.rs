//! The line lexer and token cursor shared by the readable syntax and the
//! IR text format: names, quoted names, `:atoms`, integers and punctuation,
//! one line at a time, with byte offsets for error messages.

use super::diag::{clip, RawError};
use crate::ast::Arg;
use crate::symbol::Symbol;
use crate::value::Value;
use flowc_heap::text::parse_int;

/// Words that cannot be bare names (the printer quotes them).
pub const KEYWORDS: &[&str] = &[
    "if",
    "goto",
    "else",
    "then",
    "call",
    "return",
    "new",
    "is",
    "promote",
    "error",
    "print_and_stop",
    "function",
    "entry",
    "pure",
    "immutable",
    "can_enter_jit",
];

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A plain identifier (may be a keyword).
    Ident(String),
    /// A quoted name `'...'` — never a keyword.
    Quoted(String),
    /// `:name` or `:'...'`.
    Atom(String),
    Int(Value),
    /// Punctuation and operators.
    Punct(&'static str),
}

const PUNCT: &[&str] = &[
    "==", "!=", "<=", ">=", "//", "<", ">", "+", "-", "*", "%", "=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "@",
];

/// Tokens of one line with their byte offsets in the file.
pub fn lex_line(line: &str, base: usize) -> Result<Vec<(Tok, usize)>, RawError> {
    Ok(lex_line_commented(line, base)?.0)
}

/// The tokens of a line with their offsets, and where in the line a `#`
/// comment starts.
pub type LexedLine = (Vec<(Tok, usize)>, Option<usize>);

/// [`lex_line`], also returning where in `line` a `#` comment starts.
pub fn lex_line_commented(line: &str, base: usize) -> Result<LexedLine, RawError> {
    let mut toks: Vec<(Tok, usize)> = Vec::new();
    let mut comment = None;
    let b = line.as_bytes();
    let mut i = 0;
    let ident_end = |mut j: usize| {
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        j
    };
    while i < b.len() {
        let c = b[i];
        let start = base + i;
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
        } else if c == b'#' {
            comment = Some(i);
            break;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let j = ident_end(i);
            toks.push((Tok::Ident(line[i..j].to_owned()), start));
            i = j;
        } else if c.is_ascii_digit()
            || (c == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit) && is_sign(&toks, b, i))
        {
            let j = i + 1 + line[i + 1..].find(|ch: char| !ch.is_ascii_digit()).unwrap_or(line.len() - i - 1);
            let n = parse_int(&line[i..j], start)?;
            if b.get(j).is_some_and(|ch| ch.is_ascii_alphabetic() || *ch == b'_') {
                return Err(RawError::new(base + j, "unexpected letter after a number"));
            }
            toks.push((Tok::Int(n), start));
            i = j;
        } else if c == b'\'' {
            let (s, j) = quoted(line, i, base)?;
            toks.push((Tok::Quoted(s), start));
            i = j;
        } else if c == b':' && b.get(i + 1).is_some_and(|ch| ch.is_ascii_alphabetic() || *ch == b'_') {
            let j = ident_end(i + 1);
            toks.push((Tok::Atom(line[i + 1..j].to_owned()), start));
            i = j;
        } else if c == b':' && b.get(i + 1) == Some(&b'\'') {
            let (s, j) = quoted(line, i + 1, base)?;
            toks.push((Tok::Atom(s), start));
            i = j;
        } else if let Some(p) = PUNCT.iter().find(|p| line[i..].starts_with(**p)) {
            toks.push((Tok::Punct(p), start));
            i += p.len();
        } else {
            let ch = line[i..].chars().next().unwrap();
            return Err(RawError::new(start, format!("unexpected character `{ch}`")));
        }
    }
    Ok((toks, comment))
}

/// Whether a `-` touching a digit at `i` is a sign: when no operand ends
/// right before it (`x = -1`, `return -8`), or when it is separated from the
/// previous token but not from its digits (`add -4, -9` in the IR format;
/// `a - 1` and `a-1` stay subtractions).
fn is_sign(toks: &[(Tok, usize)], b: &[u8], i: usize) -> bool {
    !ends_value(toks.last()) || (i > 0 && matches!(b[i - 1], b' ' | b'\t'))
}

/// Whether the previous token ends an operand, making a following `-` the
/// subtraction operator rather than the sign of a number.
fn ends_value(t: Option<&(Tok, usize)>) -> bool {
    match t {
        Some((Tok::Ident(s), _)) => !KEYWORDS.contains(&s.as_str()),
        Some((Tok::Quoted(_) | Tok::Atom(_) | Tok::Int(_) | Tok::Punct(")") | Tok::Punct("]"), _)) => true,
        _ => false,
    }
}

/// Reads a quoted string starting at the `'` at `i`; returns it and the end.
fn quoted(line: &str, i: usize, base: usize) -> Result<(String, usize), RawError> {
    let mut s = String::new();
    let mut chars = line[i + 1..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '\'' => return Ok((s, i + 1 + k + 1)),
            '\\' => match chars.next() {
                Some((_, 'n')) => s.push('\n'),
                Some((_, 't')) => s.push('\t'),
                Some((_, e @ ('\\' | '\''))) => s.push(e),
                Some((k2, e)) => return Err(RawError::new(base + i + 1 + k2, format!("unknown escape `\\{e}`"))),
                None => break,
            },
            c => s.push(c),
        }
    }
    Err(RawError::new(base + i, "unterminated quoted name"))
}

/// A cursor over one line's tokens.
pub struct Line<'a> {
    pub toks: &'a [(Tok, usize)],
    pub at: usize,
    /// Offset of the end of the line, for "expected … at end of line".
    pub end: usize,
}

impl<'a> Line<'a> {
    pub fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.at).map(|(t, _)| t)
    }

    pub fn peek2(&self) -> Option<&'a Tok> {
        self.toks.get(self.at + 1).map(|(t, _)| t)
    }

    pub fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.end, |(_, p)| *p)
    }

    pub fn bump(&mut self) -> Option<&'a Tok> {
        let t = self.peek();
        self.at += 1;
        t
    }

    pub fn error(&self, what: &str) -> RawError {
        let found = match self.peek() {
            None => "end of line".to_owned(),
            Some(t) => describe(t),
        };
        RawError::new(self.pos(), format!("expected {what}, found {found}"))
    }

    pub fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    pub fn is_keyword(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(s)) if s == k)
    }

    pub fn punct(&mut self, p: &str) -> Result<(), RawError> {
        if self.is_punct(p) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("`{p}`")))
        }
    }

    pub fn keyword(&mut self, k: &str) -> Result<(), RawError> {
        if self.is_keyword(k) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("`{k}`")))
        }
    }

    /// A name: a non-keyword identifier or a quoted name.
    pub fn name(&mut self, what: &str) -> Result<Symbol, RawError> {
        match self.peek() {
            Some(Tok::Ident(s)) if !KEYWORDS.contains(&s.as_str()) => {
                self.at += 1;
                Ok(Symbol::intern(s))
            }
            Some(Tok::Quoted(s)) => {
                self.at += 1;
                Ok(Symbol::intern(s))
            }
            _ => Err(self.error(what)),
        }
    }

    pub fn atom(&mut self, what: &str) -> Result<Symbol, RawError> {
        match self.peek() {
            Some(Tok::Atom(s)) => {
                self.at += 1;
                Ok(Symbol::intern(s))
            }
            _ => Err(self.error(what)),
        }
    }

    pub fn at_name(&self) -> bool {
        match self.peek() {
            Some(Tok::Ident(s)) => !KEYWORDS.contains(&s.as_str()),
            Some(Tok::Quoted(_)) => true,
            _ => false,
        }
    }

    pub fn constant(&mut self) -> Result<Value, RawError> {
        self.constant_in(0)
    }

    /// A constant inside `depth` open lists (at most
    /// [`super::term::MAX_LIST_DEPTH`]).
    fn constant_in(&mut self, depth: usize) -> Result<Value, RawError> {
        match self.peek() {
            Some(Tok::Int(v)) => {
                self.at += 1;
                Ok(v.clone())
            }
            Some(Tok::Atom(s)) => {
                self.at += 1;
                Ok(Value::atom(s))
            }
            Some(Tok::Punct("[")) => {
                if depth == super::term::MAX_LIST_DEPTH {
                    let max = super::term::MAX_LIST_DEPTH;
                    return Err(RawError::new(self.pos(), format!("lists nested more than {max} deep")));
                }
                self.at += 1;
                let mut items = Vec::new();
                if !self.is_punct("]") {
                    items.push(self.constant_in(depth + 1)?);
                    while self.is_punct(",") {
                        self.at += 1;
                        items.push(self.constant_in(depth + 1)?);
                    }
                }
                self.punct("]")?;
                Ok(Value::list(items))
            }
            // A name inside a list: the Prolog habit of bare atoms.
            Some(Tok::Ident(s)) => Err(RawError::new(
                self.pos(),
                format!("expected a constant (integer, :atom or list), found `{s}`: atoms are written `:{s}`"),
            )),
            _ => Err(self.error("a constant (integer, :atom or list)")),
        }
    }

    pub fn arg(&mut self) -> Result<Arg, RawError> {
        if self.at_name() {
            return Ok(Arg::Var(self.name("a variable")?));
        }
        let start = self.at;
        match self.constant() {
            Ok(v) => Ok(Arg::Const(v)),
            // Inside a list, the list's own error says more.
            Err(e) if self.at > start => Err(e),
            Err(_) => Err(self.error("a variable or a constant")),
        }
    }

    pub fn done(&self) -> Result<(), RawError> {
        match self.peek() {
            None => Ok(()),
            Some(Tok::Punct(p)) if crate::ops::Op::from_infix(p).is_some() => Err(RawError::new(
                self.pos(),
                format!("unexpected `{p}`: a statement has one operator at most (compute the rest in statements of its own)"),
            )),
            Some(t) => Err(RawError::new(self.pos(), format!("unexpected {} after the end of the statement", describe(t)))),
        }
    }
}

pub fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("`{}`", clip(s)),
        Tok::Quoted(s) => format!("'{}'", clip(s)),
        Tok::Atom(s) => format!("atom `:{}`", clip(s)),
        Tok::Int(v) => format!("`{}`", clip(v)),
        Tok::Punct(p) => format!("`{p}`"),
    }
}

#[cfg(test)]
mod tests {
    fn error(src: &str) -> String {
        match crate::syntax::parse("t", src) {
            Ok(_) => String::new(),
            Err(e) => format!("{}:{}: {}", e.line, e.column, e.message),
        }
    }

    #[test]
    fn errors_say_what_the_readable_syntax_wants() {
        assert_eq!(
            error(
                r#"start:
    x = 1 + 2 + 3
"#
            ),
            "2:15: unexpected `+`: a statement has one operator at most (compute the rest in statements of its own)"
        );
        assert_eq!(
            error(
                r#"start:
    print_and_stop([:a, b])
"#
            ),
            "2:25: expected a constant (integer, :atom or list), found `b`: atoms are written `:b`"
        );
        assert_eq!(
            error(
                r#"start:
    goto a b
"#
            ),
            "2:12: unexpected `b` after the end of the statement"
        );
        assert_eq!(
            // (The statement ends in a space after `=`: column 9.)
            error("start:\n    x = \n"),
            "2:9: expected a variable or a constant, found end of line"
        );
    }
}

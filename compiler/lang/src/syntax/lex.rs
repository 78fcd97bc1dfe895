//! The line lexer and token cursor shared by the readable syntax and the
//! IR text format: names, quoted names, `:atoms`, integers and punctuation,
//! one line at a time, with byte offsets for error messages.
//!
//! Tokens borrow the source: a name is a slice of its line, a quoted name
//! or atom too unless it has escapes ([`Tok`]), and the readable parser
//! lexes the whole file into one buffer, a line at a time, finding each
//! line's end as it lexes it ([`lex_from`]). Reading a
//! residual program of 220,000 lines had allocated a string per name and
//! a vector per line, most of the parse's time.

use std::borrow::Cow;

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

/// Whether `s` is one of [`KEYWORDS`] (a `match`, not a search of the
/// list: every name read is checked).
pub fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "if" | "goto"
            | "else"
            | "then"
            | "call"
            | "return"
            | "new"
            | "is"
            | "promote"
            | "error"
            | "print_and_stop"
            | "function"
            | "entry"
            | "pure"
            | "immutable"
            | "can_enter_jit"
    )
}

/// A token of a line of source text `'a`.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok<'a> {
    /// A plain identifier (may be a keyword).
    Ident(&'a str),
    /// A quoted name `'...'` — never a keyword (owned only when it has
    /// escapes).
    Quoted(Cow<'a, str>),
    /// `:name` or `:'...'`.
    Atom(Cow<'a, str>),
    Int(Value),
    /// Punctuation and operators.
    Punct(&'static str),
}

impl Tok<'_> {
    /// The text of a name: an identifier (a keyword too) or a quoted name.
    pub fn name_text(&self) -> Option<&str> {
        match self {
            Tok::Ident(s) => Some(s),
            Tok::Quoted(s) => Some(s),
            _ => None,
        }
    }
}

/// The punctuation at the start of `b` (not empty), longest first: `==`
/// before `=`.
fn punct(b: &[u8]) -> Option<&'static str> {
    let next = b.get(1).copied();
    Some(match (b[0], next) {
        (b'=', Some(b'=')) => "==",
        (b'!', Some(b'=')) => "!=",
        (b'<', Some(b'=')) => "<=",
        (b'>', Some(b'=')) => ">=",
        (b'/', Some(b'/')) => "//",
        (b'<', _) => "<",
        (b'>', _) => ">",
        (b'+', _) => "+",
        (b'-', _) => "-",
        (b'*', _) => "*",
        (b'%', _) => "%",
        (b'=', _) => "=",
        (b'(', _) => "(",
        (b')', _) => ")",
        (b'[', _) => "[",
        (b']', _) => "]",
        (b'{', _) => "{",
        (b'}', _) => "}",
        (b',', _) => ",",
        (b'.', _) => ".",
        (b':', _) => ":",
        (b'@', _) => "@",
        _ => return None,
    })
}

/// The tokens of `line` (at byte `base` of its file) with their offsets,
/// appended to `toks`; returns where in the line a `#` comment starts.
pub fn lex_line_into<'a>(
    line: &'a str,
    base: usize,
    toks: &mut Vec<(Tok<'a>, usize)>,
) -> Result<Option<usize>, RawError> {
    Ok(lex_from(line, 0, base, toks)?.1)
}

/// The tokens of the line of `text` that starts at byte `from`, with
/// their offsets (`base` plus their index in `text`), appended to `toks`.
/// Returns where the line ends (the index of its `\n`, or the text's
/// length) and where a `#` comment starts in it: the readable parser
/// lexes a whole file this way, finding each line's end as it goes
/// rather than searching for it first.
pub fn lex_from<'a>(
    text: &'a str,
    from: usize,
    base: usize,
    toks: &mut Vec<(Tok<'a>, usize)>,
) -> Result<(usize, Option<usize>), RawError> {
    let first = toks.len();
    let b = text.as_bytes();
    let mut i = from;
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
        } else if c == b'\n' {
            return Ok((i, None));
        } else if c == b'#' {
            let end = text[i..].find('\n').map_or(text.len(), |k| i + k);
            return Ok((end, Some(i)));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let j = ident_end(i);
            toks.push((Tok::Ident(&text[i..j]), start));
            i = j;
        } else if c.is_ascii_digit()
            || (c == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit) && is_sign(&toks[first..], b, from, i))
        {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let n = parse_int(&text[i..j], start)?;
            if b.get(j).is_some_and(|ch| ch.is_ascii_alphabetic() || *ch == b'_') {
                return Err(RawError::new(base + j, "unexpected letter after a number"));
            }
            toks.push((Tok::Int(n), start));
            i = j;
        } else if c == b'\'' {
            let (s, j) = quoted(text, i, base)?;
            toks.push((Tok::Quoted(s), start));
            i = j;
        } else if c == b':' && b.get(i + 1).is_some_and(|ch| ch.is_ascii_alphabetic() || *ch == b'_') {
            let j = ident_end(i + 1);
            toks.push((Tok::Atom(Cow::Borrowed(&text[i + 1..j])), start));
            i = j;
        } else if c == b':' && b.get(i + 1) == Some(&b'\'') {
            let (s, j) = quoted(text, i + 1, base)?;
            toks.push((Tok::Atom(s), start));
            i = j;
        } else if let Some(p) = punct(&b[i..]) {
            toks.push((Tok::Punct(p), start));
            i += p.len();
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            return Err(RawError::new(start, format!("unexpected character `{ch}`")));
        }
    }
    Ok((b.len(), None))
}

/// Whether a `-` touching a digit at `i` is a sign: when no operand ends
/// right before it (`x = -1`, `return -8`), or when it is separated from the
/// previous token but not from its digits (`add -4, -9` in the IR format;
/// `a - 1` and `a-1` stay subtractions). `toks`: the line's tokens so far;
/// the line starts at `from`.
fn is_sign(toks: &[(Tok, usize)], b: &[u8], from: usize, i: usize) -> bool {
    !ends_value(toks.last()) || (i > from && matches!(b[i - 1], b' ' | b'\t'))
}

/// Whether the previous token ends an operand, making a following `-` the
/// subtraction operator rather than the sign of a number.
fn ends_value(t: Option<&(Tok, usize)>) -> bool {
    match t {
        Some((Tok::Ident(s), _)) => !is_keyword(s),
        Some((Tok::Quoted(_) | Tok::Atom(_) | Tok::Int(_) | Tok::Punct(")") | Tok::Punct("]"), _)) => true,
        _ => false,
    }
}

/// Reads a quoted string starting at the `'` at `i`; returns it (a slice
/// of `line` unless it has escapes) and the end.
fn quoted(line: &str, i: usize, base: usize) -> Result<(Cow<'_, str>, usize), RawError> {
    // Up to the end of the line (the readable parser lexes whole files).
    let rest = &line[i + 1..];
    let body = rest[..rest.find('\n').unwrap_or(rest.len())].trim_end_matches('\r');
    match body.find(['\'', '\\']) {
        Some(k) if body.as_bytes()[k] == b'\'' => return Ok((Cow::Borrowed(&body[..k]), i + 1 + k + 1)),
        None => return Err(RawError::new(base + i, "unterminated quoted name")),
        Some(_) => {}
    }
    let mut s = String::new();
    let mut chars = body.char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '\'' => return Ok((Cow::Owned(s), i + 1 + k + 1)),
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
pub struct Line<'t, 's> {
    pub toks: &'t [(Tok<'s>, usize)],
    pub at: usize,
    /// Offset of the end of the line, for "expected … at end of line".
    pub end: usize,
}

impl<'t, 's> Line<'t, 's> {
    pub fn peek(&self) -> Option<&'t Tok<'s>> {
        self.toks.get(self.at).map(|(t, _)| t)
    }

    pub fn peek2(&self) -> Option<&'t Tok<'s>> {
        self.toks.get(self.at + 1).map(|(t, _)| t)
    }

    pub fn pos(&self) -> usize {
        self.toks.get(self.at).map_or(self.end, |(_, p)| *p)
    }

    pub fn bump(&mut self) -> Option<&'t Tok<'s>> {
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
        matches!(self.peek(), Some(Tok::Ident(s)) if *s == k)
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
            Some(Tok::Ident(s)) if !is_keyword(s) => {
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
            Some(Tok::Ident(s)) => !is_keyword(s),
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

    /// The program and its comments, printed back with them.
    fn read_back(src: &str) -> String {
        let (program, comments) = crate::syntax::parse_with_comments("t", src).expect("a valid program");
        crate::syntax::print_with_comments(crate::syntax::Syntax::Readable, &program, &comments)
    }

    #[test]
    fn lines_end_where_the_lexer_finds_their_end() {
        // The parser lexes the whole file, each line's end found as it
        // goes (`lex_from`): every way a line ends reads alike.
        let lf = "# head\nstart:\n    x = 'a b' # note\n    y = :'it\\'s'\n    print_and_stop(x)\n";
        let crlf = lf.replace('\n', "\r\n");
        let unterminated = lf.trim_end_matches('\n');
        let expected = read_back(lf);
        assert!(expected.contains("'a b'") && expected.contains("# note") && expected.contains("it\\'s"), "{expected}");
        assert_eq!(read_back(&crlf), expected);
        assert_eq!(read_back(unterminated), expected);
        // A quoted name ends on its line: the quote of the next one does
        // not close it.
        assert_eq!(
            error("start:\n    x = 'abc\n    y = 'd'\n    print_and_stop(y)\n"),
            "2:9: unterminated quoted name"
        );
        // Nor does a line's carriage return: a backslash before it escapes
        // nothing.
        assert_eq!(error("start:\r\n    x = 'ab\\\r\n"), "2:9: unterminated quoted name");
        // Columns count from each line's start, past a carriage return.
        assert_eq!(
            error("start:\r\n    x = 1 + 2 + 3\r\n"),
            "2:15: unexpected `+`: a statement has one operator at most (compute the rest in statements of its own)"
        );
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

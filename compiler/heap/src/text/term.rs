//! Prolog terms: the reader behind the canonical syntax and `--env` lists,
//! and the writer behind every Prolog-format output.
//!
//! The reader accepts the subset of standard Prolog that programs of the
//! series use: atoms (plain, quoted, symbolic), integers (negative when a
//! `-` touches the digits), compound terms, lists, the infix `/` of
//! environments (`x/10`), `%` and `/* */` comments, and clauses ended by `.`.
//! Variables (capitalized names) are rejected: facts are ground.
//!
//! The writer prints like SWI-Prolog's `write/1` (unquoted, no spaces) or,
//! in [`Style::Listing`], like `listing/1` (quoted atoms, `, ` between
//! arguments), the form the series shows for residual programs.

use num_bigint::BigInt;

use super::diag::{clip, RawError};
use crate::symbol::Symbol;
use crate::value::{write_atom, Value};

/// A term with the byte offset where it starts (0 for built terms).
#[derive(Clone, Debug)]
pub struct Term {
    pub kind: TermKind,
    pub pos: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TermKind {
    Atom(Symbol),
    /// An integer (`Value::Int` or `Value::Big`).
    Int(Value),
    Compound(Symbol, Vec<Term>),
    List(Vec<Term>),
}

impl PartialEq for Term {
    fn eq(&self, other: &Term) -> bool {
        self.kind == other.kind
    }
}
impl Eq for Term {}

impl Term {
    pub fn atom(name: &str) -> Term {
        Term { kind: TermKind::Atom(Symbol::intern(name)), pos: 0 }
    }

    pub fn sym(s: Symbol) -> Term {
        Term { kind: TermKind::Atom(s), pos: 0 }
    }

    pub fn compound(name: &str, args: Vec<Term>) -> Term {
        Term { kind: TermKind::Compound(Symbol::intern(name), args), pos: 0 }
    }

    pub fn list(items: Vec<Term>) -> Term {
        Term { kind: TermKind::List(items), pos: 0 }
    }

    /// A constant value as a term; objects have no term form and are written
    /// as the atom of their printed form.
    pub fn value(v: &Value) -> Term {
        let kind = match v {
            Value::Int(_) | Value::Big(_) => TermKind::Int(v.clone()),
            Value::Atom(a) => TermKind::Atom(*a),
            Value::List(items) => TermKind::List(items.iter().map(Term::value).collect()),
            Value::Object(_) => TermKind::Atom(Symbol::intern(&v.to_print_string())),
        };
        Term { kind, pos: 0 }
    }

    /// The value a ground constant term denotes, if it is one.
    pub fn to_value(&self) -> Option<Value> {
        match &self.kind {
            TermKind::Int(v) => Some(v.clone()),
            TermKind::Atom(a) => Some(Value::Atom(*a)),
            TermKind::List(items) => items.iter().map(Term::to_value).collect::<Option<Vec<_>>>().map(Value::list),
            TermKind::Compound(..) => None,
        }
    }

    /// A short description for error messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            TermKind::Atom(a) => format!("atom `{}`", clip(a)),
            TermKind::Int(v) => format!("integer {}", clip(v)),
            TermKind::Compound(f, args) => format!("term {}/{}", clip(f), args.len()),
            TermKind::List(_) => "a list".to_owned(),
        }
    }

    /// Writes the term in `style`.
    pub fn write(&self, out: &mut String, style: Style) {
        match &self.kind {
            TermKind::Atom(a) => write_atom(out, a.as_str(), style.quoted()),
            TermKind::Int(v) => v.write_plain(out),
            TermKind::Compound(f, args) if f.as_str() == "/" && args.len() == 2 => {
                args[0].write(out, style);
                out.push('/');
                if matches!(&args[1].kind, TermKind::Int(v) if v.to_print_string().starts_with('-')) {
                    out.push(' ');
                }
                args[1].write(out, style);
            }
            TermKind::Compound(f, args) => {
                write_atom(out, f.as_str(), style.quoted());
                out.push('(');
                write_seq(out, args, style);
                out.push(')');
            }
            TermKind::List(items) => {
                out.push('[');
                write_seq(out, items, style);
                out.push(']');
            }
        }
    }

    pub fn to_string_in(&self, style: Style) -> String {
        let mut s = String::new();
        self.write(&mut s, style);
        s
    }
}

fn write_seq(out: &mut String, items: &[Term], style: Style) {
    for (i, t) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(style.separator());
        }
        t.write(out, style);
    }
}

/// How terms are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Style {
    /// SWI-Prolog `write/1`: no quotes, `,` between arguments (lists too).
    Write,
    /// SWI-Prolog `listing/1`: quoted atoms, `, ` between arguments; lists
    /// as `write` prints them.
    Listing,
}

impl Style {
    fn quoted(self) -> bool {
        self == Style::Listing
    }
    fn separator(self) -> &'static str {
        match self {
            Style::Write => ",",
            Style::Listing => ", ",
        }
    }
}

// ---------------------------------------------------------------- reader

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Quoted(String),
    Symbolic(String),
    Int(Value),
    Var(String),
    Open,
    Close,
    OpenList,
    CloseList,
    Comma,
    Bar,
    End,
    Eof,
}

const SYMBOL_CHARS: &str = "#$&*+-./:<=>?@^~\\";

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// The byte ranges of the comments skipped so far (for `flowc fmt`).
    comments: Vec<(usize, usize)>,
}

impl<'a> Lexer<'a> {
    fn peek_char(&self) -> Option<char> {
        match self.src.as_bytes().get(self.pos) {
            Some(&b) if b.is_ascii() => Some(b as char),
            _ => self.src[self.pos..].chars().next(),
        }
    }

    fn skip_layout(&mut self) -> Result<(), RawError> {
        loop {
            // ASCII layout a byte at a time (an environment of a
            // 100,000-instruction program is half a megabyte of it and
            // of digits: `chars` and Unicode's whitespace per character
            // were most of reading it).
            let bytes = self.src.as_bytes();
            while bytes.get(self.pos).is_some_and(|b| matches!(b, b' ' | b'\n' | b'\t' | b'\r')) {
                self.pos += 1;
            }
            let rest = &self.src[self.pos..];
            if let Some(c) = rest.chars().next().filter(|c| c.is_whitespace()) {
                self.pos += c.len_utf8();
            } else if rest.starts_with('%') {
                let len = rest.find('\n').unwrap_or(rest.len());
                self.comments.push((self.pos, self.pos + len));
                self.pos += len;
            } else if let Some(body) = rest.strip_prefix("/*") {
                match body.find("*/") {
                    Some(i) => {
                        self.comments.push((self.pos, self.pos + i + 4));
                        self.pos += i + 4;
                    }
                    None => return Err(RawError::new(self.pos, "unterminated `/*` comment")),
                }
            } else {
                return Ok(());
            }
        }
    }

    /// Returns the next token and its start offset.
    fn next(&mut self) -> Result<(Tok, usize), RawError> {
        self.skip_layout()?;
        let start = self.pos;
        let Some(c) = self.peek_char() else {
            return Ok((Tok::Eof, start));
        };
        let rest = &self.src[start..];
        let ident_len = |s: &str| match s.bytes().position(|b| !(b.is_ascii_alphanumeric() || b == b'_')) {
            // Past ASCII: letters of any script continue a name.
            Some(n) if !s.as_bytes()[n].is_ascii() => {
                s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len())
            }
            n => n.unwrap_or(s.len()),
        };
        let tok = if c.is_ascii_lowercase() {
            let n = ident_len(rest);
            self.pos += n;
            Tok::Name(rest[..n].to_owned())
        } else if c.is_uppercase() || c == '_' {
            let n = ident_len(rest);
            self.pos += n;
            Tok::Var(rest[..n].to_owned())
        } else if c.is_ascii_digit() {
            let n = rest.bytes().position(|b| !(b.is_ascii_digit() || b == b'_')).unwrap_or(rest.len());
            let written = &rest[..n];
            self.pos += n;
            if self.peek_char().is_some_and(|c| c.is_alphabetic()) {
                return Err(RawError::new(self.pos, "unexpected letter after a number"));
            }
            // Digit separators (`1_000`) dropped; a copy only where there are some.
            let digits = match written.contains('_') {
                true => std::borrow::Cow::Owned(written.replace('_', "")),
                false => std::borrow::Cow::Borrowed(written),
            };
            Tok::Int(super::parse_int(&digits, start)?)
        } else if c == '\'' {
            self.pos += 1;
            Tok::Quoted(self.quoted(start)?)
        } else if c == '(' {
            self.pos += 1;
            Tok::Open
        } else if c == ')' {
            self.pos += 1;
            Tok::Close
        } else if c == '[' {
            self.pos += 1;
            Tok::OpenList
        } else if c == ']' {
            self.pos += 1;
            Tok::CloseList
        } else if c == ',' {
            self.pos += 1;
            Tok::Comma
        } else if c == '|' {
            self.pos += 1;
            Tok::Bar
        } else if c == '.' && rest[1..].chars().next().is_none_or(|n| n.is_whitespace() || n == '%') {
            self.pos += 1;
            Tok::End
        } else if c == '!' || c == ';' {
            self.pos += 1;
            Tok::Symbolic(c.to_string())
        } else if SYMBOL_CHARS.contains(c) {
            let mut n = rest.find(|c: char| !SYMBOL_CHARS.contains(c)).unwrap_or(rest.len());
            // `x/-5` (a negative value in an environment) reads as `x / -5`,
            // although standard Prolog would make `/-` one token.
            if rest.starts_with("/-") && rest[2..].starts_with(|c: char| c.is_ascii_digit()) {
                n = 1;
            }
            self.pos += n;
            Tok::Symbolic(rest[..n].to_owned())
        } else {
            return Err(RawError::new(start, format!("unexpected character `{c}`")));
        };
        Ok((tok, start))
    }

    fn quoted(&mut self, start: usize) -> Result<String, RawError> {
        let mut s = String::new();
        loop {
            let Some(c) = self.peek_char() else {
                return Err(RawError::new(start, "unterminated quoted atom"));
            };
            self.pos += c.len_utf8();
            match c {
                '\'' if self.peek_char() == Some('\'') => {
                    self.pos += 1;
                    s.push('\'');
                }
                '\'' => return Ok(s),
                '\\' => {
                    let Some(e) = self.peek_char() else {
                        return Err(RawError::new(start, "unterminated quoted atom"));
                    };
                    self.pos += e.len_utf8();
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        '\\' => '\\',
                        '\'' => '\'',
                        '"' => '"',
                        '`' => '`',
                        '\n' => continue,
                        _ => return Err(RawError::new(self.pos - e.len_utf8() - 1, format!("unknown escape `\\{e}`"))),
                    });
                }
                '\n' => return Err(RawError::new(start, "newline in quoted atom")),
                c => s.push(c),
            }
        }
    }
}

/// How deeply terms may nest (compound terms, lists, parentheses). A
/// block's statements nest one level each in the Prolog syntax, so this is
/// also about the most statements one block can have in it (the readable
/// syntax has no such limit). The reader, and what consumes its terms
/// (conversion, printing, freeing), recurse once per level on the driver's
/// 1 GiB stack: a debug build needs up to 6 KB a level, so 100,000 levels
/// stay well inside it. Deeper input is rejected with an error saying so,
/// never a stack overflow, and `flowc` refuses to print Prolog this reader
/// would refuse (flowc-lang's `syntax::printable`).
pub const MAX_TERM_DEPTH: usize = 100_000;

/// How deeply lists may nest in a constant, in every syntax: list values
/// are walked recursively everywhere (printing, comparing, freeing), also
/// on threads with ordinary stacks.
pub const MAX_LIST_DEPTH: usize = 10_000;

/// Reads `.`-terminated clauses one at a time.
pub struct Reader<'a> {
    lexer: Lexer<'a>,
    peeked: Option<(Tok, usize)>,
    /// Open compound terms, lists and parentheses; open lists.
    depth: usize,
    list_depth: usize,
}

impl<'a> Reader<'a> {
    pub fn new(src: &'a str) -> Reader<'a> {
        Reader { lexer: Lexer { src, pos: 0, comments: Vec::new() }, peeked: None, depth: 0, list_depth: 0 }
    }

    /// Enters one more level of nesting (a list if `list`) at `pos`.
    fn enter(&mut self, pos: usize, list: bool) -> Result<(), RawError> {
        self.depth += 1;
        self.list_depth += list as usize;
        if self.list_depth > MAX_LIST_DEPTH {
            return Err(RawError::new(pos, format!("lists nested more than {MAX_LIST_DEPTH} deep")));
        }
        if self.depth > MAX_TERM_DEPTH {
            return Err(RawError::new(
                pos,
                format!(
                    "terms nested more than {MAX_TERM_DEPTH} deep (in the Prolog syntax each statement of a \
                     block nests in the one before: split the block, or write the program in the readable syntax)"
                ),
            ));
        }
        Ok(())
    }

    fn leave(&mut self, list: bool) {
        self.depth -= 1;
        self.list_depth -= list as usize;
    }

    /// The byte ranges of the comments read since the last call.
    pub fn take_comments(&mut self) -> Vec<(usize, usize)> {
        std::mem::take(&mut self.lexer.comments)
    }

    fn peek(&mut self) -> Result<&(Tok, usize), RawError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next()?);
        }
        Ok(self.peeked.as_ref().unwrap())
    }

    fn bump(&mut self) -> Result<(Tok, usize), RawError> {
        self.peek()?;
        Ok(self.peeked.take().unwrap())
    }

    fn expect(&mut self, want: Tok, what: &str) -> Result<usize, RawError> {
        let (tok, pos) = self.bump()?;
        if tok == want {
            Ok(pos)
        } else {
            Err(RawError::new(pos, format!("expected {what}, found {}", describe(&tok))))
        }
    }

    /// The next clause, or `None` at the end of input.
    pub fn next_clause(&mut self) -> Result<Option<Term>, RawError> {
        if self.peek()?.0 == Tok::Eof {
            return Ok(None);
        }
        let t = self.term()?;
        self.expect(Tok::End, "`.` ending the clause")?;
        Ok(Some(t))
    }

    /// Reads exactly one term spanning the whole input (an optional final
    /// `.` is allowed), e.g. an `--env` list.
    pub fn whole_term(mut self) -> Result<Term, RawError> {
        let t = self.term()?;
        if self.peek()?.0 == Tok::End {
            self.bump()?;
        }
        let (tok, pos) = self.bump()?;
        if tok != Tok::Eof {
            return Err(RawError::new(pos, format!("unexpected {} after the term", describe(&tok))));
        }
        Ok(t)
    }

    /// term := primary ('/' primary)*
    fn term(&mut self) -> Result<Term, RawError> {
        let mut t = self.primary()?;
        while matches!(&self.peek()?.0, Tok::Symbolic(s) if s == "/") {
            self.bump()?;
            let rhs = self.primary()?;
            let start = t.pos;
            t = Term { kind: TermKind::Compound(Symbol::intern("/"), vec![t, rhs]), pos: start };
        }
        Ok(t)
    }

    fn primary(&mut self) -> Result<Term, RawError> {
        let (tok, pos) = self.bump()?;
        let kind = match tok {
            Tok::Int(v) => TermKind::Int(v),
            Tok::Symbolic(s) if s == "-" && self.lexer.src[pos + 1..].starts_with(|c: char| c.is_ascii_digit()) => {
                match self.bump()? {
                    (Tok::Int(v), _) => TermKind::Int(negated(v)),
                    (t, p) => return Err(RawError::new(p, format!("expected digits, found {}", describe(&t)))),
                }
            }
            Tok::Name(s) | Tok::Quoted(s) | Tok::Symbolic(s) => {
                // A `(` touching the name opens its arguments; the lexer
                // stands right after the name token here.
                if self.lexer.src[self.lexer.pos..].starts_with('(') {
                    self.bump()?; // the `(`
                    self.enter(pos, false)?;
                    let mut args = vec![self.term()?];
                    while self.peek()?.0 == Tok::Comma {
                        self.bump()?;
                        args.push(self.term()?);
                    }
                    self.expect(Tok::Close, "`,` or `)`")?;
                    self.leave(false);
                    TermKind::Compound(Symbol::intern(&s), args)
                } else {
                    TermKind::Atom(Symbol::intern(&s))
                }
            }
            Tok::OpenList => {
                self.enter(pos, true)?;
                let mut items = Vec::new();
                if self.peek()?.0 != Tok::CloseList {
                    items.push(self.term()?);
                    while self.peek()?.0 == Tok::Comma {
                        self.bump()?;
                        items.push(self.term()?);
                    }
                }
                let (tok, p) = self.bump()?;
                match tok {
                    Tok::CloseList => {}
                    Tok::Bar => {
                        return Err(RawError::new(p, "list tails (`|`) are not supported: lists are constants"))
                    }
                    t => return Err(RawError::new(p, format!("expected `,` or `]`, found {}", describe(&t)))),
                }
                self.leave(true);
                TermKind::List(items)
            }
            Tok::Open => {
                self.enter(pos, false)?;
                let t = self.term()?;
                self.expect(Tok::Close, "`)`")?;
                self.leave(false);
                return Ok(t);
            }
            Tok::Var(v) => {
                return Err(RawError::new(
                    pos,
                    format!(
                        "`{v}` is a Prolog variable; facts must be ground (write atoms in lower case or quote them)"
                    ),
                ))
            }
            t => return Err(RawError::new(pos, format!("expected a term, found {}", describe(&t)))),
        };
        Ok(Term { kind, pos })
    }
}

/// The integer `-v` of integer literal `v` (canonical: `-2^63` is `Int`).
fn negated(v: Value) -> Value {
    match v {
        Value::Int(i) => i.checked_neg().map_or_else(|| Value::from_big(-BigInt::from(i)), Value::Int),
        Value::Big(b) => Value::from_big(-(*b).clone()),
        other => other,
    }
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(s) | Tok::Symbolic(s) => format!("`{}`", clip(s)),
        Tok::Quoted(s) => format!("'{}'", clip(s)),
        Tok::Int(i) => format!("`{}`", clip(i)),
        Tok::Var(v) => format!("variable `{}`", clip(v)),
        Tok::Open => "`(`".into(),
        Tok::Close => "`)`".into(),
        Tok::OpenList => "`[`".into(),
        Tok::CloseList => "`]`".into(),
        Tok::Comma => "`,`".into(),
        Tok::Bar => "`|`".into(),
        Tok::End => "`.`".into(),
        Tok::Eof => "end of input".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(src: &str) -> Term {
        Reader::new(src).whole_term().unwrap()
    }

    #[test]
    fn reads_and_writes_terms() {
        let t = read("op2(res, mul, var(res), const(-1), [x/10, 'A b', []])");
        assert_eq!(t.to_string_in(Style::Write), "op2(res,mul,var(res),const(-1),[x/10,A b,[]])");
        assert_eq!(t.to_string_in(Style::Listing), "op2(res, mul, var(res), const(-1), [x/10, 'A b', []])");
    }

    #[test]
    fn rejects_variables_and_tails() {
        let e = Reader::new("f(X)").whole_term().unwrap_err();
        assert_eq!(e.offset, 2);
        let e = Reader::new("[a|b]").whole_term().unwrap_err();
        assert!(e.message.contains("tails"), "{}", e.message);
    }

    #[test]
    fn clauses_end_with_dot() {
        let mut r = Reader::new("a(1). % comment\n/* block */ b.\n");
        assert_eq!(r.next_clause().unwrap().unwrap().to_string_in(Style::Write), "a(1)");
        assert_eq!(r.next_clause().unwrap().unwrap().to_string_in(Style::Write), "b");
        assert!(r.next_clause().unwrap().is_none());
    }
}

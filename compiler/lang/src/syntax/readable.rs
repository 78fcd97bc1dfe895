//! The readable syntax (docs/language.md §3), the pseudo-code of the series:
//!
//! ```text
//! entry power(x = 10, y = 20)
//!
//! power:
//!     res = 1
//!     if y goto power_rec else goto power_done
//! ```
//!
//! Line-oriented. At column 0 stand directives (`entry`, `pure`,
//! `immutable`, `can_enter_jit`), function headers (`function f(a, b):`) and
//! labels of the main flow graph (`name:`). Indented lines are statements,
//! or, inside a function, the labels of its blocks. `#` starts a comment.
//! Atoms are written `:name` (`:'Any text'`); names that are not plain
//! identifiers, or are keywords, are quoted: `'my var'`.

use super::check::Validator;
use super::comments::{Comments, Place};
use super::diag::{ParseError, RawError};
use super::lex::{lex_from, Line, Tok};
use crate::ast::*;
use crate::ops::{Op, Readable};
use crate::symbol::Symbol;

/// What a statement line parsed to.
enum Parsed {
    Stmt(Stmt),
    Term(Terminator),
}

/// Parses a whole file in the readable syntax.
pub fn parse(file: &str, src: &str) -> Result<Program, ParseError> {
    Ok(parse_with_comments(file, src)?.0)
}

/// [`parse`], keeping the file's comments, each anchored at the code that
/// follows it (or that it ends the line of).
pub fn parse_with_comments(file: &str, src: &str) -> Result<(Program, Comments), ParseError> {
    Parser::default().run(src).map_err(|e| e.locate(file, src))
}

#[derive(Default)]
struct Parser {
    program: Program,
    validator: Validator,
    /// The function being read: its item and header offset.
    function: Option<(Function, usize)>,
    /// The block being read, its label offset, and its terminator once seen.
    block: Option<(Symbol, usize, Vec<Stmt>, Option<Terminator>)>,
    comments: Comments,
    /// Comment lines read and not anchored yet: they go before the next
    /// line of code.
    pending: Vec<String>,
}

impl Parser {
    fn run(mut self, src: &str) -> Result<(Program, Comments), RawError> {
        let mut offset = 0;
        // One buffer for every line's tokens; each line's end found by
        // lexing it.
        let mut toks = Vec::new();
        while offset < src.len() {
            toks.clear();
            let (end, comment) = lex_from(src, offset, 0, &mut toks)?;
            let line_text = src[offset..end].trim_end_matches('\r');
            if let Some(at) = comment {
                self.pending.push(src[at + 1..offset + line_text.len()].to_owned());
            }
            if !toks.is_empty() {
                let indented = line_text.starts_with([' ', '\t']);
                let line = Line { toks: &toks, at: 0, end: offset + line_text.len() };
                self.line(line, indented)?;
            }
            offset = (end + 1).min(src.len());
        }
        self.finish_block()?;
        self.finish_function(offset)?;
        self.validator.finish()?;
        self.anchor(Place::item(self.program.items.len()));
        Ok((self.program, self.comments))
    }

    /// Anchors the pending comment lines at `at`.
    fn anchor(&mut self, at: Place) {
        for text in self.pending.drain(..) {
            self.comments.push(at, &text);
        }
    }

    fn line(&mut self, mut line: Line, indented: bool) -> Result<(), RawError> {
        let start = line.pos();
        let is_label = line.toks.len() == 2 && line.at_name() && matches!(line.peek2(), Some(Tok::Punct(":")));
        if !indented {
            self.finish_block()?;
            self.finish_function(start)?;
            self.anchor(Place::item(self.program.items.len()));
            if is_label {
                let label = line.name("a label")?;
                self.block = Some((label, start, Vec::new(), None));
                return Ok(());
            }
            return self.directive(line, start);
        }
        if is_label && self.function.is_some() {
            self.finish_block()?;
            let index = self.function.as_ref().map_or(0, |(f, _)| f.blocks.len());
            self.anchor(Place::block(self.program.items.len(), index));
            let label = line.name("a label")?;
            self.block = Some((label, start, Vec::new(), None));
            return Ok(());
        }
        let (item, index) = (self.program.items.len(), self.function.as_ref().map_or(0, |(f, _)| f.blocks.len()));
        if let Some((_, _, body, _)) = &self.block {
            self.anchor(Place::stmt(item, index, body.len()));
        }
        let Some((label, _, body, term)) = &mut self.block else {
            return Err(RawError::new(start, "statement outside a block: write a label line `name:` first"));
        };
        if term.is_some() {
            return Err(RawError::new(start, format!("statement after the terminator of block `{label}`")));
        }
        match statement(&mut line)? {
            Parsed::Stmt(s) => body.push(s),
            Parsed::Term(t) => *term = Some(t),
        }
        line.done()
    }

    fn finish_block(&mut self) -> Result<(), RawError> {
        let Some((label, pos, body, term)) = self.block.take() else {
            return Ok(());
        };
        let Some(term) = term else {
            return Err(RawError::new(
                pos,
                format!("block `{label}` has no terminator (goto, if, print_and_stop, promote, call, return, error)"),
            ));
        };
        let block = Block { label, body, term };
        match &mut self.function {
            Some((f, _)) => f.blocks.push(block),
            None => self.push(Item::Block(block), pos)?,
        }
        Ok(())
    }

    fn finish_function(&mut self, at: usize) -> Result<(), RawError> {
        if let Some((f, pos)) = self.function.take() {
            if f.blocks.is_empty() {
                return Err(RawError::new(at, format!("function `{}` has no blocks", f.name)));
            }
            self.push(Item::Function(f), pos)?;
        }
        Ok(())
    }

    fn push(&mut self, item: Item, pos: usize) -> Result<(), RawError> {
        self.validator.item(&item, pos)?;
        self.program.items.push(item);
        Ok(())
    }

    fn directive(&mut self, mut line: Line, start: usize) -> Result<(), RawError> {
        let Some(Tok::Ident(word)) = line.bump() else {
            line.at = 0;
            return Err(line.error("a label `name:`, a function header or a directive"));
        };
        let item = match *word {
            "entry" => {
                let label = line.name("a label")?;
                let env = if line.is_punct("(") {
                    line.bump();
                    let mut env = Vec::new();
                    if !line.is_punct(")") {
                        loop {
                            let k = line.name("a variable name")?;
                            line.punct("=")?;
                            env.push((k, line.constant()?));
                            if !line.is_punct(",") {
                                break;
                            }
                            line.bump();
                        }
                    }
                    line.punct(")")?;
                    Some(env)
                } else {
                    None
                };
                Item::Entry(Entry { label, env })
            }
            "pure" => Item::Pure(line.name("a function name")?),
            "can_enter_jit" => Item::CanEnterJit(line.name("a label")?),
            "immutable" => {
                let class = line.name("a class name")?;
                let fields = name_list(&mut line, "a field name")?;
                Item::Immutable(class, fields)
            }
            "function" => {
                let name = line.name("a function name")?;
                let params = name_list(&mut line, "a parameter name")?;
                line.punct(":")?;
                line.done()?;
                self.function = Some((Function { name, params, blocks: Vec::new() }, start));
                return Ok(());
            }
            _ => {
                line.at = 0;
                return Err(line.error(
                    "a label `name:`, a function header or a directive (entry, pure, immutable, can_enter_jit)",
                ));
            }
        };
        line.done()?;
        self.push(item, start)
    }
}

/// `( name, name, ... )`
fn name_list(line: &mut Line, what: &str) -> Result<Vec<Symbol>, RawError> {
    line.punct("(")?;
    let mut names = Vec::new();
    if !line.is_punct(")") {
        names.push(line.name(what)?);
        while line.is_punct(",") {
            line.bump();
            names.push(line.name(what)?);
        }
    }
    line.punct(")")?;
    Ok(names)
}

/// `( arg, arg, ... )`
fn arg_list(line: &mut Line) -> Result<Vec<Arg>, RawError> {
    line.punct("(")?;
    let mut args = Vec::new();
    if !line.is_punct(")") {
        args.push(line.arg()?);
        while line.is_punct(",") {
            line.bump();
            args.push(line.arg()?);
        }
    }
    line.punct(")")?;
    Ok(args)
}

fn statement(line: &mut Line) -> Result<Parsed, RawError> {
    if let Some(Tok::Ident(k)) = line.peek() {
        match *k {
            "goto" => {
                line.bump();
                return Ok(Parsed::Term(Terminator::Jump(line.name("a label")?)));
            }
            "if" => {
                line.bump();
                let subject = line.arg()?;
                if line.is_keyword("is") {
                    line.bump();
                    let class = line.name("a class name")?;
                    let (then_label, else_label) = branches(line)?;
                    return Ok(Parsed::Term(Terminator::IfClass { obj: subject, class, then_label, else_label }));
                }
                let Arg::Var(cond) = subject else {
                    return Err(RawError::new(line.pos(), "`if` tests a variable: write `if v goto a else goto b`"));
                };
                let (then_label, else_label) = branches(line)?;
                return Ok(Parsed::Term(Terminator::If { cond, then_label, else_label }));
            }
            "print_and_stop" => {
                line.bump();
                line.punct("(")?;
                let a = line.arg()?;
                line.punct(")")?;
                return Ok(Parsed::Term(Terminator::PrintAndStop(a)));
            }
            "promote" => {
                line.bump();
                let var = line.name("a variable")?;
                line.keyword("then")?;
                return Ok(Parsed::Term(Terminator::Promote { var, label: line.name("a label")? }));
            }
            "return" => {
                line.bump();
                return Ok(Parsed::Term(Terminator::Return(line.arg()?)));
            }
            "error" => {
                line.bump();
                line.punct("(")?;
                let reason = line.atom("an atom reason like :overflow")?;
                line.punct(")")?;
                return Ok(Parsed::Term(Terminator::Error(reason)));
            }
            _ => {}
        }
    }
    // `obj.field = arg` or `dst = expr`
    let first = line.arg()?;
    if line.is_punct(".") {
        line.bump();
        let field = line.name("a field name")?;
        line.punct("=")?;
        return Ok(Parsed::Stmt(Stmt::Set { obj: first, field, value: line.arg()? }));
    }
    let Arg::Var(dst) = first else {
        return Err(RawError::new(line.toks[0].1, "expected a variable to assign to"));
    };
    line.punct("=")?;
    expression(line, dst)
}

fn branches(line: &mut Line) -> Result<(Symbol, Symbol), RawError> {
    line.keyword("goto")?;
    let a = line.name("a label")?;
    line.keyword("else")?;
    line.keyword("goto")?;
    Ok((a, line.name("a label")?))
}

/// The right-hand side of `dst = ...`.
fn expression(line: &mut Line, dst: Symbol) -> Result<Parsed, RawError> {
    let called = matches!(line.peek2(), Some(Tok::Punct("(")));
    match line.peek() {
        Some(Tok::Ident(k)) if *k == "new" && !called => {
            line.bump();
            return Ok(Parsed::Stmt(Stmt::New { dst, class: line.name("a class name")? }));
        }
        Some(Tok::Ident(k)) if *k == "call" && !called => {
            line.bump();
            let func = line.name("a function name")?;
            let args = arg_list(line)?;
            line.keyword("then")?;
            return Ok(Parsed::Term(Terminator::Call { dst, func, args, next: line.name("a label")? }));
        }
        Some(t) if called && t.name_text().is_some() => {
            // Generic operation form: `name(a)` or `name(a, b)`.
            let op = Operator::from_name(t.name_text().unwrap_or_default());
            line.bump();
            let pos = line.pos();
            let mut args = arg_list(line)?;
            return match (args.pop(), args.pop(), args.is_empty()) {
                (Some(arg), None, _) => Ok(Parsed::Stmt(Stmt::Op1 { dst, op, arg })),
                (Some(rhs), Some(lhs), true) => Ok(Parsed::Stmt(Stmt::Op2 { dst, op, lhs, rhs })),
                _ => Err(RawError::new(pos, "an operation takes one or two operands")),
            };
        }
        Some(Tok::Punct("-")) => {
            line.bump();
            return Ok(Parsed::Stmt(Stmt::Op1 { dst, op: Operator::Known(Op::Neg), arg: line.arg()? }));
        }
        _ => {}
    }
    let lhs = line.arg()?;
    match line.peek() {
        None => Ok(Parsed::Stmt(Stmt::Op1 { dst, op: Operator::Known(Op::Same), arg: lhs })),
        Some(Tok::Punct(".")) => {
            line.bump();
            Ok(Parsed::Stmt(Stmt::Get { dst, obj: lhs, field: line.name("a field name")? }))
        }
        Some(Tok::Punct("[")) => {
            line.bump();
            let index = line.arg()?;
            line.punct("]")?;
            Ok(Parsed::Stmt(Stmt::Op2 { dst, op: Operator::Known(Op::ReadList), lhs, rhs: index }))
        }
        Some(Tok::Punct(p)) if Op::from_infix(p).is_some() => {
            let op = Op::from_infix(p).unwrap();
            line.bump();
            Ok(Parsed::Stmt(Stmt::Op2 { dst, op: Operator::Known(op), lhs, rhs: line.arg()? }))
        }
        _ => Err(line.error("an operator (+ - * // % == != < <= > >=), `[`, `.` or the end of the line")),
    }
}

/// How the readable printer writes `op` (re-exported for the printer).
pub(crate) fn readable_form(op: Operator) -> Option<Readable> {
    match op {
        Operator::Known(op) => Some(op.info().readable),
        Operator::Unknown(_) => None,
    }
}

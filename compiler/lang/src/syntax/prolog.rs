//! The canonical Prolog-term syntax (docs/language.md §2): reading a file of
//! facts into a [`Program`] and printing a program back.
//!
//! The printer lays a block out the way the series does, one statement per
//! line, continuation lines aligned under the first statement:
//! ```text
//! block(power_rec, op2(res, mul, var(res), var(x),
//!                  op2(y, sub, var(y), const(1),
//!                  if(y, power_rec, power_done)))).
//! ```

use super::check::Validator;
use super::comments::{prolog_comment_lines, Comments, Cursor, Place};
use super::diag::{ParseError, RawError};
use super::term::{Reader, Style, Term, TermKind};
use crate::ast::*;
use crate::symbol::Symbol;
use crate::value::{write_atom, Value};
use flowc_heap::text::{
    atom_name as name, atom_names as names, compound_args as args, env_list as env, term_error as err,
    term_value as constant,
};
pub use flowc_heap::text::{parse_env, parse_env_of};

/// Parses a whole file in the Prolog syntax.
pub fn parse(file: &str, src: &str) -> Result<Program, ParseError> {
    Ok(parse_with_comments(file, src)?.0)
}

/// [`parse`], keeping the file's comments.
pub fn parse_with_comments(file: &str, src: &str) -> Result<(Program, Comments), ParseError> {
    parse_raw(src).map_err(|e| e.locate(file, src))
}

fn parse_raw(src: &str) -> Result<(Program, Comments), RawError> {
    let mut reader = Reader::new(src);
    let mut program = Program::default();
    let mut comments = Comments::default();
    let mut validator = Validator::default();
    while let Some(clause) = reader.next_clause()? {
        let item = item(&clause)?;
        validator.item(&item, clause.pos)?;
        let places = statement_places(&clause, program.items.len());
        for (start, end) in reader.take_comments() {
            // Before the clause, or inside it before the first statement
            // that starts after the comment (else before the clause too).
            let inside = places.iter().find(|(pos, _)| start > clause.pos && *pos > start);
            let at = inside.map_or(Place::item(program.items.len()), |p| p.1);
            for line in prolog_comment_lines(&src[start..end]) {
                comments.push(at, line);
            }
        }
        program.items.push(item);
    }
    for (start, end) in reader.take_comments() {
        for line in prolog_comment_lines(&src[start..end]) {
            comments.push(Place::item(program.items.len()), line);
        }
    }
    validator.finish()?;
    Ok((program, comments))
}

/// The source positions of the blocks (of a function), statements and
/// terminators of clause `item`, in order, each with its place: where a
/// comment inside the clause is anchored (before the first of them that
/// starts after it).
fn statement_places(clause: &Term, item: usize) -> Vec<(usize, Place)> {
    let mut places = Vec::new();
    let walk = |places: &mut Vec<(usize, Place)>, block: usize, mut t: &Term| {
        let mut k = 0;
        loop {
            places.push((t.pos, Place::stmt(item, block, k)));
            match &t.kind {
                TermKind::Compound(f, a) if STATEMENTS.contains(&f.as_str()) && a.len() > 1 => {
                    t = &a[a.len() - 1];
                    k += 1;
                }
                _ => break,
            }
        }
    };
    if let Some([_, code]) = args(clause, "block", 2) {
        walk(&mut places, 0, code);
    } else if let Some([_, _, blocks]) = args(clause, "function", 3) {
        if let TermKind::List(bs) = &blocks.kind {
            for (i, b) in bs.iter().enumerate() {
                if let Some([_, code]) = args(b, "block", 2) {
                    places.push((b.pos, Place::block(item, i)));
                    walk(&mut places, i, code);
                }
            }
        }
    }
    places
}

/// The functors of statements, whose last argument is the rest of the block.
const STATEMENTS: &[&str] = &["op1", "op2", "new", "get", "set"];

fn item(t: &Term) -> Result<Item, RawError> {
    if let Some([l, code]) = args(t, "block", 2) {
        return Ok(Item::Block(block(l, code)?));
    }
    if let Some([f, params, blocks]) = args(t, "function", 3) {
        let TermKind::List(bs) = &blocks.kind else {
            return Err(err(blocks, "expected a list of block(Label, Code) terms"));
        };
        if bs.is_empty() {
            return Err(err(blocks, "a function needs at least one block (its entry)"));
        }
        let blocks = bs
            .iter()
            .map(|b| match args(b, "block", 2) {
                Some([l, code]) => block(l, code),
                _ => Err(err(b, format!("expected block(Label, Code), found {}", b.describe()))),
            })
            .collect::<Result<_, _>>()?;
        return Ok(Item::Function(Function {
            name: name(f, "a function name")?,
            params: names(params, "parameter name")?,
            blocks,
        }));
    }
    if let Some([l]) = args(t, "entry", 1) {
        return Ok(Item::Entry(Entry { label: name(l, "a label")?, env: None }));
    }
    if let Some([l, e]) = args(t, "entry", 2) {
        return Ok(Item::Entry(Entry { label: name(l, "a label")?, env: Some(env(e)?) }));
    }
    if let Some([f]) = args(t, "pure", 1) {
        return Ok(Item::Pure(name(f, "a function name")?));
    }
    if let Some([c, fs]) = args(t, "immutable", 2) {
        return Ok(Item::Immutable(name(c, "a class name")?, names(fs, "field name")?));
    }
    if let Some([l]) = args(t, "can_enter_jit", 1) {
        return Ok(Item::CanEnterJit(name(l, "a label")?));
    }
    Err(err(
        t,
        format!(
            "unknown fact {}; expected block/2, function/3, entry/1, entry/2, pure/1, immutable/2 or can_enter_jit/1",
            t.describe()
        ),
    ))
}

fn arg(t: &Term) -> Result<Arg, RawError> {
    if let Some([v]) = args(t, "var", 1) {
        return Ok(Arg::Var(name(v, "a variable name")?));
    }
    if let Some([c]) = args(t, "const", 1) {
        return Ok(Arg::Const(constant(c)?));
    }
    Err(err(t, format!("expected var(Name) or const(Value), found {}", t.describe())))
}

fn block(label: &Term, code: &Term) -> Result<Block, RawError> {
    let label = name(label, "a label")?;
    let mut body = Vec::new();
    let mut t = code;
    loop {
        let (stmt, rest) = match &t.kind {
            TermKind::Compound(f, a) => match (f.as_str(), a.as_slice()) {
                ("op1", [r, op, x, rest]) => {
                    (Stmt::Op1 { dst: name(r, "a variable name")?, op: operator(op)?, arg: arg(x)? }, rest)
                }
                ("op2", [r, op, x, y, rest]) => (
                    Stmt::Op2 { dst: name(r, "a variable name")?, op: operator(op)?, lhs: arg(x)?, rhs: arg(y)? },
                    rest,
                ),
                ("new", [r, c, rest]) => {
                    (Stmt::New { dst: name(r, "a variable name")?, class: name(c, "a class name")? }, rest)
                }
                ("get", [r, o, f, rest]) => (
                    Stmt::Get { dst: name(r, "a variable name")?, obj: arg(o)?, field: name(f, "a field name")? },
                    rest,
                ),
                ("set", [o, f, v, rest]) => {
                    (Stmt::Set { obj: arg(o)?, field: name(f, "a field name")?, value: arg(v)? }, rest)
                }
                _ => return Ok(Block { label, body, term: terminator(t)? }),
            },
            _ => return Ok(Block { label, body, term: terminator(t)? }),
        };
        body.push(stmt);
        t = rest;
    }
}

fn operator(t: &Term) -> Result<Operator, RawError> {
    Ok(Operator::from_name(name(t, "an operation name")?.as_str()))
}

fn terminator(t: &Term) -> Result<Terminator, RawError> {
    let lbl = |t: &Term| name(t, "a label");
    let var = |t: &Term| name(t, "a variable name (bare, without var(...))");
    let TermKind::Compound(f, a) = &t.kind else {
        return Err(not_code(t));
    };
    Ok(match (f.as_str(), a.as_slice()) {
        ("jump", [l]) => Terminator::Jump(lbl(l)?),
        ("if", [v, l1, l2]) => Terminator::If { cond: var(v)?, then_label: lbl(l1)?, else_label: lbl(l2)? },
        ("print_and_stop", [x]) => Terminator::PrintAndStop(arg(x)?),
        ("promote", [v, l]) => Terminator::Promote { var: var(v)?, label: lbl(l)? },
        ("if_class", [x, c, l1, l2]) => Terminator::IfClass {
            obj: arg(x)?,
            class: name(c, "a class name")?,
            then_label: lbl(l1)?,
            else_label: lbl(l2)?,
        },
        ("call", [r, func, xs, l]) => {
            let TermKind::List(items) = &xs.kind else {
                return Err(err(xs, format!("expected a list of arguments, found {}", xs.describe())));
            };
            Terminator::Call {
                dst: name(r, "a variable name")?,
                func: name(func, "a function name")?,
                args: items.iter().map(arg).collect::<Result<_, _>>()?,
                next: lbl(l)?,
            }
        }
        ("return", [x]) => Terminator::Return(arg(x)?),
        ("error", [r]) => Terminator::Error(name(r, "an error reason")?),
        _ => return Err(not_code(t)),
    })
}

fn not_code(t: &Term) -> RawError {
    err(
        t,
        format!(
            "expected a statement (op1, op2, new, get, set) or a terminator (jump, if, print_and_stop, promote, if_class, call, return, error), found {}",
            t.describe()
        ),
    )
}

// ---------------------------------------------------------------- printing

/// Prints a program in the Prolog syntax; [`parse`] reads it back to the same AST.
pub fn print(program: &Program) -> String {
    print_with_comments(program, &Comments::default())
}

/// [`print`] with `comments` written back at their places (as `%` lines).
pub fn print_with_comments(program: &Program, comments: &Comments) -> String {
    let mut out = String::new();
    Cursor::new(comments, '%')
        .print_items(&mut out, program, |out, cursor, i, item| print_item(out, item, &mut Placed { cursor, item: i }));
    out
}

/// The comments to write inside item `item`.
struct Placed<'a, 'c> {
    cursor: &'a mut Cursor<'c>,
    item: usize,
}

fn atom(out: &mut String, s: Symbol) {
    write_atom(out, s.as_str(), true);
}

fn atom_list(out: &mut String, items: &[Symbol]) {
    out.push('[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        atom(out, *s);
    }
    out.push(']');
}

/// Writes an environment list in listing style: `[x/10, y/20]`.
pub fn write_env(out: &mut String, env: &[(Symbol, Value)]) {
    let items = env.iter().map(|(k, v)| Term::compound("/", vec![Term::sym(*k), Term::value(v)])).collect();
    Term::list(items).write(out, Style::Listing);
}

fn print_item(out: &mut String, item: &Item, placed: &mut Placed) {
    match item {
        Item::Block(b) => {
            print_block_commented(out, b, "", Some((placed, 0)));
            out.push_str(".\n");
        }
        Item::Function(f) => {
            out.push_str("function(");
            atom(out, f.name);
            out.push_str(", ");
            atom_list(out, &f.params);
            out.push_str(", [\n");
            for (i, b) in f.blocks.iter().enumerate() {
                print_block_commented(out, b, "    ", Some((placed, i)));
                out.push_str(if i + 1 < f.blocks.len() { ",\n" } else { "\n" });
            }
            out.push_str("]).\n");
        }
        Item::Entry(e) => {
            out.push_str("entry(");
            atom(out, e.label);
            if let Some(env) = &e.env {
                out.push_str(", ");
                write_env(out, env);
            }
            out.push_str(").\n");
        }
        Item::Pure(f) => {
            out.push_str("pure(");
            atom(out, *f);
            out.push_str(").\n");
        }
        Item::Immutable(c, fields) => {
            out.push_str("immutable(");
            atom(out, *c);
            out.push_str(", ");
            atom_list(out, fields);
            out.push_str(").\n");
        }
        Item::CanEnterJit(l) => {
            out.push_str("can_enter_jit(");
            atom(out, *l);
            out.push_str(").\n");
        }
    }
}

/// Writes `block(Label, Code)` with one statement per line.
pub fn print_block(out: &mut String, b: &Block, indent: &str) {
    print_block_commented(out, b, indent, None);
}

/// [`print_block`], writing the comments of block `index` of `placed`'s
/// item before its statements (the label's go before `block(`).
fn print_block_commented(out: &mut String, b: &Block, indent: &str, mut placed: Option<(&mut Placed, usize)>) {
    if let Some((p, index)) = &mut placed {
        p.cursor.before(out, Place::block(p.item, *index), indent);
    }
    let start = out.len();
    out.push_str(indent);
    out.push_str("block(");
    atom(out, b.label);
    out.push_str(", ");
    let width = out[start..].chars().count();
    let pad: String = " ".repeat(width);
    let mut comments_at = |out: &mut String, k: usize| {
        if let Some((p, index)) = &mut placed {
            let mut text = String::new();
            p.cursor.before(&mut text, Place::stmt(p.item, *index, k), &pad);
            if !text.is_empty() {
                // The comments take lines of their own, the code goes on
                // under them at the block's column.
                if !out.ends_with(&pad) {
                    out.truncate(out.trim_end_matches(' ').len());
                    out.push('\n');
                    out.push_str(&pad);
                }
                let trimmed = text.trim_start_matches(' ');
                out.push_str(trimmed);
                out.push_str(&pad);
            }
        }
    };
    for (k, stmt) in b.body.iter().enumerate() {
        comments_at(out, k);
        write_stmt_head(out, stmt);
        out.push_str(",\n");
        out.push_str(&pad);
    }
    comments_at(out, b.body.len());
    write_terminator(out, &b.term);
    out.extend(std::iter::repeat_n(')', b.body.len() + 1));
}

/// The term `var(X)` or `const(C)`.
pub fn arg_term(a: &Arg) -> Term {
    match a {
        Arg::Var(v) => Term::compound("var", vec![Term::sym(*v)]),
        Arg::Const(c) => Term::compound("const", vec![Term::value(c)]),
    }
}

/// Writes a statement without its rest and closing parenthesis, e.g.
/// `op2(res, mul, var(res), var(x)`.
fn write_stmt_head(out: &mut String, stmt: &Stmt) {
    let (functor, args) = stmt_parts(stmt);
    out.push_str(functor);
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        a.write(out, Style::Listing);
    }
}

/// A statement's functor and its arguments before the rest of the block.
fn stmt_parts(stmt: &Stmt) -> (&'static str, Vec<Term>) {
    let s = |x: &Symbol| Term::sym(*x);
    match stmt {
        Stmt::Op1 { dst, op, arg } => ("op1", vec![s(dst), Term::atom(op.name()), arg_term(arg)]),
        Stmt::Op2 { dst, op, lhs, rhs } => ("op2", vec![s(dst), Term::atom(op.name()), arg_term(lhs), arg_term(rhs)]),
        Stmt::New { dst, class } => ("new", vec![s(dst), s(class)]),
        Stmt::Get { dst, obj, field } => ("get", vec![s(dst), arg_term(obj), s(field)]),
        Stmt::Set { obj, field, value } => ("set", vec![arg_term(obj), s(field), arg_term(value)]),
    }
}

fn write_terminator(out: &mut String, t: &Terminator) {
    terminator_term(t).write(out, Style::Listing);
}

/// The term form of a terminator.
pub fn terminator_term(t: &Terminator) -> Term {
    let s = |x: &Symbol| Term::sym(*x);
    match t {
        Terminator::Jump(l) => Term::compound("jump", vec![s(l)]),
        Terminator::If { cond, then_label, else_label } => {
            Term::compound("if", vec![s(cond), s(then_label), s(else_label)])
        }
        Terminator::PrintAndStop(a) => Term::compound("print_and_stop", vec![arg_term(a)]),
        Terminator::Promote { var, label } => Term::compound("promote", vec![s(var), s(label)]),
        Terminator::IfClass { obj, class, then_label, else_label } => {
            Term::compound("if_class", vec![arg_term(obj), s(class), s(then_label), s(else_label)])
        }
        Terminator::Call { dst, func, args, next } => {
            Term::compound("call", vec![s(dst), s(func), Term::list(args.iter().map(arg_term).collect()), s(next)])
        }
        Terminator::Return(a) => Term::compound("return", vec![arg_term(a)]),
        Terminator::Error(r) => Term::compound("error", vec![s(r)]),
    }
}

/// The term of one statement with `rest` as its last argument.
pub fn stmt_term(stmt: &Stmt, rest: Term) -> Term {
    let (functor, mut args) = stmt_parts(stmt);
    args.push(rest);
    Term::compound(functor, args)
}

/// The nested code term of a whole block body.
pub fn code_term(body: &[Stmt], term: &Terminator) -> Term {
    body.iter().rev().fold(terminator_term(term), |rest, s| stmt_term(s, rest))
}

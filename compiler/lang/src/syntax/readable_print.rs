//! Printing a program in the readable syntax; [`super::readable::parse`]
//! reads the output back to the same AST.

use std::fmt::Write as _;

use super::comments::{Comments, Cursor, Place};
use super::lex::KEYWORDS;
use super::readable::readable_form;
use crate::ast::*;
use crate::ops::Readable;
use crate::symbol::Symbol;
use crate::value::Value;

/// Prints a whole program.
pub fn print(program: &Program) -> String {
    print_with_comments(program, &Comments::default())
}

/// [`print`] with `comments` written back at their places (as `#` lines).
pub fn print_with_comments(program: &Program, comments: &Comments) -> String {
    print_mapped(program, comments, None)
}

/// Where a statement or terminator is in the printed program: its
/// function (`None` for the main graph), block, 1-based statement number
/// (one past the last statement is the terminator, as in
/// `flowc_ir::Site`; 0 is the label's line) and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StmtLine {
    pub function: Option<Symbol>,
    pub block: Symbol,
    pub statement: u32,
    pub line: u32,
}

/// Counts the lines of a text as it grows, without rescanning it.
#[derive(Default)]
struct LineCounter {
    scanned: usize,
    lines: u32,
}

impl LineCounter {
    /// The 1-based number of the line `out` ends on.
    fn line(&mut self, out: &str) -> u32 {
        self.lines += out[self.scanned..].bytes().filter(|&b| b == b'\n').count() as u32;
        self.scanned = out.len();
        self.lines + 1
    }
}

/// The lines of a block's statements, recorded as it prints.
struct Recorder<'r> {
    lines: &'r mut Vec<StmtLine>,
    counter: &'r mut LineCounter,
    function: Option<Symbol>,
}

/// [`print_with_comments`], also recording in `lines` (if given) the line
/// of every statement and terminator.
pub fn print_mapped(program: &Program, comments: &Comments, mut lines: Option<&mut Vec<StmtLine>>) -> String {
    let mut counter = LineCounter::default();
    let mut out = String::new();
    Cursor::new(comments, '#').print_items(&mut out, program, |out, cursor, i, item| match item {
        Item::Block(b) => {
            let rec = lines.as_deref_mut().map(|lines| Recorder { lines, counter: &mut counter, function: None });
            print_block_commented(out, b, "", Some((cursor, i, 0)), rec)
        }
        Item::Function(f) => {
            out.push_str("function ");
            name(out, f.name);
            names(out, &f.params);
            out.push_str(":\n");
            for (k, b) in f.blocks.iter().enumerate() {
                if k > 0 {
                    out.push('\n');
                }
                let rec =
                    lines.as_deref_mut().map(|lines| Recorder { lines, counter: &mut counter, function: Some(f.name) });
                print_block_commented(out, b, "    ", Some((cursor, i, k)), rec);
            }
        }
        Item::Entry(e) => {
            out.push_str("entry ");
            name(out, e.label);
            if let Some(env) = &e.env {
                out.push('(');
                for (i, (k, v)) in env.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    name(out, *k);
                    out.push_str(" = ");
                    constant(out, v);
                }
                out.push(')');
            }
            out.push('\n');
        }
        Item::Pure(f) => {
            out.push_str("pure ");
            name(out, *f);
            out.push('\n');
        }
        Item::Immutable(c, fields) => {
            out.push_str("immutable ");
            name(out, *c);
            names(out, fields);
            out.push('\n');
        }
        Item::CanEnterJit(l) => {
            out.push_str("can_enter_jit ");
            name(out, *l);
            out.push('\n');
        }
    });
    out
}

/// Prints one block: its label line at `indent`, statements four deeper.
pub fn print_block(out: &mut String, b: &Block, indent: &str) {
    print_block_commented(out, b, indent, None, None);
}

/// [`print_block`] with the comments of block `index` of item `item`.
fn print_block_commented(
    out: &mut String,
    b: &Block,
    indent: &str,
    mut at: Option<(&mut Cursor, usize, usize)>,
    mut rec: Option<Recorder>,
) {
    let inner = format!("{indent}    ");
    // The comments before the label (stmt `None`) or statement `stmt`.
    let mut comments = |out: &mut String, stmt: Option<usize>, indent: &str| {
        if let Some((cursor, item, index)) = &mut at {
            cursor.before(out, Place { item: *item, block: Some(*index), stmt }, indent);
        }
    };
    let mut record = |out: &String, statement: usize| {
        if let Some(r) = &mut rec {
            let line = r.counter.line(out);
            r.lines.push(StmtLine { function: r.function, block: b.label, statement: statement as u32, line });
        }
    };
    comments(out, None, indent);
    record(out, 0);
    out.push_str(indent);
    name(out, b.label);
    out.push_str(":\n");
    for (k, s) in b.body.iter().enumerate() {
        comments(out, Some(k), &inner);
        record(out, k + 1);
        out.push_str(&inner);
        stmt(out, s);
        out.push('\n');
    }
    comments(out, Some(b.body.len()), &inner);
    record(out, b.body.len() + 1);
    out.push_str(&inner);
    terminator(out, &b.term);
    out.push('\n');
}

/// Whether `s` can be written bare.
fn is_plain_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
}

/// Writes a name (variable, label, class, field, function), quoted if needed.
pub fn name(out: &mut String, s: Symbol) {
    let s = s.as_str();
    if is_plain_name(s) {
        out.push_str(s);
    } else {
        crate::value::push_quoted(out, s);
    }
}

fn names(out: &mut String, list: &[Symbol]) {
    out.push('(');
    for (i, s) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        name(out, *s);
    }
    out.push(')');
}

/// Writes a constant: `42`, `:atom`, `[:a, 2]`.
pub fn constant(out: &mut String, v: &Value) {
    match v {
        Value::Atom(a) => {
            out.push(':');
            let s = a.as_str();
            let plain = s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if plain {
                out.push_str(s);
            } else {
                crate::value::push_quoted(out, s);
            }
        }
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                constant(out, item);
            }
            out.push(']');
        }
        Value::Int(_) | Value::Big(_) | Value::Object(_) => write!(out, "{v}").unwrap(),
    }
}

/// Writes an operand.
pub fn arg(out: &mut String, a: &Arg) {
    match a {
        Arg::Var(v) => name(out, *v),
        Arg::Const(c) => constant(out, c),
    }
}

fn args(out: &mut String, list: &[Arg]) {
    out.push('(');
    for (i, a) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        arg(out, a);
    }
    out.push(')');
}

fn generic(out: &mut String, op: Operator, operands: &[Arg]) {
    let n = op.name();
    if is_plain_name(n) {
        out.push_str(n);
    } else {
        crate::value::push_quoted(out, n);
    }
    args(out, operands);
}

/// Writes a statement, e.g. `res = res * x`.
pub fn stmt(out: &mut String, s: &Stmt) {
    match s {
        Stmt::Op1 { dst, op, arg: a } => {
            name(out, *dst);
            out.push_str(" = ");
            match readable_form(*op) {
                Some(Readable::Copy) => arg(out, a),
                // `-5` would read back as a constant; write `neg(5)` then.
                Some(Readable::Prefix(p)) if matches!(a, Arg::Var(_)) => {
                    out.push_str(p);
                    arg(out, a);
                }
                _ => generic(out, *op, std::slice::from_ref(a)),
            }
        }
        Stmt::Op2 { dst, op, lhs, rhs } => {
            name(out, *dst);
            out.push_str(" = ");
            match readable_form(*op) {
                Some(Readable::Infix(sym)) => {
                    arg(out, lhs);
                    write!(out, " {sym} ").unwrap();
                    arg(out, rhs);
                }
                Some(Readable::Index) => {
                    arg(out, lhs);
                    out.push('[');
                    arg(out, rhs);
                    out.push(']');
                }
                _ => generic(out, *op, &[lhs.clone(), rhs.clone()]),
            }
        }
        Stmt::New { dst, class } => {
            name(out, *dst);
            out.push_str(" = new ");
            name(out, *class);
        }
        Stmt::Get { dst, obj, field } => {
            name(out, *dst);
            out.push_str(" = ");
            arg(out, obj);
            out.push('.');
            name(out, *field);
        }
        Stmt::Set { obj, field, value } => {
            arg(out, obj);
            out.push('.');
            name(out, *field);
            out.push_str(" = ");
            arg(out, value);
        }
    }
}

/// Writes a terminator, e.g. `if y goto power_rec else goto power_done`.
pub fn terminator(out: &mut String, t: &Terminator) {
    match t {
        Terminator::Jump(l) => {
            out.push_str("goto ");
            name(out, *l);
        }
        Terminator::If { cond, then_label, else_label } => {
            out.push_str("if ");
            name(out, *cond);
            out.push_str(" goto ");
            name(out, *then_label);
            out.push_str(" else goto ");
            name(out, *else_label);
        }
        Terminator::PrintAndStop(a) => {
            out.push_str("print_and_stop(");
            arg(out, a);
            out.push(')');
        }
        Terminator::Promote { var, label } => {
            out.push_str("promote ");
            name(out, *var);
            out.push_str(" then ");
            name(out, *label);
        }
        Terminator::IfClass { obj, class, then_label, else_label } => {
            out.push_str("if ");
            arg(out, obj);
            out.push_str(" is ");
            name(out, *class);
            out.push_str(" goto ");
            name(out, *then_label);
            out.push_str(" else goto ");
            name(out, *else_label);
        }
        Terminator::Call { dst, func, args: a, next } => {
            name(out, *dst);
            out.push_str(" = call ");
            name(out, *func);
            args(out, a);
            out.push_str(" then ");
            name(out, *next);
        }
        Terminator::Return(a) => {
            out.push_str("return ");
            arg(out, a);
        }
        Terminator::Error(r) => {
            out.push_str("error(");
            constant(out, &Value::Atom(*r));
            out.push(')');
        }
    }
}

/// A statement as one line of readable text (for error messages).
pub fn stmt_to_string(s: &Stmt) -> String {
    let mut out = String::new();
    stmt(&mut out, s);
    out
}

/// A terminator as one line of readable text (for error messages).
pub fn terminator_to_string(t: &Terminator) -> String {
    let mut out = String::new();
    terminator(&mut out, t);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_lines_name_the_statements_printed_there() {
        let src = "# a comment\nentry start(n = 3)\n\nstart:\n    # before i\n    i = 0\n    goto loop\nloop:\n    i = i + 1\n    if i goto done else goto loop\ndone:\n    print_and_stop(i)\n\nfunction f(x):\n    top:\n        y = x * 2\n        return y\n";
        let (program, comments) = crate::syntax::parse_with_comments("t.fg", src).unwrap();
        let mut lines = Vec::new();
        let text = print_mapped(&program, &comments, Some(&mut lines));
        assert_eq!(text, print_with_comments(&program, &comments));
        let at = |l: &StmtLine| text.lines().nth(l.line as usize - 1).unwrap().trim().to_owned();
        let shown: Vec<String> = lines
            .iter()
            .map(|l| format!("{}:{}:{} {}", l.function.map_or("main", |f| f.as_str()), l.block, l.statement, at(l)))
            .collect();
        expect_test::expect![[r#"
            main:start:0 start:
            main:start:1 i = 0
            main:start:2 goto loop
            main:loop:0 loop:
            main:loop:1 i = i + 1
            main:loop:2 if i goto done else goto loop
            main:done:0 done:
            main:done:1 print_and_stop(i)
            f:top:0 top:
            f:top:1 y = x * 2
            f:top:2 return y"#]]
        .assert_eq(&shown.join("\n"));
    }
}

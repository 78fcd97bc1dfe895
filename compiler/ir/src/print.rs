//! The IR text format: printing. [`crate::parse`] reads it back exactly.
//!
//! ```text
//! pure fib
//! immutable point(x, y)
//!
//! main power(v0:y, v1:x) {
//! b0 power:
//!     branch v0, b1, b2
//! b1 power_rec:
//!     v2:res = phi [b0: 1, b1: v4]
//!     v5:y = phi [b0: v0, b1: v6]
//!     v4:res = mul v2, v1
//!     v6:y = sub v5, 1
//!     branch v6, b1, b2
//! b2 power_done:
//!     v7:res = phi [b0: 1, b1: v4]
//!     print v7
//! }
//! ```
//!
//! Values print as `v` + arena index (with `:name` of the source variable at
//! definitions), blocks as `b` + index (with the source label), resume
//! records as `r` + index. Numbers are arena indices, so a value keeps its
//! number from pass to pass and dumps diff well. Names and constants use the
//! readable syntax's spelling (`:atom`, quoted names).

use std::fmt::Write as _;

use flowc_lang::ast::Operator;
use flowc_lang::syntax::readable_print::{constant, name};
use flowc_lang::Symbol;

use crate::function::{BlockId, Function, InstId, Module, ValueId};
use crate::inst::{GuardKind, InstKind, Operand, Terminator, Trap};
use crate::resume::{ResumeData, ResumeId, ResumeValue};

pub fn value_ref(v: ValueId) -> String {
    format!("v{}", v.into_raw().into_u32())
}

pub fn block_ref(b: BlockId) -> String {
    format!("b{}", b.into_raw().into_u32())
}

pub fn resume_ref(r: ResumeId) -> String {
    format!("r{}", r.into_raw().into_u32())
}

/// Prints a whole module.
pub fn module(m: &Module) -> String {
    let mut out = String::new();
    for p in &m.pure {
        out.push_str("pure ");
        name(&mut out, *p);
        out.push('\n');
    }
    for (class, fields) in &m.immutable {
        out.push_str("immutable ");
        name(&mut out, *class);
        out.push('(');
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            name(&mut out, *f);
        }
        out.push_str(")\n");
    }
    for (i, f) in m.functions.iter().enumerate() {
        if i > 0 || !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&function(f));
    }
    out
}

/// Prints one function.
pub fn function(f: &Function) -> String {
    let mut out = String::new();
    out.push_str(f.kind.keyword());
    out.push(' ');
    name(&mut out, f.name);
    out.push('(');
    for (i, &p) in f.params.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        def(&mut out, f, p);
    }
    out.push_str(") {\n");
    for &b in &f.layout {
        block(&mut out, f, b);
    }
    let used = f.used_resumes();
    // A reference outside the arena (invalid IR, which the checker prints
    // too) has no record to print.
    for r in used.into_iter().filter(|r| (r.into_raw().into_u32() as usize) < f.resumes.len()) {
        resume(&mut out, r, &f.resumes[r]);
    }
    out.push_str("}\n");
    out
}

/// `v4` or `v4:res`.
fn def(out: &mut String, f: &Function, v: ValueId) {
    out.push_str(&value_ref(v));
    // Tolerate ids outside the arena: the checker prints invalid IR too.
    let var = (v.into_raw().into_u32() < f.values.len() as u32).then(|| f.values[v].name).flatten();
    if let Some(n) = var {
        out.push(':');
        name(out, n);
    }
}

pub fn block_header(out: &mut String, f: &Function, b: BlockId) {
    out.push_str(&block_ref(b));
    if let Some(n) = f.blocks[b].name {
        out.push(' ');
        name(out, n);
    }
    out.push_str(":\n");
}

/// Blocks `bs` of `f` as in a function's text (a loop, for instance).
pub fn blocks(f: &Function, bs: &[BlockId]) -> String {
    let mut out = String::new();
    for &b in bs {
        block(&mut out, f, b);
    }
    out
}

fn block(out: &mut String, f: &Function, b: BlockId) {
    block_header(out, f, b);
    for i in f.block_insts(b) {
        out.push_str("    ");
        inst(out, f, i);
        out.push('\n');
    }
    out.push_str("    ");
    terminator(out, &f.blocks[b].term);
    out.push('\n');
}

pub fn operand(out: &mut String, o: &Operand) {
    match o {
        Operand::Value(v) => out.push_str(&value_ref(*v)),
        Operand::Const(c) => constant(out, c),
    }
}

fn operands(out: &mut String, ops: &[Operand]) {
    for (i, o) in ops.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        operand(out, o);
    }
}

/// One instruction line (without indentation or newline).
pub fn inst(out: &mut String, f: &Function, i: InstId) {
    let data = &f.insts[i];
    if let Some(v) = data.result {
        def(out, f, v);
        out.push_str(" = ");
    }
    match &data.kind {
        InstKind::Phi(inputs) => {
            out.push_str("phi [");
            for (k, (b, o)) in inputs.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write!(out, "{}: ", block_ref(*b)).unwrap();
                operand(out, o);
            }
            out.push(']');
        }
        InstKind::Op { op, form, args } => match op {
            Operator::Known(known) if known.arity() == args.len() => {
                write!(out, "{}{} ", known.name(), form.suffix()).unwrap();
                operands(out, args);
            }
            _ => {
                out.push_str("missing_op ");
                name(out, Symbol::intern(op.name()));
                out.push('(');
                operands(out, args);
                out.push(')');
            }
        },
        InstKind::Iterations(o) => {
            out.push_str("iterations ");
            operand(out, o);
        }
        InstKind::Walk { obj, field, links } => {
            out.push_str("walk ");
            operand(out, obj);
            out.push_str(", ");
            name(out, *field);
            write!(out, ", {links}").unwrap();
        }
        InstKind::CheckBound(o) => {
            out.push_str("check_bound ");
            operand(out, o);
        }
        InstKind::Unbound(var) => {
            out.push_str("unbound ");
            name(out, *var);
        }
        InstKind::New(class) => {
            out.push_str("new ");
            name(out, *class);
        }
        InstKind::Get { obj, field, proven } => {
            out.push_str(if *proven { "get.object " } else { "get " });
            operand(out, obj);
            out.push_str(", ");
            name(out, *field);
        }
        InstKind::Set { obj, field, value, proven } => {
            out.push_str(if *proven { "set.object " } else { "set " });
            operand(out, obj);
            out.push_str(", ");
            name(out, *field);
            out.push_str(", ");
            operand(out, value);
        }
        InstKind::Call { func, args } => {
            out.push_str("call ");
            name(out, *func);
            out.push('(');
            operands(out, args);
            out.push(')');
        }
        InstKind::Guard { kind, resume, label } => {
            match kind {
                GuardKind::True(o) => {
                    out.push_str("guard_true ");
                    operand(out, o);
                }
                GuardKind::False(o) => {
                    out.push_str("guard_false ");
                    operand(out, o);
                }
                GuardKind::Value(o, c) => {
                    out.push_str("guard_value ");
                    operand(out, o);
                    out.push_str(", ");
                    constant(out, c);
                }
                GuardKind::Class(o, class) | GuardKind::NotClass(o, class) | GuardKind::Link(o, class) => {
                    let kw = match kind {
                        GuardKind::Class(..) => "guard_class ",
                        GuardKind::Link(..) => "guard_link ",
                        _ => "guard_not_class ",
                    };
                    out.push_str(kw);
                    operand(out, o);
                    out.push_str(", ");
                    name(out, *class);
                }
                GuardKind::Int(o, lo, hi) => {
                    out.push_str("guard_int ");
                    operand(out, o);
                    write!(out, ", {lo}, {hi}").unwrap();
                }
                GuardKind::At(link, base, delta) => {
                    out.push_str("guard_at ");
                    operand(out, link);
                    out.push_str(", ");
                    operand(out, base);
                    write!(out, ", {delta}").unwrap();
                }
                GuardKind::Row(o, span) => {
                    out.push_str("guard_row ");
                    operand(out, o);
                    write!(out, ", {}, {}, ", span.lo, span.hi).unwrap();
                    for s in [span.class, span.next, span.prev] {
                        name(out, s);
                        out.push_str(", ");
                    }
                    write!(out, "{}, row {}", span.stride, span.row).unwrap();
                }
                GuardKind::Cold(o) => {
                    out.push_str("guard_cold ");
                    operand(out, o);
                }
            }
            write!(out, ", {} else ", resume_ref(*resume)).unwrap();
            name(out, *label);
        }
    }
}

pub fn terminator(out: &mut String, t: &Terminator) {
    match t {
        Terminator::Jump(b) => write!(out, "jump {}", block_ref(*b)).unwrap(),
        Terminator::Branch { cond, then_block, else_block } => {
            out.push_str("branch ");
            operand(out, cond);
            write!(out, ", {}, {}", block_ref(*then_block), block_ref(*else_block)).unwrap();
        }
        Terminator::IfClass { obj, class, then_block, else_block } => {
            out.push_str("if_class ");
            operand(out, obj);
            out.push_str(", ");
            name(out, *class);
            write!(out, ", {}, {}", block_ref(*then_block), block_ref(*else_block)).unwrap();
        }
        Terminator::Print(o) => {
            out.push_str("print ");
            operand(out, o);
        }
        Terminator::Return(o) => {
            out.push_str("return ");
            operand(out, o);
        }
        Terminator::Trap(trap) => {
            out.push_str("trap ");
            match trap {
                Trap::Error(r) => {
                    out.push_str("error(");
                    name(out, *r);
                    out.push(')');
                }
                Trap::UnknownLabel(l) => {
                    out.push_str("unknown_label(");
                    name(out, *l);
                    out.push(')');
                }
                Trap::UnknownFunction(func) => {
                    out.push_str("unknown_function(");
                    name(out, *func);
                    out.push(')');
                }
                Trap::ArgumentCount { func, expected, got } => {
                    out.push_str("argument_count(");
                    name(out, *func);
                    write!(out, ", {expected}, {got})").unwrap();
                }
                Trap::ReturnOutsideFunction => out.push_str("return_outside_function"),
                Trap::Unreachable => out.push_str("unreachable"),
            }
        }
        Terminator::Exit { resume, label } => {
            write!(out, "exit {} to ", resume_ref(*resume)).unwrap();
            name(out, *label);
        }
        Terminator::JumpTrace { target, args } => {
            out.push_str("jump_trace ");
            name(out, *target);
            out.push('(');
            operands(out, args);
            out.push(')');
        }
    }
}

fn resume_value(out: &mut String, v: &ResumeValue) {
    match v {
        ResumeValue::Operand(o) => operand(out, o),
        ResumeValue::Virtual(i) => write!(out, "@{i}").unwrap(),
    }
}

fn bindings(out: &mut String, env: &[(Symbol, ResumeValue)]) {
    out.push('[');
    for (i, (k, v)) in env.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        name(out, *k);
        out.push_str(" = ");
        resume_value(out, v);
    }
    out.push(']');
}

fn resume(out: &mut String, r: ResumeId, data: &ResumeData) {
    writeln!(out, "resume {} {{", resume_ref(r)).unwrap();
    for frame in &data.frames {
        out.push_str("    frame ");
        if let Some(func) = frame.function {
            name(out, func);
            out.push(' ');
        }
        bindings(out, &frame.env);
        if let Some((dst, next)) = frame.call {
            out.push_str(" call ");
            name(out, dst);
            out.push_str(" then ");
            name(out, next);
        }
        out.push('\n');
    }
    for (i, v) in data.virtuals.iter().enumerate() {
        write!(out, "    virtual @{i} ").unwrap();
        name(out, v.class);
        out.push(' ');
        bindings(out, &v.fields);
        out.push('\n');
    }
    out.push_str("}\n");
}

/// One instruction as a string (for diagnostics).
pub fn inst_to_string(f: &Function, i: InstId) -> String {
    let mut s = String::new();
    inst(&mut s, f, i);
    s
}

/// A terminator as a string (for diagnostics).
pub fn terminator_to_string(t: &Terminator) -> String {
    let mut s = String::new();
    terminator(&mut s, t);
    s
}

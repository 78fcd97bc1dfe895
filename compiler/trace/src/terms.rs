//! An SSA trace (IR of kind `trace`) in the series' term syntax, so
//! `flowc trace --optimizer ssa --format prolog` prints the optimized trace
//! like the others: `phi(V, Start, Next)` for each loop-carried value
//! first, then one term per instruction, then `loop`. Values are named
//! after their source variable and number (`res_4`); resume data lists
//! `Var/Operand` pairs (`x/5`, `i/var(i_7)`, `p/virtual(point,[...])`),
//! one list per frame when the trace crossed calls.

use flowc_ir::{Function, GuardKind, InstKind, Operand, ResumeData, ResumeValue, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::syntax::term::{Style, Term};
use flowc_lang::Symbol;
use flowc_lang::Value;

fn name(f: &Function, v: ValueId) -> Term {
    let n = v.into_raw().into_u32();
    match f.values[v].name {
        Some(s) => Term::atom(&format!("{s}_{n}")),
        None => Term::atom(&format!("v{n}")),
    }
}

fn operand(f: &Function, o: &Operand) -> Term {
    match o {
        Operand::Value(v) => Term::compound("var", vec![name(f, *v)]),
        Operand::Const(c) => Term::compound("const", vec![Term::value(c)]),
    }
}

fn resume_value(f: &Function, r: &ResumeData, v: &ResumeValue) -> Term {
    match v {
        ResumeValue::Operand(Operand::Const(c)) => Term::value(c),
        ResumeValue::Operand(o) => operand(f, o),
        ResumeValue::Virtual(i) => {
            let virt = &r.virtuals[*i as usize];
            let fields = virt.fields.iter().map(|(k, x)| pair(*k, resume_value(f, r, x))).collect();
            Term::compound("virtual", vec![Term::sym(virt.class), Term::list(fields)])
        }
    }
}

fn pair(k: Symbol, v: Term) -> Term {
    Term::compound("/", vec![Term::sym(k), v])
}

fn resume(f: &Function, r: &ResumeData) -> Term {
    let env = |k: usize| Term::list(r.frames[k].env.iter().map(|(n, v)| pair(*n, resume_value(f, r, v))).collect());
    if r.frames.len() == 1 {
        return env(0);
    }
    Term::list(
        (0..r.frames.len())
            .map(|k| {
                let fr = &r.frames[k];
                let func = fr.function.map_or(Term::atom("main"), Term::sym);
                let mut args = vec![func, env(k)];
                if let Some((dst, next)) = fr.call {
                    args.push(Term::compound("call", vec![Term::sym(dst), Term::sym(next)]));
                }
                Term::compound("frame", args)
            })
            .collect(),
    )
}

/// One term per phi and instruction of the loop, then `loop`.
pub fn terms(f: &Function) -> Vec<Term> {
    let mut out = Vec::new();
    for (_, i) in f.all_insts() {
        let data = &f.insts[i];
        let dst = data.result.map(|v| name(f, v));
        let t = match &data.kind {
            InstKind::Unbound(_) => continue,
            InstKind::Phi(inputs) => {
                let mut args = vec![dst.unwrap()];
                args.extend(inputs.iter().map(|(_, o)| operand(f, o)));
                Term::compound("phi", args)
            }
            InstKind::Op { op, form, args } => {
                let opname = match op {
                    Operator::Known(k) => format!("{}{}", k.name(), form.suffix()),
                    Operator::Unknown(s) => s.to_string(),
                };
                let mut a = vec![dst.unwrap(), Term::atom(&opname)];
                a.extend(args.iter().map(|o| operand(f, o)));
                Term::compound(if args.len() == 1 { "op1" } else { "op2" }, a)
            }
            InstKind::CheckBound(o) => Term::compound("check_bound", vec![dst.unwrap(), operand(f, o)]),
            InstKind::Iterations(o) => Term::compound("iterations", vec![operand(f, o)]),
            InstKind::Walk { obj, field, links } => Term::compound(
                "walk",
                vec![
                    dst.unwrap(),
                    operand(f, obj),
                    Term::sym(*field),
                    Term::value(&flowc_lang::Value::Int(i64::from(*links))),
                ],
            ),
            InstKind::New(c) => Term::compound("new", vec![dst.unwrap(), Term::sym(*c)]),
            InstKind::Get { obj, field, .. } => {
                Term::compound("get", vec![dst.unwrap(), operand(f, obj), Term::sym(*field)])
            }
            InstKind::Set { obj, field, value, .. } => {
                Term::compound("set", vec![operand(f, obj), Term::sym(*field), operand(f, value)])
            }
            InstKind::Call { func, args } => {
                let a = Term::list(args.iter().map(|o| operand(f, o)).collect());
                Term::compound("call", vec![dst.unwrap(), Term::sym(*func), a])
            }
            InstKind::Guard { kind, resume: r, label } => {
                let (g, mut a) = match kind {
                    GuardKind::True(o) => ("guard_true", vec![operand(f, o)]),
                    GuardKind::False(o) => ("guard_false", vec![operand(f, o)]),
                    GuardKind::Value(o, c) => ("guard_value", vec![operand(f, o), Term::value(c)]),
                    GuardKind::Class(o, c) => ("guard_class", vec![operand(f, o), Term::sym(*c)]),
                    GuardKind::NotClass(o, c) => ("guard_not_class", vec![operand(f, o), Term::sym(*c)]),
                    GuardKind::Link(o, c) => ("guard_link", vec![operand(f, o), Term::sym(*c)]),
                    GuardKind::Int(o, lo, hi) => {
                        ("guard_int", vec![operand(f, o), Term::value(&Value::Int(*lo)), Term::value(&Value::Int(*hi))])
                    }
                    GuardKind::Cold(o) => ("guard_cold", vec![operand(f, o)]),
                    GuardKind::Row(o, span) => (
                        "guard_row",
                        vec![
                            operand(f, o),
                            Term::value(&Value::Int(span.lo)),
                            Term::value(&Value::Int(span.hi)),
                            Term::sym(span.class),
                            Term::sym(span.next),
                            Term::sym(span.prev),
                            Term::value(&Value::Int(span.stride)),
                        ],
                    ),
                    GuardKind::At(o, base, delta) => (
                        "guard_at",
                        vec![dst.clone().unwrap(), operand(f, o), operand(f, base), Term::value(&Value::Int(*delta))],
                    ),
                };
                a.push(resume(f, &f.resumes[*r]));
                a.push(Term::sym(*label));
                Term::compound(g, a)
            }
        };
        out.push(t);
    }
    out
}

/// Nested, as Parts 2–3 print traces.
pub fn nested(f: &Function) -> String {
    let term = terms(f).into_iter().rev().fold(Term::atom("loop"), |rest, t| {
        let flowc_lang::syntax::term::TermKind::Compound(name, mut args) = t.kind else { return rest };
        args.push(rest);
        Term { kind: flowc_lang::syntax::term::TermKind::Compound(name, args), pos: 0 }
    });
    term.to_string_in(Style::Write)
}

/// One term per line, as Part 4 prints traces.
pub fn lines(f: &Function) -> String {
    let mut out = String::new();
    for t in terms(f) {
        out.push_str("  ");
        t.write(&mut out, Style::Write);
        out.push('\n');
    }
    out.push_str("  loop\n");
    out
}

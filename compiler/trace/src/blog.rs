//! Part 3's trace optimizer, exactly as the series writes it (`optimize/3`):
//! one pass along the trace with a partial environment of variables known
//! to be constants.
//!
//! - An operation whose operands are all known is executed and its result
//!   recorded; otherwise it stays, with known operands as constants, and its
//!   result is forgotten.
//! - A guard on a known variable is dropped. Otherwise it stays and gets the
//!   current partial environment as its resume data; after `guard_false`
//!   the variable is known to be 0, after `guard_value` to be the value.
//! - At `loop`, one `op1(Var, same, const(Val))` per known variable
//!   restores what the removed assignments would have written.
//!
//! Beyond the series: object operations and class guards are kept as they
//! are (objects are never constants); an operation that fails on known
//! operands is kept, so it fails when the trace runs.

use flowc_lang::ast::{Arg, Operator};
use flowc_lang::ops::Op;
use flowc_lang::{env, Env, Value};

use crate::trace::{Check, Trace, TraceOp};

fn presolve(a: &Arg, penv: &Env) -> Arg {
    match a {
        Arg::Var(v) => penv.get(v).map_or(a.clone(), |c| Arg::Const(c.clone())),
        Arg::Const(_) => a.clone(),
    }
}

fn fold(op: Operator, args: &[&Arg]) -> Option<Value> {
    let Operator::Known(op) = op else { return None };
    if op.arity() != args.len() {
        return None;
    }
    let vals: Vec<Value> = args
        .iter()
        .map(|a| match a {
            Arg::Const(c) => Some(c.clone()),
            Arg::Var(_) => None,
        })
        .collect::<Option<_>>()?;
    op.eval(&vals).ok()
}

fn pairs(penv: &Env) -> Vec<(flowc_lang::Symbol, Value)> {
    penv.iter().map(|(k, v)| (*k, v.clone())).collect()
}

/// Optimizes `trace` with Part 3's algorithm.
pub fn optimize(trace: &Trace) -> Trace {
    let mut penv = Env::default();
    let mut out = Vec::new();
    for op in &trace.ops {
        match op {
            TraceOp::Op1 { dst, op, arg } => {
                let a = presolve(arg, &penv);
                match fold(*op, &[&a]) {
                    Some(v) => env::write(&mut penv, *dst, v),
                    None => {
                        env::remove(&mut penv, *dst);
                        out.push(TraceOp::Op1 { dst: *dst, op: *op, arg: a });
                    }
                }
            }
            TraceOp::Op2 { dst, op, lhs, rhs } => {
                let (a, b) = (presolve(lhs, &penv), presolve(rhs, &penv));
                match fold(*op, &[&a, &b]) {
                    Some(v) => env::write(&mut penv, *dst, v),
                    None => {
                        env::remove(&mut penv, *dst);
                        out.push(TraceOp::Op2 { dst: *dst, op: *op, lhs: a, rhs: b });
                    }
                }
            }
            TraceOp::New { dst, class } => {
                env::remove(&mut penv, *dst);
                out.push(TraceOp::New { dst: *dst, class: *class });
            }
            TraceOp::Get { dst, obj, field } => {
                let obj = presolve(obj, &penv);
                env::remove(&mut penv, *dst);
                out.push(TraceOp::Get { dst: *dst, obj, field: *field });
            }
            TraceOp::Set { obj, field, value } => {
                out.push(TraceOp::Set { obj: presolve(obj, &penv), field: *field, value: presolve(value, &penv) });
            }
            TraceOp::Enter { .. } | TraceOp::Leave { .. } | TraceOp::Call { .. } | TraceOp::Iterations(_) => {
                out.push(op.clone())
            }
            TraceOp::Guard { check, label, .. } => {
                let resume = pairs(&penv);
                match check {
                    Check::True(v) | Check::False(v) | Check::Value(v, _) if penv.contains_key(v) => {}
                    Check::True(_) => out.push(TraceOp::Guard { check: check.clone(), resume, label: *label }),
                    Check::False(v) => {
                        out.push(TraceOp::Guard { check: check.clone(), resume, label: *label });
                        env::write(&mut penv, *v, Value::Int(0));
                    }
                    Check::Value(v, c) => {
                        out.push(TraceOp::Guard { check: check.clone(), resume, label: *label });
                        env::write(&mut penv, *v, c.clone());
                    }
                    Check::Class(..) | Check::Cold(_) => {
                        out.push(TraceOp::Guard { check: check.clone(), resume, label: *label })
                    }
                }
            }
        }
    }
    // generate_assignments: the known variables, in order, before `loop`.
    for (k, v) in &penv {
        out.push(TraceOp::Op1 { dst: *k, op: Operator::Known(Op::Same), arg: Arg::Const(v.clone()) });
    }
    Trace { ops: out, ..Trace::empty(trace.anchor) }
}

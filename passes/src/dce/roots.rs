//! Which instructions dce must keep whether or not their results are used:
//! effects and possible failures, with the two exceptions (pure calls, dead
//! allocations) described in the module docs of `dce`.

use std::collections::HashMap;

use bitvec::vec::BitVec;
use flowc_ir::{Function, FunctionKind, InstId, InstKind, Module, Operand};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Failure, Form, Op};
use flowc_lang::{Symbol, Value};

use crate::defuse::{BoundQuery, DefUse, Use};
use crate::edit::ix;

/// Parameter counts of the module's `pure` functions (the first function
/// of each name, as `Module::function` finds it).
pub(super) fn pure_arities(m: &Module) -> HashMap<Symbol, usize> {
    let mut out = HashMap::new();
    for f in &m.functions {
        if f.kind == FunctionKind::Function && m.is_pure(f.name) {
            out.entry(f.name).or_insert(f.params.len());
        }
    }
    out
}

pub(super) struct Roots<'a> {
    pub module: &'a Module,
    pub pure_arity: &'a HashMap<Symbol, usize>,
    pub f: &'a Function,
    pub du: &'a DefUse,
    pub bound: BoundQuery,
    /// Whether the program can see allocation numbers (then `new` stays).
    pub allocations_observable: bool,
}

impl Roots<'_> {
    fn is_bound(&mut self, o: &Operand) -> bool {
        match o {
            Operand::Const(_) => true,
            Operand::Value(v) => self.bound.is_bound(self.f, *v),
        }
    }

    /// Whether instruction `i` is live whatever uses its result.
    pub fn is_root(&mut self, i: InstId, dead_allocations: &BitVec) -> bool {
        match &self.f.insts[i].kind {
            InstKind::New(_) => self.allocations_observable,
            InstKind::Phi(_) | InstKind::Unbound(_) => false,
            InstKind::Set { obj: Operand::Value(a), .. } if dead_allocations.get(ix(*a)).is_some_and(|b| *b) => false,
            InstKind::Set { .. } | InstKind::Guard { .. } | InstKind::Iterations(_) => true,
            InstKind::Call { func, args } => {
                let pure = self.pure_arity.get(func) == Some(&args.len());
                !(pure && args.iter().all(|a| self.is_bound(a)))
            }
            kind => self.may_fail(kind),
        }
    }

    /// Whether an instruction without effects may raise an error.
    pub fn may_fail(&mut self, kind: &InstKind) -> bool {
        match kind {
            InstKind::Phi(_) | InstKind::Unbound(_) | InstKind::New(_) => false,
            InstKind::CheckBound(o) => !self.is_bound(o),
            InstKind::Op { op: Operator::Known(op), form, args } => op_may_fail(*op, *form, args, |o| self.is_bound(o)),
            _ => kind.can_fail(),
        }
    }

    /// Bit `ix(v)` is set for each `new` result `v` whose every use is as
    /// the object of a `set` that may then be removed with it.
    pub fn dead_allocations(&mut self) -> BitVec {
        let f = self.f;
        let mut dead: BitVec = BitVec::repeat(false, f.values.len());
        if self.allocations_observable {
            return dead;
        }
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                let (InstKind::New(class), Some(v)) = (&f.insts[i].kind, f.insts[i].result) else { continue };
                let only_stored_into = self.du.uses_of(v).iter().all(|u| match *u {
                    Use::Inst { inst, index: 0, .. } => match &f.insts[inst].kind {
                        InstKind::Set { field, value, .. } => {
                            !self.module.is_immutable(*class, *field) && self.is_bound(value)
                        }
                        _ => false,
                    },
                    _ => false,
                });
                if only_stored_into {
                    dead.set(ix(v), true);
                }
            }
        }
        dead
    }
}

/// Whether `op` in `form` may fail on `args`, knowing which are bound.
fn op_may_fail(op: Op, form: Form, args: &[Operand], is_bound: impl FnMut(&Operand) -> bool) -> bool {
    let failures = op.info().failures;
    match form {
        Form::Word => false,
        // Operand kinds are proven (so operands are bound): only the
        // failures that do not depend on kinds remain.
        Form::Int => failures.iter().any(|fail| match fail {
            Failure::Type => false,
            Failure::DivByZero => !matches!(args.get(1).and_then(Operand::as_const), Some(Value::Int(d)) if *d != 0),
            Failure::Index => true,
        }),
        Form::Generic => !failures.is_empty() || !args.iter().all(is_bound),
    }
}

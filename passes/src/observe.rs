//! Object identity is observable: an object prints as `<Class#N>` where N
//! counts every allocation of the run (LANGUAGE.md §5). Removing any
//! allocation renumbers the objects allocated after it, so unboxing is only
//! exact when no object can ever be printed. This module answers that for a
//! whole module, conservatively.
//!
//! A value may be an object if it is a `new`, a `get` of a field some
//! `set` of the module may store an object into (fields are told apart by
//! name only), the result of a call of a function that may return an
//! object, a parameter of a function or trace (arguments may be objects;
//! the main graph's parameters come from the environment, which holds only
//! constants), a copy (`same`, `check_bound`) or phi of such a value.
//! Constants, other operations and unbound values never are.

use flowc_ir::{Function, FunctionKind, InstKind, Module, Operand, Terminator, ValueDef};
use flowc_lang::ast::Operator;
use flowc_lang::ops::Op;
use flowc_lang::Symbol;

use crate::edit::ix;

/// Whether some `print` of the module may print an object.
pub fn allocations_observable(m: &Module) -> bool {
    let mut returns = vec![false; m.functions.len()];
    let mut fields: Vec<Symbol> = Vec::new();
    let objects = loop {
        let objects: Vec<Vec<bool>> = m.functions.iter().map(|f| may_be_object(m, f, &returns, &fields)).collect();
        let mut changed = false;
        for (i, f) in m.functions.iter().enumerate() {
            let r = terminators(f).any(|t| matches!(t, Terminator::Return(o) if is_object(&objects[i], o)));
            if r && !returns[i] {
                returns[i] = true;
                changed = true;
            }
            for (_, inst) in f.all_insts() {
                if let InstKind::Set { field, value, .. } = &f.insts[inst].kind {
                    if is_object(&objects[i], value) && !fields.contains(field) {
                        fields.push(*field);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break objects;
        }
    };
    m.functions
        .iter()
        .enumerate()
        .any(|(i, f)| terminators(f).any(|t| matches!(t, Terminator::Print(o) if is_object(&objects[i], o))))
}

fn terminators(f: &Function) -> impl Iterator<Item = &Terminator> {
    f.layout.iter().filter(|b| ix(**b) < f.blocks.len()).map(|&b| &f.blocks[b].term)
}

fn is_object(objects: &[bool], o: &Operand) -> bool {
    match o {
        Operand::Const(_) => false,
        Operand::Value(v) => objects.get(ix(*v)).copied().unwrap_or(true),
    }
}

/// Per value of `f`: whether it may be an object, given which functions
/// (by module index) may return one and which fields may hold one. A
/// fixpoint over the phis.
fn may_be_object(m: &Module, f: &Function, returns: &[bool], fields: &[Symbol]) -> Vec<bool> {
    let mut obj = vec![false; f.values.len()];
    if f.kind != FunctionKind::Main {
        for &p in &f.params {
            if ix(p) < obj.len() {
                obj[ix(p)] = true;
            }
        }
    }
    let returns_object = |func: Symbol| {
        m.functions.iter().enumerate().any(|(i, g)| g.kind == FunctionKind::Function && g.name == func && returns[i])
    };
    loop {
        let mut changed = false;
        for (_, i) in f.all_insts() {
            let Some(r) = f.insts[i].result else { continue };
            if obj[ix(r)] {
                continue;
            }
            let is = match &f.insts[i].kind {
                InstKind::New(_) => true,
                InstKind::Get { field, .. } => fields.contains(field),
                InstKind::Call { func, .. } => returns_object(*func),
                InstKind::Op { op: Operator::Known(Op::Same), args, .. } => args.iter().any(|a| is_object(&obj, a)),
                InstKind::CheckBound(a) => is_object(&obj, a),
                InstKind::Phi(inputs) => inputs.iter().any(|(_, a)| is_object(&obj, a)),
                InstKind::Op { .. } | InstKind::Unbound(_) | InstKind::Set { .. } | InstKind::Guard { .. } => false,
            };
            if is {
                obj[ix(r)] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Values defined by nothing (detached) are treated as possibly objects.
    for (v, data) in f.values.iter() {
        if data.def == ValueDef::Detached {
            obj[ix(v)] = true;
        }
    }
    obj
}

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
/// (by module index) may return one and which fields may hold one.
/// Objects flow from their sources (`new`, such `get`s and calls,
/// parameters) through copies and phis: a worklist over the copies' and
/// phis' uses, so each value is visited once.
fn may_be_object(m: &Module, f: &Function, returns: &[bool], fields: &[Symbol]) -> Vec<bool> {
    let n = f.values.len();
    let mut obj = vec![false; n];
    let mut work: Vec<usize> = Vec::new();
    let mark = |v: usize, obj: &mut Vec<bool>, work: &mut Vec<usize>| {
        if v < n && !obj[v] {
            obj[v] = true;
            work.push(v);
        }
    };
    if f.kind != FunctionKind::Main {
        for &p in &f.params {
            mark(ix(p), &mut obj, &mut work);
        }
    }
    // Values defined by nothing (detached) are treated as possibly objects.
    for (v, data) in f.values.iter() {
        if data.def == ValueDef::Detached {
            mark(ix(v), &mut obj, &mut work);
        }
    }
    let returns_object = |func: Symbol| {
        m.functions.iter().enumerate().any(|(i, g)| g.kind == FunctionKind::Function && g.name == func && returns[i])
    };
    // Copies and phis, by the values they read.
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (_, i) in f.all_insts() {
        let Some(r) = f.insts[i].result else { continue };
        let r = ix(r);
        match &f.insts[i].kind {
            InstKind::New(_) => mark(r, &mut obj, &mut work),
            InstKind::Get { field, .. } if fields.contains(field) => mark(r, &mut obj, &mut work),
            InstKind::Call { func, .. } if returns_object(*func) => mark(r, &mut obj, &mut work),
            InstKind::Op { op: Operator::Known(Op::Same), args, .. } => {
                args.iter().filter_map(Operand::as_value).for_each(|a| push_reader(&mut readers, ix(a), r))
            }
            InstKind::CheckBound(a) => {
                if let Some(a) = a.as_value() {
                    push_reader(&mut readers, ix(a), r);
                }
            }
            InstKind::Phi(inputs) => {
                inputs.iter().filter_map(|(_, a)| a.as_value()).for_each(|a| push_reader(&mut readers, ix(a), r))
            }
            _ => {}
        }
    }
    while let Some(v) = work.pop() {
        for r in std::mem::take(&mut readers[v]) {
            mark(r, &mut obj, &mut work);
        }
    }
    obj
}

fn push_reader(readers: &mut [Vec<usize>], read: usize, reader: usize) {
    if let Some(list) = readers.get_mut(read) {
        list.push(reader);
    }
}

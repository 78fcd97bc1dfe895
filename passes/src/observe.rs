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

use std::collections::HashMap;

use flowc_ir::{Function, FunctionKind, InstKind, Module, Operand, Terminator, ValueDef};
use flowc_lang::ast::Operator;
use flowc_lang::ops::Op;
use flowc_lang::Symbol;

use crate::edit::ix;

/// Whether some `print` of the module may print an object.
///
/// One worklist over the whole module, so each value, field and function
/// is marked at most once: values are numbered module-wide; a marked value
/// marks the copies and phis reading it, the fields a `set` stores it in
/// (and so every `get` of such a field) and, when returned, its function
/// (and so every call of it).
pub fn allocations_observable(m: &Module) -> bool {
    let base: Vec<usize> = m
        .functions
        .iter()
        .scan(0, |next, f| {
            let b = *next;
            *next += f.values.len();
            Some(b)
        })
        .collect();
    // One more: `unknown`, standing for values that do not exist (may be
    // anything).
    let unknown = base.last().map_or(0, |b| b + m.functions.last().map_or(0, |f| f.values.len()));
    let n = unknown + 1;
    let callable: HashMap<Symbol, usize> = m
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.kind == FunctionKind::Function)
        .map(|(i, f)| (f.name, i))
        .collect();
    let mut fields: HashMap<Symbol, u32> = HashMap::new();
    let mut field_of = |s: Symbol| {
        let k = fields.len() as u32;
        *fields.entry(s).or_insert(k)
    };
    let mut sources: Vec<usize> = vec![unknown];
    let mut copies: Vec<(u32, u32)> = Vec::new(); // value read -> copy or phi
    let mut stores: Vec<(u32, u32)> = Vec::new(); // value stored -> field
    let mut returned: Vec<(u32, u32)> = Vec::new(); // value returned -> function
    let mut gets: Vec<(u32, u32)> = Vec::new(); // field -> get result
    let mut calls: Vec<(u32, u32)> = Vec::new(); // callee -> call result
    let mut printed: Vec<usize> = Vec::new();
    for (fi, f) in m.functions.iter().enumerate() {
        let g = |v: flowc_ir::ValueId| if ix(v) < f.values.len() { base[fi] + ix(v) } else { unknown };
        if f.kind != FunctionKind::Main {
            sources.extend(f.params.iter().map(|&p| g(p)));
        }
        // Values defined by nothing (detached) are treated as possibly objects.
        sources.extend(f.values.iter().filter(|(_, d)| d.def == ValueDef::Detached).map(|(v, _)| g(v)));
        for (_, i) in f.all_insts() {
            let kind = &f.insts[i].kind;
            if let InstKind::Set { field, value: Operand::Value(v), .. } = kind {
                stores.push((g(*v) as u32, field_of(*field)));
            }
            let Some(r) = f.insts[i].result.map(g) else { continue };
            let mut read = |a: &Operand| {
                if let Some(a) = a.as_value().map(g) {
                    copies.push((a as u32, r as u32));
                }
            };
            match kind {
                InstKind::New(_) => sources.push(r),
                InstKind::Get { field, .. } => gets.push((field_of(*field), r as u32)),
                InstKind::Call { func, .. } => {
                    if let Some(&callee) = callable.get(func) {
                        calls.push((callee as u32, r as u32));
                    }
                }
                InstKind::Op { op: Operator::Known(Op::Same), args, .. } => args.iter().for_each(&mut read),
                InstKind::CheckBound(a) => read(a),
                InstKind::Phi(inputs) => inputs.iter().for_each(|(_, a)| read(a)),
                _ => {}
            }
        }
        for t in terminators(f) {
            match t {
                Terminator::Return(Operand::Value(v)) => returned.push((g(*v) as u32, fi as u32)),
                Terminator::Print(Operand::Value(v)) => printed.push(g(*v)),
                _ => {}
            }
        }
    }
    let copies = Csr::new(n, &copies);
    let stores = Csr::new(n, &stores);
    let returned = Csr::new(n, &returned);
    let gets = Csr::new(fields.len(), &gets);
    let calls = Csr::new(m.functions.len(), &calls);
    let mut object = vec![false; n];
    let mut field_holds = vec![false; fields.len()];
    let mut returns = vec![false; m.functions.len()];
    let mut work: Vec<usize> = Vec::new();
    let mark = |v: usize, object: &mut Vec<bool>, work: &mut Vec<usize>| {
        if !object[v] {
            object[v] = true;
            work.push(v);
        }
    };
    for v in sources {
        mark(v, &mut object, &mut work);
    }
    while let Some(v) = work.pop() {
        for &r in copies.of(v) {
            mark(r as usize, &mut object, &mut work);
        }
        for &fld in stores.of(v) {
            if !std::mem::replace(&mut field_holds[fld as usize], true) {
                for &r in gets.of(fld as usize) {
                    mark(r as usize, &mut object, &mut work);
                }
            }
        }
        for &func in returned.of(v) {
            if !std::mem::replace(&mut returns[func as usize], true) {
                for &r in calls.of(func as usize) {
                    mark(r as usize, &mut object, &mut work);
                }
            }
        }
    }
    printed.iter().any(|&v| object[v])
}

/// Adjacency lists of `pairs` (`from -> to`), grouped by `from` with a
/// counting sort: two flat arrays.
struct Csr {
    start: Vec<u32>,
    to: Vec<u32>,
}

impl Csr {
    fn new(n: usize, pairs: &[(u32, u32)]) -> Csr {
        let mut start = vec![0u32; n + 1];
        for &(a, _) in pairs {
            start[a as usize + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut fill = start.clone();
        let mut to = vec![0u32; pairs.len()];
        for &(a, b) in pairs {
            to[fill[a as usize] as usize] = b;
            fill[a as usize] += 1;
        }
        Csr { start, to }
    }

    fn of(&self, a: usize) -> &[u32] {
        &self.to[self.start[a] as usize..self.start[a + 1] as usize]
    }
}

fn terminators(f: &Function) -> impl Iterator<Item = &Terminator> {
    f.layout.iter().filter(|b| ix(**b) < f.blocks.len()).map(|&b| &f.blocks[b].term)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observable(src: &str) -> bool {
        let program = flowc_lang::syntax::parse("test", src).unwrap_or_else(|e| panic!("{e}"));
        let entry = program.default_entry().expect("an entry");
        allocations_observable(&flowc_frontend::lower(&program, entry).expect("lowers"))
    }

    #[test]
    fn printing_integers_observes_nothing() {
        assert!(!observable("main:\n    p = new point\n    p.x = 3\n    x = p.x\n    print_and_stop(x)\n"));
    }

    #[test]
    fn objects_printed_directly_or_through_phis() {
        assert!(observable("main:\n    p = new point\n    print_and_stop(p)\n"));
        assert!(observable(
            "main:\n    p = new point\n    if n goto a else goto b\na:\n    q = p\n    goto c\nb:\n    q = 0\n    \
             goto c\nc:\n    print_and_stop(q)\n"
        ));
    }

    #[test]
    fn objects_flow_through_fields_and_returns() {
        let through_field = "main:\n    box = new box\n    p = new point\n    box.item = p\n    r = call get(box) then \
                             show\nshow:\n    print_and_stop(r)\n\nfunction get(b):\n    s:\n        x = b.item\n        \
                             return x\n";
        assert!(observable(through_field));
        let other_field = through_field.replace("x = b.item", "x = b.other");
        assert!(!observable(&other_field));
        let through_return = "main:\n    r = call make() then show\nshow:\n    print_and_stop(r)\n\nfunction \
                              make():\n    s:\n        p = new point\n        return p\n";
        assert!(observable(through_return));
        let integer_return = through_return.replace("return p", "return 1");
        assert!(!observable(&integer_return));
    }
}

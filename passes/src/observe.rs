//! Object identity is observable: an object prints as `<Class#N>` where N
//! counts every allocation of the run (docs/language.md §5). Removing any
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
//! Constants, other operations and unbound values never are. Values that
//! do not exist, or whose definition was removed (detached), may be
//! anything.

use std::collections::{HashMap, HashSet};

use flowc_ir::{Function, FunctionKind, InstKind, Module, Operand, Terminator, ValueDef, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::Op;
use flowc_lang::Symbol;

use crate::edit::ix;

/// Whether some `print` of the module may print an object.
///
/// A search backwards from the printed values, through what each value may
/// come from: a copy or phi from its operands, a `get` from every value a
/// `set` of the module stores into a field of that name, a call's result
/// from the values its callee returns. It stops at the first source of an
/// object it meets. Each (function, value) is visited at most once, and
/// the stores of the module are only indexed if a `get` is met, so the
/// cost is that of the printed values' history — usually a few arithmetic
/// results — rather than of the module.
pub fn allocations_observable(m: &Module) -> bool {
    let mut search = Search::new(m);
    m.functions.iter().enumerate().any(|(fi, f)| {
        terminators(f).any(|t| matches!(t, Terminator::Print(Operand::Value(v)) if search.may_be_object(fi, *v)))
    })
}

/// The backward search of [`allocations_observable`].
struct Search<'m> {
    m: &'m Module,
    /// Callable functions by name (index into `m.functions`).
    callable: HashMap<Symbol, usize>,
    /// Values (function, raw index) already queued.
    seen: HashSet<(u32, u32)>,
    /// Fields whose stored values, and functions whose returned values,
    /// are already queued.
    fields_done: HashSet<Symbol>,
    returns_done: HashSet<usize>,
    /// Values stored into each field, over the module (built on demand).
    stores: Option<HashMap<Symbol, Vec<(usize, ValueId)>>>,
    work: Vec<(usize, ValueId)>,
}

impl<'m> Search<'m> {
    fn new(m: &'m Module) -> Search<'m> {
        let callable = m
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.kind == FunctionKind::Function)
            .map(|(i, f)| (f.name, i))
            .collect();
        Search {
            m,
            callable,
            seen: HashSet::new(),
            fields_done: HashSet::new(),
            returns_done: HashSet::new(),
            stores: None,
            work: Vec::new(),
        }
    }

    /// Whether value `v` of function `fi` may be an object.
    fn may_be_object(&mut self, fi: usize, v: ValueId) -> bool {
        self.push(fi, v);
        while let Some((fi, v)) = self.work.pop() {
            if self.is_source(fi, v) {
                return true;
            }
        }
        false
    }

    fn push(&mut self, fi: usize, v: ValueId) {
        if self.seen.insert((fi as u32, ix(v) as u32)) {
            self.work.push((fi, v));
        }
    }

    fn push_operand(&mut self, fi: usize, o: &Operand) {
        if let Operand::Value(v) = o {
            self.push(fi, *v);
        }
    }

    /// Whether `v` itself is a source of objects; otherwise queues what it
    /// may come from.
    fn is_source(&mut self, fi: usize, v: ValueId) -> bool {
        let m = self.m;
        let f = &m.functions[fi];
        // A value that does not exist may be anything.
        if ix(v) >= f.values.len() {
            return true;
        }
        let i = match f.values[v].def {
            // Arguments may be objects; the main graph's parameters come
            // from the environment, which holds only constants.
            ValueDef::Param(_) => return f.kind != FunctionKind::Main,
            // Defined by nothing: may be anything.
            ValueDef::Detached => return true,
            ValueDef::Inst(i) => i,
        };
        match &f.insts[i].kind {
            InstKind::New(_) => return true,
            InstKind::Op { op: Operator::Known(Op::Same), args, .. } => {
                args.iter().for_each(|a| self.push_operand(fi, a));
            }
            InstKind::CheckBound(a) => self.push_operand(fi, a),
            InstKind::Phi(inputs) => inputs.iter().for_each(|(_, a)| self.push_operand(fi, a)),
            InstKind::Get { field, .. } if self.fields_done.insert(*field) => {
                let stores = self.stores.get_or_insert_with(|| stores_by_field(m));
                let stored = stores.get(field).cloned().unwrap_or_default();
                stored.into_iter().for_each(|(sf, sv)| self.push(sf, sv));
            }
            InstKind::Call { func, .. } => {
                if let Some(&callee) = self.callable.get(func) {
                    if self.returns_done.insert(callee) {
                        for t in terminators(&m.functions[callee]) {
                            if let Terminator::Return(r) = t {
                                self.push_operand(callee, r);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        false
    }
}

/// The values each field name may be given by a linked `set`, module-wide.
fn stores_by_field(m: &Module) -> HashMap<Symbol, Vec<(usize, ValueId)>> {
    let mut stores: HashMap<Symbol, Vec<(usize, ValueId)>> = HashMap::new();
    for (fi, f) in m.functions.iter().enumerate() {
        for (_, i) in f.all_insts() {
            if let InstKind::Set { field, value: Operand::Value(v), .. } = &f.insts[i].kind {
                stores.entry(*field).or_default().push((fi, *v));
            }
        }
    }
    stores
}

fn terminators(f: &Function) -> impl Iterator<Item = &Terminator> {
    f.layout.iter().filter(|b| ix(**b) < f.blocks.len()).map(|&b| &f.blocks[b].term)
}

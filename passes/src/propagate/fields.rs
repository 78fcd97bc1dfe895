//! Facts about object fields, for the whole program: per class and field,
//! what every value the program may store there is — kinds, integer
//! range, list lengths, class, constant ([`Info`]). Factor's propagation
//! infers slot types; V8 tracks field representations; here it is done
//! statically, before any code runs, so a `get` of an interpreter's tape
//! cell (`cell.v`, always `(v + 1) % 256`, `(v - 1) % 256` or 0) is an
//! integer in `[0, 255]` to propagate, cleanup and the trace optimizer,
//! and a neighbour (`cell.r`, a cell or 0) is tested by its truth.
//!
//! Sound because fields are written only by `set`: objects have no
//! literals, so the environment holds none, and no builtin writes one.
//! A fact covers every `set` that may run, in any function, of any
//! engine: traces are recorded from the same program.
//!
//! ## Data
//! [`FieldFacts`] maps `(field, Some(class))` to the join of the values
//! stored into objects known to be of that class, and `(field, None)` to
//! those stored into objects of no known class. A read joins the entries
//! that may hold its object ([`FieldFacts::read`]). A field no `set` may
//! write is bottom: a `get` of it always fails.
//!
//! ## Solving ([`solve`])
//! Optimistic rounds, as propagate itself is optimistic within a
//! function. Every fact starts at bottom. A round analyzes the functions
//! with the facts so far (a `get` reads them) and joins what each
//! executable `set` stores, seen at its block (refined by the branches
//! that lead there), into the entry for its object. A fact that keeps
//! changing is widened like a phi ([`Widening`]), so each changes a
//! bounded number of times. When a round changes no fact, every `set`
//! that may run stores what the facts cover, and that round's analyses,
//! made with them, are propagate's results. Only the functions that read
//! a field whose fact changed are analyzed again; a program without
//! objects takes one round. After [`MAX_ROUNDS`] the facts are given up
//! (every read any value) and the readers analyzed once more.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use flowc_ir::{Function, InstKind, Module, Operand};
use flowc_lang::Symbol;

use super::Propagation;
use crate::lattice::{Info, Kinds, Widening};

/// Rounds after which the facts are given up.
pub const MAX_ROUNDS: usize = 12;

/// What the program may store in each field (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct FieldFacts {
    /// `(field, class)` → the join of the values stored there; class
    /// `None` for objects of no known class.
    stored: BTreeMap<(Symbol, Option<Symbol>), Info>,
    /// No facts: every read is any value.
    unknown: bool,
}

impl Default for FieldFacts {
    fn default() -> FieldFacts {
        FieldFacts::unknown()
    }
}

impl FieldFacts {
    /// Nothing known: every read is any value.
    pub const fn unknown() -> FieldFacts {
        FieldFacts { stored: BTreeMap::new(), unknown: true }
    }

    /// Nothing stored anywhere (the optimistic start).
    fn nothing() -> FieldFacts {
        FieldFacts { stored: BTreeMap::new(), unknown: false }
    }

    pub fn is_unknown(&self) -> bool {
        self.unknown
    }

    /// Whether no field has a fact (no `set` may run).
    pub fn is_empty(&self) -> bool {
        self.stored.is_empty()
    }

    /// What a `get` of `field` reads from an object with info `obj`: the
    /// entries for its class and for objects of no known class, or for
    /// every class when its class is not known. Bottom when no `set` may
    /// write the field (the `get` fails).
    pub fn read(&self, obj: &Info, field: Symbol) -> Info {
        if self.unknown {
            return Info::value();
        }
        let class = obj.class.filter(|_| obj.kinds.has(Kinds::OBJECT));
        let mut acc = Info::bottom();
        for ((_, c), info) in self.stored.range((field, None)..).take_while(|((f, _), _)| *f == field) {
            if class.is_none() || c.is_none() || *c == class {
                acc = acc.join(info);
            }
        }
        acc
    }

    /// Adds a `set` of `field` of an object with info `obj` storing a
    /// value with info `value`.
    fn store(&mut self, obj: &Info, field: Symbol, value: &Info) {
        if value.is_bottom() || !obj.kinds.has(Kinds::OBJECT) {
            return;
        }
        let value = Info { alloc: None, ..value.clone() };
        let entry = self.stored.entry((field, obj.class)).or_insert_with(Info::bottom);
        *entry = entry.join(&value);
    }

    /// The facts as lines `; field class.name: info`, sorted by name (`*`
    /// for objects of no known class).
    pub fn render(&self, out: &mut String) {
        if self.unknown {
            out.push_str(";   fields unknown\n");
            return;
        }
        let mut lines: Vec<(String, Info)> = self
            .stored
            .iter()
            .map(|((field, class), info)| {
                (format!("{}.{field}", class.map_or("*".to_owned(), |c| c.to_string())), info.clone())
            })
            .collect();
        lines.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, info) in lines {
            writeln!(out, ";   field {name}: {info}").unwrap();
        }
    }
}

/// One `set` an analysis found executable: the class of its object, its
/// field, what it stores.
struct Store {
    obj: Info,
    field: Symbol,
    value: Info,
}

/// The `set`s of `f` that `p` found executable, with the infos of their
/// operands at their blocks.
fn stores(f: &Function, p: &Propagation) -> Vec<Store> {
    let mut out = Vec::new();
    for &b in &f.layout {
        if !p.is_executable(b) {
            continue;
        }
        for i in f.block_insts(b) {
            if let InstKind::Set { obj, field, value } = &f.insts[i].kind {
                out.push(Store { obj: p.operand(f, obj, b), field: *field, value: p.operand(f, value, b) });
            }
        }
    }
    out
}

/// The fields each `get` of `f` reads, sorted.
fn reads(f: &Function) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = f
        .all_insts()
        .filter_map(|(_, i)| match &f.insts[i].kind {
            InstKind::Get { field, .. } => Some(*field),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The integer constants of every function, for widening the facts.
fn widening(module: &Module) -> Widening {
    let mut constants = Vec::new();
    for f in &module.functions {
        for (_, i) in f.all_insts() {
            constants.extend(f.insts[i].kind.operands().filter_map(|o| match o {
                Operand::Const(flowc_lang::Value::Int(c)) => Some(*c),
                _ => None,
            }));
        }
    }
    Widening::new(constants)
}

/// Solves the facts of `module` (see the module docs): `analyze(i,
/// facts)` analyzes function `i` with `facts`. Returns the facts and
/// every function's analysis made with them.
pub(super) fn solve(
    module: &Module,
    mut analyze: impl FnMut(usize, &FieldFacts) -> Propagation,
) -> (FieldFacts, Vec<Propagation>) {
    let n = module.functions.len();
    let reads: Vec<Vec<Symbol>> = module.functions.iter().map(reads).collect();
    let widening = widening(module);
    let mut facts = FieldFacts::nothing();
    let mut results: Vec<Option<Propagation>> = (0..n).map(|_| None).collect();
    let mut found: Vec<Vec<Store>> = (0..n).map(|_| Vec::new()).collect();
    let mut changes: BTreeMap<(Symbol, Option<Symbol>), u8> = BTreeMap::new();
    // The fields whose facts the last round changed; `None`: analyze all.
    let mut changed: Option<Vec<Symbol>> = None;
    for round in 0.. {
        for i in 0..n {
            let again = match &changed {
                None => true,
                Some(fields) => reads[i].iter().any(|f| fields.binary_search(f).is_ok()),
            };
            if again {
                let p = analyze(i, &facts);
                found[i] = stores(&module.functions[i], &p);
                results[i] = Some(p);
            }
        }
        if facts.unknown {
            break;
        }
        let mut next = FieldFacts::nothing();
        for s in found.iter().flatten() {
            next.store(&s.obj, s.field, &s.value);
        }
        let mut fields = Vec::new();
        for (key, collected) in next.stored {
            let old = facts.stored.get(&key).cloned().unwrap_or_else(Info::bottom);
            let joined = old.join(&collected);
            if joined == old {
                continue;
            }
            let count = changes.entry(key).or_insert(0);
            *count = count.saturating_add(1);
            facts.stored.insert(key, widening.step(*count, &old, joined));
            fields.push(key.0);
        }
        if fields.is_empty() {
            break;
        }
        if round + 1 == MAX_ROUNDS {
            facts = FieldFacts::unknown();
            changed = None;
            continue;
        }
        fields.sort();
        fields.dedup();
        changed = Some(fields);
    }
    (facts, results.into_iter().map(|p| p.expect("every function analyzed")).collect())
}

/// Whether `info`, a value the facts say a field holds, is either the
/// integer 0 or an object of `class` (a link of a chain, 0 at its end):
/// then testing its class is testing its truth.
pub fn is_class_or_zero(info: &Info, class: Symbol) -> bool {
    info.kinds.within(Kinds::INT.union(Kinds::OBJECT))
        && info.kinds.has(Kinds::OBJECT)
        && info.class == Some(class)
        && (!info.kinds.has(Kinds::INT) || info.range.as_point() == Some(0))
}

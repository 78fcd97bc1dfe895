//! The fields a huge function alone writes, solved within its own
//! analysis.
//!
//! While the program's facts are solved, a huge function reads none of
//! them ([`super::program::uses_facts`]): reading them, the code after
//! each `get` is reached only once the field's fact is known, so a main
//! graph of many reads in a row would be analyzed again per round. It
//! read every field as any value instead — and then stored what it read:
//! a partially evaluated interpreter's residual program moves along its
//! tape with `p = p.r` and links new cells with `q.l = p`, so the facts
//! said its link fields held any value, and neither its own code nor a
//! trace of it knew a cell from anything else.
//!
//! A field that no other function writes holds only what this function
//! stores, so its analysis can solve that field's fact itself, in the same
//! optimistic fixpoint, with no rounds: the fact starts at bottom; an
//! executable `set` joins its value (as seen in its block) into it,
//! widened like a loop header's phi ([`Widening`]) so it changes a bounded
//! number of times; a `get` of the field reads the fact, and every `get`
//! of it in an executable block is visited again when it grows. At the
//! fixpoint the fact covers every `set` that may run, and every value the
//! field may hold is one of those (objects have no literals: fields are
//! written only by `set`). A field no function writes is bottom: reading
//! it always fails. Fields another function writes are any value, as
//! before.
//!
//! Data: per own field, its fact and count of changes; per own field, the
//! `get`s that read it (block and instruction), for the visits again.

use std::collections::{HashMap, HashSet};

use flowc_ir::{BlockId, InstId, InstKind, Module};
use flowc_lang::Symbol;

use crate::lattice::{Info, Widening};

/// See the module docs.
pub(super) struct OwnFields {
    /// Fields some other function of the module writes: any value here.
    others: HashSet<Symbol>,
    /// Per field the function alone writes: the join of what its
    /// executable `set`s store so far, and how many times it changed.
    facts: HashMap<Symbol, (Info, u8)>,
    /// Per own field, its `get`s.
    gets: HashMap<Symbol, Vec<(BlockId, InstId)>>,
}

impl OwnFields {
    /// The own fields of function `index` of `module`.
    pub(super) fn of(module: &Module, index: usize) -> OwnFields {
        let mut others = HashSet::new();
        for (j, g) in module.functions.iter().enumerate() {
            if j != index {
                others.extend(g.all_insts().filter_map(|(_, i)| match &g.insts[i].kind {
                    InstKind::Set { field, .. } => Some(*field),
                    _ => None,
                }));
            }
        }
        let f = &module.functions[index];
        let mut facts = HashMap::new();
        let mut gets: HashMap<Symbol, Vec<(BlockId, InstId)>> = HashMap::new();
        for (b, i) in f.all_insts() {
            match &f.insts[i].kind {
                InstKind::Set { field, .. } if !others.contains(field) => {
                    facts.entry(*field).or_insert((Info::bottom(), 0));
                }
                InstKind::Get { field, .. } if !others.contains(field) => gets.entry(*field).or_default().push((b, i)),
                _ => {}
            }
        }
        OwnFields { others, facts, gets }
    }

    /// What a `get` of `field` reads: `None` when another function writes
    /// it (any value); bottom for a field no `set` writes.
    pub(super) fn read(&self, field: Symbol) -> Option<Info> {
        if self.others.contains(&field) {
            return None;
        }
        Some(self.facts.get(&field).map_or_else(Info::bottom, |(info, _)| info.clone()))
    }

    /// Whether the function solves `field` itself.
    pub(super) fn owns(&self, field: Symbol) -> bool {
        self.facts.contains_key(&field)
    }

    /// Joins `value`, what a `set` of `field` stores, into the field's
    /// fact (as the program's facts take it: [`super::program::stored`]);
    /// when it grew, the `get`s to visit again.
    pub(super) fn store(&mut self, field: Symbol, value: &Info, widening: &Widening) -> Option<&[(BlockId, InstId)]> {
        let (fact, changes) = self.facts.get_mut(&field)?;
        if value.is_bottom() {
            return None;
        }
        let stored = super::program::stored(value);
        let joined = if fact.is_bottom() { stored } else { fact.join(&stored) };
        if joined == *fact {
            return None;
        }
        *changes = changes.saturating_add(1);
        *fact = widening.step(*changes, fact, joined);
        Some(self.gets.get(&field).map_or(&[], Vec::as_slice))
    }
}

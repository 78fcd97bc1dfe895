//! Where an object keeps each field: one slot per field name of the
//! program.
//!
//! Field names are atoms written in the program (`p.x`, `immutable(point,
//! [x])`), so the set of them is known before the program runs. Every
//! object of a program has a slot for each, in one order — the names
//! sorted as text — so a field's slot does not depend on the object's
//! class: compiled code reads `p.x` at an offset fixed when it is
//! compiled, whatever `p` turns out to be. Objects are a few slots larger
//! than their class strictly needs; programs name few fields.
//!
//! Layouts are interned: two programs with the same field names share one,
//! and an object's cell points at its layout for the interpreters (which
//! look fields up by name).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::symbol::Symbol;

use super::cell::HEADER_WORDS;

/// The slots of a program's objects.
#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    /// The field names, sorted as text: slot `k` holds `fields[k]`.
    fields: Box<[Symbol]>,
}

impl Layout {
    /// The layout with slots for `fields` (in any order, repeats allowed).
    pub fn of(fields: impl IntoIterator<Item = Symbol>) -> &'static Layout {
        let mut names: Vec<Symbol> = fields.into_iter().collect();
        // Distinct symbols first (cheap, by number; a program names each
        // field many times), then in name order.
        names.sort_unstable_by_key(|s| s.index());
        names.dedup();
        names.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        static LAYOUTS: OnceLock<Mutex<HashMap<Vec<Symbol>, &'static Layout>>> = OnceLock::new();
        let mut table = LAYOUTS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&l) = table.get(&names) {
            return l;
        }
        let layout: &'static Layout = Box::leak(Box::new(Layout { fields: names.clone().into_boxed_slice() }));
        table.insert(names, layout);
        layout
    }

    /// The slot of `field`, if objects of this layout have one.
    #[inline(always)]
    pub fn slot(&self, field: Symbol) -> Option<usize> {
        self.fields.iter().position(|f| *f == field)
    }

    /// The field names, in slot order.
    pub fn fields(&self) -> &[Symbol] {
        &self.fields
    }

    /// The size of an object's cell, in words.
    pub fn words(&self) -> usize {
        HEADER_WORDS + self.fields.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_sorted_and_interned() {
        let s = Symbol::intern;
        let a = Layout::of([s("y"), s("x"), s("y")]);
        let b = Layout::of([s("x"), s("y")]);
        assert!(std::ptr::eq(a, b));
        assert_eq!(a.slot(s("x")), Some(0));
        assert_eq!(a.slot(s("y")), Some(1));
        assert_eq!(a.slot(s("z")), None);
        assert_eq!(a.words(), HEADER_WORDS + 2);
    }
}

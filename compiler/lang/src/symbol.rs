//! Interned names: atoms, labels, variable, class, field and function names.
//!
//! A [`Symbol`] is a `u32` index into one process-wide interner, so it is
//! `Copy`, compares in one instruction and hashes cheaply. Atoms of the
//! language are symbols too, which gives Prolog's "atoms compare by identity"
//! for free. Interning is deterministic for a given order of calls; nothing
//! prints symbol numbers, so output never depends on interning order.

use std::collections::HashMap;
use std::fmt;
use std::sync::{OnceLock, RwLock};

/// An interned string.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol(u32);

struct Interner {
    names: Vec<&'static str>,
    ids: HashMap<&'static str, u32>,
}

fn interner() -> &'static RwLock<Interner> {
    static INTERNER: OnceLock<RwLock<Interner>> = OnceLock::new();
    INTERNER.get_or_init(|| RwLock::new(Interner { names: Vec::new(), ids: HashMap::new() }))
}

impl Symbol {
    /// Interns `name`. Strings are leaked once per distinct name, so the
    /// interner can hand out `&'static str`.
    pub fn intern(name: &str) -> Symbol {
        if let Some(&id) = interner().read().expect("interner poisoned").ids.get(name) {
            return Symbol(id);
        }
        let mut table = interner().write().expect("interner poisoned");
        if let Some(&id) = table.ids.get(name) {
            return Symbol(id);
        }
        let id = u32::try_from(table.names.len()).expect("more than 2^32 symbols");
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        table.names.push(leaked);
        table.ids.insert(leaked, id);
        Symbol(id)
    }

    /// The interned text.
    pub fn as_str(self) -> &'static str {
        interner().read().expect("interner poisoned").names[self.0 as usize]
    }

    /// The raw index; stable for the life of the process only.
    pub fn index(self) -> u32 {
        self.0
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for Symbol {
    fn from(s: &str) -> Symbol {
        Symbol::intern(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_identity() {
        let a = Symbol::intern("power_rec");
        let b = Symbol::intern("power_rec");
        let c = Symbol::intern("power_done");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.as_str(), "power_rec");
    }
}

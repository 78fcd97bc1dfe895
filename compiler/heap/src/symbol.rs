//! Interned names: atoms, labels, variable, class, field and function names.
//!
//! A [`Symbol`] is a `u32` index into one process-wide interner, so it is
//! `Copy`, compares in one instruction and hashes cheaply. It is stored
//! plus one, as a `NonZeroU32`, so `Option<Symbol>` takes four bytes: names
//! are optional in many IR and lattice structures. Atoms of the
//! language are symbols too, which gives Prolog's "atoms compare by identity"
//! for free. Interning is deterministic for a given order of calls; no
//! output of flowc's prints symbol numbers, so it never depends on
//! interning order. (Compiled code holds them: the Cranelift listing of
//! `flowc_codegen::object::lowered` shows them, which is why the
//! filetests' `lower` cases name no symbol.)

use std::collections::HashMap;
use std::fmt;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{OnceLock, RwLock};

/// An interned string: its index in the interner, plus one.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol(NonZeroU32);

struct Interner {
    names: Vec<&'static str>,
    /// Hashed by FxHash: with SipHash, interning was a fifth of reading a
    /// 44 MB residual program (`pe --linear` of public skiploop.b) and
    /// the label `gensym` makes per residual block a tenth of `pe`.
    ids: rustc_hash::FxHashMap<&'static str, u32>,
}

/// How many symbols have been handed out, readable without the lock (the
/// runtime checks indices from generated code on every field access).
static COUNT: AtomicU32 = AtomicU32::new(0);

fn interner() -> &'static RwLock<Interner> {
    static INTERNER: OnceLock<RwLock<Interner>> = OnceLock::new();
    INTERNER.get_or_init(|| RwLock::new(Interner { names: Vec::new(), ids: Default::default() }))
}

impl Symbol {
    /// Interns `name`. Strings are leaked once per distinct name, so the
    /// interner can hand out `&'static str`.
    pub fn intern(name: &str) -> Symbol {
        if let Some(&id) = interner().read().expect("interner poisoned").ids.get(name) {
            return Symbol::at(id);
        }
        let mut table = interner().write().expect("interner poisoned");
        if let Some(&id) = table.ids.get(name) {
            return Symbol::at(id);
        }
        let id = u32::try_from(table.names.len()).ok().filter(|&id| id < u32::MAX).expect("more than 2^32 - 1 symbols");
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        table.names.push(leaked);
        table.ids.insert(leaked, id);
        COUNT.store(id + 1, Ordering::Release);
        Symbol::at(id)
    }

    /// The symbol of interner index `id` (below `u32::MAX`).
    #[inline]
    fn at(id: u32) -> Symbol {
        Symbol(NonZeroU32::new(id + 1).expect("an index below u32::MAX"))
    }

    /// The interned text.
    pub fn as_str(self) -> &'static str {
        interner().read().expect("interner poisoned").names[self.index() as usize]
    }

    /// The raw index; stable for the life of the process only.
    #[inline]
    pub fn index(self) -> u32 {
        self.0.get() - 1
    }

    /// How many symbols have been interned (they are numbered from 0).
    #[inline]
    pub fn count() -> u32 {
        COUNT.load(Ordering::Acquire)
    }

    /// The symbol with raw index `i`, which must come from
    /// [`Symbol::index`] in this process (generated code stores symbols as
    /// indices). Panics otherwise: that would be a compiler bug.
    #[inline]
    pub fn from_index(i: u32) -> Symbol {
        assert!(i < Symbol::count(), "symbol index {i} was never handed out");
        Symbol::at(i)
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

/// A hasher for symbols (and other small integer keys): one multiply, as in
/// rustc's FxHash. Symbols are dense small integers, so SipHash's
/// protection against crafted keys buys nothing and costs a lot in the
/// compiler's hot maps.
#[derive(Default, Clone, Copy)]
pub struct SymbolHasher(u64);

impl std::hash::Hasher for SymbolHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// What builds a [`SymbolHasher`] for a map.
pub type BuildSymbolHasher = std::hash::BuildHasherDefault<SymbolHasher>;

/// A hash map keyed by symbols.
pub type SymbolMap<V> = HashMap<Symbol, V, BuildSymbolHasher>;

/// An insertion-ordered map keyed by symbols.
pub type SymbolIndexMap<V> = indexmap::IndexMap<Symbol, V, BuildSymbolHasher>;

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

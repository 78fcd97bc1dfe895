//! The value representation of generated code and of object fields: one
//! 64-bit word per value.
//!
//! | low bits | meaning |
//! |---|---|
//! | `...1` | an integer `n`, stored as `n << 1 | 1` when it fits 63 bits |
//! | `..010` | an atom: its symbol number `<< 3` |
//! | `..110` | an unbound variable: its name's symbol number `<< 3` |
//! | `..000`, not 0 | a pointer to a cell of the heap ([`super`]): an object, or a boxed big integer or list |
//! | `0` | no value: the callee stopped (an error, or the program printed); in an object's field, the field is not set |
//!
//! Integers compare, add and subtract on their words directly (the tag is
//! order-preserving); everything else goes through the runtime. The
//! collector reads a word as a pointer only when its low three bits are
//! clear, so an integer is never taken for one.

use crate::{Symbol, Value};

pub type Word = u64;

pub const STOP: Word = 0;
pub const INT_TAG: Word = 1;
pub const ATOM_TAG: Word = 2;
pub const UNBOUND_TAG: Word = 6;
pub const TAG_MASK: Word = 7;
/// The word of the integer 0 (false).
pub const ZERO: Word = 1;
/// The word of the integer 1 (true).
pub const ONE: Word = 3;

/// Integers that fit a word inline: 63 bits.
#[inline]
pub fn small(n: i64) -> Option<Word> {
    if (-(1i64 << 62)..(1i64 << 62)).contains(&n) {
        Some(((n << 1) | 1) as Word)
    } else {
        None
    }
}

#[inline]
pub fn is_int(w: Word) -> bool {
    w & 1 == 1
}

#[inline]
pub fn untag_int(w: Word) -> i64 {
    (w as i64) >> 1
}

#[inline]
pub fn atom(s: Symbol) -> Word {
    ((s.index() as Word) << 3) | ATOM_TAG
}

#[inline]
pub fn unbound(s: Symbol) -> Word {
    ((s.index() as Word) << 3) | UNBOUND_TAG
}

#[inline]
pub fn is_unbound(w: Word) -> bool {
    w & TAG_MASK == UNBOUND_TAG
}

#[inline]
pub fn is_pointer(w: Word) -> bool {
    w != STOP && w & TAG_MASK == 0
}

/// The symbol of an atom or unbound word.
#[inline]
pub fn symbol(w: Word) -> Symbol {
    Symbol::from_index((w >> 3) as u32)
}

/// The word of a value that needs no boxing, if it has one.
#[inline]
pub fn immediate(v: &Value) -> Option<Word> {
    match v {
        Value::Int(i) => small(*i),
        Value::Atom(a) => Some(atom(*a)),
        _ => None,
    }
}

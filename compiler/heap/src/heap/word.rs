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
//!
//! [`Word`] is a newtype, not a `u64`: safe code makes words only of
//! immediates ([`small`], [`atom`], [`unbound`]) or gets them from the heap
//! (a new cell, an object, a slot), so a word that is a pointer always
//! came from the heap. Turning bits into a word ([`Word::from_bits`]) is
//! `unsafe`, and so is every function that reads through a word. Its
//! layout is a `u64` (`repr(transparent)`), so generated code and the
//! runtime's `extern "C"` entry points pass it in an integer register.

use std::fmt;

use crate::ops::range::{WORD_MAX, WORD_MIN};
use crate::{Symbol, Value};

use super::cell::Cell;

/// One value as generated code and object slots hold it (see the module
/// docs for its encoding).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Word(u64);

impl Word {
    /// The word with these bits.
    ///
    /// # Safety
    /// `bits` is [`STOP`], an immediate (integer, atom, unbound), or the
    /// address of a cell of this thread's heap that is live: a word the
    /// heap or generated code made and the caller kept alive since.
    #[inline(always)]
    pub const unsafe fn from_bits(bits: u64) -> Word {
        Word(bits)
    }

    /// The word's bits, as generated code holds them.
    #[inline(always)]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The word pointing at heap cell `c`.
    ///
    /// # Safety
    /// `c` is a live cell of this thread's heap.
    #[inline(always)]
    pub unsafe fn of_cell(c: Cell) -> Word {
        Word(c as u64)
    }

    /// The cell a pointer word points at (the caller checks
    /// [`is_pointer`] first; reading it is `unsafe`).
    #[inline(always)]
    pub fn cell(self) -> Cell {
        self.0 as Cell
    }

    /// The word's bits as a signed immediate, as Cranelift takes constants.
    #[inline(always)]
    pub const fn as_i64(self) -> i64 {
        self.0 as i64
    }

    /// Its low three bits.
    #[inline(always)]
    pub const fn tag(self) -> u64 {
        self.0 & TAG_MASK
    }
}

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Word({:#x})", self.0)
    }
}

pub const STOP: Word = Word(0);
pub const INT_TAG: u64 = 1;
pub const ATOM_TAG: u64 = 2;
pub const UNBOUND_TAG: u64 = 6;
pub const TAG_MASK: u64 = 7;
/// The word of the integer 0 (false).
pub const ZERO: Word = Word(1);
/// The word of the integer 1 (true).
pub const ONE: Word = Word(3);

/// Integers that fit a word inline: 63 bits.
#[inline]
pub fn small(n: i64) -> Option<Word> {
    if (WORD_MIN as i64..=WORD_MAX as i64).contains(&n) {
        Some(Word(((n << 1) | 1) as u64))
    } else {
        None
    }
}

#[inline]
pub fn is_int(w: Word) -> bool {
    w.0 & 1 == 1
}

#[inline]
pub fn untag_int(w: Word) -> i64 {
    (w.0 as i64) >> 1
}

#[inline]
pub fn atom(s: Symbol) -> Word {
    Word(((s.index() as u64) << 3) | ATOM_TAG)
}

#[inline]
pub fn unbound(s: Symbol) -> Word {
    Word(((s.index() as u64) << 3) | UNBOUND_TAG)
}

#[inline]
pub fn is_unbound(w: Word) -> bool {
    w.tag() == UNBOUND_TAG
}

#[inline]
pub fn is_pointer(w: Word) -> bool {
    w != STOP && w.tag() == 0
}

/// The symbol of an atom or unbound word.
#[inline]
pub fn symbol(w: Word) -> Symbol {
    Symbol::from_index((w.0 >> 3) as u32)
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

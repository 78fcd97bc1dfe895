//! The format of a heap cell, which compiled code reads and writes too
//! (the offsets here are what the code generator uses).
//!
//! Every cell starts with a *meta* word:
//!
//! | bits | meaning |
//! |---|---|
//! | 0–7 | kind: [`FREE`], [`OBJECT`], [`BOXED_KIND`] or [`super::num::LIMBS`] |
//! | 8 | the collector's mark |
//! | 16–24 | a limb cell's count and sign ([`super::num`]) |
//! | 32–63 | pins: how many handles Rust code holds ([`super::Obj`]) |
//!
//! An object cell (`HEADER_WORDS + fields` words):
//!
//! | offset | contents |
//! |---|---|
//! | [`META`] 0 | meta |
//! | [`LAYOUT`] 8 | `&'static Layout` of its program |
//! | [`CLASS`] 16 | class: symbol number (`u32`) |
//! | [`ID`] 24 | allocation number, what `<point#3>` prints |
//! | [`SLOTS`] 32 | one word per field of the layout; [`UNSET`] when not set |
//!
//! A limb cell holds an integer beyond 63 bits of up to
//! [`super::num::MAX_LIMBS`] 64-bit limbs inline ([`super::num`]).
//!
//! A boxed cell ([`BOXED_WORDS`] words) holds a [`Value`] that is not a
//! word of its own — a list, or an integer of more limbs —
//! at offset [`BOXED`]; the collector drops it when the cell dies. Lists
//! are built from constants only, so a boxed value never refers to an
//! object: boxed cells are leaves of the object graph. At [`ITEMS`], a
//! list's cell holds the address of the list's word table
//! ([`crate::value::List`]), which compiled code reads elements from;
//! other boxed cells hold 0 there.
//!
//! | offset | contents |
//! |---|---|
//! | [`META`] 0 | meta |
//! | [`BOXED`] 8 | the [`Value`], two words |
//! | [`ITEMS`] 24 | a list's `[len, w0, w1, ...]`, or 0 |

use crate::value::Value;

use super::layout::Layout;
use super::word::Word;

pub const META: usize = 0;
pub const LAYOUT: usize = 8;
pub const CLASS: usize = 16;
pub const ID: usize = 24;
pub const SLOTS: usize = 32;
pub const BOXED: usize = 8;
pub const ITEMS: usize = 24;

/// Words of an object cell before its slots.
pub const HEADER_WORDS: usize = SLOTS / 8;
/// Words of a boxed cell.
pub const BOXED_WORDS: usize = 2 + std::mem::size_of::<Value>() / 8;

pub const KIND_MASK: u64 = 0xff;
pub const FREE: u64 = 0;
pub const OBJECT: u64 = 1;
pub const BOXED_KIND: u64 = 2;
pub const MARK: u64 = 1 << 8;
/// One pin, in the meta word.
pub const PIN: u64 = 1 << 32;

/// The word of a field that was never set.
pub const UNSET: Word = super::word::STOP;

const _: () = assert!(std::mem::size_of::<Value>() == 16, "a boxed cell holds a Value in two words");
const _: () = assert!(ITEMS == BOXED + std::mem::size_of::<Value>() && ITEMS / 8 + 1 == BOXED_WORDS);

/// A cell's address.
pub type Cell = *mut u64;

/// # Safety
/// `c` is a cell of a live heap.
#[inline]
pub unsafe fn meta(c: Cell) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { *c }
}

/// # Safety
/// `c` is a cell of a live heap.
#[inline]
pub unsafe fn set_meta(c: Cell, m: u64) {
    // SAFETY: the caller's contract.
    unsafe { *c = m }
}

/// # Safety
/// `c` is a cell of a live heap.
#[inline]
pub unsafe fn kind(c: Cell) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { meta(c) & KIND_MASK }
}

/// The raw `u64` at byte offset `offset` of cell `c`: a header word
/// (layout, class, id, a list's items) or a limb, never a value.
///
/// # Safety
/// `c` is a cell of a live heap at least `offset + 8` bytes long.
#[inline]
pub unsafe fn raw_at(c: Cell, offset: usize) -> u64 {
    // SAFETY: the caller's contract.
    unsafe { *c.add(offset / 8) }
}

/// # Safety
/// As [`raw_at`].
#[inline]
pub unsafe fn set_raw_at(c: Cell, offset: usize, w: u64) {
    // SAFETY: the caller's contract.
    unsafe { *c.add(offset / 8) = w }
}

/// The value word at byte offset `offset` of cell `c` (an object's slot).
///
/// # Safety
/// As [`raw_at`], and the offset is a slot, which holds [`UNSET`] or a
/// word the heap keeps valid.
#[inline]
pub unsafe fn word_at(c: Cell, offset: usize) -> Word {
    // SAFETY: the caller's contract: slots hold words.
    unsafe { Word::from_bits(raw_at(c, offset)) }
}

/// # Safety
/// As [`raw_at`], and the offset is a slot.
#[inline]
pub unsafe fn set_word_at(c: Cell, offset: usize, w: Word) {
    // SAFETY: the caller's contract.
    unsafe { set_raw_at(c, offset, w.bits()) }
}

/// The layout of object cell `c`.
///
/// # Safety
/// `c` is a live object cell.
#[inline]
pub unsafe fn layout(c: Cell) -> &'static Layout {
    // SAFETY: object cells store a `&'static Layout` at LAYOUT.
    unsafe { &*(raw_at(c, LAYOUT) as *const Layout) }
}

/// The boxed value of boxed cell `c`.
///
/// # Safety
/// `c` is a live boxed cell.
#[inline]
pub unsafe fn boxed<'a>(c: Cell) -> &'a Value {
    // SAFETY: boxed cells hold an initialized Value at BOXED.
    unsafe { &*(c.add(BOXED / 8) as *const Value) }
}

//! Values and words: how a [`Value`] is held in an object's slot or by
//! compiled code, and back.

use crate::symbol::Symbol;
use crate::value::Value;

use super::cell::{self, BOXED, BOXED_KIND, BOXED_WORDS, ITEMS};
use super::num::{Num, LIMBS};
use super::obj::Obj;
use super::word::{self, Word};

/// The word of `v`: inline for integers of 63 bits and atoms, the cell's
/// pointer for objects, a new limb cell for integers of up to
/// [`super::num::MAX_LIMBS`] limbs, else a new boxed cell (new cells may
/// collect).
#[inline]
pub fn to_word(v: &Value) -> Word {
    if let Some(w) = word::immediate(v) {
        return w;
    }
    match v {
        Value::Object(o) => return o.word(),
        Value::Int(i) => return Num::from_i64(*i).to_word(),
        Value::Big(b) => {
            if let Some(n) = Num::of_bigint(b) {
                return n.to_word();
            }
        }
        _ => {}
    }
    box_value(v)
}

/// A new boxed cell holding `v` (a list, or an integer past
/// [`super::num::MAX_LIMBS`] limbs).
pub(super) fn box_value(v: &Value) -> Word {
    debug_assert!(!contains_object(v), "lists hold constants only");
    // A big integer's digits live outside the heap, and a boxed cell is
    // small whatever it holds: new digits count towards the next
    // collection, or a loop making numbers of thousands of bits would hold
    // tens of megabytes of dead digits between collections. (Shared ones —
    // a constant, a value boxed again — are not new; nor is a list's,
    // which is the program's constant.)
    let external = match v {
        Value::Big(b) if std::sync::Arc::strong_count(b) == 1 => {
            (b.bits() / 8) as usize + std::mem::size_of::<num_bigint::BigInt>()
        }
        _ => 0,
    };
    let c = super::with(|h| {
        h.handed_out += external;
        h.collect_if_due();
        h.alloc(BOXED_WORDS)
    });
    // SAFETY: a fresh cell of BOXED_WORDS words.
    unsafe {
        (c.add(BOXED / 8) as *mut Value).write(v.clone());
        let items = match v {
            Value::List(l) => l.words() as u64,
            _ => 0,
        };
        cell::set_raw_at(c, ITEMS, items);
        cell::set_meta(c, BOXED_KIND);
    }
    // SAFETY: the cell is live and initialized.
    unsafe { Word::of_cell(c) }
}

/// The value of word `w`; an unbound word gives its variable's name.
///
/// # Safety
/// `w` is a word of this thread's heap: an immediate (integer, atom,
/// unbound), or a pointer to a live cell — a word compiled code or the
/// runtime made, or read from a live object's slot, and kept alive since
/// (rooted, or no collection in between). Any other pointer word may be
/// dereferenced.
#[inline(always)]
pub unsafe fn to_value(w: Word) -> Result<Value, Symbol> {
    if word::is_int(w) {
        return Ok(Value::Int(word::untag_int(w)));
    }
    match w.tag() {
        word::ATOM_TAG => Ok(Value::Atom(word::symbol(w))),
        word::UNBOUND_TAG => Err(word::symbol(w)),
        _ => {
            let c = w.cell();
            // SAFETY: a pointer word points at a live cell: the heap's
            // invariant, which compiled code and slots keep.
            unsafe {
                match Obj::pin_object(c) {
                    Some(o) => Ok(Value::Object(o)),
                    None if cell::kind(c) == LIMBS => Ok(Num::of_cell(c).to_value()),
                    None => Ok(cell::boxed(c).clone()),
                }
            }
        }
    }
}

/// The object word `w` points at, pinned; `None` for any other word.
///
/// # Safety
/// As for [`to_value`]: `w` is an immediate or points at a live cell.
#[inline(always)]
pub unsafe fn to_object(w: Word) -> Option<Obj> {
    if !word::is_pointer(w) {
        return None;
    }
    // SAFETY: a pointer word points at a live cell (as in `to_value`).
    unsafe { Obj::pin_object(w.cell()) }
}

fn contains_object(v: &Value) -> bool {
    match v {
        Value::Object(_) => true,
        Value::List(items) => items.iter().any(contains_object),
        _ => false,
    }
}

//! [`Obj`]: a handle to an object cell, as Rust code holds one.

use std::hash::{Hash, Hasher};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::symbol::Symbol;
use crate::value::Value;

use super::block;
use super::cell::{self, Cell, CLASS, ID, LAYOUT, OBJECT, PIN, SLOTS, UNSET};
use super::layout::Layout;
use super::word::Word;

/// A handle to an object: its cell, pinned while the handle lives (the
/// collector keeps pinned cells, and what they refer to). Cloning pins
/// again; handles compare by identity. A *lent* handle (bit 0 of the
/// pointer set, [`super::lend`]) pins nothing: a [`super::lend::Loan`]
/// keeps its object.
pub struct Obj(NonNull<u64>);

/// The bit of a lent handle's pointer (cells are word-aligned).
const LENT: usize = 1;

/// An object has no slot for this field (its layout is another program's):
/// an internal error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoSlot(pub Symbol);

impl Obj {
    /// A new object of `class`, numbered `id`, with the slots of `layout`,
    /// none set.
    pub fn new(id: u64, class: Symbol, layout: &'static Layout) -> Obj {
        let words = layout.words();
        let c = super::with(|h| h.alloc(words));
        // SAFETY: a fresh cell of `words` words, written whole here.
        unsafe {
            cell::set_raw_at(c, LAYOUT, layout as *const Layout as u64);
            cell::set_raw_at(c, CLASS, class.index() as u64);
            cell::set_raw_at(c, ID, id);
            for k in 0..layout.fields().len() {
                cell::set_word_at(c, SLOTS + 8 * k, UNSET);
            }
            cell::set_meta(c, OBJECT);
            pin(c);
            Obj(NonNull::new_unchecked(c))
        }
    }

    /// The handle of the object cell word `w` points at.
    ///
    /// # Safety
    /// `w` points at a live object cell of this thread's heap.
    pub unsafe fn from_word(w: Word) -> Obj {
        let c = w.cell();
        // SAFETY: the caller's contract.
        unsafe {
            debug_assert_eq!(cell::kind(c), OBJECT);
            pin(c);
            Obj(NonNull::new_unchecked(c))
        }
    }

    /// A handle to cell `c` if it is an object (reading its meta word
    /// once).
    ///
    /// # Safety
    /// `c` is a live cell.
    #[inline(always)]
    pub(super) unsafe fn pin_object(c: Cell) -> Option<Obj> {
        // SAFETY: the caller's contract.
        unsafe {
            let m = cell::meta(c);
            if m & cell::KIND_MASK != OBJECT {
                return None;
            }
            if m < PIN {
                (*block::block_of(c)).pinned = 1;
            }
            cell::set_meta(c, m + PIN);
            Some(Obj(NonNull::new_unchecked(c)))
        }
    }

    #[inline(always)]
    fn cell(&self) -> Cell {
        (self.0.as_ptr() as usize & !LENT) as Cell
    }

    /// Whether the handle is lent ([`super::lend`]): it pins nothing.
    #[inline(always)]
    pub fn is_lent(&self) -> bool {
        self.0.as_ptr() as usize & LENT != 0
    }

    /// A pinned handle of the same object.
    pub(super) fn pinned(&self) -> Obj {
        // SAFETY: the object is live (pinned by this handle, or by the
        // loan of a lent one).
        unsafe { pin(self.cell()) };
        // SAFETY: a cell's address is not null.
        Obj(unsafe { NonNull::new_unchecked(self.cell()) })
    }

    /// A lent handle of the same object, pinning nothing.
    pub(super) fn lent(&self) -> Obj {
        Obj::lent_of(self.cell())
    }

    fn lent_of(c: Cell) -> Obj {
        // SAFETY: a cell's address is not null, nor with bit 0 set.
        Obj(unsafe { NonNull::new_unchecked((c as usize | LENT) as Cell) })
    }

    /// A clone of a lent handle: lent on a thread that borrows, else
    /// pinned (a lent handle reaches nothing but the JIT's tables).
    #[cold]
    fn clone_lent(&self) -> Obj {
        if super::lend::borrowing() {
            Obj(self.0)
        } else {
            self.pinned()
        }
    }

    /// What [`Obj::get`] reads of a lent object on a thread that borrows:
    /// an object is lent too (a list holding objects, which a program
    /// cannot make, would not be read: its handles would be pinned here).
    ///
    /// Such a thread reads only what never changes once set, but the
    /// heap's thread may be setting it (an immutable field is set once,
    /// from unset) or changing its neighbours (a cell's pin count shares
    /// its meta word with the kind): those words are read as atomic words,
    /// which see either value.
    #[cold]
    fn get_borrowed(&self, field: Symbol) -> Option<Value> {
        let read = |c: Cell, offset: usize| {
            // SAFETY: an aligned word of a live cell (the loan keeps the
            // object; its immutable fields keep what they hold).
            unsafe { (*(c.byte_add(offset) as *const AtomicU64)).load(Ordering::Relaxed) }
        };
        let k = self.layout().slot(field)?;
        // SAFETY: a slot's word: an immediate, or a live cell's address
        // (the object keeps what its immutable fields hold).
        let w = unsafe { Word::from_bits(read(self.cell(), SLOTS + 8 * k)) };
        if w == UNSET {
            return None;
        }
        if !super::word::is_pointer(w) {
            // SAFETY: an immediate.
            return unsafe { super::to_value(w).ok() };
        }
        let c = w.cell();
        // SAFETY: a live cell of the kind read: a number's limbs and a
        // boxed value never change.
        unsafe {
            match read(c, 0) & cell::KIND_MASK {
                OBJECT => Some(Value::Object(Obj::lent_of(c))),
                super::num::LIMBS => Some(super::num::Num::of_cell(c).to_value()),
                _ if cell::boxed(c).holds_objects() => None,
                _ => Some(cell::boxed(c).clone()),
            }
        }
    }

    /// The address of the object's cell (which never moves): how far
    /// apart two objects lie is what a trace may assume of a chain laid
    /// out in a row (`flowc_ir::GuardKind::At`).
    pub fn address(&self) -> usize {
        self.cell() as usize
    }

    /// How many bytes past `base`'s cell this object's lies, when the two
    /// lie in one block: a block's cells are handed out in order, so the
    /// links of a chain made one after another lie a cell apart. (Across
    /// blocks the distance is where `mmap` put them, which says nothing
    /// of the next pair, and would make a trace differ between runs.)
    pub fn offset_from(&self, base: &Obj) -> Option<i64> {
        let (a, b) = (self.address(), base.address());
        ((a ^ b) < super::block::BLOCK_BYTES).then(|| a.wrapping_sub(b) as i64)
    }

    /// The word that points at the object.
    pub fn word(&self) -> Word {
        // SAFETY: a pinned object's cell is live.
        unsafe { Word::of_cell(self.cell()) }
    }

    #[inline]
    pub fn class(&self) -> Symbol {
        // SAFETY: a pinned object cell is live.
        Symbol::from_index(unsafe { cell::raw_at(self.cell(), CLASS) } as u32)
    }

    /// The allocation number (what printing shows).
    pub fn id(&self) -> u64 {
        // SAFETY: as in `class`.
        unsafe { cell::raw_at(self.cell(), ID) }
    }

    #[inline(always)]
    pub fn layout(&self) -> &'static Layout {
        // SAFETY: as in `class`.
        unsafe { cell::layout(self.cell()) }
    }

    /// The word in `field`'s slot ([`UNSET`] if not set), if the object has
    /// one.
    #[inline(always)]
    pub fn slot_word(&self, field: Symbol) -> Option<Word> {
        let k = self.layout().slot(field)?;
        // SAFETY: slot `k` of a live object cell of this layout.
        Some(unsafe { cell::word_at(self.cell(), SLOTS + 8 * k) })
    }

    /// The word of `field`, if set, where the object's layout is likely
    /// `layout`, in which the field is at `slot`: one read when it is (and
    /// `slot` is `field`'s slot there; else the field is looked up).
    #[inline]
    pub fn get_word_at(&self, layout: &'static Layout, slot: u32, field: Symbol) -> Option<Word> {
        let here = layout.fields().get(slot as usize) == Some(&field);
        // SAFETY: a pinned object cell is live; when its layout is `layout`
        // it has `layout`'s slots, `slot` among them (`here`).
        let w = unsafe {
            if here && cell::raw_at(self.cell(), LAYOUT) == layout as *const Layout as u64 {
                cell::word_at(self.cell(), SLOTS + 8 * slot as usize)
            } else {
                self.slot_word(field)?
            }
        };
        (w != UNSET).then_some(w)
    }

    /// Whether the object's class is `class`.
    #[inline]
    pub fn is_class(&self, class: Symbol) -> bool {
        // SAFETY: a pinned object cell is live.
        unsafe { cell::raw_at(self.cell(), CLASS) == class.index() as u64 }
    }

    /// The value of `field`, if set.
    #[inline(always)]
    pub fn get(&self, field: Symbol) -> Option<Value> {
        if self.is_lent() && super::lend::borrowing() {
            return self.get_borrowed(field);
        }
        let w = self.slot_word(field).filter(|&w| w != UNSET)?;
        // SAFETY: the slot of a pinned (live) object holds an immediate or
        // a pointer to a live cell: the collector traces object slots.
        unsafe { super::to_value(w).ok() }
    }

    /// Whether `field` is set.
    #[inline]
    pub fn is_set(&self, field: Symbol) -> bool {
        self.slot_word(field).is_some_and(|w| w != UNSET)
    }

    /// Sets `field`; returns whether it was set before.
    #[inline]
    pub fn set(&self, field: Symbol, value: Value) -> Result<bool, NoSlot> {
        // Boxing may allocate (and collect): this handle keeps the object.
        let w = super::to_word(&value);
        // SAFETY: `w` was made just now, nothing collected since.
        unsafe { self.set_word(field, w) }
    }

    /// Sets `field` to `value` where the object's layout is likely
    /// `layout`, in which the field is at `slot`: one store when it is.
    #[inline(always)]
    pub fn set_at(&self, layout: &'static Layout, slot: u32, field: Symbol, value: &Value) -> Result<(), NoSlot> {
        // Boxing may allocate (and collect): this handle keeps the object.
        let w = super::to_word(value);
        if !std::ptr::eq(self.layout(), layout) || layout.fields().get(slot as usize) != Some(&field) {
            // SAFETY: `w` was made just now, nothing collected since.
            return unsafe { self.set_word(field, w) }.map(|_| ());
        }
        // SAFETY: slot `slot` (checked above) of a live object cell of
        // `layout`; `w` as above.
        unsafe {
            cell::set_word_at(self.cell(), SLOTS + 8 * slot as usize, w);
            seen(self.cell(), slot as usize);
        }
        Ok(())
    }

    /// Sets `field` to word `w`; returns whether it was set before.
    ///
    /// # Safety
    /// `w` is a value's word: not unbound, and if a pointer, to a live cell
    /// of this thread's heap (the object's slot keeps it alive from now
    /// on, but nothing kept it before).
    #[inline]
    pub unsafe fn set_word(&self, field: Symbol, w: Word) -> Result<bool, NoSlot> {
        let k = self.layout().slot(field).ok_or(NoSlot(field))?;
        // SAFETY: slot `k` of a live object cell of this layout.
        unsafe {
            let at = SLOTS + 8 * k;
            let was = cell::word_at(self.cell(), at) != UNSET;
            cell::set_word_at(self.cell(), at, w);
            seen(self.cell(), k);
            Ok(was)
        }
    }
}

/// The cell and byte offset of `field`'s slot in the object word `w`
/// points at, when `w` is an object whose layout has the field.
///
/// # Safety
/// `w` is an immediate or points at a live cell (as for
/// [`super::to_value`]).
#[inline]
unsafe fn slot_of(w: Word, field: Symbol) -> Option<(Cell, usize)> {
    if !super::word::is_pointer(w) {
        return None;
    }
    let c = w.cell();
    // SAFETY: the caller's contract: a pointer word points at a live cell;
    // an object cell has its layout's slots.
    unsafe {
        if cell::kind(c) != OBJECT {
            return None;
        }
        Some((c, SLOTS + 8 * cell::layout(c).slot(field)?))
    }
}

/// The word in `field`'s slot of the object word `w` points at, when `w`
/// is an object with `field` set: a `get` read without a handle (no pin,
/// no value made), what the runtime tries before anything else.
///
/// # Safety
/// `w` is an immediate or points at a live cell (as for
/// [`super::to_value`]).
#[inline]
pub unsafe fn field_word(w: Word, field: Symbol) -> Option<Word> {
    // SAFETY: the caller's contract, and `slot_of` gives a slot of the cell.
    unsafe {
        let (c, offset) = slot_of(w, field)?;
        Some(cell::word_at(c, offset)).filter(|&v| v != UNSET)
    }
}

/// Writes `value` to `field`'s slot of the object word `w` points at, when
/// `w` is an object whose layout has the field; whether it did. The
/// caller has ruled out everything else a `set` checks (the field
/// immutable for the object's class, an unbound value).
///
/// # Safety
/// `w` is an immediate or points at a live cell, and `value` is a value's
/// word: an immediate, or a pointer to a live cell of this thread's heap
/// (the slot keeps it alive from now on).
#[inline]
pub unsafe fn set_field_word(w: Word, field: Symbol, value: Word) -> bool {
    // SAFETY: the caller's contract (for `w` and `value`), and `slot_of`
    // gives a slot of the cell.
    unsafe {
        let Some((c, offset)) = slot_of(w, field) else { return false };
        cell::set_word_at(c, offset, value);
        seen(c, (offset - SLOTS) / 8);
        true
    }
}

/// Shows the heap's row a write just done to slot `k` of object cell `c`
/// ([`super::rows`]: every write to an object's slot but a new cell's
/// first goes through here).
///
/// # Safety
/// `c` is a live object cell with a slot `k` holding a value's word.
#[inline(always)]
unsafe fn seen(c: Cell, k: usize) {
    if super::rows::watched(k) {
        // SAFETY: the caller's contract.
        unsafe { super::rows::after_write(c, k as u32) }
    }
}

/// A word held by Rust code outside the interpreters — a constant of
/// compiled code — which keeps its cell (if it points at one) alive.
pub struct Root(Word);

impl Root {
    /// The word of `v` (boxing it if needed), pinned.
    pub fn new(v: &Value) -> Root {
        let w = super::to_word(v);
        if super::word::is_pointer(w) {
            // SAFETY: a fresh word's cell is live; nothing ran since.
            unsafe { pin(w.cell()) };
        }
        Root(w)
    }

    pub fn word(&self) -> Word {
        self.0
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        if super::word::is_pointer(self.0) {
            // SAFETY: a pinned cell is live; this root's pin is released.
            unsafe { unpin(self.0.cell()) };
        }
    }
}

/// Pins cell `c` once more.
///
/// # Safety
/// `c` is a live cell.
unsafe fn pin(c: Cell) {
    // SAFETY: the caller's contract.
    unsafe {
        let m = cell::meta(c);
        if m < PIN {
            // A store, not a count: pinning and unpinning cells of one
            // block must not wait on each other.
            (*block::block_of(c)).pinned = 1;
        }
        cell::set_meta(c, m + PIN);
    }
}

impl Clone for Obj {
    #[inline]
    fn clone(&self) -> Obj {
        if self.is_lent() {
            return self.clone_lent();
        }
        // SAFETY: a pinned cell is live.
        unsafe { pin(self.cell()) };
        Obj(self.0)
    }
}

/// Releases one pin of cell `c`.
///
/// # Safety
/// `c` is a live cell with a pin this call releases.
unsafe fn unpin(c: Cell) {
    // SAFETY: the caller's contract.
    unsafe { cell::set_meta(c, cell::meta(c) - PIN) }
}

impl Drop for Obj {
    fn drop(&mut self) {
        if !self.is_lent() {
            // SAFETY: a pinned cell is live; this handle's pin is released.
            unsafe { unpin(self.cell()) };
        }
    }
}

impl PartialEq for Obj {
    fn eq(&self, other: &Obj) -> bool {
        self.cell() == other.cell()
    }
}

impl Eq for Obj {}

impl Hash for Obj {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.cell() as usize).hash(state)
    }
}

impl std::fmt::Debug for Obj {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{}#{}>", self.class(), self.id())
    }
}

//! The heap's *row*: a stretch of objects of one class laid out one after
//! another and linked both ways (a BF interpreter's tape of `cell`s with
//! `l` and `r`), which the JIT may assume without reading a link.
//!
//! **The invariant.** When the row is not empty, for `lo ≤ a < hi` in
//! steps of `stride` bytes (the size of an object cell, so the row's
//! objects tile `lo..hi + stride` and no other cell lies there):
//! - the cell at `a` is an object of the row's class;
//! - its `next` slot holds the object at `a + stride`, whose `prev` slot
//!   holds the object at `a`.
//!
//! So any object whose address lies in `lo..=hi` is one of the row's, and
//! from it the links `k` steps either way that stay within the row are
//! known without a load. A trace checks once that the objects a walk
//! visits lie in the row — `guard_row b, lo, hi` (`flowc_ir::GuardKind::
//! Row`): the bytes from `b + lo` to `b + hi` within `self.lo..=self.hi` —
//! and then reads no link of the walk (`flowc_codegen::baseline`).
//!
//! **Keeping it.** Nothing but a write to a link slot can break it (cells
//! never move, a live row object keeps every other one alive through its
//! links, and a new cell never lies on a live one), and every write to a
//! slot of [`Rows::mask`] goes through [`after_write`] once done: the
//! interpreters' and the runtime's sets ([`super::Obj`]'s setters,
//! [`super::set_field_word`]) and compiled traces' (the baseline tier's
//! inline `set` tests the mask, a bit per slot, and calls the runtime
//! for an object within the row). A write that keeps the links, or sets
//! the link of an end to the next cell laid out past it (the tape growing
//! by one: it *extends* the row), keeps the row; any other write to a
//! link of a row object empties it. A collection empties it as well, so
//! that the cells of a row that died are never taken for it once reused.
//! An empty row fails every `guard_row`, whose exits go on as the program
//! does; a later recording finds the row again ([`establish`]).
//!
//! **Finding it.** The trace recorder, where it finds a link laid out
//! next to the object it was read from (`flowc_trace::record`,
//! `in_a_row`), asks for the row around the two ([`establish`]): the
//! first such pair fixes its *shape* — class, the two link slots, the
//! stride — for the heap's life; the row is then the longest stretch
//! around the pair that holds the invariant, found by walking it.
//!
//! The fields compiled code reads (`mask`, `lo`, `hi`) come first, at
//! [`MASK`], [`LO`] and [`HI`] past [`super::rows_offset`] in the
//! [`super::Heap`].

use super::block::BLOCK_BYTES;
use super::cell::{self, Cell, CLASS, LAYOUT, OBJECT, SLOTS};
use super::word::{self, Word};
use super::Obj;
use crate::Symbol;

/// Byte offsets in [`Rows`] of what compiled code reads.
pub const MASK: i32 = 0;
pub const LO: i32 = 8;
pub const HI: i32 = 16;

/// The row's shape: fixed by the first row found.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// The program's layout (a row found for another program's objects
    /// is forgotten).
    pub layout: &'static super::Layout,
    pub class: Symbol,
    /// The slots (indices in the program's layout) of the link to the
    /// object `stride` bytes past, and of the one back.
    pub next: u32,
    pub prev: u32,
    pub stride: usize,
}

/// The row of a heap (module docs).
#[repr(C)]
#[derive(Debug)]
pub struct Rows {
    /// A bit per slot whose writes [`after_write`] must see: the shape's
    /// two links (0 before any row was found).
    pub mask: u64,
    /// The addresses of the row's first and last objects; `lo > hi` when
    /// empty.
    pub lo: usize,
    pub hi: usize,
    shape: Option<Shape>,
    /// How many times a row was found, extended, and emptied.
    pub stats: RowStats,
}

/// What became of the heap's row ([`Rows`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowStats {
    pub found: u64,
    pub extended: u64,
    pub emptied: u64,
}

impl Default for Rows {
    fn default() -> Rows {
        Rows { mask: 0, lo: usize::MAX, hi: 0, shape: None, stats: RowStats::default() }
    }
}

impl Rows {
    /// Whether the row holds the object at `address`.
    pub fn contains(&self, address: usize) -> bool {
        self.lo <= address && address <= self.hi
    }

    pub fn shape(&self) -> Option<Shape> {
        self.shape
    }

    /// The row's first and last addresses, if it is not empty.
    pub fn bounds(&self) -> Option<(usize, usize)> {
        (self.lo <= self.hi).then_some((self.lo, self.hi))
    }

    /// Empties the row (module docs); its shape stays.
    pub fn empty(&mut self) {
        if self.lo <= self.hi {
            self.stats.emptied += 1;
        }
        self.lo = usize::MAX;
        self.hi = 0;
    }

    /// Forgets the row, its shape and what became of it: a new run, or
    /// another program's objects (whose layout may put other fields in
    /// those slots).
    pub fn reset(&mut self) {
        *self = Rows::default();
    }
}

/// The object cell a slot word points at, if it is one of `class` laid
/// out by `layout`.
///
/// # Safety
/// `w` is a slot's word of a live object.
unsafe fn object_of(w: Word, class: Symbol, layout: u64) -> Option<Cell> {
    if !word::is_pointer(w) {
        return None;
    }
    let c = w.cell();
    // SAFETY: the caller's contract: a pointer word in a slot points at a
    // live cell.
    unsafe {
        (cell::kind(c) == OBJECT && cell::raw_at(c, CLASS) == class.index() as u64 && cell::raw_at(c, LAYOUT) == layout)
            .then_some(c)
    }
}

/// The word in slot `k` of object cell `c`.
///
/// # Safety
/// `c` is a live object cell with a slot `k`.
unsafe fn slot(c: Cell, k: u32) -> Word {
    // SAFETY: the caller's contract.
    unsafe { cell::word_at(c, SLOTS + 8 * k as usize) }
}

/// Whether `a` and `b` (`b` the object `stride` bytes past `a`) are a
/// pair of the row: `a`'s next is `b` and `b`'s prev is `a`, both of the
/// class, in one block.
///
/// # Safety
/// `a` is a live object cell of the shape's layout.
unsafe fn linked(a: Cell, shape: Shape, layout: u64) -> Option<Cell> {
    // SAFETY: the caller's contract; `object_of` reads live cells only.
    unsafe {
        let b = object_of(slot(a, shape.next), shape.class, layout)?;
        let fits = b as usize == a as usize + shape.stride && (a as usize ^ b as usize) < BLOCK_BYTES;
        (fits && slot(b, shape.prev) == Word::of_cell(a)).then_some(b)
    }
}

/// The object laid out before `b` that pairs with it ([`linked`]): the
/// one its `prev` holds.
///
/// # Safety
/// As for [`linked`].
unsafe fn before(b: Cell, shape: Shape, layout: u64) -> Option<Cell> {
    // SAFETY: the caller's contract.
    unsafe {
        let a = object_of(slot(b, shape.prev), shape.class, layout)?;
        (a as usize + shape.stride == b as usize && linked(a, shape, layout) == Some(b)).then_some(a)
    }
}

/// Finds the row around `from` and the object `link` its slot `field`
/// holds, laid out next to it (module docs): fixes the shape if none is
/// yet (`field` and the slot of `link` that holds `from` back are its
/// links), else the pair must be of it; the row becomes the longest
/// stretch around the pair that holds the invariant, unless the row
/// already holds both, or holds objects that stretch does not (one row
/// at a time: a program walking two chains keeps the first it was found
/// walking). Whether the row now holds both, where the link is of the
/// row's shape.
pub fn establish(from: &Obj, link: &Obj, field: Symbol) -> Found {
    super::with(|h| {
        let relevant = h.rows.shape.is_some_and(|s| {
            std::ptr::eq(s.layout, from.layout())
                && from.is_class(s.class)
                && from.layout().slot(field).is_some_and(|k| k as u32 == s.next || k as u32 == s.prev)
        });
        match h.rows_establish(from, link, field) {
            true => Found::Held,
            false if relevant => Found::Missed,
            false => Found::Other,
        }
    })
}

/// What [`establish`] found of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The row holds the link and its object.
    Held,
    /// A link of the row's class and fields that the row does not hold:
    /// a walk along it is no walk along the row.
    Missed,
    /// No link of the row's shape (another class, or a chain no row is
    /// made of): nothing the row says of walks along it.
    Other,
}

impl super::Heap {
    /// What the heap's row did.
    pub fn row_stats(&self) -> RowStats {
        self.rows.stats
    }

    fn rows_establish(&mut self, from: &Obj, link: &Obj, field: Symbol) -> bool {
        let (a, b) = (from.address(), link.address());
        if self.rows.contains(a) && self.rows.contains(b) {
            return true;
        }
        let layout = from.layout();
        let words = layout.words();
        let Some(k) = layout.slot(field) else { return false };
        let stride = words * 8;
        if !from.is_class(link.class()) || a.abs_diff(b) != stride || (a ^ b) >= BLOCK_BYTES {
            return false;
        }
        // The slot of `link` that holds `from` back.
        let back = (0..layout.fields().len() as u32).filter(|&j| j != k as u32).find(|&j| {
            // SAFETY: `link` is pinned, so live, and laid out by `layout`.
            unsafe { slot(link_cell(link), j) == from.word() }
        });
        let Some(back) = back else { return false };
        let (next, prev, first) = if b > a { (k as u32, back, a) } else { (back, k as u32, b) };
        let shape = Shape { layout, class: from.class(), next, prev, stride };
        match self.rows.shape {
            Some(s) if !std::ptr::eq(s.layout, layout) => {
                self.rows.reset();
                self.rows.shape = Some(shape);
            }
            Some(s) if (s.class, s.next, s.prev, s.stride) != (shape.class, next, prev, stride) => return false,
            _ => self.rows.shape = Some(shape),
        }
        let layout = layout as *const _ as u64;
        let first = first as Cell;
        // SAFETY: `first` is `from` or `link`, both pinned (live) objects
        // of the layout; `linked` returns only live object cells of it
        // (a slot of a live object keeps what it points at alive).
        unsafe {
            if linked(first, shape, layout).is_none() {
                return false;
            }
            // Back from the pair while the cell before links to it both ways.
            let mut lo = first;
            while let Some(p) = before(lo, shape, layout) {
                lo = p;
            }
            let mut hi = first;
            while let Some(n) = linked(hi, shape, layout) {
                hi = n;
            }
            // One row at a time: another stretch replaces it only where it
            // holds it (the code of the walks along it keeps holding).
            if let Some((old_lo, old_hi)) = self.rows.bounds() {
                if (lo as usize) > old_lo || (hi as usize) < old_hi {
                    return false;
                }
            }
            self.rows.lo = lo as usize;
            self.rows.hi = hi as usize;
        }
        self.rows.mask = (1 << shape.next) | (1 << shape.prev);
        self.rows.stats.found += 1;
        true
    }

    /// [`after_write`] on this heap.
    ///
    /// # Safety
    /// As for [`after_write`].
    unsafe fn rows_after_write(&mut self, c: Cell, k: u32) {
        let rows = &mut self.rows;
        let (Some(shape), true) = (rows.shape, rows.contains(c as usize)) else { return };
        // SAFETY: `c` lies in the row, so is one of its objects (module
        // docs), of the shape's layout; `linked` reads live cells only.
        unsafe {
            let layout = cell::raw_at(c, LAYOUT);
            let w = slot(c, k);
            let keeps = if k == shape.next {
                c as usize == rows.hi || w.bits() == c as u64 + shape.stride as u64
            } else if k == shape.prev {
                c as usize == rows.lo || w.bits() == c as u64 - shape.stride as u64
            } else {
                true
            };
            if !keeps {
                rows.empty();
                return;
            }
            // The end set to the next cell laid out past it: the row grows.
            if k == shape.next && c as usize == rows.hi {
                while let Some(n) = linked(rows.hi as Cell, shape, layout) {
                    rows.hi = n as usize;
                    rows.stats.extended += 1;
                }
            } else if k == shape.prev && c as usize == rows.lo {
                while let Some(p) = before(rows.lo as Cell, shape, layout) {
                    rows.lo = p as usize;
                    rows.stats.extended += 1;
                }
            }
        }
    }
}

/// The cell of a pinned handle.
fn link_cell(o: &Obj) -> Cell {
    o.address() as Cell
}

/// Sees a write done to slot `k` of object cell `c` ([`Rows::mask`] has
/// bit `k`): the row stays, grows or is emptied (module docs).
///
/// # Safety
/// `c` is a live object cell with a slot `k`, whose word is a value's.
#[inline]
pub unsafe fn after_write(c: Cell, k: u32) {
    // SAFETY: the caller's contract.
    super::with(|h| unsafe { h.rows_after_write(c, k) })
}

/// Whether a write to slot `k` must be seen by [`after_write`]: one read
/// of this thread's heap.
#[inline(always)]
pub fn watched(k: usize) -> bool {
    k < 64 && super::with(|h| h.rows.mask >> k & 1 != 0)
}

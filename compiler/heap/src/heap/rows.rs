//! The heap's *rows*: stretches of objects of one class laid out one after
//! another and linked both ways (a BF interpreter's tape of `cell`s with
//! `l` and `r`), which the JIT may assume without reading a link. A heap
//! keeps up to [`ROWS`] of them, each of its own shape (an interpreter's
//! tape, and its instruction objects where they are linked both ways).
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
//! slot of [`Rows::mask`] of an object a row may hold goes through
//! [`after_write`] once done (native code leaves out writes to an object
//! its block made with nothing between that could have made a row grow
//! over it: no row holds a new cell until a write the rows see links it
//! to one): the
//! interpreters' and the runtime's sets ([`super::Obj`]'s setters,
//! [`super::set_field_word`]) and compiled traces' (the baseline tier's
//! inline `set` tests the mask, a bit per slot, and calls the runtime
//! for an object within the row). A write that keeps the links, or sets
//! the link of an end to the next cell laid out past it (the tape growing
//! by one: it *extends* the row), keeps the row; any other write to a
//! link of a row object empties it. A collection empties a row that died
//! (its objects keep one another alive through their links, so its first
//! object's mark is the row's), so that its cells are never taken for it
//! once handed out again; a live row stays.
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
//! What compiled code reads (the mask, each row's first and last
//! addresses) comes first, at [`MASK`], [`lo`] and [`hi`] past
//! [`super::rows_offset`] in the [`super::Heap`].
//!
//! **Walks in native code.** Code compiled ahead of time does not know
//! which row a walk goes along, so the rows are also kept per link slot
//! ([`Rows::along`], at [`along`]): for slot `k`, the bounds of the row
//! linked through it and the step in bytes one link along it takes
//! (`+stride` through `next`, `-stride` through `prev`), or bounds no
//! address lies in. A `walk obj, f, n` (`flowc_ir::InstKind::Walk`) is
//! `obj + n * step` where `obj` and that address lie within the bounds;
//! else 0 (the chain the walk stands before runs) where a row runs
//! through the slot, and where none does the runtime walks link by link
//! ([`walk_word`]) and asks for the row there ([`establish`]) as often as
//! the cells it scans have been paid for by walks it did not find in a
//! row (a program walking chains that are no row keeps scanning a
//! bounded share of its work); finding none, native code answers 0
//! without asking for the next [`Along::wait`] walks, twice as many each
//! time.

use super::block::BLOCK_BYTES;
use super::cell::{self, Cell, CLASS, LAYOUT, OBJECT, SLOTS};
use super::word::{self, Word};
use super::Obj;
use crate::Symbol;

/// How many rows a heap keeps.
pub const ROWS: usize = 4;

/// Byte offset in [`Rows`] of the mask compiled code tests.
pub const MASK: i32 = 0;

/// The slots a row's links may lie in: those whose bit in the mask a
/// 32-bit immediate tests (a program of more fields finds no row linked
/// through the others).
pub const MASK_SLOTS: u32 = 31;

/// Byte offset in [`Rows`] of row `k`'s first object's address.
pub const fn lo(k: usize) -> i32 {
    8 + 16 * k as i32
}

/// Byte offset in [`Rows`] of row `k`'s last object's address.
pub const fn hi(k: usize) -> i32 {
    16 + 16 * k as i32
}

/// A row's shape: fixed by the first pair found of it.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// The program's layout (rows found for another program's objects
    /// are forgotten).
    pub layout: &'static super::Layout,
    pub class: Symbol,
    /// The slots (indices in the program's layout) of the link to the
    /// object `stride` bytes past, and of the one back.
    pub next: u32,
    pub prev: u32,
    pub stride: usize,
}

impl Shape {
    fn same(&self, other: &Shape) -> bool {
        (self.class, self.next, self.prev, self.stride) == (other.class, other.next, other.prev, other.stride)
    }

    /// Whether slot `k` is one of the shape's links.
    fn links(&self, k: u32) -> bool {
        k == self.next || k == self.prev
    }
}

/// Byte offset in [`Rows`] of link slot `k`'s [`Along`].
pub const fn along(k: u32) -> i32 {
    8 + 16 * ROWS as i32 + 32 * k as i32
}

/// The row linked through one slot, as native code reads it
/// ([`Rows::along`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Along {
    /// The row's first and last objects' addresses (`lo > hi`: none).
    pub lo: usize,
    pub hi: usize,
    /// Bytes from an object to the one its slot links to; never 0, nor
    /// where no row is (native code's check of a walk, which reads no
    /// emptiness, fails there because a walk's distance is no 0 or 1:
    /// `flowc_codegen`'s `Lowerer::walk`).
    pub step: isize,
    /// While no row is linked through the slot, how many more walks
    /// along it native code answers 0 without asking the runtime
    /// ([`walk_word`] sets it, longer each time it finds no row).
    pub wait: i64,
}

/// No row: bounds no address lies within, and a step of a word (any
/// step but 0 would do, see [`Along::step`]).
const NOWHERE: Along = Along { lo: usize::MAX, hi: 0, step: 8, wait: 0 };
const _: () = assert!(NOWHERE.step != 0 && NOWHERE.lo > NOWHERE.hi);

// What native code reads where (`flowc_codegen` `Lowerer::walk`).
const _: () = assert!(std::mem::offset_of!(Rows, along) == along(0) as usize);
const _: () = assert!(std::mem::size_of::<Along>() == (along(1) - along(0)) as usize);
const _: () = assert!(std::mem::offset_of!(Rows, bounds) == lo(0) as usize);

/// The longest wait between two asks for a row ([`Along::wait`]).
const MOST_WAIT: i64 = 1 << 12;

/// A row's first and last objects' addresses; `lo > hi` when empty.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub lo: usize,
    pub hi: usize,
}

const EMPTY: Bounds = Bounds { lo: usize::MAX, hi: 0 };

/// The rows of a heap (module docs).
#[repr(C)]
#[derive(Debug)]
pub struct Rows {
    /// A bit per slot whose writes [`after_write`] must see: the rows'
    /// links (0 before any row was found).
    pub mask: u64,
    pub bounds: [Bounds; ROWS],
    /// Per link slot, the row linked through it (module docs): kept by
    /// every change of `bounds` or `shapes` (`Rows::sync`).
    pub along: [Along; MASK_SLOTS as usize],
    shapes: [Option<Shape>; ROWS],
    /// The links the runtime's walks read ([`walk_word`]) less the cells
    /// [`establish`] scanned: it scans only while this is not negative.
    credit: i64,
    /// Per link slot, the next [`Along::wait`] where a walk finds no row.
    backoff: [i64; MASK_SLOTS as usize],
    /// How many times rows were found, extended, and emptied.
    pub stats: RowStats,
}

/// What became of the heap's rows ([`Rows`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowStats {
    pub found: u64,
    pub extended: u64,
    pub emptied: u64,
}

impl Default for Rows {
    fn default() -> Rows {
        Rows {
            mask: 0,
            bounds: [EMPTY; ROWS],
            along: [NOWHERE; MASK_SLOTS as usize],
            shapes: [None; ROWS],
            credit: 0,
            backoff: [0; MASK_SLOTS as usize],
            stats: RowStats::default(),
        }
    }
}

impl Rows {
    /// Whether row `k` holds the object at `address`.
    pub fn contains(&self, k: usize, address: usize) -> bool {
        self.bounds[k].lo <= address && address <= self.bounds[k].hi
    }

    /// Row `k`'s shape, once fixed.
    pub fn shape(&self, k: usize) -> Option<Shape> {
        self.shapes[k]
    }

    /// Row `k`'s first and last addresses, if it is not empty.
    pub fn bounds(&self, k: usize) -> Option<(usize, usize)> {
        let b = self.bounds[k];
        (b.lo <= b.hi).then_some((b.lo, b.hi))
    }

    /// Empties row `k` (module docs); its shape stays.
    pub fn empty(&mut self, k: usize) {
        if self.bounds(k).is_some() {
            self.stats.emptied += 1;
        }
        self.bounds[k] = EMPTY;
        self.sync();
    }

    /// Writes [`Rows::along`] from the rows' shapes and bounds: the first
    /// row linked through a slot has it.
    fn sync(&mut self) {
        for a in &mut self.along {
            *a = Along { wait: a.wait, ..NOWHERE };
        }
        // Rows that hold objects last, so that they win over empty ones;
        // of each kind the lowest-numbered.
        let order = (0..ROWS)
            .rev()
            .filter(|&r| self.bounds(r).is_none())
            .chain((0..ROWS).rev().filter(|&r| self.bounds(r).is_some()));
        for r in order.collect::<Vec<_>>() {
            let (Some(s), b) = (self.shapes[r], self.bounds[r]) else { continue };
            let stride = s.stride as isize;
            for (k, step) in [(s.next, stride), (s.prev, -stride)] {
                let a = &mut self.along[k as usize];
                *a = Along { lo: b.lo, hi: b.hi, step, wait: a.wait };
            }
        }
    }

    /// Grows row `r` of shape `shape` past either end while the cell laid
    /// out there pairs with it.
    ///
    /// # Safety
    /// Row `r` is not empty, its objects live cells of the shape's layout.
    unsafe fn grow(&mut self, r: usize, shape: Shape) {
        let layout = shape.layout as *const _ as u64;
        // SAFETY: the caller's contract; `linked` and `before` return
        // live object cells of the layout only.
        unsafe {
            while let Some(n) = linked(self.bounds[r].hi as Cell, shape, layout) {
                self.bounds[r].hi = n as usize;
                self.stats.extended += 1;
            }
            while let Some(p) = before(self.bounds[r].lo as Cell, shape, layout) {
                self.bounds[r].lo = p as usize;
                self.stats.extended += 1;
            }
        }
        self.sync();
    }

    /// Empties every row.
    pub fn empty_all(&mut self) {
        (0..ROWS).for_each(|k| self.empty(k));
    }

    /// Forgets the rows, their shapes and what became of them: a new run,
    /// or another program's objects (whose layout may put other fields in
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
/// holds, laid out next to it (module docs): the row of the pair's shape
/// (`field`, and the slot of `link` that holds `from` back, are its
/// links), fixed in a free row if no row has it yet, becomes the longest
/// stretch around the pair that holds the invariant — unless it already
/// holds both, or holds objects that stretch does not (a row at a time
/// per shape: a program walking two chains of one shape keeps the first
/// it was found walking).
pub fn establish(from: &Obj, link: &Obj, field: Symbol) -> Found {
    super::with(|h| h.rows_establish(from, link, field))
}

/// What [`establish`] found of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Row `k` holds the link and its object.
    Held(usize),
    /// A link of the class and a field of the rows in the mask (bit `k`
    /// for row `k`) that they do not hold: a walk along it is no walk
    /// along them.
    Missed(u32),
    /// No link of a row's shape (another class, or a chain no row is made
    /// of): nothing the rows say of walks along it.
    Other,
}

impl super::Heap {
    /// What the heap's rows did.
    pub fn row_stats(&self) -> RowStats {
        self.rows.stats
    }

    fn rows_establish(&mut self, from: &Obj, link: &Obj, field: Symbol) -> Found {
        let layout = from.layout();
        if self.rows.shapes.iter().flatten().any(|s| !std::ptr::eq(s.layout, layout)) {
            // Another program's rows (a run forgets them when it starts,
            // `Rows::reset`): a row's number keeps its shape while code
            // that checks it may run.
            return Found::Other;
        }
        let Some(k) = layout.slot(field).map(|k| k as u32) else { return Found::Other };
        // The rows whose class and links the pair's are.
        let relevant: u32 = (0..ROWS)
            .filter(|&r| self.rows.shapes[r].is_some_and(|s| from.is_class(s.class) && s.links(k)))
            .fold(0, |m, r| m | 1 << r);
        let missed = if relevant == 0 { Found::Other } else { Found::Missed(relevant) };
        let (a, b) = (from.address(), link.address());
        let stride = layout.words() * 8;
        if !from.is_class(link.class()) || a.abs_diff(b) != stride || (a ^ b) >= BLOCK_BYTES {
            return missed;
        }
        // The slot of `link` that holds `from` back.
        let back = (0..layout.fields().len() as u32).filter(|&j| j != k).find(|&j| {
            // SAFETY: `link` is pinned, so live, and laid out by `layout`.
            unsafe { slot(link_cell(link), j) == from.word() }
        });
        let Some(back) = back else { return missed };
        let (next, prev, first) = if b > a { (k, back, a) } else { (back, k, b) };
        if next >= MASK_SLOTS || prev >= MASK_SLOTS {
            // Compiled code tests a slot's bit with a 32-bit immediate.
            return missed;
        }
        let shape = Shape { layout, class: from.class(), next, prev, stride };
        let r = match self.rows.shapes.iter().position(|s| s.is_some_and(|s| s.same(&shape))) {
            Some(r) => r,
            None => match self.rows.shapes.iter().position(Option::is_none) {
                Some(r) => r,
                None => return missed,
            },
        };
        if self.rows.contains(r, a) && self.rows.contains(r, b) {
            return Found::Held(r);
        }
        let missed = Found::Missed(relevant | 1 << r);
        let layout = layout as *const _ as u64;
        let first = first as Cell;
        // SAFETY: `first` is `from` or `link`, both pinned (live) objects
        // of the layout; `linked` and `before` return only live object
        // cells of it (a slot of a live object keeps what it points at
        // alive).
        let (lo, hi) = unsafe {
            if linked(first, shape, layout).is_none() {
                return missed;
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
            (lo as usize, hi as usize)
        };
        self.rows.credit -= ((hi - lo) / stride) as i64 + 1;
        // A row at a time per shape: another stretch replaces it only
        // where it holds it (the code of the walks along it keeps holding).
        if let Some((old_lo, old_hi)) = self.rows.bounds(r) {
            if lo > old_lo || hi < old_hi {
                return missed;
            }
        }
        self.rows.shapes[r] = Some(shape);
        self.rows.bounds[r] = Bounds { lo, hi };
        self.rows.mask |= (1 << shape.next) | (1 << shape.prev);
        self.rows.stats.found += 1;
        self.rows.sync();
        Found::Held(r)
    }

    /// [`after_write`] on this heap.
    ///
    /// # Safety
    /// As for [`after_write`].
    unsafe fn rows_after_write(&mut self, c: Cell, k: u32) {
        for r in 0..ROWS {
            let rows = &mut self.rows;
            let Some(shape) = rows.shapes[r].filter(|s| s.links(k)) else { continue };
            if !rows.contains(r, c as usize) {
                // A cell laid out past an end, whose link back was the
                // write the row waited for (its end's link came first).
                let Some((lo, hi)) = rows.bounds(r) else { continue };
                let past = (k == shape.prev && c as usize == hi + shape.stride)
                    || (k == shape.next && c as usize + shape.stride == lo);
                if past {
                    // SAFETY: `hi` and `lo` are live row objects, of the
                    // shape's layout; `linked` and `before` read live
                    // cells only (and check the cell they find).
                    unsafe { rows.grow(r, shape) };
                }
                continue;
            }
            let Bounds { lo, hi } = rows.bounds[r];
            // SAFETY: `c` lies in the row, so is one of its objects
            // (module docs), of the shape's layout; `linked` and `before`
            // read live cells only.
            unsafe {
                let w = slot(c, k);
                let keeps = if k == shape.next {
                    c as usize == hi || w.bits() == c as u64 + shape.stride as u64
                } else {
                    c as usize == lo || w.bits() == c as u64 - shape.stride as u64
                };
                if !keeps {
                    rows.empty(r);
                    continue;
                }
                // An end set to the next cell laid out past it: the row grows.
                if (k == shape.next && c as usize == hi) || (k == shape.prev && c as usize == lo) {
                    rows.grow(r, shape);
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
/// bit `k`): each row holding `c` of whose links `k` is stays, grows or
/// is emptied (module docs).
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

/// The word `links` links along `field` from `w`: the object reached by
/// reading the field that many times, each link an object, or the
/// integer 0's word where `w` or a link on the way is no object or has
/// the field unset (`flowc_ir::InstKind::Walk`, whose native code comes
/// here where [`Rows::along`] does not cover the walk). Where the walk's
/// first link lies next to its object and the walks that came here have
/// paid for the cells scanned so far (a link each), asks for the row
/// around the two ([`establish`]).
///
/// # Safety
/// `w` is an immediate or points at a live cell (as for
/// [`super::to_value`]).
pub unsafe fn walk_word(w: Word, field: Symbol, links: u32) -> Word {
    let object = |x: Word| {
        // SAFETY: the caller's contract, and each link is a slot's word
        // of a live object, so points at a live cell.
        word::is_pointer(x) && unsafe { cell::kind(x.cell()) } == OBJECT
    };
    if !object(w) {
        return word::ZERO;
    }
    // SAFETY: `w` is an object's word.
    let layout = unsafe { cell::layout(w.cell()) };
    let mut at = w;
    let mut first = None;
    for _ in 0..links {
        // SAFETY: as above.
        match unsafe { super::field_word(at, field) }.filter(|&n| object(n)) {
            Some(n) => {
                first.get_or_insert(n);
                at = n;
            }
            None => {
                at = word::ZERO;
                break;
            }
        }
    }
    let paid = super::with(|h| {
        h.rows.credit = h.rows.credit.saturating_add(i64::from(links));
        h.rows.credit >= 0
    });
    let stride = layout.words() * 8;
    if let Some(link) = first.filter(|l| paid && w.bits().abs_diff(l.bits()) as usize == stride) {
        // SAFETY: both are words of live objects.
        if let (Some(from), Some(to)) = unsafe { (super::to_object(w), super::to_object(link)) } {
            let _ = establish(&from, &to, field);
        }
    }
    // Native code asks again at once where a row now runs through the
    // slot, else after a wait twice as long as the last.
    if let Some(k) = layout.slot(field).filter(|&k| k < MASK_SLOTS as usize) {
        super::with(|h| {
            let rows = &mut h.rows;
            if rows.along[k].lo <= rows.along[k].hi {
                rows.backoff[k] = 0;
            } else {
                rows.along[k].wait = rows.backoff[k];
                rows.backoff[k] = (2 * rows.backoff[k] + 1).min(MOST_WAIT);
            }
        });
    }
    at
}

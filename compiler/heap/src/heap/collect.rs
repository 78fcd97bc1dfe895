//! Mark and sweep ([`Heap::collect`]).

use std::time::Instant;

use super::block::{self, Block, BLOCK_BYTES};
use super::cell::{self, Cell, BOXED_KIND, FREE, KIND_MASK, MARK, OBJECT, PIN, SLOTS};
use super::word::{self, Word};
use super::{FreeRun, Heap, MIN_THRESHOLD};

/// A hook that marks roots outside the heap: called with its data and the
/// marker during a collection.
pub type RootsFn = unsafe fn(*mut (), &mut Marker);

/// Marks cells during a collection.
pub struct Marker {
    stack: Vec<Cell>,
}

impl Marker {
    /// Marks what word `w` refers to, if it is a pointer.
    ///
    /// # Safety
    /// A pointer word must point at a live cell of this thread's heap.
    pub unsafe fn mark_word(&mut self, w: Word) {
        if word::is_pointer(w) {
            // SAFETY: the caller's contract.
            unsafe { self.mark(w.cell()) }
        }
    }

    /// # Safety
    /// `c` is a live cell.
    unsafe fn mark(&mut self, c: Cell) {
        // SAFETY: the caller's contract.
        unsafe {
            let m = cell::meta(c);
            if m & MARK != 0 {
                return;
            }
            cell::set_meta(c, m | MARK);
            (*block::block_of(c)).live += 1;
            if m & KIND_MASK == OBJECT {
                self.stack.push(c);
            }
        }
    }

    /// Marks everything reachable from the cells on the stack.
    ///
    /// # Safety
    /// The heap's invariant: object slots hold words, pointers among them
    /// pointing at live cells.
    unsafe fn drain(&mut self) {
        while let Some(c) = self.stack.pop() {
            // SAFETY: `c` is a live object cell; its slots are words.
            unsafe {
                let n = cell::layout(c).fields().len();
                for k in 0..n {
                    self.mark_word(cell::word_at(c, SLOTS + 8 * k));
                }
            }
        }
    }
}

impl Heap {
    /// Collects: marks from the roots, frees what is not marked.
    pub fn collect(&mut self) {
        if self.collecting {
            return;
        }
        self.collecting = true;
        let started = Instant::now();
        // What the bump runs did not use is free cells already; the sweep
        // finds them again.
        let unused: usize = self.runs.iter().map(|r| r.limit - r.ptr).sum();
        self.stats.bytes_allocated -= unused as u64;
        self.runs = [FreeRun::default(); block::MAX_WORDS + 1];
        for class in &mut self.classes {
            class.runs.clear();
        }
        let blocks: Vec<Block> =
            self.classes.iter().flat_map(|c| c.blocks.iter().copied()).chain(self.large.iter().copied()).collect();
        // SAFETY: every block in the lists is live; cells hold what their
        // meta says.
        unsafe {
            for &b in &blocks {
                (*b).live = 0;
            }
            let mut marker = Marker { stack: Vec::new() };
            for &b in &blocks {
                if (*b).pinned == 0 {
                    continue;
                }
                let mut pinned = 0;
                for k in 0..(*b).cells {
                    let c = block::cell(b, k);
                    let m = cell::meta(c);
                    if m & KIND_MASK != FREE && m >= PIN {
                        marker.mark(c);
                        pinned = 1;
                    }
                }
                (*b).pinned = pinned;
            }
            if let Some((roots, data)) = self.roots {
                roots(data, &mut marker);
            }
            marker.drain();
            // The cells of a row that dies may be handed out again
            // (`rows`, "Keeping it"): each row object keeps the others
            // through its links, so its first one's mark is the row's.
            for r in 0..super::rows::ROWS {
                if let Some((lo, _)) = self.rows.bounds(r) {
                    if cell::meta(lo as Cell) & MARK == 0 {
                        self.rows.empty(r);
                    }
                }
            }
            let live = self.sweep();
            self.stats.live_bytes = live as u64;
            self.threshold = live.max(MIN_THRESHOLD);
        }
        self.handed_out = 0;
        self.stats.collections += 1;
        self.stats.gc_time += started.elapsed();
        self.collecting = false;
        if self.stress {
            if let Err(e) = self.verify() {
                panic!("heap verification failed after a collection: {e}");
            }
        }
    }

    /// Frees unmarked cells and unmarks the others; makes free runs; gives
    /// empty blocks back. Returns the bytes of live cells.
    ///
    /// # Safety
    /// After marking, as [`Heap::collect`] does it.
    unsafe fn sweep(&mut self) -> usize {
        let mut live_bytes = 0;
        for words in 1..self.classes.len() {
            let blocks = std::mem::take(&mut self.classes[words].blocks);
            let mut kept = Vec::with_capacity(blocks.len());
            for b in blocks {
                // SAFETY: a live block of this class.
                unsafe {
                    let live = (*b).live;
                    if live == 0 {
                        // Only boxed cells need more than their block back.
                        if words == cell::BOXED_WORDS {
                            drop_boxed_cells(b);
                        }
                        self.spare.push(b);
                        continue;
                    }
                    live_bytes += live * words * 8;
                    let mut run: Option<usize> = None;
                    for k in 0..(*b).cells {
                        let c = block::cell(b, k);
                        let m = cell::meta(c);
                        let free = if m & MARK != 0 {
                            cell::set_meta(c, m & !MARK);
                            false
                        } else {
                            if m & KIND_MASK == BOXED_KIND {
                                std::ptr::drop_in_place(c.add(cell::BOXED / 8) as *mut crate::value::Value);
                            }
                            cell::set_meta(c, 0);
                            true
                        };
                        match (free, run) {
                            (true, None) => run = Some(c as usize),
                            (false, Some(start)) => {
                                self.classes[words].runs.push((start, c as usize));
                                run = None;
                            }
                            _ => {}
                        }
                    }
                    if let Some(start) = run {
                        self.classes[words].runs.push((start, block::cells_end(b)));
                    }
                    (*b).live = 0;
                    kept.push(b);
                }
            }
            self.classes[words].blocks = kept;
            // Allocate from the fullest blocks' runs last: runs are popped
            // from the end, so the first blocks fill up first.
            self.classes[words].runs.reverse();
        }
        let large = std::mem::take(&mut self.large);
        for b in large {
            // SAFETY: a live large block, one cell.
            unsafe {
                let c = block::cell(b, 0);
                let m = cell::meta(c);
                if m & MARK != 0 {
                    cell::set_meta(c, m & !MARK);
                    live_bytes += (*b).cell_words * 8;
                    (*b).live = 0;
                    self.large.push(b);
                } else {
                    drop_boxed_cells(b);
                    self.held -= (*b).bytes;
                    block::free_block(b);
                }
            }
        }
        // Keep spare blocks for about what the next cycle allocates; give
        // the rest back.
        let keep = (self.threshold.max(live_bytes) / BLOCK_BYTES).max(4);
        while self.spare.len() > keep {
            let b = self.spare.pop().expect("more than `keep`");
            self.held -= BLOCK_BYTES;
            // SAFETY: spare blocks have no cell in use.
            unsafe { block::free_block(b) };
        }
        live_bytes
    }
}

/// Drops the values of block `b`'s boxed cells and marks them free.
///
/// # Safety
/// `b` is a live block whose cells are not used again as they were.
pub(super) unsafe fn drop_boxed_cells(b: Block) {
    // SAFETY: the caller's contract.
    unsafe {
        for k in 0..(*b).cells {
            let c = block::cell(b, k);
            if cell::kind(c) == BOXED_KIND {
                std::ptr::drop_in_place(c.add(cell::BOXED / 8) as *mut crate::value::Value);
                cell::set_meta(c, 0);
            }
        }
    }
}

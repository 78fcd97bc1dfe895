//! The heap: where objects, and the big integers and lists compiled code
//! holds, live for every engine — the interpreters, native code, traces
//! and built executables — and the collector that frees them.
//!
//! **Values.** Compiled code and object fields hold values as tagged words
//! ([`word`]): integers and atoms inline, everything else a pointer to a
//! *cell* of this heap ([`cell`]: objects, and boxed big integers and
//! lists). Rust code holds objects through [`Obj`] handles — what
//! [`crate::Value::Object`] holds — which *pin* their cell.
//!
//! **Allocation.** Cells come in size classes (a cell's size in words);
//! each class allocates by bumping a pointer through a *run* of free cells
//! of one [`block`], [`Heap::runs`], which compiled code does inline (it
//! reads and writes the run at the offsets [`run_offset`] gives); the
//! slow path takes the next run, makes a block, or collects. All objects of
//! a program have one size ([`Layout`]), so there is no fragmentation to
//! speak of.
//!
//! **Collection** ([`collect`]) is precise mark and sweep, and does not
//! move cells. The roots are the pinned cells (handles held by the
//! interpreters, the JIT, the code generator's constants) and, while
//! compiled code runs, the words its frames hold, which the code's stack
//! maps locate (the runtime walks them through [`Heap::set_roots`]).
//! Marking follows object slots; sweeping frees unmarked cells (dropping
//! boxed values), hands whole empty blocks back, and turns runs of free
//! cells into runs for allocation. Cells do not move, so handles are plain
//! pointers and compiled code keeps its pointers across a collection —
//! which is why the collector is mark and sweep rather than a copying
//! nursery (see docs/architecture.md "Memory"). A collection starts when the runs
//! handed out since the last one — and the digits of the big integers
//! boxed since, which live outside the heap — add up to the live size (at
//! least [`MIN_THRESHOLD`]): the heap stays within about twice what is
//! live.
//!
//! **Stress** (`FLOWC_GC_STRESS=1`): every allocation takes
//! the slow path and collects, and the heap is verified after each
//! collection ([`verify`]).
//!
//! The heap is per thread: values never cross threads (they are `!Send`),
//! but for handles lent to the JIT's worker ([`lend`]).

pub mod block;
pub mod cell;
mod collect;
mod convert;
pub mod layout;
pub mod lend;
pub mod num;
mod obj;
pub mod rows;
mod verify;
pub mod word;

use std::cell::UnsafeCell;
use std::time::Duration;

pub use collect::{Marker, RootsFn};
pub use convert::{to_object, to_value, to_word};
pub use layout::Layout;
pub use obj::{field_word, set_field_word, NoSlot, Obj, Root};

use block::{Block, MAX_WORDS};
use cell::Cell;

/// Collections start once this many bytes were handed out, at least.
pub const MIN_THRESHOLD: usize = 2 << 20;

/// The bump-allocation run of one size class: free cells from `ptr` to
/// `limit`. Compiled code allocates a cell of `w` words with `ptr += 8w`
/// when that stays within `limit`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct FreeRun {
    pub ptr: usize,
    pub limit: usize,
}

/// What the collector did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapStats {
    pub collections: u64,
    /// Bytes of cells allocated.
    pub bytes_allocated: u64,
    /// The most bytes of blocks the heap held at once.
    pub peak_bytes: u64,
    /// Bytes of live cells after the last collection.
    pub live_bytes: u64,
    pub gc_time: Duration,
}

impl HeapStats {
    /// What happened between `before` and `self` (peak and live as they
    /// are now).
    pub fn since(&self, before: &HeapStats) -> HeapStats {
        HeapStats {
            collections: self.collections - before.collections,
            bytes_allocated: self.bytes_allocated - before.bytes_allocated,
            peak_bytes: self.peak_bytes,
            live_bytes: self.live_bytes,
            gc_time: self.gc_time.saturating_sub(before.gc_time),
        }
    }
}

/// `heap: 3 collections, 1.2 MB allocated, peak 2.0 MB, 0.4 ms collecting`
/// (peak: the blocks the heap held at most, which is what the heap adds
/// to the process's memory).
impl std::fmt::Display for HeapStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        write!(
            f,
            "heap: {} collections, {:.1} MB allocated, peak {:.1} MB, {:.3} ms collecting",
            self.collections,
            mb(self.bytes_allocated),
            mb(self.peak_bytes),
            self.gc_time.as_secs_f64() * 1e3
        )
    }
}

/// The most memory the process has held (its peak resident set), where
/// the system tells (Linux: `VmHWM` in `/proc/self/status`).
pub fn process_peak_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// [`HeapStats`]' line and the process's peak memory, as `--stats`
/// prints them.
pub fn report(stats: &HeapStats) -> String {
    match process_peak_bytes() {
        Some(b) => format!("{stats}; process peak {:.2} MB", b as f64 / (1024.0 * 1024.0)),
        None => stats.to_string(),
    }
}

/// Free runs and blocks of one size class.
#[derive(Default)]
struct Class {
    /// Free runs to bump through next, as (start, end) addresses.
    runs: Vec<(usize, usize)>,
    /// The class's blocks.
    blocks: Vec<Block>,
}

/// The heap of one thread.
#[repr(C)]
pub struct Heap {
    /// Per size class (indexed by cell words): the run allocation bumps
    /// through. First, so compiled code finds it at [`run_offset`].
    pub runs: [FreeRun; MAX_WORDS + 1],
    /// The row the JIT may assume ([`rows`]); compiled code reads its
    /// mask and bounds at [`rows_offset`].
    pub rows: rows::Rows,
    classes: Vec<Class>,
    /// Large blocks (one cell each).
    large: Vec<Block>,
    /// Empty standard blocks, kept for any class.
    spare: Vec<Block>,
    /// Bytes of runs handed out since the last collection, and the bump
    /// runs' unused bytes when they were handed out.
    handed_out: usize,
    threshold: usize,
    /// Bytes held in blocks.
    held: usize,
    stress: bool,
    collecting: bool,
    /// While above 0, no collection starts (code whose roots the collector
    /// cannot find is running).
    paused: u32,
    roots: Option<(RootsFn, *mut ())>,
    stats: HeapStats,
    /// Whether the heap's blocks outlive its thread ([`keep_to_exit`]).
    kept: bool,
}

/// The byte offset of size class `words`' run in [`Heap`].
pub const fn run_offset(words: usize) -> usize {
    std::mem::offset_of!(Heap, runs) + words * std::mem::size_of::<FreeRun>()
}

/// The byte offset of [`Heap::rows`] in [`Heap`].
pub const fn rows_offset() -> usize {
    std::mem::offset_of!(Heap, rows)
}

thread_local! {
    static HEAP: UnsafeCell<Heap> = UnsafeCell::new(Heap::new());
}

/// Leaves this thread's heap to the process's exit: its blocks are not
/// freed when the thread's locals are dropped — which libc's `exit` does
/// for the thread that calls it — so another thread still reading lent
/// handles into it (the JIT's worker, which `flowc run` does not wait
/// for) reads memory that is still there.
pub fn keep_to_exit() {
    with(|h| h.kept = true);
}

/// Runs `f` on this thread's heap. Not re-entrant: `f` must not call back
/// into `with` (nothing the heap itself calls does).
pub fn with<R>(f: impl FnOnce(&mut Heap) -> R) -> R {
    // SAFETY: the heap is only reached through `with`, which is not
    // re-entered (the collector calls the roots hook and drops boxed
    // values — neither uses the heap), so this is the only reference.
    HEAP.with(|h| f(unsafe { &mut *h.get() }))
}

/// This thread's heap, for compiled code (which reaches its runs through
/// the context of its run).
pub fn current() -> *mut Heap {
    HEAP.with(|h| h.get())
}

/// Collects now.
pub fn collect() {
    with(|h| h.collect());
}

/// What this thread's heap did so far.
pub fn stats() -> HeapStats {
    with(|h| h.stats())
}

impl Heap {
    fn new() -> Heap {
        let stress = crate::flags::on("FLOWC_GC_STRESS");
        Heap {
            runs: [FreeRun::default(); MAX_WORDS + 1],
            rows: rows::Rows::default(),
            classes: (0..=MAX_WORDS).map(|_| Class::default()).collect(),
            large: Vec::new(),
            spare: Vec::new(),
            handed_out: 0,
            threshold: MIN_THRESHOLD,
            held: 0,
            stress,
            collecting: false,
            paused: 0,
            roots: None,
            stats: HeapStats::default(),
            kept: false,
        }
    }

    /// Collect at every allocation (and verify the heap after each
    /// collection), or not.
    pub fn set_stress(&mut self, on: bool) {
        self.stress = on;
        self.runs = [FreeRun::default(); MAX_WORDS + 1];
    }

    /// What the heap did so far; bytes allocated count the cells bumped
    /// through, not the rest of the runs they were bumped from.
    pub fn stats(&self) -> HeapStats {
        let unused: usize = self.runs.iter().map(|r| r.limit - r.ptr).sum();
        HeapStats { bytes_allocated: self.stats.bytes_allocated - unused as u64, ..self.stats }
    }

    /// No collection until as many [`Heap::resume`]s.
    pub fn pause(&mut self) {
        self.paused += 1;
    }

    pub fn resume(&mut self) {
        self.paused -= 1;
    }

    /// Sets the hook that marks the roots compiled code holds (the
    /// runtime's stack walker, with its context), returning the one it
    /// replaces.
    pub fn set_roots(&mut self, roots: Option<(RootsFn, *mut ())>) -> Option<(RootsFn, *mut ())> {
        std::mem::replace(&mut self.roots, roots)
    }

    /// A cell of `words` words, uninitialized but for a zero meta word (the
    /// caller writes the rest). May collect first.
    pub fn alloc(&mut self, words: usize) -> Cell {
        if words <= MAX_WORDS {
            let run = &mut self.runs[words];
            if run.ptr + words * 8 <= run.limit {
                let c = run.ptr as Cell;
                run.ptr += words * 8;
                return c;
            }
        }
        self.alloc_slow(words)
    }

    /// Collects if the heap is due (see the module's docs), unless
    /// collection is paused or under way.
    fn collect_if_due(&mut self) {
        if !self.collecting && self.paused == 0 && (self.stress || self.handed_out >= self.threshold) {
            self.collect();
        }
    }

    /// The slow path of allocation: when a run is used up (inline bumps in
    /// compiled code go to the runtime's `flowc_rt_new`, which comes here).
    fn alloc_slow(&mut self, words: usize) -> Cell {
        let words = words.max(1);
        self.collect_if_due();
        if words > MAX_WORDS {
            return self.alloc_large(words);
        }
        loop {
            if let Some((start, end)) = self.classes[words].runs.pop() {
                self.handed_out += end - start;
                self.stats.bytes_allocated += (end - start) as u64;
                let c = start as Cell;
                let rest = start + words * 8;
                if self.stress {
                    // One cell at a time: the next allocation comes back here.
                    if rest < end {
                        self.classes[words].runs.push((rest, end));
                        self.handed_out -= end - rest;
                        self.stats.bytes_allocated -= (end - rest) as u64;
                    }
                    self.runs[words] = FreeRun::default();
                } else {
                    self.runs[words] = FreeRun { ptr: rest, limit: end };
                }
                return c;
            }
            let b = self.take_block(words);
            // SAFETY: a fresh (zeroed) block of this class.
            let (start, end) = unsafe { (block::cell(b, 0) as usize, block::cells_end(b)) };
            self.classes[words].blocks.push(b);
            self.classes[words].runs.push((start, end));
        }
    }

    fn alloc_large(&mut self, words: usize) -> Cell {
        let b = block::new_block(words).unwrap_or_else(|| out_of_memory());
        // SAFETY: a fresh large block.
        let bytes = unsafe { (*b).bytes };
        self.held += bytes;
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.held as u64);
        self.handed_out += words * 8;
        self.stats.bytes_allocated += (words * 8) as u64;
        self.large.push(b);
        // SAFETY: a large block has one cell.
        unsafe { block::cell(b, 0) }
    }

    /// A block for cells of `words` words: a spare one, else a new one.
    fn take_block(&mut self, words: usize) -> Block {
        if let Some(b) = self.spare.pop() {
            // SAFETY: spare blocks have no cell in use.
            unsafe { block::reuse_block(b, words) };
            return b;
        }
        let b = block::new_block(words).unwrap_or_else(|| out_of_memory());
        self.held += block::BLOCK_BYTES;
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.held as u64);
        b
    }
}

fn out_of_memory() -> ! {
    std::alloc::handle_alloc_error(std::alloc::Layout::from_size_align(block::BLOCK_BYTES, block::BLOCK_BYTES).unwrap())
}

impl Drop for Heap {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
        for class in &mut self.classes {
            for &b in &class.blocks {
                // SAFETY: the thread is ending: no handle is used again;
                // boxed values are dropped, then the block freed.
                unsafe {
                    collect::drop_boxed_cells(b);
                    block::free_block(b);
                }
            }
        }
        for &b in self.large.iter().chain(&self.spare) {
            // SAFETY: as above.
            unsafe {
                collect::drop_boxed_cells(b);
                block::free_block(b);
            }
        }
    }
}

#[cfg(test)]
mod tests;

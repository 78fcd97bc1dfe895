//! Blocks: the memory cells are carved from.
//!
//! A block is [`BLOCK_BYTES`] bytes aligned to its size, so the block of
//! any cell is its address with the low bits cleared. It starts with a
//! [`BlockHeader`]; its cells, all of one size (its *class*, in words),
//! follow. A cell too large for a size class gets a block of its own
//! (a *large* block, as many bytes as it needs, one cell).
//!
//! Blocks come from the operating system ([`os`]), not from the
//! allocator: a block given back no longer counts in the process's
//! resident memory, and blocks do not fragment the allocator's pages
//! (through mimalloc, 64 KiB-aligned blocks freed and taken again left the
//! process at twice the heap's peak). Standard blocks are carved from
//! chunks of [`CHUNK_BLOCKS`] reserved at once, and one given back has
//! its pages released (`madvise`) and is carved again before the chunk
//! goes on ([`os::Chunks`]): a block used to be three system calls (a
//! mapping of twice its size, two trims to align it), each taking the
//! process's memory-map lock for writing — which, with the JIT's worker
//! or preparing thread mapping memory at the same time, kept the running
//! thread waiting (an interpreter of objects allocating 40,000 of them
//! while the JIT started: 30-odd blocks).

use super::cell::Cell;

pub const BLOCK_BYTES: usize = 1 << 16;
/// Standard blocks reserved at once (4 MiB of address space, reserved
/// without committing memory: a page counts once it is touched).
pub const CHUNK_BLOCKS: usize = 64;
/// Bytes before a block's first cell.
pub const BLOCK_HEADER_BYTES: usize = 64;
/// The largest size class, in words; larger cells get large blocks.
pub const MAX_WORDS: usize = 256;

/// What the collector keeps at the start of every block.
#[repr(C)]
pub struct BlockHeader {
    /// The size of the block's cells, in words.
    pub cell_words: usize,
    /// How many cells the block has.
    pub cells: usize,
    /// Cells marked in the collection under way.
    pub live: usize,
    /// Whether a cell of the block may have pins (handles held by Rust
    /// code): set when a cell is first pinned, cleared by a collection
    /// that finds none — where the collector looks for pinned roots.
    pub pinned: usize,
    /// The block's size in bytes ([`BLOCK_BYTES`], more for large blocks).
    pub bytes: usize,
}

const _: () = assert!(std::mem::size_of::<BlockHeader>() <= BLOCK_HEADER_BYTES);

/// A block's address.
pub type Block = *mut BlockHeader;

/// The block of cell `c`.
#[inline]
pub fn block_of(c: Cell) -> Block {
    ((c as usize) & !(BLOCK_BYTES - 1)) as Block
}

/// Allocates a zeroed block for cells of `cell_words` words (a large block
/// of one cell when that is more than [`MAX_WORDS`]). `None` when memory
/// is exhausted.
pub fn new_block(cell_words: usize) -> Option<Block> {
    let bytes = if cell_words > MAX_WORDS {
        (BLOCK_HEADER_BYTES + cell_words * 8).next_multiple_of(BLOCK_BYTES)
    } else {
        BLOCK_BYTES
    };
    let b = if bytes == BLOCK_BYTES { os::block()? } else { os::alloc_zeroed(bytes)? } as Block;
    let cells = if cell_words > MAX_WORDS { 1 } else { (BLOCK_BYTES - BLOCK_HEADER_BYTES) / (cell_words * 8) };
    // SAFETY: `b` is a fresh allocation large enough for the header.
    unsafe { b.write(BlockHeader { cell_words, cells, live: 0, pinned: 0, bytes }) };
    Some(b)
}

/// Gives a standard block to cells of another size: sets its header and
/// clears the meta word of each of its new cells (all a free cell needs:
/// whoever allocates a cell writes the rest).
///
/// # Safety
/// `b` is a standard block none of whose cells is in use.
pub unsafe fn reuse_block(b: Block, cell_words: usize) {
    debug_assert!(cell_words <= MAX_WORDS);
    let cells = (BLOCK_BYTES - BLOCK_HEADER_BYTES) / (cell_words * 8);
    // SAFETY: the caller's contract; the block is BLOCK_BYTES long.
    unsafe {
        b.write(BlockHeader { cell_words, cells, live: 0, pinned: 0, bytes: BLOCK_BYTES });
        for k in 0..cells {
            *cell(b, k) = 0;
        }
    }
}

/// Returns block `b` to the allocator.
///
/// # Safety
/// `b` was made by [`new_block`] and none of its cells is in use.
pub unsafe fn free_block(b: Block) {
    // SAFETY: the caller's contract: made by `new_block`, this size.
    unsafe {
        match (*b).bytes {
            BLOCK_BYTES => os::give_back(b as *mut u8),
            bytes => os::free(b as *mut u8, bytes),
        }
    }
}

/// The `k`-th cell of block `b`.
///
/// # Safety
/// `b` is a live block and `k < cells`.
#[inline]
pub unsafe fn cell(b: Block, k: usize) -> Cell {
    // SAFETY: the caller's contract.
    unsafe { (b as *mut u8).add(BLOCK_HEADER_BYTES + k * (*b).cell_words * 8) as Cell }
}

/// The address just past block `b`'s last cell.
///
/// # Safety
/// `b` is a live block.
pub unsafe fn cells_end(b: Block) -> usize {
    // SAFETY: the caller's contract.
    unsafe { b as usize + BLOCK_HEADER_BYTES + (*b).cells * (*b).cell_words * 8 }
}

/// Memory for blocks: zeroed, aligned to [`BLOCK_BYTES`].
mod os {
    use super::{BLOCK_BYTES, CHUNK_BLOCKS};

    /// A thread's standard blocks: the chunk being carved (`next..end`)
    /// and the blocks given back, whose pages were released (zero when
    /// next touched). Chunks are never unmapped: a block of one may be in
    /// use to the process's end (a heap kept to the exit).
    #[cfg(unix)]
    #[derive(Default)]
    pub struct Chunks {
        next: usize,
        end: usize,
        free: Vec<usize>,
    }

    #[cfg(unix)]
    thread_local! {
        static CHUNKS: std::cell::RefCell<Chunks> = std::cell::RefCell::new(Chunks::default());
    }

    /// A zeroed standard block: one given back, else the next of the
    /// thread's chunk, else of a new chunk. Where the thread's chunks are
    /// gone (it is ending), a mapping of its own.
    #[cfg(unix)]
    pub fn block() -> Option<*mut u8> {
        let carved = CHUNKS.try_with(|c| {
            let mut c = c.borrow_mut();
            if let Some(b) = c.free.pop() {
                return Some(b);
            }
            if c.next == c.end {
                let start = alloc_zeroed(CHUNK_BLOCKS * BLOCK_BYTES)? as usize;
                (c.next, c.end) = (start, start + CHUNK_BLOCKS * BLOCK_BYTES);
            }
            let b = c.next;
            c.next += BLOCK_BYTES;
            Some(b)
        });
        match carved {
            Ok(b) => b.map(|b| b as *mut u8),
            Err(_) => alloc_zeroed(BLOCK_BYTES),
        }
    }

    /// Gives standard block `b` back: its pages released, the block
    /// carved again before its chunk goes on.
    ///
    /// # Safety
    /// `b` was returned by [`block`] and nothing in it is used again.
    #[cfg(unix)]
    pub unsafe fn give_back(b: *mut u8) {
        // SAFETY: the block's pages are ours and unused: released, they
        // read as zero when next touched.
        unsafe { libc::madvise(b as *mut libc::c_void, BLOCK_BYTES, libc::MADV_DONTNEED) };
        // (Where the thread is ending, the block is left released.)
        let _ = CHUNKS.try_with(|c| c.borrow_mut().free.push(b as usize));
    }

    /// A zeroed standard block, a mapping of its own.
    #[cfg(not(unix))]
    pub fn block() -> Option<*mut u8> {
        alloc_zeroed(BLOCK_BYTES)
    }

    /// # Safety
    /// As the Unix version.
    #[cfg(not(unix))]
    pub unsafe fn give_back(b: *mut u8) {
        // SAFETY: the caller's contract: a block of its own.
        unsafe { free(b, BLOCK_BYTES) }
    }

    /// `bytes` (a multiple of [`BLOCK_BYTES`]) of zeroed memory aligned to
    /// `BLOCK_BYTES`: a mapping of `bytes + BLOCK_BYTES`, trimmed.
    #[cfg(unix)]
    pub fn alloc_zeroed(bytes: usize) -> Option<*mut u8> {
        let len = bytes + BLOCK_BYTES;
        // SAFETY: an anonymous private mapping; no memory of ours is involved.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let start = p as usize;
        let aligned = start.next_multiple_of(BLOCK_BYTES);
        let head = aligned - start;
        let tail = len - head - bytes;
        // SAFETY: both ranges are parts of the mapping just made, outside
        // the block kept.
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((aligned + bytes) as *mut libc::c_void, tail);
            }
        }
        Some(aligned as *mut u8)
    }

    /// # Safety
    /// `p` was returned by [`alloc_zeroed`] for `bytes` bytes, and nothing
    /// in it is used again.
    #[cfg(unix)]
    pub unsafe fn free(p: *mut u8, bytes: usize) {
        // SAFETY: the caller's contract: exactly a mapping of ours.
        unsafe { libc::munmap(p as *mut libc::c_void, bytes) };
    }

    #[cfg(not(unix))]
    pub fn alloc_zeroed(bytes: usize) -> Option<*mut u8> {
        let layout = std::alloc::Layout::from_size_align(bytes, BLOCK_BYTES).ok()?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        (!p.is_null()).then_some(p)
    }

    /// # Safety
    /// As the Unix version.
    #[cfg(not(unix))]
    pub unsafe fn free(p: *mut u8, bytes: usize) {
        // SAFETY: the caller's contract: the size and alignment it was made with.
        unsafe { std::alloc::dealloc(p, std::alloc::Layout::from_size_align_unchecked(bytes, BLOCK_BYTES)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Standard blocks come aligned, zeroed and apart, more than a chunk
    /// of them; one given back (written all over first) comes back
    /// zeroed, before the chunk goes on.
    #[test]
    fn blocks_are_carved_aligned_and_zeroed_and_given_back_ones_come_back_zeroed() {
        // Run on a thread of its own: a fresh set of chunks.
        std::thread::spawn(|| {
            let zeroed = |b: Block| {
                // SAFETY: a live standard block, BLOCK_BYTES long; the
                // header's words are past its first.
                let words = unsafe { std::slice::from_raw_parts((b as *const u64).add(8), BLOCK_BYTES / 8 - 8) };
                words.iter().all(|&w| w == 0)
            };
            let blocks: Vec<Block> = (0..CHUNK_BLOCKS + 3).map(|_| new_block(4).expect("memory")).collect();
            let mut starts: Vec<usize> = blocks.iter().map(|&b| b as usize).collect();
            assert!(starts.iter().all(|&a| a % BLOCK_BYTES == 0), "aligned");
            assert!(blocks.iter().all(|&b| zeroed(b)), "zeroed");
            starts.sort_unstable();
            assert!(starts.windows(2).all(|w| w[1] - w[0] >= BLOCK_BYTES), "apart");
            let back = blocks[5];
            // SAFETY: the block is ours; nothing else uses it.
            unsafe {
                std::ptr::write_bytes(
                    (back as *mut u8).add(BLOCK_HEADER_BYTES),
                    0xab,
                    BLOCK_BYTES - BLOCK_HEADER_BYTES,
                );
                free_block(back);
            }
            let again = new_block(8).expect("memory");
            assert_eq!(again, back, "a block given back is carved again first");
            assert!(zeroed(again), "and comes back zeroed");
        })
        .join()
        .expect("the thread runs");
    }
}

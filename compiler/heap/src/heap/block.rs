//! Blocks: the memory cells are carved from.
//!
//! A block is [`BLOCK_BYTES`] bytes aligned to its size, so the block of
//! any cell is its address with the low bits cleared. It starts with a
//! [`BlockHeader`]; its cells, all of one size (its *class*, in words),
//! follow. A cell too large for a size class gets a block of its own
//! (a *large* block, as many bytes as it needs, one cell).
//!
//! Blocks come from the operating system ([`os`]: `mmap`, and `munmap`
//! when given back), not from the allocator: a block given back no longer
//! counts in the process's resident memory, and blocks do not fragment the
//! allocator's pages (through mimalloc, 64 KiB-aligned blocks freed and
//! taken again left the process at twice the heap's peak).

use super::cell::Cell;

pub const BLOCK_BYTES: usize = 1 << 16;
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
    let b = os::alloc_zeroed(bytes)? as Block;
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
    unsafe { os::free(b as *mut u8, (*b).bytes) }
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
    use super::BLOCK_BYTES;

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

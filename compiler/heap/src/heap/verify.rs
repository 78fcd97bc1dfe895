//! The heap verifier: after a collection (in stress mode), every cell in
//! use must be well formed and every pointer in it must point at a cell in
//! use — what a collector bug (a cell freed while still referred to, a
//! root missed) breaks first.

use std::collections::HashSet;

use crate::symbol::Symbol;
use crate::value::Value;

use super::block::{self, Block, BLOCK_HEADER_BYTES};
use super::cell::{self, Cell, BOXED_KIND, FREE, KIND_MASK, MARK, OBJECT, SLOTS, UNSET};
use super::word::{self, Word};
use super::Heap;

impl Heap {
    /// Checks every cell in use; the first problem found, if any.
    pub fn verify(&self) -> Result<(), String> {
        let blocks: Vec<Block> =
            self.classes.iter().flat_map(|c| c.blocks.iter().copied()).chain(self.large.iter().copied()).collect();
        let known: HashSet<usize> = blocks.iter().map(|&b| b as usize).collect();
        // SAFETY: blocks in the lists are live; a cell is read only after
        // its meta says it is in use.
        unsafe {
            for &b in &blocks {
                if (*b).live != 0 {
                    return Err(format!("block {b:p} still counts {} live cells", (*b).live));
                }
                let mut pinned = 0;
                for k in 0..(*b).cells {
                    let c = block::cell(b, k);
                    let m = cell::meta(c);
                    if m & MARK != 0 {
                        return Err(format!("cell {c:p} is still marked"));
                    }
                    if m >= cell::PIN {
                        pinned += 1;
                    }
                    match m & KIND_MASK {
                        FREE => {}
                        OBJECT => check_object(c, (*b).cell_words, &known)?,
                        BOXED_KIND => {
                            let items = match cell::boxed(c) {
                                Value::Object(_) => return Err(format!("boxed cell {c:p} holds an object")),
                                Value::List(l) => l.words() as u64,
                                _ => 0,
                            };
                            if cell::raw_at(c, cell::ITEMS) != items {
                                return Err(format!("boxed cell {c:p} has a wrong element table"));
                            }
                        }
                        super::num::LIMBS => super::num::check_cell(c, (*b).cell_words)?,
                        kind => return Err(format!("cell {c:p} has kind {kind}")),
                    }
                }
                if pinned > 0 && (*b).pinned == 0 {
                    return Err(format!("block {b:p} has {pinned} pinned cells but is not marked as having any"));
                }
            }
        }
        Ok(())
    }
}

/// # Safety
/// `c` is an object cell of a live block of `cell_words`-word cells.
unsafe fn check_object(c: Cell, cell_words: usize, known: &HashSet<usize>) -> Result<(), String> {
    // SAFETY: the caller's contract.
    unsafe {
        let layout = cell::layout(c);
        if layout.words() > cell_words {
            return Err(format!("object {c:p} needs {} words, its cell has {cell_words}", layout.words()));
        }
        let class = cell::raw_at(c, cell::CLASS);
        if class >= Symbol::count() as u64 {
            return Err(format!("object {c:p} has class number {class}"));
        }
        for k in 0..layout.fields().len() {
            // Read as a word only to be checked: `check_pointer` follows
            // no pointer before it has found its cell in the heap.
            let w = cell::word_at(c, SLOTS + 8 * k);
            if w != UNSET && word::is_pointer(w) {
                check_pointer(w, known).map_err(|e| format!("object {c:p}, field {}: {e}", layout.fields()[k]))?;
            }
        }
    }
    Ok(())
}

/// Whether `w` points at the start of a cell in use.
fn check_pointer(w: Word, known: &HashSet<usize>) -> Result<(), String> {
    let c = w.cell();
    let b = block::block_of(c);
    if !known.contains(&(b as usize)) {
        return Err(format!("{c:p} is not in the heap"));
    }
    // SAFETY: `b` is a live block of the heap.
    unsafe {
        let offset = c as usize - b as usize;
        let size = (*b).cell_words * 8;
        if offset < BLOCK_HEADER_BYTES || !(offset - BLOCK_HEADER_BYTES).is_multiple_of(size) {
            return Err(format!("{c:p} is not the start of a cell"));
        }
        if (offset - BLOCK_HEADER_BYTES) / size >= (*b).cells {
            return Err(format!("{c:p} is past the block's cells"));
        }
        if cell::kind(c) == FREE {
            return Err(format!("{c:p} points at a free cell"));
        }
    }
    Ok(())
}

//! The roots compiled code holds: its frames, found through the stack maps
//! Cranelift makes (user stack maps), and walked when the heap collects
//! while compiled code runs.
//!
//! Every value of compiled code that may point into the heap and lives
//! across a call is stored in a word of a frame in the stack when it is
//! defined (the function's own, or in a huge function the one its regions
//! share), and every call (a *safepoint*) lists those words in its
//! Cranelift user stack map, as offsets from the stack pointer at the
//! call. The code generator registers each function's maps here with
//! their return addresses ([`StackMaps::add`]).
//!
//! Compiled code keeps the frame pointer and stack pointer of the frame
//! making runtime calls (which may allocate, and so collect) in the
//! context ([`crate::runtime::Ctx::last_fp`]): functions store them on
//! entry and after each call they make (a function's stack pointer does
//! not move between its prologue and epilogue), traces before every
//! runtime call. From there the walk
//! goes outwards ([`mark_frames`]): the return address of a frame's
//! safepoint is the word just below its stack pointer; the next frame out
//! has its frame pointer and return address saved at this frame's frame
//! pointer (all compiled code keeps frame pointers), and its stack pointer
//! at the call was just above them. The walk stops at the first return
//! address that is not a registered safepoint: the entry wrapper, whose
//! caller is Rust.

use crate::word::Word;
use flowc_heap::heap::Marker;

/// The safepoints of compiled code, by return address.
#[derive(Default, Debug)]
pub struct StackMaps {
    /// (return address, offsets from the stack pointer of the words that
    /// may point into the heap), sorted by address.
    safepoints: Vec<(usize, std::sync::Arc<[u32]>)>,
    /// Code whose safepoints all list the same words ([`StackMaps::add_shared`]),
    /// sorted by address: a return offset per safepoint (4 bytes) rather
    /// than an entry of `safepoints` (24). Objects BF fractal 5's traces
    /// have some 80,000 safepoints.
    shared: Vec<Shared>,
}

/// The safepoints of code at `base` that all list `slots`.
#[derive(Debug)]
struct Shared {
    base: usize,
    /// Offsets of the return addresses from `base`, sorted.
    returns: Box<[u32]>,
    slots: std::sync::Arc<[u32]>,
}

impl StackMaps {
    /// Registers the safepoints of functions: for each, the address its
    /// code starts at and its safepoints (offset of the return address in
    /// the function, stack slot offsets). One sort for all of them.
    /// A safepoint whose words are those of the one before shares its
    /// list, and those with none share one empty list: the calls of a
    /// region of a huge function keep the same words, mostly none (46,000
    /// safepoints of a main graph of 5,000 loops took 3 MB as a list
    /// each).
    pub fn add(&mut self, functions: impl IntoIterator<Item = (usize, Vec<(u32, Vec<u32>)>)>) {
        let old = self.safepoints.len();
        let mut last: Option<std::sync::Arc<[u32]>> = None;
        let none: std::sync::Arc<[u32]> = std::sync::Arc::new([]);
        for (base, safepoints) in functions {
            for (offset, slots) in safepoints {
                let shared = match last.take() {
                    Some(l) if *l == *slots => l,
                    _ if slots.is_empty() => none.clone(),
                    _ => slots.into(),
                };
                self.safepoints.push((base + offset as usize, shared.clone()));
                last = Some(shared);
            }
        }
        self.sort_from(old);
    }

    /// Registers safepoints that all list the same words: code at `base`
    /// whose calls return at offsets `returns` (baseline traces, whose
    /// every value has a word of the frame; the list is the trace's own,
    /// shared, not copied).
    pub fn add_shared(&mut self, base: usize, returns: &[u32], slots: std::sync::Arc<[u32]>) {
        if returns.is_empty() {
            return;
        }
        let mut returns: Box<[u32]> = returns.into();
        returns.sort_unstable();
        // New code usually lies above the old: then this is the end.
        let at = self.shared.partition_point(|s| s.base < base);
        self.shared.insert(at, Shared { base, returns, slots });
    }

    /// Sorts the safepoints again after new ones were pushed from `old`
    /// on. Only the new ones are sorted: new code usually lies above the
    /// old, and is then in place; else one stable sort merges the two
    /// sorted runs in linear time. (Sorting everything each time made
    /// adding a JIT's thousandth trace cost a sort of every safepoint so
    /// far.)
    fn sort_from(&mut self, old: usize) {
        let (before, new) = self.safepoints.split_at_mut(old);
        new.sort_unstable_by_key(|(pc, _)| *pc);
        if let (Some(last), Some(first)) = (before.last(), new.first()) {
            if last.0 > first.0 {
                self.safepoints.sort_by_key(|(pc, _)| *pc);
            }
        }
    }

    /// The slots of the safepoint returning to `pc`, if it is one.
    pub fn lookup(&self, pc: usize) -> Option<&[u32]> {
        if let Ok(k) = self.safepoints.binary_search_by_key(&pc, |(p, _)| *p) {
            return Some(&self.safepoints[k].1);
        }
        // The last code starting at or below `pc` (code does not overlap).
        let code = &self.shared[self.shared.partition_point(|s| s.base <= pc).checked_sub(1)?];
        let offset = u32::try_from(pc - code.base).ok()?;
        code.returns.binary_search(&offset).ok().map(|_| &*code.slots)
    }
}

/// Marks the words compiled code's frames hold, from the innermost frame,
/// stopped at a safepoint with frame pointer `fp` and stack pointer `sp`.
/// x86-64 frames: the return address just below a call's stack pointer,
/// the caller's frame pointer and return address at `fp` (other targets
/// run compiled code with collection paused, see `Activation::enter`).
///
/// # Safety
/// `fp` and `sp` are what the innermost compiled frame stored before the
/// runtime call in progress, and that frame and the ones out from it are
/// compiled code whose safepoints `maps` has (up to the entry wrapper).
pub unsafe fn mark_frames(maps: &StackMaps, mut fp: usize, mut sp: usize, marker: &mut Marker) {
    loop {
        // SAFETY: the caller's contract: `sp` is a frame's stack pointer at
        // a call, below which the call pushed its return address.
        let pc = unsafe { *((sp - 8) as *const usize) };
        let Some(slots) = maps.lookup(pc) else { return };
        for &offset in slots {
            // SAFETY: the stack map says a word lives there across the call.
            unsafe { marker.mark_word(*((sp + offset as usize) as *const Word)) };
        }
        // SAFETY: compiled frames keep frame pointers: the caller's frame
        // pointer and return address are saved at `fp`.
        let caller_fp = unsafe { *(fp as *const usize) };
        sp = fp + 16;
        fp = caller_fp;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safepoints_are_found_whatever_order_code_is_added_in() {
        let mut maps = StackMaps::default();
        maps.add_shared(1000, &[30, 10], [8].into());
        maps.add([(2000, vec![(5, vec![16]), (1, vec![24])])]);
        // Code below what is there already.
        maps.add_shared(500, &[4], [32].into());
        for (pc, slot) in [(1010, 8), (1030, 8), (2005, 16), (2001, 24), (504, 32)] {
            assert_eq!(maps.lookup(pc), Some(&[slot][..]), "at {pc}");
        }
        for pc in [0, 503, 1020, 2003, 3000, 1000 + (1 << 33)] {
            assert_eq!(maps.lookup(pc), None, "at {pc}");
        }
    }

    #[test]
    fn safepoints_with_the_same_words_share_their_list() {
        let mut maps = StackMaps::default();
        maps.add([
            (100, vec![(1, vec![8, 16]), (2, vec![8, 16]), (3, vec![]), (4, vec![8])]),
            (200, vec![(1, vec![8])]),
        ]);
        assert_eq!(maps.lookup(101), Some(&[8, 16][..]));
        assert_eq!(maps.lookup(102), Some(&[8, 16][..]));
        assert_eq!(maps.lookup(103), Some(&[][..]));
        assert_eq!(maps.lookup(104), Some(&[8][..]));
        assert_eq!(maps.lookup(201), Some(&[8][..]));
        fn list_of(maps: &StackMaps, pc: usize) -> std::sync::Arc<[u32]> {
            maps.safepoints.iter().find(|(p, _)| *p == pc).map(|(_, l)| l.clone()).unwrap()
        }
        let list = |pc: usize| list_of(&maps, pc);
        assert!(std::sync::Arc::ptr_eq(&list(101), &list(102)), "one list for the same words");
        assert!(std::sync::Arc::ptr_eq(&list(104), &list(201)), "across functions too");
        assert!(!std::sync::Arc::ptr_eq(&list(102), &list(103)));
        maps.add([(300, vec![(1, vec![]), (2, vec![8]), (3, vec![])])]);
        let list = |pc: usize| list_of(&maps, pc);
        assert!(std::sync::Arc::ptr_eq(&list(301), &list(303)), "one empty list");
        assert_eq!(maps.lookup(303), Some(&[][..]));
    }
}

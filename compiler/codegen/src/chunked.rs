//! A list that grows by chunks and never moves what it holds.
//!
//! The tables of a JIT's exits grow with every trace installed (the
//! trace cache's exits, the JIT's state of each, the resume plans a run
//! decoded): some 83,000 exits for objects BF fractal 5, the cache's 56
//! bytes each. A `Vec` that doubles copies everything at each growth, and
//! the buffer it leaves stays resident with the allocator for a while:
//! near the end of the warm-up the cache's table and its last copy were
//! 8 MB of a 64 MB process peak. [`Chunked`] adds a chunk of [`CHUNK`]
//! elements when the last is full: nothing is copied, and at most one
//! chunk is not full.

/// Elements per chunk.
const CHUNK: usize = 4096;

/// A list of `T`, indexed from 0, that grows by chunks.
#[derive(Debug)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked { chunks: Vec::new(), len: 0 }
    }
}

impl<T> Chunked<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn push(&mut self, x: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => last.push(x),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(x);
                self.chunks.push(chunk);
            }
        }
        self.len += 1;
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn get(&self, k: usize) -> Option<&T> {
        self.chunks.get(k / CHUNK)?.get(k % CHUNK)
    }

    /// Grows the list to `len` elements (if shorter), each new one `f()`.
    pub fn grow_with(&mut self, len: usize, mut f: impl FnMut() -> T) {
        while self.len < len {
            self.push(f());
        }
    }

    pub fn clear(&mut self) {
        self.chunks.clear();
        self.len = 0;
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    /// The first index from `from` on whose element fails `pred`, for a
    /// list whose elements from `from` on pass it up to some index and
    /// fail it after (as `slice::partition_point`).
    pub fn partition_point_from(&self, from: usize, pred: impl Fn(&T) -> bool) -> usize {
        let (mut lo, mut hi) = (from, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self[mid]) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl<T> std::ops::Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, k: usize) -> &T {
        &self.chunks[k / CHUNK][k % CHUNK]
    }
}

impl<T> std::ops::IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, k: usize) -> &mut T {
        &mut self.chunks[k / CHUNK][k % CHUNK]
    }
}

impl<T> Extend<T> for Chunked<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        items.into_iter().for_each(|x| self.push(x));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Elements keep their indices and their addresses as the list grows
    /// past several chunks, and the search finds where a sorted run ends.
    #[test]
    fn a_chunked_list_grows_without_moving_what_it_holds() {
        let mut list = Chunked::default();
        list.push(0u32);
        let first = &list[0] as *const u32;
        list.extend(1..3 * CHUNK as u32 + 5);
        assert_eq!(list.len(), 3 * CHUNK + 5);
        assert_eq!(&list[0] as *const u32, first);
        assert!((0..list.len()).all(|k| list[k] == k as u32));
        assert_eq!(list.get(list.len()), None);
        assert_eq!(list.partition_point_from(0, |&x| x < 5000), 5000);
        assert_eq!(list.partition_point_from(6000, |&x| x < 5000), 6000);
        assert_eq!(list.partition_point_from(0, |_| true), list.len());
        assert_eq!(list.iter().count(), list.len());
        list[5000] = 7;
        assert_eq!(list.get(5000), Some(&7));
        list.grow_with(4 * CHUNK, || 1);
        assert_eq!((list.len(), list[4 * CHUNK - 1]), (4 * CHUNK, 1));
        list.clear();
        assert!(list.is_empty());
    }
}

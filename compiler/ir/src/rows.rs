//! Rows of items grouped by a dense key — compressed sparse rows: one flat
//! vector of items and one start offset per key, filled by a counting sort.
//! Predecessor lists, phi users, value users: the passes build such tables
//! over every block or value of a function, and two flat vectors cost two
//! allocations where a vector per key would cost one per key.

/// The items of key `k` are `items[start[k]..start[k + 1]]`.
#[derive(Clone, Debug, Default)]
pub struct Rows<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy> Rows<T> {
    /// Groups `pairs` — `(key, item)` with every key below `keys` — by key,
    /// keeping their order within a key. `pairs` is gone through twice
    /// (once to count, once to place), so it must be cheap to clone.
    pub fn group(keys: usize, pairs: impl Iterator<Item = (usize, T)> + Clone) -> Rows<T> {
        let mut start = vec![0u32; keys + 1];
        let mut filler = None;
        for (k, item) in pairs.clone() {
            start[k + 1] += 1;
            filler.get_or_insert(item);
        }
        for k in 0..keys {
            start[k + 1] += start[k];
        }
        let Some(filler) = filler else { return Rows { start, items: Vec::new() } };
        let mut fill = start.clone();
        let mut items = vec![filler; start[keys] as usize];
        for (k, item) in pairs {
            items[fill[k] as usize] = item;
            fill[k] += 1;
        }
        Rows { start, items }
    }

    /// The items of `key`, in the order given; none for a key out of range.
    pub fn of(&self, key: usize) -> &[T] {
        &self.items[self.span(key)]
    }

    /// Where the items of `key` are in [`Rows::items`] (for walking them
    /// by index while mutating something else).
    pub fn span(&self, key: usize) -> std::ops::Range<usize> {
        match (self.start.get(key), self.start.get(key + 1)) {
            (Some(&s), Some(&e)) => s as usize..e as usize,
            _ => 0..0,
        }
    }

    /// All items, key after key.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The number of keys.
    pub fn keys(&self) -> usize {
        self.start.len().saturating_sub(1)
    }
}

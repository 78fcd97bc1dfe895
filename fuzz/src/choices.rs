//! Where a generator's decisions come from: a seeded generator (the
//! seeded fuzzers and tests, reproducible by seed) or the fuzzer's bytes
//! through `arbitrary` (the cargo-fuzz targets, so that libFuzzer's
//! coverage feedback steers each decision). Once the bytes run out every
//! decision takes its smallest choice, which keeps generation finite.

use arbitrary::Unstructured;
use flowc_tests::rng::Rng;

pub enum Choices<'a> {
    Seeded(Rng),
    Bytes(Unstructured<'a>),
}

impl<'a> Choices<'a> {
    pub fn seeded(seed: u64) -> Choices<'static> {
        Choices::Seeded(Rng::new(seed))
    }

    pub fn bytes(data: &'a [u8]) -> Choices<'a> {
        Choices::Bytes(Unstructured::new(data))
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        match self {
            Choices::Seeded(r) => r.below(n),
            Choices::Bytes(u) => u.int_in_range(0..=n - 1).unwrap_or(0),
        }
    }

    /// In `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        match self {
            Choices::Seeded(r) => r.range(lo, hi),
            Choices::Bytes(u) => u.int_in_range(lo..=hi).unwrap_or(lo),
        }
    }

    /// True with probability `percent`/100 (for bytes: when the next byte
    /// says so).
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    pub fn pick<'b, T>(&mut self, items: &'b [T]) -> &'b T {
        &items[self.below(items.len())]
    }
}

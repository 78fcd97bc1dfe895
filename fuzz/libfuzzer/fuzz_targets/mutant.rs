//! `cargo fuzz run --fuzz-dir fuzz/libfuzzer -s none mutant`: see
//! `flowc_fuzz::targets::mutant` (on this thread, which caches the
//! subjects it mutates).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| flowc_fuzz::targets::mutant(data));

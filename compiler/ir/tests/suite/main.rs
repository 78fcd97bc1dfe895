//! The IR's analyses: calls, compaction, dominators, live ranges,
//! loop headers, regions.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc-ir --test suite
//! MODULE::`.

mod calls;
mod compact;
mod dominators;
mod live_ranges;
mod loop_headers;
mod regions;

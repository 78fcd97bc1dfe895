//! The IR's analyses and helpers: bound values, calls, compaction,
//! dominators, drawing, block frequencies, guards, live ranges, liveness, loop
//! headers, object proofs, packed resume records, regions, rows,
//! substitutions.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc-ir --test suite
//! MODULE::`.

mod bound;
mod builder;
mod calls;
mod compact;
mod dominators;
mod draw;
mod frequency;
mod guards;
mod live_ranges;
mod liveness;
mod loop_headers;
mod objects;
mod packed;
mod regions;
mod rows;
mod subst;

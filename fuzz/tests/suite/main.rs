//! The fuzzers: generators, mutants, replayed regressions.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc-fuzz --test suite
//! MODULE::`.

mod mutant_edges;
mod regressions;
mod short;
mod unbound_uses;

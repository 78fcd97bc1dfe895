//! The `flowc` binary and its commands, end to end.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc --test suite
//! MODULE::`.

mod blog;
mod build;
mod cdp;
mod cli;
mod determinism;
mod engines;
mod explore;
mod explore_browser;

//! The IR checker: valid IR accepted, every kind of violation
//! reported, garbage survived.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc-ir-checker --test suite
//! MODULE::`.

mod cli;
mod common;
mod garbage;
mod negative_structure;
mod negative_values;
mod negative_written;
mod valid;

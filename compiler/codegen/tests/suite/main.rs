//! The code generator: inline paths, optimistic code, roots.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc-codegen --test suite
//! MODULE::`.

mod always_set;
mod apart;
mod baseline;
mod chains;
mod inline_paths;
mod links;
mod optimistic;
mod roots;
mod switches;

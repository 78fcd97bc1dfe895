//! Every engine against the reference interpreter, over the corpus
//! and generated programs.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc-tests --test suite
//! MODULE::`.

mod collector;
mod differential;
mod filetests;
mod generator;
mod ir_format;
mod jit;
mod layering;
mod matrix;
mod native;
mod passes;
mod pe;
mod regions;
mod robustness;
mod roundtrip;
mod tiers;
mod tracing;

//! The eight passes, a module each, the pipeline over them, the pass
//! table, and the lattice, observability and phi helpers they share.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc-passes --test suite
//! MODULE::`.

mod dce;
mod defuse;
mod edit;
mod escape;
mod fields;
mod lattice;
mod loops;
mod normalize;
mod observe;
mod pass_table;
mod phis;
mod pipeline;
mod pipeline_allocations;
mod propagate;
mod support;
mod unbox;
mod unbox_random;
mod versions;

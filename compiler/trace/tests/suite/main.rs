//! The tracing JIT: hints, the JIT driver, the shapes of loops it
//! compiles.
//!
//! The crate's integration tests, one module per subject, built as one
//! binary: one link instead of one per file, and every module's tests
//! share the cores. One module: `cargo test -p flowc-trace --test suite
//! MODULE::`.

mod conversion;
mod hints;
mod jit;
mod jit_calls;
mod jit_shapes;
mod jit_tier;

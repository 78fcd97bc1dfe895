//! flowc-trace: Tracer, trace optimizers, JIT driver (issue 5).
//!
//! Not written yet; see DESIGN.md for what this crate will hold.

//! flowc-codegen: IR to native code with Cranelift, and the runtime (issue 6).
//!
//! Not written yet; see DESIGN.md for what this crate will hold.

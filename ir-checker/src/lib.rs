//! flowc-ir-checker: The standalone IR invariant checker (issue 3).
//!
//! Not written yet; see DESIGN.md for what this crate will hold.

//! flowc-passes: The eight single-run optimization passes (issue 4).
//!
//! Not written yet; see DESIGN.md for what this crate will hold.

//! flowc-frontend: AST to SSA with phi nodes (issue 3).
//!
//! Not written yet; see DESIGN.md for what this crate will hold.

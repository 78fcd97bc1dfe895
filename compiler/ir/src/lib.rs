//! flowc-ir: SSA IR: arenas, builder, text format, CFG views, IR interpreter (issue 3).
//!
//! Not written yet; see DESIGN.md for what this crate will hold.

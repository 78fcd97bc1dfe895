//! The value representation of generated code: one 64-bit word per value
//! (defined with the heap the words point into, [`flowc_heap::heap::word`]).

pub use flowc_heap::heap::word::*;

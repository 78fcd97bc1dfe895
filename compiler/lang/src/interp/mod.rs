//! The reference interpreter: the series' `interp` (Part 1) extended with
//! objects and functions (docs/language.md §4–§6).
//!
//! [`resolve`] resolves names to slots and labels to block indices once;
//! [`fn@run`] executes. Semantics follow the Prolog code of the series: an
//! operation reads its operands, applies the op table, writes its result;
//! `if` takes the else branch only for the integer 0; `promote` is a jump.

pub mod call_code;
pub mod hot;
pub mod live;
pub mod resolve;
pub mod run;

pub use flowc_heap::error::{self, ErrorKind, Location, RuntimeError};
pub use flowc_heap::objects;
pub use resolve::Resolved;

mod location;
pub use call_code::{CallCode, CallEnd, CallState};
pub use hot::{CallArrival, Green, Key, KeyMap, KeyState, Profiler, CALL};
pub use live::Liveness;
pub use run::{run, run_counted, Config, Counts, Frame, Machine, Outcome, ResumeFrame, SlotFrame, Stage, Step};

#[cfg(test)]
mod tests;

//! flowc-trace: Parts 2–4 of the series as working tools, and beyond.
//!
//! - [`trace`]: the recorded trace — the series' operations and guards —
//!   and its printing as Prolog terms (`write/1`), nested as in Parts 2–3
//!   or one operation per line as in Part 4;
//! - [`record`]: the tracer (Part 2's `trace/4`): interprets from an anchor
//!   label, logging operations and turning `if`/`promote`/`if_class` into
//!   guards, until control jumps back to the anchor;
//! - [`blog`]: Part 3's trace optimizer, exactly: constants from guards,
//!   partial environments as resume data, assignments before `loop`;
//! - [`run`]: running a trace (`runtrace`) and resuming the reference
//!   interpreter when a guard fails (`resume_interp`);
//! - [`to_ir`]: a trace as SSA IR — one loop, phis for loop-carried
//!   variables, guards with resume data;
//! - [`opt`]: the SSA trace optimizer (folding, guard implication, CSE,
//!   allocation removal with virtual objects, shared resume records);
//! - [`run_ir`] and [`resume`]: running trace IR and leaving it at a failing
//!   guard;
//! - [`skip`]: counted inner loops done at once by the recording of the
//!   loop around them;
//! - [`copy`]: copying trace instructions (loop peeling);
//! - [`tree`]: a loop and the bridges grown from it as one function;
//! - [`jit`]: the tracing JIT — hot loop headers traced, optimized,
//!   compiled and entered from the interpreter.

// One exception, in `jit/background.rs`: what crosses to the thread that
// optimizes in the background is asserted `Send`, having been checked to
// hold no object handle (the one kind of value bound to its thread).
#![deny(unsafe_code)]

pub mod blog;
pub mod constant_loops;
pub mod copy;
pub mod jit;
pub mod opt;
pub mod record;
pub mod resume;
pub mod run;
pub mod run_ir;
pub mod skip;
pub mod terms;
pub mod to_ir;
pub mod trace;
pub mod tree;

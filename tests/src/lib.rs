//! flowc-tests: the cross-engine test suites (in `tests/`), the engines
//! that need a code generator (the tracer, the JIT, native code) added to
//! flowc-testkit's, and the benchmarks' BF and stack-machine programs and
//! programs of many short-lived loops.
//! The corpus and the random program generator are flowc-testkit's,
//! re-exported here.

#![forbid(unsafe_code)]

pub mod bf;
pub mod bf_random;
pub mod engines;
pub mod loops;
pub mod stack_vm;

pub use flowc_testkit::{corpus, gen, rng};

//! flowc-tests: the program corpus, the random program generator, and the
//! cross-engine test suites (in `tests/`).

#![forbid(unsafe_code)]

pub mod bf;
pub mod engines;
pub mod stack_vm;

pub use flowc_testkit::{corpus, gen, rng};

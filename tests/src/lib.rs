//! flowc-tests: the program corpus, the random program generator, and the
//! cross-engine test suites (in `tests/`).

#![forbid(unsafe_code)]

pub mod bf;
pub mod corpus;
pub mod engines;
pub mod gen;
pub mod rng;
pub mod stack_vm;

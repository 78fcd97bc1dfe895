//! flowc-testkit: what the test suites share that needs no code
//! generator — the program corpus, the random program generator, and the
//! engines that run without one (the reference interpreter, the IR
//! interpreter after every pass). flowc-ir's and flowc-passes' tests
//! build on it alone; flowc-tests adds the tracer, the JIT and native
//! code.

#![forbid(unsafe_code)]

pub mod corpus;
pub mod engines;
pub mod gen;
pub mod rng;

//! flowc-fuzz: fuzzers that run for as long as you let them, on the stable
//! toolchain (no libFuzzer): the tests run the same code with small counts.
//!
//! - [`checker`]: valid IR texts (generated programs, lowered and
//!   optimized) are damaged by random edits ([`mutate`]) and fed to the IR
//!   parser and checker, which must answer — parse error, violations or
//!   valid — and never panic.
//! - [`kill`]: the checker's kill rate — structured mutants
//!   ([`mutants`]), one class per invariant, of the IR the front end, every
//!   pass and the JIT make, each built to break its invariant; every class
//!   must be rejected with its rule, every time.
//! - [`valid`]: arbitrary valid IR ([`irgen`]: irreducible loops, critical
//!   edges, unreachable blocks, phi cycles, every operation form, calls,
//!   objects) through the checker, every pass, the IR interpreter and native
//!   code, which must agree.
//! - [`targets`]: the bodies of the coverage-guided cargo-fuzz targets
//!   (`fuzz/libfuzzer`), whose regression inputs `cargo test` replays.
//! - [`engines`]: generated programs run on every engine (reference
//!   interpreter, IR interpreter, native code, the JIT at eager thresholds
//!   and with joins everywhere,
//!   the partial evaluator), which must agree.
//!
//! Both are seeded and deterministic: a failure names the seed that
//! reproduces it.

#![forbid(unsafe_code)]

pub mod checker;
pub mod choices;
pub mod engines;
pub mod irgen;
pub mod kill;
pub mod mutants;
pub mod mutate;
pub mod targets;
pub mod valid;

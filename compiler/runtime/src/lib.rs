//! flowc-runtime: what generated code runs on, in the JIT and in built
//! executables alike.
//!
//! - [`word`]: the value representation (tagged 64-bit words);
//! - [`runtime`]: the context of a run and the functions generated code
//!   calls (`flowc_rt_*`): slow paths of operations, objects, printing,
//!   errors;
//! - [`frames`]: the stack maps of compiled code, and the walk of its
//!   frames for roots when the heap collects;
//! - [`start`]: the `main` of executables built by `flowc build`.

pub mod frames;
pub mod runtime;
pub mod start;
pub mod word;

//! flowc-codegen: native code from the IR with Cranelift (docs/architecture.md "Code
//! generation"), for functions compiled ahead of time and for traces.
//!
//! - [`word`] and [`runtime`] (from the flowc-runtime crate, which built
//!   executables link): the value representation (tagged 64-bit words) and
//!   what generated code calls: slow paths, objects, printing, errors;
//! - [`small`]: which values are certainly small integers, and what the
//!   optimistic copy of a function assumes;
//! - [`lower`]: IR to Cranelift IR (with the optimistic copy);
//! - [`baseline`]: traces straight to x86-64 code, for the JIT's first
//!   tier;
//! - [`plan`]: what code each function and trace gets (shape, inline
//!   paths, optimistic copy, Cranelift settings, tiers), and every
//!   threshold of code generation ([`plan::policy`]);
//! - [`define`]: declaring and defining functions in a Cranelift module;
//! - [`compile`]: compiling lowered functions on a second core while the
//!   next are lowered;
//! - [`in_memory`]: compiling a module or traces into memory and running
//!   them (`Native`, `TraceCache`);
//! - [`object`]: object files for executables (`flowc build`).

pub mod baseline;
pub mod chunked;
pub mod clears;
pub mod code_map;
pub mod compile;
pub mod define;
pub mod disasm;
pub mod in_memory;
pub mod lower;
pub mod object;
pub mod plan;
pub mod small;
pub mod tiers;
pub mod walks;

pub use flowc_runtime::{release_freed_memory, runtime, word};

pub use code_map::{FunctionCode, IrPlace, PlaceRange};
pub use define::Options;
pub use in_memory::{
    Apart, CallEnd, CompiledTrace, Emitted, ExitId, Linked, Native, OptimizeFunctions, RunState, TraceCache, TraceEnd,
    TraceId,
};
pub use lower::{fields_always_set, fields_holding_objects};

/// The cores this process may run on (1 where that cannot be told):
/// whether compiles and the JIT's optimizing go to a second one. Asked
/// once per process: `std::thread::available_parallelism` reads the
/// cgroup's quota from files each time, 40-70 µs here, and a short JIT
/// run asked four times.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs `f` on a thread with a stack big enough for the deepest recursion
/// the language allows (generated code keeps its frames on the machine
/// stack; the interpreter's limit is 100,000 calls).
pub fn with_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(s, f)
            .expect("a thread for generated code")
            .join()
            .expect("generated code does not panic")
    })
}

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

// The allocator of everything that links the runtime: flowc itself, its
// tests and benchmarks, and the executables `flowc build` makes. The
// compiler allocates many small vectors (operands, phi inputs, block
// lists) and big integers allocate their digits: mimalloc keeps both fast
// where glibc's malloc degrades (a bignum loop in a built executable spent
// 45% of its time in glibc's malloc and free).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

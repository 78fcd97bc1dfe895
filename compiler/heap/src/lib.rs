//! flowc-heap: the values of the flow-graph language and the heap they
//! live in — what every engine shares, the runtime of compiled code
//! included, and nothing of the language's programs (no syntax of
//! programs, no AST, no interpreter).
//!
//! - [`symbol`]: interned names ([`Symbol`]) and the maps keyed by them;
//! - [`value`]: values ([`Value`]): integers (big ones too), atoms, lists,
//!   objects; printing;
//! - [`heap`]: tagged words, cells, the precise collector, objects' cells
//!   and layouts, integers of up to four limbs;
//! - [`ops`]: the operation table — every operation's arity, forms,
//!   failures and evaluation — and the 63-bit word range;
//! - [`error`]: run-time errors ([`error::ErrorKind`]) and their places;
//! - [`flags`]: debugging switches read from the environment;
//! - [`objects`]: `new`, `get` and `set` as the language defines them;
//! - [`text`]: the text form of values (the term reader, integer
//!   literals, environment lists).
//!
//! flowc-lang re-exports these modules under its own name
//! (`flowc_lang::heap`, `flowc_lang::interp::ErrorKind`, ...).

pub mod error;
pub mod flags;
pub mod heap;
pub mod objects;
pub mod ops;
pub mod symbol;
pub mod text;
pub mod value;

pub use symbol::Symbol;
pub use value::Value;

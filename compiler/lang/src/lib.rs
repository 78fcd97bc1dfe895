//! flowc-lang: the flow-graph language of C. F. Bolz's series "Comparing
//! Partial Evaluation and Tracing" (docs/language.md).
//!
//! - [`symbol`]: interned names and atoms;
//! - [`value`]: runtime values and their printed forms;
//! - [`heap`]: where objects live for every engine, and the collector;
//! - [`ops`]: the operation table every engine shares;
//! - [`ast`]: the syntax tree both syntaxes parse to;
//! - [`mod@env`]: the ordered environment;
//! - [`syntax`]: the Prolog and readable syntaxes (parse and print);
//! - [`interp`]: the reference interpreter;
//! - [`index`]: a program's blocks, functions and declarations by name;
//! - [`pe`]: the partial evaluator of Part 1.

pub mod ast;
pub mod env;
pub mod flow;
pub mod index;
pub mod interp;
pub mod pe;
pub mod syntax;

// Values and the heap they live in, the op table: their own crate
// (flowc-heap, which the runtime of compiled code links without the
// language's syntax or interpreter), here under the language's name.
pub use flowc_heap::{flags, heap, ops, symbol, value};

pub use ast::Program;
pub use env::Env;
pub use symbol::Symbol;
pub use value::Value;

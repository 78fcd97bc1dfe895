//! flowc-ir: the SSA intermediate representation shared by functions and
//! traces (docs/architecture.md "The IR").
//!
//! # Data structures
//!
//! A [`Module`] holds [`Function`]s — the main flow graph lowered from an
//! entry label ([`FunctionKind::Main`]), the program's functions, and traces
//! ([`FunctionKind::Trace`]) — plus the program's hints (`pure` functions,
//! `immutable` fields).
//!
//! A [`Function`] owns three la-arena arenas: blocks ([`BlockData`]),
//! instructions ([`InstData`]) and values ([`ValueData`]), addressed by the
//! typed ids [`BlockId`], [`InstId`] and [`ValueId`]. Arenas are append-only:
//! deleting means unlinking (an instruction from its block's lists, a block
//! from [`Function::layout`]). Analyses keep their results in side tables
//! (`ArenaMap`s, bit sets) keyed by these ids. [`mod@compact`] copies a
//! function into arenas holding only what its layout reaches, for code
//! generation.
//!
//! A block is: phi instructions, then ordinary instructions, then exactly
//! one [`Terminator`]. Control-flow edges are derived from terminators
//! ([`mod@cfg`]); a phi names its input for each predecessor block.
//! Operands ([`Operand`]) are SSA values or inline constants (integers,
//! atoms, lists — never objects).
//!
//! # Invariants (checked by the flowc-ir-checker crate)
//!
//! 1. Every value is defined exactly once: by a parameter or by one
//!    instruction linked into a block of the layout.
//! 2. Every use is dominated by its definition; a phi's input for
//!    predecessor P is available at the end of P.
//! 3. Phis come first in their block and have exactly one input per
//!    predecessor and none from a non-predecessor.
//! 4. Every block has exactly one terminator, last.
//! 5. Every referenced block, value, resume record and function exists.
//! 6. The entry block has no predecessors.
//! 7. Calls pass as many arguments as the callee has parameters.
//! 8. Parameters are distinct values.
//! 9. Guards and iteration counts appear only in traces, and guards' resume data refers only to
//!    values available at the guard. A resume record has at least one
//!    frame; every frame but the innermost has a pending call, the
//!    innermost none.
//! 10. An operation is one of the op table with its arity (other counts are
//!     `missing_op`, which is generic and names no known operation of that
//!     arity), in a form the operation has; constant operands are ones the
//!     form admits, and all-constant operands meet the form's whole promise
//!     (a `.word` operation cannot fail or overflow).
//!
//! The text format ([`mod@parse`]) reads IR exactly as written and repairs
//! nothing, so every invariant above can be broken in a text and is the
//! checker's to report.
//!
//! # Semantics of unbound variables
//!
//! The language reports reading an unset variable (`key_not_found(x)`).
//! In the IR such a variable has a value that is *unbound*: a parameter of
//! the main graph the environment did not give, or an `unbound x`
//! instruction. Phis move unbound values silently; every other use of an
//! unbound value (any instruction operand, any terminator operand) raises
//! `key_not_found(x)`, operands read left to right, exactly where the
//! reference interpreter would. `check_bound` is that use on its own, for
//! the copies (`x = y`) that SSA construction otherwise removes.

#![forbid(unsafe_code)]

pub mod bound;
pub mod builder;
pub mod calls;
pub mod cfg;
pub mod compact;
pub mod dot;
pub mod draw;
pub mod fgl;
pub mod frequency;
pub mod function;
pub mod inst;
pub mod interp;
pub mod live_ranges;
pub mod liveness;
pub mod loops;
pub mod parse;
pub mod phi_users;
pub mod print;
pub mod regions;
pub mod resume;
pub mod rows;
pub mod subst;

pub use builder::Builder;

/// The position of arena id `id` in its arena: the index of the dense side
/// tables analyses keep (a `Vec` with an entry per id; sparse ones are
/// la-arena's `ArenaMap`). One home for what every analysis needs.
#[inline]
pub fn ix<T>(id: la_arena::Idx<T>) -> usize {
    id.into_raw().into_u32() as usize
}
pub use function::{
    BlockData, BlockId, Capacity, Function, FunctionKind, InstData, InstId, InstList, Module, Site, Sites, ValueData,
    ValueDef, ValueId, HUGE_INSTS,
};
pub use inst::{Args, GuardKind, InstKind, Operand, PhiInputs, RowSpan, Successors, Terminator, Trap};
pub use resume::packed::PackedRecords;
pub use resume::{ResumeData, ResumeFrame, ResumeId, ResumeValue, VirtualObject};

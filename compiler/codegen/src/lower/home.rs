//! [`Home`]: where lowering keeps the Cranelift value of each IR value —
//! one strategy per function, trace or region, chosen where it is
//! lowered, and read and written only through [`Home::read`] and
//! [`Home::write`] (the lowerer's `operand` and `set_value`).
//!
//! Two things sit beside it and are not strategies of their own: the
//! words of [`super::Roots`], where values that may point into the heap
//! are also stored for the collector, and a split function's frame
//! ([`super::frame`]), from whose words a region reads the values other
//! regions defined ([`super::Lowerer::read_word`]).

use cranelift_codegen::ir::{types, Value as ClValue};
use cranelift_frontend::{FunctionBuilder, Variable};
use rustc_hash::FxHashMap as HashMap;

use flowc_ir::{ix, Function, ValueId};

pub(super) enum Home {
    /// One Cranelift value per IR value, defined once: code lowered in
    /// dominator order with one definition of each value (a function or
    /// trace with one copy, a region of a split function).
    Values(HashMap<ValueId, ClValue>),
    /// One Cranelift variable per IR value: code in which an IR value has
    /// several definitions — an optimistic copy and the generic one, which
    /// the optimistic copy leaves in the middle of blocks; on-stack
    /// replacement entries, which bring values from the tier-0 frame — so
    /// that Cranelift's SSA builder makes the merges.
    Variables(Vec<Variable>),
}

impl Home {
    /// The home of `f`'s values: variables when a value may have several
    /// definitions (`merges`), else values.
    pub fn new(b: &mut FunctionBuilder, f: &Function, merges: bool) -> Home {
        match merges {
            true => Home::Variables(f.values.iter().map(|_| b.declare_var(types::I64)).collect()),
            false => Home::Values(HashMap::default()),
        }
    }

    /// The Cranelift value of `v` here, if it has one in this home (a
    /// region's value from another region has none: it is in the frame).
    pub fn read(&self, b: &mut FunctionBuilder, v: ValueId) -> Option<ClValue> {
        match self {
            Home::Values(values) => values.get(&v).copied(),
            Home::Variables(vars) => Some(b.use_var(vars[ix(v)])),
        }
    }

    /// Makes `x` the value of `v` from here on.
    pub fn write(&mut self, b: &mut FunctionBuilder, v: ValueId, x: ClValue) {
        match self {
            Home::Values(values) => {
                values.insert(v, x);
            }
            Home::Variables(vars) => b.def_var(vars[ix(v)], x),
        }
    }

    /// Whether values are merged by Cranelift's SSA builder (an IR block
    /// lowered more than once, in an optimistic copy, or entered from
    /// several places, at on-stack replacement entries).
    pub fn merges(&self) -> bool {
        matches!(self, Home::Variables(_))
    }
}

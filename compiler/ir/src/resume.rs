//! Resume data of guards: how to rebuild the interpreter's state when a
//! guard fails (Part 3 "Resuming to the Interpreter", extended with call
//! frames and virtual objects).
//!
//! A record lists frames from the outermost (the trace's own flow graph) to
//! the innermost (the function the guard was recorded in, when the trace
//! inlined calls), each with its ordered environment; every frame but the
//! innermost has a pending call: the variable its result goes to and the
//! label execution continues at when the callee returns. The innermost
//! frame continues at the guard's own label, so guards that resume at
//! different places can share one record. Each variable maps to an operand
//! or to a virtual object — an allocation the trace optimizer removed,
//! rebuilt only on failure.

use flowc_lang::Symbol;

pub mod packed;

use crate::inst::Operand;
use crate::ValueId;

pub type ResumeId = la_arena::Idx<ResumeData>;

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ResumeData {
    pub frames: Vec<ResumeFrame>,
    pub virtuals: Vec<VirtualObject>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResumeFrame {
    /// The function the frame runs, `None` for the main flow graph.
    pub function: Option<Symbol>,
    /// The frame's environment, in the interpreter's order.
    pub env: Vec<(Symbol, ResumeValue)>,
    /// For every frame but the innermost: the pending call's result
    /// variable and the label to continue at when it returns.
    pub call: Option<(Symbol, Symbol)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ResumeValue {
    Operand(Operand),
    /// Index into [`ResumeData::virtuals`].
    Virtual(u32),
}

/// An object that exists only in the resume data.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VirtualObject {
    pub class: Symbol,
    pub fields: Vec<(Symbol, ResumeValue)>,
}

impl ResumeData {
    /// The record with value `old` replaced by `new` wherever it stands.
    pub fn replace(&mut self, old: ValueId, new: ValueId) {
        let frames = self.frames.iter_mut().flat_map(|f| f.env.iter_mut().map(|(_, v)| v));
        let virtuals = self.virtuals.iter_mut().flat_map(|v| v.fields.iter_mut().map(|(_, v)| v));
        for v in frames.chain(virtuals) {
            if *v == ResumeValue::Operand(Operand::Value(old)) {
                *v = ResumeValue::Operand(Operand::Value(new));
            }
        }
    }

    /// Every operand the record refers to.
    pub fn operands(&self) -> impl Iterator<Item = &Operand> {
        let frames = self.frames.iter().flat_map(|f| f.env.iter().map(|(_, v)| v));
        let virtuals = self.virtuals.iter().flat_map(|v| v.fields.iter().map(|(_, v)| v));
        frames.chain(virtuals).filter_map(|v| match v {
            ResumeValue::Operand(o) => Some(o),
            ResumeValue::Virtual(_) => None,
        })
    }

    pub fn operands_mut(&mut self) -> impl Iterator<Item = &mut Operand> {
        let frames = self.frames.iter_mut().flat_map(|f| f.env.iter_mut().map(|(_, v)| v));
        let virtuals = self.virtuals.iter_mut().flat_map(|v| v.fields.iter_mut().map(|(_, v)| v));
        frames.chain(virtuals).filter_map(|v| match v {
            ResumeValue::Operand(o) => Some(o),
            ResumeValue::Virtual(_) => None,
        })
    }
}

//! Resume data of guards: how to rebuild the interpreter's state when a
//! guard fails (Part 3 "Resuming to the Interpreter", extended with call
//! frames and virtual objects).
//!
//! A record lists frames from the outermost (the trace's own flow graph) to
//! the innermost (the function the guard was recorded in, when the trace
//! inlined calls). Each frame gives the label to continue at and its ordered
//! environment; each variable maps to an operand or to a virtual object —
//! an allocation the trace optimizer removed, rebuilt only on failure.

use flowc_lang::Symbol;

use crate::inst::Operand;

pub type ResumeId = la_arena::Idx<ResumeData>;

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ResumeData {
    pub frames: Vec<ResumeFrame>,
    pub virtuals: Vec<VirtualObject>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumeFrame {
    /// The function the frame runs, `None` for the main flow graph.
    pub function: Option<Symbol>,
    /// Where the interpreter continues in this frame.
    pub label: Symbol,
    /// The frame's environment, in the interpreter's order.
    pub env: Vec<(Symbol, ResumeValue)>,
    /// For frames with a callee frame after them: the variable receiving the
    /// callee's result (the caller's `call` continues at `label`).
    pub result: Option<Symbol>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResumeValue {
    Operand(Operand),
    /// Index into [`ResumeData::virtuals`].
    Virtual(u32),
}

/// An object that exists only in the resume data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VirtualObject {
    pub class: Symbol,
    pub fields: Vec<(Symbol, ResumeValue)>,
}

impl ResumeData {
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

//! A builder for functions: create blocks, append instructions, set
//! terminators. Used by the front end, the tracer and tests.

use flowc_lang::ast::Operator;
use flowc_lang::ops::Op;
use flowc_lang::Symbol;

use crate::function::{
    BlockData, BlockId, Capacity, Function, FunctionKind, InstData, InstId, ValueData, ValueDef, ValueId,
};
use crate::inst::{Args, InstKind, PhiInputs, Terminator, Trap};
use crate::resume::{ResumeData, ResumeId};

/// Builds one [`Function`].
pub struct Builder {
    pub func: Function,
}

impl Builder {
    pub fn new(kind: FunctionKind, name: Symbol) -> Builder {
        Builder { func: Function::new(kind, name) }
    }

    /// A builder with room reserved for a function of about this size.
    pub fn with_capacity(kind: FunctionKind, name: Symbol, capacity: Capacity) -> Builder {
        Builder { func: Function::with_capacity(kind, name, capacity) }
    }

    pub fn finish(self) -> Function {
        self.func
    }

    pub fn entry(&self) -> BlockId {
        self.func.entry
    }

    /// A new block at the end of the layout (terminated by a placeholder trap).
    pub fn block(&mut self, name: Option<Symbol>) -> BlockId {
        let b = self.func.blocks.alloc(BlockData {
            name,
            phis: Default::default(),
            insts: Default::default(),
            term: Terminator::Trap(Trap::ReturnOutsideFunction),
        });
        self.func.layout.push(b);
        b
    }

    pub fn set_name(&mut self, b: BlockId, name: Option<Symbol>) {
        self.func.blocks[b].name = name;
    }

    /// A new parameter value.
    pub fn param(&mut self, name: Option<Symbol>) -> ValueId {
        let n = self.func.params.len() as u32;
        let v = self.func.values.alloc(ValueData { def: ValueDef::Param(n), name });
        self.func.params.push(v);
        v
    }

    fn make(&mut self, kind: InstKind, name: Option<Symbol>) -> (InstId, Option<ValueId>) {
        let has_result = kind.has_result();
        let i = self.func.insts.alloc(InstData { kind, result: None });
        let result = has_result.then(|| self.func.values.alloc(ValueData { def: ValueDef::Inst(i), name }));
        self.func.insts[i].result = result;
        (i, result)
    }

    /// Appends an instruction to `b`; returns its result value, if any.
    pub fn inst(&mut self, b: BlockId, kind: InstKind, name: Option<Symbol>) -> Option<ValueId> {
        let (i, v) = self.make(kind, name);
        self.func.blocks[b].insts.push(i);
        v
    }

    /// Appends a phi to `b`.
    pub fn phi(&mut self, b: BlockId, inputs: impl Into<PhiInputs>, name: Option<Symbol>) -> ValueId {
        let (i, v) = self.make(InstKind::Phi(inputs.into()), name);
        self.func.blocks[b].phis.push(i);
        v.expect("phis have results")
    }

    /// Appends a known operation in its generic form (given the wrong
    /// number of operands, an unknown one of its name:
    /// [`InstKind::generic_op`]).
    pub fn op(&mut self, b: BlockId, op: Op, args: impl Into<Args>, name: Option<Symbol>) -> ValueId {
        let kind = InstKind::generic_op(Operator::Known(op), args);
        self.inst(b, kind, name).expect("ops have results")
    }

    pub fn terminate(&mut self, b: BlockId, term: Terminator) {
        self.func.blocks[b].term = term;
    }

    pub fn resume(&mut self, data: ResumeData) -> ResumeId {
        self.func.resumes.alloc(data)
    }
}

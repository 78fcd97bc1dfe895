//! What the checker reports: a [`Violation`] names the function, where in it
//! (block, then instruction, terminator or parameter), the broken [`Rule`]
//! and a message naming the values and blocks involved.
//!
//! One line per violation:
//!
//! ```text
//! function fib, block b3, instruction `v7 = add v2, v9`: [use-dominated] v9 is used here but its definition in b5 does not dominate b3
//! ```
//!
//! Blocks, values and resume records print as in the text format (`b3`,
//! `v9`, `r0`); an id outside its arena prints the same way, so the message
//! still says which number was wrong.

use std::fmt;

use flowc_ir::BlockId;

/// The invariants, one variant each; [`Rule::name`] is the kebab-case name
/// printed in brackets.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// Every value is defined exactly once, by a parameter or by one linked
    /// instruction, and its `ValueDef` says so; an instruction has a result
    /// exactly when its kind defines a value.
    SingleDef,
    /// Every use is dominated by its definition (a phi input at the end of
    /// its predecessor).
    UseDominated,
    /// A used value is defined by no parameter and no linked instruction.
    UndefinedValue,
    /// Phis only in a block's phi list, and only phis there.
    PhisFirst,
    /// A phi has exactly one input per predecessor and no other input.
    PhiInputs,
    /// No instruction is linked twice; no block is in the layout twice.
    LinkedOnce,
    /// Every referenced block, value, instruction, resume record and
    /// virtual object exists; referenced blocks are in the layout.
    DanglingRef,
    /// The entry is `layout[0]` and has no predecessors.
    EntryBlock,
    /// Parameters are distinct values.
    DistinctParams,
    /// Guards, iteration counts and exits appear only in traces.
    GuardInTrace,
    /// A guard's resume data refers only to values available at the guard.
    ResumeAvailable,
    /// A `call` names a function (kind `function`) of the module.
    CallTarget,
    /// A `call` passes as many arguments as the callee has parameters.
    CallArity,
    /// Function names (kind `function`) are unique in a module.
    UniqueFunction,
    /// An operation is one of the op table in a form it has, and constant
    /// operands meet what the form promises.
    OpForm,
    /// A resume record has frames, pending calls in all but the innermost.
    ResumeShape,
}

impl Rule {
    /// Every rule, in declaration order.
    pub const ALL: [Rule; 16] = [
        Rule::SingleDef,
        Rule::UseDominated,
        Rule::UndefinedValue,
        Rule::PhisFirst,
        Rule::PhiInputs,
        Rule::LinkedOnce,
        Rule::DanglingRef,
        Rule::EntryBlock,
        Rule::DistinctParams,
        Rule::GuardInTrace,
        Rule::ResumeAvailable,
        Rule::CallTarget,
        Rule::CallArity,
        Rule::UniqueFunction,
        Rule::OpForm,
        Rule::ResumeShape,
    ];

    /// The short kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Rule::SingleDef => "single-def",
            Rule::UseDominated => "use-dominated",
            Rule::UndefinedValue => "undefined-value",
            Rule::PhisFirst => "phis-first",
            Rule::PhiInputs => "phi-inputs",
            Rule::LinkedOnce => "linked-once",
            Rule::DanglingRef => "dangling-ref",
            Rule::EntryBlock => "entry-block",
            Rule::DistinctParams => "distinct-params",
            Rule::GuardInTrace => "guard-in-trace",
            Rule::ResumeAvailable => "resume-available",
            Rule::CallTarget => "call-target",
            Rule::CallArity => "call-arity",
            Rule::UniqueFunction => "unique-function",
            Rule::OpForm => "op-form",
            Rule::ResumeShape => "resume-shape",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The entity inside a block (or function) a violation is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum At {
    /// An instruction, as printed by `flowc_ir::print::inst_to_string`.
    Inst(String),
    /// A terminator, as printed by `flowc_ir::print::terminator_to_string`.
    Terminator(String),
    /// The `n`-th parameter.
    Param(usize),
}

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The function's name.
    pub function: String,
    /// The block, if the violation is inside one.
    pub block: Option<BlockId>,
    /// The instruction, terminator or parameter, if any.
    pub at: Option<At>,
    pub rule: Rule,
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "function {}", self.function)?;
        if let Some(b) = self.block {
            write!(f, ", block {}", flowc_ir::print::block_ref(b))?;
        }
        match &self.at {
            Some(At::Inst(text)) => write!(f, ", instruction `{text}`")?,
            Some(At::Terminator(text)) => write!(f, ", terminator `{text}`")?,
            Some(At::Param(n)) => write!(f, ", parameter {n}")?,
            None => {}
        }
        write!(f, ": [{}] {}", self.rule, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_names_are_distinct_kebab_case() {
        let names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
        for (k, n) in names.iter().enumerate() {
            assert!(n.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{n}");
            assert!(!names[..k].contains(n), "{n} twice");
        }
    }

    #[test]
    fn display_names_the_location() {
        let v = |at| Violation {
            function: "fib".to_owned(),
            block: None,
            at,
            rule: Rule::DistinctParams,
            message: "v0 is also parameter 0".to_owned(),
        };
        let lines: Vec<String> = [None, Some(At::Param(1)), Some(At::Terminator("return v0".to_owned()))]
            .into_iter()
            .map(|at| v(at).to_string())
            .collect();
        expect_test::expect![[r#"
            function fib: [distinct-params] v0 is also parameter 0
            function fib, parameter 1: [distinct-params] v0 is also parameter 0
            function fib, terminator `return v0`: [distinct-params] v0 is also parameter 0"#]]
        .assert_eq(&lines.join("\n"));
    }
}

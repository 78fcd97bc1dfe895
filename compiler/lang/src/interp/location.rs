//! The statement text of an error's place: [`LocationText`], which reads
//! it from the program (a [`Location`] made by compiled code knows where
//! it is, not what the statement says).

use flowc_heap::error::Location;
use flowc_heap::Symbol;

use crate::syntax::readable_print::{stmt_to_string, terminator_to_string};
use crate::Program;

/// Places of errors in a program, with their statements' text.
pub trait LocationText: Sized {
    /// Statement `statement` (1-based; one past the last is the
    /// terminator) of block `block` of `function` (`None`: the main graph)
    /// in `program`, with its text; `None` if there is no such statement.
    fn in_program(program: &Program, function: Option<Symbol>, block: Symbol, statement: usize) -> Option<Self>;

    /// This place with its statement's text taken from `program`.
    fn with_text(self, program: &Program) -> Self;
}

impl LocationText for Location {
    fn in_program(program: &Program, function: Option<Symbol>, block: Symbol, statement: usize) -> Option<Location> {
        let b = match function {
            None => program.main_blocks().find(|b| b.label == block)?,
            Some(f) => program.function(f)?.blocks.iter().find(|b| b.label == block)?,
        };
        let is_terminator = statement > b.body.len();
        let text = match statement.checked_sub(1).and_then(|k| b.body.get(k)) {
            Some(s) => stmt_to_string(s),
            None if is_terminator => terminator_to_string(&b.term),
            None => return None,
        };
        Some(Location { function, block, statement, is_terminator, text })
    }

    fn with_text(self, program: &Program) -> Location {
        Location::in_program(program, self.function, self.block, self.statement).unwrap_or(self)
    }
}

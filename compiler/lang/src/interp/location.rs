//! The statement text of an error's place: [`Program::location`] and
//! [`Program::with_text`] read it from the program (a [`Location`] made by
//! compiled code knows where it is, not what the statement says).

use flowc_heap::error::Location;
use flowc_heap::Symbol;

use crate::syntax::readable_print::{stmt_to_string, terminator_to_string};
use crate::Program;

impl Program {
    /// Statement `statement` (1-based; one past the last is the
    /// terminator) of block `block` of `function` (`None`: the main graph)
    /// as a place with its text; `None` if there is no such statement.
    pub fn location(&self, function: Option<Symbol>, block: Symbol, statement: usize) -> Option<Location> {
        let b = match function {
            None => self.main_blocks().find(|b| b.label == block)?,
            Some(f) => self.function(f)?.blocks.iter().find(|b| b.label == block)?,
        };
        let is_terminator = statement > b.body.len();
        let text = match statement.checked_sub(1).and_then(|k| b.body.get(k)) {
            Some(s) => stmt_to_string(s),
            None if is_terminator => terminator_to_string(&b.term),
            None => return None,
        };
        Some(Location { function, block, statement, is_terminator, text })
    }

    /// Place `at` with its statement's text taken from this program (`at`
    /// as it is if the program has no such statement).
    pub fn with_text(&self, at: Location) -> Location {
        self.location(at.function, at.block, at.statement).unwrap_or(at)
    }
}

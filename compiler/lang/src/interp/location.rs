//! The statement text of an error's place: [`Program::location`] and
//! [`Program::with_text`] read it from the program (a [`Location`] made by
//! compiled code knows where it is, not what the statement says).
//!
//! The program finds a block by scanning its items, which is fine for one
//! error; whatever describes many places (`flowc build` writes the text of
//! every error site of a program into its executable) asks a
//! [`ProgramIndex`] instead, whose [`ProgramIndex::location`] answers the
//! same in constant time per place.

use flowc_heap::error::Location;
use flowc_heap::Symbol;

use crate::ast::Block;
use crate::index::ProgramIndex;
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
        location_in(b, function, statement)
    }

    /// Place `at` with its statement's text taken from this program (`at`
    /// as it is if the program has no such statement).
    pub fn with_text(&self, at: Location) -> Location {
        self.location(at.function, at.block, at.statement).unwrap_or(at)
    }
}

impl ProgramIndex<'_> {
    /// [`Program::location`], the block found by label in the index.
    pub fn location(&self, function: Option<Symbol>, block: Symbol, statement: usize) -> Option<Location> {
        location_in(self.block(function, block)?, function, statement)
    }

    /// [`Program::with_text`], the block found by label in the index.
    pub fn with_text(&self, at: Location) -> Location {
        self.location(at.function, at.block, at.statement).unwrap_or(at)
    }
}

/// Statement `statement` of block `b` (of `function`) as a place with its
/// text ([`Program::location`]).
fn location_in(b: &Block, function: Option<Symbol>, statement: usize) -> Option<Location> {
    let is_terminator = statement > b.body.len();
    let text = match statement.checked_sub(1).and_then(|k| b.body.get(k)) {
        Some(s) => stmt_to_string(s),
        None if is_terminator => terminator_to_string(&b.term),
        None => return None,
    };
    Some(Location { function, block: b.label, statement, is_terminator, text })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;

    #[test]
    fn the_index_describes_every_place_as_the_program_does() {
        let text = "
function twice(x):
    s:
        y = x * 2
        return y
start:
    a = call twice(3) then done
done:
    b = a + 1
    print_and_stop(b)
";
        let p = syntax::parse("test", text).unwrap_or_else(|e| panic!("{e}"));
        let index = ProgramIndex::new(&p);
        let s = Symbol::intern;
        let places =
            [(None, "start"), (None, "done"), (None, "nowhere"), (Some("twice"), "s"), (Some("twice"), "start")];
        for (function, block) in places {
            for statement in 0..5 {
                let (function, block) = (function.map(s), s(block));
                let by_index = index.location(function, block, statement);
                assert_eq!(by_index, p.location(function, block, statement), "{function:?} {block} {statement}");
            }
        }
        let first = index.location(None, s("start"), 1).expect("a statement");
        assert_eq!(first.text, "a = call twice(3) then done");
        let done = index.location(None, s("done"), 2).expect("the terminator");
        assert!(done.is_terminator && done.text == "print_and_stop(b)", "{done:?}");
        assert!(index.location(None, s("done"), 0).is_none(), "statements count from 1");
        let bare =
            Location { function: None, block: s("nowhere"), statement: 1, is_terminator: false, text: String::new() };
        assert_eq!(index.with_text(bare.clone()), bare, "a place the program lacks stays as it was");
    }
}

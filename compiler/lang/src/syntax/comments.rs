//! The comments of a source file, kept apart from the program so that
//! `flowc fmt` can print them back (the [`crate::ast::Program`] itself has
//! none: comments do not change what a program means, and the AST's
//! equality stays that of the program).
//!
//! Each comment line is anchored at a [`Place`]: the item, block and
//! statement it stands before. A comment at the end of a line of code is
//! moved onto a line of its own before that code. The Prolog syntax's
//! `/* ... */` comments become one comment line per line. Printers walk the
//! program in order and, at every place, write the comments anchored
//! there ([`Cursor`]); comments after the last item end the file.
//!
//! The readable syntax anchors comments at statements and labels; the
//! Prolog syntax at statements of blocks (by the position of the nested
//! statement terms) and otherwise at the clause they stand in or before.

/// Where a comment line stands: before item `item` (`block` and `stmt`
/// `None`), before the label of block `block` of that item (a main-graph
/// block is block 0 of its item), or before statement `stmt` of that block
/// (`stmt` equal to the block's statement count: before its terminator).
/// The derived order is source order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub item: usize,
    pub block: Option<usize>,
    pub stmt: Option<usize>,
}

impl Place {
    pub fn item(item: usize) -> Place {
        Place { item, block: None, stmt: None }
    }

    pub fn block(item: usize, block: usize) -> Place {
        Place { item, block: Some(block), stmt: None }
    }

    pub fn stmt(item: usize, block: usize, stmt: usize) -> Place {
        Place { item, block: Some(block), stmt: Some(stmt) }
    }
}

/// One comment line: its place and its text without the comment marker
/// (`# note` and `% note` both keep ` note`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub at: Place,
    pub text: String,
}

/// The comment lines of a file, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comments {
    pub lines: Vec<Comment>,
}

impl Comments {
    pub fn push(&mut self, at: Place, text: &str) {
        self.lines.push(Comment { at, text: text.trim_end().to_owned() });
    }
}

/// Writes comments while a printer walks the program in source order.
pub struct Cursor<'c> {
    lines: &'c [Comment],
    next: usize,
    /// `#` or `%`.
    marker: char,
}

impl<'c> Cursor<'c> {
    pub fn new(comments: &'c Comments, marker: char) -> Cursor<'c> {
        Cursor { lines: &comments.lines, next: 0, marker }
    }

    /// Writes, each on a line of its own at `indent`, the comments anchored
    /// at or before `at` not written yet.
    pub fn before(&mut self, out: &mut String, at: Place, indent: &str) {
        while let Some(c) = self.lines.get(self.next).filter(|c| c.at <= at) {
            out.push_str(indent);
            out.push(self.marker);
            out.push_str(&c.text);
            out.push('\n');
            self.next += 1;
        }
    }

    /// Writes the comments not written yet (those after the last item).
    pub fn rest(&mut self, out: &mut String) {
        self.before(out, Place::item(usize::MAX), "");
    }

    /// Prints `program`'s items in order with `print_item` (given the
    /// cursor and the item's index, for the comments inside it): a blank
    /// line between items but not between two directives, the comments
    /// before each item, and those after the last at the end.
    pub fn print_items(
        &mut self,
        out: &mut String,
        program: &crate::ast::Program,
        mut print_item: impl FnMut(&mut String, &mut Cursor<'c>, usize, &crate::ast::Item),
    ) {
        use crate::ast::Item;
        let mut prev_was_directive = false;
        for (i, item) in program.items.iter().enumerate() {
            let directive = !matches!(item, Item::Block(_) | Item::Function(_));
            if i > 0 && !(directive && prev_was_directive) {
                out.push('\n');
            }
            prev_was_directive = directive;
            self.before(out, Place::item(i), "");
            print_item(out, self, i, item);
        }
        self.rest(out);
    }
}

/// The text of a Prolog comment starting at `src[pos..]` (`%` to the end
/// of the line, or `/* ... */`), as comment lines without markers.
pub fn prolog_comment_lines(comment: &str) -> Vec<&str> {
    if let Some(line) = comment.strip_prefix('%') {
        return vec![line];
    }
    let body = comment.strip_prefix("/*").unwrap_or(comment);
    let body = body.strip_suffix("*/").unwrap_or(body);
    body.lines().collect()
}

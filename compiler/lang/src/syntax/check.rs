//! Checks every parser applies while reading items: no duplicate labels in
//! one flow graph, no duplicate functions, no duplicate parameters. (Jumps
//! to labels that do not exist are run-time errors, as in the series: a
//! program may carry blocks it never reaches.)

use std::collections::HashSet;

use super::diag::RawError;
use crate::ast::{Block, Item};
use crate::symbol::Symbol;

#[derive(Default)]
pub(crate) struct Validator {
    main_labels: HashSet<Symbol>,
    functions: HashSet<Symbol>,
}

impl Validator {
    /// Checks `item`, read at byte offset `pos`.
    pub(crate) fn item(&mut self, item: &Item, pos: usize) -> Result<(), RawError> {
        match item {
            Item::Block(b) if !self.main_labels.insert(b.label) => {
                return Err(RawError::new(pos, format!("duplicate block label `{}`", b.label)));
            }
            Item::Function(f) => {
                if !self.functions.insert(f.name) {
                    return Err(RawError::new(pos, format!("duplicate function `{}`", f.name)));
                }
                let mut params = HashSet::new();
                if let Some(p) = f.params.iter().find(|p| !params.insert(**p)) {
                    return Err(RawError::new(pos, format!("function `{}` has parameter `{p}` twice", f.name)));
                }
                check_labels(&f.blocks, pos, &format!(" in function `{}`", f.name))?;
            }
            _ => {}
        }
        Ok(())
    }
}

fn check_labels(blocks: &[Block], pos: usize, context: &str) -> Result<(), RawError> {
    let mut seen = HashSet::new();
    match blocks.iter().find(|b| !seen.insert(b.label)) {
        Some(b) => Err(RawError::new(pos, format!("duplicate block label `{}`{context}", b.label))),
        None => Ok(()),
    }
}

//! Checks every parser applies while reading items: no duplicate labels in
//! one flow graph, no duplicate functions, no duplicate parameters; and at
//! the end of the file, that every `pure` names a function of the file and
//! every `can_enter_jit` a label of it (a misspelt hint would otherwise be
//! ignored without a word). (Jumps to labels that do not exist are run-time
//! errors, as in the series: a program may carry blocks it never reaches.)

use rustc_hash::FxHashSet as HashSet;

use super::diag::RawError;
use crate::ast::{Block, Item};
use crate::symbol::Symbol;

#[derive(Default)]
pub(crate) struct Validator {
    main_labels: HashSet<Symbol>,
    functions: HashSet<Symbol>,
    /// Labels of functions' blocks.
    function_labels: HashSet<Symbol>,
    /// Hints read so far, with their offsets, checked at the end.
    hints: Vec<(usize, Item)>,
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
                let mut params = HashSet::default();
                if let Some(p) = f.params.iter().find(|p| !params.insert(**p)) {
                    return Err(RawError::new(pos, format!("function `{}` has parameter `{p}` twice", f.name)));
                }
                check_labels(&f.blocks, pos, &format!(" in function `{}`", f.name))?;
                self.function_labels.extend(f.blocks.iter().map(|b| b.label));
            }
            Item::Pure(_) | Item::CanEnterJit(_) => self.hints.push((pos, item.clone())),
            _ => {}
        }
        Ok(())
    }

    /// Checks the hints once the whole file is read.
    pub(crate) fn finish(&self) -> Result<(), RawError> {
        for (pos, hint) in &self.hints {
            match hint {
                Item::Pure(f) if !self.functions.contains(f) => {
                    return Err(RawError::new(
                        *pos,
                        format!("`pure` names `{f}`, which is not a function of this file"),
                    ));
                }
                Item::CanEnterJit(l) if !self.main_labels.contains(l) && !self.function_labels.contains(l) => {
                    return Err(RawError::new(
                        *pos,
                        format!("`can_enter_jit` names `{l}`, which is not a label of this file"),
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn check_labels(blocks: &[Block], pos: usize, context: &str) -> Result<(), RawError> {
    let mut seen = HashSet::default();
    match blocks.iter().find(|b| !seen.insert(b.label)) {
        Some(b) => Err(RawError::new(pos, format!("duplicate block label `{}`{context}", b.label))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::syntax::parse;

    fn error(src: &str) -> String {
        match parse("t", src) {
            Ok(_) => String::new(),
            Err(e) => format!("{}:{}: {}", e.line, e.column, e.message),
        }
    }

    #[test]
    fn hints_must_name_what_the_file_has() {
        let readable = r#"start:
    print_and_stop(1)
pure nonexistent
"#;
        assert_eq!(error(readable), "3:1: `pure` names `nonexistent`, which is not a function of this file");
        let prolog = "block(start, print_and_stop(const(1))).\ncan_enter_jit(nope).\n";
        assert_eq!(error(prolog), "2:1: `can_enter_jit` names `nope`, which is not a label of this file");
        // Declared before what they name, and a label inside a function.
        let fine = r#"pure f
can_enter_jit loop
function f(x):
    loop:
        return x
start:
    print_and_stop(1)
"#;
        assert_eq!(error(fine), "");
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let src = "\u{feff}start:\n    x = 1\n    print_and_stop(x)\n";
        assert_eq!(error(src), "");
        let prolog = "\u{feff}block(start, print_and_stop(const(1))).\n";
        assert_eq!(error(prolog), "");
        assert_eq!(error("\u{feff}start:\n    x = \n"), error("start:\n    x = \n"), "columns as without the mark");
    }
}

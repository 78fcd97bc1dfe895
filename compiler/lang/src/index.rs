//! A program looked up by name in constant time: blocks by label (per
//! flow graph), functions by name, `immutable` fields and `pure`
//! functions.
//!
//! [`Program`] keeps its items as parsed, in one list, and answers these
//! questions by scanning it: fine for a program written by hand, but a
//! residual program of partial evaluation has tens of thousands of
//! blocks, and the tracer asks for a block at every step of a recording
//! and for a field's mutability at every `get` and `set`. Whatever runs
//! many such lookups builds an index once and asks it.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::ast::{Block, Function, Program};
use crate::symbol::{Symbol, SymbolMap};

/// A function, its blocks by label, and the labels of its loops' exit
/// branches once asked for (`None`: not analysed).
type Indexed<'p> = (&'p Function, SymbolMap<&'p Block>, OnceLock<Option<HashSet<Symbol>>>);

/// The index of one program.
pub struct ProgramIndex<'p> {
    program: &'p Program,
    /// Blocks of the main flow graph, by label.
    main: SymbolMap<&'p Block>,
    /// Functions by name, with their blocks by label, and the labels of
    /// their loops' exit branches once asked for ([`ProgramIndex::leaves_loop`]).
    functions: SymbolMap<Indexed<'p>>,
    immutable: HashSet<(Symbol, Symbol)>,
    pure: HashSet<Symbol>,
}

impl<'p> ProgramIndex<'p> {
    /// Indexes `program`. A name declared twice resolves to its first
    /// declaration, as the program's own lookups do.
    pub fn new(program: &'p Program) -> ProgramIndex<'p> {
        let mut main = SymbolMap::default();
        for b in program.main_blocks() {
            main.entry(b.label).or_insert(b);
        }
        let mut functions = SymbolMap::default();
        for f in program.functions() {
            functions.entry(f.name).or_insert_with(|| {
                let mut blocks = SymbolMap::default();
                for b in &f.blocks {
                    blocks.entry(b.label).or_insert(b);
                }
                (f, blocks, OnceLock::new())
            });
        }
        let mut immutable = HashSet::new();
        let mut pure = HashSet::new();
        for item in &program.items {
            match item {
                crate::ast::Item::Immutable(class, fields) => immutable.extend(fields.iter().map(|f| (*class, *f))),
                crate::ast::Item::Pure(f) => _ = pure.insert(*f),
                _ => {}
            }
        }
        ProgramIndex { program, main, functions, immutable, pure }
    }

    pub fn program(&self) -> &'p Program {
        self.program
    }

    /// The block labelled `label` of the main graph (`function` `None`)
    /// or of function `function`.
    pub fn block(&self, function: Option<Symbol>, label: Symbol) -> Option<&'p Block> {
        match function {
            None => self.main.get(&label).copied(),
            Some(f) => self.functions.get(&f).and_then(|(_, blocks, _)| blocks.get(&label).copied()),
        }
    }

    pub fn function(&self, name: Symbol) -> Option<&'p Function> {
        self.functions.get(&name).map(|(f, ..)| *f)
    }

    /// Whether the branch ending block `label` of function `function` may
    /// leave a loop: the block is on a cycle and one of its successors is
    /// not on that cycle (it cannot come back to the block). A function
    /// of more than [`LOOP_EXITS_UP_TO`] blocks is not analysed: every
    /// branch of it may.
    pub fn leaves_loop(&self, function: Symbol, label: Symbol) -> bool {
        let Some((f, blocks, exits)) = self.functions.get(&function) else { return true };
        let exits = exits.get_or_init(|| loop_exits(f, blocks));
        exits.as_ref().is_none_or(|e| e.contains(&label))
    }

    /// Whether field `field` of class `class` is declared immutable.
    pub fn is_immutable(&self, class: Symbol, field: Symbol) -> bool {
        self.immutable.contains(&(class, field))
    }

    /// Whether `pure(name)` is declared.
    pub fn is_pure(&self, name: Symbol) -> bool {
        self.pure.contains(&name)
    }
}

/// Functions up to this many blocks have their loop exits found
/// ([`ProgramIndex::leaves_loop`]), by a search from each block.
pub const LOOP_EXITS_UP_TO: usize = 256;

/// The labels of `f`'s blocks that end in a branch out of a loop: on a
/// cycle, with a successor that cannot reach them again.
fn loop_exits(f: &Function, blocks: &SymbolMap<&Block>) -> Option<HashSet<Symbol>> {
    if f.blocks.len() > LOOP_EXITS_UP_TO {
        return None;
    }
    let reaches = |from: Symbol, to: Symbol| {
        let mut seen = HashSet::new();
        let mut work = vec![from];
        while let Some(l) = work.pop() {
            if l == to {
                return true;
            }
            if seen.insert(l) {
                work.extend(blocks.get(&l).map(|b| b.term.successors()).unwrap_or_default());
            }
        }
        false
    };
    let mut exits = HashSet::new();
    for b in &f.blocks {
        let next = b.term.successors();
        let on_cycle = next.iter().any(|&n| reaches(n, b.label));
        if on_cycle && next.iter().any(|&n| !reaches(n, b.label)) {
            exits.insert(b.label);
        }
    }
    Some(exits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax;

    #[test]
    fn the_index_answers_as_the_program_does() {
        let text = "
immutable pair(left)
pure twice
function twice(x):
    s:
        y = x * 2
        return y
    other:
        return 0
start:
    a = call twice(3) then done
done:
    print_and_stop(a)
";
        let p = syntax::parse("test", text).unwrap_or_else(|e| panic!("{e}"));
        let index = ProgramIndex::new(&p);
        let s = Symbol::intern;
        for label in ["start", "done", "s", "nowhere"] {
            assert_eq!(index.block(None, s(label)).map(|b| b.label), p.block(s(label)).map(|b| b.label), "{label}");
        }
        let twice = p.function(s("twice")).expect("declared");
        assert_eq!(index.function(s("twice")).map(|f| f.name), Some(twice.name));
        assert_eq!(index.block(Some(s("twice")), s("other")).map(|b| b.label), Some(s("other")));
        assert!(index.block(Some(s("twice")), s("start")).is_none(), "main's labels are not the function's");
        assert!(index.block(Some(s("thrice")), s("s")).is_none());
        assert!(index.is_immutable(s("pair"), s("left")));
        assert!(!index.is_immutable(s("pair"), s("right")));
        assert!(index.is_pure(s("twice")) && !index.is_pure(s("start")));
    }
}

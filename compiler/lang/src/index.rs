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

/// A function, its blocks by label, and its loops once asked for
/// (`None`: not analysed).
type Indexed<'p> = (&'p Function, SymbolMap<&'p Block>, OnceLock<Option<Loops>>);

/// The labels of a function's blocks that are in a loop, and of those
/// that branch out of the innermost loop they are in.
#[derive(Debug, Default)]
struct Loops {
    inside: HashSet<Symbol, crate::symbol::BuildSymbolHasher>,
    exits: HashSet<Symbol, crate::symbol::BuildSymbolHasher>,
}

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

    /// Whether the program declares any function.
    pub fn has_functions(&self) -> bool {
        !self.functions.is_empty()
    }

    pub fn function(&self, name: Symbol) -> Option<&'p Function> {
        self.functions.get(&name).map(|(f, ..)| *f)
    }

    /// Whether the branch ending block `label` of function `function` may
    /// leave a loop: one of its successors is outside the innermost loop
    /// the block is in (the inner loop's exit of a nest counts, though it
    /// comes back round the outer loop). A function of more than
    /// [`LOOP_EXITS_UP_TO`] blocks is not analysed: every branch of it
    /// may.
    pub fn leaves_loop(&self, function: Symbol, label: Symbol) -> bool {
        self.loops(function).is_none_or(|l| l.exits.contains(&label))
    }

    /// Whether block `label` of function `function` is in a loop (on a
    /// cycle of the function's blocks); a function not analysed
    /// ([`ProgramIndex::leaves_loop`]) may have it in one.
    pub fn in_loop(&self, function: Symbol, label: Symbol) -> bool {
        self.loops(function).is_none_or(|l| l.inside.contains(&label))
    }

    fn loops(&self, function: Symbol) -> Option<&Loops> {
        let (f, blocks, loops) = self.functions.get(&function)?;
        loops.get_or_init(|| loop_exits(f, blocks)).as_ref()
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
/// ([`ProgramIndex::leaves_loop`]).
pub const LOOP_EXITS_UP_TO: usize = 256;

/// The labels of `f`'s blocks that end in a branch out of a loop: one of
/// their successors is outside the innermost loop they are in. Loops are
/// found as the strongly connected components of the block graph, and
/// the loops inside one as those of its blocks but its header (a block
/// entered from outside it).
fn loop_exits(f: &Function, blocks: &SymbolMap<&Block>) -> Option<Loops> {
    if f.blocks.len() > LOOP_EXITS_UP_TO {
        return None;
    }
    // Each label's block as `blocks` resolves it.
    let labels: Vec<Symbol> = f.blocks.iter().map(|b| b.label).collect();
    let node: SymbolMap<usize> = {
        let mut m = SymbolMap::default();
        for (k, &l) in labels.iter().enumerate() {
            if blocks.get(&l).is_some_and(|b| std::ptr::eq(*b, &f.blocks[k])) {
                m.entry(l).or_insert(k);
            }
        }
        m
    };
    let succ: Vec<Vec<usize>> =
        f.blocks.iter().map(|b| b.term.successors().iter().filter_map(|l| node.get(l).copied()).collect()).collect();
    let mut loops = Loops::default();
    let all: Vec<usize> = (0..labels.len()).collect();
    loops_in(&succ, &all, &mut |b, exit| {
        loops.inside.insert(labels[b]);
        if exit {
            loops.exits.insert(labels[b]);
        }
    });
    Some(loops)
}

/// Finds the loops among `nodes` (the graph `succ` restricted to them),
/// calls `found` with each node in one and whether it branches out of it,
/// and goes on inside each loop without its header.
fn loops_in(succ: &[Vec<usize>], nodes: &[usize], found: &mut impl FnMut(usize, bool)) {
    // (Membership as flags by node, not hash sets: a function's loops are
    // found when a recording first tests a value in it, and 2,000 small
    // functions each recorded once spent 43% of recording here.)
    let mut inside = vec![false; succ.len()];
    for c in components(succ, nodes) {
        if c.len() == 1 && !succ[c[0]].contains(&c[0]) {
            continue;
        }
        c.iter().for_each(|&b| inside[b] = true);
        for &b in &c {
            found(b, succ[b].iter().any(|&s| !inside[s]));
        }
        let entered = |h: usize| succ.iter().enumerate().any(|(p, next)| !inside[p] && next.contains(&h));
        let header = c.iter().copied().find(|&h| entered(h)).unwrap_or_else(|| *c.iter().min().expect("a node"));
        c.iter().for_each(|&b| inside[b] = false);
        let rest: Vec<usize> = c.into_iter().filter(|&x| x != header).collect();
        loops_in(succ, &rest, found);
    }
}

/// The strongly connected components of the graph `succ` restricted to
/// `nodes` (Tarjan's algorithm; graphs of at most [`LOOP_EXITS_UP_TO`]
/// nodes, so the recursion stays shallow).
fn components(succ: &[Vec<usize>], nodes: &[usize]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        succ: &'a [Vec<usize>],
        member: Vec<bool>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for k in 0..self.succ[v].len() {
                let w = self.succ[v][k];
                if !self.member[w] {
                    continue;
                }
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut c = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    c.push(w);
                    if w == v {
                        break;
                    }
                }
                self.out.push(c);
            }
        }
    }
    let n = succ.len();
    let mut member = vec![false; n];
    nodes.iter().for_each(|&v| member[v] = true);
    let mut t = Tarjan {
        succ,
        member,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        out: Vec::new(),
    };
    for &v in nodes {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    t.out
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

    /// A loop's exits are the branches with a successor outside the
    /// innermost loop they are in: a BF interpreter's `move` leaves only
    /// at its test of the count (its test of the link stays in the loop,
    /// either way), and in a nest the inner loop's test leaves the inner
    /// loop though it comes back round the outer one.
    #[test]
    fn a_loop_leaves_where_a_branch_goes_outside_its_innermost_loop() {
        let text = "
function move(t, n):
    walk:
        if n goto step else goto arrived
    step:
        n = n - 1
        r = t.r
        if r is cell goto moved else goto grow
    grow:
        r = new cell
        goto moved
    moved:
        t = r
        goto walk
    arrived:
        return t
function nest(n, d):
    outer:
        if n goto enter else goto out
    enter:
        j = d
        goto inner
    inner:
        if j goto body else goto next
    body:
        j = j - 1
        goto inner
    next:
        n = n - 1
        goto outer
    out:
        return n
function straight(x):
    s:
        if x goto a else goto b
    a:
        return 1
    b:
        return 2
start:
    print_and_stop(0)
";
        let p = syntax::parse("test", text).unwrap_or_else(|e| panic!("{e}"));
        let index = ProgramIndex::new(&p);
        let s = Symbol::intern;
        let leaving = |f: &str, labels: &[&str]| -> Vec<String> {
            labels.iter().filter(|l| index.leaves_loop(s(f), s(l))).map(|l| l.to_string()).collect()
        };
        assert_eq!(leaving("move", &["walk", "step", "grow", "moved"]), ["walk"]);
        assert_eq!(leaving("nest", &["outer", "enter", "inner", "body", "next"]), ["outer", "inner"]);
        assert!(leaving("straight", &["s", "a", "b"]).is_empty());
        assert!(index.in_loop(s("move"), s("step")) && !index.in_loop(s("move"), s("arrived")));
        assert!(!index.in_loop(s("straight"), s("s")));
        assert!(index.leaves_loop(s("nowhere"), s("s")), "an unknown function may leave anywhere");
    }
}

//! The control flow of a flow graph as written: which labels each block's
//! terminator may go to ([`edges`]), the blocks reachable from an entry in
//! reverse postorder ([`reverse_postorder`]), and the labels its cycles
//! pass through ([`retreating_labels`]). Lowering to the IR
//! (`flowc_frontend`) takes the blocks reachable in this order and fills
//! them in it, and the JIT finds the loop headers it watches here
//! without lowering a graph.
//!
//! A call of an unknown function, or with the wrong number of arguments,
//! fails before it jumps: it goes nowhere ([`Signatures`] say which).

use crate::ast::{Block, Program, Terminator};
use crate::symbol::SymbolMap;
use crate::Symbol;

/// The position of the block each label names (the first, if several do):
/// a table indexed by the label's symbol number. Every jump looks its
/// target up here, so on large graphs a dense table, whose order follows
/// the order labels were interned in, beats a hash map's scattered probes.
pub struct Labels {
    slot: Vec<u32>,
}

impl Labels {
    const NONE: u32 = u32::MAX;

    pub fn new(blocks: &[&Block]) -> Labels {
        let len = blocks.iter().map(|b| b.label.index() as usize + 1).max().unwrap_or(0);
        let mut slot = vec![Labels::NONE; len];
        for (i, b) in blocks.iter().enumerate().rev() {
            slot[b.label.index() as usize] = i as u32;
        }
        Labels { slot }
    }

    /// The position of the first block labelled `l`, if any.
    pub fn get(&self, l: Symbol) -> Option<usize> {
        match self.slot.get(l.index() as usize) {
            Some(&i) if i != Labels::NONE => Some(i as usize),
            _ => None,
        }
    }
}

/// The program's functions' parameter counts, by name: a name declared
/// more than once has each declaration's, in order. (A list searched at
/// every call made lowering a main graph of thousands of calls quadratic:
/// 2,000 calls of 2,000 functions, 80 million instructions.)
#[derive(Default)]
pub struct Signatures(SymbolMap<Vec<usize>>);

impl Signatures {
    /// The signatures of functions `(name, parameter count)`, in order.
    pub fn new(functions: impl IntoIterator<Item = (Symbol, usize)>) -> Signatures {
        let mut map: SymbolMap<Vec<usize>> = SymbolMap::default();
        for (f, n) in functions {
            map.entry(f).or_default().push(n);
        }
        Signatures(map)
    }

    /// The signatures of `program`'s functions.
    pub fn of(program: &Program) -> Signatures {
        Signatures::new(program.functions().map(|f| (f.name, f.params.len())))
    }

    /// The parameter count of the first function named `f`.
    pub fn first(&self, f: Symbol) -> Option<usize> {
        self.0.get(&f).map(|ns| ns[0])
    }

    /// Whether a function named `f` takes `n` arguments.
    pub fn accepts(&self, f: Symbol, n: usize) -> bool {
        self.0.get(&f).is_some_and(|ns| ns.contains(&n))
    }
}

/// Whether `t` is a call that fails before it jumps anywhere (an unknown
/// function, or the wrong number of arguments).
pub fn call_fails(t: &Terminator, signatures: &Signatures) -> bool {
    match t {
        Terminator::Call { func, args, .. } => !signatures.accepts(*func, args.len()),
        _ => false,
    }
}

/// The labels `t` may jump to: none for a call that fails.
pub fn edges<'t>(t: &'t Terminator, signatures: &Signatures) -> impl Iterator<Item = Symbol> + 't {
    let fails = call_fails(t, signatures);
    t.successors().into_iter().filter(move |_| !fails)
}

/// The blocks of `blocks` reachable from the one labelled `entry_label`
/// (none if no block is), in reverse postorder ([`reverse_postorder`]).
pub fn reachable<'b>(blocks: &[&'b Block], entry_label: Symbol, signatures: &Signatures) -> Vec<&'b Block> {
    let index = Labels::new(blocks);
    let Some(entry) = index.get(entry_label) else { return Vec::new() };
    reverse_postorder(blocks, &index, entry, signatures).into_iter().map(|i| blocks[i]).collect()
}

/// The positions of the blocks of `blocks` reachable from the one at
/// `entry`, in reverse postorder of a depth-first search that takes each
/// block's edges in order ([`edges`]; `index` is `blocks`' [`Labels`]).
pub fn reverse_postorder(blocks: &[&Block], index: &Labels, entry: usize, signatures: &Signatures) -> Vec<usize> {
    let mut visited = vec![false; blocks.len()];
    let mut post = Vec::with_capacity(blocks.len());
    // The `k`-th successor label of block `i` that exists, if any.
    let succ = |i: usize, k: usize| -> Option<Option<usize>> {
        let t = &blocks[i].term;
        let l = match (t, k) {
            (Terminator::Jump(l) | Terminator::Promote { label: l, .. }, 0) => l,
            (Terminator::If { then_label, .. } | Terminator::IfClass { then_label, .. }, 0) => then_label,
            (Terminator::If { else_label, .. } | Terminator::IfClass { else_label, .. }, 1) => else_label,
            (Terminator::Call { next, .. }, 0) if !call_fails(t, signatures) => next,
            _ => return None,
        };
        Some(index.get(*l))
    };
    let mut stack = vec![(entry, 0usize)];
    visited[entry] = true;
    while let Some((b, k)) = stack.last_mut() {
        match succ(*b, *k) {
            Some(t) => {
                *k += 1;
                if let Some(t) = t.filter(|&t| !visited[t]) {
                    visited[t] = true;
                    stack.push((t, 0));
                }
            }
            None => {
                post.push(*b);
                stack.pop();
            }
        }
    }
    post.reverse();
    post
}

/// The labels of the graph `blocks` that a retreating edge of its reverse
/// postorder from `entry_label` enters (an edge to a block not after its
/// source), in file order: the blocks `flowc_ir::cfg::Cfg::retreating_targets`
/// finds in the graph lowered (the front end builds it from this search,
/// over these edges), found without lowering it. Every cycle of reachable
/// blocks passes through one; in a reducible graph they are the loops'
/// headers. None when `entry_label` names no block.
pub fn retreating_labels(blocks: &[&Block], entry_label: Symbol, signatures: &Signatures) -> Vec<Symbol> {
    let index = Labels::new(blocks);
    let Some(entry) = index.get(entry_label) else { return Vec::new() };
    let rpo = reverse_postorder(blocks, &index, entry, signatures);
    let mut position = vec![u32::MAX; blocks.len()];
    for (k, &i) in rpo.iter().enumerate() {
        position[i] = k as u32;
    }
    let mut target = vec![false; blocks.len()];
    for (k, &i) in rpo.iter().enumerate() {
        for t in edges(&blocks[i].term, signatures).filter_map(|l| index.get(l)) {
            if position[t] as usize <= k {
                target[t] = true;
            }
        }
    }
    (0..blocks.len()).filter(|&i| target[i]).map(|i| blocks[i].label).collect()
}

//! The control-flow graph unbox reasons about: the function's edges, with
//! the `if_class` tests of the web being unboxed already decided, and only
//! the blocks reachable from the entry in that graph. Once the web is
//! unboxed (tests replaced by jumps, unreachable blocks removed) this is
//! exactly the function's graph.

use flowc_ir::rows::Rows;
use flowc_ir::{BlockId, Function};

use crate::edit::ix;

pub struct View {
    /// Reachable predecessors (distinct, in layout order), by raw block
    /// index.
    preds: Rows<BlockId>,
    /// Successors (distinct) of reachable blocks, by raw block index.
    succs: Rows<BlockId>,
    reachable: Vec<bool>,
    /// Reachable blocks in reverse postorder (entry first).
    pub rpo: Vec<BlockId>,
    /// Whether some layout block is unreachable in this graph.
    pub has_unreachable: bool,
}

impl View {
    /// `decided(b)` gives the only successor of `b` when its terminator is
    /// a decided `if_class`.
    pub fn new(f: &Function, decided: impl Fn(BlockId) -> Option<BlockId>) -> View {
        let n = f.blocks.len();
        let mut in_layout = vec![false; n];
        for &b in &f.layout {
            if ix(b) < n {
                in_layout[ix(b)] = true;
            }
        }
        // Each layout block's distinct successors in the layout, once
        // (`listed`: layout blocks in order, each once).
        let mut edges_of: Vec<[Option<BlockId>; 2]> = vec![[None, None]; n];
        let mut listed: Vec<BlockId> = Vec::with_capacity(f.layout.len());
        let mut done = vec![false; n];
        for &b in &f.layout {
            if ix(b) >= n || std::mem::replace(&mut done[ix(b)], true) {
                continue;
            }
            listed.push(b);
            let term = f.blocks[b].term.successors();
            let only = decided(b);
            let targets: &[BlockId] = match &only {
                Some(t) => std::slice::from_ref(t),
                None => &term,
            };
            let out = &mut edges_of[ix(b)];
            let mut k = 0;
            for &t in targets {
                if ix(t) < n && in_layout[ix(t)] && !out[..k].contains(&Some(t)) {
                    out[k] = Some(t);
                    k += 1;
                }
            }
        }
        let out = |b: BlockId| edges_of[ix(b)].into_iter().flatten();
        let mut reachable = vec![false; n];
        let mut post = Vec::new();
        if ix(f.entry) < n && in_layout[ix(f.entry)] {
            reachable[ix(f.entry)] = true;
            let mut stack = vec![(f.entry, 0usize)];
            while let Some((b, i)) = stack.last_mut() {
                if let Some(t) = out(*b).nth(*i) {
                    *i += 1;
                    if !reachable[ix(t)] {
                        reachable[ix(t)] = true;
                        stack.push((t, 0));
                    }
                } else {
                    post.push(*b);
                    stack.pop();
                }
            }
        }
        post.reverse();
        // Edges between reachable blocks, in layout order of their source.
        let has_unreachable = listed.iter().any(|b| !reachable[ix(*b)]);
        let edges: Vec<(BlockId, BlockId)> =
            listed.iter().filter(|b| reachable[ix(**b)]).flat_map(|&b| out(b).map(move |t| (b, t))).collect();
        let succs = Rows::group(n, edges.iter().map(|&(b, t)| (ix(b), t)));
        let preds = Rows::group(n, edges.iter().map(|&(b, t)| (ix(t), b)));
        View { preds, succs, reachable, rpo: post, has_unreachable }
    }

    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        self.preds.of(ix(b))
    }

    pub fn succs(&self, b: BlockId) -> &[BlockId] {
        self.succs.of(ix(b))
    }

    /// Blocks reachable from `from` along successors (`forward`) or
    /// predecessors, `from` included: a mask by raw block index.
    pub fn closure(&self, from: impl IntoIterator<Item = BlockId>, forward: bool) -> Vec<bool> {
        let mut seen = vec![false; self.reachable.len()];
        let mut stack: Vec<BlockId> = Vec::new();
        for b in from {
            if ix(b) < seen.len() && !seen[ix(b)] {
                seen[ix(b)] = true;
                stack.push(b);
            }
        }
        while let Some(b) = stack.pop() {
            let next = if forward { self.succs(b) } else { self.preds(b) };
            for &t in next {
                if !seen[ix(t)] {
                    seen[ix(t)] = true;
                    stack.push(t);
                }
            }
        }
        seen
    }

    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.reachable.get(ix(b)).copied().unwrap_or(false)
    }
}

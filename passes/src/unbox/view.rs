//! The control-flow graph unbox reasons about: the function's edges, with
//! the `if_class` tests of the web being unboxed already decided, and only
//! the blocks reachable from the entry in that graph. Once the web is
//! unboxed (tests replaced by jumps, unreachable blocks removed) this is
//! exactly the function's graph.

use flowc_ir::{BlockId, Function};

use crate::edit::ix;

pub struct View {
    /// Reachable predecessors (distinct, in layout order) of the block
    /// with raw index `k`: `preds[pred_start[k]..pred_start[k + 1]]`.
    pred_start: Vec<u32>,
    preds: Vec<BlockId>,
    /// Successors (distinct) of reachable blocks, laid out the same way.
    succ_start: Vec<u32>,
    succs: Vec<BlockId>,
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
        let (succ_start, succs) = group(n, edges.iter().copied());
        let (pred_start, preds) = group(n, edges.iter().map(|&(b, t)| (t, b)));
        View { pred_start, preds, succ_start, succs, reachable, rpo: post, has_unreachable }
    }

    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        slice(&self.pred_start, &self.preds, b)
    }

    pub fn succs(&self, b: BlockId) -> &[BlockId] {
        slice(&self.succ_start, &self.succs, b)
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

/// `pairs` grouped by their first element (a raw block index below `n`),
/// keeping their order: the start of each group and the second elements.
fn group(n: usize, pairs: impl Iterator<Item = (BlockId, BlockId)> + Clone) -> (Vec<u32>, Vec<BlockId>) {
    let mut start = vec![0u32; n + 1];
    for (a, _) in pairs.clone() {
        start[ix(a) + 1] += 1;
    }
    for k in 0..n {
        start[k + 1] += start[k];
    }
    let mut fill = start.clone();
    let mut out = vec![BlockId::from_raw(la_arena::RawIdx::from_u32(0)); start[n] as usize];
    for (a, b) in pairs {
        out[fill[ix(a)] as usize] = b;
        fill[ix(a)] += 1;
    }
    (start, out)
}

fn slice<'v>(start: &[u32], items: &'v [BlockId], b: BlockId) -> &'v [BlockId] {
    if ix(b) + 1 >= start.len() {
        return &[];
    }
    &items[start[ix(b)] as usize..start[ix(b) + 1] as usize]
}

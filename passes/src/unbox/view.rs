//! The control-flow graph unbox reasons about: the function's edges, with
//! the `if_class` tests of the web being unboxed already decided, and only
//! the blocks reachable from the entry in that graph. Once the web is
//! unboxed (tests replaced by jumps, unreachable blocks removed) this is
//! exactly the function's graph.

use flowc_ir::{BlockId, Function};

use crate::edit::ix;

pub struct View {
    /// Reachable predecessors (distinct, in layout order), by raw block index.
    preds: Vec<Vec<BlockId>>,
    /// Successors of reachable blocks (distinct), by raw block index.
    succs: Vec<Vec<BlockId>>,
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
        let succs = |b: BlockId| -> Vec<BlockId> {
            let mut s = match decided(b) {
                Some(t) => vec![t],
                None => f.blocks[b].term.successors().to_vec(),
            };
            s.retain(|t| ix(*t) < n && in_layout[ix(*t)]);
            let mut seen = Vec::with_capacity(s.len());
            s.retain(|t| {
                let new = !seen.contains(t);
                seen.push(*t);
                new
            });
            s
        };
        let mut reachable = vec![false; n];
        let mut post = Vec::new();
        if ix(f.entry) < n && in_layout[ix(f.entry)] {
            reachable[ix(f.entry)] = true;
            let mut stack = vec![(f.entry, succs(f.entry), 0usize)];
            while let Some((b, s, i)) = stack.last_mut() {
                if let Some(&t) = s.get(*i) {
                    *i += 1;
                    if !reachable[ix(t)] {
                        reachable[ix(t)] = true;
                        stack.push((t, succs(t), 0));
                    }
                } else {
                    post.push(*b);
                    stack.pop();
                }
            }
        }
        post.reverse();
        let mut preds = vec![Vec::new(); n];
        let mut successors = vec![Vec::new(); n];
        let mut has_unreachable = false;
        let mut done = vec![false; n];
        for &b in &f.layout {
            if ix(b) >= n || done[ix(b)] {
                continue;
            }
            done[ix(b)] = true;
            if !reachable[ix(b)] {
                has_unreachable = true;
                continue;
            }
            for t in succs(b) {
                preds[ix(t)].push(b);
                successors[ix(b)].push(t);
            }
        }
        View { preds, succs: successors, reachable, rpo: post, has_unreachable }
    }

    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        self.preds.get(ix(b)).map_or(&[], |v| v)
    }

    pub fn succs(&self, b: BlockId) -> &[BlockId] {
        self.succs.get(ix(b)).map_or(&[], |v| v)
    }

    /// Blocks reachable from `from` along successors (`forward`) or
    /// predecessors, `from` included: a mask by raw block index.
    pub fn closure(&self, from: impl IntoIterator<Item = BlockId>, forward: bool) -> Vec<bool> {
        let mut seen = vec![false; self.preds.len()];
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

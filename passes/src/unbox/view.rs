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
                None => f.blocks[b].term.successors(),
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
            }
        }
        View { preds, reachable, rpo: post, has_unreachable }
    }

    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        self.preds.get(ix(b)).map_or(&[], |v| v)
    }

    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.reachable.get(ix(b)).copied().unwrap_or(false)
    }
}

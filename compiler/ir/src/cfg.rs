//! Control-flow views derived from terminators: successors, predecessors,
//! reverse postorder, and the dominator tree.
//!
//! Only blocks of the layout take part (layout entries outside the block
//! arena and repeats are ignored, so this never panics on broken IR);
//! blocks not reachable from the entry appear in no order and dominate
//! nothing. Every pass builds these views, so they are flat arrays indexed
//! by the blocks' arena indices: successor pairs, predecessors in one
//! vector with offsets, reverse-postorder numbers.
//!
//! Dominators use the iterative algorithm of Cooper, Harvey and Kennedy
//! ("A Simple, Fast Dominance Algorithm", 2001) over reverse-postorder
//! numbers — the algorithm petgraph's `simple_fast` implements, here on
//! dense arrays instead of hash maps, which matters on million-block
//! functions. Preorder/postorder numbers of the dominator tree answer
//! dominance queries in constant time.

use crate::function::{BlockId, Function};

fn ix(b: BlockId) -> usize {
    b.into_raw().into_u32() as usize
}

const NONE: u32 = u32::MAX;

/// Successor and predecessor lists and the reverse postorder.
pub struct Cfg {
    /// Distinct successors, at most two, per block.
    succ: Vec<[BlockId; 2]>,
    succ_len: Vec<u8>,
    /// Predecessors of block `b` are `preds[pred_start[b]..pred_start[b + 1]]`.
    pred_start: Vec<u32>,
    preds: Vec<BlockId>,
    /// Blocks reachable from the entry, in reverse postorder.
    pub rpo: Vec<BlockId>,
    rpo_index: Vec<u32>,
}

impl Cfg {
    pub fn new(f: &Function) -> Cfg {
        let n = f.blocks.len();
        let mut in_layout = vec![false; n];
        let mut layout: Vec<BlockId> = Vec::with_capacity(f.layout.len());
        for &b in &f.layout {
            if ix(b) < n && !in_layout[ix(b)] {
                in_layout[ix(b)] = true;
                layout.push(b);
            }
        }
        let mut succ = vec![[f.entry; 2]; n];
        let mut succ_len = vec![0u8; n];
        let mut count = vec![0u32; n + 1];
        for &b in &layout {
            for t in f.blocks[b].term.successors() {
                let k = succ_len[ix(b)] as usize;
                if ix(t) < n && in_layout[ix(t)] && !succ[ix(b)][..k].contains(&t) {
                    succ[ix(b)][k] = t;
                    succ_len[ix(b)] += 1;
                    count[ix(t)] += 1;
                }
            }
        }
        let mut pred_start = vec![0u32; n + 1];
        for i in 0..n {
            pred_start[i + 1] = pred_start[i] + count[i];
        }
        let mut fill = pred_start.clone();
        let mut preds = vec![f.entry; pred_start[n] as usize];
        for &b in &layout {
            for &t in &succ[ix(b)][..succ_len[ix(b)] as usize] {
                preds[fill[ix(t)] as usize] = b;
                fill[ix(t)] += 1;
            }
        }
        // Reverse postorder by an explicit-stack DFS.
        let mut rpo_index = vec![NONE; n];
        let mut post = Vec::with_capacity(layout.len());
        if ix(f.entry) < n && in_layout[ix(f.entry)] {
            let mut visited = vec![false; n];
            let mut stack: Vec<(BlockId, u8)> = vec![(f.entry, 0)];
            visited[ix(f.entry)] = true;
            while let Some((b, k)) = stack.pop() {
                if k < succ_len[ix(b)] {
                    stack.push((b, k + 1));
                    let t = succ[ix(b)][k as usize];
                    if !visited[ix(t)] {
                        visited[ix(t)] = true;
                        stack.push((t, 0));
                    }
                } else {
                    post.push(b);
                }
            }
        }
        post.reverse();
        for (i, &b) in post.iter().enumerate() {
            rpo_index[ix(b)] = i as u32;
        }
        Cfg { succ, succ_len, pred_start, preds, rpo: post, rpo_index }
    }

    pub fn succs(&self, b: BlockId) -> &[BlockId] {
        match self.succ.get(ix(b)) {
            Some(s) => &s[..self.succ_len[ix(b)] as usize],
            None => &[],
        }
    }

    /// Distinct predecessors (in layout order), reachable or not.
    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        if ix(b) + 1 >= self.pred_start.len() {
            return &[];
        }
        &self.preds[self.pred_start[ix(b)] as usize..self.pred_start[ix(b) + 1] as usize]
    }

    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.rpo_index(b).is_some()
    }

    /// Position in reverse postorder, for reachable blocks.
    pub fn rpo_index(&self, b: BlockId) -> Option<u32> {
        self.rpo_index.get(ix(b)).copied().filter(|&i| i != NONE)
    }
}

/// The dominator tree of the reachable blocks, with preorder/postorder
/// numbers for constant-time dominance queries.
pub struct DomTree {
    /// Immediate dominator per block (`NONE` for the entry and unreachable blocks).
    idom: Vec<u32>,
    child_start: Vec<u32>,
    children: Vec<BlockId>,
    /// Preorder and postorder numbers per block, side by side: a dominance
    /// query reads one entry per block.
    order: Vec<[u32; 2]>,
    entry: BlockId,
    blocks: Vec<BlockId>,
}

impl DomTree {
    pub fn new(f: &Function, cfg: &Cfg) -> DomTree {
        let n = f.blocks.len();
        let order = &cfg.rpo;
        let m = order.len();
        // idom in reverse-postorder numbers.
        let mut doms = vec![NONE; m];
        if m > 0 {
            doms[0] = 0;
        }
        let mut changed = m > 1;
        while changed {
            changed = false;
            for i in 1..m {
                let mut new = NONE;
                for &p in cfg.preds(order[i]) {
                    let Some(pi) = cfg.rpo_index(p) else { continue };
                    if doms[pi as usize] == NONE {
                        continue;
                    }
                    new = if new == NONE { pi } else { intersect(&doms, pi, new) };
                }
                if new != NONE && doms[i] != new {
                    doms[i] = new;
                    changed = true;
                }
            }
        }
        let mut idom = vec![NONE; n];
        let mut count = vec![0u32; n + 1];
        for i in 1..m {
            let d = order[doms[i] as usize];
            idom[ix(order[i])] = ix(d) as u32;
            count[ix(d)] += 1;
        }
        let mut child_start = vec![0u32; n + 1];
        for i in 0..n {
            child_start[i + 1] = child_start[i] + count[i];
        }
        let mut fill = child_start.clone();
        let mut children = vec![f.entry; child_start[n] as usize];
        for &b in &order[1.min(m)..] {
            let d = idom[ix(b)] as usize;
            children[fill[d] as usize] = b;
            fill[d] += 1;
        }
        let blocks: Vec<BlockId> = f.blocks.iter().map(|(b, _)| b).collect();
        let mut tree = DomTree { idom, child_start, children, order: vec![[NONE; 2]; n], entry: f.entry, blocks };
        if m > 0 {
            tree.number(order[0]);
        }
        tree
    }

    fn number(&mut self, root: BlockId) {
        let (mut n_pre, mut n_post) = (0u32, 0u32);
        let mut stack = vec![(root, 0u32)];
        self.order[ix(root)][0] = n_pre;
        n_pre += 1;
        while let Some((b, k)) = stack.pop() {
            let kids = self.children(b);
            if let Some(&c) = kids.get(k as usize) {
                stack.push((b, k + 1));
                self.order[ix(c)][0] = n_pre;
                n_pre += 1;
                stack.push((c, 0));
            } else {
                self.order[ix(b)][1] = n_post;
                n_post += 1;
            }
        }
    }

    /// The immediate dominator; `None` for the entry and unreachable blocks.
    pub fn idom(&self, b: BlockId) -> Option<BlockId> {
        match self.idom.get(ix(b)) {
            Some(&d) if d != NONE => Some(self.blocks[d as usize]),
            _ => None,
        }
    }

    pub fn children(&self, b: BlockId) -> &[BlockId] {
        if ix(b) + 1 >= self.child_start.len() {
            return &[];
        }
        &self.children[self.child_start[ix(b)] as usize..self.child_start[ix(b) + 1] as usize]
    }

    pub fn entry(&self) -> BlockId {
        self.entry
    }

    /// Whether `a` dominates `b` (reflexive). False if either is unreachable.
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        let get = |x: BlockId| self.order.get(ix(x)).copied().filter(|o| o[0] != NONE);
        match (get(a), get(b)) {
            (Some([pa, qa]), Some([pb, qb])) => pa <= pb && qb <= qa,
            _ => false,
        }
    }
}

/// The nearest common dominator of two reverse-postorder numbers.
fn intersect(doms: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while a > b {
            a = doms[a as usize];
        }
        while b > a {
            b = doms[b as usize];
        }
    }
    a
}

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
use crate::ix;
use crate::rows::Rows;

const NONE: u32 = u32::MAX;

/// Successor and predecessor lists and the reverse postorder.
pub struct Cfg {
    /// Distinct successors, at most two, per block.
    succ: Vec<[BlockId; 2]>,
    succ_len: Vec<u8>,
    /// Predecessors by block (raw index), in layout order.
    preds: Rows<BlockId>,
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
        for &b in &layout {
            for t in f.blocks[b].term.successors() {
                let k = succ_len[ix(b)] as usize;
                if ix(t) < n && in_layout[ix(t)] && !succ[ix(b)][..k].contains(&t) {
                    succ[ix(b)][k] = t;
                    succ_len[ix(b)] += 1;
                }
            }
        }
        let preds = Rows::group(
            n,
            layout.iter().flat_map(|&b| succ[ix(b)][..succ_len[ix(b)] as usize].iter().map(move |&t| (ix(t), b))),
        );
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
        Cfg { succ, succ_len, preds, rpo: post, rpo_index }
    }

    pub fn succs(&self, b: BlockId) -> &[BlockId] {
        match self.succ.get(ix(b)) {
            Some(s) => &s[..self.succ_len[ix(b)] as usize],
            None => &[],
        }
    }

    /// Distinct predecessors (in layout order), reachable or not.
    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        self.preds.of(ix(b))
    }

    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.rpo_index(b).is_some()
    }

    /// Position in reverse postorder, for reachable blocks.
    pub fn rpo_index(&self, b: BlockId) -> Option<u32> {
        self.rpo_index.get(ix(b)).copied().filter(|&i| i != NONE)
    }

    /// Per block (raw index): whether a retreating edge of the reverse
    /// postorder enters it (an edge to a block not after its source). Every
    /// cycle of reachable blocks, reducible or not, passes through one, so
    /// these are where code counts loop iterations (fuel); natural-loop
    /// headers ([`crate::loops`]) are among them.
    pub fn retreating_targets(&self) -> Vec<bool> {
        let mut targets = vec![false; self.succ.len()];
        for (i, &b) in self.rpo.iter().enumerate() {
            for &s in self.succs(b) {
                if self.rpo_index(s).is_some_and(|k| k as usize <= i) {
                    targets[ix(s)] = true;
                }
            }
        }
        targets
    }
    /// Per block (raw index): the cycle it lies on, if any — the blocks
    /// that may run more than once per entry of the function (natural
    /// loops, and irreducible cycles, which have no natural loop). A
    /// block's cycle is its strongly
    /// connected component when that has more than one block or the block
    /// jumps to itself, numbered in reverse postorder of the components'
    /// first blocks. Kosaraju's algorithm: the reverse postorder lists
    /// blocks by decreasing finish time of a depth-first search, and a
    /// search along predecessors from each block in that order, through
    /// blocks no earlier one took, takes exactly its component.
    pub fn cycles(&self) -> Vec<Option<u32>> {
        let n = self.succ.len();
        let mut component = vec![NONE; n];
        let mut size: Vec<u32> = Vec::new();
        let mut stack = Vec::new();
        for &root in &self.rpo {
            if component[ix(root)] != NONE {
                continue;
            }
            let id = size.len() as u32;
            component[ix(root)] = id;
            stack.push(root);
            let mut members = 0;
            while let Some(b) = stack.pop() {
                members += 1;
                for &p in self.preds(b) {
                    if self.is_reachable(p) && component[ix(p)] == NONE {
                        component[ix(p)] = id;
                        stack.push(p);
                    }
                }
            }
            size.push(members);
        }
        let mut cycles = vec![None; n];
        for &b in &self.rpo {
            let c = component[ix(b)];
            if size[c as usize] > 1 || self.succs(b).contains(&b) {
                cycles[ix(b)] = Some(c);
            }
        }
        cycles
    }
}

/// The dominator tree of the reachable blocks, with preorder/postorder
/// numbers for constant-time dominance queries.
pub struct DomTree {
    /// Immediate dominator per block (`NONE` for the entry and unreachable blocks).
    idom: Vec<u32>,
    /// Children in the dominator tree, by block (raw index).
    children: Rows<BlockId>,
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
        for i in 1..m {
            idom[ix(order[i])] = ix(order[doms[i] as usize]) as u32;
        }
        let children = Rows::group(n, order[1.min(m)..].iter().map(|&b| (idom[ix(b)] as usize, b)));
        let blocks: Vec<BlockId> = f.blocks.iter().map(|(b, _)| b).collect();
        let mut tree = DomTree { idom, children, order: vec![[NONE; 2]; n], entry: f.entry, blocks };
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
        self.children.of(ix(b))
    }

    pub fn entry(&self) -> BlockId {
        self.entry
    }

    /// `b`'s number in a preorder walk of the tree (`None` if unreachable):
    /// of two blocks one dominates, the deeper has the larger number.
    pub fn preorder(&self, b: BlockId) -> Option<u32> {
        self.order.get(ix(b)).map(|o| o[0]).filter(|&n| n != NONE)
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
pub(crate) fn intersect(doms: &[u32], mut a: u32, mut b: u32) -> u32 {
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

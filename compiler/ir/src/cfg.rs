//! Control-flow views derived from terminators: successors, predecessors,
//! reverse postorder, and the dominator tree (computed with petgraph's
//! `simple_fast`, Cooper–Harvey–Kennedy, over a graph built for the query).
//!
//! Only blocks of the layout take part; blocks not reachable from the
//! entry appear in no order and dominate nothing.

use la_arena::ArenaMap;
use petgraph::algo::dominators;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::function::{BlockId, Function};

/// Successor and predecessor lists and the reverse postorder.
pub struct Cfg {
    succs: ArenaMap<BlockId, Vec<BlockId>>,
    preds: ArenaMap<BlockId, Vec<BlockId>>,
    /// Blocks reachable from the entry, in reverse postorder.
    pub rpo: Vec<BlockId>,
    rpo_index: ArenaMap<BlockId, u32>,
}

impl Cfg {
    /// The views of `f`. Layout entries outside the block arena, and repeats,
    /// are ignored (the checker reports them), so this never panics.
    pub fn new(f: &Function) -> Cfg {
        let mut succs = ArenaMap::default();
        let mut preds: ArenaMap<BlockId, Vec<BlockId>> = ArenaMap::default();
        let n = f.blocks.len() as u32;
        let mut layout: Vec<BlockId> = Vec::with_capacity(f.layout.len());
        for &b in &f.layout {
            if b.into_raw().into_u32() < n && preds.get(b).is_none() {
                preds.insert(b, Vec::new());
                layout.push(b);
            }
        }
        for &b in &layout {
            let mut s = f.blocks[b].term.successors();
            dedup_in_order(&mut s);
            for &t in &s {
                if let Some(p) = preds.get_mut(t) {
                    p.push(b);
                }
            }
            succs.insert(b, s);
        }
        // Reverse postorder by an explicit-stack DFS (no recursion: graphs
        // may have a million blocks).
        let mut visited: ArenaMap<BlockId, ()> = ArenaMap::default();
        let mut post = Vec::with_capacity(f.layout.len());
        let mut stack: Vec<(BlockId, usize)> = Vec::new();
        if preds.get(f.entry).is_some() {
            stack.push((f.entry, 0));
            visited.insert(f.entry, ());
        }
        while let Some((b, i)) = stack.pop() {
            let s: &Vec<BlockId> = succs.get(b).map_or(&EMPTY, |v| v);
            if i < s.len() {
                stack.push((b, i + 1));
                let t = s[i];
                if visited.get(t).is_none() && preds.get(t).is_some() {
                    visited.insert(t, ());
                    stack.push((t, 0));
                }
            } else {
                post.push(b);
            }
        }
        post.reverse();
        let mut rpo_index = ArenaMap::default();
        for (i, &b) in post.iter().enumerate() {
            rpo_index.insert(b, i as u32);
        }
        Cfg { succs, preds, rpo: post, rpo_index }
    }

    pub fn succs(&self, b: BlockId) -> &[BlockId] {
        self.succs.get(b).map_or(&[], |v| v)
    }

    /// Distinct predecessors (in layout order), reachable or not.
    pub fn preds(&self, b: BlockId) -> &[BlockId] {
        self.preds.get(b).map_or(&[], |v| v)
    }

    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.rpo_index.get(b).is_some()
    }

    /// Position in reverse postorder, for reachable blocks.
    pub fn rpo_index(&self, b: BlockId) -> Option<u32> {
        self.rpo_index.get(b).copied()
    }
}

static EMPTY: Vec<BlockId> = Vec::new();

fn dedup_in_order(v: &mut Vec<BlockId>) {
    let mut seen = Vec::with_capacity(v.len());
    v.retain(|b| {
        if seen.contains(b) {
            false
        } else {
            seen.push(*b);
            true
        }
    });
}

/// The dominator tree of the reachable blocks, with preorder/postorder
/// numbers for constant-time dominance queries.
pub struct DomTree {
    idom: ArenaMap<BlockId, BlockId>,
    children: ArenaMap<BlockId, Vec<BlockId>>,
    pre: ArenaMap<BlockId, u32>,
    post: ArenaMap<BlockId, u32>,
    entry: BlockId,
}

impl DomTree {
    pub fn new(f: &Function, cfg: &Cfg) -> DomTree {
        if cfg.rpo.is_empty() {
            // The entry is not in the layout: nothing is reachable.
            return DomTree {
                idom: ArenaMap::default(),
                children: ArenaMap::default(),
                pre: ArenaMap::default(),
                post: ArenaMap::default(),
                entry: f.entry,
            };
        }
        let mut graph: DiGraph<BlockId, ()> = DiGraph::with_capacity(cfg.rpo.len(), cfg.rpo.len() * 2);
        let nodes: Vec<NodeIndex> = cfg.rpo.iter().map(|&b| graph.add_node(b)).collect();
        for &b in &cfg.rpo {
            let from = nodes[cfg.rpo_index(b).unwrap() as usize];
            for &s in cfg.succs(b) {
                if let Some(i) = cfg.rpo_index(s) {
                    graph.add_edge(from, nodes[i as usize], ());
                }
            }
        }
        let doms = dominators::simple_fast(&graph, nodes[0]);
        let mut idom = ArenaMap::default();
        let mut children: ArenaMap<BlockId, Vec<BlockId>> = ArenaMap::default();
        for &b in &cfg.rpo {
            children.insert(b, Vec::new());
        }
        for &b in &cfg.rpo[1..] {
            let node = nodes[cfg.rpo_index(b).unwrap() as usize];
            let d = graph[doms.immediate_dominator(node).expect("reachable blocks have an idom")];
            idom.insert(b, d);
            children[d].push(b);
        }
        // Number the tree (explicit stack).
        let (mut pre, mut post) = (ArenaMap::default(), ArenaMap::default());
        let (mut n_pre, mut n_post) = (0u32, 0u32);
        let mut stack = vec![(f.entry, 0usize)];
        pre.insert(f.entry, 0);
        n_pre += 1;
        while let Some((b, i)) = stack.pop() {
            if let Some(&c) = children[b].get(i) {
                stack.push((b, i + 1));
                pre.insert(c, n_pre);
                n_pre += 1;
                stack.push((c, 0));
            } else {
                post.insert(b, n_post);
                n_post += 1;
            }
        }
        DomTree { idom, children, pre, post, entry: f.entry }
    }

    /// The immediate dominator; `None` for the entry and unreachable blocks.
    pub fn idom(&self, b: BlockId) -> Option<BlockId> {
        self.idom.get(b).copied()
    }

    pub fn children(&self, b: BlockId) -> &[BlockId] {
        self.children.get(b).map_or(&[], |v| v)
    }

    pub fn entry(&self) -> BlockId {
        self.entry
    }

    /// Whether `a` dominates `b` (reflexive). False if either is unreachable.
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        match (self.pre.get(a), self.pre.get(b), self.post.get(a), self.post.get(b)) {
            (Some(pa), Some(pb), Some(qa), Some(qb)) => pa <= pb && qb <= qa,
            _ => false,
        }
    }
}

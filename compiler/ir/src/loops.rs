//! Natural loops and the loop nesting forest of a function, with its
//! dominator tree — the one loop analysis every consumer reads: the
//! `loops` pass (which hands it to later passes), the code generator (loop
//! headers and innermost loops for block placement), the JIT (the loop
//! headers it counts when a program has no `can_enter_jit` hint) and
//! `flowc compare` (the hot loop it prints).
//!
//! Guarantees:
//! - a *back edge* is an edge `t -> h` between reachable blocks where `h`
//!   dominates `t` (a self-loop counts); each header `h` gets one loop whose
//!   body is `h` plus every block that reaches a back-edge source of `h`
//!   without passing through `h` (all back edges of a header are merged);
//! - natural loops either nest or are disjoint; each loop's parent is the
//!   innermost loop strictly containing it, roots have depth 1;
//! - cycles entered at more than one block (irreducible) have no back edge
//!   and so produce no loop (a natural loop inside them still counts; a
//!   cycle of any shape passes through a target of a retreating edge,
//!   [`crate::cfg::Cfg::retreating_targets`]);
//! - unreachable blocks belong to no loop and dominate nothing;
//! - everything is listed in layout order, so the output is deterministic.

use crate::cfg::{Cfg, DomTree};
use crate::function::{BlockId, Function};
use crate::ix;
use la_arena::ArenaMap;

/// The index of a loop in its [`LoopForest`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LoopId(pub u32);

/// One natural loop.
#[derive(Clone, Debug)]
pub struct Loop {
    pub header: BlockId,
    /// Sources of the back edges to the header, in layout order.
    pub latches: Vec<BlockId>,
    /// The body (header included), in layout order.
    pub blocks: Vec<BlockId>,
    pub parent: Option<LoopId>,
    pub children: Vec<LoopId>,
    /// 1 for outermost loops.
    pub depth: u32,
}

/// The loops of one function, with its dominator tree (immediate
/// dominators). Loops are numbered in layout order of their headers.
#[derive(Clone, Debug, Default)]
pub struct LoopForest {
    loops: Vec<Loop>,
    /// Innermost loop of each block, by block.
    innermost: ArenaMap<BlockId, LoopId>,
    /// Immediate dominator of each reachable block, by block.
    idom: ArenaMap<BlockId, BlockId>,
}

impl LoopForest {
    /// Computes the forest of `f`.
    pub fn new(f: &Function) -> LoopForest {
        let cfg = Cfg::new(f);
        let dom = DomTree::new(f, &cfg);
        LoopForest::with(f, &cfg, &dom)
    }

    /// The forest of `f` from its control-flow views, for callers that
    /// have them already.
    pub fn with(f: &Function, cfg: &Cfg, dom: &DomTree) -> LoopForest {
        let n = f.blocks.len();
        let mut idom = ArenaMap::with_capacity(n);
        for &b in &cfg.rpo {
            if let Some(d) = dom.idom(b) {
                idom.insert(b, d);
            }
        }
        // Layout position of each block, for sorting.
        let mut pos = vec![usize::MAX; n];
        for (i, &b) in f.layout.iter().enumerate() {
            if ix(b) < n && pos[ix(b)] == usize::MAX {
                pos[ix(b)] = i;
            }
        }
        // Reachable blocks in layout order (each once).
        let order: Vec<BlockId> = f
            .layout
            .iter()
            .enumerate()
            .filter(|&(i, &b)| ix(b) < n && pos[ix(b)] == i && cfg.is_reachable(b))
            .map(|(_, &b)| b)
            .collect();
        // Headers and their latches, in layout order.
        let mut latches: Vec<Vec<BlockId>> = vec![Vec::new(); n];
        let mut headers = Vec::new();
        for &t in &order {
            for &h in cfg.succs(t) {
                if cfg.is_reachable(h) && dom.dominates(h, t) {
                    if latches[ix(h)].is_empty() {
                        headers.push(h);
                    }
                    latches[ix(h)].push(t);
                }
            }
        }
        headers.sort_unstable_by_key(|&h| pos[ix(h)]);
        let mut loops = Vec::with_capacity(headers.len());
        let mut mark = vec![u32::MAX; n];
        for (li, &h) in headers.iter().enumerate() {
            let mut lat = latches[ix(h)].clone();
            lat.sort_unstable_by_key(|&b| pos[ix(b)]);
            let blocks = body(cfg, h, &lat, li as u32, &mut mark);
            let mut blocks: Vec<BlockId> = blocks;
            blocks.sort_unstable_by_key(|&b| pos[ix(b)]);
            loops.push(Loop { header: h, latches: lat, blocks, parent: None, children: Vec::new(), depth: 0 });
        }
        // Nesting: larger loops first, so smaller (inner) ones overwrite.
        let mut by_size: Vec<usize> = (0..loops.len()).collect();
        by_size.sort_unstable_by_key(|&l| (std::cmp::Reverse(loops[l].blocks.len()), pos[ix(loops[l].header)]));
        let mut innermost: ArenaMap<BlockId, LoopId> = ArenaMap::with_capacity(n);
        for &l in &by_size {
            // The header's innermost loop so far is the smallest loop
            // strictly containing this one.
            let parent = innermost.get(loops[l].header).copied();
            loops[l].parent = parent;
            loops[l].depth = parent.map_or(1, |p| loops[p.0 as usize].depth + 1);
            for &b in &loops[l].blocks {
                innermost.insert(b, LoopId(l as u32));
            }
        }
        for l in 0..loops.len() {
            if let Some(p) = loops[l].parent {
                loops[p.0 as usize].children.push(LoopId(l as u32));
            }
        }
        LoopForest { loops, innermost, idom }
    }

    /// Number of loops.
    pub fn len(&self) -> usize {
        self.loops.len()
    }

    pub fn is_empty(&self) -> bool {
        self.loops.is_empty()
    }

    /// All loops, in layout order of their headers.
    pub fn loops(&self) -> impl Iterator<Item = LoopId> + '_ {
        (0..self.loops.len() as u32).map(LoopId)
    }

    /// The outermost loops, in layout order of their headers.
    pub fn roots(&self) -> impl Iterator<Item = LoopId> + '_ {
        self.loops().filter(|&l| self.parent(l).is_none())
    }

    pub fn get(&self, l: LoopId) -> &Loop {
        &self.loops[l.0 as usize]
    }

    /// Loop headers, in layout order.
    pub fn headers(&self) -> impl Iterator<Item = BlockId> + '_ {
        self.loops.iter().map(|l| l.header)
    }

    pub fn is_header(&self, b: BlockId) -> bool {
        self.loop_of(b).is_some_and(|l| self.header(l) == b)
    }

    /// The innermost loop containing `b`.
    pub fn loop_of(&self, b: BlockId) -> Option<LoopId> {
        self.innermost.get(b).copied()
    }

    /// How many loops contain `b` (0 outside loops).
    pub fn depth(&self, b: BlockId) -> u32 {
        self.loop_of(b).map_or(0, |l| self.loop_depth(l))
    }

    pub fn header(&self, l: LoopId) -> BlockId {
        self.get(l).header
    }

    pub fn parent(&self, l: LoopId) -> Option<LoopId> {
        self.get(l).parent
    }

    pub fn children(&self, l: LoopId) -> &[LoopId] {
        &self.get(l).children
    }

    /// The body of `l` (nested loops' blocks included), in layout order.
    pub fn blocks(&self, l: LoopId) -> &[BlockId] {
        &self.get(l).blocks
    }

    pub fn latches(&self, l: LoopId) -> &[BlockId] {
        &self.get(l).latches
    }

    pub fn loop_depth(&self, l: LoopId) -> u32 {
        self.get(l).depth
    }

    /// Whether block `b` is in loop `l` (or a loop nested in it).
    pub fn contains(&self, l: LoopId, b: BlockId) -> bool {
        let mut cur = self.loop_of(b);
        while let Some(c) = cur {
            if c == l {
                return true;
            }
            cur = self.parent(c);
        }
        false
    }

    /// The header of `b`'s innermost loop when that loop contains no other
    /// loop (the loops whose bodies code placement keeps together).
    pub fn innermost_header(&self, b: BlockId) -> Option<BlockId> {
        let l = self.loop_of(b)?;
        self.children(l).is_empty().then(|| self.header(l))
    }

    /// The immediate dominator of a reachable block (`None` for the entry
    /// and unreachable blocks).
    pub fn idom(&self, b: BlockId) -> Option<BlockId> {
        self.idom.get(b).copied()
    }
}

/// The natural loop of header `h` with back-edge sources `latches`: `h` and
/// every reachable block reaching a latch without passing `h`. `mark` holds,
/// per block, the last loop that visited it.
fn body(cfg: &Cfg, h: BlockId, latches: &[BlockId], id: u32, mark: &mut [u32]) -> Vec<BlockId> {
    let mut out = vec![h];
    mark[ix(h)] = id;
    let mut stack: Vec<BlockId> = Vec::new();
    for &t in latches {
        if mark[ix(t)] != id {
            mark[ix(t)] = id;
            out.push(t);
            stack.push(t);
        }
    }
    while let Some(b) = stack.pop() {
        for &p in cfg.preds(b) {
            if cfg.is_reachable(p) && mark[ix(p)] != id {
                mark[ix(p)] = id;
                out.push(p);
                stack.push(p);
            }
        }
    }
    out
}

//! Regions of a huge function: its code cut into parts of bounded size,
//! which the code generator compiles as functions of their own (its split
//! lowering: `flowc_codegen`, `lower/frame.rs`), so that the memory and
//! time it spends per function stay bounded whatever the program's size.
//!
//! - A *piece* is a run of at most `max` instructions of one block: a
//!   block of more instructions is cut into pieces of `max` (the last one
//!   shorter), any other reachable block is one piece. Pieces are
//!   numbered block after block in reverse postorder, a block's pieces in
//!   order. A piece's instructions run straight through; piece `k + 1` of
//!   a block follows piece `k`, and a block's first piece follows the
//!   last pieces of its predecessors. A block's terminator belongs to its
//!   last piece, its phis to its first.
//! - *Regions* are sets of pieces of at most `max` instructions (a piece
//!   counts its phis, instructions and one for the terminator), filled in
//!   reverse postorder with single blocks outside loops and whole
//!   outermost loop nests: a nest of up to `max_loop` instructions stays
//!   in one region, alone if it does not fit beside others (so a loop
//!   stays in one function, its values in registers); a bigger nest is
//!   placed as its own blocks, cut piece by piece like straight-line code,
//!   and its child nests, each of which stays whole if it fits, and so on
//!   down (the inner loops of a partially evaluated interpreter's main
//!   loop, tens of thousands of instructions, each stay one function).
//!   (A region of a single piece may exceed `max` by the piece's phis and
//!   terminator.)
//! - An *entry* of a region is a piece with a predecessor in another
//!   region, or the function's entry. Control enters a region only at its
//!   entries; each gets a number (its index among the region's entries,
//!   in reverse postorder).
//! - *Region dominance*: piece `a` dominates piece `b` when both are in
//!   one region and every path in that region's own graph, from any of its
//!   entries to `b`, passes `a`. A value may be used directly (in a
//!   register) only where its definition's piece dominates the use this
//!   way ([`Regions::direct`]): anywhere else, control may have left the
//!   region after the definition and come back, or come in past it, and
//!   the value must come from memory the regions share.
//!
//! Uses are placed as everywhere in the IR: an instruction's operands in
//! its piece, a terminator's (and its resume record's) in the block's last
//! piece, a phi's input for predecessor `P` at the end of `P`'s last piece.
//! Parameters are defined before any piece (so never used directly).
//!
//! Everything is numbered in reverse postorder, so the result is
//! deterministic; the cost is linear in the function's size plus, for
//! the nests too big to stay whole, their blocks once each (what the loop
//! forest's lists of blocks cost already).

use crate::cfg::Cfg;
use crate::function::{BlockId, Function, ValueId};
use crate::ix;
use crate::loops::{LoopForest, LoopId};

const NONE: u32 = u32::MAX;

/// What region filling places as a unit if it fits: a block, or a loop
/// nest (see [`Regions::with_entries`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Item {
    Block(BlockId),
    Nest(LoopId),
}

/// A run of instructions of one block (see the module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub block: BlockId,
    /// The instructions `start..end` of the block (phis not counted).
    pub start: u32,
    pub end: u32,
    /// Whether the piece ends the block (holds its terminator).
    pub last: bool,
    pub region: u32,
}

/// The pieces and regions of a function, with region dominance.
pub struct Regions {
    max: u32,
    pieces: Vec<Piece>,
    /// The first and last piece of each block (by raw index; `NONE`:
    /// unreachable).
    first: Vec<u32>,
    last: Vec<u32>,
    /// Each region's pieces and entries, in increasing order (reverse
    /// postorder).
    members: Vec<Vec<u32>>,
    entries: Vec<Vec<u32>>,
    /// Per piece: its number among its region's entries, or `NONE`.
    entry_number: Vec<u32>,
    /// Per piece: preorder and postorder number in its region's dominator
    /// tree (rooted at a virtual node before the entries).
    order: Vec<[u32; 2]>,
    /// Per value (raw index): the piece that defines it (`NONE`: a
    /// parameter, or not defined in a reachable block).
    def_piece: Vec<u32>,
}

impl Regions {
    /// Cuts `f` into pieces of at most `max` instructions and regions of
    /// at most `max`, or one loop nest of up to `max_loop` (see the module
    /// docs; `max >= 1`).
    pub fn new(f: &Function, cfg: &Cfg, loops: &LoopForest, max: usize, max_loop: usize) -> Regions {
        Regions::with_entries(f, cfg, loops, max, max_loop, &[])
    }

    /// [`Regions::new`], with the first pieces of blocks `forced` entries
    /// of their regions whatever their predecessors: places where control
    /// may come in from outside the function's own code (tiered code's
    /// loop headers, where its optimized tier takes over: every value live
    /// there is then in the frame).
    pub fn with_entries(
        f: &Function,
        cfg: &Cfg,
        loops: &LoopForest,
        max: usize,
        max_loop: usize,
        forced: &[BlockId],
    ) -> Regions {
        let max = max.clamp(1, u32::MAX as usize / 4) as u32;
        let max_loop = (max_loop as u64).clamp(max as u64, u32::MAX as u64 / 4) as u32;
        let mut pieces = Vec::new();
        let mut first = vec![NONE; f.blocks.len()];
        let mut last = vec![NONE; f.blocks.len()];
        for &b in &cfg.rpo {
            first[ix(b)] = pieces.len() as u32;
            let n = f.blocks[b].insts.len() as u32;
            let mut start = 0;
            loop {
                let end = (start + max).min(n);
                pieces.push(Piece { block: b, start, end, last: end == n, region: NONE });
                if end == n {
                    last[ix(b)] = pieces.len() as u32 - 1;
                    break;
                }
                start = end;
            }
        }
        let size = |p: &Piece| {
            let phis = if p.start == 0 { f.blocks[p.block].phis.len() as u32 } else { 0 };
            phis + (p.end - p.start) + u32::from(p.last)
        };
        // What is placed, in the reverse postorder of its first block:
        // outermost loop nests and single blocks outside loops; a nest too
        // big to stay whole is placed as its own blocks and its child
        // nests, each of which stays whole if it fits (and so on down), so
        // that an inner loop of a huge nest is still one function.
        let mut rpo_index = vec![NONE; f.blocks.len()];
        for (k, &b) in cfg.rpo.iter().enumerate() {
            rpo_index[ix(b)] = k as u32;
        }
        let block_size = |b: BlockId, pieces: &[Piece]| -> u32 {
            (first[ix(b)] as usize..last[ix(b)] as usize + 1).map(|p| size(&pieces[p])).sum()
        };
        // The items directly under loop `within` (the function's top
        // level for `None`), in the reverse postorder of their first block
        // (a nest's is its header, which dominates the rest): its own
        // blocks one by one and its child nests. Opening a nest costs its
        // blocks once, as the loop forest's lists do.
        let roots: Vec<LoopId> = loops.roots().collect();
        let items_under = |within: Option<LoopId>| -> Vec<Item> {
            let (own, children): (Vec<BlockId>, &[LoopId]) = match within {
                None => (cfg.rpo.iter().copied().filter(|&b| loops.loop_of(b).is_none()).collect(), &roots),
                Some(l) => {
                    let own = loops.blocks(l).iter().copied().filter(|&b| loops.loop_of(b) == Some(l)).collect();
                    (own, loops.children(l))
                }
            };
            let mut items: Vec<(u32, Item)> = own
                .into_iter()
                .map(|b| (rpo_index[ix(b)], Item::Block(b)))
                .chain(children.iter().map(|&c| (rpo_index[ix(loops.header(c))], Item::Nest(c))))
                .collect();
            items.sort_unstable_by_key(|&(k, _)| k);
            items.into_iter().map(|(_, item)| item).collect()
        };
        let mut regions: u32 = 0;
        let mut filled: u32 = 0;
        let mut work = items_under(None);
        work.reverse();
        while let Some(item) = work.pop() {
            let (whole, fits) = match item {
                Item::Block(b) => {
                    let whole = block_size(b, &pieces);
                    (whole, whole <= max)
                }
                Item::Nest(l) => {
                    let whole: u32 = loops.blocks(l).iter().map(|&b| block_size(b, &pieces)).sum();
                    (whole, whole <= max_loop)
                }
            };
            if fits {
                if filled > 0 && filled + whole > max {
                    regions += 1;
                    filled = 0;
                }
                let blocks = match item {
                    Item::Block(ref b) => std::slice::from_ref(b),
                    Item::Nest(l) => loops.blocks(l),
                };
                for &b in blocks {
                    for piece in &mut pieces[first[ix(b)] as usize..last[ix(b)] as usize + 1] {
                        piece.region = regions;
                    }
                }
                filled += whole;
                continue;
            }
            match item {
                Item::Block(b) => {
                    for piece in &mut pieces[first[ix(b)] as usize..last[ix(b)] as usize + 1] {
                        let s = size(piece);
                        if filled > 0 && filled + s > max {
                            regions += 1;
                            filled = 0;
                        }
                        piece.region = regions;
                        filled += s;
                    }
                }
                Item::Nest(l) => {
                    let mut inner = items_under(Some(l));
                    inner.reverse();
                    work.extend(inner);
                }
            }
        }
        let count = if pieces.is_empty() { 0 } else { regions as usize + 1 };
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
        for (k, p) in pieces.iter().enumerate() {
            members[p.region as usize].push(k as u32);
        }
        let mut r = Regions {
            max,
            pieces,
            first,
            last,
            members,
            entries: vec![Vec::new(); count],
            entry_number: Vec::new(),
            order: Vec::new(),
            def_piece: Vec::new(),
        };
        r.entry_number = vec![NONE; r.pieces.len()];
        let mut is_forced = vec![false; f.blocks.len()];
        for &b in forced {
            is_forced[ix(b)] = true;
        }
        for p in 0..r.pieces.len() {
            let piece = r.pieces[p];
            let entered = (piece.start == 0 && (piece.block == f.entry || is_forced[ix(piece.block)]))
                || r.preds(cfg, p).any(|q| r.pieces[q].region != piece.region);
            if entered {
                let list = &mut r.entries[piece.region as usize];
                r.entry_number[p] = list.len() as u32;
                list.push(p as u32);
            }
        }
        r.order = vec![[NONE; 2]; r.pieces.len()];
        let mut scratch = Scratch::default();
        for region in 0..count {
            r.number_region(cfg, region, &mut scratch);
        }
        r.def_piece = vec![NONE; f.values.len()];
        for &b in &cfg.rpo {
            let data = &f.blocks[b];
            let first = r.first[ix(b)];
            for &phi in &data.phis {
                if let Some(v) = f.insts[phi].result {
                    r.def_piece[ix(v)] = first;
                }
            }
            for (k, &i) in data.insts.iter().enumerate() {
                if let Some(v) = f.insts[i].result {
                    r.def_piece[ix(v)] = first + k as u32 / r.max;
                }
            }
        }
        r
    }

    /// The number of regions.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn piece(&self, p: usize) -> &Piece {
        &self.pieces[p]
    }

    /// The pieces of region `r`, in reverse postorder.
    pub fn members(&self, r: usize) -> impl Iterator<Item = usize> + '_ {
        self.members[r].iter().map(|&p| p as usize)
    }

    /// The entries of region `r`, by number.
    pub fn entries(&self, r: usize) -> impl Iterator<Item = usize> + '_ {
        self.entries[r].iter().map(|&p| p as usize)
    }

    /// Piece `p`'s number among its region's entries, if it is one.
    pub fn entry_number(&self, p: usize) -> Option<usize> {
        let n = self.entry_number[p];
        (n != NONE).then_some(n as usize)
    }

    /// The first piece of block `b` (`None`: unreachable).
    pub fn first_piece(&self, b: BlockId) -> Option<usize> {
        let p = *self.first.get(ix(b))?;
        (p != NONE).then_some(p as usize)
    }

    /// The piece holding instruction `k` of block `b` (its terminator for
    /// `k` = the number of instructions). `b` must be reachable.
    pub fn piece_at(&self, b: BlockId, k: usize) -> usize {
        // (The terminator of a block of exactly `n * max` instructions is
        // in its last piece, not one past it.)
        (self.first[ix(b)] as usize + k / self.max as usize).min(self.last[ix(b)] as usize)
    }

    /// The last piece of block `b` (its terminator's, and where its
    /// successors' phi inputs are used). `b` must be reachable.
    pub fn last_piece(&self, b: BlockId) -> usize {
        self.last[ix(b)] as usize
    }

    /// The piece defining `v` (`None`: a parameter or a value not defined
    /// in a reachable block).
    pub fn def_piece(&self, v: ValueId) -> Option<usize> {
        let p = *self.def_piece.get(ix(v))?;
        (p != NONE).then_some(p as usize)
    }

    /// Whether piece `a` dominates piece `b` in their region (reflexive;
    /// false for pieces of two regions).
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        let ([pa, qa], [pb, qb]) = (self.order[a], self.order[b]);
        self.pieces[a].region == self.pieces[b].region && pa <= pb && qb <= qa
    }

    /// Whether `v`, used in piece `at`, may be used directly: it is
    /// defined in a piece that dominates `at` in its region (a use in the
    /// defining piece comes after the definition, as SSA requires).
    pub fn direct(&self, v: ValueId, at: usize) -> bool {
        self.def_piece(v).is_some_and(|d| self.dominates(d, at))
    }

    /// The predecessors of piece `p`: the piece before it in its block,
    /// or the last pieces of its block's reachable predecessors.
    fn preds<'a>(&'a self, cfg: &'a Cfg, p: usize) -> impl Iterator<Item = usize> + 'a {
        let piece = self.pieces[p];
        let previous = (piece.start > 0).then(|| p - 1);
        let blocks = if piece.start == 0 { cfg.preds(piece.block) } else { &[] };
        previous.into_iter().chain(blocks.iter().filter(|&&q| cfg.is_reachable(q)).map(|&q| self.last_piece(q)))
    }

    /// The successors of piece `p` in the same region.
    fn region_succs(&self, cfg: &Cfg, p: usize, out: &mut Vec<usize>) {
        out.clear();
        let piece = self.pieces[p];
        if !piece.last {
            out.push(p + 1);
        } else {
            for &s in cfg.succs(piece.block) {
                if let Some(q) = self.first_piece(s) {
                    out.push(q);
                }
            }
        }
        out.retain(|&q| self.pieces[q].region == piece.region);
    }

    /// Numbers region `r`'s dominator tree (Cooper, Harvey and Kennedy's
    /// algorithm over the region's own reverse postorder, from a virtual
    /// root whose successors are the entries).
    fn number_region(&mut self, cfg: &Cfg, r: usize, s: &mut Scratch) {
        let members = std::mem::take(&mut self.members[r]);
        let m = members.len();
        let root = m;
        // Local numbers: positions in `members`.
        let local = |p: usize| members.binary_search(&(p as u32)).expect("a member of the region") as u32;
        // Successors as local numbers; the root's are the entries.
        s.succ_start.clear();
        s.succ.clear();
        let mut out = Vec::new();
        for &p in &members {
            s.succ_start.push(s.succ.len() as u32);
            self.region_succs(cfg, p as usize, &mut out);
            s.succ.extend(out.iter().map(|&q| local(q)));
        }
        s.succ_start.push(s.succ.len() as u32);
        s.succ.extend(self.entries[r].iter().map(|&p| local(p as usize)));
        s.succ_start.push(s.succ.len() as u32);
        let succs = |s: &Scratch, n: usize| s.succ_start[n] as usize..s.succ_start[n + 1] as usize;
        // Postorder from the root.
        s.post.clear();
        s.seen.clear();
        s.seen.resize(m + 1, false);
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        s.seen[root] = true;
        while let Some(&mut (n, ref mut k)) = stack.last_mut() {
            let next = s.succ[succs(s, n)].get(*k).copied();
            *k += 1;
            match next {
                Some(c) if !s.seen[c as usize] => {
                    s.seen[c as usize] = true;
                    stack.push((c as usize, 0));
                }
                Some(_) => {}
                None => {
                    s.post.push(n as u32);
                    stack.pop();
                }
            }
        }
        // Reverse-postorder numbers; predecessors in local numbers.
        let count = s.post.len();
        s.rpo_number.clear();
        s.rpo_number.resize(m + 1, NONE);
        for (k, &n) in s.post.iter().rev().enumerate() {
            s.rpo_number[n as usize] = k as u32;
        }
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); count];
        for n in 0..=m {
            if s.rpo_number[n] == NONE {
                continue;
            }
            for c in succs(s, n) {
                preds[s.rpo_number[s.succ[c] as usize] as usize].push(s.rpo_number[n]);
            }
        }
        let mut doms = vec![NONE; count];
        doms[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..count {
                let mut new = NONE;
                for &q in &preds[i] {
                    if doms[q as usize] == NONE {
                        continue;
                    }
                    new = if new == NONE { q } else { crate::cfg::intersect(&doms, q, new) };
                }
                if new != NONE && doms[i] != new {
                    doms[i] = new;
                    changed = true;
                }
            }
        }
        // The tree's children (by rpo number), then pre/postorder numbers.
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); count];
        for i in 1..count {
            children[doms[i] as usize].push(i as u32);
        }
        let by_rpo: Vec<u32> = s.post.iter().rev().copied().collect();
        let (mut pre, mut post) = (0u32, 0u32);
        let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
        let mut numbers = vec![[NONE; 2]; count];
        numbers[0][0] = pre;
        pre += 1;
        while let Some(&mut (n, ref mut k)) = stack.last_mut() {
            match children[n as usize].get(*k).copied() {
                Some(c) => {
                    *k += 1;
                    numbers[c as usize][0] = pre;
                    pre += 1;
                    stack.push((c, 0));
                }
                None => {
                    numbers[n as usize][1] = post;
                    post += 1;
                    stack.pop();
                }
            }
        }
        for (i, &n) in by_rpo.iter().enumerate() {
            if (n as usize) < m {
                self.order[members[n as usize] as usize] = numbers[i];
            }
        }
        self.members[r] = members;
    }
}

/// Buffers reused region after region.
#[derive(Default)]
struct Scratch {
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    post: Vec<u32>,
    seen: Vec<bool>,
    rpo_number: Vec<u32>,
}

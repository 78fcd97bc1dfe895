//! Variable liveness over a resolved flow graph, and promote chains.
//!
//! A variable is *live* at a block when some path from the block's start
//! reads it before writing it. The JIT uses this to know which variables
//! a trace must take and hand back: a variable that is dead at a trace's
//! anchor cannot be read before it is written again on any path from
//! there, so leaving it out changes nothing a program can observe (only
//! the order in which the environment would list it, which no program
//! reads). `promote` counts as a read of its variable (the tracer reads
//! it).
//!
//! Computed sparsely, variable by variable: from the blocks that read a
//! variable before writing it, a backward walk over predecessors marks the
//! blocks it is live in, stopping at blocks that write it (and at call
//! edges whose result it is). The cost is the size of the answer — the
//! sum over variables of the blocks each is live in — times the in-degree.
//! A dense bit set per block, solved by a fixpoint over all blocks, costs
//! blocks × variables a round: on the residual of a large BF program
//! (74,000 blocks, 78,000 variables) that is 720 MB a round, and it never
//! finished.
//!
//! Every list — the blocks that read and that write each variable, each
//! block's predecessors, each block's live variables — is one row of a
//! [`Rows`] table, a vector and its rows' bounds, made by sorting pairs
//! (row, item) by row: a vector per row was an allocation per block and
//! per variable (a main graph of 5,000 loops, 39,000 blocks: a run's
//! first recording there 18.8 -> 16.5 million instructions).

use super::resolve::{CStmt, CTerm, Graph, Operand, Slot, Target};

/// Lists in one vector: row `r` is `items[bounds[r]..bounds[r + 1]]`.
#[derive(Clone, Debug, Default)]
struct Rows<T> {
    bounds: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy> Rows<T> {
    /// The table of `rows` rows holding each pair's item in its row, in
    /// the order of `pairs` (a stable counting sort).
    fn of(rows: usize, pairs: &[(u32, T)]) -> Rows<T> {
        let mut bounds = vec![0u32; rows + 1];
        for &(r, _) in pairs {
            bounds[r as usize + 1] += 1;
        }
        for r in 0..rows {
            bounds[r + 1] += bounds[r];
        }
        let mut at: Vec<u32> = bounds[..rows].to_vec();
        // Every place is written below; the first item fills them first.
        let mut items: Vec<T> = match pairs.first() {
            Some(&(_, first)) => vec![first; pairs.len()],
            None => Vec::new(),
        };
        for &(r, item) in pairs {
            items[at[r as usize] as usize] = item;
            at[r as usize] += 1;
        }
        Rows { bounds, items }
    }

    fn row(&self, r: usize) -> &[T] {
        match (self.bounds.get(r), r.checked_add(1).and_then(|next| self.bounds.get(next))) {
            (Some(&lo), Some(&hi)) => &self.items[lo as usize..hi as usize],
            _ => &[],
        }
    }

    fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    fn rows(&self) -> impl Iterator<Item = &[T]> + '_ {
        (0..self.len()).map(|r| self.row(r))
    }
}

/// Live variables at the start of every block of one graph: per block,
/// its live slots in increasing order.
#[derive(Clone, Debug)]
pub struct Liveness {
    live_in: Rows<Slot>,
}

impl Liveness {
    /// Computes the liveness of `g`.
    pub fn of(g: &Graph) -> Liveness {
        let facts = Facts::of(g);
        let n = g.blocks.len();
        // (block, variable) for every variable live at a block's start.
        let mut found: Vec<(u32, Slot)> = Vec::new();
        // Per block: whether it writes the variable at hand, whether the
        // variable is live at its start (both cleared after each variable).
        let mut writes = vec![false; n];
        let mut live = vec![false; n];
        let mut marked: Vec<u32> = Vec::new();
        for (v, (gens, kills)) in facts.gens.rows().zip(facts.kills.rows()).enumerate() {
            let v = v as Slot;
            kills.iter().for_each(|&b| writes[b as usize] = true);
            for &b in gens {
                live[b as usize] = true;
                marked.push(b);
            }
            // `marked` is the worklist too: the blocks after `next` are
            // still to be walked from.
            let mut next = 0;
            while let Some(&s) = marked.get(next) {
                next += 1;
                for &(p, written) in facts.preds.row(s as usize) {
                    if written == Some(v) || live[p as usize] || writes[p as usize] {
                        continue;
                    }
                    live[p as usize] = true;
                    marked.push(p);
                }
            }
            for b in marked.drain(..) {
                live[b as usize] = false;
                found.push((b, v));
            }
            kills.iter().for_each(|&b| writes[b as usize] = false);
        }
        // Variables were visited in slot order, and the sort is stable:
        // each block's row is sorted.
        Liveness { live_in: Rows::of(n, &found) }
    }

    /// Whether `slot` is live at the start of `block`.
    pub fn is_live(&self, block: u32, slot: Slot) -> bool {
        self.live_in.row(block as usize).binary_search(&slot).is_ok()
    }

    /// The slots live at the start of `block`, in slot order.
    pub fn live_at(&self, block: u32) -> Vec<Slot> {
        self.live_in.row(block as usize).to_vec()
    }
}

/// What liveness is computed from: per variable, the blocks that read it
/// before writing it (`gens`) and the blocks that write it (`kills`), each
/// in block order; per block, its predecessors, each with the slot its
/// edge writes (a call's result, written when the callee returns).
struct Facts {
    gens: Rows<u32>,
    kills: Rows<u32>,
    preds: Rows<(u32, Option<Slot>)>,
}

impl Facts {
    fn of(g: &Graph) -> Facts {
        let slots = g.slot_names.len();
        let mut scan = Scan {
            gens: Vec::new(),
            kills: Vec::new(),
            preds: Vec::new(),
            read_at: vec![0; slots],
            written_at: vec![0; slots],
            stamp: 0,
        };
        for (b, block) in g.blocks.iter().enumerate() {
            scan.stamp = b as u32 + 1;
            for st in &block.stmts {
                match st {
                    CStmt::Op1 { dst, arg, .. } => {
                        scan.operand(arg);
                        scan.write(*dst);
                    }
                    CStmt::Op2 { dst, lhs, rhs, .. } => {
                        scan.operand(lhs);
                        scan.operand(rhs);
                        scan.write(*dst);
                    }
                    CStmt::New { dst, .. } => scan.write(*dst),
                    CStmt::Get { dst, obj, .. } => {
                        scan.operand(obj);
                        scan.write(*dst);
                    }
                    CStmt::Set { obj, value, .. } => {
                        scan.operand(obj);
                        scan.operand(value);
                    }
                }
            }
            match &block.term {
                CTerm::Jump(t) => scan.edge(t, None),
                CTerm::Promote { var, target } => {
                    scan.read(*var);
                    scan.edge(target, None);
                }
                CTerm::If { cond, then_t, else_t } => {
                    scan.read(*cond);
                    scan.edge(then_t, None);
                    scan.edge(else_t, None);
                }
                CTerm::IfClass { obj, then_t, else_t, .. } => {
                    scan.operand(obj);
                    scan.edge(then_t, None);
                    scan.edge(else_t, None);
                }
                CTerm::Call { dst, args, next, .. } => {
                    args.iter().for_each(|a| scan.operand(a));
                    // The result is written when the callee returns.
                    scan.edge(next, Some(*dst));
                }
                CTerm::Print(a) | CTerm::Return(a) => scan.operand(a),
                CTerm::Error(_) => {}
            }
        }
        Facts {
            gens: Rows::of(slots, &scan.gens),
            kills: Rows::of(slots, &scan.kills),
            preds: Rows::of(g.blocks.len(), &scan.preds),
        }
    }
}

/// The scan of one block after another, gathering [`Facts`] as pairs
/// (variable, block) and (block, predecessor): `read_at` and `written_at`
/// hold, per slot, the stamp (block index plus one) of the last block
/// that read it before writing it and that wrote it, so each block is
/// listed once per variable.
struct Scan {
    gens: Vec<(u32, u32)>,
    kills: Vec<(u32, u32)>,
    preds: Vec<(u32, (u32, Option<Slot>))>,
    read_at: Vec<u32>,
    written_at: Vec<u32>,
    stamp: u32,
}

impl Scan {
    fn read(&mut self, s: Slot) {
        let i = s as usize;
        if self.written_at[i] != self.stamp && self.read_at[i] != self.stamp {
            self.read_at[i] = self.stamp;
            self.gens.push((s, self.stamp - 1));
        }
    }

    fn operand(&mut self, o: &Operand) {
        if let Operand::Slot(s) = o {
            self.read(*s);
        }
    }

    /// An edge from the block at hand to `t`, writing `written`.
    fn edge(&mut self, t: &Target, written: Option<Slot>) {
        if let Some(s) = t.block() {
            self.preds.push((s, (self.stamp - 1, written)));
        }
    }

    fn write(&mut self, s: Slot) {
        let i = s as usize;
        if self.written_at[i] != self.stamp {
            self.written_at[i] = self.stamp;
            self.kills.push((s, self.stamp - 1));
        }
    }
}

impl Graph {
    /// The promote chain at `block`: the variables promoted, in order, by
    /// the blocks control passes through from `block`'s start while they
    /// hold nothing but a `promote` (or a jump) — PyPy's green variables of
    /// a hot spot at that label, whose values at the label are the values
    /// promoted. The label's own block may compute first (`op = code[pc]`
    /// then `promote pc`: the hint after the fetch rather than alone),
    /// where it writes no variable it then promotes.
    pub fn promote_chain(&self, block: u32) -> Vec<Slot> {
        let mut out = Vec::new();
        // The blocks passed (a chain is a few blocks long: a table over
        // the graph's blocks, made per call, made this quadratic in a
        // main graph of thousands of loops).
        let mut seen: Vec<usize> = Vec::new();
        // The variables the label's block writes.
        let mut written: Vec<Slot> = Vec::new();
        let mut b = block as usize;
        while let Some(blk) = self.blocks.get(b) {
            if seen.contains(&b) || (b != block as usize && !blk.stmts.is_empty()) {
                break;
            }
            seen.push(b);
            written.extend(blk.stmts.iter().filter_map(|s| s.dst()));
            b = match &blk.term {
                CTerm::Promote { var, target: Target::Block(t) | Target::Watched(t) } => {
                    if written.contains(var) {
                        break;
                    }
                    if !out.contains(var) {
                        out.push(*var);
                    }
                    *t as usize
                }
                CTerm::Jump(Target::Block(t) | Target::Watched(t)) => *t as usize,
                _ => break,
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::interp::Resolved;
    use crate::syntax;

    /// Liveness by the textbook definition, for comparison: sets per block,
    /// iterated to a fixpoint.
    fn by_fixpoint(g: &Graph) -> Vec<BTreeSet<Slot>> {
        let facts = Facts::of(g);
        let n = g.blocks.len();
        let mut gen = vec![BTreeSet::new(); n];
        let mut kill = vec![BTreeSet::new(); n];
        for (v, (gens, kills)) in facts.gens.rows().zip(facts.kills.rows()).enumerate() {
            gens.iter().for_each(|&b| _ = gen[b as usize].insert(v as Slot));
            kills.iter().for_each(|&b| _ = kill[b as usize].insert(v as Slot));
        }
        let mut live = gen.clone();
        loop {
            let mut changed = false;
            for (s, preds) in facts.preds.rows().enumerate() {
                for &(p, written) in preds {
                    let flows: Vec<Slot> = live[s]
                        .iter()
                        .copied()
                        .filter(|v| Some(*v) != written && !kill[p as usize].contains(v))
                        .collect();
                    for v in flows {
                        changed |= live[p as usize].insert(v);
                    }
                }
            }
            if !changed {
                return live;
            }
        }
    }

    /// A loop nest with a call whose result is a variable live around
    /// the loop, a promote, a variable only written, one read before
    /// and after its write in one block, and a self-loop.
    const PROGRAM: &str = "
function count(n):
    s:
        if n goto down else goto base
    down:
        m = n - 1
        r = call count(m) then back
    back:
        r = r + 1
        return r
    base:
        return 0
start:
    i = 0
    total = 0
    unused = 5
    goto outer
outer:
    c = i < limit
    if c goto inner_start else goto done
inner_start:
    j = 0
    goto inner
inner:
    promote j then step
step:
    total = call count(j) then counted
counted:
    j = j + 1
    d = j < i
    if d goto inner else goto next
next:
    total = total + i
    i = i + 1
    goto outer
done:
    k = total
    goto spin
spin:
    k = k - 1
    if k goto spin else goto out
out:
    print_and_stop(total)
";

    /// The greens of a label: the promotions of its block and of the
    /// blocks of nothing but promotions and jumps after it; its block may
    /// compute first, unless it writes what it promotes.
    #[test]
    fn a_promote_chain_may_follow_what_its_label_computes_first() {
        let p = syntax::parse(
            "test",
            "entry start(code = [1, 2], pc = 0, k = 0)
start:
    goto fetch
fetch:
    op = code[pc]
    promote pc then second
second:
    promote k then run
run:
    pc = pc + 1
    promote pc then moved
moved:
    x = k
    goto fetch
",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let resolved = Resolved::new(&p, &[]);
        let g = &resolved.graphs[0];
        let chain = |label: &str| -> Vec<&str> {
            let b = g.labels[&crate::symbol::Symbol::intern(label)];
            g.promote_chain(b).iter().map(|&s| g.slot_names[s as usize].as_str()).collect()
        };
        assert_eq!(chain("fetch"), ["pc", "k"]);
        assert_eq!(chain("second"), ["k"]);
        assert_eq!(chain("run"), Vec::<&str>::new(), "pc is written before it is promoted");
        assert_eq!(chain("moved"), Vec::<&str>::new(), "a jump to a block that computes ends the chain");
    }

    #[test]
    fn sparse_liveness_is_the_fixpoint() {
        let p = syntax::parse("test", PROGRAM).unwrap_or_else(|e| panic!("{e}"));
        let resolved = Resolved::new(&p, &[]);
        for g in &resolved.graphs {
            let live = Liveness::of(g);
            let expected = by_fixpoint(g);
            for (b, want) in expected.iter().enumerate() {
                let got = live.live_at(b as u32);
                assert_eq!(got, want.iter().copied().collect::<Vec<_>>(), "block {}", g.blocks[b].label);
                for s in 0..g.slot_names.len() as Slot {
                    assert_eq!(live.is_live(b as u32, s), want.contains(&s));
                }
            }
        }
        // What the anchors of the loops carry: `limit` (never written) is
        // live everywhere before `done`; `total` is live at `outer` and
        // `counted` (read at `next`) but not at `inner`, whose every path
        // writes it first (the call's result at `step`); `unused` nowhere.
        let main = &resolved.graphs[0];
        let names = |label: &str| -> Vec<&str> {
            let b = main.labels[&crate::Symbol::intern(label)];
            live_names(main, &Liveness::of(main), b)
        };
        assert_eq!(names("outer"), ["i", "total", "limit"]);
        assert_eq!(names("inner"), ["i", "limit", "j"]);
        assert_eq!(names("counted"), ["i", "total", "limit", "j"]);
        assert_eq!(names("spin"), ["total", "k"]);
        assert!(!names("start").contains(&"unused"));
    }

    fn live_names<'g>(g: &'g Graph, live: &Liveness, b: u32) -> Vec<&'g str> {
        live.live_at(b).into_iter().map(|s| g.slot_names[s as usize].as_str()).collect()
    }
}

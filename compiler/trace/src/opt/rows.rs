//! Which `guard_at`s a trace keeps ([`crate::to_ir`], "Links laid out
//! in a row"):
//!
//! - **In a loop**, those on the way the loop carries an object round —
//!   counted from a phi whose value for the next iteration is one of them
//!   (a BF `[>>>>>>>>>]` carrying its cell nine links on). There computing
//!   each link from the phi takes the loads off the path from one
//!   iteration to the next. Elsewhere in a loop trace — its preamble, a
//!   loop whose walk comes back to where it started (a BF `[->+<]`) — the
//!   link's load is waited for by nothing across iterations, and the
//!   guard is only more work: an addition, a comparison and a branch, and
//!   the baseline tier a word written (the tutorial BF fractal 20, whose
//!   loops mostly come back: 0.70 -> 0.85 s keeping them all).
//! - **In straight code** (a bridge, an entry trace), those of a long walk:
//!   at least [`STRAIGHT_ROW`] links counted from one base. A walk of `n`
//!   links read one from the other waits `n` loads in a row (some 5
//!   cycles each) before what comes after it can start; counted from its
//!   start, the loads go side by side. mandelbrot.b's hottest bridges walk
//!   nine to eleven cells back to a loop's start: 3.7 -> 3.3 s. A short
//!   walk waits little, and its guards cost code: keeping every one in
//!   straight code made the tutorial fractal 20 7% slower and its code
//!   0.5 MB larger; walks of at least 4 or 8 links, 2% (4, 6 and 8 ran
//!   mandelbrot.b alike; 12 lost the gain).
//!
//! The others are dropped: their results are their links. One at a
//! distance of 0 always stays: it says a link came back to its start,
//! which the walk made the trace use in the link's place.
//!
//! The `guard_at`s kept in a block since its last instruction with an
//! effect all leave by the first one's record and label
//! ([`share_exits`]): a long walk costs one exit, not one per link.

use flowc_ir::{Function, GuardKind, InstKind, Operand, ValueDef, ValueId};
use flowc_passes::edit::Substitution;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::loop_block;

/// The fewest links counted from one base for which straight code keeps
/// their `guard_at`s (module docs).
pub const STRAIGHT_ROW: usize = 8;

/// Drops the `guard_at`s of `f` that neither carry an object round its
/// loop nor walk a long way in straight code (module docs). The walk
/// counts every `guard_at` from the start of its walk (its base is no
/// other's result).
pub fn keep_paying(f: &mut Function) {
    let kept = match loop_block(f) {
        Some(lp) => carried(f, lp),
        None => long_walks(f),
    };
    let mut subst = Substitution::new(f);
    let (layout, blocks, insts) = (&f.layout, &mut f.blocks, &f.insts);
    for &b in layout {
        blocks[b].insts.retain(|i| match (&insts[*i].kind, insts[*i].result) {
            (InstKind::Guard { kind: GuardKind::At(link, base, delta), .. }, Some(r))
                if *delta != 0 && !kept.contains(base) =>
            {
                subst.set(r, link.clone());
                false
            }
            _ => true,
        });
    }
    subst.apply(f);
    share_exits(f);
}

/// Makes every `guard_at` kept since the last instruction with an effect
/// (a `set`, a `new`, a call) in its block leave by the first one's
/// record and label: the interpreter going on from there only reads and
/// checks again what the code did since, and a walk costs one exit, not
/// one per link.
fn share_exits(f: &mut Function) {
    for &b in &f.layout {
        let mut first: Option<(flowc_ir::ResumeId, flowc_lang::Symbol)> = None;
        for &i in &f.blocks[b].insts {
            match &mut f.insts[i].kind {
                InstKind::Guard { kind: GuardKind::At(..), resume, label } => match first {
                    Some((r, l)) => (*resume, *label) = (r, l),
                    None => first = Some((*resume, *label)),
                },
                InstKind::Op { .. } | InstKind::Get { .. } | InstKind::Guard { .. } => {}
                _ => first = None,
            }
        }
    }
}

/// The bases a loop (block `lp`) carries its objects from: the phis that
/// some phi's next value is counted from.
fn carried(f: &Function, lp: flowc_ir::BlockId) -> HashSet<Operand> {
    let base_of = |v: ValueId| match f.values[v].def {
        ValueDef::Inst(i) => match &f.insts[i].kind {
            InstKind::Guard { kind: GuardKind::At(_, base, _), .. } => Some(base.clone()),
            _ => None,
        },
        _ => None,
    };
    let phis: Vec<Operand> = f.blocks[lp].phis.iter().filter_map(|&p| f.insts[p].result).map(Operand::Value).collect();
    let mut carried = HashSet::default();
    for &p in &f.blocks[lp].phis {
        let InstKind::Phi(inputs) = &f.insts[p].kind else { continue };
        let next = inputs.iter().find(|(b, _)| *b == lp).and_then(|(_, o)| o.as_value());
        // Counted from a phi: usually this one; another, where a loop
        // carries a cell counted from another variable's.
        if let Some(base) = next.and_then(base_of).filter(|b| phis.contains(b)) {
            carried.insert(base);
        }
    }
    carried
}

/// The bases straight code walks at least [`STRAIGHT_ROW`] links from.
fn long_walks(f: &Function) -> HashSet<Operand> {
    let mut links: HashMap<Operand, usize> = HashMap::default();
    for (_, i) in f.all_insts() {
        if let InstKind::Guard { kind: GuardKind::At(_, base, d), .. } = &f.insts[i].kind {
            if *d != 0 {
                *links.entry(base.clone()).or_default() += 1;
            }
        }
    }
    links.into_iter().filter(|&(_, n)| n >= STRAIGHT_ROW).map(|(b, _)| b).collect()
}

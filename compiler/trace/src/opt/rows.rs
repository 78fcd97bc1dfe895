//! Which `guard_at`s a trace keeps ([`crate::to_ir`], "Links laid out
//! in a row"): those on the way a loop carries an object round — counted
//! from a phi whose value for the next iteration is one of them (a BF
//! `[>>>>>>>>>]` carrying its cell nine links on). There computing each
//! link from the phi takes the loads off the path from one iteration to
//! the next. Anywhere else — straight code, a
//! preamble, a loop whose walk comes back to where it started (a BF
//! `[->+<]`) — the link's load is waited for by nothing across
//! iterations, and the guard is only more work: each costs an addition,
//! a comparison and a branch, and the baseline tier a word written and
//! read (the tutorial BF fractal 20, whose loops mostly come back: 0.70
//! -> 0.85 s keeping them all). Those are dropped: their results are
//! their links. (Kept in straight traces too, mandelbrot.b ran 4% faster,
//! 4.7 against 4.9 s, and its code took 2.5 MB more; fractal 20 ran 7%
//! slower.)

use flowc_ir::{Function, GuardKind, InstKind, Operand, ValueDef, ValueId};
use flowc_passes::edit::Substitution;
use rustc_hash::FxHashSet as HashSet;

use super::loop_block;

/// Drops the `guard_at`s of `f` that do not carry an object round its
/// loop (module docs). The walk counts every `guard_at` from the start of
/// its walk (its base is no other's result): those carried are those
/// counted from a phi that some phi's next value is counted from. One at a distance
/// of 0 stays: it says a link came back to its start, which the walk made
/// the trace use in the link's place.
pub fn keep_carried(f: &mut Function) {
    let base_of = |f: &Function, v: ValueId| match f.values[v].def {
        ValueDef::Inst(i) => match &f.insts[i].kind {
            InstKind::Guard { kind: GuardKind::At(_, base, _), .. } => Some(base.clone()),
            _ => None,
        },
        _ => None,
    };
    let mut carried: HashSet<Operand> = HashSet::default();
    if let Some(lp) = loop_block(f) {
        let phis: Vec<Operand> =
            f.blocks[lp].phis.iter().filter_map(|&p| f.insts[p].result).map(Operand::Value).collect();
        for &p in &f.blocks[lp].phis {
            let InstKind::Phi(inputs) = &f.insts[p].kind else { continue };
            let next = inputs.iter().find(|(b, _)| *b == lp).and_then(|(_, o)| o.as_value());
            // Counted from a phi: usually this one; another, where a loop
            // carries a cell counted from another variable's.
            if let Some(base) = next.and_then(|v| base_of(f, v)).filter(|b| phis.contains(b)) {
                carried.insert(base);
            }
        }
    }
    let mut subst = Substitution::new(f);
    let (layout, blocks, insts) = (&f.layout, &mut f.blocks, &f.insts);
    for &b in layout {
        blocks[b].insts.retain(|i| match (&insts[*i].kind, insts[*i].result) {
            (InstKind::Guard { kind: GuardKind::At(link, base, delta), .. }, Some(r))
                if *delta != 0 && !carried.contains(base) =>
            {
                subst.set(r, link.clone());
                false
            }
            _ => true,
        });
    }
    subst.apply(f);
}

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
//! which the walk made the trace use in the link's place. A comparison
//! the walk kept between a link read again and such a result then
//! compares the link with itself, and is folded with its guard
//! ([`fold_self_compares`]; the tutorial BF fractal had 238).
//!
//! The `guard_at`s kept in a block at one place since its last
//! instruction with an effect leave by one copy of the first one's
//! record ([`share_exits`]): a long walk costs two exits, not one per
//! link. [`long_walks`] counts a base's links over the whole straight
//! trace, a walk broken by `set`s (BF `>+>+>+`) too.

use flowc_ir::{Function, GuardKind, InstId, InstKind, Operand, ResumeId, ValueDef, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::Op;
use flowc_lang::{Symbol, Value};
use flowc_passes::edit::Substitution;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::loop_block;

/// The fewest links counted from one base for which straight code keeps
/// their `guard_at`s (module docs).
pub const STRAIGHT_ROW: usize = 8;

/// Drops the `guard_at`s of `f` that neither carry an object round its
/// loop nor walk a long way in straight code (module docs), but those a
/// `guard_row` vouches for (`vouched`, sorted: code checks none of them,
/// [`super::row`]) and those of `placed` (sorted): a `guard_at` whose
/// result the optimizer replaced with the object an earlier one found at
/// its place, and that earlier one. Together they check that the link is
/// that object (or the `guard_row` that vouches for them does), which
/// dropping either would leave unchecked. The walk counts every
/// `guard_at` from the start of its walk (its base is no other's result).
pub fn keep_paying(f: &mut Function, vouched: &[InstId], placed: &[InstId]) {
    let kept = match loop_block(f) {
        Some(lp) => carried(f, lp),
        None => long_walks(f),
    };
    let mut subst = Substitution::new(f);
    let (layout, blocks, insts) = (&f.layout, &mut f.blocks, &f.insts);
    for &b in layout {
        blocks[b].insts.retain(|i| match (&insts[*i].kind, insts[*i].result) {
            // Those of a walk a `guard_row` vouches for cost code nothing.
            (InstKind::Guard { kind: GuardKind::At(link, base, delta), .. }, Some(r))
                if *delta != 0
                    && !kept.contains(base)
                    && vouched.binary_search(i).is_err()
                    && placed.binary_search(i).is_err() =>
            {
                subst.set(r, link.clone());
                false
            }
            _ => true,
        });
    }
    let folded = fold_self_compares(f, &mut subst);
    subst.apply(f);
    if folded {
        drop_holding_guards(f);
    }
    share_exits(f);
}

/// Folds the comparisons of a link with itself that dropping `guard_at`s
/// leaves, `subst` their results replaced by their links (a trace walking
/// `>><<>>` compares each link it reads again with the `guard_at` result
/// it had for that cell, which becomes the link itself): `eq x, x` is 1
/// and `ne x, x` is 0, `x` read by a `get` (so bound: a `get` of a field
/// never set raises); and comparisons of two places on one walk that the
/// kept `guard_at`s decide ([`same_place`]). Whether any was folded: then the guards of their
/// results, which hold, are to go ([`drop_holding_guards`]) once `subst`
/// is applied. The comparisons are left for dead-code elimination.
fn fold_self_compares(f: &Function, subst: &mut Substitution) -> bool {
    let read = |o: &Operand| match o {
        Operand::Value(v) => match f.values[*v].def {
            ValueDef::Inst(i) => matches!(f.insts[i].kind, InstKind::Get { .. }),
            _ => false,
        },
        Operand::Const(_) => false,
    };
    let mut folded = false;
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            let (InstKind::Op { op: Operator::Known(op @ (Op::Eq | Op::Ne)), args, .. }, Some(r)) =
                (&f.insts[i].kind, f.insts[i].result)
            else {
                continue;
            };
            let [x, y] = args.as_slice() else { continue };
            let (x, y) = (subst.resolve(x), subst.resolve(y));
            let same = if x == y && read(&x) { Some(true) } else { same_place(f, &x, &y) };
            if let Some(same) = same {
                subst.set(r, Operand::Const(Value::Int(i64::from((*op == Op::Eq) == same))));
                folded = true;
            }
        }
    }
    folded
}

/// Whether `x` and `y` are one object, where both lie on one walk: one a
/// kept `guard_at`'s result counted from the other, or both counted from
/// one base (`Function::walk_place`). Its guard holds wherever the value
/// is used, so the value is its base's address plus its distance: two
/// places are one object exactly when their distances are equal. A skip
/// (a loop done at once, `crate::skip`) checks that the cells it walks
/// to are distinct and that the links back come back; on a walk along a
/// row those comparisons fold (tutorial BF `digits`).
fn same_place(f: &Function, x: &Operand, y: &Operand) -> Option<bool> {
    let ((bx, dx), (by, dy)) = (f.walk_place(x)?, f.walk_place(y)?);
    // (A value that is its own base is no `guard_at`'s: two such places
    // are the same only where they are one value.)
    let counted = x.as_value() != Some(bx) || y.as_value() != Some(by);
    (counted && bx == by).then_some(dx == dy)
}

/// Drops the guards of `f` on a constant that holds.
fn drop_holding_guards(f: &mut Function) {
    let (layout, blocks, insts) = (&f.layout, &mut f.blocks, &f.insts);
    for &b in layout {
        blocks[b].insts.retain(|i| match &insts[*i].kind {
            InstKind::Guard { kind, .. } => !matches!(kind.operand(), Operand::Const(c) if kind.holds(c, None)),
            _ => true,
        });
    }
}

/// Makes the `guard_at`s of a walk leave by one exit: in each block,
/// every `guard_at` after the first one kept since the last instruction
/// other than an operation, a read or a guard (a `set`, a `new`, a call),
/// at the same place (the record's innermost function and the label),
/// leaves by a copy of the first one's record and its label. The
/// interpreter going on from there does again what the code did since:
/// reads, checks, operations, and what the record brings back of objects
/// and calls the trace removed — nothing the program could tell apart.
/// The place is the one a failing `guard_at` marks irregular
/// (`Jit::irregular`): a group never spans two. In the copy the first
/// link is the first guard's result, equal to it once that guard held, so
/// the link's word is still read by its own guards' records only (the
/// baseline tier fuses its checks: `baseline::fused_links`).
fn share_exits(f: &mut Function) {
    /// The first `guard_at` of a group: the instruction, its place, and
    /// the record the others leave by (made at the second).
    struct First {
        at: InstId,
        place: (Option<Symbol>, Symbol),
        shared: Option<ResumeId>,
    }
    for k in 0..f.layout.len() {
        let b = f.layout[k];
        let mut first: Option<First> = None;
        for n in 0..f.blocks[b].insts.len() {
            let i = f.blocks[b].insts[n];
            let (resume, label) = match &f.insts[i].kind {
                InstKind::Guard { kind: GuardKind::At(..), resume, label } => (*resume, *label),
                InstKind::Op { .. } | InstKind::Get { .. } | InstKind::Guard { .. } => continue,
                _ => {
                    first = None;
                    continue;
                }
            };
            let place = (f.resumes[resume].frames.last().and_then(|frame| frame.function), label);
            let Some(g) = first.as_mut().filter(|g| g.place == place) else {
                first = Some(First { at: i, place, shared: None });
                continue;
            };
            let shared = match g.shared {
                Some(r) => r,
                None => {
                    let InstKind::Guard { kind: GuardKind::At(link, ..), resume: r, .. } = &f.insts[g.at].kind else {
                        unreachable!("a group starts at a guard_at")
                    };
                    let mut record = f.resumes[*r].clone();
                    if let (Operand::Value(link), Some(result)) = (link, f.insts[g.at].result) {
                        record.replace(*link, result);
                    }
                    *g.shared.insert(f.resumes.alloc(record))
                }
            };
            if let InstKind::Guard { resume, label, .. } = &mut f.insts[i].kind {
                (*resume, *label) = (shared, g.place.1);
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

#[cfg(test)]
mod tests {
    use expect_test::{expect, Expect};
    use flowc_ir::{GuardKind, InstKind};

    fn check(text: &str, expected: Expect) {
        let mut m = flowc_ir::parse::module("trace", text).unwrap();
        let f = &mut m.functions[0];
        super::keep_paying(f, &[], &[]);
        expected.assert_eq(&flowc_ir::print::function(f));
    }

    /// A `guard_at` dropped in straight code leaves its link in its
    /// result's place, and a comparison of the link read again with that
    /// result (a walk `>><<>>` back over cells it had) compares the link
    /// with itself: 1 for `eq`, 0 for `ne`, and the guards of them go. A
    /// parameter compared with itself stays: it may be unbound, which the
    /// comparison raises.
    #[test]
    fn a_link_compared_with_itself_once_its_guard_at_goes_is_folded() {
        let text = "trace 't'(v0:tape, v1:p) {
b0:
    v2:r = get v0, r
    guard_link v2, cell, r0 else grow
    v3:r = guard_at v2, v0, 48, r0 else right
    v4:l = get.object v2, l
    v5 = eq.word v4, v0
    guard_true v5, r0 else left
    v6 = eq.word v2, v3
    guard_true v6, r0 else right
    v7 = ne.word v3, v2
    guard_false v7, r0 else right
    v8 = eq v1, v1
    guard_true v8, r0 else out
    exit r0 to out
resume r0 {
    frame [tape = v0, p = v1]
}
}
";
        check(
            text,
            expect![[r#"
            trace t(v0:tape, v1:p) {
            b0:
                v2:r = get v0, r
                guard_link v2, cell, r0 else grow
                v4:l = get.object v2, l
                v5 = eq.word v4, v0
                guard_true v5, r0 else left
                v6 = eq.word v2, v2
                v7 = ne.word v2, v2
                v8 = eq v1, v1
                guard_true v8, r0 else out
                exit r0 to out
            resume r0 {
                frame [tape = v0, p = v1]
            }
            }
        "#]],
        );
    }

    /// Places on one walk that kept `guard_at`s (here vouched for by a
    /// row) decide are compared by their distances: the cell two links on
    /// is not the walk's base, the cell reached back is the one left, and
    /// the guards of those comparisons go. A link no guard places is
    /// compared as before.
    #[test]
    fn places_on_one_walk_are_compared_by_their_distances() {
        let text = "trace 't'(v0:tape) {
b0:
    v1:r = get v0, r
    guard_link v1, cell, r0 else grow
    v2:r = guard_at v1, v0, 56, r0 else right
    v3:r = get.object v2, r
    guard_link v3, cell, r0 else grow
    v4:r = guard_at v3, v0, 112, r0 else right
    v5:l = get.object v4, l
    guard_link v5, cell, r0 else grow
    v6:l = guard_at v5, v0, 56, r0 else left
    v7 = eq.word v4, v0
    guard_false v7, r0 else out
    v8 = eq.word v6, v2
    guard_true v8, r0 else out
    v9 = ne.word v6, v4
    guard_true v9, r0 else out
    v10:r = get.object v4, r
    v11 = eq.word v10, v0
    guard_false v11, r0 else out
    exit r0 to out
resume r0 {
    frame [tape = v0]
}
}
";
        let mut m = flowc_ir::parse::module("trace", text).unwrap();
        let f = &mut m.functions[0];
        let mut vouched: Vec<_> = f
            .all_insts()
            .map(|(_, i)| i)
            .filter(|&i| matches!(f.insts[i].kind, InstKind::Guard { kind: GuardKind::At(..), .. }))
            .collect();
        vouched.sort();
        super::keep_paying(f, &vouched, &[]);
        expect![[r#"
            trace t(v0:tape) {
            b0:
                v1:r = get v0, r
                guard_link v1, cell, r0 else grow
                v2:r = guard_at v1, v0, 56, r0 else right
                v3:r = get.object v2, r
                guard_link v3, cell, r0 else grow
                v4:r = guard_at v3, v0, 112, r1 else right
                v5:l = get.object v4, l
                guard_link v5, cell, r0 else grow
                v6:l = guard_at v5, v0, 56, r0 else left
                v7 = eq.word v4, v0
                v8 = eq.word v6, v2
                v9 = ne.word v6, v4
                v10:r = get.object v4, r
                v11 = eq.word v10, v0
                guard_false v11, r0 else out
                exit r0 to out
            resume r0 {
                frame [tape = v0]
            }
            resume r1 {
                frame [tape = v0]
            }
            }
        "#]]
        .assert_eq(&flowc_ir::print::function(f));
    }
}

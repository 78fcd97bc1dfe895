//! Walks the heap's row vouches for: one `guard_row` in place of a
//! check per link (docs/architecture.md, "The heap's row").
//!
//! Once the heap has a row ([`flowc_lang::heap::rows`]) — objects of one
//! class laid out one after another and linked both ways, a BF
//! interpreter's tape — a walk along it need not read its links: that
//! the objects it visits lie in the row says where each link leads. In
//! each block, the `guard_at`s of one walk (counted from one base, each
//! link read from the object before it through the row's `next` or
//! `prev` field, [`RowShape::step`]) from the first until an instruction
//! that may write a link (a `set` of a link field, a call, a `new`) are
//! a *group*; a group of at least [`ROW_MIN`] gets
//! `guard_row base, lo, hi` right before its first `guard_at`, `lo` and
//! `hi` the nearest and farthest bytes from the base the group visits,
//! leaving by that `guard_at`'s record and label (the span holds the
//! base, at 0, as well). Code then takes what
//! each link of the group checks as known (`flowc_codegen::baseline`,
//! `row_covered`): a BF `>>>>>>>>>` is one range check, not nine loads
//! and comparisons.
//!
//! The first link of a group is read, and class-checked, before the
//! guard: its record, the interpreter's state with the link in hand, is
//! the one place before the walk a trace can leave by. Where the guard
//! fails the interpreter goes on from there and does the walk again,
//! reading each link (what the `guard_at`s of the group do when one of
//! them fails, [`super::rows`]' shared exits).

use flowc_ir::{Function, GuardKind, InstId, InstKind, Operand, RowSpan, ValueDef, ValueId};
use flowc_lang::Symbol;

/// The fewest links a group has for its guard to pay: the guard is a
/// load of the heap's address and two comparisons with its row's ends, a
/// link's check a load and a comparison.
pub const ROW_MIN: usize = 3;

/// The shape of one of the heap's rows, as the optimizer writes it into
/// guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowShape {
    pub class: Symbol,
    pub next: Symbol,
    pub prev: Symbol,
    pub stride: i64,
    /// Which of the heap's rows.
    pub row: u8,
}

impl RowShape {
    /// How many bytes a link read through `field` lies past its object.
    pub fn step(&self, field: Symbol) -> Option<i64> {
        if field == self.next {
            Some(self.stride)
        } else if field == self.prev {
            Some(-self.stride)
        } else {
            None
        }
    }
}

/// Adds the `guard_row`s of `f`'s walks along the rows of shapes
/// `shapes` (module docs): a link read from a `get.object` whose
/// `guard_link` says it is of a row's class, through one of that row's
/// links. The `guard_at`s of the groups that got a guard, which code
/// need not check (sorted).
pub fn guard_rows(f: &mut Function, shapes: &[RowShape]) -> Vec<InstId> {
    let mut vouched = Vec::new();
    if shapes.is_empty() {
        return vouched;
    }
    for k in 0..f.layout.len() {
        let b = f.layout[k];
        // The classes `guard_link`s said links were, since the last
        // instruction that may write a link (one read before it is not
        // what the row says after it).
        let mut classes: Vec<(ValueId, Symbol)> = Vec::new();
        // Per base and row: the group's `guard_at`s (the first first), and
        // its span.
        let mut open: Vec<(ValueId, usize, Vec<InstId>, i64, i64)> = Vec::new();
        let mut groups: Vec<(ValueId, usize, Vec<InstId>, i64, i64)> = Vec::new();
        for &i in &f.blocks[b].insts {
            match &f.insts[i].kind {
                kind if kind.may_write_link(|x| shapes.iter().any(|s| s.step(x).is_some())) => {
                    groups.append(&mut open);
                    classes.clear();
                }
                InstKind::Guard { kind: GuardKind::Link(Operand::Value(v), c), .. } => classes.push((*v, *c)),
                InstKind::Guard { kind: GuardKind::At(Operand::Value(link), Operand::Value(base), d), .. } => {
                    let ValueDef::Inst(g) = f.values[*link].def else { continue };
                    let InstKind::Get { obj, field, proven: true } = &f.insts[g].kind else { continue };
                    let Some(&(_, class)) = classes.iter().rev().find(|(v, _)| v == link) else { continue };
                    let Some((r, step)) = shapes
                        .iter()
                        .enumerate()
                        .find_map(|(r, s)| Some((r, s.step(*field).filter(|_| s.class == class)?)))
                    else {
                        continue;
                    };
                    let Some((x, dx)) = f.walk_place(obj) else { continue };
                    if x != *base || dx + step != *d || i32::try_from(*d).is_err() || i32::try_from(dx).is_err() {
                        continue;
                    }
                    match open.iter_mut().find(|g| g.0 == *base && g.1 == r) {
                        Some(g) => {
                            g.2.push(i);
                            g.3 = g.3.min(dx).min(*d);
                            g.4 = g.4.max(dx).max(*d);
                        }
                        // The span holds the base too: an object within
                        // the row is one of its objects, which an address
                        // computed from it need not be.
                        None => open.push((*base, r, vec![i], dx.min(*d).min(0), dx.max(*d).max(0))),
                    }
                }
                _ => {}
            }
        }
        groups.append(&mut open);
        for (base, r, ats, lo, hi) in groups {
            if ats.len() < ROW_MIN {
                continue;
            }
            let first = ats[0];
            vouched.extend(ats);
            let s = shapes[r];
            let InstKind::Guard { resume, label, .. } = f.insts[first].kind else { unreachable!("a guard_at") };
            let span = RowSpan { lo, hi, class: s.class, next: s.next, prev: s.prev, stride: s.stride, row: s.row };
            let kind = InstKind::Guard { kind: GuardKind::Row(Operand::Value(base), span), resume, label };
            let at = f.blocks[b].insts.iter().position(|&x| x == first).expect("in its block");
            let g = f.insts.alloc(flowc_ir::InstData { kind, result: None });
            if let Some(site) = f.sites.inst(first) {
                f.sites.set_inst(g, site);
            }
            f.blocks[b].insts.insert(at, g);
        }
    }
    vouched.sort_unstable();
    vouched
}

#[cfg(test)]
mod tests {
    use expect_test::{expect, Expect};
    use flowc_lang::Symbol;

    use super::RowShape;

    fn shape() -> RowShape {
        let s = Symbol::intern;
        RowShape { class: s("cell"), next: s("r"), prev: s("l"), stride: 56, row: 0 }
    }

    /// `guard_rows` on the first function of `text`, then the IR checker.
    fn check(text: &str, expected: Expect) {
        let mut m = flowc_ir::parse::module("trace", text).unwrap();
        let f = &mut m.functions[0];
        let vouched = super::guard_rows(f, &[shape()]);
        assert!(vouched.iter().all(|&i| matches!(f.insts[i].kind, flowc_ir::InstKind::Guard { .. })));
        if let Err(vs) = flowc_ir_checker::check(f) {
            panic!("{vs:?}\n{}", flowc_ir::print::function(f));
        }
        expected.assert_eq(&flowc_ir::print::function(f));
    }

    /// A BF `>>><` from the cell in `v0`: its three links out and one back
    /// are one group, whose guard comes after the first link's read and
    /// leaves by that link's `guard_at` record; its span holds the base
    /// and the farthest cell, three cells out.
    #[test]
    fn a_walk_along_the_row_is_checked_once() {
        check(
            "trace 't'(v0:tape) {
b0:
    v1:r = get.object v0, r
    guard_link v1, cell, r0 else grow
    v2:r = guard_at v1, v0, 56, r1 else right
    v3:r = get.object v2, r
    guard_link v3, cell, r0 else grow
    v4:r = guard_at v3, v0, 112, r1 else right
    v5:r = get.object v4, r
    guard_link v5, cell, r0 else grow
    v6:r = guard_at v5, v0, 168, r1 else right
    v7:l = get.object v6, l
    guard_link v7, cell, r0 else grow
    v8:l = guard_at v7, v0, 112, r1 else left
    exit r2 to out
resume r0 {
    frame [tape = v0]
}
resume r1 {
    frame [r = v1]
}
resume r2 {
    frame [tape = v8]
}
}
",
            expect![[r#"
                trace t(v0:tape) {
                b0:
                    v1:r = get.object v0, r
                    guard_link v1, cell, r0 else grow
                    guard_row v0, 0, 168, cell, r, l, 56, row 0, r1 else right
                    v2:r = guard_at v1, v0, 56, r1 else right
                    v3:r = get.object v2, r
                    guard_link v3, cell, r0 else grow
                    v4:r = guard_at v3, v0, 112, r1 else right
                    v5:r = get.object v4, r
                    guard_link v5, cell, r0 else grow
                    v6:r = guard_at v5, v0, 168, r1 else right
                    v7:l = get.object v6, l
                    guard_link v7, cell, r0 else grow
                    v8:l = guard_at v7, v0, 112, r1 else left
                    exit r2 to out
                resume r0 {
                    frame [tape = v0]
                }
                resume r1 {
                    frame [r = v1]
                }
                resume r2 {
                    frame [tape = v8]
                }
                }
            "#]],
        );
    }

    /// A write to a link ends a group (what the row vouched for before it
    /// may not hold after), a write to a value does not; a walk of two
    /// links, or one read through a field that is no link of the row,
    /// gets no guard.
    #[test]
    fn a_link_written_ends_a_group_and_short_walks_get_no_guard() {
        check(
            "trace 't'(v0:tape, v9:x) {
b0:
    v1:r = get.object v0, r
    guard_link v1, cell, r0 else grow
    v2:r = guard_at v1, v0, 56, r1 else right
    set.object v2, v, 7
    v3:r = get.object v2, r
    guard_link v3, cell, r0 else grow
    v4:r = guard_at v3, v0, 112, r1 else right
    set.object v4, l, v9
    v5:r = get.object v4, r
    guard_link v5, cell, r0 else grow
    v6:r = guard_at v5, v0, 168, r1 else right
    v7:u = get.object v6, u
    guard_link v7, cell, r0 else grow
    v8:u = guard_at v7, v0, 224, r1 else up
    exit r2 to out
resume r0 {
    frame [tape = v0]
}
resume r1 {
    frame [r = v1]
}
resume r2 {
    frame [tape = v8]
}
}
",
            expect![[r#"
                trace t(v0:tape, v9:x) {
                b0:
                    v1:r = get.object v0, r
                    guard_link v1, cell, r0 else grow
                    v2:r = guard_at v1, v0, 56, r1 else right
                    set.object v2, v, 7
                    v3:r = get.object v2, r
                    guard_link v3, cell, r0 else grow
                    v4:r = guard_at v3, v0, 112, r1 else right
                    set.object v4, l, v9
                    v5:r = get.object v4, r
                    guard_link v5, cell, r0 else grow
                    v6:r = guard_at v5, v0, 168, r1 else right
                    v7:u = get.object v6, u
                    guard_link v7, cell, r0 else grow
                    v8:u = guard_at v7, v0, 224, r1 else up
                    exit r2 to out
                resume r0 {
                    frame [tape = v0]
                }
                resume r1 {
                    frame [r = v1]
                }
                resume r2 {
                    frame [tape = v8]
                }
                }
            "#]],
        );
    }
}

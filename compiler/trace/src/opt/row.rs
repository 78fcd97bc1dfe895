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

/// The shape of the heap's row, as the optimizer writes it into guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowShape {
    pub class: Symbol,
    pub next: Symbol,
    pub prev: Symbol,
    pub stride: i64,
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

/// Adds the `guard_row`s of `f`'s walks along the row of shape `shape`
/// (module docs).
pub fn guard_rows(f: &mut Function, shape: RowShape) {
    // Where a value lies: the base of the `guard_at` that made it and its
    // distance, else itself.
    let place = |f: &Function, o: &Operand| -> Option<(ValueId, i64)> {
        let v = o.as_value()?;
        if let ValueDef::Inst(i) = f.values[v].def {
            if let InstKind::Guard { kind: GuardKind::At(_, Operand::Value(b), d), .. } = &f.insts[i].kind {
                return Some((*b, *d));
            }
        }
        Some((v, 0))
    };
    for k in 0..f.layout.len() {
        let b = f.layout[k];
        // Per base: the group's first `guard_at`, its span, and its size.
        let mut open: Vec<(ValueId, InstId, i64, i64, usize)> = Vec::new();
        let mut groups: Vec<(ValueId, InstId, i64, i64, usize)> = Vec::new();
        for &i in &f.blocks[b].insts {
            match &f.insts[i].kind {
                InstKind::Set { field, .. } if shape.step(*field).is_some() => groups.append(&mut open),
                InstKind::Call { .. } | InstKind::New(_) => groups.append(&mut open),
                InstKind::Guard { kind: GuardKind::At(Operand::Value(link), Operand::Value(base), d), .. } => {
                    let ValueDef::Inst(g) = f.values[*link].def else { continue };
                    let InstKind::Get { obj, field, proven: true } = &f.insts[g].kind else { continue };
                    let (Some(step), Some((x, dx))) = (shape.step(*field), place(f, obj)) else { continue };
                    if x != *base || dx + step != *d || i32::try_from(*d).is_err() || i32::try_from(dx).is_err() {
                        continue;
                    }
                    match open.iter_mut().find(|g| g.0 == *base) {
                        Some(g) => {
                            g.2 = g.2.min(dx).min(*d);
                            g.3 = g.3.max(dx).max(*d);
                            g.4 += 1;
                        }
                        // The span holds the base too: an object within
                        // the row is one of its objects, which an address
                        // computed from it need not be.
                        None => open.push((*base, i, dx.min(*d).min(0), dx.max(*d).max(0), 1)),
                    }
                }
                _ => {}
            }
        }
        groups.append(&mut open);
        for (base, first, lo, hi, n) in groups {
            if n < ROW_MIN {
                continue;
            }
            let InstKind::Guard { resume, label, .. } = f.insts[first].kind else { unreachable!("a guard_at") };
            let span = RowSpan { lo, hi, class: shape.class, next: shape.next, prev: shape.prev, stride: shape.stride };
            let kind = InstKind::Guard { kind: GuardKind::Row(Operand::Value(base), span), resume, label };
            let at = f.blocks[b].insts.iter().position(|&x| x == first).expect("in its block");
            let g = f.insts.alloc(flowc_ir::InstData { kind, result: None });
            if let Some(site) = f.sites.inst(first) {
                f.sites.set_inst(g, site);
            }
            f.blocks[b].insts.insert(at, g);
        }
    }
}

/// The bases `f`'s `guard_row`s vouch for walks from: their `guard_at`s
/// stay ([`super::rows::keep_paying`]), each costing code an addition.
pub fn bases(f: &Function) -> Vec<Operand> {
    f.all_insts()
        .filter_map(|(_, i)| match &f.insts[i].kind {
            InstKind::Guard { kind: GuardKind::Row(o, _), .. } => Some(o.clone()),
            _ => None,
        })
        .collect()
}

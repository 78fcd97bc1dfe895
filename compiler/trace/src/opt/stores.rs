//! Dead stores: a `set` whose value a later `set` of the same field of the
//! same object replaces before anything could see it is left out. An
//! interpreter's `++` (two increments of one tape cell) reads the cell
//! once, the walk forwards the first write to the second read, and only
//! the last write need reach the heap.
//!
//! What could see the first value, and so keeps it:
//! - a guard (failing, it resumes the interpreter with the heap as it is),
//!   a call, anything but an operation, a `get` of another field, or
//!   `new`, `check_bound` and `unbound`;
//! - a `get` of the same field of any object (it may be this one).
//!
//! The first `set` must not be able to fail where the second would not
//! (the error would name another place): its object is known to be one —
//! its class guarded, or a field of it read or written, or made by `new`,
//! earlier in the block — and the field is immutable in no class (setting
//! an immutable field twice fails).

use flowc_ir::{Function, GuardKind, InstId, InstKind, Module, Operand};
use flowc_lang::Symbol;
use rustc_hash::FxHashSet;

/// Leaves out the dead stores of `f`'s blocks; `hints` holds the
/// program's `immutable` declarations.
pub fn remove_dead(f: &mut Function, hints: &Module) {
    let mutable = |field: Symbol| !hints.immutable.iter().any(|(_, fields)| fields.contains(&field));
    for b in f.layout.clone() {
        // Objects known to be objects here (a set: a trace of thousands
        // of operations reads and writes thousands of cells), and the
        // stores not yet seen (cleared at every guard).
        let mut objects: FxHashSet<Operand> = FxHashSet::default();
        let mut pending: Vec<(Operand, Symbol, InstId)> = Vec::new();
        let mut dead: FxHashSet<InstId> = FxHashSet::default();
        for &i in &f.blocks[b].insts {
            match &f.insts[i].kind {
                InstKind::Set { obj, field, .. } => {
                    if let Some(k) = pending.iter().position(|(o, fl, _)| o == obj && fl == field) {
                        dead.insert(pending.swap_remove(k).2);
                    }
                    if objects.contains(obj) && mutable(*field) {
                        pending.push((obj.clone(), *field, i));
                    }
                    objects.insert(obj.clone());
                }
                InstKind::Get { obj, field, .. } => {
                    pending.retain(|(_, fl, _)| fl != field);
                    objects.insert(obj.clone());
                }
                // Whole programs only; reads the field, as a `get` does.
                InstKind::Walk { field, .. } => pending.retain(|(_, fl, _)| fl != field),
                InstKind::New(_) => objects.extend(f.insts[i].result.map(Operand::Value)),
                InstKind::Op { .. } | InstKind::CheckBound(_) | InstKind::Unbound(_) | InstKind::Iterations(_) => {}
                InstKind::Guard { kind, .. } => {
                    pending.clear();
                    if let GuardKind::Class(o, _) | GuardKind::Link(o, _) = kind {
                        objects.insert(o.clone());
                    }
                    if let GuardKind::At(..) = kind {
                        objects.extend(f.insts[i].result.map(Operand::Value));
                    }
                }
                InstKind::Phi(_) | InstKind::Call { .. } => pending.clear(),
            }
        }
        if !dead.is_empty() {
            f.blocks[b].insts.retain(|i| !dead.contains(i));
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{expect, Expect};

    fn check(text: &str, immutable: &[(&str, &str)], expected: Expect) {
        let mut m = flowc_ir::parse::module("test", text).unwrap();
        m.immutable = immutable.iter().map(|&(c, f)| (c.into(), vec![f.into()])).collect();
        let mut f = m.functions.pop().unwrap();
        super::remove_dead(&mut f, &m);
        expected.assert_eq(&flowc_ir::print::function(&f));
    }

    /// Two writes of one field of a guarded object with no guard between:
    /// the first goes. A read of the field (of any object), or a guard,
    /// between two writes keeps the first.
    #[test]
    fn a_write_replaced_before_anything_sees_it_is_left_out() {
        let text = "trace 't'(v0:c, v1:d) {
b0:
    guard_class v0, cell, r0 else out
    set v0, v, 1
    v2:x = add v1, 1
    set v0, v, v2
    set v0, v, 3
    v3:y = get v1, v
    set v0, v, 4
    guard_true v3, r0 else out
    set v0, v, 5
    exit r0 to out
resume r0 {
    frame [c = v0]
}
}
";
        check(
            text,
            &[],
            expect![[r#"
                trace t(v0:c, v1:d) {
                b0:
                    guard_class v0, cell, r0 else out
                    v2:x = add v1, 1
                    set v0, v, 3
                    v3:y = get v1, v
                    set v0, v, 4
                    guard_true v3, r0 else out
                    set v0, v, 5
                    exit r0 to out
                resume r0 {
                    frame [c = v0]
                }
                }
            "#]],
        );
    }

    /// A write that could fail stays: of a value not known to be an
    /// object, or of a field some class declares immutable.
    #[test]
    fn a_write_that_could_fail_stays() {
        let text = "trace 't'(v0:c) {
b0:
    set v0, v, 1
    set v0, v, 2
    set v0, w, 1
    set v0, w, 2
    exit r0 to out
resume r0 {
    frame [c = v0]
}
}
";
        check(
            text,
            &[("cell", "w")],
            expect![[r#"
                trace t(v0:c) {
                b0:
                    set v0, v, 1
                    set v0, v, 2
                    set v0, w, 1
                    set v0, w, 2
                    exit r0 to out
                resume r0 {
                    frame [c = v0]
                }
                }
            "#]],
        );
    }
}

//! Substitutions (`flowc_ir::subst`): chains, marks across words, cycles.

use flowc_ir::subst::*;
use flowc_ir::{Operand, ValueId};
use la_arena::{Idx, RawIdx};

fn v(i: u32) -> ValueId {
    Idx::from_raw(RawIdx::from_u32(i))
}

#[test]
fn chains_resolve_to_their_end_and_compress() {
    let mut s = Substitution::default();
    s.set(v(3), Operand::Value(v(2)));
    s.set(v(2), Operand::Value(v(1)));
    s.set(v(1), Operand::int(7));
    assert_eq!(s.resolve(&Operand::Value(v(3))), Operand::int(7));
    assert_eq!(s.resolve(&Operand::Value(v(0))), Operand::Value(v(0)));
    assert_eq!(s.resolve_compressing(&Operand::Value(v(3))), Operand::int(7));
    // Compressed: every value on the chain points at the end.
    assert_eq!(s.get(v(3)), Some(&Operand::int(7)));
    assert_eq!(s.get(v(2)), Some(&Operand::int(7)));
}

#[test]
fn marks_are_found_across_words() {
    let mut s = Substitution::default();
    for k in [0, 63, 64, 200] {
        s.set(v(k), Operand::int(k as i64));
    }
    for k in [0, 63, 64, 200] {
        assert_eq!(s.get(v(k)), Some(&Operand::int(k as i64)));
    }
    for k in [1, 62, 65, 199, 201, 10_000] {
        assert_eq!(s.get(v(k)), None);
    }
    s.set(v(64), Operand::int(-1));
    assert_eq!(s.get(v(64)), Some(&Operand::int(-1)));
}

#[test]
fn a_cycle_stops() {
    let mut s = Substitution::default();
    s.set(v(1), Operand::Value(v(2)));
    s.set(v(2), Operand::Value(v(1)));
    assert!(matches!(s.resolve(&Operand::Value(v(1))), Operand::Value(_)));
    assert!(matches!(s.resolve_compressing(&Operand::Value(v(1))), Operand::Value(_)));
}

//! The value lattice: widening, joins, transfer functions and the forms
//! an operation's proven operands allow (`flowc_passes::lattice`).

use flowc_lang::ops::range::{self, Interval};
use flowc_lang::ops::{Form, Op};
use flowc_lang::Value;
use flowc_passes::lattice::*;

#[test]
fn widening_takes_changes_then_constants_then_word_bounds_then_infinity() {
    let w = Widening::new([100]);
    let old = Info::int(Interval::new(0, 5));
    let new = Info::int(Interval::new(0, 6));
    assert_eq!(w.step(1, &old, new.clone()).range, Interval::new(0, 6));
    assert_eq!(w.step(3, &old, new.clone()).range, Interval::new(0, 99));
    assert_eq!(w.step(7, &old, new.clone()).range, Interval::new(0, range::WORD_MAX));
    assert_eq!(w.step(9, &old, new).range.hi(), range::POS_INF);
}

#[test]
fn join_keeps_what_both_sides_agree_on() {
    let a = Info::of_const(&Value::Int(2));
    let b = Info::of_const(&Value::Int(2));
    assert_eq!(a.join(&b), a);
    let c = Info::of_const(&Value::Int(5));
    let j = a.join(&c);
    assert_eq!(j.constant, None);
    assert_eq!(j.range, Interval::new(2, 5));
    assert_eq!(Info::bottom().join(&c), c);
}

#[test]
fn transfer_folds_and_ranges() {
    let two = Info::of_const(&Value::Int(2));
    assert_eq!(transfer(Op::Add, &[two.clone(), two.clone()]), Info::of_const(&Value::Int(4)));
    let small = Info::int(Interval::new(0, 9));
    assert_eq!(transfer(Op::Add, &[small.clone(), two.clone()]).range, Interval::new(2, 11));
    assert_eq!(transfer(Op::Lt, &[small.clone(), Info::of_const(&Value::Int(10))]), Info::of_const(&Value::Int(1)));
    assert!(transfer(Op::Add, &[Info::of_const(&Value::atom("a")), two]).is_bottom());
}

/// A constant list read at an index in a range is the join of the items
/// it may read: integers by their range (a constant where they are one
/// value), the same as the fold of every item's info for any mix of
/// kinds, nothing where the range misses the list.
#[test]
fn a_list_read_at_a_range_joins_the_items_it_may_read() {
    let fold = |items: &[Value]| items.iter().fold(Info::bottom(), |acc, v| acc.join(&Info::of_const(v)));
    let ints = |xs: &[i64]| xs.iter().map(|&x| Value::Int(x)).collect::<Vec<_>>();
    let cases = [
        ints(&[43, 91, 62, 45, 93, 46]),
        ints(&[7, 7, 7]),
        ints(&[-5]),
        ints(&[i64::MIN, 0, i64::MAX]),
        vec![Value::Int(1), Value::atom("a"), Value::Int(3)],
        vec![Value::list(ints(&[1, 2])), Value::list(ints(&[3]))],
    ];
    for items in &cases {
        let list = Info::of_const(&Value::list(items.clone()));
        let anywhere = Info::of_kinds(Kinds::INT);
        assert_eq!(transfer(Op::ReadList, &[list.clone(), anywhere]), fold(items), "{items:?}");
        let tail = Info::int(Interval::new(1, 1_000));
        assert_eq!(transfer(Op::ReadList, &[list, tail]), fold(&items[1..]), "{items:?} from 1");
    }
    let program = Info::of_const(&Value::list(ints(&[43, 91, 62, 45])));
    let read = transfer(Op::ReadList, &[program.clone(), Info::of_kinds(Kinds::INT)]);
    assert_eq!((read.kinds, read.range, read.constant), (Kinds::INT, Interval::new(43, 91), None));
    let one = transfer(Op::ReadList, &[Info::of_const(&Value::list(ints(&[7, 7]))), Info::of_kinds(Kinds::INT)]);
    assert_eq!(one, Info::of_const(&Value::Int(7)));
    assert!(transfer(Op::ReadList, &[program, Info::int(Interval::new(10, 20))]).is_bottom());
}

#[test]
fn forms_follow_proofs() {
    let small = Info::int(Interval::new(0, 9));
    let any_int = Info::of_kinds(Kinds::INT);
    assert_eq!(best_form(Op::Add, &[small.clone(), small.clone()]), Form::Word);
    assert_eq!(best_form(Op::Add, &[any_int.clone(), small.clone()]), Form::Int);
    assert_eq!(best_form(Op::Add, &[Info::value(), small.clone()]), Form::Generic);
    let list = Info::of_const(&Value::list(vec![Value::Int(1); 10]));
    assert_eq!(best_form(Op::ReadList, &[list.clone(), small]), Form::Word);
    assert_eq!(best_form(Op::ReadList, &[list, any_int]), Form::Int);
}

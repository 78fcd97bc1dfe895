//! Pass `def-use`: the listing of a small loop, and the table's API.

use crate::support;

use expect_test::expect;
use flowc_passes::defuse::{Def, DefUse, Use};

/// The listing of Part 1's power loop after normalize (whose IR the test
/// `loop_exit_to_a_join_gets_its_critical_edge_split` of normalize.rs
/// shows): the listing alone, after the IR.
#[test]
fn listing_of_a_small_loop() {
    let dump = support::dump_with(support::POWER, &["normalize", "def-use"]);
    let listing = &dump[dump.find("; def-use").expect("a listing")..];
    expect![[r#"
        ; def-use of main power
        ;   v0 (param 0): branch (b0), v5 (b1 phi from b3)
        ;   v1 (param 1): v4 (b1)
        ;   v2 (b1 phi): v4 (b1)
        ;   v4 (b1): v2 (b1 phi from b5), v7 (b2 phi from b6)
        ;   v5 (b1 phi): v6 (b1)
        ;   v6 (b1): v5 (b1 phi from b5), branch (b1)
        ;   v7 (b2 phi): print (b2)
    "#]]
    .assert_eq(listing);
}

#[test]
fn listing_names_stores_and_unused_values() {
    let src = r#"entry start(n = 2)
start:
    p = new point
    p.x = n
    q = n + 1
    print_and_stop(n)
"#;
    expect![[r#"
        main start(v0:n) {
        b0 start:
            v1:p = new point
            set v1, x, v0
            v2:q = add v0, 1
            print v0
        }
        ; def-use of main start
        ;   v0 (param 0): set (b0), v2 (b0), print (b0)
        ;   v1 (b0): set (b0)
        ;   v2 (b0): unused
    "#]]
    .assert_eq(&support::dump_with(src, &["normalize", "def-use"]));
}

#[test]
fn the_table_answers_definitions_and_uses_in_program_order() {
    let run = support::run_with(support::POWER, &["normalize", "def-use"]);
    let f = &run.module.functions[0];
    let du = run.cx.functions[0].defuse.as_ref().expect("def-use stored in the context");
    let v = |k: u32| -> flowc_ir::ValueId { la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(k)) };
    let b = |k: u32| -> flowc_ir::BlockId { la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(k)) };
    assert_eq!(du.num_values(), f.values.len());
    assert_eq!(du.def_of(v(0)), Def::Param(0));
    assert!(matches!(du.def_of(v(4)), Def::Inst { block, .. } if block == b(1)));
    // v3 was allocated by the front end and never linked.
    assert_eq!(du.def_of(v(3)), Def::None);
    assert!(!du.is_used(v(3)));
    let preds: Vec<_> = du
        .uses_of(v(4))
        .iter()
        .map(|u| match u {
            Use::Phi { pred, .. } => *pred,
            other => panic!("unexpected use {other:?}"),
        })
        .collect();
    assert_eq!(preds, [b(5), b(6)]);
    assert_eq!(du.num_uses(v(6)), 2);
    assert_eq!(du.uses_of(v(6))[1], Use::Term { block: b(1) });
    // The stored table is the one `compute` gives.
    let fresh = DefUse::compute(f);
    for k in 0..f.values.len() as u32 {
        assert_eq!(fresh.def_of(v(k)), du.def_of(v(k)));
        assert_eq!(fresh.uses_of(v(k)), du.uses_of(v(k)));
    }
}

/// The table of definitions only gives every value the definition the
/// full table does (the dead-code pass uses it on traces with nothing to
/// allocate).
#[test]
fn the_definitions_alone_are_the_full_tables() {
    let run = support::run_with(support::POWER, &["normalize", "def-use"]);
    let f = &run.module.functions[0];
    let v = |k: u32| -> flowc_ir::ValueId { la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(k)) };
    let (full, definitions) = (DefUse::compute(f), DefUse::definitions(f));
    assert_eq!(definitions.num_values(), f.values.len());
    for k in 0..f.values.len() as u32 {
        assert_eq!(definitions.def_of(v(k)), full.def_of(v(k)));
    }
}

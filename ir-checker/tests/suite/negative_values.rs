//! Checker negatives for the value rules: one valid module, one mutation,
//! the exact message. Rules covered: `single-def` (a), `use-dominated` and
//! `undefined-value` (b), `distinct-params` (h), `resume-available` (i).
//! Mutations the parser cannot express (it enforces one definition per value
//! number and results where the kind wants them) change the parsed
//! `Function` directly.

use crate::common;

use crate::common::{check_edit, check_mutation, set_def, set_result, value, BRIDGE, FIB, OBJECTS, POWER, TRACE};
use expect_test::expect;
use flowc_ir::ValueDef;

// (a) single-def

#[test]
fn single_def_missing_result() {
    // `v4:res = mul v2, v1` loses its result.
    check_mutation(
        POWER,
        0,
        |f| set_result(f, 2, None),
        expect![[r#"
        function power, block b1, instruction `v2:res = phi [b0: 1, b1: v4]`: [undefined-value] v4 is used here but no parameter or linked instruction defines it
        function power, block b1, instruction `mul v2, v1`: [single-def] this instruction defines a value but has no result
        function power, block b1, instruction `mul v2, v1`: [single-def] v4 is recorded as the result of this instruction, which defines no value
        function power, block b2, instruction `v6:res = phi [b0: 1, b1: v4]`: [undefined-value] v4 is used here but no parameter or linked instruction defines it
    "#]],
    );
}

#[test]
fn single_def_result_on_set() {
    // `set v1, x, 1` gets a (fresh) result.
    check_mutation(
        OBJECTS,
        0,
        |f| {
            let v = f.values.alloc(flowc_ir::ValueData { def: ValueDef::Detached, name: None });
            set_result(f, 1, Some(v));
        },
        expect![[r#"
            function objects, block b0, instruction `v14 = set v1, x, 1`: [single-def] this instruction defines no value but has the result v14
            function objects, block b0, instruction `v14 = set v1, x, 1`: [single-def] v14 is the result of this instruction but is recorded as detached
        "#]],
    );
}

#[test]
fn single_def_record_detached() {
    check_mutation(
        POWER,
        0,
        |f| set_def(f, 5, ValueDef::Detached),
        expect![[r#"
        function power, block b1, instruction `v5:y = sub v3, 1`: [single-def] v5 is the result of this instruction but is recorded as detached
    "#]],
    );
}

#[test]
fn single_def_two_instructions() {
    // `v6:res = phi ...` in b2 is changed to define v4 too.
    check_mutation(
        POWER,
        0,
        |f| {
            let v4 = value(f, 4);
            set_result(f, 4, Some(v4));
            set_def(f, 6, ValueDef::Detached);
        },
        expect![[r#"
            function power, block b2, instruction `v4:res = phi [b0: 1, b1: v4]`: [single-def] v4 is already defined in b1
            function power, block b2, terminator `print v6`: [undefined-value] v6 is used here but no parameter or linked instruction defines it
        "#]],
    );
}

#[test]
fn single_def_param_and_result() {
    // `v2:res = phi ...` is changed to define parameter v0.
    check_mutation(
        POWER,
        0,
        |f| set_result(f, 0, Some(value(f, 0))),
        expect![[r#"
        function power, block b1, instruction `v0:y = phi [b0: 1, b1: v4]`: [single-def] v0 is already defined as parameter 0
        function power, block b1, instruction `v0:y = phi [b0: 1, b1: v4]`: [single-def] v2 is recorded as the result of this instruction, which defines v0
        function power, block b1, instruction `v4:res = mul v2, v1`: [undefined-value] v2 is used here but no parameter or linked instruction defines it
    "#]],
    );
}

#[test]
fn single_def_param_record() {
    check_mutation(
        FIB,
        1,
        |f| set_def(f, 0, ValueDef::Param(1)),
        expect![[r#"
        function fib, parameter 0: [single-def] v0 is parameter 0 but is recorded as parameter 1
        function fib: [single-def] v0 is recorded as parameter 1 but there is no parameter 1
    "#]],
    );
}

#[test]
fn single_def_false_param_record() {
    // v3 claims to be parameter 1 (which is v1).
    check_mutation(
        POWER,
        0,
        |f| set_def(f, 3, ValueDef::Param(1)),
        expect![[r#"
        function power: [single-def] v3 is recorded as parameter 1 but parameter 1 is v1
        function power, block b1, instruction `v3:y = phi [b0: v0, b1: v5]`: [single-def] v3 is the result of this instruction but is recorded as parameter 1
    "#]],
    );
}

// (b) use-dominated, undefined-value

#[test]
fn use_not_dominated_across_blocks() {
    check_edit(
        POWER,
        "print v6",
        "print v4",
        expect![[r#"
        function power, block b2, terminator `print v4`: [use-dominated] v4 is used here but its definition in b1 does not dominate b2
    "#]],
    );
}

#[test]
fn use_before_definition_in_block() {
    check_edit(
        FIB,
        "v2 = sub v0, 1",
        "v2 = sub v4, 1",
        expect![[r#"
        function fib, block b2, instruction `v2 = sub v4, 1`: [use-dominated] v4 is used here but is defined later in b2
    "#]],
    );
}

#[test]
fn use_of_own_result() {
    check_edit(
        FIB,
        "v6 = add v3, v5",
        "v6 = add v3, v6",
        expect![[r#"
        function fib, block b2, instruction `v6 = add v3, v6`: [use-dominated] v6 is used here but is defined later in b2
    "#]],
    );
}

#[test]
fn phi_input_not_available_at_end_of_predecessor() {
    // v8 is defined in b2, which does not dominate b0.
    check_edit(
        OBJECTS,
        "v5:s = phi [b0: 0,",
        "v5:s = phi [b0: v8,",
        expect![[r#"
        function objects, block b1, instruction `v5:s = phi [b0: v8, b2: v8]`: [use-dominated] v8 is the input for b0 but its definition in b2 does not dominate b0
    "#]],
    );
}

#[test]
fn use_of_undefined_value() {
    check_edit(
        FIB,
        "return v6",
        "return v20",
        expect![[r#"
        function fib, block b2, terminator `return v20`: [undefined-value] v20 is used here but no parameter or linked instruction defines it
    "#]],
    );
}

#[test]
fn use_of_unlinked_instruction_result() {
    // `v1 = lt v0, 2` is unlinked (deleted) but still used by the branch.
    check_mutation(
        FIB,
        1,
        |f| f.blocks[f.entry].insts.clear(),
        expect![[r#"
        function fib, block b0, terminator `branch v1, b1, b2`: [undefined-value] v1 is used here but no parameter or linked instruction defines it
    "#]],
    );
}

#[test]
fn unreachable_uses_need_no_dominance_but_must_be_defined() {
    // b3 is unreachable: using v6 (defined in b2, which does not dominate
    // b3) is fine there, using an undefined value is not.
    let dead = r#"    return v6
b3 dead:
    v7 = add v6, 1
    return v7
}"#;
    let text = common::edit(FIB, "    return v6\n}", dead);
    check_edit(
        &text,
        "return v7",
        "return v20",
        expect![[r#"
        function fib, block b3, terminator `return v20`: [undefined-value] v20 is used here but no parameter or linked instruction defines it
    "#]],
    );
}

// (h) distinct-params

#[test]
fn duplicate_parameter() {
    check_mutation(
        POWER,
        0,
        |f| {
            let v0 = f.params[0];
            f.params[1] = v0;
            set_def(f, 1, ValueDef::Detached);
        },
        expect![[r#"
            function power, parameter 1: [distinct-params] v0 is also parameter 0
            function power, block b1, instruction `v4:res = mul v2, v1`: [undefined-value] v1 is used here but no parameter or linked instruction defines it
        "#]],
    );
}

// (i) resume-available

#[test]
fn resume_refers_to_later_value() {
    check_edit(
        TRACE,
        "frame [i = v2, acc = v3]\n}",
        "frame [i = v7, acc = v3]\n}",
        expect![[r#"
        function loop, block b1, instruction `guard_true v4, r0 else l0`: [resume-available] r0 refers to v7, which is defined after this guard in b1
    "#]],
    );
}

#[test]
fn resume_refers_to_undefined_value() {
    check_edit(
        TRACE,
        "virtual @0 point [x = v2,",
        "virtual @0 point [x = v30,",
        expect![[r#"
        function loop, block b1, instruction `guard_class v3, counter, r1 else l1`: [resume-available] r1 refers to v30, which no parameter or linked instruction defines
        function loop, block b1, instruction `guard_value v7, 7, r1 else l1`: [resume-available] r1 refers to v30, which no parameter or linked instruction defines
    "#]],
    );
}

#[test]
fn exit_record_refers_to_undefined_value() {
    check_edit(
        BRIDGE,
        "resume r1 {\n    frame [i = v2,",
        "resume r1 {\n    frame [i = v9,",
        expect![[r#"
        function bridge, block b0, terminator `exit r1 to loop`: [resume-available] r1 refers to v9, which no parameter or linked instruction defines
    "#]],
    );
}

#[test]
fn resume_refers_to_non_dominating_value() {
    // A guard in the entry block whose record names a value of the loop.
    check_edit(
        TRACE,
        "b0 loop_entry:\n",
        "b0 loop_entry:\n    guard_true v0, r0 else l0\n",
        expect![[r#"
        function loop, block b0, instruction `guard_true v0, r0 else l0`: [resume-available] r0 refers to v2 but its definition in b1 does not dominate b0
        function loop, block b0, instruction `guard_true v0, r0 else l0`: [resume-available] r0 refers to v3 but its definition in b1 does not dominate b0
    "#]],
    );
}

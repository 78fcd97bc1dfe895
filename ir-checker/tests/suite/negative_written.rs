//! IR written wrong is read as written and judged by the checker: the text
//! format repairs nothing (issue 15). Rules covered: `phis-first` for a phi
//! written late, `dangling-ref` for a resume record the text never defines,
//! `resume-shape`, and `op-form` for every way an operation can break its
//! form.

use crate::common::{check_edit, parse, render, BRIDGE, POWER, TRACE};
use expect_test::expect;

#[test]
fn a_phi_written_after_an_instruction_stays_there() {
    let text = POWER.replace(
        "    v4:res = mul v2, v1\n    v5:y = sub v3, 1\n",
        "    v4:res = mul v2, v1\n    v5:y = phi [b0: v0, b1: v4]\n",
    );
    let m = parse(&text);
    // Printing is the identity: the phi is where the text put it.
    assert_eq!(flowc_ir::print::module(&m), text);
    expect![[r#"
        function power, block b1, instruction `v5:y = phi [b0: v0, b1: v4]`: [phis-first] this phi is listed among the instructions, not the phis
    "#]]
    .assert_eq(&render(&m));
}

#[test]
fn a_guard_naming_a_record_one_past_the_last() {
    check_edit(
        BRIDGE,
        "guard_true v3, r0 else out",
        "guard_true v3, r2 else out",
        expect![[r#"
            function bridge, block b0, instruction `guard_true v3, r2 else out`: [dangling-ref] r2 does not exist
        "#]],
    );
}

#[test]
fn a_record_defined_twice_is_a_parse_error() {
    let text = BRIDGE.replace("resume r1 {", "resume r0 {");
    let err = flowc_ir::parse::module("t.ir", &text).unwrap_err().to_string();
    assert!(err.contains("r0 is defined twice"), "{err}");
}

#[test]
fn a_record_the_text_skips_is_empty_and_rejected_when_used() {
    check_edit(
        BRIDGE,
        "resume r1 {",
        "resume r2 {",
        expect![[r#"
            function bridge, block b0, terminator `exit r1 to loop`: [resume-shape] r1 has no frames: there is nothing to resume
        "#]],
    );
}

#[test]
fn resume_frames_and_pending_calls() {
    check_edit(
        TRACE,
        "frame [i = v2, acc = v3] call r then loop",
        "frame [i = v2, acc = v3]",
        expect![[r#"
            function loop, block b1, instruction `guard_class v3, counter, r1 else l1`: [resume-shape] frame 0 of r1 has no pending call, but an inner frame follows
            function loop, block b1, instruction `guard_value v7, 7, r1 else l1`: [resume-shape] frame 0 of r1 has no pending call, but an inner frame follows
        "#]],
    );
    check_edit(
        BRIDGE,
        "frame [i = v2, acc = v1]\n}\nresume r1",
        "frame [i = v2, acc = v1] call x then l\n}\nresume r1",
        expect![[r#"
            function bridge, block b0, instruction `guard_true v3, r0 else out`: [resume-shape] the innermost frame of r0 has a pending call, but no frame for the callee follows
        "#]],
    );
}

#[test]
fn an_int_form_with_an_atom_operand() {
    check_edit(
        POWER,
        "v5:y = sub v3, 1",
        "v5:small = sub.int :foo, 2",
        expect![[r#"
            function power, block b1, instruction `v5:small = sub.int :foo, 2`: [op-form] operand 1 of `sub.int` is the constant foo, which the form does not admit (.int needs integers)
        "#]],
    );
}

#[test]
fn forms_an_operation_does_not_have() {
    check_edit(
        POWER,
        "v5:y = sub v3, 1",
        "v5:y = eq.int v3, 1",
        expect![[r#"
            function power, block b1, instruction `v5:y = eq.int v3, 1`: [op-form] `eq` has no `.int` form
        "#]],
    );
    check_edit(
        POWER,
        "v5:y = sub v3, 1",
        "v5:y = missing_op frob(v3)\n    v7 = missing_op sub(v3, 1)",
        expect![[r#"
            function power, block b1, instruction `v7 = missing_op sub(v3, 1)`: [op-form] missing_op sub with 2 operand(s) is the operation `sub`, which exists
        "#]],
    );
}

#[test]
fn word_forms_that_could_fail_or_overflow() {
    check_edit(
        POWER,
        "v5:y = sub v3, 1",
        "v5:y = sub.word v3, 9223372036854775807",
        expect![[r#"
            function power, block b1, instruction `v5:y = sub.word v3, 9223372036854775807`: [op-form] operand 2 of `sub.word` is the constant 9223372036854775807, which the form does not admit (.word needs integers, as machine words)
        "#]],
    );
    check_edit(
        POWER,
        "v5:y = sub v3, 1",
        r#"v5:y = sub v3, 1
    v7 = div.word 7, 0
    v8 = readlist.word [1, 2], 2
    v9 = readlist.int [1, 2], 2"#,
        expect![[r#"
            function power, block b1, instruction `v7 = div.word 7, 0`: [op-form] `div.word` of these constants fails or overflows, which the form promises it cannot
            function power, block b1, instruction `v8 = readlist.word [1, 2], 2`: [op-form] `readlist.word` of these constants fails or overflows, which the form promises it cannot
        "#]],
    );
}

/// An optimized trace keeps few of its values and records: a short text
/// may name big numbers, and must parse back (the kill-rate run found a
/// printed trace the parser refused as "number too large").
#[test]
fn sparse_numbers_in_a_short_text_parse_back() {
    let text = r#"trace t(v0:x) {
b0:
    v967 = add v0, 1
    exit r162 to out
resume r162 {
    frame [x = v967]
}
}
"#;
    let m = parse(text);
    assert_eq!(flowc_ir::print::module(&m), text);
    assert_eq!(render(&m), "ok");
    // Numbers far beyond any text's size are still refused, not allocated.
    let err = flowc_ir::parse::module("t.ir", &text.replace("v967", "v4000000000")).unwrap_err().to_string();
    assert!(err.contains("number too large for this text"), "{err}");
}

#[test]
fn an_object_proof_of_a_constant() {
    // A value's proof is the optimizer's to give (`get.object v1, f` is
    // accepted as written); a constant is never an object.
    check_edit(
        POWER,
        "v5:y = sub v3, 1",
        r#"v5:y = sub v3, 1
    v7 = get.object v3, f
    v8 = get.object 7, f
    set.object :box, f, v7"#,
        expect![[r#"
            function power, block b1, instruction `v8 = get.object 7, f`: [op-form] `get.object` of the constant 7, which is not an object
            function power, block b1, instruction `set.object :box, f, v7`: [op-form] `set.object` of the constant box, which is not an object
        "#]],
    );
}

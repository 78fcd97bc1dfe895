//! Checker negatives for the structural and cross-function rules: one valid
//! module, one mutation, the exact message. Rules covered: `phis-first` (c),
//! `phi-inputs` (d), `linked-once` (e), `dangling-ref` (f), `entry-block`
//! (g), `guard-in-trace` (i), `call-target`, `call-arity`,
//! `unique-function`. Ids outside their arenas are made by allocating in a
//! copy of the arena (see `common`), since the parser never produces them.

use crate::common;

use crate::common::{
    block, block_outside, check_edit, check_mutation, inst_outside, nth_inst, resume_outside, value_outside, BRIDGE,
    FIB, OBJECTS, POWER, TRACE,
};
use expect_test::expect;
use flowc_ir::{InstKind, Operand, Terminator};

// (c) phis-first

#[test]
fn phi_among_instructions() {
    check_mutation(
        POWER,
        0,
        |f| {
            let b = block(f, 1);
            let phi = f.blocks[b].phis.remove(1);
            f.blocks[b].insts.push(phi);
        },
        expect![[r#"
            function power, block b1, instruction `v5:y = sub v3, 1`: [use-dominated] v3 is used here but is defined later in b1
            function power, block b1, instruction `v3:y = phi [b0: v0, b1: v5]`: [phis-first] this phi is listed among the instructions, not the phis
        "#]],
    );
}

#[test]
fn instruction_among_phis() {
    check_mutation(
        POWER,
        0,
        |f| {
            let b = block(f, 1);
            let inst = f.blocks[b].insts.remove(0);
            f.blocks[b].phis.insert(0, inst);
        },
        expect![[r#"
            function power, block b1, instruction `v4:res = mul v2, v1`: [phis-first] this instruction is not a phi but is listed among the phis
            function power, block b1, instruction `v4:res = mul v2, v1`: [use-dominated] v2 is used here but is defined later in b1
        "#]],
    );
}

// (d) phi-inputs

#[test]
fn phi_missing_input() {
    check_edit(
        POWER,
        "v6:res = phi [b0: 1, b1: v4]",
        "v6:res = phi [b1: v4]",
        expect![[r#"
        function power, block b2, instruction `v6:res = phi [b1: v4]`: [phi-inputs] no input for predecessor b0
    "#]],
    );
}

#[test]
fn phi_input_from_non_predecessor() {
    check_edit(
        OBJECTS,
        "v4:i = phi [b0: 0, b2: v7]",
        "v4:i = phi [b0: 0, b2: v7, b3: 5]",
        expect![[r#"
        function objects, block b1, instruction `v4:i = phi [b0: 0, b2: v7, b3: 5]`: [phi-inputs] input for b3, which is not a predecessor of b1
    "#]],
    );
}

#[test]
fn phi_duplicate_input() {
    check_edit(
        POWER,
        "v3:y = phi [b0: v0, b1: v5]",
        "v3:y = phi [b0: v0, b1: v5, b0: 2]",
        expect![[r#"
        function power, block b1, instruction `v3:y = phi [b0: v0, b1: v5, b0: 2]`: [phi-inputs] more than one input for b0
    "#]],
    );
}

// (e) linked-once

#[test]
fn instruction_linked_in_two_blocks() {
    check_mutation(
        FIB,
        1,
        |f| {
            let (b1, lt) = (block(f, 1), nth_inst(f, 0));
            f.blocks[b1].insts.push(lt);
        },
        expect![[r#"
            function fib, block b1, instruction `v1 = lt v0, 2`: [linked-once] this instruction is already linked in b0
        "#]],
    );
}

#[test]
fn instruction_linked_twice_in_one_block() {
    check_mutation(
        FIB,
        1,
        |f| {
            let (b2, sub) = (block(f, 2), nth_inst(f, 1));
            f.blocks[b2].insts.push(sub);
        },
        expect![[r#"
            function fib, block b2, instruction `v2 = sub v0, 1`: [linked-once] this instruction is linked twice in b2
        "#]],
    );
}

#[test]
fn block_twice_in_layout() {
    check_mutation(
        FIB,
        1,
        |f| f.layout.push(block(f, 1)),
        expect![[r#"
        function fib, block b1: [linked-once] b1 appears more than once in the layout
    "#]],
    );
}

// (f) dangling-ref

#[test]
fn jump_to_block_not_in_layout() {
    check_edit(
        FIB,
        "branch v1, b1, b2",
        "branch v1, b1, b9",
        expect![[r#"
        function fib, block b0, terminator `branch v1, b1, b9`: [dangling-ref] b9 is not in the layout
    "#]],
    );
}

#[test]
fn phi_input_block_not_in_layout() {
    check_edit(
        POWER,
        "v2:res = phi [b0: 1,",
        "v2:res = phi [b0: 1, b7: 3,",
        expect![[r#"
        function power, block b1, instruction `v2:res = phi [b0: 1, b7: 3, b1: v4]`: [dangling-ref] input block b7 is not in the layout
    "#]],
    );
}

#[test]
fn virtual_object_missing() {
    check_edit(
        TRACE,
        "p = @0",
        "p = @1",
        expect![[r#"
        function loop, block b1, instruction `guard_class v3, counter, r1 else l1`: [dangling-ref] r1 refers to @1, which does not exist
        function loop, block b1, instruction `guard_value v7, 7, r1 else l1`: [dangling-ref] r1 refers to @1, which does not exist
    "#]],
    );
}

#[test]
fn ids_outside_their_arenas() {
    check_mutation(
        TRACE,
        0,
        |f| {
            let (v, b, i, r) = (value_outside(f), block_outside(f), inst_outside(f), resume_outside(f));
            let (loop_block, lt, guard) = (block(f, 1), nth_inst(f, 2), nth_inst(f, 3));
            if let InstKind::Op { args, .. } = &mut f.insts[lt].kind {
                args[0] = Operand::Value(v);
            }
            if let InstKind::Guard { resume, .. } = &mut f.insts[guard].kind {
                *resume = r;
            }
            f.blocks[loop_block].insts.push(i);
            f.blocks[loop_block].term =
                Terminator::Branch { cond: Operand::int(1), then_block: loop_block, else_block: b };
            f.layout.push(b);
            f.params.push(v);
        },
        expect![[r#"
            function loop: [dangling-ref] the layout lists b2, which does not exist
            function loop, parameter 2: [dangling-ref] v8 does not exist
            function loop, block b1, instruction `v4 = lt v8, 100`: [dangling-ref] v8 does not exist
            function loop, block b1, instruction `guard_true v4, r2 else l0`: [dangling-ref] r2 does not exist
            function loop, block b1: [dangling-ref] the block lists instruction #10, which does not exist
            function loop, block b1, terminator `branch 1, b1, b2`: [dangling-ref] b2 does not exist
        "#]],
    );
}

#[test]
fn result_outside_arena() {
    check_mutation(
        FIB,
        1,
        |f| {
            let v = value_outside(f);
            common::set_result(f, 0, Some(v));
        },
        expect![[r#"
            function fib, block b0, instruction `v7 = lt v0, 2`: [dangling-ref] the result v7 does not exist
            function fib, block b0, instruction `v7 = lt v0, 2`: [single-def] v1 is recorded as the result of this instruction, which defines v7
            function fib, block b0, terminator `branch v1, b1, b2`: [undefined-value] v1 is used here but no parameter or linked instruction defines it
        "#]],
    );
}

#[test]
fn entry_outside_arena() {
    check_mutation(
        POWER,
        0,
        |f| f.entry = block_outside(f),
        expect![[r#"
        function power: [dangling-ref] the entry b3 does not exist
    "#]],
    );
}

// (g) entry-block

#[test]
fn entry_with_predecessor() {
    check_edit(
        FIB,
        "    return v0\n",
        "    jump b0\n",
        expect![[r#"
        function fib, block b0: [entry-block] the entry b0 has predecessors: b1
    "#]],
    );
}

#[test]
fn entry_not_first() {
    check_mutation(
        POWER,
        0,
        |f| f.layout.swap(0, 2),
        expect![[r#"
        function power, block b0: [entry-block] the entry b0 is not first in the layout (b2 is)
    "#]],
    );
}

#[test]
fn entry_not_in_layout() {
    check_mutation(
        POWER,
        0,
        |f| {
            let term = Terminator::Trap(flowc_ir::Trap::ReturnOutsideFunction);
            f.entry = f.blocks.alloc(flowc_ir::BlockData {
                name: None,
                phis: Default::default(),
                insts: Default::default(),
                term,
            });
        },
        expect![[r#"
            function power: [entry-block] the entry b3 is not in the layout
        "#]],
    );
}

// (i) guard-in-trace

#[test]
fn guard_outside_trace() {
    check_edit(
        TRACE,
        "trace loop(",
        "function loop(",
        expect![[r#"
        function loop, block b1, instruction `guard_true v4, r0 else l0`: [guard-in-trace] guards are only allowed in traces, not in a function
        function loop, block b1, instruction `guard_class v3, counter, r1 else l1`: [guard-in-trace] guards are only allowed in traces, not in a function
        function loop, block b1, instruction `guard_value v7, 7, r1 else l1`: [guard-in-trace] guards are only allowed in traces, not in a function
    "#]],
    );
}

#[test]
fn exit_outside_trace() {
    check_edit(
        BRIDGE,
        "trace bridge(",
        "function bridge(",
        expect![[r#"
        function bridge, block b0, instruction `guard_true v3, r0 else out`: [guard-in-trace] guards are only allowed in traces, not in a function
        function bridge, block b0, terminator `exit r1 to loop`: [guard-in-trace] trace exits are only allowed in traces, not in a function
    "#]],
    );
}

// Cross-function rules

#[test]
fn call_of_unknown_function() {
    check_edit(
        FIB,
        "v1:r = call fib(v0)",
        "v1:r = call fob(v0)",
        expect![[r#"
        function start, block b0, instruction `v1:r = call fob(v0)`: [call-target] calls fob, which is not a function of the module
    "#]],
    );
}

#[test]
fn call_of_main_graph() {
    check_edit(
        FIB,
        "v3 = call fib(v2)",
        "v3 = call start(v2)",
        expect![[r#"
        function fib, block b2, instruction `v3 = call start(v2)`: [call-target] calls start, which is a main, not a function
    "#]],
    );
}

#[test]
fn call_with_wrong_argument_count() {
    check_edit(
        FIB,
        "v5 = call fib(v4)",
        "v5 = call fib(v4, 1)",
        expect![[r#"
        function fib, block b2, instruction `v5 = call fib(v4, 1)`: [call-arity] calls fib with 2 arguments but fib has 1 parameter
    "#]],
    );
}

#[test]
fn function_defined_twice() {
    let twice = format!(
        r#"{FIB}
function fib(v0:n) {{
b0:
    return v0
}}
"#
    );
    expect![[r#"
        function fib: [unique-function] a function named fib is already defined earlier in the module
    "#]]
    .assert_eq(&common::render(&common::parse(&twice)));
}

/// The example in `flowc_ir::print`'s docs uses values it never defines.
#[test]
fn values_no_instruction_defines_are_undefined() {
    let doc = r#"main power(v0:y, v1:x) {
b0 power:
    branch v0, b1, b2
b1 power_rec:
    v2:res = phi [b0: 1, b1: v4]
    v4:res = mul v2, v1
    v5:y = sub v3, 1
    branch v5, b1, b2
b2 power_done:
    print v6
}
"#;
    expect![[r#"
        function power, block b1, instruction `v5:y = sub v3, 1`: [undefined-value] v3 is used here but no parameter or linked instruction defines it
        function power, block b2, terminator `print v6`: [undefined-value] v6 is used here but no parameter or linked instruction defines it
    "#]]
    .assert_eq(&common::render(&common::parse(doc)));
}

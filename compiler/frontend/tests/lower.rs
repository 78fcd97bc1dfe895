//! Snapshots of the front end: program in, SSA IR out.

use expect_test::{expect, Expect};
use flowc_lang::{syntax, Symbol};

fn check(src: &str, entry: &str, expected: Expect) {
    let program = syntax::parse("test", src).unwrap_or_else(|e| panic!("{e}"));
    let module = flowc_frontend::lower(&program, Symbol::intern(entry)).unwrap();
    expected.assert_eq(&flowc_ir::print::module(&module));
}

#[test]
fn power_loop_gets_phis_and_free_variables_become_parameters() {
    check(
        include_str!("../../../examples/power.pl"),
        "power",
        expect![[r#"
            main power(v0:y, v1:x) {
            b0 power:
                branch v0, b1, b2
            b1 power_rec:
                v2:res = phi [b0: 1, b1: v4]
                v5:y = phi [b0: v0, b1: v6]
                v4:res = mul v2, v1
                v6:y = sub v5, 1
                branch v6, b1, b2
            b2 power_done:
                v7:res = phi [b0: 1, b1: v4]
                print v7
            }
        "#]],
    );
}

#[test]
fn parameters_in_first_use_order_and_copies_of_them_checked() {
    check(
        r#"start:
    a = b
    c = a + d
    e = 5
    f = e
    print_and_stop(c)
"#,
        "start",
        expect![[r#"
            main start(v0:b, v1:d) {
            b0 start:
                v2:a = check_bound v0
                v3:c = add v2, v1
                print v3
            }
        "#]],
    );
}

#[test]
fn function_reading_an_unassigned_variable_gets_an_unbound_value() {
    check(
        r#"function f(p):
    s:
        if p goto a else goto b
    a:
        x = 1
        goto b
    b:
        return x

main:
    r = call f(0) then k
k:
    print_and_stop(r)
"#,
        "main",
        expect![[r#"
            main main() {
            b0 main:
                v0:r = call f(0)
                jump b1
            b1 k:
                print v0
            }

            function f(v0:p) {
            b0 s:
                v2:x = unbound x
                branch v0, b1, b2
            b1 a:
                jump b2
            b2 b:
                v1:x = phi [b0: v2, b1: 1]
                return v1
            }
        "#]],
    );
}

#[test]
fn missing_labels_functions_and_arities_become_traps() {
    check(
        r#"function two(a, b):
    s:
        return a

start:
    if c goto one else goto other
one:
    r = call two(1) then nowhere
other:
    if c goto gone else goto more
more:
    r = call three(1) then gone
"#,
        "start",
        expect![[r#"
            main start(v0:c) {
            b0 start:
                branch v0, b1, b2
            b1 one:
                trap argument_count(two, 2, 1)
            b2 other:
                branch v0, b4, b3
            b3 more:
                trap unknown_function(three)
            b4:
                trap unknown_label(gone)
            }

            function two(v0:a, v1:b) {
            b0 s:
                return v0
            }
        "#]],
    );
}

#[test]
fn entry_with_predecessors_gets_a_fresh_entry_block() {
    check(
        r#"loop:
    i = i - 1
    if i goto loop else goto done
done:
    print_and_stop(i)
"#,
        "loop",
        expect![[r#"
            main loop(v0:i) {
            b0:
                jump b1
            b1 loop:
                v1:i = phi [b0: v0, b1: v2]
                v2:i = sub v1, 1
                branch v2, b1, b2
            b2 done:
                print v2
            }
        "#]],
    );
}

#[test]
fn unreachable_blocks_are_not_lowered() {
    check(
        r#"start:
    print_and_stop(1)
dead:
    x = y + 1
    goto start
"#,
        "start",
        expect![[r#"
            main start() {
            b0 start:
                print 1
            }
        "#]],
    );
}

#[test]
fn irreducible_loop_is_lowered_with_phis_in_both_entries() {
    check(
        r#"start:
    x = 0
    if c goto a else goto b
a:
    x = x + 1
    goto b
b:
    x = x * 2
    t = x < 100
    if t goto a else goto done
done:
    print_and_stop(x)
"#,
        "start",
        expect![[r#"
            main start(v0:c) {
            b0 start:
                branch v0, b1, b2
            b1 a:
                v1:x = phi [b0: 0, b2: v4]
                v2:x = add v1, 1
                jump b2
            b2 b:
                v3:x = phi [b0: 0, b1: v2]
                v4:x = mul v3, 2
                v5:t = lt v4, 100
                branch v5, b1, b3
            b3 done:
                print v4
            }
        "#]],
    );
}

#[test]
fn objects_and_class_tests() {
    check(
        r#"immutable point(x)

start:
    p = new point
    p.x = 3
    if p is point goto yes else goto no
yes:
    v = p.x
    print_and_stop(v)
no:
    error(:impossible)
"#,
        "start",
        expect![[r#"
            immutable point(x)

            main start() {
            b0 start:
                v0:p = new point
                set v0, x, 3
                if_class v0, point, b1, b2
            b1 yes:
                v1:v = get v0, x
                print v1
            b2 no:
                trap error(impossible)
            }
        "#]],
    );
}

#[test]
fn promote_is_a_jump_and_unknown_operations_keep_their_name() {
    check(
        "block(b, promote(x, b2)).\nblock(b2, op2(y, frob, var(x), const(1), op1(z, add, var(y), print_and_stop(var(z))))).\n",
        "b",
        expect![[r#"
            main b(v0:x) {
            b0 b:
                jump b1
            b1 b2:
                v1:y = missing_op frob(v0, 1)
                v2:z = missing_op add(v1)
                print v2
            }
        "#]],
    );
}

/// A call that always fails (an unknown function, the wrong number of
/// arguments) is a trap, not an edge to its continuation: lowered from a
/// label whose only other predecessor is such a call, the label keeps its
/// block (no fresh entry), and its variables are parameters.
#[test]
fn a_failing_call_is_no_edge_to_its_continuation() {
    check(
        r#"entry again()

function one(x):
    s:
        return x

again:
    k = k - 1
    if k goto call_it else goto done
call_it:
    r = call nosuch(k) then again
done:
    r = call one(1, 2) then again
"#,
        "again",
        expect![[r#"
            main again(v0:k) {
            b0 again:
                v1:k = sub v0, 1
                branch v1, b1, b2
            b1 call_it:
                trap unknown_function(nosuch)
            b2 done:
                trap argument_count(one, 1, 2)
            }

            function one(v0:x) {
            b0 s:
                return v0
            }
        "#]],
    );
}

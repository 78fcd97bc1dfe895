//! Propagate and cleanup: the behaviours the optimizer must show, as
//! snapshots of the IR after cleanup (checked and run after every pass).

use crate::support;

use expect_test::{expect, Expect};

fn check(src: &str, last: &str, expected: Expect) {
    expected.assert_eq(&support::dump_until(src, last));
}

#[test]
fn loop_where_x_stays_zero_prints_the_constant() {
    check(
        r#"start:
    x = 0
    i = 10
    goto loop
loop:
    if i goto body else goto done
body:
    c = x > 0
    if c goto inc else goto next
inc:
    x = x + 1
    goto next
next:
    i = i - 1
    goto loop
done:
    print_and_stop(x)
"#,
        "dce",
        expect![[r#"
            main start() {
            b0 start:
                jump b1
            b1 loop:
                v0:i = phi [b0: 10, b4: v5]
                branch v0, b2, b5
            b2 body:
                jump b6
            b6:
                jump b4
            b4 next:
                v5:i = sub.word v0, 1
                jump b1
            b5 done:
                print 0
            }
        "#]],
    );
}

#[test]
fn phi_of_equal_constants_folds_through() {
    // Factor's `[ 2 2 + ] [ 4 ] if 4 *`.
    check(
        r#"entry start(c = 1)

start:
    if c goto a else goto b
a:
    t = 2 + 2
    goto j
b:
    t = 4
    goto j
j:
    r = t * 4
    print_and_stop(r)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:c) {
            b0 start:
                branch v0, b1, b2
            b1 a:
                jump b3
            b2 b:
                jump b3
            b3 j:
                print 16
            }
        "#]],
    );
}

#[test]
fn ranges_prove_bounds_overflow_and_comparisons() {
    check(
        r#"start:
    l = [3, 1, 4, 1, 5]
    i = 0
    s = 0
    goto loop
loop:
    c = i < 5
    if c goto body else goto done
body:
    x = l[i]
    small = i < 10
    s = s + small
    s = s + x
    i = i + 1
    goto loop
done:
    print_and_stop(s)
"#,
        "cleanup",
        expect![[r#"
            main start() {
            b0 start:
                jump b1
            b1 loop:
                v0:i = phi [b0: 0, b2: v8]
                v2:s = phi [b0: 0, b2: v7]
                v1:c = lt.word v0, 5
                branch v1, b2, b3
            b2 body:
                v4:x = readlist.word [3, 1, 4, 1, 5], v0
                v6:s = add.int v2, 1
                v7:s = add.int v4, v6
                v8:i = add.word v0, 1
                jump b1
            b3 done:
                print v2
            }
        "#]],
    );
}

#[test]
fn pure_call_with_constant_arguments_is_replaced_by_its_result() {
    check(
        r#"pure square

function square(n):
    s:
        r = n * n
        return r

main:
    r = call square(7) then k
k:
    print_and_stop(r)
"#,
        "cleanup",
        expect![[r#"
            pure square

            main main() {
            b0 main:
                print 49
            }

            function square(v0:n) {
            b0 s:
                return 49
            }
        "#]],
    );
}

#[test]
fn propagate_annotates_without_rewriting() {
    check(
        r#"entry start(n = 3)

start:
    a = n + 1
    b = :atom
    l = [1, 2]
    k = len(l)
    if a goto yes else goto no
yes:
    print_and_stop(k)
no:
    print_and_stop(b)
"#,
        "propagate",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:a = add v0, 1
                v2:k = len [1, 2]
                branch v1, b1, b2
            b1 yes:
                print v2
            b2 no:
                print :atom
            }
            ; propagate main start:
            ;   v0: any
            ;   v1: int
            ;   v2: = 2
        "#]],
    );
}

#[test]
fn branch_on_a_variable_proves_it_zero_on_the_else_side() {
    check(
        r#"entry start(n = 0)

start:
    if n goto yes else goto no
yes:
    print_and_stop(n)
no:
    m = n + 5
    print_and_stop(m)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                branch v0, b1, b2
            b1 yes:
                print v0
            b2 no:
                print 5
            }
        "#]],
    );
}

#[test]
fn unbound_tests_keep_their_check() {
    // `y` is not in the environment: the branch must still raise key_not_found.
    check(
        r#"entry start(x = 1)

start:
    c = 1
    if c goto a else goto b
a:
    if y goto b else goto b
b:
    print_and_stop(x)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:y, v1:x) {
            b0 start:
                jump b1
            b1 a:
                v3 = check_bound v0
                jump b2
            b2 b:
                print v1
            }
        "#]],
    );
}

#[test]
fn small_leaf_calls_are_inlined() {
    check(
        r#"function add3(a):
    s:
        r = a + 3
        return r

entry main(n = 4)

main:
    r = call add3(n) then k
k:
    print_and_stop(r)
"#,
        "cleanup",
        expect![[r#"
            main main(v0:n) {
            b0 main:
                v2 = check_bound v0
                v3:r = add v0, 3
                print v3
            }

            function add3(v0:a) {
            b0 s:
                v1:r = add v0, 3
                return v1
            }
        "#]],
    );
}

/// Several calls in one block, each using the one before, and a callee
/// with two returns (a phi where they meet): a block's calls are inlined
/// last to first and the results replaced once at the end.
#[test]
fn chained_calls_in_one_block_are_all_inlined() {
    check(
        r#"function clamp(a):
    s:
        c = a > 10
        if c goto hi else goto lo
    hi:
        return 10
    lo:
        r = a + 1
        return r

entry main(n = 4)

main:
    x = call clamp(n) then k1
k1:
    y = call clamp(x) then k2
k2:
    z = y + x
    w = call clamp(z) then k3
k3:
    print_and_stop(w)
"#,
        "cleanup",
        expect![[r#"
            main main(v0:n) {
            b0 main:
                v11 = check_bound v0
                v12:c = gt v0, 10
                branch v12, b14, b15
            b14 hi:
                jump b12
            b15 lo:
                v13:r = add.int v0, 1
                jump b12
            b12:
                v14:x = phi [b14: 10, b15: v13]
                v8:c = gt v14, 10
                branch v8, b10, b11
            b10 hi:
                jump b8
            b11 lo:
                v9:r = add.int v14, 1
                jump b8
            b8:
                v10:y = phi [b10: 10, b11: v9]
                v3:z = add.int v14, v10
                v5:c = gt v3, 10
                branch v5, b6, b7
            b6 hi:
                jump b4
            b7 lo:
                v6:r = add.int v3, 1
                jump b4
            b4:
                v7:w = phi [b6: 10, b7: v6]
                print v7
            }

            function clamp(v0:a) {
            b0 s:
                v1:c = gt v0, 10
                branch v1, b1, b2
            b1 hi:
                return 10
            b2 lo:
                v2:r = add.int v0, 1
                return v2
            }
        "#]],
    );
}

#[test]
fn immutable_fields_of_known_objects_are_forwarded() {
    check(
        r#"immutable point(x, y)
entry start(a = 5)

start:
    p = new point
    p.x = a
    p.y = 2
    goto next
next:
    v = p.x
    w = p.y
    s = v + w
    print_and_stop(s)
"#,
        "cleanup",
        expect![[r#"
            immutable point(x, y)

            main start(v0:a) {
            b0 start:
                v1:p = new point
                set.object v1, x, v0
                set.object v1, y, 2
                v4:s = add v0, 2
                print v4
            }
        "#]],
    );
}

/// `get` and `set` take `.object` where propagation proved the operand an
/// object (a `new`, a class test's yes side, a phi of those), and stay
/// plain where it may be something else (a parameter, the no side).
#[test]
fn reads_and_writes_of_proven_objects_skip_the_object_test() {
    check(
        r#"entry start(n = 3)

start:
    if n goto made else goto number
made:
    p = new cell
    p.v = 0
    goto begin
number:
    p = 5
    goto begin
begin:
    c = new cell
    c.v = n
    goto loop
loop:
    if p is cell goto known else goto unknown
known:
    p.v = 1
    goto next
unknown:
    w = p.v
    c.v = w
    goto next
next:
    k = c.v
    n = n - 1
    if n goto loop else goto done
done:
    print_and_stop(k)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                branch v0, b1, b2
            b1 made:
                v1:p = new cell
                set.object v1, v, 0
                jump b3
            b2 number:
                jump b3
            b3 begin:
                v12:p = phi [b2: 5, b1: v1]
                v2:c = new cell
                set.object v2, v, v0
                jump b4
            b4 loop:
                v10:n = phi [b3: v0, b9: v11]
                if_class v12, cell, b5, b6
            b5 known:
                set.object v12, v, 1
                jump b7
            b6 unknown:
                v5:w = get v12, v
                set.object v2, v, v5
                jump b7
            b7 next:
                v8:k = get.object v2, v
                v11:n = sub v10, 1
                branch v11, b9, b8
            b9:
                jump b4
            b8 done:
                print v8
            }
        "#]],
    );
}

/// A class test of a value the program's facts prove an object of the
/// class or 0 (a link of a chain, 0 at its end) tests the value's truth:
/// one word compared, not a cell's kind and class.
#[test]
fn a_class_test_of_a_link_or_zero_is_a_test_of_truth() {
    check(
        r#"entry start(n = 3)

start:
    head = 0
    goto build
build:
    c = new cell
    c.next = head
    head = c
    n = n - 1
    if n goto build else goto walk
walk:
    count = 0
    goto step
step:
    if head is cell goto follow else goto done
follow:
    head = head.next
    count = count + 1
    goto step
done:
    print_and_stop(count)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                jump b1
            b1 build:
                v2:head = phi [b0: 0, b6: v1]
                v3:n = phi [b0: v0, b6: v4]
                v1:c = new cell
                set.object v1, next, v2
                v4:n = sub v3, 1
                branch v4, b6, b2
            b6:
                jump b1
            b2 walk:
                jump b3
            b3 step:
                v5:head = phi [b2: v1, b4: v7]
                v6:count = phi [b2: 0, b4: v8]
                branch v5, b4, b5
            b4 follow:
                v7:head = get.object v5, next
                v8:count = add.int v6, 1
                jump b3
            b5 done:
                print v6
            }
        "#]],
    );
}

/// Refinement reaches past any number of tests between the one that
/// bounds a counter and its use (an interpreter's if-chain over its
/// opcode, nine deep, below the test of its position), and the join of
/// the chain's ends is not widened at once: the joined position keeps the
/// bound, and its increment takes the `.word` form.
#[test]
fn a_bound_reaches_the_end_of_a_long_if_chain() {
    let mut chain = String::new();
    for k in 0..9 {
        let yes = if k == 3 { "jump" } else { "next" };
        chain += &format!("t{k}:\n    hit = op == {k}\n    if hit goto {yes} else goto t{}\n", k + 1);
    }
    let src = format!(
        "entry start(n = 30)\n\nstart:\n    pc = 0\n    goto head\nhead:\n    more = pc < 20\n    \
         if more goto decode else goto done\ndecode:\n    op = pc % 25\n    goto t0\n{chain}t9:\n    goto next\n\
         jump:\n    pc = op\n    goto next\nnext:\n    pc = pc + 1\n    goto head\ndone:\n    print_and_stop(pc)\n"
    );
    let dump = support::dump_until(&src, "cleanup");
    let next: Vec<&str> = dump.lines().skip_while(|l| !l.ends_with(" next:")).skip(1).take(2).map(str::trim).collect();
    expect![[r#"
        v12:pc = phi [b16: v0, b17: v0, b18: v0, b19: v0, b20: v0, b21: v0, b22: v0, b23: v0, b12: v0, b13: 3]
        v13:pc = add.word v12, 1"#]]
    .assert_eq(&next.join("\n"));
}

/// A loop head of many predecessors (a dispatch of `n` cases, each
/// updating the loop's variables its own way) joins its phis' inputs a few
/// times each, not once per edge made executable and per input changed:
/// `n` times `n` inputs made `flowc opt` of 3,000 cases take 10 s.
#[test]
fn a_head_of_many_predecessors_joins_each_input_a_few_times() {
    let n = 200;
    let mut cases = String::new();
    for k in 0..n {
        let next = if k + 1 < n { format!("t{}", k + 1) } else { "head".into() };
        cases += &format!(
            "t{k}:\n    hit = op == {k}\n    if hit goto c{k} else goto {next}\n\
             c{k}:\n    total = total + {k}\n    total = total % 1000\n    goto head\n"
        );
    }
    let src = format!(
        "entry start(steps = 1000)\n\nstart:\n    i = 0\n    total = 0\n    goto head\nhead:\n    \
         more = i < steps\n    if more goto decode else goto done\ndecode:\n    i = i + 1\n    \
         op = i % {n}\n    goto t0\n{cases}done:\n    print_and_stop(total)\n"
    );
    let run = support::run_until(&src, "propagate");
    let main = run.module.functions.iter().position(|f| f.kind == flowc_ir::FunctionKind::Main).expect("a main graph");
    let p = run.cx.functions[main].propagation.as_ref().expect("propagated");
    let f = &run.module.functions[main];
    // The head's: each has `n + 2` inputs (the start, the cases, the
    // last test's miss).
    let phis: usize = f.layout.iter().map(|&b| f.blocks[b].phis.len()).max().unwrap();
    let per_input = p.joined as f64 / (phis * (n + 2)) as f64;
    assert!(
        per_input < 8.0,
        "{} inputs joined for {phis} phis of {} inputs: {per_input:.1} times each",
        p.joined,
        n + 2
    );
    assert!(per_input >= 1.0, "every input joined at least once: {per_input:.1}");
}

/// A forwarded read is a user of what was stored: `seen` widens round the
/// loop after `last = t.v` was first visited with `seen = 20`, and the read
/// must widen with it, or `last < 3` folds to false
/// (`tests/corpus/shapes/forwarded_field.fg`; found by `flowc-fuzz engines
/// --alloc`).
#[test]
fn a_forwarded_read_widens_with_the_stored_value() {
    let src = include_str!("../../../tests/corpus/shapes/forwarded_field.fg");
    check(
        src,
        "cleanup",
        expect![[r#"
            immutable box(v)

            main start(v0:x) {
            b0 start:
                jump b1
            b1 round:
                v1:rounds = phi [b0: 3, b5: v13]
                v2:k = phi [b0: 0, b5: v14]
                v3:x = phi [b0: v0, b5: 20]
                v6:seen = phi [b0: 20, b5: v1]
                branch v1, b2, b6
            b2 work:
                v4:c = eq v3, 20
                branch v4, b3, b7
            b7:
                jump b5
            b3 fresh:
                v5:t = new box
                set.object v5, v, v6
                v8:small = lt.word v6, 3
                branch v8, b4, b8
            b8:
                jump b5
            b4 mark:
                v9:k = add.int v2, 1
                jump b5
            b5 step:
                v14:k = phi [b7: v2, b8: v2, b4: v9]
                v10:u = new box
                set.object v10, v, v1
                v13:rounds = sub.word v1, 1
                jump b1
            b6 done:
                print v2
            }
        "#]],
    );
}

/// Widening stops at the function's constants: `a` and `b` stay below the
/// modulus, so the add and the mod need no checks (`.word`); the counter
/// bounded only by the parameter still may grow into a bignum (`.int`).
#[test]
fn widening_keeps_bounds_from_constants() {
    check(
        r#"entry start(n = 10)

start:
    a = 0
    b = 1
    i = 0
    goto loop
loop:
    c = i < n
    if c goto step else goto done
step:
    t = a + b
    t = t % 1000000007
    a = b
    b = t
    i = i + 1
    goto loop
done:
    print_and_stop(a)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                jump b1
            b1 loop:
                v1:i = phi [b0: 0, b2: v9]
                v4:a = phi [b0: 0, b2: v5]
                v5:b = phi [b0: 1, b2: v7]
                v3:c = lt v1, v0
                branch v3, b2, b3
            b2 step:
                v6:t = add.word v4, v5
                v7:t = mod.word v6, 1000000007
                v9:i = add.int v1, 1
                jump b1
            b3 done:
                print v4
            }
        "#]],
    );
}

#[test]
fn small_callers_of_small_functions_are_inlined_bottom_up() {
    // `twice` calls `inc`: not a leaf, but main runs at depth 0 and the
    // two frames it makes stay far below any call depth limit, so `twice`
    // is inlined — cleaned first, with `inc` already inlined into it.
    check(
        r#"function inc(a):
    s:
        r = a + 1
        return r

function twice(b):
    s:
        x = call inc(b) then k
    k:
        y = call inc(x) then l
    l:
        return y

entry main(n = 4)

main:
    z = call twice(n) then done
done:
    print_and_stop(z)
"#,
        "cleanup",
        expect![[r#"
            main main(v0:n) {
            b0 main:
                v2 = check_bound v0
                v3:r = add v0, 1
                v4:r = add v3, 1
                print v4
            }

            function inc(v0:a) {
            b0 s:
                v1:r = add v0, 1
                return v1
            }

            function twice(v0:b) {
            b0 s:
                v4:r = add v0, 1
                v3:r = add v4, 1
                return v3
            }
        "#]],
    );
}

#[test]
fn recursive_functions_keep_their_callers_frames() {
    // `down` is recursive: its depth is unbounded, so `step`, which calls
    // the leaf `dec`, is not inlined into it (each `step` frame counts
    // toward the depth limit `down` can reach); the leaf `dec` is inlined
    // into `step`, and `step` into main (depth 0, a bounded chain), but
    // `down` nowhere.
    check(
        r#"function dec(a):
    s:
        r = a - 1
        return r

function step(b):
    s:
        x = call dec(b) then k
    k:
        return x

function down(n):
    s:
        if n goto more else goto done
    more:
        m = call step(n) then k
    k:
        r = call down(m) then l
    l:
        return r
    done:
        return 0

entry main(n = 4)

main:
    z = call step(n) then k
k:
    w = call down(z) then done
done:
    print_and_stop(w)
"#,
        "cleanup",
        expect![[r#"
            main main(v0:n) {
            b0 main:
                v3 = check_bound v0
                v4:r = sub v0, 1
                v2:w = call down(v4)
                print 0
            }

            function dec(v0:a) {
            b0 s:
                v1:r = sub v0, 1
                return v1
            }

            function step(v0:b) {
            b0 s:
                v2:r = sub v0, 1
                return v2
            }

            function down(v0:n) {
            b0 s:
                branch v0, b1, b4
            b1 more:
                v1:m = call step(v0)
                v2:r = call down(v1)
                return 0
            b4 done:
                return 0
            }
        "#]],
    );
}

#[test]
fn equality_with_an_object_an_atom_or_a_small_constant_compares_words() {
    // An interpreter's opcode, read from a list of the environment (any
    // value), against its constants: a small integer equals only itself,
    // so `.word` compares the words; so does an atom, and an object.
    check(
        r#"entry start(ops = [1, 2], i = 0)

start:
    op = ops[i]
    a = op == 2
    b = op != :halt
    c = new cell
    d = c == op
    s = a + b
    s = s + d
    print_and_stop(s)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:ops, v1:i) {
            b0 start:
                v2:op = readlist v0, v1
                v3:a = eq.word v2, 2
                v4:b = ne.word v2, :halt
                v5:c = new cell
                v6:d = eq.word v2, v5
                v7:s = add.word v3, v4
                v8:s = add.word v6, v7
                print v8
            }
        "#]],
    );
}

//! Pass `unbox`: scalar replacement of non-escaping objects, after the
//! pipeline through `unbox` (checked and run against the reference
//! interpreter after every pass).

mod support;

use expect_test::{expect, Expect};

/// The IR after unbox, and the allocations the IR interpreter counts.
/// The passes unbox needs, without the others: unbox on its own.
const UNBOX: &[&str] = &["normalize", "loops", "escape", "unbox"];

fn check(src: &str, expected: Expect) -> u64 {
    let run = support::run_with(src, UNBOX);
    expected.assert_eq(&flowc_ir::print::module(&run.module));
    support::run_ir(&run.program, &run.module).1
}

fn has_new(src: &str) -> bool {
    let run = support::run_with(src, UNBOX);
    flowc_ir::print::module(&run.module).contains(" new ")
}

#[test]
fn point_per_iteration_needs_no_allocation() {
    let src = "entry start(n = 50)\n\
        start:\n    sum = 0\n    i = 0\n    goto loop\n\
        loop:\n    c = i < n\n    if c goto body else goto done\n\
        body:\n    p = new point\n    p.x = i\n    twice = i * 2\n    p.y = twice\n    a = p.x\n    b = p.y\n    \
        s = a + b\n    sum = sum + s\n    i = i + 1\n    goto loop\n\
        done:\n    print_and_stop(sum)\n";
    let allocations = check(
        src,
        expect![[r#"
        main start(v0:n) {
        b0 start:
            jump b1
        b1 loop:
            v1:i = phi [b0: 0, b2: v11]
            v4:sum = phi [b0: 0, b2: v10]
            v3:c = lt v1, v0
            branch v3, b2, b3
        b2 body:
            v6:twice = mul v1, 2
            v9:s = add v1, v6
            v10:sum = add v4, v9
            v11:i = add v1, 1
            jump b1
        b3 done:
            print v4
        }
    "#]],
    );
    assert_eq!(allocations, 0);
    assert!(!has_new(src));
}

#[test]
fn points_merged_at_a_phi_are_unboxed() {
    let src = "entry start(c = 1)\n\
        start:\n    if c goto a else goto b\n\
        a:\n    p = new point\n    p.x = 10\n    goto j\n\
        b:\n    p = new point\n    p.x = 20\n    goto j\n\
        j:\n    x = p.x\n    print_and_stop(x)\n";
    assert_eq!(
        check(
            src,
            expect![[r#"
        main start(v0:c) {
        b0 start:
            branch v0, b1, b2
        b1 a:
            jump b3
        b2 b:
            jump b3
        b3 j:
            v5:x = phi [b1: 10, b2: 20]
            print v5
        }
    "#]]
        ),
        0
    );
}

#[test]
fn loop_carried_object_and_if_class_are_unboxed() {
    let src = "entry start(n = 4)\n\
        start:\n    p = new point\n    p.x = 0\n    goto loop\n\
        loop:\n    if n goto body else goto done\n\
        body:\n    t = p.x\n    p = new point\n    t = t + n\n    p.x = t\n    n = n - 1\n    goto loop\n\
        done:\n    if p is point goto yes else goto no\n\
        yes:\n    x = p.x\n    print_and_stop(x)\n\
        no:\n    print_and_stop(0)\n";
    assert_eq!(
        check(
            src,
            expect![[r#"
                main start(v0:n) {
                b0 start:
                    jump b1
                b1 loop:
                    v2:n = phi [b0: v0, b2: v8]
                    v9:x = phi [b0: 0, b2: v7]
                    branch v2, b2, b3
                b2 body:
                    v7:t = add v2, v9
                    v8:n = sub v2, 1
                    jump b1
                b3 done:
                    jump b4
                b4 yes:
                    print v9
                }
            "#]]
        ),
        0
    );
}

#[test]
fn nested_objects_are_unboxed() {
    let src = "entry start(n = 3)\n\
        start:\n    inner = new point\n    inner.x = n\n    outer = new box\n    outer.v = inner\n    \
        deep = new box\n    deep.v = outer\n    o = deep.v\n    got = o.v\n    x = got.x\n    print_and_stop(x)\n";
    assert_eq!(
        check(
            src,
            expect![[r#"
        main start(v0:n) {
        b0 start:
            v7:n = check_bound v0
            print v0
        }
    "#]]
        ),
        0
    );
}

#[test]
fn escaping_objects_are_left_alone() {
    let src = "function getx(o):\n    s:\n        r = o.x\n        return r\n\
        start:\n    p = new point\n    p.x = 7\n    q = new point\n    q.x = 8\n    a = q.x\n    \
        r = call getx(p) then k\n\
        k:\n    s = r + a\n    print_and_stop(s)\n";
    assert_eq!(
        check(
            src,
            expect![[r#"
                main start() {
                b0 start:
                    v0:p = new point
                    set v0, x, 7
                    v3:r = call getx(v0)
                    v4:s = add 8, v3
                    print v4
                }

                function getx(v0:o) {
                b0 s:
                    v1:r = get v0, x
                    return v1
                }
            "#]]
        ),
        1
    );
}

#[test]
fn possibly_unset_field_is_left_alone_and_still_fails() {
    let src = "entry start(c = 0)\n\
        start:\n    p = new point\n    if c goto a else goto j\n\
        a:\n    p.x = 1\n    goto j\n\
        j:\n    x = p.x\n    print_and_stop(x)\n";
    let run = support::run_with(src, UNBOX);
    assert_eq!(support::reference(&run.program), "error unset_field(point, x)");
    check(
        src,
        expect![[r#"
            main start(v0:c) {
            b0 start:
                v1:p = new point
                branch v0, b1, b3
            b3:
                jump b2
            b1 a:
                set v1, x, 1
                jump b2
            b2 j:
                v3:x = get v1, x
                print v3
            }
        "#]],
    );
}

#[test]
fn immutable_field_set_twice_is_left_alone_and_still_fails() {
    let src = "immutable point(x)\n\
        start:\n    p = new point\n    p.x = 1\n    p.x = 2\n    x = p.x\n    print_and_stop(x)\n";
    let run = support::run_with(src, UNBOX);
    assert_eq!(support::reference(&run.program), "error immutable_field(point, x)");
    check(
        src,
        expect![[r#"
        immutable point(x)

        main start() {
        b0 start:
            v0:p = new point
            set v0, x, 1
            set v0, x, 2
            v1:x = get v0, x
            print v1
        }
    "#]],
    );
}

#[test]
fn immutable_field_set_once_per_object_is_unboxed() {
    let src = "entry start(n = 3)\n\
        immutable point(x)\n\
        start:\n    s = 0\n    goto loop\n\
        loop:\n    if n goto body else goto done\n\
        body:\n    p = new point\n    p.x = n\n    v = p.x\n    s = s + v\n    n = n - 1\n    goto loop\n\
        done:\n    print_and_stop(s)\n";
    assert_eq!(
        check(
            src,
            expect![[r#"
        immutable point(x)

        main start(v0:n) {
        b0 start:
            jump b1
        b1 loop:
            v1:n = phi [b0: v0, b2: v6]
            v2:s = phi [b0: 0, b2: v5]
            branch v1, b2, b3
        b2 body:
            v5:s = add v2, v1
            v6:n = sub v1, 1
            jump b1
        b3 done:
            print v2
        }
    "#]]
        ),
        0
    );
}

#[test]
fn reads_of_the_previous_object_of_the_web_are_unboxed() {
    // `p.x` reads the object of the previous iteration after `q` was
    // allocated: the previous object can no longer change, so its fields
    // are what the current object's were at `new`.
    let src = "entry start(n = 3)\n\
        start:\n    p = new point\n    p.x = 0\n    goto loop\n\
        loop:\n    if n goto body else goto done\n\
        body:\n    q = new point\n    t = p.x\n    t = t + n\n    q.x = t\n    p = q\n    n = n - 1\n    goto loop\n\
        done:\n    x = p.x\n    print_and_stop(x)\n";
    assert!(!has_new(src));
    check(
        src,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                jump b1
            b1 loop:
                v2:n = phi [b0: v0, b2: v8]
                v9:x = phi [b0: 0, b2: v7]
                branch v2, b2, b3
            b2 body:
                v7:t = add v2, v9
                v8:n = sub v2, 1
                jump b1
            b3 done:
                print v9
            }
        "#]],
    );
}

/// A position replaced by a new one every iteration, the new one's fields
/// set from the old one's on both sides of an `if`: no allocation is left.
#[test]
fn an_object_replaced_every_iteration_with_fields_set_on_both_branches_is_unboxed() {
    let src = "entry start(n = 10)\n\
        start:\n    p = new pos\n    p.x = 0\n    p.y = 0\n    i = 0\n    goto loop\n\
        loop:\n    c = i < n\n    if c goto body else goto done\n\
        body:\n    q = new pos\n    m = i % 2\n    if m goto right else goto up\n\
        right:\n    x = p.x\n    x1 = x + 1\n    q.x = x1\n    y = p.y\n    q.y = y\n    goto next\n\
        up:\n    x = p.x\n    q.x = x\n    y = p.y\n    y1 = y + 1\n    q.y = y1\n    goto next\n\
        next:\n    p = q\n    i = i + 1\n    goto loop\n\
        done:\n    x = p.x\n    y = p.y\n    r = x + y\n    print_and_stop(r)\n";
    assert_eq!(
        check(
            src,
            expect![[r#"
        main start(v0:n) {
        b0 start:
            jump b1
        b1 loop:
            v2:i = phi [b0: 0, b5: v19]
            v21:x = phi [b0: 0, b5: v22]
            v23:y = phi [b0: 0, b5: v24]
            v4:c = lt v2, v0
            branch v4, b2, b6
        b2 body:
            v10:m = mod v2, 2
            branch v10, b3, b4
        b3 right:
            v15:x1 = add v21, 1
            jump b5
        b4 up:
            v13:y1 = add v23, 1
            jump b5
        b5 next:
            v22:x = phi [b3: v15, b4: v21]
            v24:y = phi [b3: v23, b4: v13]
            v19:i = add v2, 1
            jump b1
        b6 done:
            v8:r = add v21, v23
            print v8
        }
    "#]]
        ),
        0
    );
}

/// Writing the previous object after a new one was allocated is not
/// followed (the previous object would change): left alone.
#[test]
fn a_write_to_the_previous_object_of_the_web_is_left_alone() {
    let src = "entry start(n = 3)\n\
        start:\n    p = new point\n    p.x = 0\n    goto loop\n\
        loop:\n    if n goto body else goto done\n\
        body:\n    q = new point\n    t = p.x\n    q.x = t\n    p.x = n\n    p = q\n    n = n - 1\n    goto loop\n\
        done:\n    x = p.x\n    print_and_stop(x)\n";
    assert!(has_new(src));
}

/// An object two generations back (neither the current nor the previous
/// one) is left alone.
#[test]
fn an_object_two_generations_back_is_left_alone() {
    let src = "entry start(n = 3)\n\
        start:\n    p = new point\n    p.x = 0\n    o = p\n    goto loop\n\
        loop:\n    if n goto body else goto done\n\
        body:\n    q = new point\n    t = o.x\n    q.x = t\n    o = p\n    p = q\n    n = n - 1\n    goto loop\n\
        done:\n    x = o.x\n    print_and_stop(x)\n";
    assert!(has_new(src));
}

#[test]
fn stored_unbound_value_is_still_checked() {
    let src = "start:\n    p = new point\n    p.x = y\n    print_and_stop(1)\n";
    let run = support::run_with(src, UNBOX);
    assert_eq!(support::reference(&run.program), "error key_not_found(y)");
    assert_eq!(
        check(
            src,
            expect![[r#"
        main start(v0:y) {
        b0 start:
            v2:y = check_bound v0
            print 1
        }
    "#]]
        ),
        0
    );
}

#[test]
fn nothing_is_unboxed_when_an_object_is_printed() {
    // `q` prints as `<point#2>`: removing `p` would renumber it.
    let src = "start:\n    p = new point\n    p.x = 1\n    q = new point\n    print_and_stop(q)\n";
    let run = support::run_with(src, UNBOX);
    assert_eq!(support::reference(&run.program), "<point#2>\n");
    assert_eq!(
        check(
            src,
            expect![[r#"
        main start() {
        b0 start:
            v0:p = new point
            set v0, x, 1
            v1:q = new point
            print v1
        }
    "#]]
        ),
        2
    );
}

#[test]
fn examples_points_runs_without_allocations() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/points.pl")).unwrap();
    let run = support::run_with(&src, UNBOX);
    assert_eq!(support::run_ir(&run.program, &run.module), ("2450\n".to_string(), 0));
}

#[test]
fn if_class_of_another_class_takes_the_else_branch() {
    // The test becomes a jump to `no`; `yes` is no longer reachable and
    // goes, and so does the phi input of `out` from it.
    let src = "start:\n    p = new point\n    p.x = 4\n    if p is pair goto yes else goto no\n\
        yes:\n    r = 1\n    goto out\n\
        no:\n    r = p.x\n    goto out\n\
        out:\n    print_and_stop(r)\n";
    assert_eq!(
        check(
            src,
            expect![[r#"
        main start() {
        b0 start:
            jump b2
        b2 no:
            jump b3
        b3 out:
            v2:r = phi [b2: 4]
            print v2
        }
    "#]]
        ),
        0
    );
}

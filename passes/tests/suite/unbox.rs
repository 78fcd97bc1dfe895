//! Pass `unbox`: scalar replacement of non-escaping objects, after the
//! pipeline through `unbox` (checked and run against the reference
//! interpreter after every pass).

use crate::support;

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
    let src = support::POINTS;
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
    let src = r#"entry start(c = 1)
start:
    if c goto a else goto b
a:
    p = new point
    p.x = 10
    goto j
b:
    p = new point
    p.x = 20
    goto j
j:
    x = p.x
    print_and_stop(x)
"#;
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
    assert_eq!(
        check(
            support::LOOP_CARRIED_POINT,
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
    let src = r#"entry start(n = 3)
start:
    inner = new point
    inner.x = n
    outer = new box
    outer.v = inner
    deep = new box
    deep.v = outer
    o = deep.v
    got = o.v
    x = got.x
    print_and_stop(x)
"#;
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
    let src = r#"function getx(o):
    s:
        r = o.x
        return r
start:
    p = new point
    p.x = 7
    q = new point
    q.x = 8
    a = q.x
    r = call getx(p) then k
k:
    s = r + a
    print_and_stop(s)
"#;
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
    let src = r#"entry start(c = 0)
start:
    p = new point
    if c goto a else goto j
a:
    p.x = 1
    goto j
j:
    x = p.x
    print_and_stop(x)
"#;
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
    let src = r#"immutable point(x)
start:
    p = new point
    p.x = 1
    p.x = 2
    x = p.x
    print_and_stop(x)
"#;
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
    let src = r#"entry start(n = 3)
immutable point(x)
start:
    s = 0
    goto loop
loop:
    if n goto body else goto done
body:
    p = new point
    p.x = n
    v = p.x
    s = s + v
    n = n - 1
    goto loop
done:
    print_and_stop(s)
"#;
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
    let src = r#"entry start(n = 3)
start:
    p = new point
    p.x = 0
    goto loop
loop:
    if n goto body else goto done
body:
    q = new point
    t = p.x
    t = t + n
    q.x = t
    p = q
    n = n - 1
    goto loop
done:
    x = p.x
    print_and_stop(x)
"#;
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
    let src = r#"entry start(n = 10)
start:
    p = new pos
    p.x = 0
    p.y = 0
    i = 0
    goto loop
loop:
    c = i < n
    if c goto body else goto done
body:
    q = new pos
    m = i % 2
    if m goto right else goto up
right:
    x = p.x
    x1 = x + 1
    q.x = x1
    y = p.y
    q.y = y
    goto next
up:
    x = p.x
    q.x = x
    y = p.y
    y1 = y + 1
    q.y = y1
    goto next
next:
    p = q
    i = i + 1
    goto loop
done:
    x = p.x
    y = p.y
    r = x + y
    print_and_stop(r)
"#;
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
    let src = r#"entry start(n = 3)
start:
    p = new point
    p.x = 0
    goto loop
loop:
    if n goto body else goto done
body:
    q = new point
    t = p.x
    q.x = t
    p.x = n
    p = q
    n = n - 1
    goto loop
done:
    x = p.x
    print_and_stop(x)
"#;
    assert!(has_new(src));
}

/// An object two generations back (neither the current nor the previous
/// one) is left alone.
#[test]
fn an_object_two_generations_back_is_left_alone() {
    let src = r#"entry start(n = 3)
start:
    p = new point
    p.x = 0
    o = p
    goto loop
loop:
    if n goto body else goto done
body:
    q = new point
    t = o.x
    q.x = t
    o = p
    p = q
    n = n - 1
    goto loop
done:
    x = o.x
    print_and_stop(x)
"#;
    assert!(has_new(src));
}

#[test]
fn stored_unbound_value_is_still_checked() {
    let src = r#"start:
    p = new point
    p.x = y
    print_and_stop(1)
"#;
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
    let src = r#"start:
    p = new point
    p.x = 1
    q = new point
    print_and_stop(q)
"#;
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
    let src = r#"start:
    p = new point
    p.x = 4
    if p is pair goto yes else goto no
yes:
    r = 1
    goto out
no:
    r = p.x
    goto out
out:
    print_and_stop(r)
"#;
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

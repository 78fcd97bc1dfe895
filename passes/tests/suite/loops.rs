//! Pass `loops`: natural loops, their nesting and depths, after the
//! pipeline through `loops` (checked and run after every pass).

use crate::support;

use expect_test::{expect, Expect};

fn check(src: &str, expected: Expect) {
    expected.assert_eq(&support::dump_with(src, &["normalize", "loops"]));
}

#[test]
fn nested_loops_have_depths_and_parents() {
    check(
        r#"entry outer(n = 3)
outer:
    total = 0
    i = n
    goto ohead
ohead:
    if i goto obody else goto done
obody:
    j = i
    goto ihead
ihead:
    if j goto ibody else goto onext
ibody:
    total = total + j
    j = j - 1
    goto ihead
onext:
    i = i - 1
    goto ohead
done:
    print_and_stop(total)
"#,
        expect![[r#"
            main outer(v0:n) {
            b0 outer:
                v1:i = check_bound v0
                jump b1
            b1 ohead:
                v2:i = phi [b0: v1, b5: v7]
                v3:total = phi [b0: 0, b5: v8]
                branch v2, b2, b6
            b2 obody:
                v4:j = check_bound v2
                jump b3
            b3 ihead:
                v5:j = phi [b2: v4, b4: v10]
                v8:total = phi [b2: v3, b4: v9]
                branch v5, b4, b5
            b4 ibody:
                v9:total = add v5, v8
                v10:j = sub v5, 1
                jump b3
            b5 onext:
                v7:i = sub v2, 1
                jump b1
            b6 done:
                print v3
            }
            ; loops of outer: b1 (depth 1): b1 b2 b3 b4 b5
            ; loops of outer:   b3 (depth 2, in b1): b3 b4
        "#]],
    );
}

#[test]
fn two_back_edges_make_one_loop() {
    check(
        r#"entry start(n = 10)
start:
    s = 0
    goto head
head:
    if n goto body else goto done
body:
    n = n - 1
    c = n % 2
    if c goto odd else goto even
odd:
    s = s + 1
    goto head
even:
    s = s + 2
    goto head
done:
    print_and_stop(s)
"#,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                jump b1
            b1 head:
                v1:n = phi [b0: v0, b4: v3, b3: v3]
                v2:s = phi [b0: 0, b4: v5, b3: v6]
                branch v1, b2, b5
            b2 body:
                v3:n = sub v1, 1
                v4:c = mod v3, 2
                branch v4, b3, b4
            b3 odd:
                v6:s = add v2, 1
                jump b1
            b4 even:
                v5:s = add v2, 2
                jump b1
            b5 done:
                print v2
            }
            ; loops of start: b1 (depth 1): b1 b2 b3 b4
        "#]],
    );
}

#[test]
fn irreducible_cycle_has_no_natural_loop() {
    // The cycle a <-> b is entered at both a and b: neither dominates the
    // other, so there is no back edge.
    check(
        r#"entry start(x = 1, n = 5)
start:
    if x goto a else goto b
a:
    n = n - 1
    if n goto b else goto done
b:
    n = n - 1
    if n goto a else goto done
done:
    print_and_stop(n)
"#,
        expect![[r#"
            main start(v0:x, v1:n) {
            b0 start:
                branch v0, b4, b5
            b4:
                jump b1
            b5:
                jump b2
            b1 a:
                v2:n = phi [b4: v1, b8: v5]
                v3:n = sub v2, 1
                branch v3, b6, b7
            b6:
                jump b2
            b7:
                jump b3
            b2 b:
                v4:n = phi [b5: v1, b6: v3]
                v5:n = sub v4, 1
                branch v5, b8, b9
            b8:
                jump b1
            b9:
                jump b3
            b3 done:
                v6:n = phi [b7: v3, b9: v5]
                print v6
            }
            ; loops of start: none
        "#]],
    );
}

#[test]
fn natural_loop_inside_an_irreducible_region() {
    check(
        r#"entry start(x = 0, n = 7)
start:
    if x goto a else goto b
a:
    n = n - 1
    goto b
b:
    n = n - 1
    c = n > 3
    if c goto b else goto back
back:
    d = n > 0
    if d goto a else goto done
done:
    print_and_stop(n)
"#,
        expect![[r#"
            main start(v0:x, v1:n) {
            b0 start:
                branch v0, b5, b6
            b5:
                jump b1
            b6:
                jump b2
            b1 a:
                v2:n = phi [b5: v1, b8: v5]
                v3:n = sub v2, 1
                jump b2
            b2 b:
                v4:n = phi [b6: v1, b1: v3, b7: v5]
                v5:n = sub v4, 1
                v6:c = gt v5, 3
                branch v6, b7, b3
            b7:
                jump b2
            b3 back:
                v7:d = gt v5, 0
                branch v7, b8, b4
            b8:
                jump b1
            b4 done:
                print v5
            }
            ; loops of start: b2 (depth 1): b2 b7
        "#]],
    );
}

#[test]
fn function_without_loops() {
    check(
        r#"entry start(x = 4)
start:
    if x goto big else goto small
big:
    y = x * 2
    goto done
small:
    y = 0
    goto done
done:
    print_and_stop(y)
"#,
        expect![[r#"
            main start(v0:x) {
            b0 start:
                branch v0, b1, b2
            b1 big:
                v1:y = mul v0, 2
                jump b3
            b2 small:
                jump b3
            b3 done:
                v2:y = phi [b2: 0, b1: v1]
                print v2
            }
            ; loops of start: none
        "#]],
    );
}

#[test]
fn loops_in_functions_and_self_loops() {
    check(
        r#"entry start(n = 4)
function count(k):
    top:
        k = k - 1
        if k goto top else goto out
    out:
        return k
start:
    r = call count(n) then show
show:
    print_and_stop(r)
"#,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:r = call count(v0)
                print v1
            }

            function count(v0:k) {
            b0:
                jump b1
            b1 top:
                v1:k = phi [b0: v0, b3: v2]
                v2:k = sub v1, 1
                branch v2, b3, b2
            b3:
                jump b1
            b2 out:
                return v2
            }
            ; loops of start: none
            ; loops of count: b1 (depth 1): b1 b3
        "#]],
    );
}

//! Pass `dce`: what goes (values never needed, phi cycles feeding only
//! themselves, dead allocations with their stores, dead pure calls) and
//! what stays (effects, possible failures); then the whole pipeline over
//! the corpus and generated programs.

use crate::support;

use expect_test::{expect, Expect};
use flowc_lang::{Symbol, Value};

/// The passes these tests run: dce and what it needs.
const DCE_ONLY: &[&str] = &["normalize", "def-use", "dce"];

/// The IR after normalize, def-use and dce alone (dce on its own, without
/// what propagate and cleanup would prove first).
fn check(src: &str, expected: Expect) {
    expected.assert_eq(&support::dump_with(src, DCE_ONLY));
}

#[test]
fn loop_carried_values_that_only_feed_themselves_disappear() {
    // `a` and `b` swap every iteration but nothing reads them: their phis
    // and copies form a cycle no effect reaches. Only `i` stays.
    check(
        r#"entry start(n = 3)
start:
    a = 1
    b = 2
    i = n
    goto loop
loop:
    if i goto body else goto done
body:
    t = a
    a = b
    b = t
    i = i - 1
    goto loop
done:
    print_and_stop(i)
"#,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:i = check_bound v0
                jump b1
            b1 loop:
                v2:i = phi [b0: v1, b2: v7]
                branch v2, b2, b3
            b2 body:
                v7:i = sub v2, 1
                jump b1
            b3 done:
                print v2
            }
        "#]],
    );
}

#[test]
fn a_dead_generic_counter_stays_because_it_may_raise_a_type_error() {
    // `x = x + 1` is never printed, but a generic `add` may fail as far as
    // dce knows (cleanup proves the kinds and writes `add.int` — see the
    // next test). It keeps its phi alive.
    check(
        r#"entry start(n = 3)
start:
    x = 0
    goto loop
loop:
    if n goto body else goto done
body:
    x = x + 1
    n = n - 1
    goto loop
done:
    print_and_stop(n)
"#,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                jump b1
            b1 loop:
                v1:n = phi [b0: v0, b2: v4]
                v2:x = phi [b0: 0, b2: v3]
                branch v1, b2, b3
            b2 body:
                v3:x = add v2, 1
                v4:n = sub v1, 1
                jump b1
            b3 done:
                print v1
            }
        "#]],
    );
}

#[test]
fn a_dead_specialized_counter_disappears_with_its_phi() {
    // The same loop as cleanup leaves it: `add.int` cannot fail (kinds
    // proven, overflow goes to big integers), so the cycle v2 <-> v4 is dead.
    // `sub` stays generic: it feeds the branch anyway.
    let ir = r#"main start(v0:n) {
b0:
    jump b1
b1:
    v1 = phi [b0: v0, b3: v5]
    v2 = phi [b0: 0, b3: v4]
    branch v1, b2, b4
b2:
    v4 = add.int v2, 1
    v5 = sub v1, 1
    jump b3
b3:
    jump b1
b4:
    print v1
}
"#;
    let out = support::run_ir_with(ir, &[(Symbol::intern("n"), Value::Int(3))], DCE_ONLY);
    expect![[r#"
        main start(v0:n) {
        b0:
            jump b1
        b1:
            v1 = phi [b0: v0, b2: v5]
            branch v1, b2, b4
        b2:
            v5 = sub v1, 1
            jump b1
        b4:
            print v1
        }
    "#]]
    .assert_eq(&out);
}

#[test]
fn a_dead_allocation_disappears_with_its_stores() {
    // `p` is only stored into, with bound values: it goes with its stores.
    // `q.x = n` reads a parameter of the main graph, which may be unbound
    // (the store would raise key_not_found): it stays, and keeps `q`.
    check(
        r#"entry start(n = 3)
start:
    m = n + 1
    p = new point
    p.x = m
    p.y = 7
    q = new point
    q.x = n
    print_and_stop(m)
"#,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:m = add v0, 1
                v3:q = new point
                set v3, x, v0
                print v1
            }
        "#]],
    );
}

#[test]
fn stores_that_others_can_see_or_that_may_fail_stay() {
    // `p` is printed: its stores stay. `q.x` is immutable (a second store
    // would fail): `q` and its stores stay. `r.x = u` reads a variable that
    // may be unbound: it stays (and keeps `r`).
    check(
        r#"entry start(n = 3)
immutable cell(x)
start:
    p = new point
    p.x = n
    q = new cell
    q.x = 1
    r = new point
    r.x = u
    print_and_stop(p)
"#,
        expect![[r#"
            immutable cell(x)

            main start(v0:n, v1:u) {
            b0 start:
                v2:p = new point
                set v2, x, v0
                v3:q = new cell
                set v3, x, 1
                v4:r = new point
                set v4, x, v1
                print v2
            }
        "#]],
    );
}

#[test]
fn a_dead_call_of_a_pure_function_disappears_and_an_impure_one_stays() {
    // `a` goes. `b` calls a function not declared pure: it stays. `c`
    // passes `n`, which may be unbound (reading it would fail): it stays.
    check(
        r#"entry main(n = 4)
pure sq

function sq(k):
    s:
        r = k * k
        return r

function noisy(k):
    s:
        r = k + 1
        return r

main:
    m = n + 1
    a = call sq(m) then m2
m2:
    b = call noisy(m) then m3
m3:
    c = call sq(n) then m4
m4:
    print_and_stop(m)
"#,
        expect![[r#"
            pure sq

            main main(v0:n) {
            b0 main:
                v1:m = add v0, 1
                v3:b = call noisy(v1)
                v4:c = call sq(v0)
                print v1
            }

            function sq(v0:k) {
            b0 s:
                v1:r = mul v0, v0
                return v1
            }

            function noisy(v0:k) {
            b0 s:
                v1:r = add v0, 1
                return v1
            }
        "#]],
    );
}

#[test]
fn a_dead_add_that_raises_a_type_error_stays() {
    // `bad` is never used, but computing it fails: the program must still
    // raise type_error (the differential run after every pass checks it).
    let src = r#"entry start(n = 3)
start:
    a = :atom
    bad = a + 1
    print_and_stop(n)
"#;
    check(
        src,
        expect![[r#"
        main start(v0:n) {
        b0 start:
            v1:bad = add :atom, 1
            print v0
        }
    "#]],
    );
    let run = support::run_until(src, "dce");
    assert_eq!(support::run_ir(&run.program, &run.module).0, "error type_error(add, integers)");
}

#[test]
fn prints_and_error_traps_stay() {
    check(
        r#"entry start(n = 3)
start:
    x = n * 2
    if n goto fail else goto show
fail:
    error(:no)
show:
    print_and_stop(x)
"#,
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:x = mul v0, 2
                branch v0, b1, b2
            b1 fail:
                trap error(no)
            b2 show:
                print v1
            }
        "#]],
    );
}

#[test]
fn values_only_resume_data_needs_stay_in_traces() {
    // v3 is read by nobody but the resume record of the guard: it stays.
    // v4 is read by nobody at all: it goes.
    let ir = r#"main m(v0:n) {
b0:
    print v0
}

trace loop(v0:i, v1:acc) {
b0:
    jump b1
b1:
    v2 = phi [b0: v0, b1: v5]
    v6 = phi [b0: v1, b1: v3]
    v3 = add.word v6, 1
    v4 = mul.word v2, 2
    v5 = sub.word v2, 1
    guard_true v5, r0 else l0
    jump b1
resume r0 {
    frame [i = v5, acc = v3]
}
}
"#;
    let out = support::run_ir_with(ir, &[(Symbol::intern("n"), Value::Int(1))], DCE_ONLY);
    expect![[r#"
        main m(v0:n) {
        b0:
            print v0
        }

        trace loop(v0:i, v1:acc) {
        b0:
            jump b1
        b1:
            v2 = phi [b0: v0, b1: v5]
            v6 = phi [b0: v1, b1: v3]
            v3 = add.word v6, 1
            v5 = sub.word v2, 1
            guard_true v5, r0 else l0
            jump b1
        resume r0 {
            frame [i = v5, acc = v3]
        }
        }
    "#]]
    .assert_eq(&out);
}

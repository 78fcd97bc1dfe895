//! Pass `dce`: what goes (values never needed, phi cycles feeding only
//! themselves, dead allocations with their stores, dead pure calls) and
//! what stays (effects, possible failures); then the whole pipeline over
//! the corpus and generated programs.

mod support;

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
        "entry start(n = 3)\nstart:\n    a = 1\n    b = 2\n    i = n\n    goto loop\nloop:\n    if i goto body else goto done\n\
         body:\n    t = a\n    a = b\n    b = t\n    i = i - 1\n    goto loop\ndone:\n    print_and_stop(i)\n",
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
        "entry start(n = 3)\nstart:\n    x = 0\n    goto loop\nloop:\n    if n goto body else goto done\n\
         body:\n    x = x + 1\n    n = n - 1\n    goto loop\ndone:\n    print_and_stop(n)\n",
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
    let ir =
        "main start(v0:n) {\nb0:\n    jump b1\nb1:\n    v1 = phi [b0: v0, b3: v5]\n    v2 = phi [b0: 0, b3: v4]\n    \
              branch v1, b2, b4\nb2:\n    v4 = add.int v2, 1\n    v5 = sub v1, 1\n    jump b3\nb3:\n    jump b1\n\
              b4:\n    print v1\n}\n";
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
        "entry start(n = 3)\nstart:\n    m = n + 1\n    p = new point\n    p.x = m\n    p.y = 7\n    q = new point\n    \
         q.x = n\n    print_and_stop(m)\n",
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
        "entry start(n = 3)\nimmutable cell(x)\nstart:\n    p = new point\n    p.x = n\n    q = new cell\n    q.x = 1\n    \
         r = new point\n    r.x = u\n    print_and_stop(p)\n",
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
        "entry main(n = 4)\npure sq\n\nfunction sq(k):\n    s:\n        r = k * k\n        return r\n\n\
         function noisy(k):\n    s:\n        r = k + 1\n        return r\n\n\
         main:\n    m = n + 1\n    a = call sq(m) then m2\nm2:\n    b = call noisy(m) then m3\nm3:\n    \
         c = call sq(n) then m4\nm4:\n    print_and_stop(m)\n",
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
    let src = "entry start(n = 3)\nstart:\n    a = :atom\n    bad = a + 1\n    print_and_stop(n)\n";
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
        "entry start(n = 3)\nstart:\n    x = n * 2\n    if n goto fail else goto show\nfail:\n    error(:no)\nshow:\n    \
         print_and_stop(x)\n",
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
    let ir = "main m(v0:n) {\nb0:\n    print v0\n}\n\n\
              trace loop(v0:i, v1:acc) {\nb0:\n    jump b1\nb1:\n    v2 = phi [b0: v0, b1: v5]\n    v6 = phi [b0: v1, b1: v3]\n    \
              v3 = add.word v6, 1\n    v4 = mul.word v2, 2\n    v5 = sub.word v2, 1\n    guard_true v5, r0 else l0\n    jump b1\n\
              resume r0 {\n    frame [i = v5, acc = v3]\n}\n}\n";
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

//! Field facts: what the program may store in each field, solved for the
//! whole program by propagate (`flowc_passes::propagate::FieldFacts`), and
//! what `get`s then know. Snapshots of the facts and of the code they let
//! cleanup specialize; every pass checked and run.

use crate::support;

use expect_test::{expect, Expect};

fn check(src: &str, last: &str, expected: Expect) {
    expected.assert_eq(&support::dump_until(src, last));
}

/// The facts propagate found, then the IR after cleanup.
fn facts_then_cleanup(src: &str, expected: Expect) {
    let facts = support::dump_until(src, "propagate");
    let facts: Vec<&str> = facts.lines().filter(|l| l.starts_with(";   field")).collect();
    expected.assert_eq(&format!("{}\n{}", facts.join("\n"), support::dump_until(src, "cleanup")));
}

/// A chain of cells, each holding a counter kept in a byte and a link to
/// the next (0 at the end), walked and bumped: the shape of an
/// interpreter's tape.
const CHAIN: &str = r#"entry start(n = 5)

start:
    head = new cell
    head.v = 0
    head.next = 0
    k = n
    goto grow
grow:
    if k goto link else goto walk0
link:
    c = new cell
    c.v = k
    c.next = head
    head = c
    k = k - 1
    goto grow
walk0:
    p = head
    s = 0
    goto walk
walk:
    if p is cell goto bump else goto done
bump:
    v = p.v
    v = v + 250
    v = v % 256
    p.v = v
    s = s + v
    p = p.next
    goto walk
done:
    print_and_stop(s)
"#;

#[test]
fn a_field_holds_the_join_of_what_every_set_stores() {
    // `v` gets 0, a byte and `k`, counted down from the environment's `n`
    // (any value, so any value); `next` gets 0 or a cell.
    let dump = support::dump_until(CHAIN, "propagate");
    let facts: Vec<&str> = dump.lines().filter(|l| l.starts_with(";   field")).collect();
    expect![[r#"
        ;   field cell.next: int|object [0, 0] class cell
        ;   field cell.v: value"#]]
    .assert_eq(&facts.join("\n"));
}

#[test]
fn a_byte_field_makes_its_arithmetic_machine_words() {
    // Only bytes are stored: the read is one, `+ 250` cannot overflow,
    // `% 256` of a non-negative word needs no checks.
    facts_then_cleanup(
        r#"entry start(n = 600)

start:
    c = new cell
    c.v = 0
    i = n
    goto loop
loop:
    if i goto bump else goto done
bump:
    v = c.v
    v = v + 250
    v = v % 256
    c.v = v
    i = i - 1
    goto loop
done:
    r = c.v
    print_and_stop(r)
"#,
        expect![[r#"
            ;   field cell.v: int [0, 255]
            main start(v0:n) {
            b0 start:
                v1:c = new cell
                set v1, v, 0
                v2:i = check_bound v0
                jump b1
            b1 loop:
                v3:i = phi [b0: v2, b2: v9]
                branch v3, b2, b3
            b2 bump:
                v6:v = get v1, v
                v7:v = add.word v6, 250
                v8:v = mod.word v7, 256
                set v1, v, v8
                v9:i = sub v3, 1
                jump b1
            b3 done:
                v5:r = get v1, v
                print v5
            }
        "#]],
    );
}

#[test]
fn a_store_into_an_object_of_no_known_class_reaches_every_class() {
    // `put` does not know its object's class: what it stores (any value:
    // a function's parameters are not known) may be in `f` of any object,
    // a `box`'s included.
    check(
        r#"entry start(n = 2)

function put(o, x):
    go:
        o.f = x
        return 0

start:
    b = new box
    b.f = 7
    z = call put(b, :seven) then read
read:
    r = b.f
    print_and_stop(r)
"#,
        "propagate",
        expect![[r#"
            main start() {
            b0 start:
                v0:b = new box
                set v0, f, 7
                v1:z = call put(v0, :seven)
                v2:r = get v0, f
                print v2
            }

            function put(v0:o, v1:x) {
            b0 go:
                set v0, f, v1
                return 0
            }
            ; propagate fields:
            ;   field *.f: value
            ;   field box.f: = 7
            ; propagate main start:
            ;   v0: object class box from new#0
            ;   v1: value
            ;   v2: value
            ;   inline v1:z = call put(v0, :seven)
            ; propagate function put:
            ;   v0: value
            ;   v1: value
        "#]],
    );
}

#[test]
fn a_field_that_keeps_growing_is_widened() {
    // A counter in a field: each round of the solution raises its bound
    // until widening takes it to the word bounds and infinity.
    check(
        r#"entry start(n = 40)

start:
    c = new counter
    c.hits = 0
    i = n
    goto loop
loop:
    if i goto count else goto done
count:
    h = c.hits
    h = h + 1
    c.hits = h
    i = i - 1
    goto loop
done:
    r = c.hits
    print_and_stop(r)
"#,
        "propagate",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:c = new counter
                set v1, hits, 0
                v2:i = check_bound v0
                jump b1
            b1 loop:
                v3:i = phi [b0: v2, b2: v8]
                branch v3, b2, b3
            b2 count:
                v6:h = get v1, hits
                v7:h = add v6, 1
                set v1, hits, v7
                v8:i = sub v3, 1
                jump b1
            b3 done:
                v5:r = get v1, hits
                print v5
            }
            ; propagate fields:
            ;   field counter.hits: int [0, +inf]
            ; propagate main start:
            ;   v0: any
            ;   v1: object class counter from new#0
            ;   v2: value
            ;   v3: value
            ;   v6: int [0, +inf]
            ;   v7: int [1, +inf]
            ;   v8: int
            ;   v5: int [0, +inf]
        "#]],
    );
}

#[test]
fn a_field_no_set_writes_reads_nothing_and_fails() {
    // No `set` of `w` can run: its `get` fails, and code after it is
    // unreachable. Every pass keeps the failure.
    check(
        r#"entry start(n = 1)

start:
    c = new cell
    c.v = n
    w = c.w
    x = w + 1
    print_and_stop(x)
"#,
        "dce",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:c = new cell
                set v1, v, v0
                v2:w = get v1, w
                v3:x = add v2, 1
                print v3
            }
        "#]],
    );
}

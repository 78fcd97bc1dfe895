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
                set.object v1, v, 0
                v2:i = check_bound v0
                jump b1
            b1 loop:
                v3:i = phi [b0: v2, b2: v9]
                branch v3, b2, b3
            b2 bump:
                v6:v = get.object v1, v
                v7:v = add.word v6, 250
                v8:v = mod.word v7, 256
                set.object v1, v, v8
                v9:i = sub v3, 1
                jump b1
            b3 done:
                v5:r = get.object v1, v
                print v5
            }
        "#]],
    );
}

#[test]
fn a_store_into_an_object_of_no_known_class_reaches_every_class() {
    // `put` gets a `box` and a `crate`: it stores into an object of no
    // known class, so what it stores (an atom or 3) may be in `f` of any
    // object, a `box`'s included.
    check(
        r#"entry start(n = 2)

function put(o, x):
    go:
        o.f = x
        return 0

start:
    b = new box
    b.f = 7
    c = new crate
    z = call put(b, :seven) then other
other:
    z = call put(c, 3) then read
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
                v1:c = new crate
                v2:z = call put(v0, :seven)
                v3:z = call put(v1, 3)
                v4:r = get v0, f
                print v4
            }

            function put(v0:o, v1:x) {
            b0 go:
                set v0, f, v1
                return 0
            }
            ; propagate program:
            ;   field *.f: int|atom [3, 3]
            ;   field box.f: = 7
            ;   returns put: = 0
            ; propagate main start:
            ;   v0: object class box from new#0
            ;   v1: object class crate from new#2
            ;   v2: = 0
            ;   v3: = 0
            ;   v4: int|atom [3, 7]
            ;   inline v2:z = call put(v0, :seven)
            ;   inline v3:z = call put(v1, 3)
            ; propagate function put:
            ;   v0: object
            ;   v1: int|atom [3, 3]
        "#]],
    );
}

#[test]
fn what_calls_pass_and_return_is_known_in_and_after_them() {
    // `step` is only ever given a cell and a byte, and returns a cell:
    // its parameters and its callers know so.
    check(
        r#"entry start(n = 3)

function step(c, d):
    go:
        v = c.v
        v = v + d
        v = v % 256
        c.v = v
        return c

start:
    c = new cell
    c.v = 0
    i = n
    goto loop
loop:
    if i goto body else goto done
body:
    c = call step(c, 1) then next
next:
    c = call step(c, 255) then again
again:
    i = i - 1
    goto loop
done:
    r = c.v
    print_and_stop(r)
"#,
        "propagate",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:c = new cell
                set v1, v, 0
                v2:i = check_bound v0
                jump b1
            b1 loop:
                v3:i = phi [b0: v2, b2: v8]
                v4:c = phi [b0: v1, b2: v7]
                branch v3, b2, b5
            b2 body:
                v6:c = call step(v4, 1)
                v7:c = call step(v6, 255)
                v8:i = sub v3, 1
                jump b1
            b5 done:
                v5:r = get v4, v
                print v5
            }

            function step(v0:c, v1:d) {
            b0 go:
                v2:v = get v0, v
                v3:v = add v1, v2
                v4:v = mod v3, 256
                set v0, v, v4
                return v0
            }
            ; propagate program:
            ;   field cell.v: int [0, 255]
            ;   returns step: object class cell
            ; propagate main start:
            ;   v0: any
            ;   v1: object class cell from new#0
            ;   v2: value
            ;   v3: value
            ;   v4: object class cell
            ;   v6: object class cell
            ;   v7: object class cell
            ;   v8: int
            ;   v5: int [0, 255]
            ;   inline v6:c = call step(v4, 1)
            ;   inline v7:c = call step(v6, 255)
            ; propagate function step:
            ;   v0: object class cell
            ;   v1: int [1, 255]
            ;   v2: int [0, 255]
            ;   v3: int [1, 510]
            ;   v4: int [0, 255]
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
            ; propagate program:
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
                set.object v1, v, v0
                v2:w = get.object v1, w
                v3:x = add v2, 1
                print v3
            }
        "#]],
    );
}

/// A program whose main graph is huge (`flowc_ir::HUGE_INSTS`): `head`
/// (the entry fact, functions, the entry label and its first
/// statements), then a long straight run (each step a statement on the
/// environment's `n`, so none folds), then `rest`.
fn huge(head: &str, rest: &str) -> String {
    let mut src = format!("{head}    x = n\n");
    for _ in 0..flowc_ir::HUGE_INSTS {
        src.push_str("    x = x + 1\n");
    }
    src.push_str(rest);
    src
}

/// The `n` trimmed lines after the label ` bump:` in `dump`.
fn bump(dump: &str, n: usize) -> String {
    let lines: Vec<&str> = dump.lines().skip_while(|l| !l.ends_with(" bump:")).skip(1).take(n).map(str::trim).collect();
    lines.join("\n")
}

/// A huge function (`flowc_ir::HUGE_INSTS`: a partially evaluated
/// interpreter's residual program is one) adds what it stores to the
/// facts while they are solved without reading them, then is analyzed
/// once more reading the solution: its byte field's arithmetic becomes
/// machine words too.
#[test]
fn a_huge_function_reads_the_solved_facts() {
    let src = huge(
        "entry start(n = 3)\n\nstart:\n    c = new cell\n    c.v = 0\n",
        "    i = n\n    goto loop\nloop:\n    if i goto bump else goto done\nbump:\n    v = c.v\n    v = v + 1\n    v = v % 256\n    c.v = v\n    i = i - 1\n    goto loop\ndone:\n    r = c.v\n    print_and_stop(r)\n",
    );
    expect![[r#"
        v4007:v = get.object v1, v
        v4008:v = add.word v4007, 1
        v4009:v = mod.word v4008, 256
        set.object v1, v, v4009"#]]
    .assert_eq(&bump(&support::dump_until(&src, "cleanup"), 4));
}

/// A huge function solves the facts of the fields only it writes in its
/// own analysis (`propagate::own_fields`), though it reads no program
/// facts while they are solved: a tape grown leftwards on demand (each
/// new cell linked to the one it was reached from, `n.r = p`, `p.l = n`)
/// and walked back with `p = p.r` stores into its links only what it read
/// from them or made. Its links then hold a cell or 0, so the walk reads
/// and writes proven objects; before, what it read from a link was any
/// value, and so was what it stored there.
#[test]
fn a_huge_function_solves_the_fields_only_it_writes() {
    let src = huge(
        "entry start(n = 3)\n\nstart:\n    p = new cell\n    p.v = 0\n    p.l = 0\n    p.r = 0\n",
        "    k = n
    goto left
left:
    if k goto move else goto back
move:
    q = p.l
    k = k - 1
    if q goto moved else goto grow
grow:
    q = new cell
    q.v = 1
    q.l = 0
    q.r = p
    p.l = q
    goto moved
moved:
    p = q
    goto left
back:
    s = 0
    goto walk
walk:
    if p goto bump else goto done
bump:
    v = p.v
    v = v + 1
    v = v % 256
    p.v = v
    s = s + v
    p = p.r
    goto walk
done:
    print_and_stop(s)
",
    );
    expect![[r#"
        v4007:v = get.object v4005, v
        v4008:v = add.word v4007, 1
        v4009:v = mod.word v4008, 256
        set.object v4005, v, v4009
        v4010:s = add.int v4006, v4009
        v4011:p = get.object v4005, r
        jump b6"#]]
    .assert_eq(&bump(&support::dump_until(&src, "cleanup"), 7));
}

/// A field another function writes is not the huge function's to solve:
/// there it stays any value while the facts are solved. Here `poke`
/// writes the links `l` too (an integer), so the walk along `l` reads
/// what it cannot prove an object, while `v`, which only main writes,
/// is still a byte: its arithmetic takes the `.word` forms.
#[test]
fn a_field_another_function_writes_stays_any_value_in_a_huge_function() {
    let src = huge(
        "entry start(n = 3)\n\nfunction poke(c):\n    s:\n        c.l = 7\n        return 0\n\nstart:\n    p = new cell\n    p.v = 0\n    p.l = 0\n",
        "    k = n
    goto left
left:
    if k goto grow else goto walk
grow:
    q = new cell
    q.v = 1
    q.l = p
    p = q
    k = k - 1
    goto left
walk:
    if p goto bump else goto done
bump:
    v = p.v
    v = v + 1
    v = v % 256
    p.v = v
    z = call poke(p) then poked
poked:
    p = p.l
    goto walk
done:
    print_and_stop(x)
",
    );
    // The walk's reads and writes, up to where `poke` (inlined) writes
    // the link.
    let dump = support::dump_until(&src, "cleanup");
    let body: Vec<&str> = dump
        .lines()
        .skip_while(|l| !l.ends_with(" bump:"))
        .map(str::trim)
        .filter(|l| l.contains(" get") || l.contains(".word") || l.starts_with("set"))
        .take(6)
        .collect();
    expect![[r#"
        v4007:v = get v4005, v
        v4008:v = add.word v4007, 1
        v4009:v = mod.word v4008, 256
        set v4005, v, v4009
        set v4005, l, 7
        v4011:p = get v4005, l"#]]
    .assert_eq(&body.join("\n"));
}

/// A block's reads of a field it read or wrote before take the value read
/// or written there (cleanup's `forward`): `x` is what `a.v` was set to,
/// past a write to `b.v` (another `new`'s object); `y` is `x + 1`, and
/// `c` is `a`, which `b.link` holds. At `mix`, `d` may be `a`: its write
/// forgets `a.v`, read again as `z`, and `w` is `z`.
#[test]
fn a_block_forwards_the_fields_it_read_or_wrote() {
    check(
        r#"entry start(n = 5)

start:
    a = new cell
    b = new cell
    a.v = n
    b.v = 1
    x = a.v
    x = x + 1
    a.v = x
    y = a.v
    b.link = a
    c = b.link
    c.v = y
    if n goto left else goto right
left:
    d = a
    goto mix
right:
    d = b
    goto mix
mix:
    p = a.v
    d.v = 3
    z = a.v
    w = a.v
    s = x + y
    s = s + p
    s = s + z
    s = s + w
    print_and_stop(s)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:a = new cell
                v2:b = new cell
                set.object v1, v, v0
                set.object v2, v, 1
                v4:x = add v0, 1
                set.object v1, v, v4
                set.object v2, link, v1
                set.object v1, v, v4
                branch v0, b1, b2
            b1 left:
                jump b3
            b2 right:
                jump b3
            b3 mix:
                v9:d = phi [b2: v2, b1: v1]
                v8:p = get.object v1, v
                set.object v9, v, 3
                v10:z = get.object v1, v
                v14:s = add v4, v4
                v15:s = add v8, v14
                v16:s = add v10, v15
                v17:s = add v10, v16
                print v17
            }
        "#]],
    );
}

/// A write to an object made by a `new` may be a write to any operand that
/// is not another `new`'s: at `mix`, `c` may be `a`, so after `a.v = 7`
/// the read of `c.v` stays a read (with `n` 5 the program prints 5 + 7 +
/// 1, not 5 + 5 + 1), while `b.v`, another `new`'s, is still the 1 the
/// block read.
#[test]
fn a_write_to_a_new_object_forgets_what_other_operands_held() {
    check(
        r#"entry start(n = 5)

start:
    a = new cell
    b = new cell
    a.v = n
    b.v = 1
    if n goto left else goto right
left:
    c = a
    goto mix
right:
    c = b
    goto mix
mix:
    p = b.v
    x = c.v
    a.v = 7
    y = c.v
    q = b.v
    s = x + y
    s = s + p
    s = s + q
    print_and_stop(s)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:a = new cell
                v2:b = new cell
                set.object v1, v, v0
                set.object v2, v, 1
                branch v0, b1, b2
            b1 left:
                jump b3
            b2 right:
                jump b3
            b3 mix:
                v5:c = phi [b2: v2, b1: v1]
                v4:p = get.object v2, v
                v6:x = get.object v5, v
                set.object v1, v, 7
                v8:y = get.object v5, v
                v10:s = add v6, v8
                v11:s = add v4, v10
                v12:s = add v4, v11
                print v12
            }
        "#]],
    );
}

/// A call may write any field: `rec` writes `a.v` down to 1, so the read
/// after its call, in the same block, stays a read (the program prints
/// 6, not 10).
#[test]
fn a_call_forgets_the_fields_a_block_knew() {
    check(
        r#"entry start(n = 5)

function rec(c, k):
    s:
        if k goto more else goto stop
    more:
        c.v = k
        j = k - 1
        r = call rec(c, j) then back
    back:
        return r
    stop:
        return 0

start:
    a = new cell
    a.v = n
    x = a.v
    r = call rec(a, n) then after
after:
    y = a.v
    s = x + y
    s = s + r
    print_and_stop(s)
"#,
        "cleanup",
        expect![[r#"
            main start(v0:n) {
            b0 start:
                v1:a = new cell
                set.object v1, v, v0
                v3:r = call rec(v1, v0)
                v4:y = get.object v1, v
                v5:s = add v0, v4
                v6:s = add.int 0, v5
                print v6
            }

            function rec(v0:c, v1:k) {
            b0 s:
                branch v1, b1, b3
            b1 more:
                set.object v0, v, v1
                v2:j = sub v1, 1
                v3:r = call rec(v0, v2)
                return 0
            b3 stop:
                return 0
            }
        "#]],
    );
}

/// A huge function that calls takes, while the facts are solved a second
/// time, what its calls may return by the first solution: here a main
/// graph walks a chain right through `step`, which grows it on demand
/// linking each new cell back to the cell it was called with, then walks
/// back along those links. The first solution had main pass any value to
/// `step` (it took no call results), so the links back were any value;
/// the second has it pass the cells `step` returns, so the walk back
/// reads and writes proven objects and its byte arithmetic takes the
/// `.word` forms. (A partially evaluated BF interpreter whose tape moves
/// by a called function is such a program.)
#[test]
fn a_huge_function_takes_what_its_calls_return_by_a_first_solution() {
    let src = huge(
        "entry start(n = 3)

function step(t):
    s:
        r = t.r
        if r is cell goto moved else goto grow
    grow:
        r = new cell
        r.v = 1
        r.l = t
        r.r = 0
        t.r = r
        goto moved
    moved:
        return r

start:
    p = new cell
    p.v = 0
    p.l = 0
    p.r = 0
",
        "    k = n
    goto right
right:
    if k goto go else goto walk
go:
    p = call step(p) then stepped
stepped:
    k = k - 1
    goto right
walk:
    if p goto bump else goto done
bump:
    v = p.v
    v = v + 1
    v = v % 256
    p.v = v
    p = p.l
    goto walk
done:
    print_and_stop(k)
",
    );
    expect![[r#"
        v4007:v = get.object v4005, v
        v4008:v = add.word v4007, 1
        v4009:v = mod.word v4008, 256
        set.object v4005, v, v4009
        v4010:p = get.object v4005, l"#]]
    .assert_eq(&bump(&support::dump_until(&src, "cleanup"), 5));
}

/// A chain of calls each given what the one before returned — the shape
/// of a run-length BF interpreter's residual program, whose walks
/// `tape = call move1(tape)`, `move2`, ... grow the tape — settles one
/// call per two rounds (a walk's parameter, then its result): twelve walks
/// take more rounds than [`flowc_passes::propagate::MAX_ROUNDS`], and the
/// facts are solved still, within the work they may take, the links a cell
/// or 0 (given up there before, every link was any value and tested for
/// its class).
#[test]
fn a_chain_of_calls_longer_than_the_rounds_settles() {
    let walks = 12;
    let mut src = String::from("entry start(n = 3)\n\n");
    for k in 1..=walks {
        src.push_str(&format!(
            "function move{k}(t):
    go:
        r = t.r
        if r is cell goto moved else goto grow
    moved:
        return r
    grow:
        r = new cell
        r.v = 0
        r.r = 0
        r.l = t
        t.r = r
        return r

"
        ));
    }
    src.push_str("start:\n    c = new cell\n    c.v = 7\n    c.l = 0\n    c.r = 0\n    goto s1\n");
    for k in 1..=walks {
        let next = if k == walks { "back".to_string() } else { format!("s{}", k + 1) };
        src.push_str(&format!("s{k}:\n    c = call move{k}(c) then {next}\n"));
    }
    src.push_str(
        "back:
    l = c.l
    if l is cell goto left else goto done
left:
    c = l
    goto back
done:
    v = c.v
    print_and_stop(v)
",
    );
    let dump = support::dump_until(&src, "propagate");
    let facts: Vec<&str> =
        dump.lines().filter(|l| l.starts_with(";   field") || l == &"; propagate program:").collect();
    expect![[r#"
        ; propagate program:
        ;   field cell.l: int|object [0, 0] class cell
        ;   field cell.r: int|object [0, 0] class cell
        ;   field cell.v: int [0, 7]"#]]
    .assert_eq(&facts.join("\n"));
}

/// The one class whose objects may have a field set
/// (`ProgramFacts::owner`): a `get` of the field that succeeds read one of
/// them. `CHAIN` sets `v` and `next` of cells alone; a field two classes
/// set has no owner, nor one `put` sets on objects of no known class, nor
/// one never set.
#[test]
fn a_field_set_on_objects_of_one_class_alone_is_that_classs() {
    use flowc_lang::Symbol;
    let owner = |src: &str, field: &str| {
        let (_, module) = support::lower(src);
        flowc_passes::propagate::program_facts(&module).owner(Symbol::intern(field)).map(|c| c.to_string())
    };
    assert_eq!(owner(CHAIN, "v").as_deref(), Some("cell"));
    assert_eq!(owner(CHAIN, "next").as_deref(), Some("cell"));
    assert_eq!(owner(CHAIN, "w"), None);
    let two = "entry start(n = 2)\nstart:\n    a = new box\n    a.f = 1\n    b = new crate\n    b.f = 2\n    r = a.f\n    print_and_stop(r)\n";
    assert_eq!(owner(two, "f"), None);
    let by_call = "entry start(n = 2)\nfunction put(o, x):\n    go:\n        o.f = x\n        return 0\nstart:\n    b = new box\n    z = call put(b, 7) then read\nread:\n    r = b.f\n    print_and_stop(r)\n";
    assert_eq!(owner(by_call, "f").as_deref(), Some("box"));
    let unknown = "entry start(n = 2)\nfunction put(o, x):\n    go:\n        o.f = x\n        return 0\nstart:\n    b = new box\n    c = new crate\n    z = call put(b, 7) then other\nother:\n    z = call put(c, 3) then read\nread:\n    r = b.f\n    print_and_stop(r)\n";
    assert_eq!(owner(unknown, "f"), None);
}

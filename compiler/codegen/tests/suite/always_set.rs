//! Fields no read finds unset (`lower::fields_always_set`): every `new`
//! of the program is followed in its block, before anything that may read
//! a field, by a `set` of them, so a `get` of one loads the slot without
//! the unset test. Which fields qualify, shape by shape; that the test is
//! gone from compiled code; and that a field some object may lack keeps
//! it, and its error.

use flowc_codegen::{fields_always_set, Native};

use super::chains::{code_of, run_with_n, WALK};

/// The fields always set of `functions`, by name, sorted (symbols order
/// by when they were interned, which the tests running at once decide).
fn names(functions: &[flowc_ir::Function]) -> Vec<String> {
    let mut names: Vec<String> = fields_always_set(functions).iter().map(|s| s.to_string()).collect();
    names.sort();
    names
}

fn always_set(text: &str) -> Vec<String> {
    names(&flowc_ir::parse::module("shapes", text).expect("it parses").functions)
}

#[test]
fn the_fields_every_new_sets_at_once_are_always_set() {
    // Both sites set `v` and `next` at once (other objects made and
    // integers computed between); only one sets `w`.
    let both = "main start(v0:n) {
b0 start:
    v1:a = new node
    v2:t = add v0, 1
    set.object v1, v, v2
    v3:b = new node
    set.object v3, v, 0
    set.object v3, next, 0
    set.object v1, next, v3
    set.object v1, w, 5
    v4:x = get.object v1, w
    print v4
}
";
    assert_eq!(always_set(both), ["next", "v"]);
}

#[test]
fn a_read_a_call_or_the_blocks_end_before_the_set_leaves_a_field_unproven() {
    // A `get` between `new` and the `set` of `v`: `next` was set before it.
    let read = "main start(v0:n) {
b0 start:
    v1:a = new node
    set.object v1, next, 0
    v2:x = get.object v1, next
    set.object v1, v, v2
    print v2
}
";
    assert_eq!(always_set(read), ["next"]);
    // The `set` in the next block.
    let later = "main start(v0:n) {
b0 start:
    v1:a = new node
    set.object v1, next, 0
    jump b1
b1 more:
    set.object v1, v, 1
    v2:x = get.object v1, v
    print v2
}
";
    assert_eq!(always_set(later), ["next"]);
    // A call between: it may read the object's fields.
    let called = "function look(v0:p) {
b0 look_entry:
    v1:x = get.object v0, next
    return v1
}
main start(v0:n) {
b0 start:
    v1:a = new node
    set.object v1, next, 0
    v2:x = call look(v1)
    set.object v1, v, 1
    print v2
}
";
    assert_eq!(always_set(called), ["next"]);
    // No object is ever made: no read finds one unset.
    let none = "main start(v0:n) {
b0 start:
    v1:x = get v0, v
    print v1
}
";
    assert_eq!(always_set(none), ["v"]);
}

/// `main` builds a chain of `n` nodes whose `v` is set at once, then
/// `walk` sums it; with `lacks_v`, one more node is made whose `v` is set
/// only after a read of it, so `v` is not always set.
fn chain(lacks_v: bool) -> String {
    let extra = if lacks_v {
        "    v20:odd = new node\n    set.object v20, next, 0\n    v21:peek = get.object v20, next\n    \
         set.object v20, v, v21\n"
    } else {
        ""
    };
    format!(
        "{WALK}main start(v0:n) {{\nb0 start:\n{extra}    jump b1\nb1 head:\n    v9:head = phi [b0: 0, b2: v5]\n    \
         v4:k = phi [b0: v0, b2: v8]\n    branch v4, b2, b3\nb2 push:\n    v5:c = new node\n    \
         set.object v5, v, v4\n    set.object v5, next, v9\n    v8:k = sub v4, 1\n    jump b1\n\
         b3 done:\n    v11:s = call walk(v9)\n    print v11\n}}\n"
    )
}

#[test]
fn a_walk_loads_always_set_fields_without_testing_them() {
    let n = 500;
    let run = |lacks_v: bool| {
        let text = chain(lacks_v);
        flowc_codegen::with_stack(move || {
            let m = flowc_ir::parse::module("chain", &text).unwrap();
            let always = names(&m.functions);
            let native = Native::compile(&m).unwrap();
            (always, code_of(&native, "walk").len(), run_with_n(&native, n))
        })
    };
    let (always, tested_not, out) = run(false);
    assert_eq!(always, ["next", "v"]);
    assert_eq!(out, Ok((n * (n + 1) / 2).to_string()));
    let (always, tested, out) = run(true);
    assert_eq!(always, ["next"]);
    assert_eq!(out, Ok((n * (n + 1) / 2).to_string()));
    // The same walk, its `v` loads tested in one and not the other.
    assert!(tested_not < tested, "{tested_not} bytes without the test, {tested} with it");
}

#[test]
fn a_field_some_object_lacks_still_fails_as_unset() {
    // Every node but the last gets `v` at once; the last gets only
    // `next`, so `v` is not always set, and the walk's read of it fails.
    let text = format!(
        "{WALK}main start(v0:n) {{
b0 start:
    v1:last = new node
    set.object v1, next, 0
    jump b1
b1 head:
    v9:head = phi [b0: v1, b2: v5]
    v4:k = phi [b0: v0, b2: v8]
    branch v4, b2, b3
b2 push:
    v5:c = new node
    set.object v5, v, v4
    set.object v5, next, v9
    v8:k = sub v4, 1
    jump b1
b3 done:
    v11:s = call walk(v9)
    print v11
}}
"
    );
    let (always, out) = flowc_codegen::with_stack(move || {
        let m = flowc_ir::parse::module("lacking", &text).unwrap();
        let always = names(&m.functions);
        let native = Native::compile(&m).unwrap();
        (always, run_with_n(&native, 300))
    });
    assert_eq!(always, ["next"]);
    let err = out.expect_err("the last node's v is unset");
    assert!(err.contains("unset"), "{err}");
}

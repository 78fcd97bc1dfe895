//! Whether a module's allocations are observable (`flowc_passes::observe`):
//! objects reaching a print, through phis, fields, returns and parameters.

use flowc_passes::observe::*;

fn observable(src: &str) -> bool {
    let program = flowc_lang::syntax::parse("test", src).unwrap_or_else(|e| panic!("{e}"));
    let entry = program.default_entry().expect("an entry");
    allocations_observable(&flowc_frontend::lower(&program, entry).expect("lowers"))
}

#[test]
fn printing_integers_observes_nothing() {
    assert!(!observable(
        r#"main:
    p = new point
    p.x = 3
    x = p.x
    print_and_stop(x)
"#
    ));
}

#[test]
fn objects_printed_directly_or_through_phis() {
    assert!(observable(
        r#"main:
    p = new point
    print_and_stop(p)
"#
    ));
    assert!(observable(
        r#"main:
    p = new point
    if n goto a else goto b
a:
    q = p
    goto c
b:
    q = 0
    goto c
c:
    print_and_stop(q)
"#
    ));
}

#[test]
fn objects_flow_through_fields_and_returns() {
    let through_field = r#"main:
    box = new box
    p = new point
    box.item = p
    r = call get(box) then show
show:
    print_and_stop(r)

function get(b):
    s:
        x = b.item
        return x
"#;
    assert!(observable(through_field));
    let other_field = through_field.replace("x = b.item", "x = b.other");
    assert!(!observable(&other_field));
    let through_return = r#"main:
    r = call make() then show
show:
    print_and_stop(r)

function make():
    s:
        p = new point
        return p
"#;
    assert!(observable(through_return));
    let integer_return = through_return.replace("return p", "return 1");
    assert!(!observable(&integer_return));
}

#[test]
fn parameters_of_functions_may_be_objects_and_of_the_main_graph_not() {
    let echo = r#"main:
    r = call echo(n) then show
show:
    print_and_stop(r)

function echo(x):
    s:
        return x
"#;
    // `echo` returns its parameter, which may be an object.
    assert!(observable(echo));
    assert!(!observable(
        r#"main:
    print_and_stop(n)
"#
    ));
}

#[test]
fn loops_of_phis_end_the_search() {
    // `i` is a phi of itself and of integers: the search visits it once.
    let counting = r#"main:
    i = 3
    goto head
head:
    if i goto body else goto done
body:
    j = i
    i = sub(j, 1)
    goto head
done:
    print_and_stop(i)
"#;
    assert!(!observable(counting));
    let with_object = counting.replace("i = 3", "i = new point");
    assert!(observable(&with_object));
}

//! Static bounds on how often each block runs (`flowc_ir::frequency`).

use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::frequency::*;
use flowc_ir::ix;
use flowc_ir::loops::LoopForest;
use flowc_ir::Function;

/// `f`'s block bounds, from control-flow views computed here.
fn bounds_of(f: &Function) -> RunBounds {
    let cfg = Cfg::new(f);
    let dom = DomTree::new(f, &cfg);
    let loops = LoopForest::with(f, &cfg, &dom);
    RunBounds::new(f, &cfg, &dom, &loops, &cfg.cycles())
}

fn bounds(text: &str) -> String {
    let f = &flowc_ir::parse::function("test.ir", text).expect("parses");
    let r = bounds_of(f);
    f.layout
        .iter()
        .map(|&b| format!("b{}: {}\n", ix(b), r.at_most(b).map_or("-".to_string(), |n| n.to_string())))
        .collect()
}

#[test]
fn counted_loops_nest_into_products_and_other_loops_have_no_bound() {
    // An outer loop counting 3 down, an inner one counting 4 down, a
    // loop whose counter does not count down, one whose counter goes
    // to 0 at once, and one counting down by adding -1 to it.
    let text = "
main start(v0:n) {
b0:
    jump b1
b1:
    v1:k = phi [b0: 3, b5: v2]
    branch v1, b2, b6
b2:
    jump b3
b3:
    v3:j = phi [b2: 4, b4: v4]
    branch v3, b4, b5
b4:
    v4:j = sub.word v3, 1
    jump b3
b5:
    v2:k = add v1, -1
    jump b1
b6:
    jump b7
b7:
    v5:i = phi [b6: 2, b7: v5]
    branch v5, b7, b8
b8:
    jump b9
b9:
    v6:m = phi [b8: 5, b9: 0]
    branch v6, b9, b10
b10:
    jump b11
b11:
    v7:q = phi [b10: 2, b12: v8]
    branch v7, b12, b13
b12:
    v8:q = add -1, v7
    jump b11
b13:
    print v0
}
";
    expect_test::expect![[r#"
            b0: 1
            b1: 4
            b2: 4
            b3: 20
            b4: 20
            b5: 4
            b6: 1
            b7: -
            b8: 1
            b9: 6
            b10: 1
            b11: 3
            b12: 3
            b13: 1
        "#]]
    .assert_eq(&bounds(text));
}

#[test]
fn a_negative_start_or_a_reversed_branch_bounds_nothing() {
    let text = "
main start(v0:n) {
b0:
    jump b1
b1:
    v1:k = phi [b0: -1, b2: v2]
    branch v1, b2, b3
b2:
    v2:k = sub v1, 1
    jump b1
b3:
    jump b4
b4:
    v3:k = phi [b3: 2, b5: v4]
    branch v3, b6, b5
b5:
    v4:k = sub v3, 1
    jump b4
b6:
    print v0
}
";
    expect_test::expect![[r#"
            b0: 1
            b1: -
            b2: -
            b3: 1
            b4: -
            b5: -
            b6: 1
        "#]]
    .assert_eq(&bounds(text));
}

#[test]
fn an_irreducible_cycle_bounds_no_block_on_a_cycle() {
    // b1 and b2 jump to each other and are both entered from b0; b3
    // is a counted loop.
    let text = "
main start(v0:n) {
b0:
    branch v0, b1, b2
b1:
    branch v0, b2, b3
b2:
    jump b1
b3:
    jump b4
b4:
    v1:k = phi [b3: 2, b4: 0]
    branch v1, b4, b5
b5:
    print v0
}
";
    expect_test::expect![[r#"
            b0: 1
            b1: -
            b2: -
            b3: 1
            b4: -
            b5: 1
        "#]]
    .assert_eq(&bounds(text));
}

/// Each function's runs per run of the module's first function, by name.
fn runs(text: &str) -> String {
    let m = flowc_ir::parse::module("test.ir", text).expect("parses");
    let bounds: Vec<RunBounds> = m.functions.iter().map(bounds_of).collect();
    let functions: Vec<&Function> = m.functions.iter().collect();
    let runs = function_runs(&functions, &bounds.iter().collect::<Vec<_>>(), &[0]);
    functions
        .iter()
        .zip(runs)
        .map(|(f, r)| format!("{}: {}\n", f.name, r.map_or("-".to_string(), |n| n.to_string())))
        .collect()
}

#[test]
fn functions_run_as_often_as_their_call_sites_sum_up_to() {
    // main calls `twice` in a loop counted down from 4 (5 header runs,
    // 4 body runs: the body's bound is its header's, 5) and once after
    // it; `twice` calls `leaf` twice; `hot` is called from a loop with
    // no bound and calls `below`, which `rec` calls too; `rec` calls
    // itself; nobody calls `unused`, which calls `leaf`.
    let text = "
main start(v0:n) {
b0:
    jump b1
b1:
    v1:k = phi [b0: 4, b2: v2]
    branch v1, b2, b3
b2:
    v3:x = call twice(v1)
    v2:k = sub v1, 1
    jump b1
b3:
    v4:y = call twice(v0)
    v5:z = call rec(v0)
    jump b4
b4:
    v6:i = phi [b3: v0, b5: v7]
    branch v6, b5, b6
b5:
    v8:w = call hot(v6)
    v7:i = sub v6, 1
    jump b4
b6:
    print v4
}

function twice(v0:x) {
b0:
    v1:a = call leaf(v0)
    v2:b = call leaf(v1)
    return v2
}

function leaf(v0:x) {
b0:
    return v0
}

function hot(v0:x) {
b0:
    v1:a = call below(v0)
    return v1
}

function rec(v0:x) {
b0:
    branch v0, b1, b2
b1:
    v1:a = call rec(v0)
    v2:b = call below(v1)
    return v2
b2:
    return v0
}

function below(v0:x) {
b0:
    return v0
}

function unused(v0:x) {
b0:
    v1:a = call leaf(v0)
    return v1
}
";
    expect_test::expect![[r#"
            start: 1
            twice: 6
            leaf: 12
            hot: -
            rec: -
            below: -
            unused: 0
        "#]]
    .assert_eq(&runs(text));
}

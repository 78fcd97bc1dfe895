//! Surely bound values (`flowc_ir::bound`), whole and one question at a time.

use flowc_ir::bound::*;
use flowc_ir::ix;

/// The surely bound values of the first function of `text`.
fn bound_values(text: &str) -> Vec<String> {
    let m = flowc_ir::parse::module("test", text).unwrap();
    let f = &m.functions[0];
    let bound = surely_bound(f);
    f.values.iter().map(|(v, _)| v).filter(|v| bound[ix(*v)]).map(flowc_ir::print::value_ref).collect()
}

#[test]
fn phis_are_bound_unless_an_unbound_value_reaches_them() {
    // v1 cycles with v3 and is fed only bound values: bound. v4 merges
    // the main graph's parameter v0 (maybe unbound), and v5 takes v4:
    // neither is bound. v2 is an `unbound`.
    let text = "main start(v0:n) {\nb0 start:\n    v2:u = unbound u\n    jump b1\nb1 loop:\n    \
                    v1:i = phi [b0: 0, b2: v3]\n    v4:m = phi [b0: v0, b2: v4]\n    v6:c = lt v1, 10\n    \
                    branch v6, b2, b3\nb2 body:\n    v3:i = add v1, 1\n    jump b1\nb3 done:\n    \
                    jump b4\nb4 out:\n    v5:m = phi [b3: v4]\n    print v5\n}\n";
    assert_eq!(bound_values(text), ["v1", "v3", "v6"]);
    // One question at a time gives the same answers, in any order.
    let m = flowc_ir::parse::module("test", text).unwrap();
    let f = &m.functions[0];
    let mut query = BoundQuery::new(f);
    let mut asked: Vec<String> = Vec::new();
    for (v, _) in f.values.iter().collect::<Vec<_>>().into_iter().rev() {
        if query.is_bound(f, v) {
            asked.push(flowc_ir::print::value_ref(v));
        }
    }
    asked.reverse();
    assert_eq!(asked, ["v1", "v3", "v6"]);
}

#[test]
fn many_questions_fall_back_to_the_whole_analysis() {
    let text = "main start(v0:n) {\nb0 start:\n    jump b1\nb1 loop:\n    v1:i = phi [b0: 0, b2: v3]\n    \
                    v2:m = phi [b0: v0, b2: v2]\n    v4:c = lt v1, 10\n    branch v4, b2, b3\nb2 body:\n    \
                    v3:i = add v1, 1\n    jump b1\nb3 done:\n    print v2\n}\n";
    let m = flowc_ir::parse::module("test", text).unwrap();
    let f = &m.functions[0];
    let mut query = BoundQuery::with_budget(1);
    let answers: Vec<bool> = f.values.iter().map(|(v, _)| query.is_bound(f, v)).collect();
    assert!(query.fell_back(), "the budget ran out");
    let full = surely_bound(f);
    assert_eq!(answers, f.values.iter().map(|(v, _)| full[ix(v)]).collect::<Vec<_>>());
}

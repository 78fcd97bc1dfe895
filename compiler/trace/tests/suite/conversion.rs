//! Converting a recorded trace to IR (`to_ir`): past a promotion the
//! variable is its constant, operations on constants fold as they are
//! converted, and a guard on a constant the recording passed is left out
//! — an interpreter's dispatch on its promoted position reaches the
//! optimizer already folded.

use expect_test::expect;
use flowc_lang::{env, syntax, Symbol, Value};
use flowc_trace::record::{record, Heap, Recorded};
use flowc_trace::to_ir;

#[test]
fn a_promoted_variable_folds_what_is_computed_from_it() {
    let src = r#"loop:
    promote k then body
body:
    d = k * 2
    e = d + 1
    c = e == 7
    if c goto yes else goto no
yes:
    s = s + e
    i = i - 1
    if i goto loop else goto done
no:
    print_and_stop(0)
done:
    print_and_stop(s)
"#;
    let program = syntax::parse("test", src).unwrap();
    let start: Vec<(Symbol, Value)> =
        [("k", 3), ("s", 0), ("i", 5)].into_iter().map(|(n, v)| (Symbol::intern(n), Value::Int(v))).collect();
    let mut heap = Heap::new(&program);
    let Recorded::Loop { trace, env } =
        record(&program, Symbol::intern("loop"), env::from_pairs(&start), &mut heap, 10_000).unwrap()
    else {
        panic!("the loop did not close")
    };
    let f = to_ir::to_ir(&program, &trace, &env);
    flowc_ir_checker::check(&f).unwrap();
    expect![[r#"
        trace loop(v0:k, v1:s, v2:i, v3:d, v4:e, v5:c) {
        b0:
            jump b1
        b1 loop:
            v6:d = phi [b0: v3, b1: 6]
            v7:e = phi [b0: v4, b1: 7]
            v8:c = phi [b0: v5, b1: 1]
            v9:s = phi [b0: v1, b1: v11]
            v10:i = phi [b0: v2, b1: v12]
            guard_value v0, 3, r0 else body
            v11:s = add v9, 7
            v12:i = sub v10, 1
            guard_true v12, r1 else done
            jump b1
        resume r0 {
            frame [k = v0, s = v9, i = v10, d = v6, e = v7, c = v8]
        }
        resume r1 {
            frame [k = 3, s = v11, i = v12, d = 6, e = 7, c = 1]
        }
        }
    "#]]
    .assert_eq(&flowc_ir::print::function(&f));
}

//! Beyond the series: the SSA trace optimizer uses PyPy's hints — reads of
//! immutable fields of a promoted object fold, calls of pure functions with
//! constant arguments fold — and removes allocations that do not escape.

use std::rc::Rc;

use expect_test::{expect, Expect};
use flowc_lang::value::Object;
use flowc_lang::{env, syntax, Symbol, Value};
use flowc_trace::record::{record, Heap, Recorded};
use flowc_trace::{opt, ssa, to_ir};

/// Records from `label` with `start`, optimizes, checks, snapshots the trace
/// IR, runs it and returns what the program prints.
fn check(src: &str, label: &str, start: Vec<(&str, Value)>, remove_allocations: bool, expected: Expect) -> String {
    let program = syntax::parse("test", src).unwrap();
    let start: Vec<(Symbol, Value)> = start.into_iter().map(|(k, v)| (Symbol::intern(k), v)).collect();
    let mut heap = Heap { allocations: 10 };
    let Recorded::Loop { trace, env } =
        record(&program, Symbol::intern(label), env::from_pairs(&start), &mut heap, 10_000).unwrap()
    else {
        panic!("the loop did not close")
    };
    let mut f = to_ir::to_ir(&program, &trace, &env);
    flowc_ir_checker::check(&f).unwrap();
    opt::optimize(&mut f, &ssa::hints(&program), remove_allocations);
    if let Err(vs) = flowc_ir_checker::check(&f) {
        panic!("{vs:?}");
    }
    expected.assert_eq(&flowc_ir::print::function(&f));
    let config = flowc_lang::interp::Config::default();
    ssa::execute(&program, &f, env, &mut heap, &config).unwrap().to_print_string()
}

#[test]
fn promoted_object_immutable_fields_fold() {
    let src = "immutable config(step, limit)\n\nloop:\n    promote cfg then body\nbody:\n    s = cfg.step\n    l = cfg.limit\n    \
               i = i + s\n    c = i < l\n    if c goto loop else goto done\ndone:\n    print_and_stop(i)\n";
    let cfg = Rc::new(Object::new(1, Symbol::intern("config")));
    cfg.set(Symbol::intern("step"), Value::Int(3));
    cfg.set(Symbol::intern("limit"), Value::Int(30));
    let out = check(
        src,
        "loop",
        vec![("cfg", Value::Object(cfg)), ("i", Value::Int(0))],
        false,
        expect![[r#"
            trace loop(v0:cfg, v1:i, v2:s, v3:l, v4:c) {
            b0:
                guard_value v0, <config#1>, r2 else loop
                jump b1
            b1 loop:
                v7:i = phi [b0: v1, b1: v11]
                v11:i = add v7, 3
                v12:c = lt.int v11, 30
                guard_true v12, r1 else done
                jump b1
            resume r1 {
                frame [cfg = <config#1>, i = v11, s = 3, l = 30, c = v12]
            }
            resume r2 {
                frame [cfg = v0, i = v1, s = v2, l = v3, c = v4]
            }
            }
        "#]],
    );
    assert_eq!(out, "30");
}

#[test]
fn pure_calls_with_constant_arguments_fold() {
    let src = "pure scale\n\nfunction scale(k):\n    s:\n        r = k * 10\n        return r\n\nloop:\n    \
               promote k then body\nbody:\n    d = call scale(k) then add\nadd:\n    i = i + d\n    c = i < 100\n    \
               if c goto loop else goto done\ndone:\n    print_and_stop(i)\n";
    let out = check(
        src,
        "loop",
        vec![("k", Value::Int(2)), ("i", Value::Int(0))],
        false,
        expect![[r#"
            trace loop(v0:k, v1:i, v2:d, v3:c) {
            b0:
                guard_value v0, 2, r2 else loop
                jump b1
            b1 loop:
                v4:i = phi [b0: v1, b1: v8]
                v8:i = add v4, 20
                v9:c = lt.int v8, 100
                guard_true v9, r1 else done
                jump b1
            resume r1 {
                frame [k = 2, i = v8, d = 20, c = v9]
            }
            resume r2 {
                frame [k = v0, i = v1, d = v2, c = v3]
            }
            }
        "#]],
    );
    assert_eq!(out, "100");
}

#[test]
fn allocations_that_do_not_escape_are_removed() {
    let src = "loop:\n    p = new point\n    p.x = i\n    p.y = 2\n    a = p.x\n    b = p.y\n    s = a * b\n    \
               t = t + s\n    i = i + 1\n    c = i < 10\n    if c goto loop else goto done\ndone:\n    print_and_stop(t)\n";
    let out = check(
        src,
        "loop",
        vec![("i", Value::Int(0)), ("t", Value::Int(0))],
        true,
        expect![[r#"
        trace loop(v0:i, v1:t, v2:p, v3:a, v4:b, v5:s, v6:c) {
        b0:
            jump b1
        b1 loop:
            v11:t = phi [b0: v1, b1: v18]
            v12:i = phi [b0: v0, b1: v19]
            v17:s = mul v12, 2
            v18:t = add v11, v17
            v19:i = add v12, 1
            v20:c = lt.int v19, 10
            guard_true v20, r0 else done
            jump b1
        resume r0 {
            frame [i = v19, t = v18, p = @0, a = v12, b = 2, s = v17, c = v20]
            virtual @0 point [x = v12, y = 2]
        }
        }
    "#]],
    );
    assert_eq!(out, "90");
}

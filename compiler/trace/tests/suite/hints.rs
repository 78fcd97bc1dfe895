//! Beyond the series: the SSA trace optimizer uses PyPy's hints — reads of
//! immutable fields of a promoted object fold, calls of pure functions with
//! constant arguments fold — and removes allocations that do not escape.

use expect_test::{expect, Expect};
use flowc_lang::heap::Obj;
use flowc_lang::{env, syntax, Symbol, Value};
use flowc_trace::record::{record, Heap, Recorded};
use flowc_trace::{opt, run_ir, to_ir};

/// Records from `label` with `start`, optimizes, checks, snapshots the trace
/// IR, runs it and returns what the program prints.
fn check(src: &str, label: &str, start: Vec<(&str, Value)>, remove_allocations: bool, expected: Expect) -> String {
    let program = syntax::parse("test", src).unwrap();
    let start: Vec<(Symbol, Value)> = start.into_iter().map(|(k, v)| (Symbol::intern(k), v)).collect();
    let mut heap = Heap { allocations: 10, ..Heap::new(&program) };
    let Recorded::Loop { trace, env } =
        record(&program, Symbol::intern(label), env::from_pairs(&start), &mut heap, 10_000).unwrap()
    else {
        panic!("the loop did not close")
    };
    let mut f = to_ir::to_ir(&program, &trace, &env);
    flowc_ir_checker::check(&f).unwrap();
    let lowered = flowc_frontend::lower(&program, Symbol::intern(label)).unwrap();
    let hints = run_ir::hints(&lowered);
    opt::optimize(&mut f, &hints, remove_allocations);
    if let Err(vs) = flowc_ir_checker::check(&f) {
        panic!("{vs:?}");
    }
    expected.assert_eq(&flowc_ir::print::function(&f));
    let config = flowc_lang::interp::Config::default();
    run_ir::execute(&program, &hints, &f, env, &mut heap, &config, false).unwrap().to_print_string()
}

#[test]
fn promoted_object_immutable_fields_fold() {
    let src = r#"immutable config(step, limit)

loop:
    promote cfg then body
body:
    s = cfg.step
    l = cfg.limit
    i = i + s
    c = i < l
    if c goto loop else goto done
done:
    print_and_stop(i)
"#;
    let layout = syntax::parse("test", src).unwrap().layout();
    let cfg = Obj::new(1, Symbol::intern("config"), layout);
    cfg.set(Symbol::intern("step"), Value::Int(3)).unwrap();
    cfg.set(Symbol::intern("limit"), Value::Int(30)).unwrap();
    let out = check(
        src,
        "loop",
        vec![("cfg", Value::Object(cfg)), ("i", Value::Int(0))],
        false,
        expect![[r#"
            trace loop(v0:cfg, v1:i, v2:s, v3:l, v4:c) {
            b0:
                jump b1
            b1 loop:
                guard_value v0, <config#1>, r0 else body
                v11:i = add v1, 3
                v12:c = lt.int v11, 30
                guard_true v12, r1 else done
                jump b2
            b2 loop:
                v15:i = phi [b1: v11, b2: v19]
                v19:i = add.int v15, 3
                v20:c = lt.int v19, 30
                guard_true v20, r3 else done
                jump b2
            resume r0 {
                frame [cfg = v0, i = v1, s = v2, l = v3, c = v4]
            }
            resume r1 {
                frame [cfg = <config#1>, i = v11, s = 3, l = 30, c = v12]
            }
            resume r3 {
                frame [cfg = <config#1>, i = v19, s = 3, l = 30, c = v20]
            }
            }
        "#]],
    );
    assert_eq!(out, "30");
}

#[test]
fn pure_calls_with_constant_arguments_fold() {
    let src = r#"pure scale

function scale(k):
    s:
        r = k * 10
        return r

loop:
    promote k then body
body:
    d = call scale(k) then add
add:
    i = i + d
    c = i < 100
    if c goto loop else goto done
done:
    print_and_stop(i)
"#;
    let out = check(
        src,
        "loop",
        vec![("k", Value::Int(2)), ("i", Value::Int(0))],
        false,
        expect![[r#"
            trace loop(v0:k, v1:i, v2:d, v3:c) {
            b0:
                jump b1
            b1 loop:
                guard_value v0, 2, r0 else body
                v8:i = add v1, 20
                v9:c = lt.int v8, 100
                guard_true v9, r1 else done
                jump b2
            b2 loop:
                v11:i = phi [b1: v8, b2: v14]
                v14:i = add.int v11, 20
                v15:c = lt.int v14, 100
                guard_true v15, r3 else done
                jump b2
            resume r0 {
                frame [k = v0, i = v1, d = v2, c = v3]
            }
            resume r1 {
                frame [k = 2, i = v8, d = 20, c = v9]
            }
            resume r3 {
                frame [k = 2, i = v14, d = 20, c = v15]
            }
            }
        "#]],
    );
    assert_eq!(out, "100");
}

#[test]
fn allocations_that_do_not_escape_are_removed() {
    let src = r#"loop:
    p = new point
    p.x = i
    p.y = 2
    a = p.x
    b = p.y
    s = a * b
    t = t + s
    i = i + 1
    c = i < 10
    if c goto loop else goto done
done:
    print_and_stop(t)
"#;
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
                v17:s = mul v0, 2
                v18:t = add v1, v17
                v19:i = add.int v0, 1
                v20:c = lt.int v19, 10
                guard_true v20, r0 else done
                jump b2
            b2 loop:
                v25:t = phi [b1: v18, b2: v32]
                v26:i = phi [b1: v19, b2: v33]
                v31:s = mul.int v26, 2
                v32:t = add.int v25, v31
                v33:i = add.int v26, 1
                v34:c = lt.int v33, 10
                guard_true v34, r1 else done
                jump b2
            resume r0 {
                frame [i = v19, t = v18, p = @0, a = v0, b = 2, s = v17, c = v20]
                virtual @0 point [x = v0, y = 2]
            }
            resume r1 {
                frame [i = v33, t = v32, p = @0, a = v26, b = 2, s = v31, c = v34]
                virtual @0 point [x = v26, y = 2]
            }
            }
        "#]],
    );
    assert_eq!(out, "90");
}

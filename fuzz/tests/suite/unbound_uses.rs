//! Bugs the valid-IR fuzzer (`flowc-fuzz valid`) found, all about the IR's
//! rule that every use of an unbound value but a phi input raises
//! `key_not_found`: each module must end in `key_not_found(u)` in the IR
//! interpreter before and after the passes and in native code before and
//! after them.

use flowc_ir::Module;
use flowc_lang::interp::Config;

fn outcome(m: &Module, native: bool) -> String {
    let r = if native {
        flowc_codegen::Native::compile(m).expect("compiles").run(&[], Config::default().max_depth)
    } else {
        flowc_ir::interp::run(m, &[], &Config::default())
    };
    match r {
        Ok(o) => o.output(),
        Err(e) => e.kind.term(),
    }
}

fn raises_key_not_found_everywhere(text: &str) {
    let text = text.to_owned();
    flowc_codegen::with_stack(move || check(&text));
}

fn check(text: &str) {
    let module = flowc_ir::parse::module("t.ir", text).unwrap();
    flowc_ir_checker::check_module(&module).unwrap();
    let mut optimized = module.clone();
    let mut cx = flowc_passes::Context::new(&optimized);
    flowc_passes::optimize(&mut optimized, &mut cx, |pass, m, _| {
        flowc_ir_checker::check_module(m).unwrap_or_else(|vs| panic!("after {}: {vs:?}", pass.name));
    });
    let runs = [(&module, false), (&module, true), (&optimized, false), (&optimized, true)].map(|(m, n)| outcome(m, n));
    assert_eq!(runs, ["key_not_found(u)"; 4].map(str::to_owned), "\n{}", flowc_ir::print::module(&optimized));
}

/// Cleanup replaced `ne 4, v10` by its constant though `v10` may be
/// unbound (`ne` has no failure of its own). The module is the fuzzer's
/// (`flowc-fuzz valid --show 11436`).
#[test]
fn a_comparison_of_a_maybe_unbound_value_is_not_folded_away() {
    raises_key_not_found_everywhere(
        r#"main main() {
b0:
    v0:fuel = same 60
    v1:fuel = sub v0, 1
    v2 = gt v1, 0
    v3 = check_bound v1
    branch v2, b1, b4
b1:
    v4 = le.int -10, v3
    v5 = lt v1, 78
    v6 = neg v5
    v7 = unbound u
    v8 = readlist [0, 3], v4
    jump b2
b2:
    v9:fuel = phi [b1: v1, b3: v11]
    v10 = phi [b1: v7, b3: v14]
    v11:fuel = sub v9, 1
    v12 = gt v11, 0
    v13 = ne 4, v10
    v14 = mod v4, v6
    v15 = gt v13, v11
    v16 = le.int v5, v14
    v17 = ge v1, v14
    branch v12, b3, b4
b3:
    v18 = readlist.int [0, 3], v15
    v19 = ge.int v18, v1
    v20 = readlist.word [0, 3], v16
    v21 = mul.word v19, -78
    v22 = check_bound v20
    jump b2
b4 stop:
    print :out_of_fuel
}
"#,
    );
}

/// Inlining turned `return v0` into a jump, losing the read of `v0`.
#[test]
fn an_inlined_return_of_an_unbound_value_still_raises() {
    raises_key_not_found_everywhere(
        r#"main main() {
b0:
    v0 = call f()
    print 1
}

function f() {
b0:
    v0 = unbound u
    return v0
}
"#,
    );
}

/// Native code passed an unbound argument to the callee, returned and
/// printed unbound values without testing them.
#[test]
fn native_code_tests_call_arguments_returns_and_prints() {
    for text in [
        r#"main main() {
b0:
    v0 = unbound u
    v1 = call f(v0)
    print 1
}

function f(v0) {
b0:
    return 2
}
"#,
        r#"main main() {
b0:
    v0 = unbound u
    print v0
}
"#,
        r#"main main() {
b0:
    v0 = call f()
    print 1
}

function f() {
b0:
    v0 = unbound u
    jump b1
b1:
    v1 = phi [b0: v0]
    return v1
}
"#,
    ] {
        raises_key_not_found_everywhere(text);
    }
}

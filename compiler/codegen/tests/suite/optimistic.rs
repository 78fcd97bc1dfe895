//! A trace with arithmetic that may leave the small integers gets an
//! optimistic copy; a guard lowered in both copies leaves by one exit, so
//! the JIT counts its failures and attaches its bridge once.

use flowc_codegen::{CompiledTrace, TraceEnd};
use flowc_lang::syntax::prolog::parse_env;

/// The loop trace of tracing `s = s + i` over odd and even `i` (the
/// `add.int` may overflow: an exit point of the optimistic copy).
const TRACE: &str = r#"trace loop(v0:i, v1:s, v2:c, v3:m) {
b0:
    jump b1
b1 loop:
    v5:m = phi [b0: v3, b1: 1]
    v6:s = phi [b0: v1, b1: v10]
    v7:i = phi [b0: v0, b1: v11]
    v8:c = lt.word v7, 1000
    guard_true v8, r0 else done
    v9:m = mod.word v7, 2
    guard_true v9, r1 else even
    v10:s = add.int v6, v7
    v11:i = add.word v7, 1
    jump b1
resume r0 {
    frame [i = v7, s = v6, c = v8, m = v5]
}
resume r1 {
    frame [i = v7, s = v6, c = 1, m = v9]
}
}
"#;

#[test]
fn both_copies_of_a_guard_leave_by_one_exit() {
    let exits = flowc_codegen::with_stack(|| {
        let module = flowc_ir::parse::module("trace", TRACE).unwrap();
        let trace = CompiledTrace::compile(&module.functions[0], &module, module.layout()).unwrap();
        // A small `s` runs the optimistic copy, a bignum the generic one;
        // both fail the guard on `m` at i = 2 (even) after one odd round.
        let runs: Vec<_> = ["[i/1, s/0, c/1, m/1]", "[i/1, s/1180591620717411303424, c/1, m/1]"]
            .iter()
            .map(|env| {
                let args: Vec<_> = parse_env(env).unwrap().into_iter().map(|(_, v)| v).collect();
                match trace.run(&args, &mut 0, 1000) {
                    TraceEnd::Exit { exit, .. } => {
                        let e = trace.exit(exit);
                        Some((e.resume.into_raw().into_u32(), exit, e.guard))
                    }
                    _ => None,
                }
            })
            .collect();
        (trace.exits(), runs)
    });
    assert_eq!(exits.0, 2, "one exit per guard");
    let (resume, _, guard) = exits.1[0].expect("the trace leaves by a guard");
    assert_eq!((resume, guard), (1, true), "the guard on `m` (record r1) fails: {exits:?}");
    assert_eq!(exits.1[0], exits.1[1], "the two copies leave by the same exit: {exits:?}");
}

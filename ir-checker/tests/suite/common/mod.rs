//! Shared test data and helpers: valid modules in the IR text format, and
//! data-driven helpers that parse a module, optionally edit the text or
//! mutate the parsed IR, run `check_module` and render the result (one
//! violation per line, or `ok`) for `expect_test` snapshots.
//!
//! Rules: every valid example must pass `check_module` and print back to
//! exactly its text (so the examples stay in the printer's canonical form);
//! a text edit must match exactly once, so a test cannot silently edit
//! nothing.

#![allow(dead_code)]

use expect_test::Expect;
use flowc_ir::{Function, Module};

/// `y` to the power `x` with a loop (the print.rs example, made valid).
pub const POWER: &str = r#"main power(v0:y, v1:x) {
b0 power:
    branch v0, b1, b2
b1 power_rec:
    v2:res = phi [b0: 1, b1: v4]
    v3:y = phi [b0: v0, b1: v5]
    v4:res = mul v2, v1
    v5:y = sub v3, 1
    branch v5, b1, b2
b2 power_done:
    v6:res = phi [b0: 1, b1: v4]
    print v6
}
"#;

/// A main graph calling a recursive, pure function.
pub const FIB: &str = r#"pure fib

main start(v0:n) {
b0 start:
    v1:r = call fib(v0)
    print v1
}

function fib(v0:n) {
b0 fib:
    v1 = lt v0, 2
    branch v1, b1, b2
b1 base:
    return v0
b2 rec:
    v2 = sub v0, 1
    v3 = call fib(v2)
    v4 = sub v0, 2
    v5 = call fib(v4)
    v6 = add v3, v5
    return v6
}
"#;

/// Objects, lists, a loop, class tests, unbound variables and traps.
pub const OBJECTS: &str = r#"immutable point(x, y)

main objects(v0:xs) {
b0 objects:
    v1:p = new point
    set v1, x, 1
    set v1, y, [1, 2, :a]
    v2:n = len v0
    v3:xs = check_bound v0
    jump b1
b1 loop:
    v4:i = phi [b0: 0, b2: v7]
    v5:s = phi [b0: 0, b2: v8]
    v6 = lt v4, v2
    branch v6, b2, b3
b2 body:
    v9:e = readlist v3, v4
    v8:s = add v5, v9
    v7:i = add.int v4, 1
    jump b1
b3 done:
    if_class v1, point, b4, b5
b4 is_point:
    v10 = get v1, x
    v11 = add.word v10, v5
    print v11
b5 other:
    v12:z = unbound z
    v13 = same v12
    trap error(oops)
}
"#;

/// A trace: one loop with guards, resume records with an inlined call frame
/// and a virtual object.
pub const TRACE: &str = r#"trace loop(v0:i, v1:acc) {
b0 loop_entry:
    jump b1
b1 loop:
    v2:i = phi [b0: v0, b1: v7]
    v3:acc = phi [b0: v1, b1: v6]
    v4 = lt v2, 100
    guard_true v4, r0 else l0
    v5 = get v3, total
    guard_class v3, counter, r1 else l1
    v6:acc = new counter
    set v6, total, v5
    v7:i = add.int v2, 1
    guard_value v7, 7, r1 else l1
    jump b1
resume r0 {
    frame [i = v2, acc = v3]
}
resume r1 {
    frame [i = v2, acc = v3] call r then loop
    frame step [n = v2, p = @0, k = 3]
    virtual @0 point [x = v2, y = :none]
}
}
"#;

/// A bridge: straight-line trace code that ends by leaving to a label.
pub const BRIDGE: &str = r#"trace bridge(v0:i, v1:acc) {
b0 bridge:
    v2:i = add.int v0, 1
    v3 = lt v2, 100
    guard_true v3, r0 else out
    exit r1 to loop
resume r0 {
    frame [i = v2, acc = v1]
}
resume r1 {
    frame [i = v2, acc = v1]
}
}
"#;

pub const VALID: [(&str, &str); 5] =
    [("power", POWER), ("fib", FIB), ("objects", OBJECTS), ("trace", TRACE), ("bridge", BRIDGE)];

/// Parses a module; panics with the parse error (tests only).
pub fn parse(text: &str) -> Module {
    match flowc_ir::parse::module("test.ir", text) {
        Ok(m) => m,
        Err(e) => panic!("{e}"),
    }
}

/// `check_module`'s verdict, one violation per line, or `ok`.
pub fn render(m: &Module) -> String {
    match flowc_ir_checker::check_module(m) {
        Ok(()) => "ok".to_owned(),
        Err(vs) => vs.iter().map(|v| format!("{v}\n")).collect(),
    }
}

/// Replaces the only occurrence of `from` in `text` by `to`.
pub fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` must occur exactly once");
    text.replacen(from, to, 1)
}

/// Edits a valid text, then checks the module.
pub fn check_edit(text: &str, from: &str, to: &str, expect: Expect) {
    assert_eq!(render(&parse(text)), "ok", "the unedited text must be valid");
    expect.assert_eq(&render(&parse(&edit(text, from, to))));
}

/// Mutates the `k`-th function of a valid module, then checks the module.
pub fn check_mutation(text: &str, k: usize, mutate: impl FnOnce(&mut Function), expect: Expect) {
    let mut m = parse(text);
    assert_eq!(render(&m), "ok", "the unmutated text must be valid");
    mutate(&mut m.functions[k]);
    expect.assert_eq(&render(&m));
}

/// The `n`-th linked instruction of `f` (block by block, in layout order).
pub fn nth_inst(f: &Function, n: usize) -> flowc_ir::InstId {
    f.all_insts().nth(n).expect("no such instruction").1
}

/// The block at layout position `n`.
pub fn block(f: &Function, n: usize) -> flowc_ir::BlockId {
    f.layout[n]
}

/// The value numbered `n` (which must exist in the arena).
pub fn value(f: &Function, n: usize) -> flowc_ir::ValueId {
    f.values.iter().nth(n).expect("no such value").0
}

/// A value id one past the end of the arena (outside it).
pub fn value_outside(f: &Function) -> flowc_ir::ValueId {
    f.values.clone().alloc(flowc_ir::ValueData { def: flowc_ir::ValueDef::Detached, name: None })
}

/// A block id one past the end of the arena.
pub fn block_outside(f: &Function) -> flowc_ir::BlockId {
    let term = flowc_ir::Terminator::Trap(flowc_ir::Trap::ReturnOutsideFunction);
    f.blocks.clone().alloc(flowc_ir::BlockData {
        name: None,
        phis: Default::default(),
        insts: Default::default(),
        term,
    })
}

/// An instruction id one past the end of the arena.
pub fn inst_outside(f: &Function) -> flowc_ir::InstId {
    f.insts.clone().alloc(flowc_ir::InstData { kind: flowc_ir::InstKind::New("x".into()), result: None })
}

/// A resume id one past the end of the arena.
pub fn resume_outside(f: &Function) -> flowc_ir::ResumeId {
    f.resumes.clone().alloc(flowc_ir::ResumeData::default())
}

/// Sets the `ValueDef` record of value `v`.
pub fn set_def(f: &mut Function, v: usize, def: flowc_ir::ValueDef) {
    let id = value(f, v);
    f.values[id].def = def;
}

/// Sets the result of the `n`-th linked instruction.
pub fn set_result(f: &mut Function, n: usize, result: Option<flowc_ir::ValueId>) {
    let i = nth_inst(f, n);
    f.insts[i].result = result;
}

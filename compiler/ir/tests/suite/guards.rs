//! Guards in the IR text format: every kind prints as it parses, and
//! decides as its documentation says.

use flowc_ir::{GuardKind, InstKind};
use flowc_lang::{Symbol, Value};

const TRACE: &str = "trace t(v0:p, v1:n) {
b0:
    guard_true v1, r0 else out
    guard_false v1, r0 else out
    guard_value v1, 7, r0 else out
    guard_class v0, cell, r0 else out
    guard_not_class v0, box, r0 else out
    guard_link v0, cell, r0 else out
    guard_int v1, 0, 255, r0 else out
    v2 = guard_at v1, v0, -56, r0 else out
    guard_cold v1, r0 else out
    exit r0 to out
resume r0 {
    frame [p = v0, n = v1]
}
}
";

#[test]
fn every_guard_kind_prints_as_it_parses() {
    let f = flowc_ir::parse::function("guards", TRACE).unwrap();
    assert_eq!(flowc_ir::print::function(&f), TRACE);
}

#[test]
fn a_link_guard_holds_for_an_object_of_its_class_only() {
    // What it decides is `guard_class`'s; code checks it more cheaply
    // because its operand is proven a `cell` or 0.
    let f = flowc_ir::parse::function("guards", TRACE).unwrap();
    let link = f
        .all_insts()
        .find_map(|(_, i)| match &f.insts[i].kind {
            InstKind::Guard { kind: k @ GuardKind::Link(..), .. } => Some(k.clone()),
            _ => None,
        })
        .expect("a link guard");
    let layout = flowc_lang::heap::Layout::of([Symbol::intern("v")]);
    let cell = flowc_lang::interp::objects::new_object(1, Symbol::intern("cell"), layout);
    let other = flowc_lang::interp::objects::new_object(2, Symbol::intern("box"), layout);
    assert!(link.holds(&cell, None));
    assert!(!link.holds(&other, None));
    assert!(!link.holds(&Value::Int(0), None));
}

#[test]
fn a_guard_at_holds_for_the_object_laid_out_where_it_says_and_has_it_as_result() {
    let f = flowc_ir::parse::function("guards", TRACE).unwrap();
    let (at, result) = f
        .all_insts()
        .find_map(|(_, i)| match &f.insts[i].kind {
            InstKind::Guard { kind: k @ GuardKind::At(..), .. } => Some((k.clone(), f.insts[i].result)),
            _ => None,
        })
        .expect("a guard_at");
    assert!(result.is_some(), "guard_at defines its result");
    let GuardKind::At(_, _, delta) = at else { unreachable!("matched above") };
    // Two cells made one after the other lie one cell apart, in one block.
    let layout = flowc_lang::heap::Layout::of([Symbol::intern("v")]);
    let new = |id| flowc_lang::interp::objects::new_object(id, Symbol::intern("cell"), layout);
    let (a, b) = (new(1), new(2));
    let (Value::Object(oa), Value::Object(ob)) = (&a, &b) else { unreachable!("objects") };
    let d = ob.offset_from(oa).expect("one block");
    assert_ne!(d, 0);
    let here = GuardKind::At(flowc_ir::Operand::int(0), flowc_ir::Operand::int(0), d);
    assert!(here.holds(&b, Some(&a)));
    assert!(!here.holds(&a, Some(&b)), "the other way round is -{d} bytes");
    assert!(!here.holds(&a, Some(&a)));
    assert!(!here.holds(&Value::Int(0), Some(&a)), "0 is no object");
    assert!(!here.holds(&b, Some(&Value::Int(0))));
    // The parsed guard says -56 bytes.
    assert_eq!(delta, -56);
}

/// `guard_cold` leaves where the JIT's table of positions says; outside a
/// JIT run there is no table, and it passes for anything.
#[test]
fn a_cold_guard_passes_outside_the_jit() {
    let cold = GuardKind::Cold(flowc_ir::Operand::int(0));
    assert!(cold.holds(&Value::Int(3), None));
    assert!(cold.holds(&Value::Int(-1), None));
    assert!(cold.holds(&Value::atom("x"), None));
}

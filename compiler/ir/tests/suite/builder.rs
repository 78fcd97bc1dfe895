//! The builder keeps the IR's operation invariant: a known operation has
//! as many operands as its arity.

use flowc_ir::builder::Builder;
use flowc_ir::{FunctionKind, InstKind, Operand, ValueDef, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::Symbol;

#[test]
fn a_known_op_given_the_wrong_operand_count_is_built_unknown() {
    let mut b = Builder::new(FunctionKind::Main, Symbol::intern("main"));
    let entry = b.entry();
    let x = b.param(Some(Symbol::intern("x")));
    let two = b.op(entry, Op::Add, vec![Operand::Value(x), Operand::Value(x)], None);
    let one = b.op(entry, Op::Add, vec![Operand::Value(x)], None);
    let f = b.finish();
    let kind = |v: ValueId| match f.values[v].def {
        ValueDef::Inst(i) => f.insts[i].kind.clone(),
        _ => unreachable!("an instruction's value"),
    };
    assert_eq!(kind(two).known_op(), Some((Op::Add, Form::Generic)));
    assert!(matches!(kind(one), InstKind::Op { op: Operator::Unknown(s), .. } if s.as_str() == "add"));
    assert_eq!(kind(one).known_op(), None);
}

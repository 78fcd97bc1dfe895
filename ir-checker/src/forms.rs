//! Operations: the op and form an instruction names are ones the op table
//! has, and what the form promises of its operands holds where the checker
//! can see it.
//!
//! Rules:
//! - [`Rule::OpForm`]: a known operation has its arity (other operand
//!   counts are written `missing_op`, an unknown operation); an unknown
//!   operation is generic (it has no specialized forms) and is not a known
//!   operation in disguise (`missing_op add(v1, v2)` is `add v1, v2`); the
//!   form is one the operation has ([`flowc_lang::ops::OpInfo::forms`]);
//!   every constant operand is one the form admits
//!   ([`flowc_lang::ops::Op::form_admits_operand`]: `add.int :foo, 2` is
//!   rejected); and when every operand is a constant, they meet the whole
//!   promise ([`flowc_lang::ops::Op::form_admits`]: `div.word 1, 0` is
//!   rejected, since a word-form operation cannot fail); a `get.object`
//!   or `set.object` of a constant reads an object (a trace's promoted
//!   one).
//!
//! Operands that are values are not judged here: whether a value is an
//! integer is what range propagation proved when it chose the form, and
//! the IR carries no types to check it against.

use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::Value;

use flowc_ir::InstKind;

use crate::context::{Checker, Linked};
use crate::violation::Rule;

/// The operation rules for one linked instruction.
pub(crate) fn check_inst(c: &mut Checker, l: Linked, kind: &InstKind) {
    let msg = match kind {
        InstKind::Op { op, form, args } => problem(op, *form, args),
        InstKind::Get { obj: flowc_ir::Operand::Const(v), proven: true, .. }
        | InstKind::Set { obj: flowc_ir::Operand::Const(v), proven: true, .. }
            if !matches!(v, Value::Object(_)) =>
        {
            let what = if matches!(kind, InstKind::Get { .. }) { "get" } else { "set" };
            Some(format!("`{what}.object` of the constant {}, which is not an object", v.to_print_string()))
        }
        _ => None,
    };
    if let Some(msg) = msg {
        let at = c.at_inst(l.inst);
        c.report(Some(l.block), l.pos, at, Rule::OpForm, msg);
    }
}

fn problem(op: &Operator, form: Form, args: &[flowc_ir::Operand]) -> Option<String> {
    let op = match op {
        Operator::Unknown(name) => {
            if form != Form::Generic {
                return Some(format!("missing_op {name} has no `{}` form", form.suffix()));
            }
            return match Op::from_name(name.as_str()) {
                Some(known) if known.arity() == args.len() => Some(format!(
                    "missing_op {name} with {} operand(s) is the operation `{name}`, which exists",
                    args.len()
                )),
                _ => None,
            };
        }
        Operator::Known(op) => *op,
    };
    let name = op.name();
    if args.len() != op.arity() {
        return Some(format!(
            "`{name}` takes {} operand(s), not {} (other counts are `missing_op {name}`)",
            op.arity(),
            args.len()
        ));
    }
    if !op.info().forms.contains(&form) {
        return Some(format!("`{name}` has no `{}` form", form.suffix()));
    }
    for (k, a) in args.iter().enumerate() {
        if let Some(v) = a.as_const() {
            if !op.form_admits_operand(form, k, v) {
                return Some(format!(
                    "operand {} of `{name}{}` is the constant {}, which the form does not admit ({} needs {})",
                    k + 1,
                    form.suffix(),
                    v.to_print_string(),
                    form.suffix(),
                    form_needs(op, form)
                ));
            }
        }
    }
    let consts: Option<Vec<Value>> = args.iter().map(|a| a.as_const().cloned()).collect();
    if let Some(consts) = consts {
        if !op.form_admits(form, &consts) {
            return Some(format!(
                "`{name}{}` of these constants fails or overflows, which the form promises it cannot",
                form.suffix()
            ));
        }
    }
    None
}

fn form_needs(op: Op, form: Form) -> String {
    match form {
        Form::Word => format!("{}, as machine words", op.info().operands),
        _ => op.info().operands.to_owned(),
    }
}

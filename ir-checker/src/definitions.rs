//! Definitions: every value is defined exactly once, and the value arena's
//! `ValueDef` records agree with the parameters and linked instructions.
//!
//! Rules:
//! - [`Rule::SingleDef`] (a): parameter `k` is a value recorded as
//!   `ValueDef::Param(k)`; a linked instruction's result is recorded as
//!   `ValueDef::Inst(that instruction)`; no value is the result of two linked
//!   instructions, or both a parameter and a result; an instruction has a
//!   result exactly when `InstKind::has_result` says so. Conversely a value
//!   recorded as `Param(k)` is parameter `k`, and one recorded as the result
//!   of a linked instruction is that instruction's result. (A record naming
//!   an unlinked instruction is a removed definition, like `Detached`: only
//!   a use of the value is wrong, see `uses`.)
//! - [`Rule::DistinctParams`] (h): parameters are distinct values.
//! - [`Rule::DanglingRef`] (f): parameters and results exist in the value arena.
//!
//! The definition sites found here (first definition wins) are what the
//! dominance checks use.

use flowc_ir::print::{block_ref, value_ref};
use flowc_ir::{InstId, ValueDef};

use crate::context::{Checker, Site};
use crate::violation::{At, Rule};
use flowc_ir::ix;

/// How a value's `ValueDef` record reads, for messages.
fn describe(c: &Checker, def: ValueDef) -> String {
    match def {
        ValueDef::Param(k) => format!("parameter {k}"),
        ValueDef::Inst(i) => describe_inst(c, i),
        ValueDef::Detached => "detached".to_owned(),
    }
}

fn describe_inst(c: &Checker, i: InstId) -> String {
    if !c.has_inst(i) {
        return format!("the result of instruction #{}, which does not exist", ix(i));
    }
    match c.inst_site(i) {
        Some((b, _)) => format!("the result of `{}` in {}", c.inst_text(i), block_ref(b)),
        None => format!("the result of the unlinked instruction `{}`", c.inst_text(i)),
    }
}

pub(crate) fn check_definitions(c: &mut Checker) {
    let f = c.f;
    for (k, &v) in f.params.iter().enumerate() {
        let at = Some(At::Param(k));
        if !c.has_value(v) {
            c.report(None, 0, at, Rule::DanglingRef, format!("{} does not exist", value_ref(v)));
            continue;
        }
        if let Some(Site::Param(j)) = c.value_site(v) {
            let msg = format!("{} is also parameter {j}", value_ref(v));
            c.report(None, 0, at, Rule::DistinctParams, msg);
            continue;
        }
        c.set_value_site(v, Site::Param(k as u32));
        let def = f.values[v].def;
        if def != ValueDef::Param(k as u32) {
            let msg = format!("{} is parameter {k} but is recorded as {}", value_ref(v), describe(c, def));
            c.report(None, 0, at, Rule::SingleDef, msg);
        }
    }
    for n in 0..c.linked.len() {
        let l = c.linked[n];
        let data = &f.insts[l.inst];
        let report = |c: &mut Checker, msg: String| {
            let at = c.at_inst(l.inst);
            c.report(Some(l.block), l.pos, at, Rule::SingleDef, msg);
        };
        match data.result {
            None if data.kind.has_result() => {
                report(c, "this instruction defines a value but has no result".to_owned())
            }
            Some(v) if !data.kind.has_result() => {
                report(c, format!("this instruction defines no value but has the result {}", value_ref(v)))
            }
            _ => {}
        }
        let Some(v) = data.result else { continue };
        if !c.has_value(v) {
            let at = c.at_inst(l.inst);
            let msg = format!("the result {} does not exist", value_ref(v));
            c.report(Some(l.block), l.pos, at, Rule::DanglingRef, msg);
            continue;
        }
        match c.value_site(v) {
            Some(Site::Param(k)) => report(c, format!("{} is already defined as parameter {k}", value_ref(v))),
            Some(Site::Inst { block, .. }) => {
                report(c, format!("{} is already defined in {}", value_ref(v), block_ref(block)))
            }
            None => {
                c.set_value_site(v, Site::Inst { block: l.block, pos: l.pos });
                let def = f.values[v].def;
                if def != ValueDef::Inst(l.inst) {
                    let msg = format!(
                        "{} is the result of this instruction but is recorded as {}",
                        value_ref(v),
                        describe(c, def)
                    );
                    report(c, msg);
                }
            }
        }
    }
    check_records(c);
}

/// Values whose record names a parameter or a linked instruction that does
/// not define them.
fn check_records(c: &mut Checker) {
    let f = c.f;
    for (v, data) in f.values.iter() {
        match data.def {
            ValueDef::Param(k) => {
                let actual = f.params.get(k as usize).copied();
                if actual != Some(v) {
                    let msg = match actual {
                        Some(p) => format!(
                            "{} is recorded as parameter {k} but parameter {k} is {}",
                            value_ref(v),
                            value_ref(p)
                        ),
                        None => format!("{} is recorded as parameter {k} but there is no parameter {k}", value_ref(v)),
                    };
                    c.report(None, 0, None, Rule::SingleDef, msg);
                }
            }
            ValueDef::Inst(i) => {
                let Some((b, pos)) = c.inst_site(i) else { continue };
                let result = f.insts[i].result;
                if result != Some(v) {
                    let defines =
                        result.map_or_else(|| "defines no value".to_owned(), |r| format!("defines {}", value_ref(r)));
                    let msg =
                        format!("{} is recorded as the result of this instruction, which {defines}", value_ref(v));
                    let at = c.at_inst(i);
                    c.report(Some(b), pos, at, Rule::SingleDef, msg);
                }
            }
            ValueDef::Detached => {}
        }
    }
}

//! Kinds and ranges of a loop's phis, before the optimizer walks the loop:
//! the body (straight-line code between guards) is run abstractly —
//! operations by the op table's transfer functions, guards narrowing what
//! they test as the walk does ([`super::walk`]) — and each phi joins its
//! entry fact with what the back edge brings, until nothing changes. Phis
//! that keep growing are widened as propagate's are ([`Widening`]), so
//! this ends (were it not to within its rounds, every phi would come out
//! as any value). A phi comes out as an integer range, or an object of a
//! class (a loop carrying a cell it reached by checked links), or any
//! value.
//!
//! So a counter that starts positive (the loop's entry guards say so) and
//! leaves the loop at 0 is known to be a word, and so is the arithmetic on
//! it.

use flowc_ir::{BlockId, Function, GuardKind, InstId, InstKind, Operand, ValueDef, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::range::Interval;
use flowc_lang::ops::Op;
use flowc_lang::Value;
use flowc_passes::edit::ix;
use flowc_passes::lattice::{self, Info, Kinds, Widening};
use flowc_passes::propagate::ProgramFacts;

/// The facts of phis `phis` of loop block `body` (each with the fact of
/// its entry input), given `known`, the facts of values defined before
/// the loop. A phi's back-edge input is its input from `body`.
pub fn phi_ranges(
    f: &Function,
    body: BlockId,
    known: &[Info],
    phis: &[(ValueId, Info)],
    fields: Option<&ProgramFacts>,
) -> Vec<(ValueId, Info)> {
    let mut info = known.to_vec();
    info.resize(f.values.len(), Info::bottom());
    let back = |v: ValueId| -> Option<Operand> {
        let ValueDef::Inst(i) = f.values[v].def else { return None };
        let InstKind::Phi(inputs) = &f.insts[i].kind else { return None };
        inputs.iter().find(|(p, _)| *p == body).map(|(_, o)| o.clone())
    };
    let phis: Vec<(ValueId, Info, Operand)> =
        phis.iter().filter_map(|(v, entry)| Some((*v, entry.clone(), back(*v)?))).collect();
    let widening = Widening::of(f);
    let mut current: Vec<Info> = phis.iter().map(|(_, entry, _)| entry.clone()).collect();
    let mut changes = vec![0u8; phis.len()];
    let mut settled = false;
    for _ in 0..16 {
        for ((phi, _, _), i) in phis.iter().zip(&current) {
            info[ix(*phi)] = i.clone();
        }
        for &i in &f.blocks[body].insts {
            abstract_step(f, &mut info, i, fields);
        }
        let mut changed = false;
        for (k, (_, entry, back)) in phis.iter().enumerate() {
            let joined = entry.join(&operand_info(&info, back));
            if joined == current[k] {
                continue;
            }
            changed = true;
            changes[k] = changes[k].saturating_add(1);
            current[k] = widening.step(changes[k], &current[k], joined);
        }
        if !changed {
            settled = true;
            break;
        }
    }
    // Unsettled (not seen in practice): no claim at all. Settled: an
    // integer range, or an object's class (a loop carrying a cell it
    // reached by links it checked: its reads of the cell test nothing).
    let claim = |i: Info| match (i.kinds, i.class) {
        (Kinds::INT, _) => i,
        (Kinds::OBJECT, Some(class)) => Info::object(class, None),
        _ => Info::value(),
    };
    phis.iter().zip(current).map(|((phi, _, _), i)| (*phi, if settled { claim(i) } else { Info::value() })).collect()
}

/// What `info` says of operand `o` in an abstract run: a constant's fact,
/// and for a value its fact so far, or anything when it has none (defined
/// where the run did not go).
pub(super) fn operand_info(info: &[Info], o: &Operand) -> Info {
    match o {
        Operand::Const(c) => Info::of_const(c),
        Operand::Value(v) => info.get(ix(*v)).cloned().filter(|i| !i.is_bottom()).unwrap_or_else(Info::value),
    }
}

/// One instruction of an abstract run ([`phi_ranges`]' of a loop body,
/// the counted-loop skip's of the blocks before a loop): its result's fact
/// by the op table's transfer functions, a read of a field what the
/// program's facts (`fields`) say it holds (as the walk's
/// `Opt::field_info_of`: a link read and tested for 0 is then an object
/// of its class), a guard narrowing what it tests.
pub(super) fn abstract_step(f: &Function, info: &mut [Info], i: InstId, fields: Option<&ProgramFacts>) {
    let of = operand_info;
    let data = &f.insts[i];
    match &data.kind {
        InstKind::Get { obj, field, .. } => {
            if let Some(v) = data.result {
                let stored = fields.map_or_else(Info::value, |facts| facts.read(&of(info, obj), *field));
                info[ix(v)] = if stored.is_bottom() { Info::value() } else { stored };
            }
        }
        InstKind::Op { op: Operator::Known(op), args, .. } => {
            let infos: Vec<Info> = args.iter().map(|a| of(info, a)).collect();
            if let Some(v) = data.result {
                info[ix(v)] = lattice::transfer(*op, &infos);
            }
        }
        InstKind::Guard { kind, .. } => {
            if let (GuardKind::At(link, ..), Some(r)) = (kind, data.result) {
                // The result is the link.
                info[ix(r)] = of(info, link);
            }
            let Operand::Value(v) = kind.operand() else { return };
            let v = *v;
            info[ix(v)] = when_guarded(of(info, &Operand::Value(v)), kind);
            if let GuardKind::True(_) | GuardKind::False(_) = kind {
                if let Some((op, x, k, mirrored)) = compared_with_constant(f, v) {
                    let holds = matches!(kind, GuardKind::True(_));
                    info[ix(x)] = lattice::when_compared(of(info, &Operand::Value(x)), op, k, mirrored, holds);
                }
            }
        }
        _ => {
            if let Some(v) = data.result {
                info[ix(v)] = Info::value();
            }
        }
    }
}

/// What passing guard `kind` teaches about its operand, known as `info`.
pub fn when_guarded(info: Info, kind: &GuardKind) -> Info {
    match kind {
        GuardKind::True(_) => lattice::when_truth(info, true),
        GuardKind::False(_) => lattice::when_truth(info, false),
        GuardKind::Value(_, c) => Info::of_const(c),
        GuardKind::Class(_, c) | GuardKind::Link(_, c) => Info::object(*c, info.alloc),
        // A position leaving the dispatch tier says nothing of it.
        GuardKind::NotClass(..) | GuardKind::At(..) | GuardKind::Row(..) | GuardKind::Cold(_) => info,
        GuardKind::Int(_, lo, hi) => {
            let r = Interval::new(*lo as i128, *hi as i128);
            if info.kinds.has(Kinds::INT) {
                Info::int(info.range.intersect(r))
            } else {
                Info::int(r)
            }
        }
    }
}

/// Whether guard `kind` is known to pass for an operand known as `info`.
pub fn known_to_pass(kind: &GuardKind, info: &Info) -> bool {
    match kind {
        GuardKind::True(_) => info.truth() == Some(true),
        GuardKind::False(_) => info.truth() == Some(false),
        GuardKind::Value(_, c) => info.constant.as_ref() == Some(c),
        GuardKind::Class(_, c) | GuardKind::Link(_, c) => info.is_class(*c) == Some(true),
        GuardKind::NotClass(_, c) => info.is_class(*c) == Some(false),
        GuardKind::Int(_, lo, hi) => {
            info.kinds == Kinds::INT && info.range.lo() >= *lo as i128 && info.range.hi() <= *hi as i128
        }
        // Where cells lie is known only when the code runs, and what the
        // dispatch tier's table holds.
        GuardKind::At(..) | GuardKind::Row(..) | GuardKind::Cold(_) => false,
    }
}

/// `c`'s operands when it is `eq x, y` of two values.
pub fn equated(f: &Function, c: ValueId) -> Option<(ValueId, ValueId)> {
    let ValueDef::Inst(ci) = f.values[c].def else { return None };
    match &f.insts[ci].kind {
        InstKind::Op { op: Operator::Known(Op::Eq), args, .. } => match args.as_slice() {
            [Operand::Value(x), Operand::Value(y)] => Some((*x, *y)),
            _ => None,
        },
        _ => None,
    }
}

/// `c`'s definition when it compares a value with an integer constant:
/// the comparison, the value, the constant, and whether the constant is
/// on the left (what a guard on `c` teaches about the value).
pub fn compared_with_constant(f: &Function, c: ValueId) -> Option<(Op, ValueId, i128, bool)> {
    let ValueDef::Inst(ci) = f.values[c].def else { return None };
    let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[ci].kind else { return None };
    if !op.is_comparison() {
        return None;
    }
    match args.as_slice() {
        [Operand::Value(x), Operand::Const(Value::Int(k))] => Some((*op, *x, *k as i128, false)),
        [Operand::Const(Value::Int(k)), Operand::Value(x)] => Some((*op, *x, *k as i128, true)),
        _ => None,
    }
}

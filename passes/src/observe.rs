//! Whether a program can observe how many objects it allocated.
//!
//! Objects print as `<Class#N>`, N counting allocations from 1, so removing
//! an allocation (dead-code elimination, unboxing) renumbers every object
//! allocated after it — visible exactly when some object can be printed.
//! [`allocations_observable`] answers that conservatively for a whole
//! module: some `print` may print an object. A value may be an object if it
//! is a parameter, a `new`, a `get`, a call result, or a phi or
//! `check_bound` of such a value; results of operations never are (lists
//! hold only constants).

use flowc_ir::{Function, InstKind, Module, Operand, Terminator, ValueDef};

use crate::edit::ix;

/// Whether some `print` of the module may print an object.
pub fn allocations_observable(m: &Module) -> bool {
    m.functions.iter().any(function_may_print_object)
}

fn function_may_print_object(f: &Function) -> bool {
    let printed: Vec<&Operand> = f
        .layout
        .iter()
        .filter_map(|&b| if let Terminator::Print(o) = &f.blocks[b].term { Some(o) } else { None })
        .collect();
    if printed.is_empty() {
        return false;
    }
    // may_be_object for every value, by a fixpoint over phis and checks.
    let mut may = vec![false; f.values.len()];
    for &p in &f.params {
        may[ix(p)] = true;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for (_, i) in f.all_insts() {
            let Some(v) = f.insts[i].result else { continue };
            if may[ix(v)] {
                continue;
            }
            let from = |o: &Operand| matches!(o, Operand::Value(w) if may[ix(*w)]);
            let now = match &f.insts[i].kind {
                InstKind::New(_) | InstKind::Get { .. } | InstKind::Call { .. } => true,
                InstKind::Phi(inputs) => inputs.iter().any(|(_, o)| from(o)),
                InstKind::CheckBound(o) => from(o),
                _ => false,
            };
            if now {
                may[ix(v)] = true;
                changed = true;
            }
        }
    }
    printed.iter().any(|o| match o {
        Operand::Value(v) => may[ix(*v)] || matches!(f.values[*v].def, ValueDef::Detached),
        Operand::Const(_) => false,
    })
}

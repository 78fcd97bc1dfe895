//! Widening: the schedule by which a phi's info is widened as it keeps
//! changing, shared by propagate and the trace optimizer.

use flowc_lang::ops::range;
use flowc_lang::Value;

use super::Info;

/// How a phi's info is widened as it keeps changing — the schedule
/// propagate and the trace optimizer share. A phi's first changes are
/// taken as they are; then a growing bound jumps to the next *threshold*
/// (the function's integer constants `c` with `c - 1` and `c + 1`, so a
/// counter compared with a constant keeps that bound); then only to the
/// word bounds (a value that stays a machine word keeps its unchecked
/// arithmetic); then to infinity. So each phi changes a bounded number of
/// times and an analysis using it stays linear.
pub struct Widening {
    thresholds: Vec<i128>,
}

impl Widening {
    /// Changes taken as they are.
    const EXACT: u8 = 2;
    /// Then changes widened to the thresholds.
    const TO_CONSTANTS: u8 = 4;
    const WORD_BOUNDS: [i128; 2] = [range::WORD_MIN, range::WORD_MAX];

    /// The thresholds of a function whose integer constants are `constants`.
    pub fn new(constants: impl IntoIterator<Item = i64>) -> Widening {
        // Constants repeat a lot: deduplicate them before tripling them.
        let mut constants: Vec<i64> = constants.into_iter().collect();
        constants.sort_unstable();
        constants.dedup();
        let mut thresholds: Vec<i128> = Widening::WORD_BOUNDS.to_vec();
        for c in constants {
            let c = c as i128;
            thresholds.extend([c - 1, c, c + 1]);
        }
        thresholds.sort_unstable();
        thresholds.dedup();
        Widening { thresholds }
    }

    /// The thresholds of `f`: from the integer constants among the
    /// operands of its linked code.
    pub fn of(f: &flowc_ir::Function) -> Widening {
        Widening::new(int_constants(f))
    }

    /// The thresholds of every function of `m` (for facts of the whole
    /// program, `propagate`'s program facts).
    pub fn of_module(m: &flowc_ir::Module) -> Widening {
        Widening::new(m.functions.iter().flat_map(int_constants))
    }

    /// The info of a phi that was `old` and now gets `new`, for the
    /// `changes`-th time (counting from 1).
    pub fn step(&self, changes: u8, old: &Info, new: Info) -> Info {
        let words = Widening::EXACT + Widening::TO_CONSTANTS;
        let thresholds: &[i128] = match changes {
            c if c <= Widening::EXACT => return new,
            c if c <= words => &self.thresholds,
            c if c <= words + Widening::WORD_BOUNDS.len() as u8 => &Widening::WORD_BOUNDS,
            _ => &[],
        };
        old.widen(&old.join(&new), thresholds)
    }
}

/// The integer constants among the operands of `f`'s linked code.
fn int_constants(f: &flowc_ir::Function) -> impl Iterator<Item = i64> + '_ {
    let insts = f.all_insts().flat_map(|(_, i)| f.insts[i].kind.operands());
    let terms = f.layout.iter().flat_map(|&b| f.blocks[b].term.operands());
    insts.chain(terms).filter_map(|o| match o {
        flowc_ir::Operand::Const(Value::Int(c)) => Some(*c),
        _ => None,
    })
}

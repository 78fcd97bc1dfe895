//! [`Home`]: where lowering keeps the Cranelift value of each IR value —
//! one strategy per function, trace or region, chosen where it is
//! lowered, and read and written only through [`Home::read`] and
//! [`Home::write`] (the lowerer's `operand` and `set_value`).
//!
//! Two things sit beside it and are not strategies of their own: the
//! words of [`super::Roots`], where values that may point into the heap
//! are also stored for the collector, and a split function's frame
//! ([`super::frame`]), from whose words a region reads the values other
//! regions defined ([`super::Lowerer::read_word`]).

use cranelift_codegen::ir::{types, Value as ClValue};
use cranelift_frontend::{FunctionBuilder, Variable};
use rustc_hash::FxHashMap as HashMap;

use flowc_ir::cfg::Cfg;
use flowc_ir::live_ranges::LiveRanges;
use flowc_ir::{ix, Function, InstId, InstKind, ValueId};

pub(super) enum Home {
    /// One Cranelift value per IR value, defined once: code lowered in
    /// dominator order with one definition of each value (a function or
    /// trace with one copy, a region of a split function).
    Values(HashMap<ValueId, ClValue>),
    /// Cranelift variables: code in which an IR value has several
    /// definitions — an optimistic copy and the generic one, which the
    /// optimistic copy leaves in the middle of blocks; on-stack
    /// replacement entries, which bring values from the tier-0 frame — so
    /// that Cranelift's SSA builder makes the merges. IR values never live
    /// at once share a variable ([`share`]): the builder keeps, per
    /// variable, a word for every block up to the last it is defined in,
    /// so a variable per value was quadratic in the function's size (a
    /// 6,000-block loop took 378 MB).
    Variables {
        /// The variables, one per color.
        vars: Vec<Variable>,
        /// Each value's color, by raw index.
        color: Vec<u32>,
    },
}

impl Home {
    /// The home of `f`'s values: variables when a value may have several
    /// definitions (`merges`), else values. `live`: the liveness of all of
    /// `f`'s values, where the caller has it (on-stack replacement
    /// entries), else computed here.
    pub fn new(b: &mut FunctionBuilder, f: &Function, cfg: &Cfg, merges: bool, live: Option<&LiveRanges>) -> Home {
        if !merges {
            return Home::Values(HashMap::default());
        }
        let computed;
        let live = match live {
            Some(live) => live,
            None => {
                computed = LiveRanges::new(f, cfg, |_| true);
                &computed
            }
        };
        let (color, colors) = share(f, cfg, live);
        debug_assert_eq!(
            shared_while_live(f, cfg, live, &color),
            None,
            "values live at once share a variable in {}",
            f.name
        );
        Home::Variables { vars: (0..colors).map(|_| b.declare_var(types::I64)).collect(), color }
    }

    /// The Cranelift value of `v` here, if it has one in this home (a
    /// region's value from another region has none: it is in the frame).
    pub fn read(&self, b: &mut FunctionBuilder, v: ValueId) -> Option<ClValue> {
        match self {
            Home::Values(values) => values.get(&v).copied(),
            Home::Variables { vars, color } => Some(b.use_var(vars[color[ix(v)] as usize])),
        }
    }

    /// Makes `x` the value of `v` from here on.
    pub fn write(&mut self, b: &mut FunctionBuilder, v: ValueId, x: ClValue) {
        match self {
            Home::Values(values) => {
                values.insert(v, x);
            }
            Home::Variables { vars, color } => b.def_var(vars[color[ix(v)] as usize], x),
        }
    }

    /// Whether values are merged by Cranelift's SSA builder (an IR block
    /// lowered more than once, in an optimistic copy, or entered from
    /// several places, at on-stack replacement entries).
    pub fn merges(&self) -> bool {
        matches!(self, Home::Variables { .. })
    }
}

/// Colors for `f`'s values such that two values live at once (one live
/// where the other is defined) never share one, and how many there are:
/// then a variable per color holds, on every path of the code, the value
/// last defined of its color, which is the one a use reads. (A path of
/// the lowered code, through either copy and across the optimistic
/// copy's exits or the on-stack replacement stubs, is a path of the IR
/// with each instruction where it is in the IR; the stubs define the
/// values live at their header, which are live together.)
///
/// SSA values interfere as intervals of the dominator tree, so coloring
/// each block's definitions in order, the blocks in reverse postorder
/// (dominators first), with the lowest color no live value holds, uses
/// no more colors than values are ever live at once, plus one: a
/// definition does not take the color of an operand dying at it. No
/// lowering needs that today (each reads its operands, exits included,
/// before it writes its result); it keeps one that writes first correct.
/// Values of no reachable block share the last color. The entry has no
/// predecessors (an IR rule), so parameters are defined once, there.
pub(super) fn share(f: &Function, cfg: &Cfg, live: &LiveRanges) -> (Vec<u32>, usize) {
    const NONE: u32 = u32::MAX;
    debug_assert!(cfg.preds(f.entry).is_empty(), "the entry of {} has predecessors", f.name);
    let mut color = vec![NONE; f.values.len()];
    let mut taken: Vec<bool> = Vec::new();
    // The position (from 1) of each value's last use in the block at hand.
    let mut last_use = vec![0u32; f.values.len()];
    let mut used: Vec<ValueId> = Vec::new();
    let take = |taken: &mut Vec<bool>| -> u32 {
        match taken.iter().position(|t| !t) {
            Some(c) => {
                taken[c] = true;
                c as u32
            }
            None => {
                taken.push(true);
                (taken.len() - 1) as u32
            }
        }
    };
    for &b in &cfg.rpo {
        let data = &f.blocks[b];
        taken.iter_mut().for_each(|t| *t = false);
        for &v in live.live_in(b) {
            if let Some(&c) = color.get(ix(v)).filter(|&&c| c != NONE) {
                taken[c as usize] = true;
            }
        }
        for (k, &i) in data.insts.iter().enumerate() {
            each_use(f, i, |v| {
                last_use[ix(v)] = k as u32 + 1;
                used.push(v);
            });
        }
        // The terminator reads after the last instruction.
        let end = data.insts.len() as u32 + 1;
        let resume = data.term.resume().into_iter().flat_map(|r| f.resumes[r].operands());
        for v in data.term.operands().chain(resume).filter_map(|o| o.as_value()) {
            last_use[ix(v)] = end;
            used.push(v);
        }
        let dies = |v: ValueId, at: u32, last_use: &[u32]| last_use[ix(v)] <= at && !live.is_live_out(b, v);
        let mut defined_at_start: Vec<ValueId> = Vec::new();
        if b == f.entry {
            defined_at_start.extend(f.params.iter().copied());
        }
        defined_at_start.extend(data.phis.iter().filter_map(|&phi| f.insts[phi].result));
        for &v in &defined_at_start {
            color[ix(v)] = take(&mut taken);
        }
        for &v in &defined_at_start {
            if dies(v, 0, &last_use) {
                taken[color[ix(v)] as usize] = false;
            }
        }
        for (k, &i) in data.insts.iter().enumerate() {
            let at = k as u32 + 1;
            let result = f.insts[i].result;
            if let Some(r) = result {
                color[ix(r)] = take(&mut taken);
            }
            each_use(f, i, |v| {
                if color[ix(v)] != NONE && dies(v, at, &last_use) {
                    taken[color[ix(v)] as usize] = false;
                }
            });
            if let Some(r) = result.filter(|&r| dies(r, at, &last_use)) {
                taken[color[ix(r)] as usize] = false;
            }
        }
        for v in used.drain(..) {
            last_use[ix(v)] = 0;
        }
    }
    let colors = taken.len();
    for c in color.iter_mut().filter(|c| **c == NONE) {
        *c = colors as u32;
    }
    (color, colors + 1)
}

/// Calls `visit` on each value instruction `i` reads: its operands and,
/// for a guard, the values of its resume record.
fn each_use(f: &Function, i: InstId, mut visit: impl FnMut(ValueId)) {
    let kind = &f.insts[i].kind;
    kind.operands().filter_map(|o| o.as_value()).for_each(&mut visit);
    if let InstKind::Guard { resume, .. } = kind {
        f.resumes[*resume].operands().filter_map(|o| o.as_value()).for_each(visit);
    }
}

/// The first value defined while another of its color is live, if any
/// (with that other), found walking each block backwards from what is live
/// out of it: the check of [`share`], independent of how it colors.
pub(super) fn shared_while_live(
    f: &Function,
    cfg: &Cfg,
    live: &LiveRanges,
    color: &[u32],
) -> Option<(ValueId, ValueId)> {
    let clash = |v: ValueId, others: &std::collections::BTreeSet<ValueId>| {
        others.iter().find(|&&w| w != v && color[ix(w)] == color[ix(v)]).map(|&w| (v, w))
    };
    for &b in &cfg.rpo {
        let data = &f.blocks[b];
        let mut now: std::collections::BTreeSet<ValueId> = live.live_out(b).iter().copied().collect();
        now.extend(data.term.operands().filter_map(|o| o.as_value()));
        if let Some(r) = data.term.resume() {
            now.extend(f.resumes[r].operands().filter_map(|o| o.as_value()));
        }
        for &i in data.insts.iter().rev() {
            if let Some(r) = f.insts[i].result {
                if let Some(found) = clash(r, &now) {
                    return Some(found);
                }
                now.remove(&r);
            }
            each_use(f, i, |v| {
                now.insert(v);
            });
        }
        // The phis (and at the entry the parameters) are defined together,
        // where the values live into the block are live.
        let mut start: Vec<ValueId> = data.phis.iter().filter_map(|&phi| f.insts[phi].result).collect();
        if b == f.entry {
            start.extend(f.params.iter().copied());
        }
        now.extend(start.iter().copied());
        if let Some(found) = start.iter().find_map(|&v| clash(v, &now)) {
            return Some(found);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn colored(text: &str) -> (Function, Vec<u32>, usize) {
        let f = flowc_ir::parse::function("test.ir", text).expect("parses");
        let cfg = Cfg::new(&f);
        let live = LiveRanges::new(&f, &cfg, |_| true);
        let (color, colors) = share(&f, &cfg, &live);
        assert_eq!(shared_while_live(&f, &cfg, &live, &color), None);
        (f, color, colors)
    }

    #[test]
    fn a_long_loop_body_needs_few_variables() {
        // 3,000 additions to a running total: each total dies where the
        // next is made, so two colors alternate along the chain (the
        // phi's and the test's, which is dead in the body).
        let f = crate::plan::tests::looping("main", 3000);
        let cfg = Cfg::new(&f);
        let live = LiveRanges::new(&f, &cfg, |_| true);
        let (color, colors) = share(&f, &cfg, &live);
        assert_eq!(shared_while_live(&f, &cfg, &live, &color), None);
        assert_eq!(colors, 4, "n, the phi, a second color for the totals, and the unreachable values' color");
    }

    #[test]
    fn a_guard_keeps_its_record_apart_from_its_result_and_dead_values_take_a_color() {
        let (f, color, _) = colored(
            "trace 't'(v0:c, v1:d) {
b0:
    jump b1
b1 l:
    v2:x = get v0, v
    v3:dead = add.word v2, 1
    v4:y = get v1, v
    guard_true v4, r0 else out
    v5:z = add.word v4, v2
    set v0, v, v5
    jump b1
resume r0 {
    frame [c = v0, d = v1, x = v2]
}
}
",
        );
        // Value numbers survive the parse.
        assert_eq!(f.values.len(), 6);
        // v2 lives through the guard (its record, then v5): v3, dead at
        // once, still takes a color of its own while v2 is live.
        assert_ne!(color[3], color[2]);
        assert_ne!(color[4], color[2]);
        assert_ne!(color[5], color[4], "a result does not take the color of an operand dying at it");
    }

    #[test]
    fn the_check_finds_values_live_at_once_in_one_variable() {
        let f = crate::plan::tests::looping("main", 3);
        let cfg = Cfg::new(&f);
        let live = LiveRanges::new(&f, &cfg, |_| true);
        let (mut color, _) = share(&f, &cfg, &live);
        // The parameter `n` is live through the loop: give a total its
        // color.
        let n = f.params[0];
        let total = f.values.iter().map(|(v, _)| v).rfind(|v| color[ix(*v)] != color[ix(n)]).expect("a total");
        color[ix(total)] = color[ix(n)];
        assert!(shared_while_live(&f, &cfg, &live, &color).is_some());
    }
}

//! The refiner: which branch conditions refine which operands on each
//! side (`c = lt i, 10; branch c, t, e` bounds `i` in `t`; `branch x, t,
//! e` makes `x` 0 in `e`), read by propagation and again by cleanup.

use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::{BlockId, Function, InstKind, Operand, Terminator, ValueDef, ValueId};
use flowc_lang::ast::Operator;
use flowc_lang::ops::Op;
use flowc_lang::Value;

use flowc_ir::rows::Rows;
use smallvec::SmallVec;

use crate::edit::ix;
use crate::lattice::{self, Info, Kinds};
use flowc_lang::ops::range::Interval;

/// Branch conditions that refine operands, shared with cleanup.
pub struct Refiner {
    pub cfg: Cfg,
    pub dom: DomTree,
    pub(super) def_block: Vec<Option<BlockId>>,
    /// The ranges of the parameters (fixed before the analysis starts, so
    /// a comparison with a parameter refines soundly: `i < n` bounds `i`
    /// by `n`'s upper bound).
    params: Vec<(ValueId, Interval)>,
    /// Per block (raw index) entered from a single predecessor's two-way
    /// test: the raw indices of the values that test can refine (the
    /// condition and its comparison's operands, or the `if_class` object
    /// on its `then` side); [`NO_VALUE`] elsewhere. Refinement skips the
    /// other blocks without looking at their predecessor.
    gates: Vec<[u32; 3]>,
    /// Per value (raw index): the blocks whose gate names it; only values
    /// some gate names are refined. When they are few ([`FEW_GATES`]), refinement looks at those that dominate
    /// the block, however deep.
    gated_at: Rows<BlockId>,
}

/// Up to how many gates a value is refined through, at any depth, by
/// dominance tests; a value more tests name is refined by the gates up to
/// [`REFINE_DEPTH`] dominators up.
const FEW_GATES: usize = 16;

const NO_VALUE: u32 = u32::MAX;

/// How far up the dominator tree refinement looks (keeps it linear).
const REFINE_DEPTH: usize = 6;

impl Refiner {
    /// The refiner of `f`, whose parameters have the infos `params`, from
    /// the defining blocks found by [`Sweep`].
    pub(super) fn new(f: &Function, params: &[Info], def_block: Vec<Option<BlockId>>) -> Refiner {
        let cfg = Cfg::new(f);
        let dom = DomTree::new(f, &cfg);
        let params = param_ranges(f, params);
        let mut gates = vec![[NO_VALUE; 3]; f.blocks.len()];
        for &b in &f.layout {
            let [p] = cfg.preds(b) else { continue };
            gates[ix(b)] = match &f.blocks[*p].term {
                Terminator::Branch { cond: Operand::Value(c), then_block, else_block } if then_block != else_block => {
                    let mut gate = [ix(*c) as u32, NO_VALUE, NO_VALUE];
                    if let ValueDef::Inst(ci) = f.values[*c].def {
                        // A comparison `x OP y` also refines its operands.
                        if let InstKind::Op { op: Operator::Known(_), args, .. } = &f.insts[ci].kind {
                            if let [x, y] = args.as_slice() {
                                let raw = |o: &Operand| o.as_value().map_or(NO_VALUE, |v| ix(v) as u32);
                                gate[1..].copy_from_slice(&[raw(x), raw(y)]);
                            }
                        }
                    }
                    gate
                }
                Terminator::IfClass { obj: Operand::Value(o), then_block, else_block, .. }
                    if then_block != else_block && b == *then_block =>
                {
                    [ix(*o) as u32, NO_VALUE, NO_VALUE]
                }
                _ => continue,
            };
        }
        let n = f.values.len();
        // Each value a block's gate names once (a comparison of a value
        // with itself names it twice).
        let named = f.layout.iter().flat_map(|&b| {
            let gate = &gates[ix(b)];
            (0..3)
                .filter(move |&k| gate[k] != NO_VALUE && (gate[k] as usize) < n && !gate[..k].contains(&gate[k]))
                .map(move |k| (gate[k] as usize, b))
        });
        let gated_at = Rows::group(n, named);
        Refiner { cfg, dom, def_block, params, gates, gated_at }
    }

    /// This refiner for another analysis of its function, whose parameters
    /// now have the infos `params`: what it found of the function's graph
    /// (blocks, dominators, the values each branch tests) does not change
    /// between the rounds of the program's facts
    /// ([`super::program::fixpoint`]), which reuse it.
    pub(super) fn with_params(mut self, f: &Function, params: &[Info]) -> Refiner {
        self.params = param_ranges(f, params);
        self
    }

    /// Whether some branch tests `v`: only then can [`Refiner::refine`]
    /// narrow it.
    pub fn is_tested(&self, v: ValueId) -> bool {
        !self.gated_at.of(ix(v)).is_empty()
    }

    /// `base` (the info of `v`) narrowed by the branches that dominate `at`.
    pub fn refine(&self, f: &Function, v: ValueId, base: Info, at: BlockId) -> Info {
        if !self.is_tested(v) {
            return base;
        }
        let mut info = base;
        let def = self.def_block.get(ix(v)).copied().flatten();
        let few = self.gated_at.of(ix(v));
        if few.len() <= FEW_GATES {
            // The gates that dominate `at`, innermost first (as the walk
            // below meets them).
            let mut over: SmallVec<[(u32, BlockId); FEW_GATES]> = few
                .iter()
                .filter(|&&g| Some(g) != def && self.dom.dominates(g, at))
                .filter_map(|&g| Some((self.dom.preorder(g)?, g)))
                .collect();
            over.sort_unstable_by_key(|&(n, _)| std::cmp::Reverse(n));
            for (_, g) in over {
                info = constrain(f, v, info, self.cfg.preds(g)[0], g, &self.params);
            }
            return info;
        }
        let mut b = at;
        let key = ix(v) as u32;
        for _ in 0..REFINE_DEPTH {
            if def == Some(b) {
                break;
            }
            if self.gates[ix(b)].contains(&key) {
                info = constrain(f, v, info, self.cfg.preds(b)[0], b, &self.params);
            }
            match self.dom.idom(b) {
                Some(d) => b = d,
                None => break,
            }
        }
        info
    }
}

/// The ranges of `f`'s parameters whose infos are `params` (and of the
/// lengths of those known to be constant lists), which refinement bounds
/// comparisons by ([`Refiner`]'s `params`).
fn param_ranges(f: &Function, params: &[Info]) -> Vec<(ValueId, Interval)> {
    let mut ranges: Vec<(ValueId, Interval)> = f
        .params
        .iter()
        .zip(params)
        .filter(|(_, info)| info.kinds == Kinds::INT && info.range != Interval::FULL)
        .map(|(&p, info)| (p, info.range))
        .collect();
    // The length of a parameter known to be a constant list is fixed
    // too: a counter compared with it is bounded by it.
    for (_, i) in f.all_insts() {
        if let (InstKind::Op { op: Operator::Known(Op::Len), args, .. }, Some(v)) =
            (&f.insts[i].kind, f.insts[i].result)
        {
            let list = args.first().and_then(|a| a.as_value()).and_then(|a| f.params.iter().position(|&p| p == a));
            if let Some(Some(Value::List(items))) = list.map(|k| params[k].constant.as_ref()) {
                ranges.push((v, Interval::point(items.len() as i128)));
            }
        }
    }
    ranges
}

/// What reaching `to` from `from` says about `v` (`params`: the ranges of
/// parameters known before the analysis).
fn constrain(f: &Function, v: ValueId, info: Info, from: BlockId, to: BlockId, params: &[(ValueId, Interval)]) -> Info {
    {
        match &f.blocks[from].term {
            Terminator::Branch { cond: Operand::Value(c), then_block, else_block } if then_block != else_block => {
                let taken = to == *then_block;
                if *c == v {
                    return lattice::when_truth(info, taken);
                }
                let ValueDef::Inst(ci) = f.values[*c].def else { return info };
                let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[ci].kind else { return info };
                let param = |p: &ValueId| params.iter().find(|(q, _)| q == p).map(|(_, r)| *r);
                let (other, mirrored) = match args.as_slice() {
                    [Operand::Value(x), Operand::Const(Value::Int(k))] if *x == v => {
                        (Interval::point(*k as i128), false)
                    }
                    [Operand::Const(Value::Int(k)), Operand::Value(x)] if *x == v => {
                        (Interval::point(*k as i128), true)
                    }
                    [Operand::Value(x), Operand::Value(p)] if *x == v && *p != v => match param(p) {
                        Some(r) => (r, false),
                        None => return info,
                    },
                    [Operand::Value(p), Operand::Value(x)] if *x == v && *p != v => match param(p) {
                        Some(r) => (r, true),
                        None => return info,
                    },
                    _ => return info,
                };
                lattice::when_compared_range(info, *op, other, mirrored, taken)
            }
            Terminator::IfClass { obj: Operand::Value(o), class, then_block, else_block }
                if *o == v && to == *then_block && then_block != else_block =>
            {
                Info::object(*class, info.alloc)
            }
            _ => info,
        }
    }
}

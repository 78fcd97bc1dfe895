//! Static execution counts: at most how many times each block runs per
//! entry of its function, where the control flow bounds it — the static
//! profile a compiler without a runtime one uses to tell cold code from
//! hot (the code generator compiles code of the main graph that runs only
//! a few times per run for compile time, not for speed).
//!
//! A block on no cycle runs at most once per entry. A block in natural
//! loops runs at most the product of their trip bounds: in a reducible
//! graph every cycle lies in a natural loop whose header it passes, so
//! within one iteration of its innermost loop a block runs at most once,
//! and a loop is entered at most once per iteration of its parent. A
//! function with an irreducible cycle (a retreating edge whose target
//! does not dominate its source) bounds none of its blocks on cycles.
//!
//! A loop's trip bound (how many times its header runs per entry) is
//! known for counted loops of the shape
//!
//! ```text
//! head:
//!     k = phi [outside: c, latch: k - 1 (or 0)]
//!     branch k, body, exit        (body in the loop, exit not)
//! ```
//!
//! where every input from outside the loop is an integer constant
//! `c >= 0`: `k` takes the values `c, c - 1, ..., 0` at most (only the
//! integer `0` is false), so the header runs at most `c + 1` times.
//! Other loops have no bound.
//!
//! Across functions ([`function_runs`]): the entry runs once per run of
//! the program, and a function runs at most the sum, over its call sites,
//! of the site's block bound times its caller's runs, summed callers
//! first in the module's call graph ([`crate::calls::CallGraph`]). A
//! function on a cycle of calls (recursion), or called from one, or from
//! a block with no bound, has no bound; any other function that nothing
//! running calls never runs.

use flowc_lang::ast::Operator;
use flowc_lang::ops::Op;
use flowc_lang::Value;

use crate::calls::CallGraph;
use crate::cfg::{Cfg, DomTree};
use crate::function::{BlockId, Function, ValueDef, ValueId};
use crate::inst::{InstKind, Operand, Terminator};
use crate::ix;
use crate::loops::{LoopForest, LoopId};

/// At most how many times each block runs per entry of its function.
pub struct RunBounds {
    /// By raw block index; `None`: no bound known (or above `u32::MAX`).
    at_most: Vec<Option<u32>>,
}

impl RunBounds {
    /// The bounds of `f`'s blocks, from its control-flow views (`cycles`:
    /// [`Cfg::cycles`], which callers have already).
    pub fn new(f: &Function, cfg: &Cfg, dom: &DomTree, loops: &LoopForest, cycles: &[Option<u32>]) -> RunBounds {
        let irreducible = cfg.rpo.iter().enumerate().any(|(i, &b)| {
            cfg.succs(b).iter().any(|&s| cfg.rpo_index(s).is_some_and(|k| k as usize <= i) && !dom.dominates(s, b))
        });
        let trips: Vec<Option<u32>> = loops.loops().map(|l| trip_bound(f, loops, l)).collect();
        let at_most = f
            .blocks
            .iter()
            .map(|(b, _)| {
                if cycles[ix(b)].is_none() {
                    return Some(1);
                }
                if irreducible {
                    return None;
                }
                let mut bound: u32 = 1;
                let mut l = loops.loop_of(b);
                while let Some(lp) = l {
                    bound = bound.checked_mul(trips[lp.0 as usize]?)?;
                    l = loops.parent(lp);
                }
                Some(bound)
            })
            .collect();
        RunBounds { at_most }
    }

    /// At most how many times `b` runs per entry of the function (`None`:
    /// no bound known).
    pub fn at_most(&self, b: BlockId) -> Option<u32> {
        self.at_most.get(ix(b)).copied().flatten()
    }
}

/// At most how many times each of `functions` runs per run of the
/// program, which calls each of `entries` (indices into `functions`) once:
/// see the module docs. `bounds[k]` are the block bounds of
/// `functions[k]`. Calls go to functions of kind `function` by name
/// ([`CallGraph`]). `None`: no bound known (or above `u32::MAX`).
pub fn function_runs(functions: &[&Function], bounds: &[&RunBounds], entries: &[usize]) -> Vec<Option<u32>> {
    let calls = CallGraph::of(functions);
    let mut runs: Vec<Option<u32>> = vec![Some(0); functions.len()];
    for &e in entries {
        runs[e] = runs[e].and_then(|r| r.checked_add(1));
    }
    // Callers first: a function's runs are summed up before it adds to its
    // callees', except on a cycle of calls, which has no bound (nor has
    // what it calls: `None` spreads through the sums).
    for k in calls.bottom_up_positions().into_iter().rev() {
        if calls.is_recursive_at(k) {
            runs[k] = None;
        }
        if runs[k] == Some(0) {
            continue; // never runs, so neither do its calls
        }
        let f = functions[k];
        for (b, i) in f.all_insts() {
            let InstKind::Call { func, .. } = &f.insts[i].kind else { continue };
            let Some(g) = calls.position(*func) else { continue };
            let called = runs[k].zip(bounds[k].at_most(b)).and_then(|(r, n)| r.checked_mul(n));
            runs[g] = runs[g].zip(called).and_then(|(r, c)| r.checked_add(c));
        }
    }
    runs
}

/// How many times the header of loop `l` runs at most per entry of the
/// loop, when `l` is a counted loop (see the module docs).
pub fn trip_bound(f: &Function, loops: &LoopForest, l: LoopId) -> Option<u32> {
    let h = loops.header(l);
    let Terminator::Branch { cond: Operand::Value(k), then_block, else_block } = &f.blocks[h].term else {
        return None;
    };
    if !loops.contains(l, *then_block) || loops.contains(l, *else_block) {
        return None;
    }
    let ValueDef::Inst(phi) = f.values[*k].def else { return None };
    let InstKind::Phi(inputs) = &f.insts[phi].kind else { return None };
    if !f.blocks[h].phis.contains(&phi) {
        return None;
    }
    let mut start: u32 = 0;
    for (pred, input) in inputs {
        if loops.contains(l, *pred) {
            let next_is_smaller = match input {
                Operand::Const(Value::Int(0)) => true,
                Operand::Value(v) => decrements(f, *v, *k),
                Operand::Const(_) => false,
            };
            if !next_is_smaller {
                return None;
            }
        } else {
            match input {
                Operand::Const(Value::Int(c)) if *c >= 0 => start = start.max(u32::try_from(*c).ok()?),
                _ => return None,
            }
        }
    }
    start.checked_add(1)
}

/// Whether `v` is `k - 1` (`sub k, 1` or `add k, -1` in any form).
fn decrements(f: &Function, v: ValueId, k: ValueId) -> bool {
    let ValueDef::Inst(i) = f.values[v].def else { return false };
    let InstKind::Op { op: Operator::Known(op), args, .. } = &f.insts[i].kind else { return false };
    let int = |o: &Operand, n: i64| matches!(o, Operand::Const(Value::Int(m)) if *m == n);
    let is_k = |o: &Operand| *o == Operand::Value(k);
    match (op, args.as_slice()) {
        (Op::Sub, [a, b]) => is_k(a) && int(b, 1),
        (Op::Add, [a, b]) => (is_k(a) && int(b, -1)) || (int(a, -1) && is_k(b)),
        _ => false,
    }
}

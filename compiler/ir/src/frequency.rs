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

#[cfg(test)]
mod tests {
    use super::*;

    /// `f`'s block bounds, from control-flow views computed here.
    fn bounds_of(f: &Function) -> RunBounds {
        let cfg = Cfg::new(f);
        let dom = DomTree::new(f, &cfg);
        let loops = LoopForest::with(f, &cfg, &dom);
        RunBounds::new(f, &cfg, &dom, &loops, &cfg.cycles())
    }

    fn bounds(text: &str) -> String {
        let f = &crate::parse::function("test.ir", text).expect("parses");
        let r = bounds_of(f);
        f.layout
            .iter()
            .map(|&b| format!("b{}: {}\n", ix(b), r.at_most(b).map_or("-".to_string(), |n| n.to_string())))
            .collect()
    }

    #[test]
    fn counted_loops_nest_into_products_and_other_loops_have_no_bound() {
        // An outer loop counting 3 down, an inner one counting 4 down, a
        // loop whose counter does not count down, one whose counter goes
        // to 0 at once, and one counting down by adding -1 to it.
        let text = "
main start(v0:n) {
b0:
    jump b1
b1:
    v1:k = phi [b0: 3, b5: v2]
    branch v1, b2, b6
b2:
    jump b3
b3:
    v3:j = phi [b2: 4, b4: v4]
    branch v3, b4, b5
b4:
    v4:j = sub.word v3, 1
    jump b3
b5:
    v2:k = add v1, -1
    jump b1
b6:
    jump b7
b7:
    v5:i = phi [b6: 2, b7: v5]
    branch v5, b7, b8
b8:
    jump b9
b9:
    v6:m = phi [b8: 5, b9: 0]
    branch v6, b9, b10
b10:
    jump b11
b11:
    v7:q = phi [b10: 2, b12: v8]
    branch v7, b12, b13
b12:
    v8:q = add -1, v7
    jump b11
b13:
    print v0
}
";
        expect_test::expect![[r#"
            b0: 1
            b1: 4
            b2: 4
            b3: 20
            b4: 20
            b5: 4
            b6: 1
            b7: -
            b8: 1
            b9: 6
            b10: 1
            b11: 3
            b12: 3
            b13: 1
        "#]]
        .assert_eq(&bounds(text));
    }

    #[test]
    fn a_negative_start_or_a_reversed_branch_bounds_nothing() {
        let text = "
main start(v0:n) {
b0:
    jump b1
b1:
    v1:k = phi [b0: -1, b2: v2]
    branch v1, b2, b3
b2:
    v2:k = sub v1, 1
    jump b1
b3:
    jump b4
b4:
    v3:k = phi [b3: 2, b5: v4]
    branch v3, b6, b5
b5:
    v4:k = sub v3, 1
    jump b4
b6:
    print v0
}
";
        expect_test::expect![[r#"
            b0: 1
            b1: -
            b2: -
            b3: 1
            b4: -
            b5: -
            b6: 1
        "#]]
        .assert_eq(&bounds(text));
    }

    #[test]
    fn an_irreducible_cycle_bounds_no_block_on_a_cycle() {
        // b1 and b2 jump to each other and are both entered from b0; b3
        // is a counted loop.
        let text = "
main start(v0:n) {
b0:
    branch v0, b1, b2
b1:
    branch v0, b2, b3
b2:
    jump b1
b3:
    jump b4
b4:
    v1:k = phi [b3: 2, b4: 0]
    branch v1, b4, b5
b5:
    print v0
}
";
        expect_test::expect![[r#"
            b0: 1
            b1: -
            b2: -
            b3: 1
            b4: -
            b5: 1
        "#]]
        .assert_eq(&bounds(text));
    }

    /// Each function's runs per run of the module's first function, by name.
    fn runs(text: &str) -> String {
        let m = crate::parse::module("test.ir", text).expect("parses");
        let bounds: Vec<RunBounds> = m.functions.iter().map(bounds_of).collect();
        let functions: Vec<&Function> = m.functions.iter().collect();
        let runs = function_runs(&functions, &bounds.iter().collect::<Vec<_>>(), &[0]);
        functions
            .iter()
            .zip(runs)
            .map(|(f, r)| format!("{}: {}\n", f.name, r.map_or("-".to_string(), |n| n.to_string())))
            .collect()
    }

    #[test]
    fn functions_run_as_often_as_their_call_sites_sum_up_to() {
        // main calls `twice` in a loop counted down from 4 (5 header runs,
        // 4 body runs: the body's bound is its header's, 5) and once after
        // it; `twice` calls `leaf` twice; `hot` is called from a loop with
        // no bound and calls `below`, which `rec` calls too; `rec` calls
        // itself; nobody calls `unused`, which calls `leaf`.
        let text = "
main start(v0:n) {
b0:
    jump b1
b1:
    v1:k = phi [b0: 4, b2: v2]
    branch v1, b2, b3
b2:
    v3:x = call twice(v1)
    v2:k = sub v1, 1
    jump b1
b3:
    v4:y = call twice(v0)
    v5:z = call rec(v0)
    jump b4
b4:
    v6:i = phi [b3: v0, b5: v7]
    branch v6, b5, b6
b5:
    v8:w = call hot(v6)
    v7:i = sub v6, 1
    jump b4
b6:
    print v4
}

function twice(v0:x) {
b0:
    v1:a = call leaf(v0)
    v2:b = call leaf(v1)
    return v2
}

function leaf(v0:x) {
b0:
    return v0
}

function hot(v0:x) {
b0:
    v1:a = call below(v0)
    return v1
}

function rec(v0:x) {
b0:
    branch v0, b1, b2
b1:
    v1:a = call rec(v0)
    v2:b = call below(v1)
    return v2
b2:
    return v0
}

function below(v0:x) {
b0:
    return v0
}

function unused(v0:x) {
b0:
    v1:a = call leaf(v0)
    return v1
}
";
        expect_test::expect![[r#"
            start: 1
            twice: 6
            leaf: 12
            hot: -
            rec: -
            below: -
            unused: 0
        "#]]
        .assert_eq(&runs(text));
    }
}

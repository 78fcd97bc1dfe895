//! The sparse liveness of huge functions (`flowc_ir::live_ranges`) agrees
//! with the dense one (`flowc_ir::liveness`) on every function of every
//! corpus program and of generated programs, as lowered and as optimized:
//! the same live-out set at every reachable block, and as live-in the
//! values live at the block's start that its phis do not define.

use std::collections::BTreeSet;

use flowc_ir::cfg::Cfg;
use flowc_ir::ix;
use flowc_ir::live_ranges::LiveRanges;
use flowc_ir::liveness::Liveness;
use flowc_ir::{BlockId, Function, InstKind, Operand, ValueId};

/// The values live at the start of `b` (after its phis), from its live-out
/// set: the dense analysis's answer, walked back by hand.
fn live_in_from(f: &Function, b: BlockId, out: &BTreeSet<usize>) -> BTreeSet<usize> {
    let mut live = out.clone();
    let uses = |live: &mut BTreeSet<usize>, o: &Operand| {
        if let Some(v) = o.as_value() {
            live.insert(ix(v));
        }
    };
    let data = &f.blocks[b];
    data.term.operands().for_each(|o| uses(&mut live, o));
    if let Some(r) = data.term.resume() {
        f.resumes[r].operands().for_each(|o| uses(&mut live, o));
    }
    for &i in data.insts.iter().rev() {
        if let Some(r) = f.insts[i].result {
            live.remove(&ix(r));
        }
        f.insts[i].kind.operands().for_each(|o| uses(&mut live, o));
        if let InstKind::Guard { resume, .. } = &f.insts[i].kind {
            f.resumes[*resume].operands().for_each(|o| uses(&mut live, o));
        }
    }
    for &p in &data.phis {
        if let Some(r) = f.insts[p].result {
            live.remove(&ix(r));
        }
    }
    if b == f.entry {
        // Parameters are defined at the entry's start.
        for &p in &f.params {
            live.remove(&ix(p));
        }
    }
    live
}

fn agree(name: &str, f: &Function) {
    let cfg = Cfg::new(f);
    let dense = Liveness::new(f, &cfg);
    let sparse = LiveRanges::new(f, &cfg, |_| true);
    for &b in &cfg.rpo {
        let out: BTreeSet<usize> = dense.live_out(b).unwrap().iter_ones().collect();
        let sparse_out: Vec<usize> = sparse.live_out(b).iter().map(|v| ix(*v)).collect();
        assert!(sparse_out.windows(2).all(|w| w[0] < w[1]), "{name}: {}: live-out not sorted", f.name);
        assert_eq!(sparse_out, out.iter().copied().collect::<Vec<_>>(), "{name}: {}: live-out of {b:?}", f.name);
        for &v in sparse.live_out(b) {
            assert!(sparse.is_live_out(b, v));
        }
        let sparse_in: Vec<usize> = sparse.live_in(b).iter().map(|v| ix(*v)).collect();
        let expected: Vec<usize> = live_in_from(f, b, &out).into_iter().collect();
        assert_eq!(sparse_in, expected, "{name}: {}: live-in of {b:?}", f.name);
    }
}

#[test]
fn sparse_liveness_agrees_with_the_dense_one_on_the_corpus_and_generated_programs() {
    let mut checked = 0;
    for (name, p) in flowc_testkit::corpus::with_generated(40) {
        let Some(label) = p.default_entry() else { continue };
        let env = p.entry_env(label).unwrap_or_default().to_vec();
        let Ok(module) = flowc_frontend::lower(&p, label) else { continue };
        for f in &module.functions {
            agree(&name, f);
        }
        let expected = flowc_testkit::engines::reference(&p, label, &env);
        let optimized = flowc_testkit::engines::optimize_checked(module, &env, &expected, &name);
        for f in &optimized.functions {
            agree(&name, f);
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} functions checked");
}

#[test]
fn only_wanted_values_are_tracked() {
    let m = flowc_ir::parse::module(
        "t.ir",
        r#"main start(v0:n) {
b0 start:
    jump b1
b1 loop:
    v1:i = phi [b0: 0, b2: v2]
    v3:c = lt v1, v0
    branch v3, b2, b3
b2 body:
    v2:i = add v1, 1
    jump b1
b3 done:
    print v1
}
"#,
    )
    .unwrap();
    let f = &m.functions[0];
    let cfg = Cfg::new(f);
    // Only the loop bound n (v0): live around the whole loop, not after it.
    let sparse = LiveRanges::new(f, &cfg, |v| ix(v) == 0);
    let names = |vs: &[ValueId]| vs.iter().map(|v| format!("v{}", ix(*v))).collect::<Vec<_>>();
    let [b0, b1, b2, b3] = [f.layout[0], f.layout[1], f.layout[2], f.layout[3]];
    assert_eq!(names(sparse.live_out(b0)), ["v0"]);
    assert_eq!(names(sparse.live_in(b1)), ["v0"]);
    assert_eq!(names(sparse.live_out(b2)), ["v0"]);
    assert!(sparse.live_in(b3).is_empty() && sparse.live_out(b3).is_empty());
    assert!(sparse.live_in(b0).is_empty(), "a parameter is defined in the entry");
}

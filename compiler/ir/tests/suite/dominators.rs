//! The dominator tree of `cfg` (Cooper–Harvey–Kennedy on flat arrays)
//! agrees with petgraph's `simple_fast` run over a graph derived from the
//! same CFG, on every function of the corpus and of generated programs.

use petgraph::algo::dominators::simple_fast;
use petgraph::graph::DiGraph;

use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::Function;
use flowc_testkit::{corpus, gen};

fn agree(f: &Function, name: &str) {
    let cfg = Cfg::new(f);
    let dom = DomTree::new(f, &cfg);
    let mut g: DiGraph<usize, ()> = DiGraph::new();
    let nodes: Vec<_> = cfg.rpo.iter().enumerate().map(|(i, _)| g.add_node(i)).collect();
    for (i, &b) in cfg.rpo.iter().enumerate() {
        for &s in cfg.succs(b) {
            if let Some(j) = cfg.rpo_index(s) {
                g.add_edge(nodes[i], nodes[j as usize], ());
            }
        }
    }
    if nodes.is_empty() {
        return;
    }
    let reference = simple_fast(&g, nodes[0]);
    for (i, &b) in cfg.rpo.iter().enumerate() {
        let expected = reference.immediate_dominator(nodes[i]).map(|d| cfg.rpo[g[d]]);
        assert_eq!(dom.idom(b), expected, "{name}: idom of {b:?}");
        if let Some(d) = expected {
            assert!(dom.dominates(d, b) && !dom.dominates(b, d) || d == b, "{name}");
        }
    }
}

#[test]
fn dominators_agree_with_petgraph() {
    let mut programs: Vec<(String, flowc_lang::Program)> =
        corpus::all().into_iter().map(|c| (c.name(), c.program)).collect();
    programs.extend((0..200).map(|s| (format!("seed {s}"), gen::program(s))));
    for (name, p) in programs {
        for b in p.main_blocks().map(|b| b.label).collect::<Vec<_>>().into_iter().take(3) {
            let m = flowc_frontend::lower(&p, b).unwrap();
            for f in &m.functions {
                agree(f, &name);
            }
        }
    }
}

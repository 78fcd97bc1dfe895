//! The call graph of a module: which function calls which (a `call`
//! instruction naming it), built with petgraph, and its strongly connected
//! components, which say which functions are recursive (Factor's
//! `analyze-recursive`): a function is recursive when it can reach a call
//! of itself, directly or through others.
//!
//! Readers: the JIT (a recursive function is not inlined into traces but
//! called, and gets compiled as a whole when its calls get hot), cleanup
//! (it inlines only callees that are not recursive) and `flowc explore`.
//! Calls of names that are not functions of the module are left out.

use petgraph::graph::{DiGraph, NodeIndex};

use crate::function::{FunctionKind, Module};
use crate::inst::InstKind;
use flowc_lang::Symbol;

/// The call graph of a module's functions (the main graph included).
#[derive(Clone, Debug)]
pub struct CallGraph {
    graph: DiGraph<Symbol, ()>,
    /// The nodes of the functions (kind `function`), by name.
    functions: std::collections::HashMap<Symbol, NodeIndex>,
    /// Per node: whether it is recursive.
    recursive: Vec<bool>,
    /// Per node: its strongly connected component, numbered so that a
    /// component comes after every component it calls (callees first).
    component: Vec<usize>,
}

impl CallGraph {
    /// The call graph of `module`'s main graph and functions (not traces).
    pub fn new(module: &Module) -> CallGraph {
        let mut graph: DiGraph<Symbol, ()> = DiGraph::new();
        let functions: Vec<_> = module.functions.iter().filter(|f| f.kind != FunctionKind::Trace).collect();
        let nodes: Vec<NodeIndex> = functions.iter().map(|f| graph.add_node(f.name)).collect();
        let by_name: std::collections::HashMap<Symbol, NodeIndex> = functions
            .iter()
            .zip(&nodes)
            .filter(|(f, _)| f.kind == FunctionKind::Function)
            .map(|(f, n)| (f.name, *n))
            .collect();
        let node_of = |name: Symbol| by_name.get(&name).copied();
        for (k, f) in functions.iter().enumerate() {
            let mut callees: Vec<NodeIndex> = Vec::new();
            for (_, i) in f.all_insts() {
                if let InstKind::Call { func, .. } = &f.insts[i].kind {
                    if let Some(n) = node_of(*func) {
                        if !callees.contains(&n) {
                            callees.push(n);
                        }
                    }
                }
            }
            for n in callees {
                graph.add_edge(nodes[k], n, ());
            }
        }
        // Tarjan's algorithm lists components callees first.
        let sccs = petgraph::algo::tarjan_scc(&graph);
        let mut recursive = vec![false; graph.node_count()];
        let mut component = vec![0; graph.node_count()];
        for (c, scc) in sccs.iter().enumerate() {
            for &n in scc {
                component[n.index()] = c;
                recursive[n.index()] = scc.len() > 1 || graph.contains_edge(n, n);
            }
        }
        CallGraph { graph, functions: by_name, recursive, component }
    }

    fn node(&self, name: Symbol) -> Option<NodeIndex> {
        self.functions.get(&name).copied()
    }

    /// Whether function `name` can call itself (through any chain).
    pub fn is_recursive(&self, name: Symbol) -> bool {
        self.node(name).is_some_and(|n| self.recursive[n.index()])
    }

    /// The recursive functions, in the module's order.
    pub fn recursive(&self) -> Vec<Symbol> {
        self.graph.node_indices().filter(|n| self.recursive[n.index()]).map(|n| self.graph[n]).collect()
    }

    /// The functions `name` calls, in the order of their first call.
    pub fn callees(&self, name: Symbol) -> Vec<Symbol> {
        let Some(n) = self.node(name) else { return Vec::new() };
        let mut out: Vec<Symbol> = self.graph.neighbors(n).map(|m| self.graph[m]).collect();
        // petgraph lists the newest edge first.
        out.reverse();
        out
    }

    /// The functions in an order where every function comes after the
    /// ones it calls, except within a recursive cycle (bottom-up).
    pub fn bottom_up(&self) -> Vec<Symbol> {
        let mut nodes: Vec<NodeIndex> = self.graph.node_indices().collect();
        nodes.sort_by_key(|n| (self.component[n.index()], n.index()));
        nodes.into_iter().map(|n| self.graph[n]).collect()
    }
}

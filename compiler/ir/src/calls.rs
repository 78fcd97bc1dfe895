//! The call graph of a module: which function calls which (a `call`
//! instruction naming it), built with petgraph, and its strongly connected
//! components, which say which functions are recursive (Factor's
//! `analyze-recursive`): a function is recursive when it can reach a call
//! of itself, directly or through others.
//!
//! Readers: the JIT (a recursive function is not inlined into traces but
//! called, and gets compiled as a whole when its calls get hot), propagate
//! (which marks the calls whose inlining keeps every depth:
//! [`CallGraph::inlines_exactly`]) and cleanup (which inlines callees
//! bottom-up: [`CallGraph::bottom_up_positions`]), and the code
//! generator's static counts of how often functions run
//! (`crate::frequency::function_runs`, over [`CallGraph::of`] a set of
//! functions to compile). Calls of names that are
//! not functions of the module are left out.
//!
//! Call depths: a call deeper than the run's limit raises
//! `stack_overflow`, so inlining a call removes a frame an error could
//! count. Where no recursion leads, depths are bounded by the graph: a
//! function's *depth* is the longest chain of calls from the main graph
//! to its frame (its deepest frame, if it is called from several places),
//! its *height* the longest chain of frames it makes below it, itself
//! included. Both are unbounded (`None`) where recursion is involved: the
//! depth of what recursion calls, the height of what reaches recursion.

use petgraph::graph::{DiGraph, NodeIndex};

use crate::function::{Function, FunctionKind, Module};
use flowc_lang::Symbol;

/// Which nodes of call graph `graph` are recursive (in a strongly
/// connected component of more than one node, or calling themselves), and
/// the nodes callees first: component after component in Tarjan's order
/// (a component comes after every component it calls), each component's
/// nodes by index, so the order is deterministic.
fn components(graph: &DiGraph<Symbol, ()>) -> (Vec<bool>, Vec<NodeIndex>) {
    let mut recursive = vec![false; graph.node_count()];
    let mut order = Vec::with_capacity(graph.node_count());
    for mut scc in petgraph::algo::tarjan_scc(graph) {
        scc.sort_unstable();
        for &n in &scc {
            recursive[n.index()] = scc.len() > 1 || graph.contains_edge(n, n);
        }
        order.extend(scc);
    }
    (recursive, order)
}

/// The recursive ones of functions `names`, where function `names[a]`
/// calls `names[b]` for each `(a, b)` of `calls`: the rule [`CallGraph`]
/// applies to a module, for a call graph found elsewhere (the JIT's light
/// start reads it from the program's text).
pub fn recursive_among(names: &[Symbol], calls: impl IntoIterator<Item = (usize, usize)>) -> Vec<Symbol> {
    let mut graph: DiGraph<Symbol, ()> = DiGraph::new();
    let nodes: Vec<NodeIndex> = names.iter().map(|&n| graph.add_node(n)).collect();
    for (a, b) in calls {
        graph.update_edge(nodes[a], nodes[b], ());
    }
    let (recursive, _) = components(&graph);
    nodes.iter().filter(|n| recursive[n.index()]).map(|&n| graph[n]).collect()
}

/// The call graph of a module's functions (the main graph included).
#[derive(Clone, Debug)]
pub struct CallGraph {
    graph: DiGraph<Symbol, ()>,
    /// The nodes of the functions (kind `function`), by name.
    functions: std::collections::HashMap<Symbol, NodeIndex>,
    /// Per node: whether it is recursive.
    recursive: Vec<bool>,
    /// The nodes callees first: component after component in Tarjan's
    /// order (a component comes after every component it calls), each
    /// component's nodes by index, so the order is deterministic.
    order: Vec<NodeIndex>,
    /// Per node: its depth and height (see the module docs).
    depth: Vec<Option<usize>>,
    height: Vec<Option<usize>>,
    /// The node of each function of the module, by position (traces have
    /// none), and the position of each node.
    node_of: Vec<Option<NodeIndex>>,
    position: Vec<usize>,
}

impl CallGraph {
    /// The call graph of `module`'s main graph and functions (not traces).
    pub fn new(module: &Module) -> CallGraph {
        let functions: Vec<&Function> = module.functions.iter().filter(|f| f.kind != FunctionKind::Trace).collect();
        let mut graph = CallGraph::of(&functions);
        // Positions in the module, where traces have no node.
        let mut next = graph.node_of.iter().copied();
        graph.node_of = module
            .functions
            .iter()
            .map(|f| if f.kind == FunctionKind::Trace { None } else { next.next().flatten() })
            .collect();
        for (k, n) in graph.node_of.iter().enumerate() {
            if let Some(n) = n {
                graph.position[n.index()] = k;
            }
        }
        graph
    }

    /// The call graph of `functions` (no traces), whose positions in the
    /// slice stand for them ([`CallGraph::depth`],
    /// [`CallGraph::bottom_up_positions`]): for code that compiles a set of
    /// functions that is not a module.
    pub fn of(functions: &[&Function]) -> CallGraph {
        let mut graph: DiGraph<Symbol, ()> = DiGraph::new();
        let nodes: Vec<NodeIndex> = functions.iter().map(|f| graph.add_node(f.name)).collect();
        let by_name: std::collections::HashMap<Symbol, NodeIndex> = functions
            .iter()
            .zip(&nodes)
            .filter(|(f, _)| f.kind == FunctionKind::Function)
            .map(|(f, n)| (f.name, *n))
            .collect();
        let node_of = |name: Symbol| by_name.get(&name).copied();
        // One edge per caller and callee: the caller that last added an
        // edge to each node.
        let mut last_caller = vec![usize::MAX; nodes.len()];
        for (k, f) in functions.iter().enumerate() {
            for func in f.callees() {
                if let Some(n) = node_of(func).filter(|n| last_caller[n.index()] != k) {
                    last_caller[n.index()] = k;
                    graph.add_edge(nodes[k], n, ());
                }
            }
        }
        let (recursive, order) = components(&graph);
        // Callees first: heights; callers first: depths, unbounded below
        // recursion (`None` spreads from callers to callees).
        let mut height: Vec<Option<usize>> = vec![None; graph.node_count()];
        for &n in &order {
            if recursive[n.index()] {
                continue;
            }
            let below = graph.neighbors(n).map(|m| height[m.index()]).try_fold(0, |h, m| m.map(|m| h.max(m)));
            height[n.index()] = below.map(|h| h + 1);
        }
        let mut depth: Vec<Option<usize>> = vec![None; graph.node_count()];
        for (k, f) in functions.iter().enumerate() {
            if f.kind == FunctionKind::Main {
                depth[nodes[k].index()] = Some(0);
            }
        }
        for &n in order.iter().rev() {
            let mut callers = graph.neighbors_directed(n, petgraph::Direction::Incoming).peekable();
            if recursive[n.index()] {
                depth[n.index()] = None;
            } else if callers.peek().is_some() {
                depth[n.index()] = callers.try_fold(0, |d, c| depth[c.index()].map(|dc| d.max(dc + 1)));
            }
        }
        let position = (0..nodes.len()).collect();
        let node_of = nodes.into_iter().map(Some).collect();
        CallGraph { graph, functions: by_name, recursive, order, depth, height, node_of, position }
    }

    /// The deepest frame function number `k` of the module can have when
    /// no recursion leads to it (the main graph's is 0); `None`: unbounded,
    /// or never called.
    pub fn depth(&self, k: usize) -> Option<usize> {
        let n = (*self.node_of.get(k)?)?;
        self.depth[n.index()]
    }

    /// The longest chain of frames function `name` makes, itself included,
    /// when it reaches no recursion (a leaf: 1).
    pub fn height(&self, name: Symbol) -> Option<usize> {
        self.height[self.node(name)?.index()]
    }

    /// Whether a call of `callee` in function number `k` of the module can
    /// be inlined without changing where a run exceeds its call depth: the
    /// callee is not recursive, and the frames the call makes — its height
    /// below the caller's deepest frame — stay under `limit` frames, a
    /// depth no run reaches without recursion. (A leaf callee's frame is
    /// one; cleanup inlines leaves anywhere, see `flowc_passes::cleanup`.)
    pub fn inlines_exactly(&self, k: usize, callee: Symbol, limit: usize) -> bool {
        match (self.depth(k), self.height(callee)) {
            (Some(d), Some(h)) => d + h < limit,
            _ => false,
        }
    }

    /// The positions in the module of its functions (not traces) in an
    /// order where every function comes after the ones it calls, except
    /// within a recursive cycle (bottom-up).
    pub fn bottom_up_positions(&self) -> Vec<usize> {
        self.order.iter().map(|n| self.position[n.index()]).collect()
    }

    fn node(&self, name: Symbol) -> Option<NodeIndex> {
        self.functions.get(&name).copied()
    }

    /// Whether function `name` can call itself (through any chain).
    pub fn is_recursive(&self, name: Symbol) -> bool {
        self.node(name).is_some_and(|n| self.recursive[n.index()])
    }

    /// Whether the function at position `k` can call itself (through any
    /// chain); traces cannot.
    pub fn is_recursive_at(&self, k: usize) -> bool {
        self.node_of.get(k).copied().flatten().is_some_and(|n| self.recursive[n.index()])
    }

    /// The position of function `name` (kind `function`).
    pub fn position(&self, name: Symbol) -> Option<usize> {
        Some(self.position[self.node(name)?.index()])
    }

    /// The recursive functions, in the module's order.
    pub fn recursive(&self) -> Vec<Symbol> {
        self.graph.node_indices().filter(|n| self.recursive[n.index()]).map(|n| self.graph[n]).collect()
    }
}

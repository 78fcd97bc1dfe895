//! Finding webs: allocations of one class joined by phis. A phi belongs to
//! a web if all its inputs are allocations or web phis of one class (an
//! optimistic fixpoint); a union-find over phis and their inputs makes the
//! webs.

use flowc_ir::{Function, InstId, InstKind, Operand, ValueId};
use flowc_lang::Symbol;

use super::{Web, WebId, GET_RESULT, NO_WEB as NONE};
use crate::edit::ix;

/// Per phi: not yet seen, one class, or not a web phi.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    Bottom,
    Class(Symbol),
    Not,
}

/// The webs of `f` (in layout order of their first value) and the web of
/// each value, by raw value index ([`super::NO_WEB`] for none,
/// [`super::GET_RESULT`] for `get` results; empty when `f` allocates
/// nothing).
///
/// Only allocations and phis can be in a web, so the analysis numbers
/// them densely (`node`) and works on those alone.
pub fn find(f: &Function) -> (Vec<Web>, Vec<u32>) {
    // Allocations and phis in layout order, and their kinds.
    let mut nodes: Vec<(InstId, ValueId)> = Vec::new();
    let mut kind: Vec<Kind> = Vec::new();
    let mut any_new = false;
    let mut gets = Vec::new();
    for (_, i) in f.all_insts() {
        let Some(r) = f.insts[i].result else { continue };
        let k = match &f.insts[i].kind {
            InstKind::New(c) => Kind::Class(*c),
            InstKind::Phi(_) => Kind::Bottom,
            InstKind::Get { .. } => {
                gets.push(r);
                continue;
            }
            _ => continue,
        };
        any_new |= k != Kind::Bottom;
        nodes.push((i, r));
        kind.push(k);
    }
    if !any_new {
        return (Vec::new(), Vec::new());
    }
    let mut node = vec![NONE; f.values.len()];
    for (k, &(_, r)) in nodes.iter().enumerate() {
        node[ix(r)] = k as u32;
    }
    let node_of = |o: &Operand| o.as_value().map_or(NONE, |v| node.get(ix(v)).copied().unwrap_or(NONE));
    classify_phis(f, &nodes, &node_of, &mut kind);
    let mut parent: Vec<usize> = (0..nodes.len()).collect();
    for (k, &(i, _)) in nodes.iter().enumerate() {
        if let (Kind::Class(_), InstKind::Phi(inputs)) = (kind[k], &f.insts[i].kind) {
            for (_, o) in inputs {
                let u = node_of(o);
                if u != NONE {
                    union(&mut parent, k, u as usize);
                }
            }
        }
    }
    let mut webs: Vec<Web> = Vec::new();
    let mut web_of = node;
    let mut root_web: Vec<Option<WebId>> = vec![None; nodes.len()];
    for (k, &(i, r)) in nodes.iter().enumerate() {
        let Kind::Class(class) = kind[k] else {
            web_of[ix(r)] = NONE;
            continue;
        };
        let root = root(&mut parent, k);
        let w = *root_web[root].get_or_insert_with(|| {
            webs.push(Web { class, news: vec![], phis: vec![], values: vec![], escape: None, nested: false });
            WebId(webs.len() as u32 - 1)
        });
        web_of[ix(r)] = w.0;
        let web = &mut webs[w.0 as usize];
        if matches!(f.insts[i].kind, InstKind::Phi(_)) {
            web.phis.push(i);
        } else {
            web.news.push(i);
        }
    }
    for web in &mut webs {
        web.values = web.news.iter().chain(&web.phis).filter_map(|&i| f.insts[i].result).collect();
    }
    for g in gets {
        web_of[ix(g)] = GET_RESULT;
    }
    (webs, web_of)
}

/// Optimistic fixpoint: a phi is a web phi of class C if all its inputs are
/// allocations of C or web phis of C. Phis in cycles no allocation enters
/// end up not being web phis. `node_of` gives an operand's node, or
/// [`NONE`] if it is not an allocation or phi (then it is `Not`).
fn classify_phis(f: &Function, nodes: &[(InstId, ValueId)], node_of: &dyn Fn(&Operand) -> u32, kind: &mut [Kind]) {
    for bottom_is_not in [false, true] {
        loop {
            let mut changed = false;
            for (k, &(i, _)) in nodes.iter().enumerate() {
                let InstKind::Phi(inputs) = &f.insts[i].kind else { continue };
                let mut acc = Kind::Bottom;
                for (_, o) in inputs {
                    let ko = match node_of(o) {
                        NONE => Kind::Not,
                        u => match kind[u as usize] {
                            Kind::Bottom if bottom_is_not => Kind::Not,
                            x => x,
                        },
                    };
                    acc = match (acc, ko) {
                        (Kind::Bottom, x) | (x, Kind::Bottom) => x,
                        (Kind::Class(a), Kind::Class(b)) if a == b => Kind::Class(a),
                        _ => Kind::Not,
                    };
                }
                if bottom_is_not && acc == Kind::Bottom {
                    acc = Kind::Not;
                }
                if kind[k] != acc {
                    kind[k] = acc;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }
}

fn root(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (root(parent, a), root(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

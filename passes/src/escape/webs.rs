//! Finding webs: allocations of one class joined by phis. A phi belongs to
//! a web if all its inputs are allocations or web phis of one class (an
//! optimistic fixpoint); a union-find over phis and their inputs makes the
//! webs.

use flowc_ir::{Function, InstId, InstKind, ValueId};
use flowc_lang::Symbol;

use super::{Web, WebId};
use crate::edit::ix;

/// Per phi: not yet seen, one class, or not a web phi.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    Bottom,
    Class(Symbol),
    Not,
}

/// The webs of `f` (in layout order of their first value) and the web of
/// each value, by raw value index.
pub fn find(f: &Function) -> (Vec<Web>, Vec<Option<WebId>>) {
    let n = f.values.len();
    let mut kind: Vec<Option<Kind>> = vec![None; n];
    let mut phis = Vec::new();
    for (_, i) in f.all_insts() {
        let Some(r) = f.insts[i].result else { continue };
        match &f.insts[i].kind {
            InstKind::New(c) => kind[ix(r)] = Some(Kind::Class(*c)),
            InstKind::Phi(_) => {
                kind[ix(r)] = Some(Kind::Bottom);
                phis.push((i, r));
            }
            _ => {}
        }
    }
    classify_phis(f, &phis, &mut kind);
    // Union-find over web values.
    let mut parent: Vec<usize> = (0..n).collect();
    for &(i, r) in &phis {
        if let (Some(Kind::Class(_)), InstKind::Phi(inputs)) = (kind[ix(r)], &f.insts[i].kind) {
            for (_, o) in inputs {
                if let Some(u) = o.as_value() {
                    union(&mut parent, ix(r), ix(u));
                }
            }
        }
    }
    let mut webs: Vec<Web> = Vec::new();
    let mut web_of = vec![None; n];
    let mut root_web: Vec<Option<WebId>> = vec![None; n];
    for (_, i) in f.all_insts() {
        let Some(r) = f.insts[i].result else { continue };
        let Some(Kind::Class(class)) = kind[ix(r)] else { continue };
        let root = root(&mut parent, ix(r));
        let w = *root_web[root].get_or_insert_with(|| {
            webs.push(Web { class, news: vec![], phis: vec![], values: vec![], escape: None, nested: false });
            WebId(webs.len() as u32 - 1)
        });
        web_of[ix(r)] = Some(w);
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
    (webs, web_of)
}

/// Optimistic fixpoint: a phi is a web phi of class C if all its inputs are
/// allocations of C or web phis of C. Phis in cycles no allocation enters
/// end up not being web phis.
fn classify_phis(f: &Function, phis: &[(InstId, ValueId)], kind: &mut [Option<Kind>]) {
    for bottom_is_not in [false, true] {
        loop {
            let mut changed = false;
            for &(i, r) in phis {
                let InstKind::Phi(inputs) = &f.insts[i].kind else { continue };
                let mut k = Kind::Bottom;
                for (_, o) in inputs {
                    let ko = match o.as_value().and_then(|v| kind.get(ix(v)).copied().flatten()) {
                        Some(Kind::Bottom) if bottom_is_not => Kind::Not,
                        Some(x) => x,
                        None => Kind::Not,
                    };
                    k = match (k, ko) {
                        (Kind::Bottom, x) | (x, Kind::Bottom) => x,
                        (Kind::Class(a), Kind::Class(b)) if a == b => Kind::Class(a),
                        _ => Kind::Not,
                    };
                }
                if bottom_is_not && k == Kind::Bottom {
                    k = Kind::Not;
                }
                if kind[ix(r)] != Some(k) {
                    kind[ix(r)] = Some(k);
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

//! Pass `escape`: which allocations of each function never escape.
//!
//! Reads: the IR only (loop information is not needed). Writes:
//! `cx.facts(i).escape` for function `i`; the IR is not changed.
//! [`Escape::analyze`] is also called by `unbox` between its rounds.
//!
//! Allocations are grouped into *webs*: a phi whose inputs are all
//! allocations (or such phis) of one class joins them into one abstract
//! object, found by an optimistic fixpoint over the phis and a union-find.
//! A web escapes if one of its values is printed, returned, passed to a
//! call, used by an operation, by `check_bound`, as a branch condition, by
//! a guard or in resume data; merged at a phi that is not in a web (a
//! constant, another class, anything not an allocation); stored by `set`
//! into an object that is not a web value, or into a web that escapes; or
//! read back by `get` from a field of a web when that get's result escapes
//! in one of these ways. Allowed: being the object of `get`/`set`, the
//! operand of `if_class`, an input of a phi of its own web, being stored
//! into a non-escaping web (then the web is *nested*: unbox takes it once
//! the outer web is gone). Field contents are tracked by a points-to
//! fixpoint (which webs each field of each web may hold), so escape through
//! nested objects is found at any depth.
//!
//! Guarantees: a web reported as not escaping is only ever used in the
//! allowed ways above; output is in layout order (deterministic).

use std::collections::BTreeSet;
use std::fmt;

use flowc_ir::{Function, InstId, InstKind, Module, Operand, Terminator, ValueDef, ValueId};
use flowc_lang::syntax::readable_print::name;
use flowc_lang::Symbol;

use crate::edit::ix;
use crate::Context;

/// The index of a web in its function's [`Escape`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WebId(pub u32);

/// Why a web escapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    Printed,
    Returned,
    /// Passed to a call of the function.
    Passed(Symbol),
    /// An operand of an operation (named).
    UsedBy(Symbol),
    CheckBound,
    Branched,
    Guarded,
    InResumeData,
    /// An input of this phi, which is not in a web.
    Merged(ValueId),
    /// Stored into something not known to be a web value.
    StoredUnknown,
    /// Stored into this web value's web, which escapes.
    StoredInto(ValueId),
    /// Read back from a field by this `get`, whose result escapes.
    ReadBack(ValueId, Box<Reason>),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = flowc_ir::print::value_ref;
        match self {
            Reason::Printed => write!(f, "printed"),
            Reason::Returned => write!(f, "returned"),
            Reason::Passed(func) => write!(f, "passed to {func}"),
            Reason::UsedBy(op) => write!(f, "used by {op}"),
            Reason::CheckBound => write!(f, "used by check_bound"),
            Reason::Branched => write!(f, "branched on"),
            Reason::Guarded => write!(f, "guarded"),
            Reason::InResumeData => write!(f, "in resume data"),
            Reason::Merged(phi) => write!(f, "merged at {}", v(*phi)),
            Reason::StoredUnknown => write!(f, "stored into an unknown object"),
            Reason::StoredInto(w) => write!(f, "stored into {}, which escapes", v(*w)),
            Reason::ReadBack(get, r) => write!(f, "read back as {}, {r}", v(*get)),
        }
    }
}

/// Allocations of one class merged by phis: one abstract object.
#[derive(Clone, Debug)]
pub struct Web {
    pub class: Symbol,
    /// The `new` instructions, in layout order.
    pub news: Vec<InstId>,
    /// The phis joining them, in layout order.
    pub phis: Vec<InstId>,
    /// The results of `news` then of `phis`.
    pub values: Vec<ValueId>,
    /// `None` if the web does not escape.
    pub escape: Option<Reason>,
    /// A value of the web is stored into another (non-escaping) web.
    pub nested: bool,
}

/// The webs of one function and which of them escape.
#[derive(Clone, Debug, Default)]
pub struct Escape {
    webs: Vec<Web>,
    /// Web of each value, by raw value index.
    web_of: Vec<Option<WebId>>,
}

/// Per phi: not yet seen, one class, or not a web phi.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    Bottom,
    Class(Symbol),
    Not,
}

impl Escape {
    /// Analyses `f`.
    pub fn analyze(f: &Function) -> Escape {
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
            let root = find(&mut parent, ix(r));
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
        let mut e = Escape { webs, web_of };
        e.solve(f);
        e
    }

    /// All webs, escaping or not, in layout order of their first value.
    pub fn webs(&self) -> &[Web] {
        &self.webs
    }

    pub fn web(&self, w: WebId) -> &Web {
        &self.webs[w.0 as usize]
    }

    /// The web of a value (a `new` or a web phi).
    pub fn web_of(&self, v: ValueId) -> Option<WebId> {
        self.web_of.get(ix(v)).copied().flatten()
    }

    /// Whether `v` is a value of a web that escapes (false for values
    /// that are not allocations).
    pub fn escapes(&self, v: ValueId) -> bool {
        self.web_of(v).is_some_and(|w| self.web(w).escape.is_some())
    }

    /// The webs that do not escape.
    pub fn non_escaping(&self) -> impl Iterator<Item = WebId> + '_ {
        (0..self.webs.len() as u32).map(WebId).filter(|&w| self.web(w).escape.is_none())
    }

    /// Builds the constraints in one sweep, then solves them.
    fn solve(&mut self, f: &Function) {
        let mut c = Constraints::default();
        let is_get = |v: ValueId| match f.values[v].def {
            ValueDef::Inst(i) => matches!(f.insts[i].kind, InstKind::Get { .. }),
            _ => false,
        };
        let tracked = |o: &Operand| o.as_value().filter(|&v| self.web_of(v).is_some() || is_get(v));
        for (_, i) in f.all_insts() {
            let data = &f.insts[i];
            let escape_all = |c: &mut Constraints, ops: Vec<&Operand>, why: Reason| {
                for o in ops {
                    if let Some(v) = tracked(o) {
                        c.escapes.push((v, why.clone()));
                    }
                }
            };
            match &data.kind {
                InstKind::Phi(inputs) => {
                    let Some(r) = data.result else { continue };
                    if self.web_of(r).is_none() {
                        escape_all(&mut c, inputs.iter().map(|(_, o)| o).collect(), Reason::Merged(r));
                    }
                }
                InstKind::Op { op, args, .. } => {
                    escape_all(&mut c, args.iter().collect(), Reason::UsedBy(Symbol::intern(op.name())))
                }
                InstKind::CheckBound(o) => escape_all(&mut c, vec![o], Reason::CheckBound),
                InstKind::Unbound(_) | InstKind::New(_) => {}
                InstKind::Get { obj, field } => {
                    if let (Some(y), Some(r)) = (tracked(obj), data.result) {
                        c.loads.push((r, y, *field));
                    }
                }
                InstKind::Set { obj, field, value } => {
                    let Some(x) = tracked(value) else { continue };
                    match obj.as_value().and_then(|o| self.web_of(o)) {
                        Some(w) => {
                            c.stores.push((w, *field, x));
                            if let Some(inner) = self.web_of(x) {
                                c.nested.push(inner);
                            }
                        }
                        None => c.escapes.push((x, Reason::StoredUnknown)),
                    }
                }
                InstKind::Call { func, args } => escape_all(&mut c, args.iter().collect(), Reason::Passed(*func)),
                InstKind::Guard { kind, resume } => {
                    escape_all(&mut c, vec![kind.operand()], Reason::Guarded);
                    if ix(*resume) < f.resumes.len() {
                        escape_all(&mut c, f.resumes[*resume].operands().collect(), Reason::InResumeData);
                    }
                }
            }
        }
        for &b in &f.layout {
            let (o, why) = match &f.blocks[b].term {
                Terminator::Branch { cond, .. } => (cond, Reason::Branched),
                Terminator::Print(o) => (o, Reason::Printed),
                Terminator::Return(o) => (o, Reason::Returned),
                Terminator::Jump(_) | Terminator::IfClass { .. } | Terminator::Trap(_) => continue,
            };
            if let Some(v) = tracked(o) {
                c.escapes.push((v, why));
            }
        }
        for w in &c.nested {
            self.webs[w.0 as usize].nested = true;
        }
        self.propagate(f, &c);
    }

    /// Points-to fixpoint over loads and stores, then escape propagation.
    fn propagate(&mut self, f: &Function, c: &Constraints) {
        let nwebs = self.webs.len();
        let mut gets: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); f.values.len()];
        let mut contents: Vec<Vec<(Symbol, BTreeSet<u32>)>> = vec![Vec::new(); nwebs];
        let web_of = std::mem::take(&mut self.web_of);
        let pts = |gets: &Vec<BTreeSet<u32>>, v: ValueId| -> BTreeSet<u32> {
            match web_of.get(ix(v)).copied().flatten() {
                Some(w) => BTreeSet::from([w.0]),
                None => gets[ix(v)].clone(),
            }
        };
        loop {
            let mut changed = false;
            for &(w, field, x) in &c.stores {
                let add = pts(&gets, x);
                let slot = field_set(&mut contents[w.0 as usize], field);
                for u in add {
                    changed |= slot.insert(u);
                }
            }
            for &(r, y, field) in &c.loads {
                let mut add = BTreeSet::new();
                for u in pts(&gets, y) {
                    if let Some((_, s)) = contents[u as usize].iter().find(|(g, _)| *g == field) {
                        add.extend(s.iter().copied());
                    }
                }
                for u in add {
                    changed |= gets[ix(r)].insert(u);
                }
            }
            if !changed {
                break;
            }
        }
        let mut queue = std::collections::VecDeque::new();
        for (x, why) in &c.escapes {
            let direct = web_of.get(ix(*x)).copied().flatten().is_some();
            for u in pts(&gets, *x) {
                let web = &mut self.webs[u as usize];
                if web.escape.is_none() {
                    web.escape = Some(if direct { why.clone() } else { Reason::ReadBack(*x, Box::new(why.clone())) });
                    queue.push_back(u);
                }
            }
        }
        while let Some(w) = queue.pop_front() {
            let outer = self.webs[w as usize].values[0];
            for (_, set) in &contents[w as usize] {
                for &u in set {
                    let web = &mut self.webs[u as usize];
                    if web.escape.is_none() {
                        web.escape = Some(Reason::StoredInto(outer));
                        queue.push_back(u);
                    }
                }
            }
        }
        self.web_of = web_of;
    }
}

#[derive(Default)]
struct Constraints {
    /// Everything the value may point to escapes.
    escapes: Vec<(ValueId, Reason)>,
    /// `set w.field = value`.
    stores: Vec<(WebId, Symbol, ValueId)>,
    /// `result = get obj.field`.
    loads: Vec<(ValueId, ValueId, Symbol)>,
    /// Webs stored into webs.
    nested: Vec<WebId>,
}

fn field_set(fields: &mut Vec<(Symbol, BTreeSet<u32>)>, field: Symbol) -> &mut BTreeSet<u32> {
    let at = match fields.iter().position(|(g, _)| *g == field) {
        Some(p) => p,
        None => {
            fields.push((field, BTreeSet::new()));
            fields.len() - 1
        }
    };
    &mut fields[at].1
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

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

pub fn run(module: &mut Module, cx: &mut Context) {
    for (i, f) in module.functions.iter().enumerate() {
        cx.facts(i).escape = Some(Escape::analyze(f));
    }
}

/// One line per function: `; escape of main: v3 (point) does not escape;
/// v9 (point) escapes: printed`.
pub fn annotate(module: &Module, cx: &Context) -> String {
    let mut out = String::new();
    for (i, f) in module.functions.iter().enumerate() {
        let Some(e) = cx.functions.get(i).and_then(|x| x.escape.as_ref()) else { continue };
        out.push_str("; escape of ");
        name(&mut out, f.name);
        out.push(':');
        if e.webs.is_empty() {
            out.push_str(" no allocations\n");
            continue;
        }
        for (k, web) in e.webs.iter().enumerate() {
            out.push_str(if k == 0 { " " } else { "; " });
            out.push_str(&describe(f, web));
            match &web.escape {
                None if web.nested => out.push_str(" does not escape (nested)"),
                None => out.push_str(" does not escape"),
                Some(why) => out.push_str(&format!(" escapes: {why}")),
            }
        }
        out.push('\n');
    }
    out
}

/// `v3 v5 (point, phi v7)`.
fn describe(f: &Function, web: &Web) -> String {
    let v = |i: &InstId| f.insts[*i].result.map_or(String::from("?"), flowc_ir::print::value_ref);
    let news: Vec<String> = web.news.iter().map(v).collect();
    let mut s = news.join(" ");
    s.push_str(" (");
    name(&mut s, web.class);
    if !web.phis.is_empty() {
        let phis: Vec<String> = web.phis.iter().map(v).collect();
        s.push_str(", phi ");
        s.push_str(&phis.join(" "));
    }
    s.push(')');
    s
}

//! Solving escape: constraints from one sweep over the function (uses
//! that make a value escape, stores into webs, loads from webs), a
//! points-to fixpoint telling which webs each field of each web and each
//! `get` may hold, then escape propagated from the escaping uses through
//! the loads and into everything stored in an escaping web.

use std::collections::{BTreeSet, HashMap};

use flowc_ir::{Function, InstKind, Operand, Terminator, ValueId};
use flowc_lang::Symbol;

use super::{Escape, Reason, WebId};
use crate::edit::ix;

impl Escape {
    /// Builds the constraints in one sweep, then solves them.
    pub(super) fn solve(&mut self, f: &Function) {
        let mut c = Constraints::default();
        // Web values and `get` results (marked in the same table).
        let tracked =
            |o: &Operand| o.as_value().filter(|&v| self.web_of.get(ix(v)).is_some_and(|&w| w != super::NO_WEB));
        for (_, i) in f.all_insts() {
            let data = &f.insts[i];
            // The reason is only made (an operation's name interned) when
            // some operand is tracked, which is rare.
            let escape_all =
                |c: &mut Constraints, ops: &mut dyn Iterator<Item = &Operand>, why: &dyn Fn() -> Reason| {
                    for o in ops {
                        if let Some(v) = tracked(o) {
                            c.escapes.push((v, why()));
                        }
                    }
                };
            match &data.kind {
                InstKind::Phi(inputs) => {
                    let Some(r) = data.result else { continue };
                    if self.web_of(r).is_none() {
                        escape_all(&mut c, &mut inputs.iter().map(|(_, o)| o), &|| Reason::Merged(r));
                    }
                }
                InstKind::Op { op, args, .. } => {
                    escape_all(&mut c, &mut args.iter(), &|| Reason::UsedBy(Symbol::intern(op.name())))
                }
                InstKind::CheckBound(o) => escape_all(&mut c, &mut std::iter::once(o), &|| Reason::CheckBound),
                // Made after the passes (`flowc_codegen::walks`); for the
                // checker's sake, what it walks from is left alone.
                InstKind::Walk { obj, .. } => {
                    escape_all(&mut c, &mut std::iter::once(obj), &|| Reason::UsedBy(Symbol::intern("walk")))
                }
                // A count (an integer), in traces only.
                InstKind::Unbound(_) | InstKind::New(_) | InstKind::Iterations(_) => {}
                InstKind::Get { obj, field, .. } => {
                    if let (Some(y), Some(r)) = (tracked(obj), data.result) {
                        c.loads.push((r, y, *field));
                    }
                }
                InstKind::Set { obj, field, value, .. } => {
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
                InstKind::Call { func, args } => escape_all(&mut c, &mut args.iter(), &|| Reason::Passed(*func)),
                InstKind::Guard { kind, resume, .. } => {
                    escape_all(&mut c, &mut std::iter::once(kind.operand()).chain(kind.base()), &|| Reason::Guarded);
                    if ix(*resume) < f.resumes.len() {
                        escape_all(&mut c, &mut f.resumes[*resume].operands(), &|| Reason::InResumeData);
                    }
                }
            }
        }
        for &b in &f.layout {
            let (o, why) = match &f.blocks[b].term {
                Terminator::Branch { cond, .. } => (cond, Reason::Branched),
                Terminator::Print(o) => (o, Reason::Printed),
                Terminator::Return(o) => (o, Reason::Returned),
                Terminator::Exit { resume, .. } => {
                    if ix(*resume) < f.resumes.len() {
                        for o in f.resumes[*resume].operands() {
                            if let Some(v) = tracked(o) {
                                c.escapes.push((v, Reason::InResumeData));
                            }
                        }
                    }
                    continue;
                }
                Terminator::JumpTrace { target, args } => {
                    for o in args {
                        if let Some(v) = tracked(o) {
                            c.escapes.push((v, Reason::Passed(*target)));
                        }
                    }
                    continue;
                }
                Terminator::Jump(_) | Terminator::IfClass { .. } | Terminator::Trap(_) => continue,
            };
            if let Some(v) = tracked(o) {
                c.escapes.push((v, why));
            }
        }
        for w in &c.nested {
            self.webs[w.0 as usize].nested = true;
        }
        self.propagate(&c);
    }

    /// Points-to fixpoint over loads and stores, then escape propagation.
    fn propagate(&mut self, c: &Constraints) {
        let nwebs = self.webs.len();
        // What each `get` may read (only `get` results have entries).
        let mut gets: HashMap<ValueId, BTreeSet<u32>> = HashMap::new();
        let mut contents: Vec<Vec<(Symbol, BTreeSet<u32>)>> = vec![Vec::new(); nwebs];
        let web_of = std::mem::take(&mut self.web_of);
        let web = |v: ValueId| super::web_in(&web_of, v);
        let pts = |gets: &HashMap<ValueId, BTreeSet<u32>>, v: ValueId| -> BTreeSet<u32> {
            match web(v) {
                Some(w) => BTreeSet::from([w]),
                None => gets.get(&v).cloned().unwrap_or_default(),
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
                if !add.is_empty() {
                    let slot = gets.entry(r).or_default();
                    for u in add {
                        changed |= slot.insert(u);
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut queue = std::collections::VecDeque::new();
        for (x, why) in &c.escapes {
            let direct = web(*x).is_some();
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

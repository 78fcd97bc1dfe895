//! Allocation removal: a `new` becomes a virtual object whose fields are
//! tracked through `set` and `get` ([`super::walk`]); it is materialized
//! (a `new` and its fields' `set`s, right where it is needed) only where
//! it escapes — any use the walk cannot follow — and in the resume data
//! of guards, where it stays virtual and is rebuilt only if the guard
//! fails ([`flowc_ir::VirtualObject`]). Only done when the program cannot
//! observe allocation numbers ([`flowc_passes::observe`]).
//!
//! A guard's record holds at most [`MAX_RESUME_VIRTUALS`] virtual objects:
//! beyond, they are materialized before the guard. Every exit describes
//! its virtual objects field by field, so a trace building a long linked
//! structure (a list of a thousand cells, each guard seeing all the cells
//! so far) would otherwise grow quadratically in code.

use flowc_ir::{InstKind, Operand, ResumeData, ResumeFrame, ResumeId, ResumeValue, ValueId, VirtualObject};
use flowc_lang::Symbol;
use flowc_passes::edit::ix;
use flowc_passes::lattice::{Info, Kinds};

use super::walk::Opt;

/// An object the walk has not allocated: its class and fields so far, in
/// the order they were first set.
#[derive(Clone, Debug)]
pub(super) struct Virtual {
    pub class: Symbol,
    pub fields: Vec<(Symbol, Operand)>,
}

impl Virtual {
    pub fn field(&self, name: Symbol) -> Option<&Operand> {
        self.fields.iter().find(|(f, _)| *f == name).map(|(_, o)| o)
    }
}

/// The most virtual objects a guard's resume record holds.
pub const MAX_RESUME_VIRTUALS: usize = 64;

impl Opt<'_> {
    /// Materializes the virtual objects record `r` would hold if they are
    /// more than [`MAX_RESUME_VIRTUALS`].
    fn bound_virtuals(&mut self, r: ResumeId) {
        // Counted without copying the record: most records reach no
        // virtual object at all, and every guard takes a snapshot. A walk
        // that has made none has none to count (a record's own virtual
        // objects, a bridge's exit's, are not the walk's and never
        // materialized here).
        if !self.made_virtual {
            return;
        }
        let mut seen = Vec::new();
        for o in self.f.resumes[r].operands() {
            self.reachable_virtuals(o, &mut seen);
        }
        if seen.len() > MAX_RESUME_VIRTUALS {
            let operands: Vec<Operand> = self.f.resumes[r].operands().cloned().collect();
            for o in &operands {
                self.real(o);
            }
        }
    }

    /// Adds the virtual objects reachable from `o` to `seen`, stopping
    /// past [`MAX_RESUME_VIRTUALS`].
    fn reachable_virtuals(&self, o: &Operand, seen: &mut Vec<ValueId>) {
        if seen.len() > MAX_RESUME_VIRTUALS {
            return;
        }
        let o = self.resolve(o);
        let Some(v) = self.virtual_of(&o) else { return };
        if seen.contains(&v) {
            return;
        }
        seen.push(v);
        let virt = self.virtuals[ix(v)].as_ref().expect("a virtual object");
        for (_, x) in &virt.fields {
            self.reachable_virtuals(x, seen);
        }
    }

    /// Makes virtual object `v` real here: `new` and its fields' `set`s.
    pub fn materialize(&mut self, v: ValueId) -> Operand {
        let Some(virt) = self.virtuals[ix(v)].take() else { return Operand::Value(v) };
        let (i, nv) = self.make(InstKind::New(virt.class), self.f.values[v].name);
        let nv = nv.unwrap();
        self.out.push(i);
        self.info[ix(nv)] = Info::object(virt.class, None);
        self.subst[ix(v)] = Some(Operand::Value(nv));
        for (field, value) in virt.fields {
            let value = self.real(&value);
            let (s, _) = self.make(InstKind::set(Operand::Value(nv), field, value), None);
            self.out.push(s);
        }
        Operand::Value(nv)
    }

    /// The operand, resolved, with a virtual object materialized.
    pub fn real(&mut self, o: &Operand) -> Operand {
        let o = self.resolve(o);
        match self.virtual_of(&o) {
            Some(v) => self.materialize(v),
            None => o,
        }
    }

    /// Brings record `r` up to date in place ([`Opt::snapshot`]): where
    /// the walk has made no virtual object, no operand becomes one, so the
    /// record keeps its shape — its operands substituted, its variables
    /// known unbound left out — and is written over rather than built
    /// anew (a guard's record was the optimizer's hottest allocation, and
    /// most of its operands stay as they were).
    pub fn refresh(&mut self, r: ResumeId) {
        if self.made_virtual {
            let record = self.snapshot(r);
            self.f.resumes[r] = record;
            return;
        }
        let (subst, info, virtuals) = (&self.subst, &self.info, &self.virtuals);
        let record = &mut self.f.resumes[r];
        let update = |o: &mut Operand| {
            if let Some(now) = substituted(subst, o) {
                *o = now.clone();
            }
        };
        for v in &mut record.virtuals {
            for (_, rv) in &mut v.fields {
                if let ResumeValue::Operand(o) = rv {
                    update(o);
                }
            }
        }
        for frame in &mut record.frames {
            frame.env.retain_mut(|(_, rv)| match rv {
                ResumeValue::Operand(o) => {
                    update(o);
                    !known_unbound(info, virtuals, o)
                }
                ResumeValue::Virtual(_) => true,
            });
        }
    }

    /// Resume record `r` with current operands, virtual objects kept
    /// virtual. A record may already hold virtual objects (a bridge's
    /// exit, a copied record): they keep their numbers, their fields'
    /// operands are brought up to date, and objects virtual in this walk
    /// are numbered after them. A variable known to be unbound is left
    /// out: resuming would not bind it anyway, and an exit that stores
    /// no unbound value can get a bridge. Past [`MAX_RESUME_VIRTUALS`] the
    /// objects are materialized first, for every record (guards' and
    /// exits').
    pub fn snapshot(&mut self, r: ResumeId) -> ResumeData {
        self.bound_virtuals(r);
        let record = &self.f.resumes[r];
        let mut virtuals: Vec<(Option<ValueId>, VirtualObject)> =
            record.virtuals.iter().map(|v| (None, VirtualObject { class: v.class, fields: Vec::new() })).collect();
        for (k, v) in record.virtuals.iter().enumerate() {
            let fields = v
                .fields
                .iter()
                .map(|(f, rv)| match rv {
                    ResumeValue::Operand(o) => (*f, self.resume_value(o, &mut virtuals)),
                    ResumeValue::Virtual(_) => (*f, rv.clone()),
                })
                .collect();
            virtuals[k].1.fields = fields;
        }
        // Each variable's operand resolved once: left out when it is
        // known unbound, else its resume value.
        let frames = record
            .frames
            .iter()
            .map(|frame| {
                // Sized once: a snapshot is made per guard, the hottest
                // allocation of optimizing a trace.
                let mut env = Vec::with_capacity(frame.env.len());
                env.extend(frame.env.iter().filter_map(|(name, rv)| match rv {
                    ResumeValue::Operand(o) => {
                        let o = self.resolve(o);
                        (!self.is_unbound(&o)).then(|| (*name, self.resolved_resume_value(o, &mut virtuals)))
                    }
                    ResumeValue::Virtual(_) => Some((*name, rv.clone())),
                }));
                ResumeFrame { function: frame.function, call: frame.call, env }
            })
            .collect();
        ResumeData { frames, virtuals: virtuals.into_iter().map(|(_, v)| v).collect() }
    }

    /// Whether operand `o` (resolved) is known to be an unbound variable.
    fn is_unbound(&self, o: &Operand) -> bool {
        known_unbound(&self.info, &self.virtuals, o)
    }

    fn resume_value(&self, o: &Operand, virtuals: &mut Vec<(Option<ValueId>, VirtualObject)>) -> ResumeValue {
        self.resolved_resume_value(self.resolve(o), virtuals)
    }

    /// [`Self::resume_value`] of an operand already resolved.
    fn resolved_resume_value(&self, o: Operand, virtuals: &mut Vec<(Option<ValueId>, VirtualObject)>) -> ResumeValue {
        let Some(v) = self.virtual_of(&o) else { return ResumeValue::Operand(o) };
        if let Some(k) = virtuals.iter().position(|(x, _)| *x == Some(v)) {
            return ResumeValue::Virtual(k as u32);
        }
        let k = virtuals.len();
        let virt = self.virtuals[ix(v)].as_ref().unwrap();
        virtuals.push((Some(v), VirtualObject { class: virt.class, fields: Vec::new() }));
        let fields: Vec<(Symbol, ResumeValue)> =
            virt.fields.iter().map(|(f, x)| (*f, self.resume_value(x, virtuals))).collect();
        virtuals[k].1.fields = fields;
        ResumeValue::Virtual(k as u32)
    }
}

/// [`Opt::is_unbound`] over the walk's tables.
fn known_unbound(info: &[Info], virtuals: &[Option<Virtual>], o: &Operand) -> bool {
    match o {
        Operand::Const(_) => false,
        Operand::Value(v) => {
            let i = &info[ix(*v)];
            virtuals[ix(*v)].is_none() && !i.is_bottom() && i.kinds == Kinds::UNBOUND
        }
    }
}

/// What operand `o` now stands for ([`Opt::resolve`]), if the walk
/// substituted it; `None` where it stands for itself.
fn substituted<'s>(subst: &'s [Option<Operand>], o: &Operand) -> Option<&'s Operand> {
    let Operand::Value(v) = o else { return None };
    let mut now = subst.get(ix(*v))?.as_ref()?;
    while let Operand::Value(v) = now {
        match subst.get(ix(*v)) {
            Some(Some(next)) => now = next,
            _ => break,
        }
    }
    Some(now)
}

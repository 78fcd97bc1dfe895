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

use flowc_ir::{InstKind, Operand, ResumeData, ResumeId, ResumeValue, ValueId, VirtualObject};
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
        let record = &self.f.resumes[r];
        let mut operands: Vec<Operand> = Vec::new();
        for frame in &record.frames {
            operands.extend(frame.env.iter().filter_map(|(_, rv)| match rv {
                ResumeValue::Operand(o) => Some(o.clone()),
                ResumeValue::Virtual(_) => None,
            }));
        }
        for v in &record.virtuals {
            operands.extend(v.fields.iter().filter_map(|(_, rv)| match rv {
                ResumeValue::Operand(o) => Some(o.clone()),
                ResumeValue::Virtual(_) => None,
            }));
        }
        let mut seen = Vec::new();
        for o in &operands {
            self.reachable_virtuals(o, &mut seen);
        }
        if seen.len() > MAX_RESUME_VIRTUALS {
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
            let (s, _) = self.make(InstKind::Set { obj: Operand::Value(nv), field, value }, None);
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
        let mut record = self.f.resumes[r].clone();
        let mut virtuals: Vec<(Option<ValueId>, VirtualObject)> =
            std::mem::take(&mut record.virtuals).into_iter().map(|v| (None, v)).collect();
        for k in 0..virtuals.len() {
            let mut fields = std::mem::take(&mut virtuals[k].1.fields);
            for (_, rv) in fields.iter_mut() {
                if let ResumeValue::Operand(o) = rv {
                    *rv = self.resume_value(o, &mut virtuals);
                }
            }
            virtuals[k].1.fields = fields;
        }
        for frame in &mut record.frames {
            frame.env.retain(|(_, rv)| match rv {
                ResumeValue::Operand(o) => self.info_of(&self.resolve(o)).kinds != Kinds::UNBOUND,
                ResumeValue::Virtual(_) => true,
            });
            for (_, rv) in frame.env.iter_mut() {
                if let ResumeValue::Operand(o) = rv {
                    *rv = self.resume_value(o, &mut virtuals);
                }
            }
        }
        record.virtuals = virtuals.into_iter().map(|(_, v)| v).collect();
        record
    }

    fn resume_value(&self, o: &Operand, virtuals: &mut Vec<(Option<ValueId>, VirtualObject)>) -> ResumeValue {
        let o = self.resolve(o);
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

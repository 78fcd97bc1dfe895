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

use super::walk::{substituted, Opt};

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

    /// Makes `v` virtual object `virt`: how the walk makes one, so that
    /// [`Opt::refresh`] knows whether any operand may be one.
    pub fn make_virtual(&mut self, v: ValueId, virt: Virtual) {
        self.virtuals[ix(v)] = Some(virt);
        self.made_virtual = true;
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

#[cfg(test)]
mod tests {
    use super::super::check::optimized as check;
    use expect_test::expect;

    /// A record a guard shares with the trace's exit: the guard leaves
    /// with the state where it is (`c` still a variable), the exit with
    /// the state at the end (`c` is 0 past the `guard_false`). Before, the
    /// exit's record was written over the one record both named, and the
    /// guard resumed as if `c` were 0.
    #[test]
    fn a_record_a_guard_shares_with_the_exit_is_brought_up_to_date_for_each() {
        check(
            "trace t(v0:c, v1:n) {
b0:
    guard_true v1, r0 else out
    guard_false v0, r1 else out
    exit r0 to out
resume r0 {
    frame [c = v0, n = v1]
}
resume r1 {
    frame [c = v0, n = v1]
}
}
",
            expect![[r#"
                trace t(v0:c, v1:n) {
                b0:
                    guard_true v1, r2 else out
                    guard_false v0, r2 else out
                    exit r0 to out
                resume r0 {
                    frame [c = 0, n = v1]
                }
                resume r2 {
                    frame [c = v0, n = v1]
                }
                }
            "#]],
        );
    }

    /// A guard's record brought up to date: its operands as the walk
    /// resolved them (`n` is 5 past the `guard_value`, in the frame and in
    /// the record's own virtual object), a variable known unbound (`t`)
    /// left out. The first guard's record is written over in place (the
    /// walk has made no virtual object yet); the second's is built anew
    /// (after the `new`, which stays virtual in it, as `@1`): both the
    /// same way.
    #[test]
    fn a_guards_record_holds_the_resolved_operands_before_and_after_an_allocation() {
        check(
            "trace t(v0:c, v1:n) {
b0:
    v2:t = unbound t
    guard_value v1, 5, r0 else out
    guard_true v0, r1 else out
    v3:o = new cell
    set v3, v, v1
    guard_false v0, r2 else out
    exit r3 to out
resume r0 {
    frame [c = v0, n = v1, t = v2]
}
resume r1 {
    frame [c = v0, n = v1, t = v2, k = @0]
    virtual @0 cell [v = v1]
}
resume r2 {
    frame [c = v0, n = v1, t = v2, k = @0, o = v3]
    virtual @0 cell [v = v1]
}
resume r3 {
    frame [c = v0, n = v1, t = v2]
}
}
",
            expect![[r#"
                trace t(v0:c, v1:n) {
                b0:
                    guard_value v1, 5, r0 else out
                    guard_true v0, r1 else out
                    guard_false v0, r2 else out
                    exit r3 to out
                resume r0 {
                    frame [c = v0, n = v1]
                }
                resume r1 {
                    frame [c = v0, n = 5, k = @0]
                    virtual @0 cell [v = 5]
                }
                resume r2 {
                    frame [c = v0, n = 5, k = @0, o = @1]
                    virtual @0 cell [v = 5]
                    virtual @1 cell [v = 5]
                }
                resume r3 {
                    frame [c = 0, n = 5]
                }
                }
            "#]],
        );
    }
}

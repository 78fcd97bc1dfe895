//! Leaving a compiled or IR-interpreted trace: rebuilding the
//! interpreter's state from a guard's resume record and the values the
//! trace had computed, then continuing in the reference interpreter
//! (Part 3's `resume_interp`, with frames and virtual objects).
//!
//! Variables whose operand is unbound at the guard (a variable the first
//! iteration had not written yet) are left out, as they were not in the
//! interpreter's environment either. Virtual objects are allocated when
//! the guard fails, with their fields, in record order.
//!
//! The JIT leaves compiled code often, so it decodes each exit's record
//! once per run into a [`Plan`]: names resolved to the interpreter's
//! slots and labels to blocks, operands to positions among the values the
//! exit stores. Leaving is then a walk over the plan.

use rustc_hash::FxHashMap as HashMap;

use flowc_ir::{Operand, ResumeData, ResumeValue, ValueId};
use flowc_lang::interp::objects;
use flowc_lang::interp::resolve::{Slot, Target};
use flowc_lang::interp::{Config, Frame, Machine, Resolved, ResumeFrame, RuntimeError, SlotFrame};
use flowc_lang::{Program, Symbol, Value};

use crate::record::Heap;

/// The interpreter frames a resume record describes.
pub fn frames(record: &ResumeData, values: &HashMap<ValueId, Value>, heap: &mut Heap) -> Vec<ResumeFrame> {
    let mut virtuals: Vec<Option<Value>> = vec![None; record.virtuals.len()];
    let mut out = Vec::with_capacity(record.frames.len());
    for f in &record.frames {
        let mut env = Vec::with_capacity(f.env.len());
        for (name, rv) in &f.env {
            if let Some(v) = value_of(rv, record, values, &mut virtuals, heap) {
                env.push((*name, v));
            }
        }
        out.push(ResumeFrame { function: f.function, env, call: f.call });
    }
    out
}

fn value_of(
    rv: &ResumeValue,
    record: &ResumeData,
    values: &HashMap<ValueId, Value>,
    virtuals: &mut Vec<Option<Value>>,
    heap: &mut Heap,
) -> Option<Value> {
    match rv {
        ResumeValue::Operand(Operand::Const(c)) => Some(c.clone()),
        ResumeValue::Operand(Operand::Value(v)) => values.get(v).cloned(),
        ResumeValue::Virtual(i) => {
            let i = *i as usize;
            if let Some(v) = &virtuals[i] {
                return Some(v.clone());
            }
            let virt = &record.virtuals[i];
            heap.allocations += 1;
            let value = objects::new_object(heap.allocations, virt.class, heap.layout);
            virtuals[i] = Some(value.clone());
            for (field, fv) in &virt.fields {
                if let Some(x) = value_of(fv, record, values, virtuals, heap) {
                    // A fresh object: no immutable field is set yet.
                    objects::set(&value, *field, x, |_, _| false).ok()?;
                }
            }
            Some(value)
        }
    }
}

/// Continues in the reference interpreter from `frames`, the innermost at
/// `label`.
pub fn continue_interpreting(
    program: &Program,
    frames: &[ResumeFrame],
    label: Symbol,
    heap: &mut Heap,
    config: &Config,
) -> Result<Value, RuntimeError> {
    let names: Vec<Symbol> = frames.first().map(|f| f.env.iter().map(|(k, _)| *k).collect()).unwrap_or_default();
    let resolved = Resolved::new(program, &names);
    let mut m = Machine::new(program, &resolved, config);
    m.set_allocations(heap.allocations);
    let out = m.resume(frames, label)?;
    heap.allocations = out.allocations;
    Ok(out.value)
}

/// Where a variable's or field's value comes from when an exit is taken.
#[derive(Clone, Debug)]
enum Source {
    /// The exit's stored value at this position.
    Stored(usize),
    Const(Value),
    /// The record's virtual object at this position.
    Object(usize),
}

#[derive(Clone, Debug)]
struct PlanFrame {
    graph: u32,
    vars: Vec<(Slot, Source)>,
    call: Option<(Slot, Target)>,
}

/// An exit's resume record decoded for the interpreter of one run.
#[derive(Clone, Debug)]
pub struct Plan {
    frames: Vec<PlanFrame>,
    objects: Vec<(Symbol, Vec<(Symbol, Source)>)>,
    /// The innermost frame's block where the interpreter goes on.
    pub block: u32,
}

impl Plan {
    /// The plan of `record` for an exit that stores the values `stored`
    /// (in order) and resumes at `label`; `None` if a name or label does
    /// not resolve in `resolved` (then the slow path says why).
    pub fn new(record: &ResumeData, stored: &[ValueId], label: Symbol, resolved: &Resolved) -> Option<Plan> {
        let source = |rv: &ResumeValue| -> Option<Source> {
            Some(match rv {
                ResumeValue::Operand(Operand::Const(c)) => Source::Const(c.clone()),
                ResumeValue::Operand(Operand::Value(v)) => Source::Stored(stored.iter().position(|x| x == v)?),
                ResumeValue::Virtual(k) => Source::Object(*k as usize),
            })
        };
        let mut frames = Vec::with_capacity(record.frames.len());
        for f in &record.frames {
            let graph = resolved.graph_of(f.function)?;
            let g = &resolved.graphs[graph as usize];
            let mut vars = Vec::with_capacity(f.env.len());
            for (name, rv) in &f.env {
                vars.push((g.slot_of(*name)?, source(rv)?));
            }
            let call = match f.call {
                None => None,
                Some((dst, next)) => Some((g.slot_of(dst)?, g.target(next))),
            };
            frames.push(PlanFrame { graph, vars, call });
        }
        let mut objects = Vec::with_capacity(record.virtuals.len());
        for o in &record.virtuals {
            let fields = o.fields.iter().map(|(f, rv)| Some((*f, source(rv)?))).collect::<Option<Vec<_>>>()?;
            objects.push((o.class, fields));
        }
        let innermost = frames.last()?;
        let block = *resolved.graphs[innermost.graph as usize].labels.get(&label)?;
        Some(Plan { frames, objects, block })
    }

    /// The frames the exit leaves, from the values it stored (`None` for
    /// an unbound one); virtual objects are allocated as [`frames`] does.
    pub fn frames(&self, stored: &[Option<Value>], heap: &mut Heap) -> Vec<SlotFrame> {
        let mut made: Vec<Option<Value>> = vec![None; self.objects.len()];
        self.frames
            .iter()
            .map(|f| {
                let mut vars = Vec::with_capacity(f.vars.len());
                for (slot, src) in &f.vars {
                    if let Some(v) = self.value(src, stored, &mut made, heap) {
                        vars.push((*slot, v));
                    }
                }
                SlotFrame { graph: f.graph, vars, call: f.call }
            })
            .collect()
    }

    /// Puts the frames the exit leaves on `stack` in place of its top
    /// frame (the one the code ran), from the values it stored. The
    /// usual exit, back to the frame the code ran with no objects to
    /// make, binds that frame's variables in place: no frames are built
    /// on the way (an interpreter's loop run compiled a few iterations
    /// per entry leaves this way at every entry).
    pub fn apply(&self, stored: &[Option<Value>], heap: &mut Heap, machine: &Machine, stack: &mut Vec<Frame>) {
        if let ([f], true) = (&self.frames[..], self.objects.is_empty()) {
            if stack.last().is_some_and(|top| top.graph == f.graph) {
                // No objects: nothing is made (the vector stays empty).
                let mut made = Vec::new();
                let vars =
                    f.vars.iter().filter_map(|(slot, src)| Some((*slot, self.value(src, stored, &mut made, heap)?)));
                machine.rebind_top(stack, vars);
                return;
            }
        }
        machine.replace_top_with(stack, self.frames(stored, heap));
    }

    fn value(
        &self,
        src: &Source,
        stored: &[Option<Value>],
        made: &mut Vec<Option<Value>>,
        heap: &mut Heap,
    ) -> Option<Value> {
        match src {
            Source::Stored(k) => stored.get(*k).cloned().flatten(),
            Source::Const(c) => Some(c.clone()),
            Source::Object(k) => {
                if let Some(v) = &made[*k] {
                    return Some(v.clone());
                }
                let (class, fields) = &self.objects[*k];
                heap.allocations += 1;
                let value = objects::new_object(heap.allocations, *class, heap.layout);
                made[*k] = Some(value.clone());
                for (field, fv) in fields {
                    if let Some(x) = self.value(fv, stored, made, heap) {
                        // A fresh object: no immutable field is set yet.
                        objects::set(&value, *field, x, |_, _| false).ok()?;
                    }
                }
                Some(value)
            }
        }
    }
}

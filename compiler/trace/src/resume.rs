//! Leaving a compiled or IR-interpreted trace: rebuilding the
//! interpreter's state from a guard's resume record and the values the
//! trace had computed, then continuing in the reference interpreter
//! (Part 3's `resume_interp`, with frames and virtual objects).
//!
//! Variables whose operand is unbound at the guard (a variable the first
//! iteration had not written yet) are left out, as they were not in the
//! interpreter's environment either. Virtual objects are allocated when
//! the guard fails, with their fields, in record order.

use std::collections::HashMap;
use std::rc::Rc;

use flowc_ir::{Operand, ResumeData, ResumeValue, ValueId};
use flowc_lang::interp::{Compiled, Config, Machine, ResumeFrame, RuntimeError};
use flowc_lang::value::Object;
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
            let obj = Rc::new(Object::new(heap.allocations, virt.class));
            let value = Value::Object(obj.clone());
            virtuals[i] = Some(value.clone());
            for (field, fv) in &virt.fields {
                if let Some(x) = value_of(fv, record, values, virtuals, heap) {
                    obj.set(*field, x);
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
    let compiled = Compiled::new(program, &names);
    let mut m = Machine::new(program, &compiled, config);
    m.set_allocations(heap.allocations);
    let out = m.resume(frames, label)?;
    heap.allocations = out.allocations;
    Ok(out.value)
}

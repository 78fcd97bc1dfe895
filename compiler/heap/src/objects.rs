//! The object statements — `new`, `get`, `set` and the class test of
//! `if_class` — as every engine runs them in Rust: the reference
//! interpreter, the IR interpreter, the tracer and the runtime of compiled
//! code. One home for what they do and the errors they raise
//! (docs/language.md §6); compiled code's inline fast paths fall back here.

use crate::heap::word::Word;
use crate::heap::{Layout, NoSlot, Obj};
use crate::symbol::Symbol;
use crate::value::Value;

use crate::error::ErrorKind;

/// `new class`: object number `id`, with the slots of `layout`.
pub fn new_object(id: u64, class: Symbol, layout: &'static Layout) -> Value {
    Value::Object(Obj::new(id, class, layout))
}

/// `get obj.field`.
#[inline]
pub fn get(obj: &Value, field: Symbol) -> Result<Value, ErrorKind> {
    try_get(obj, field).ok_or_else(|| get_error(obj, field))
}

/// `get obj.field` when it succeeds (the interpreters' fast path: a small
/// result, [`get_error`] says why when there is none).
#[inline(always)]
pub fn try_get(obj: &Value, field: Symbol) -> Option<Value> {
    match obj {
        Value::Object(o) => o.get(field),
        _ => None,
    }
}

/// [`try_get`] where the program's `layout` puts `field` at `slot` (the
/// interpreter resolves that once).
#[inline]
pub fn try_get_at(obj: &Value, field: Symbol, layout: &'static Layout, slot: u32) -> Option<Word> {
    match obj {
        Value::Object(o) => o.get_word_at(layout, slot, field),
        _ => None,
    }
}

/// Why `get obj.field` fails.
#[cold]
pub fn get_error(obj: &Value, field: Symbol) -> ErrorKind {
    match obj {
        Value::Object(o) => ErrorKind::UnsetField { class: o.class(), field },
        _ => ErrorKind::Type { what: "get", expected: "an object", got: obj.clone() },
    }
}

/// `set obj.field = value`, where `immutable(class, field)` says whether
/// the program declares the field immutable (set once).
pub fn set(
    obj: &Value,
    field: Symbol,
    value: Value,
    immutable: impl Fn(Symbol, Symbol) -> bool,
) -> Result<(), ErrorKind> {
    let o = settable(obj, field, immutable)?;
    o.set(field, value).map(|_| ()).map_err(no_slot)
}

/// The object `set obj.field = ...` writes to, or why it cannot (not an
/// object, an immutable field already set).
#[inline(always)]
pub fn settable(obj: &Value, field: Symbol, immutable: impl Fn(Symbol, Symbol) -> bool) -> Result<&Obj, ErrorKind> {
    let Value::Object(o) = obj else {
        return Err(ErrorKind::Type { what: "set", expected: "an object", got: obj.clone() });
    };
    if immutable(o.class(), field) && o.is_set(field) {
        return Err(ErrorKind::ImmutableField { class: o.class(), field });
    }
    Ok(o)
}

/// The error of an object whose layout is another program's: cannot
/// happen when every engine lays out a program's objects from the program.
pub fn no_slot(e: NoSlot) -> ErrorKind {
    ErrorKind::User(Symbol::intern(&format!("internal_no_slot_for_{}", e.0)))
}

/// Whether `v` is an object of `class` (`if_class`, `guard_class`).
pub fn is_class(v: &Value, class: Symbol) -> bool {
    matches!(v, Value::Object(o) if o.is_class(class))
}

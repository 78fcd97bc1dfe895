//! The heap cache of the walk ([`super::walk`], PyPy's `heap.py`): what
//! is known of object fields — a value read, or the value last set — by
//! object and field. An object is a value of the trace, or a constant the
//! trace holds (a promoted object, such as an interpreter's instruction
//! objects whose `next` field it reads at each step), known by identity.
//! Entries are forgotten as the walk says: all of them (a call, a new
//! block), the fields a loop writes, or one field of every object that
//! may be the one written.

use flowc_ir::{Operand, ValueId};
use flowc_lang::{Symbol, Value};
use rustc_hash::FxHashMap as HashMap;

#[derive(Default)]
pub(super) struct HeapCache {
    /// Fields of objects the trace computes, by the value that is the
    /// object.
    pub objects: HashMap<(ValueId, Symbol), Operand>,
    /// Fields of objects the trace holds as constants, by identity.
    constants: HashMap<(Value, Symbol), Operand>,
}

impl HeapCache {
    pub fn clear(&mut self) {
        self.objects.clear();
        self.constants.clear();
    }

    /// Forgets the fields named `written`, of every object.
    pub fn forget_fields(&mut self, written: &[Symbol]) {
        self.objects.retain(|(_, field), _| !written.contains(field));
        self.constants.retain(|(_, field), _| !written.contains(field));
    }

    /// What is known of `field` of `obj`.
    pub fn get(&self, obj: &Operand, field: Symbol) -> Option<&Operand> {
        match obj {
            Operand::Value(o) => self.objects.get(&(*o, field)),
            Operand::Const(c @ Value::Object(_)) => self.constants.get(&(c.clone(), field)),
            Operand::Const(_) => None,
        }
    }

    /// `field` of `obj` holds `value` (nothing is kept for a constant that
    /// is no object: reading a field of it fails).
    pub fn insert(&mut self, obj: &Operand, field: Symbol, value: Operand) {
        match obj {
            Operand::Value(o) => {
                self.objects.insert((*o, field), value);
            }
            Operand::Const(c @ Value::Object(_)) => {
                self.constants.insert((c.clone(), field), value);
            }
            Operand::Const(_) => {}
        }
    }

    /// A `set` of `field` of `obj`, of class `class` when known: that
    /// field of every other object is forgotten, but of those known to be
    /// of another class (`class_of` says what is known of a value's).
    pub fn forget_field(
        &mut self,
        obj: &Operand,
        field: Symbol,
        class: Option<Symbol>,
        class_of: impl Fn(ValueId) -> Option<Symbol>,
    ) {
        let other = |y: Option<Symbol>| matches!((class, y), (Some(x), Some(y)) if x != y);
        self.objects.retain(|&(p, f), _| f != field || Operand::Value(p) == *obj || other(class_of(p)));
        self.constants.retain(|(p, f), _| {
            let same = matches!(obj, Operand::Const(o) if o == p);
            let of = match p {
                Value::Object(o) => Some(o.class()),
                _ => None,
            };
            *f != field || same || other(of)
        });
    }
}

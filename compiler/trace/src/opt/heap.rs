//! The heap cache of the walk ([`super::walk`], PyPy's `heap.py`): what
//! is known of object fields — a value read, or the value last set — by
//! object and field. An object is a value of the trace, or a constant the
//! trace holds (a promoted object, such as an interpreter's instruction
//! objects whose `next` field it reads at each step), known by identity.
//! Entries are forgotten as the walk says: all of them (a call, a new
//! block), the fields a loop writes, or one field of every object that
//! may be the one written — not of an object of another class, nor of
//! one a guard found to be another object (`guard_false` of `eq x, y`:
//! a skip's check that two cells differ).

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
    /// Pairs of the trace's values a guard found to be two objects (the
    /// lower value first): a write of a field of one keeps what is known
    /// of that field of the other. Facts of values, not of the heap: kept
    /// when the cache is cleared.
    apart: rustc_hash::FxHashSet<(ValueId, ValueId)>,
}

impl HeapCache {
    pub fn clear(&mut self) {
        self.objects.clear();
        self.constants.clear();
    }

    /// Objects `x` and `y` are two objects.
    pub fn learn_apart(&mut self, x: ValueId, y: ValueId) {
        self.apart.insert(if x < y { (x, y) } else { (y, x) });
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
        let pairs = &self.apart;
        let apart = |p: ValueId| match obj {
            Operand::Value(o) => pairs.contains(&if *o < p { (*o, p) } else { (p, *o) }),
            Operand::Const(_) => false,
        };
        self.objects.retain(|&(p, f), _| f != field || Operand::Value(p) == *obj || other(class_of(p)) || apart(p));
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

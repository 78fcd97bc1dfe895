//! The heap cache of the walk ([`super::walk`], PyPy's `heap.py`): what
//! is known of object fields — a value read, or the value last set — by
//! object and field. An object is a value of the trace, or a constant the
//! trace holds (a promoted object, such as an interpreter's instruction
//! objects whose `next` field it reads at each step), known by identity.
//! Entries are forgotten as the walk says: all of them (a call, a new
//! block), the fields a loop writes, or one field of every object that
//! may be the one written — not of an object of another class, nor of
//! one a guard found to be another object (`guard_false` of `eq x, y`:
//! a skip's check that two cells differ), nor of one a `guard_at` placed
//! at another distance from the same base (cells do not move: two
//! addresses, two objects). Two names of one object (a `guard_at`'s
//! result and its link) share what is known of its fields.

use flowc_ir::{InstId, Operand, ValueId};
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
    /// Values that are another value's object under a name of their own
    /// (a `guard_at`'s result is its link), each with that value: a read
    /// of a field of either finds what is known of the other's, and what
    /// one is apart from, the other is.
    same: HashMap<ValueId, ValueId>,
    /// The other names of each object that has some, by its value.
    names: HashMap<ValueId, Vec<ValueId>>,
    /// Where `guard_at`s placed objects, by the object's value (its first
    /// name): the object counted from, the distance in bytes, and the
    /// `guard_at`. Facts of values, kept when the cache is cleared.
    places: HashMap<ValueId, (ValueId, i64, InstId)>,
    /// The `guard_at`s whose places kept a field known across a write:
    /// the trace must keep them, or nothing would check what the cache
    /// assumed. All of them, and those the walk has not taken yet
    /// ([`HeapCache::take_relied`]).
    relied: rustc_hash::FxHashSet<InstId>,
    fresh: Vec<InstId>,
}

impl HeapCache {
    pub fn clear(&mut self) {
        self.objects.clear();
        self.constants.clear();
    }

    /// Objects `x` and `y` are two objects.
    pub fn learn_apart(&mut self, x: ValueId, y: ValueId) {
        self.apart.insert(pair(root(&self.same, x), root(&self.same, y)));
    }

    /// Object `v` lies `delta` bytes past object `base`, as `guard_at`
    /// `g` checked: apart from every object placed at another distance
    /// from the same base, the base included.
    pub fn place(&mut self, v: ValueId, base: ValueId, delta: i64, g: InstId) {
        let (v, base) = (root(&self.same, v), root(&self.same, base));
        self.places.insert(v, (base, delta, g));
    }

    /// The `guard_at`s the cache came to rely on since this was last
    /// asked, each once.
    pub fn take_relied(&mut self) -> Vec<InstId> {
        std::mem::take(&mut self.fresh)
    }

    /// `to` is the object `from` is, a new value for it: what is known of
    /// either's fields is known of the other's, and which objects either
    /// is not ([`HeapCache::get`], [`HeapCache::forget_field`]).
    pub fn alias(&mut self, from: ValueId, to: ValueId) {
        let root = root(&self.same, from);
        if root != to && self.same.insert(to, root).is_none() {
            self.names.entry(root).or_default().push(to);
        }
    }

    /// Forgets the fields named `written`, of every object.
    pub fn forget_fields(&mut self, written: &[Symbol]) {
        self.objects.retain(|(_, field), _| !written.contains(field));
        self.constants.retain(|(_, field), _| !written.contains(field));
    }

    /// What is known of `field` of `obj`.
    pub fn get(&self, obj: &Operand, field: Symbol) -> Option<&Operand> {
        match obj {
            Operand::Value(o) => self.objects.get(&(*o, field)).or_else(|| {
                // Under another name of the same object.
                let root = root(&self.same, *o);
                let others = self.names.get(&root).map_or(&[][..], Vec::as_slice);
                std::iter::once(&root).chain(others).filter(|n| *n != o).find_map(|n| self.objects.get(&(*n, field)))
            }),
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
    /// of another class (`class_of` says what is known of a value's), and
    /// those known to be other objects — by their places only where
    /// `by_places` (the walk is in a loop's own block: there a read kept
    /// is one per round, and the `guard_at`s kept for it run once per
    /// entry, in the preamble; in straight code each would cost a guard
    /// per run for a load, and the tutorial BF `escape 20` ran 3.5% more
    /// instructions in its traces).
    pub fn forget_field(
        &mut self,
        obj: &Operand,
        field: Symbol,
        class: Option<Symbol>,
        class_of: impl Fn(ValueId) -> Option<Symbol>,
        by_places: bool,
    ) {
        let other = |y: Option<Symbol>| matches!((class, y), (Some(x), Some(y)) if x != y);
        let places = by_places.then_some(&self.places);
        let (pairs, same, relied, fresh) = (&self.apart, &self.same, &mut self.relied, &mut self.fresh);
        let mut apart = |p: ValueId| match obj {
            Operand::Value(o) => match apart_by(pairs, same, places, *o, p) {
                Some(guards) => {
                    fresh.extend(guards.into_iter().flatten().filter(|&g| relied.insert(g)));
                    true
                }
                None => false,
            },
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

/// The value `v` stands for the object of ([`HeapCache::alias`]), by the
/// cache's `same` map.
fn root(same: &HashMap<ValueId, ValueId>, v: ValueId) -> ValueId {
    same.get(&v).copied().unwrap_or(v)
}

/// Whether objects `x` and `y` are known to be two objects ([`HeapCache`]'s
/// `apart` pairs and `same` names): by a guard (no `guard_at` to keep), or,
/// given `places`, by their places (the `guard_at`s that placed them).
fn apart_by(
    pairs: &rustc_hash::FxHashSet<(ValueId, ValueId)>,
    same: &HashMap<ValueId, ValueId>,
    places: Option<&HashMap<ValueId, (ValueId, i64, InstId)>>,
    x: ValueId,
    y: ValueId,
) -> Option<[Option<InstId>; 2]> {
    let (x, y) = (root(same, x), root(same, y));
    if pairs.contains(&pair(x, y)) {
        return Some([None, None]);
    }
    let places = places?;
    let at = |v: ValueId| places.get(&v).map_or((v, 0, None), |&(b, d, g)| (b, d, Some(g)));
    let ((a, d, g), (b, e, h)) = (at(x), at(y));
    (a == b && d != e).then_some([g, h])
}

/// Two values as the `apart` set keeps them, the lower first.
fn pair(x: ValueId, y: ValueId) -> (ValueId, ValueId) {
    if x < y {
        (x, y)
    } else {
        (y, x)
    }
}

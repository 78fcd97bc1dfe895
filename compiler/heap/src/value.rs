//! Runtime values of the flow-graph language (docs/language.md §1) and their
//! printed forms (§5).
//!
//! | value | representation |
//! |---|---|
//! | integer | [`Value::Int`] when it fits an `i64`, else [`Value::Big`] — never a `Big` that would fit (one canonical form, so `==` is structural) |
//! | atom | [`Value::Atom`], an interned [`Symbol`] |
//! | list | [`Value::List`], shared and immutable, with a table of its elements' words ([`List`]) |
//! | object | [`Value::Object`], a handle to a cell of the heap ([`crate::heap`]), shared and mutable, compared by identity |
//!
//! A `Value` is 16 bytes and cheap to clone (a copy, a reference-count
//! bump, or a pin). Big integers and lists are shared by atomic counts
//! (`Arc`): a value that holds no object ([`Value::holds_objects`]) may be
//! handed to another thread — the JIT optimizes traces on a second core.
//! Objects may not: a handle pins its cell in this thread's heap.

use std::fmt::{self, Write as _};
use std::sync::Arc;

use num_bigint::BigInt;
use num_traits::ToPrimitive;

pub use crate::heap::Obj;
use crate::symbol::Symbol;

/// A value of the language.
#[derive(Clone)]
pub enum Value {
    Int(i64),
    Big(Arc<BigInt>),
    Atom(Symbol),
    List(Arc<List>),
    /// An object: its class, its allocation number (counted from 1 within
    /// a run, what printing shows: `<point#3>`) and its fields.
    Object(Obj),
}

impl Value {
    /// The canonical value of a big integer: `Int` when it fits.
    pub fn from_big(b: BigInt) -> Value {
        match b.to_i64() {
            Some(i) => Value::Int(i),
            None => Value::Big(Arc::new(b)),
        }
    }

    pub fn atom(name: &str) -> Value {
        Value::Atom(Symbol::intern(name))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Arc::new(List::new(items)))
    }

    /// Truth in `if` (docs/language.md §1): only the integer 0 is false.
    pub fn is_truthy(&self) -> bool {
        !matches!(self, Value::Int(0))
    }

    pub fn is_int(&self) -> bool {
        matches!(self, Value::Int(_) | Value::Big(_))
    }

    /// A big integer copy of an integer value.
    pub fn to_bigint(&self) -> Option<BigInt> {
        match self {
            Value::Int(i) => Some(BigInt::from(*i)),
            Value::Big(b) => Some((**b).clone()),
            _ => None,
        }
    }

    /// The kind of value, as error messages name it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Int(_) | Value::Big(_) => "integer",
            Value::Atom(_) => "atom",
            Value::List(_) => "list",
            Value::Object(_) => "object",
        }
    }

    /// Whether this value can be written as a constant in a program.
    pub fn is_constant(&self) -> bool {
        !self.holds_objects()
    }

    /// Whether the value is an object or a list that holds one (at any
    /// depth; known without a walk). A value that holds none may cross
    /// threads.
    pub fn holds_objects(&self) -> bool {
        match self {
            Value::Object(_) => true,
            Value::List(l) => l.objects,
            _ => false,
        }
    }

    /// Writes the value the way SWI-Prolog's `print/1` does: atoms quoted
    /// where needed, lists without spaces.
    pub fn write_print(&self, out: &mut String) {
        self.write_with(out, true)
    }

    /// Writes the value the way SWI-Prolog's `write/1` does: atoms unquoted.
    pub fn write_plain(&self, out: &mut String) {
        self.write_with(out, false)
    }

    fn write_with(&self, out: &mut String, quoted: bool) {
        match self {
            Value::Int(i) => write!(out, "{i}").unwrap(),
            Value::Big(b) => write!(out, "{b}").unwrap(),
            Value::Atom(a) => write_atom(out, a.as_str(), quoted),
            Value::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_with(out, quoted);
                }
                out.push(']');
            }
            Value::Object(o) => write!(out, "<{}#{}>", o.class(), o.id()).unwrap(),
        }
    }

    /// The `print/1` form as a string.
    pub fn to_print_string(&self) -> String {
        let mut s = String::new();
        self.write_print(&mut s);
        s
    }
}

/// The elements of a list value, and what compiled code reads of them:
/// `words`, `[len, w0, w1, ...]`, where `wi` is element `i`'s word when it
/// is immediate (an integer of 63 bits or an atom, [`crate::heap::word`])
/// and [`crate::heap::word::STOP`] when it is not (a list, a big integer:
/// the runtime reads those). Compiled code reads an element with two
/// loads; the table lives as long as the list, which a heap cell holding
/// the list keeps alive ([`crate::heap::cell::ITEMS`]).
///
/// A list is compared and hashed often where it is a constant (in trace
/// IR, resume records, the optimizers' tables) and can be long (an
/// interpreter's program): its hash is computed once, and the same list
/// is equal to itself without a walk.
pub struct List {
    items: Vec<Value>,
    words: Box<[u64]>,
    hash: u64,
    /// Whether an element is an object or a list that holds one.
    objects: bool,
}

impl List {
    pub fn new(items: Vec<Value>) -> List {
        let words = std::iter::once(items.len() as u64)
            .chain(items.iter().map(|v| crate::heap::word::immediate(v).unwrap_or(crate::heap::word::STOP).bits()))
            .collect();
        // A hasher with fixed keys: hashes (and so any order derived from
        // them) are the same from run to run. Fx rather than SipHash: a
        // BF program's 100,000 instructions, read as a list, took 90
        // instructions an item to hash, a tenth of reading them.
        let mut h = rustc_hash::FxHasher::default();
        std::hash::Hash::hash(&items, &mut h);
        let hash = std::hash::Hasher::finish(&h);
        let objects = items.iter().any(Value::holds_objects);
        List { items, words, hash, objects }
    }

    /// The table of words, `[len, w0, w1, ...]`, as bits.
    pub fn words(&self) -> *const u64 {
        self.words.as_ptr()
    }
}

impl std::ops::Deref for List {
    type Target = [Value];
    fn deref(&self) -> &[Value] {
        &self.items
    }
}

impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        std::ptr::eq(self, other) || (self.hash == other.hash && self.items == other.items)
    }
}

impl std::hash::Hash for List {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash)
    }
}

/// Structural equality (Prolog's `==`); objects compare by identity.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Big(a), Value::Big(b)) => a == b,
            (Value::Atom(a), Value::Atom(b)) => a == b,
            (Value::List(a), Value::List(b)) => Arc::ptr_eq(a, b) || a == b,
            (Value::Object(a), Value::Object(b)) => a == b,
            _ => false,
        }
    }
}
impl Eq for Value {}

impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Int(i) => i.hash(state),
            Value::Big(b) => b.hash(state),
            Value::Atom(a) => a.hash(state),
            Value::List(items) => items.hash(state),
            Value::Object(o) => o.hash(state),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_print_string())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_print_string())
    }
}

/// Characters that form "symbol atoms" in Prolog (`+`, `==`, `-->`), which
/// `writeq` leaves unquoted.
const SYMBOL_CHARS: &str = "#$&*+-./:<=>?@^~\\";

/// Whether `writeq` prints this atom without quotes.
pub fn atom_needs_no_quotes(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        None => false,
        Some(c) if c.is_ascii_lowercase() => name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        Some(_) if matches!(name, "[]" | "!" | ";" | "{}") => true,
        Some(_) => name.chars().all(|c| SYMBOL_CHARS.contains(c)),
    }
}

/// Writes an atom, quoted in Prolog style when `quoted` and needed.
pub fn write_atom(out: &mut String, name: &str, quoted: bool) {
    if !quoted || atom_needs_no_quotes(name) {
        out.push_str(name);
        return;
    }
    push_quoted(out, name);
}

/// Writes `s` in single quotes, with `'`, `\`, newline and tab escaped
/// (Prolog's quoted atoms, and the readable syntax's quoted names).
pub fn push_quoted(out: &mut String, s: &str) {
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lists_word_table_holds_its_length_and_immediate_elements() {
        use crate::heap::word;
        let big = Value::from_big(BigInt::from(1u8) << 62);
        let items = vec![Value::Int(-5), Value::atom("a"), Value::list(vec![]), big, Value::Int((1 << 62) - 1)];
        let Value::List(l) = Value::list(items) else { unreachable!() };
        // SAFETY: the table has 1 + len words while `l` lives.
        let table = unsafe { std::slice::from_raw_parts(l.words(), 1 + l.len()) };
        let small = word::small((1 << 62) - 1).unwrap();
        let (minus5, a) = (word::small(-5).unwrap(), word::atom(Symbol::intern("a")));
        assert_eq!(table, [5, minus5.bits(), a.bits(), 0, 0, small.bits()]);
    }

    #[test]
    fn prints_like_swi_print() {
        let v = Value::list(vec![Value::atom("a"), Value::atom("b"), Value::Int(2)]);
        assert_eq!(v.to_print_string(), "[a,b,2]");
        assert_eq!(Value::atom("Hello world").to_print_string(), "'Hello world'");
        assert_eq!(Value::atom("it's").to_print_string(), "'it\\'s'");
        assert_eq!(Value::atom("==").to_print_string(), "==");
        let mut plain = String::new();
        Value::atom("Hello world").write_plain(&mut plain);
        assert_eq!(plain, "Hello world");
    }

    #[test]
    fn big_values_are_canonical() {
        let small = Value::from_big(BigInt::from(7));
        assert!(matches!(small, Value::Int(7)));
        let big = Value::from_big(BigInt::from(i64::MAX) * 4);
        assert!(matches!(big, Value::Big(_)));
        assert_eq!(big.to_print_string(), "36893488147419103228");
    }
}

//! The value-info lattice of propagate (and of the trace optimizer): what
//! is known about a value at run time.
//!
//! An [`Info`] combines
//! - the set of [`Kinds`] the value may have (integer, atom, list, object,
//!   unbound) — the empty set is bottom: no value reaches here (yet);
//! - the exact value, when there is exactly one;
//! - an integer [`Interval`] for its integer members;
//! - an interval of lengths for its list members;
//! - the class of its object members, and the allocation (`new`) they come
//!   from, when unique.
//!
//! [`Info::join`] is the least upper bound; intervals are widened at phis
//! ([`Info::widen`]) so ascending chains are finite. Transfer functions
//! ([`transfer`]) come from the op table: constant folding with
//! [`Op::eval`], ranges with [`flowc_lang::ops::range`]. [`best_form`]
//! decides which specialized form an operation may take.

use std::fmt::{self, Write as _};

use flowc_ir::InstId;
use flowc_lang::ops::range::{self, Interval};
use flowc_lang::ops::{Form, Op};
use flowc_lang::{Symbol, Value};
use smallvec::SmallVec;

mod widening;
pub use widening::Widening;

/// A set of value kinds.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Kinds(pub u8);

impl Kinds {
    pub const NONE: Kinds = Kinds(0);
    pub const INT: Kinds = Kinds(1);
    pub const ATOM: Kinds = Kinds(2);
    pub const LIST: Kinds = Kinds(4);
    pub const OBJECT: Kinds = Kinds(8);
    pub const UNBOUND: Kinds = Kinds(16);
    /// Any bound value.
    pub const VALUE: Kinds = Kinds(15);
    pub const ANY: Kinds = Kinds(31);

    pub fn has(self, k: Kinds) -> bool {
        self.0 & k.0 != 0
    }

    /// Whether every member is in `k`.
    pub fn within(self, k: Kinds) -> bool {
        self.0 & !k.0 == 0
    }

    pub fn union(self, k: Kinds) -> Kinds {
        Kinds(self.0 | k.0)
    }

    pub fn without(self, k: Kinds) -> Kinds {
        Kinds(self.0 & !k.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Kinds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Kinds::ANY {
            return f.write_str("any");
        }
        if *self == Kinds::VALUE {
            return f.write_str("value");
        }
        let names = [
            (Kinds::INT, "int"),
            (Kinds::ATOM, "atom"),
            (Kinds::LIST, "list"),
            (Kinds::OBJECT, "object"),
            (Kinds::UNBOUND, "unbound"),
        ];
        let parts: Vec<&str> = names.iter().filter(|(k, _)| self.has(*k)).map(|(_, n)| *n).collect();
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join("|"))
        }
    }
}

/// What is known about a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    pub kinds: Kinds,
    pub constant: Option<Value>,
    pub range: Interval,
    pub len: Interval,
    pub class: Option<Symbol>,
    pub alloc: Option<InstId>,
}

impl Info {
    /// No value (unreached).
    pub fn bottom() -> Info {
        Info {
            kinds: Kinds::NONE,
            constant: None,
            range: Interval::EMPTY,
            len: Interval::EMPTY,
            class: None,
            alloc: None,
        }
    }

    /// Anything, unbound included (a main-graph parameter).
    pub fn any() -> Info {
        Info::of_kinds(Kinds::ANY)
    }

    /// Any bound value.
    pub fn value() -> Info {
        Info::of_kinds(Kinds::VALUE)
    }

    /// Every value of the given kinds.
    pub fn of_kinds(kinds: Kinds) -> Info {
        Info {
            kinds,
            constant: None,
            range: if kinds.has(Kinds::INT) { Interval::FULL } else { Interval::EMPTY },
            len: if kinds.has(Kinds::LIST) { Interval::NON_NEGATIVE } else { Interval::EMPTY },
            class: None,
            alloc: None,
        }
    }

    /// An integer in `range`.
    pub fn int(range: Interval) -> Info {
        if range.is_empty() {
            return Info::bottom();
        }
        match range.as_point() {
            Some(p) => Info::of_const(&Value::Int(p as i64)),
            None => Info { range, ..Info::of_kinds(Kinds::INT) },
        }
    }

    pub fn of_const(v: &Value) -> Info {
        let mut info = match v {
            Value::Int(i) => Info { range: Interval::point(*i as i128), ..Info::of_kinds(Kinds::INT) },
            Value::Big(_) => Info::of_kinds(Kinds::INT),
            Value::Atom(_) => Info::of_kinds(Kinds::ATOM),
            Value::List(items) => Info { len: Interval::point(items.len() as i128), ..Info::of_kinds(Kinds::LIST) },
            Value::Object(o) => Info { class: Some(o.class()), ..Info::of_kinds(Kinds::OBJECT) },
        };
        if !matches!(v, Value::Object(_)) {
            info.constant = Some(v.clone());
        }
        info
    }

    /// An object of `class` made by allocation `alloc`.
    pub fn object(class: Symbol, alloc: Option<InstId>) -> Info {
        Info { class: Some(class), alloc, ..Info::of_kinds(Kinds::OBJECT) }
    }

    pub fn is_bottom(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The same info without the unbound kind (after a successful use).
    pub fn bound(&self) -> Info {
        Info { kinds: self.kinds.without(Kinds::UNBOUND), ..self.clone() }
    }

    /// Whether some value reaches here and every one is of `kinds`.
    pub fn surely(&self, kinds: Kinds) -> bool {
        !self.kinds.is_empty() && self.kinds.within(kinds)
    }

    pub fn may_be_unbound(&self) -> bool {
        self.kinds.has(Kinds::UNBOUND)
    }

    /// Least upper bound.
    pub fn join(&self, o: &Info) -> Info {
        if self.is_bottom() {
            return o.clone();
        }
        if o.is_bottom() {
            return self.clone();
        }
        let pick = |a: Option<Symbol>, b: Option<Symbol>, ha: bool, hb: bool| match (ha, hb) {
            (false, _) => b,
            (_, false) => a,
            _ if a == b => a,
            _ => None,
        };
        let (ha, hb) = (self.kinds.has(Kinds::OBJECT), o.kinds.has(Kinds::OBJECT));
        Info {
            kinds: self.kinds.union(o.kinds),
            constant: if self.constant == o.constant { self.constant.clone() } else { None },
            range: self.range.hull(o.range),
            len: self.len.hull(o.len),
            class: pick(self.class, o.class, ha, hb),
            alloc: match (ha, hb) {
                (false, _) => o.alloc,
                (_, false) => self.alloc,
                _ if self.alloc == o.alloc => self.alloc,
                _ => None,
            },
        }
    }

    /// `new`, with ranges widened against `self` (the previous info): a
    /// bound that grew jumps to the next of the sorted `thresholds`, or to
    /// infinity ([`Interval::widen`]).
    pub fn widen(&self, new: &Info, thresholds: &[i128]) -> Info {
        Info {
            range: Interval::widen(self.range, new.range, thresholds),
            len: Interval::widen(self.len, new.len, thresholds),
            ..new.clone()
        }
    }

    /// Its members of `kinds` alone (what an operation that went on found
    /// its operand to be: `readlist` a list, `add` an integer); bottom
    /// where it has none.
    pub fn restrict_kinds(&self, kinds: Kinds) -> Info {
        let k = Kinds(self.kinds.0 & kinds.0);
        if k == self.kinds {
            return self.clone();
        }
        if k.is_empty() {
            return Info::bottom();
        }
        Info {
            kinds: k,
            // (A constant is of one kind, and so kept whole or not at all.)
            constant: self.constant.clone(),
            range: if k.has(Kinds::INT) { self.range } else { Interval::EMPTY },
            len: if k.has(Kinds::LIST) { self.len } else { Interval::EMPTY },
            class: if k.has(Kinds::OBJECT) { self.class } else { None },
            alloc: if k.has(Kinds::OBJECT) { self.alloc } else { None },
        }
    }

    /// Narrows the integer members to `r` (a branch condition); keeps
    /// non-integer members.
    pub fn restrict_range(&self, r: Interval) -> Info {
        let range = self.range.intersect(r);
        let kinds = if range.is_empty() { self.kinds.without(Kinds::INT) } else { self.kinds };
        if kinds == Kinds::INT && range.as_point().is_some() {
            return Info::int(range);
        }
        let constant = if kinds.has(Kinds::INT) || self.constant.is_none() { self.constant.clone() } else { None };
        Info { kinds, range, constant, ..self.clone() }
    }

    /// How `if` sees the value: always true, always false, or unknown.
    pub fn truth(&self) -> Option<bool> {
        let k = self.kinds.without(Kinds::UNBOUND);
        if k.is_empty() {
            return None;
        }
        if !k.has(Kinds::INT) {
            return Some(true);
        }
        if k == Kinds::INT {
            if !self.range.contains(0) {
                return Some(true);
            }
            if self.range.as_point() == Some(0) {
                return Some(false);
            }
        }
        None
    }

    /// Whether the value is always an object of `class` (`Some(true)`),
    /// never one (`Some(false)`), or unknown.
    pub fn is_class(&self, class: Symbol) -> Option<bool> {
        let k = self.kinds.without(Kinds::UNBOUND);
        if k.is_empty() {
            return None;
        }
        if !k.has(Kinds::OBJECT) {
            return Some(false);
        }
        match self.class {
            Some(c) if c != class => Some(false),
            Some(_) if k == Kinds::OBJECT => Some(true),
            _ => None,
        }
    }
}

impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(c) = &self.constant {
            let mut s = String::new();
            flowc_lang::syntax::readable_print::constant(&mut s, c);
            return write!(f, "= {s}");
        }
        write!(f, "{}", self.kinds)?;
        let bound = |b: i128| match b {
            range::NEG_INF => "-inf".to_owned(),
            range::POS_INF => "+inf".to_owned(),
            b => b.to_string(),
        };
        if self.kinds.has(Kinds::INT) && self.range != Interval::FULL {
            write!(f, " [{}, {}]", bound(self.range.lo()), bound(self.range.hi()))?;
        }
        if self.kinds.has(Kinds::LIST) && self.len != Interval::NON_NEGATIVE {
            write!(f, " len [{}, {}]", bound(self.len.lo()), bound(self.len.hi()))?;
        }
        if let Some(c) = self.class {
            write!(f, " class {c}")?;
        }
        if let Some(a) = self.alloc {
            write!(f, " from new#{}", a.into_raw().into_u32())?;
        }
        Ok(())
    }
}

/// The info of `op` applied to operands with infos `args` (operands are
/// read first, so an unbound one fails: only bound members flow on).
pub fn transfer(op: Op, args: &[Info]) -> Info {
    // An operation that returns had bound operands.
    let bound: SmallVec<[Info; 2]>;
    let args = if args.iter().any(Info::may_be_unbound) {
        bound = args.iter().map(Info::bound).collect();
        bound.as_slice()
    } else {
        args
    };
    if args.iter().any(Info::is_bottom) {
        return Info::bottom();
    }
    if args.iter().all(|a| a.constant.is_some()) {
        let consts: SmallVec<[Value; 2]> = args.iter().filter_map(|a| a.constant.clone()).collect();
        return match op.eval(&consts) {
            Ok(v) => Info::of_const(&v),
            Err(_) => Info::bottom(),
        };
    }
    let ints = |k: usize| args[k].kinds.has(Kinds::INT);
    match op {
        Op::Same => args[0].clone(),
        op if op.takes_integers() => {
            if !(0..args.len()).all(ints) {
                return Info::bottom();
            }
            let ranges = [args[0].range, args.get(1).map_or(Interval::EMPTY, |a| a.range)];
            let ranges = &ranges[..args.len()];
            if matches!(op, Op::Div | Op::Mod) && ranges[1].as_point() == Some(0) {
                return Info::bottom();
            }
            Info::int(range::transfer(op, ranges))
        }
        Op::Eq | Op::Ne => {
            let (a, b) = (&args[0], &args[1]);
            let disjoint = (a.kinds.0 & b.kinds.0) == 0
                || (a.kinds == Kinds::INT && b.kinds == Kinds::INT && a.range.intersect(b.range).is_empty());
            if disjoint {
                Info::of_const(&Value::Int((op == Op::Ne) as i64))
            } else {
                Info::int(Interval::BOOL)
            }
        }
        Op::ReadList => {
            let (list, index) = (&args[0], &args[1]);
            if !list.kinds.has(Kinds::LIST) || !index.kinds.has(Kinds::INT) {
                return Info::bottom();
            }
            match &list.constant {
                Some(Value::List(items)) => {
                    let valid = index.range.intersect(Interval::new(0, items.len() as i128 - 1));
                    if valid.is_empty() {
                        return Info::bottom();
                    }
                    let (lo, hi) = (valid.lo() as usize, valid.hi() as usize);
                    join_of_items(&items[lo..=hi])
                }
                _ => Info::value(),
            }
        }
        Op::Len => {
            if !args[0].kinds.has(Kinds::LIST) {
                return Info::bottom();
            }
            Info::int(args[0].len.intersect(Interval::NON_NEGATIVE))
        }
        _ => unreachable!("every operation taking integers is matched above"),
    }
}

/// The join of the infos of constants `items` (what reading one of them
/// gives). A slice of integers only, the common case — an interpreter's
/// program read at an index the optimizer does not know, its every
/// instruction a candidate — is the range from its least to its greatest:
/// the fold's result, found without an info per item (the fold over an
/// interpreter's program of 60,000 instructions took 2 ms, at every visit
/// of every read of it).
fn join_of_items(items: &[Value]) -> Info {
    let ints = items.iter().try_fold((i64::MAX, i64::MIN), |(lo, hi), v| match v {
        Value::Int(i) => Some((lo.min(*i), hi.max(*i))),
        _ => None,
    });
    match ints {
        Some((lo, hi)) => Info::int(Interval::new(lo as i128, hi as i128)),
        None => items.iter().fold(Info::bottom(), |acc, v| acc.join(&Info::of_const(v))),
    }
}

/// The kinds operand `k` of `op` is of wherever `op` returns: its
/// generic form raises its error on any other (an unbound operand's
/// too, for every operation reads its operands first).
pub fn operand_kinds(op: Op, k: usize) -> Kinds {
    match op {
        Op::ReadList if k == 0 => Kinds::LIST,
        Op::ReadList => Kinds::INT,
        Op::Len => Kinds::LIST,
        op if op.takes_integers() => Kinds::INT,
        _ => Kinds::VALUE,
    }
}

/// The operand `op` returns unchanged, whatever its value, for operands
/// described by `args`: its index (`x + 0`, `0 + x`, `x - 0`, `x * 1`,
/// `1 * x`, `x // 1`, and `x % m` for `x` known to lie in `0..m`, the
/// last the `v = v % 256` after a byte interpreter's decrement once a
/// guard found `v` not 0). Only for operands surely integers, so the
/// operation could neither fail nor convert.
pub fn identity(op: Op, args: &[Info]) -> Option<usize> {
    if args.len() != 2 || !args.iter().all(|a| a.surely(Kinds::INT)) {
        return None;
    }
    let point = |k: usize| args[k].range.as_point();
    match op {
        Op::Add if point(1) == Some(0) => Some(0),
        Op::Add if point(0) == Some(0) => Some(1),
        Op::Sub if point(1) == Some(0) => Some(0),
        Op::Mul if point(1) == Some(1) => Some(0),
        Op::Mul if point(0) == Some(1) => Some(1),
        Op::Div if point(1) == Some(1) => Some(0),
        Op::Mod => {
            let m = point(1)?;
            let x = args[0].range;
            (m > 0 && !x.is_empty() && x.lo() >= 0 && x.hi() < m).then_some(0)
        }
        _ => None,
    }
}

/// The cheapest form `op` may take with operands described by `args`.
pub fn best_form(op: Op, args: &[Info]) -> Form {
    let forms = op.info().forms;
    if forms.len() == 1 || args.iter().any(|a| a.may_be_unbound() || a.is_bottom()) {
        return Form::Generic;
    }
    let only = |k: usize, kinds: Kinds| args[k].kinds.within(kinds);
    // An object, an atom or a small integer constant equals only itself,
    // whatever it is compared with (bound): equality is of the words (an
    // object's identity; an interpreter's opcode against a constant).
    if matches!(op, Op::Eq | Op::Ne) {
        let by_identity = |a: &Info| {
            a.kinds.within(Kinds::OBJECT.union(Kinds::ATOM))
                || a.constant.as_ref().is_some_and(|c| matches!(c, Value::Int(_)) && range::is_word(c))
        };
        return if args.iter().any(by_identity) { Form::Word } else { Form::Generic };
    }
    let int_ok = match op {
        Op::ReadList => only(0, Kinds::LIST) && only(1, Kinds::INT),
        Op::Len => only(0, Kinds::LIST),
        _ => (0..args.len()).all(|k| only(k, Kinds::INT)),
    };
    if !int_ok {
        return Form::Generic;
    }
    let word = match op {
        Op::ReadList => {
            let (len, index) = (args[0].len, args[1].range);
            index.fits_word() && !len.is_empty() && index.lo() >= 0 && index.hi() < len.lo()
        }
        Op::Len => true,
        op if op.is_ordering() => args.iter().all(|a| a.range.fits_word()),
        _ => range::cannot_overflow(op, &args.iter().map(|a| a.range).collect::<SmallVec<[Interval; 2]>>()),
    };
    if word && forms.contains(&Form::Word) {
        Form::Word
    } else if forms.contains(&Form::Int) {
        Form::Int
    } else {
        Form::Generic
    }
}

/// `info` once a test of its truth (a `branch` on it, a guard) came out
/// `truth`: not 0 (as far as ranges can say), or exactly the integer 0.
pub fn when_truth(info: Info, truth: bool) -> Info {
    if truth {
        let r = info.range;
        let lo = if r.lo() == 0 { 1 } else { r.lo() };
        let hi = if r.hi() == 0 { -1 } else { r.hi() };
        info.restrict_range(Interval::new(lo, hi))
    } else if info.kinds.has(Kinds::INT) {
        Info::of_const(&Value::Int(0))
    } else {
        info
    }
}

/// `info` (of `x`) once `x OP k` (or `k OP x` when `mirrored`) came out
/// `holds`.
pub fn when_compared(info: Info, op: Op, k: i128, mirrored: bool, holds: bool) -> Info {
    let op = if mirrored { op.mirrored() } else { op };
    match if holds { Some(op) } else { op.negated() } {
        Some(op) => narrow(info, op, k),
        None => info,
    }
}

/// `info` once `x OP y` (or `y OP x` when `mirrored`) came out `holds`,
/// where `y` lies in `other`: `x < y` bounds `x` by `y`'s upper bound,
/// `x >= y` by its lower bound, and so on (equalities only with a constant).
pub fn when_compared_range(info: Info, op: Op, other: Interval, mirrored: bool, holds: bool) -> Info {
    if let Some(k) = other.as_point() {
        return when_compared(info, op, k, mirrored, holds);
    }
    let op = if mirrored { op.mirrored() } else { op };
    let bound = match if holds { Some(op) } else { op.negated() } {
        Some(op @ (Op::Lt | Op::Le)) => (op, other.hi()),
        Some(op @ (Op::Gt | Op::Ge)) => (op, other.lo()),
        _ => return info,
    };
    match bound {
        (_, k) if k == range::NEG_INF || k == range::POS_INF => info,
        (op, k) => narrow(info, op, k),
    }
}

/// Renders `(value, info)` pairs one per line, for dumps.
pub fn render(out: &mut String, lines: impl Iterator<Item = (String, Info)>) {
    for (name, info) in lines {
        writeln!(out, ";   {name}: {info}").unwrap();
    }
}

/// `info` knowing that `x OP k` holds.
fn narrow(info: Info, op: Op, k: i128) -> Info {
    let ordered = op.is_ordering();
    // An ordered comparison that succeeded had an integer operand.
    let info =
        if ordered { Info { kinds: info.kinds.without(Kinds::VALUE.without(Kinds::INT)), ..info } } else { info };
    let r = match op {
        Op::Lt => Interval::new(i128::MIN, k - 1),
        Op::Le => Interval::new(i128::MIN, k),
        Op::Gt => Interval::new(k + 1, i128::MAX),
        Op::Ge => Interval::new(k, i128::MAX),
        Op::Eq => return if info.kinds.has(Kinds::INT) { Info::of_const(&Value::Int(k as i64)) } else { info },
        // An interval can drop `k` only at one of its ends.
        Op::Ne if info.range.lo() == k => Interval::new(k + 1, i128::MAX),
        Op::Ne if info.range.hi() == k => Interval::new(i128::MIN, k - 1),
        _ => return info,
    };
    info.restrict_range(r)
}

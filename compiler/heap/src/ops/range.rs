//! Integer intervals and each operation's transfer function on them — the
//! op table's knowledge that range propagation uses.
//!
//! Bounds are read and built as `i128`s, where [`NEG_INF`] and [`POS_INF`]
//! stand for unbounded; arithmetic on them cannot overflow. Any bound
//! outside the `i64` range is widened to infinity, because the only
//! question ranges answer for code generation is "is it a machine word?"
//! — so an interval is stored in two `i64`s (16 bytes; the optimizer keeps
//! one per value), with `i64::MIN`/`i64::MAX` meaning infinity (those two
//! word values are treated as unbounded: a safe approximation). The empty
//! interval is represented by `lo > hi`.
//!
//! A *word* here is an integer of [`WORD_MIN`]`..=`[`WORD_MAX`]: the 63-bit
//! integers generated code keeps inline in a tagged word. An operation
//! whose operands and result are words needs neither a type check nor an
//! overflow check (its `Word` form).
//!
//! Widening ([`Interval::widen`]) jumps a growing bound to the next
//! *threshold* — a constant of the function, or a word bound — before
//! infinity, so a loop counter bounded by a constant keeps its bound.

use std::cmp::{max, min};

use super::Op;

pub const NEG_INF: i128 = i128::MIN;
pub const POS_INF: i128 = i128::MAX;
/// The least integer generated code keeps inline (`-2^62`).
pub const WORD_MIN: i128 = -(1 << 62);
/// The greatest integer generated code keeps inline (`2^62 - 1`).
pub const WORD_MAX: i128 = (1 << 62) - 1;

/// Whether `v` is a word: an integer generated code keeps inline.
pub fn is_word(v: &crate::Value) -> bool {
    matches!(v, crate::Value::Int(i) if (WORD_MIN..=WORD_MAX).contains(&(*i as i128)))
}

/// The range loop versioning assumes for the main graph's integer
/// parameters (`flowc_passes::versions`): 32-bit integers, so that a
/// counter bounded by one, and small multiples of it, are words.
pub const SMALL_PARAM: (i128, i128) = (-(1 << 31), (1 << 31) - 1);

/// Whether `v` is in [`SMALL_PARAM`].
pub fn is_small_param(v: &crate::Value) -> bool {
    matches!(v, crate::Value::Int(i) if (SMALL_PARAM.0..=SMALL_PARAM.1).contains(&(*i as i128)))
}

/// A set of integers `lo..=hi` (possibly unbounded, possibly empty).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    lo: i64,
    hi: i64,
}

impl Interval {
    pub const FULL: Interval = Interval { lo: i64::MIN, hi: i64::MAX };
    pub const EMPTY: Interval = Interval { lo: 1, hi: 0 };
    pub const BOOL: Interval = Interval { lo: 0, hi: 1 };
    pub const NON_NEGATIVE: Interval = Interval { lo: 0, hi: i64::MAX };

    /// `lo..=hi`, normalized (bounds that do not fit strictly inside `i64`
    /// become infinite).
    pub fn new(lo: i128, hi: i128) -> Interval {
        if lo > hi {
            return Interval::EMPTY;
        }
        let lo = if lo <= i64::MIN as i128 { i64::MIN } else { lo as i64 };
        let hi = if hi >= i64::MAX as i128 { i64::MAX } else { hi as i64 };
        Interval { lo, hi }
    }

    /// The lower bound (`NEG_INF` when unbounded).
    pub fn lo(self) -> i128 {
        if self.lo == i64::MIN {
            NEG_INF
        } else {
            self.lo as i128
        }
    }

    /// The upper bound (`POS_INF` when unbounded).
    pub fn hi(self) -> i128 {
        if self.hi == i64::MAX {
            POS_INF
        } else {
            self.hi as i128
        }
    }

    pub fn point(v: i128) -> Interval {
        Interval::new(v, v)
    }

    pub fn is_empty(self) -> bool {
        self.lo() > self.hi()
    }

    pub fn contains(self, v: i128) -> bool {
        self.lo() <= v && v <= self.hi()
    }

    /// Whether every member is a word (an inline 63-bit integer).
    pub fn fits_word(self) -> bool {
        self.is_empty() || (self.lo() >= WORD_MIN && self.hi() <= WORD_MAX)
    }

    /// The single member, if there is exactly one.
    pub fn as_point(self) -> Option<i128> {
        (self.lo() == self.hi() && self.lo() != NEG_INF && self.hi() != POS_INF).then_some(self.lo())
    }

    pub fn hull(self, o: Interval) -> Interval {
        if self.is_empty() {
            return o;
        }
        if o.is_empty() {
            return self;
        }
        Interval::new(min(self.lo(), o.lo()), max(self.hi(), o.hi()))
    }

    pub fn intersect(self, o: Interval) -> Interval {
        Interval::new(max(self.lo(), o.lo()), min(self.hi(), o.hi()))
    }

    /// Widening: a bound that grew since `old` jumps to the nearest of the
    /// sorted `thresholds` at or beyond it, or to infinity when none is, so
    /// a chain of growing intervals is finite (each bound takes at most
    /// `thresholds.len() + 1` distinct values).
    pub fn widen(old: Interval, new: Interval, thresholds: &[i128]) -> Interval {
        if old.is_empty() {
            return new;
        }
        if new.is_empty() {
            return old;
        }
        let lo = if new.lo() < old.lo() {
            let k = thresholds.partition_point(|&t| t <= new.lo());
            if k > 0 && thresholds[k - 1] == new.lo() {
                new.lo()
            } else {
                k.checked_sub(1).map_or(NEG_INF, |k| thresholds[k])
            }
        } else {
            old.lo()
        };
        let hi = if new.hi() > old.hi() {
            let k = thresholds.partition_point(|&t| t < new.hi());
            thresholds.get(k).copied().unwrap_or(POS_INF)
        } else {
            old.hi()
        };
        Interval::new(lo, hi)
    }
}

fn add_bound(a: i128, b: i128) -> i128 {
    if a == NEG_INF || b == NEG_INF {
        NEG_INF
    } else if a == POS_INF || b == POS_INF {
        POS_INF
    } else {
        a + b
    }
}

fn neg_bound(a: i128) -> i128 {
    match a {
        NEG_INF => POS_INF,
        POS_INF => NEG_INF,
        a => -a,
    }
}

/// The product of two bounds, with 0 * inf = 0.
fn mul_bound(a: i128, b: i128) -> i128 {
    if a == 0 || b == 0 {
        return 0;
    }
    let inf = |x: i128| x == NEG_INF || x == POS_INF;
    if inf(a) || inf(b) {
        return if (a < 0) == (b < 0) { POS_INF } else { NEG_INF };
    }
    a * b
}

fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// The interval of `op` applied to operands in `args` (integers only; the
/// caller handles non-integer operands). Empty operands give empty results.
pub fn transfer(op: Op, args: &[Interval]) -> Interval {
    if args.iter().any(|a| a.is_empty()) {
        return Interval::EMPTY;
    }
    match (op, args) {
        (Op::Same, [a]) => *a,
        (Op::Neg, [a]) => Interval::new(neg_bound(a.hi()), neg_bound(a.lo())),
        (Op::Add, [a, b]) => Interval::new(add_bound(a.lo(), b.lo()), add_bound(a.hi(), b.hi())),
        (Op::Sub, [a, b]) => Interval::new(add_bound(a.lo(), neg_bound(b.hi())), add_bound(a.hi(), neg_bound(b.lo()))),
        (Op::Mul, [a, b]) => {
            let c = [
                mul_bound(a.lo(), b.lo()),
                mul_bound(a.lo(), b.hi()),
                mul_bound(a.hi(), b.lo()),
                mul_bound(a.hi(), b.hi()),
            ];
            Interval::new(*c.iter().min().unwrap(), *c.iter().max().unwrap())
        }
        (Op::Div, [a, b]) if b.fits_word() && a.fits_word() && !b.contains(0) => {
            let c = [
                floor_div(a.lo(), b.lo()),
                floor_div(a.lo(), b.hi()),
                floor_div(a.hi(), b.lo()),
                floor_div(a.hi(), b.hi()),
            ];
            Interval::new(*c.iter().min().unwrap(), *c.iter().max().unwrap())
        }
        (Op::Mod, [_, b]) if b.lo() > 0 => Interval::new(0, add_bound(b.hi(), -1)),
        (Op::Mod, [_, b]) if b.hi() < 0 => Interval::new(add_bound(b.lo(), 1), 0),
        (op, [a, b]) if op.is_ordering() => match compare(op, *a, *b) {
            Some(r) => Interval::point(r as i128),
            None => Interval::BOOL,
        },
        (Op::Eq | Op::Ne, _) => Interval::BOOL,
        (Op::Len, _) => Interval::NON_NEGATIVE,
        _ => Interval::FULL,
    }
}

/// The outcome of a comparison, if the intervals decide it.
pub fn compare(op: Op, a: Interval, b: Interval) -> Option<bool> {
    let (lt, ge) = match op {
        Op::Lt => (a.hi() < b.lo(), a.lo() >= b.hi()),
        Op::Le => (a.hi() <= b.lo(), a.lo() > b.hi()),
        Op::Gt => (a.lo() > b.hi(), a.hi() <= b.lo()),
        Op::Ge => (a.lo() >= b.hi(), a.hi() < b.lo()),
        _ => return None,
    };
    if lt {
        Some(true)
    } else if ge {
        Some(false)
    } else {
        None
    }
}

/// Whether `op` on operands in these intervals can neither overflow a
/// machine word nor divide by zero (the precondition of its `Word` form,
/// given integer operands that fit words).
pub fn cannot_overflow(op: Op, args: &[Interval]) -> bool {
    if !args.iter().all(|a| a.fits_word()) {
        return false;
    }
    match op {
        Op::Div => {
            let [_, b] = args else { return false };
            !b.contains(0) && transfer(op, args).fits_word()
        }
        Op::Mod => {
            let [_, b] = args else { return false };
            !b.contains(0)
        }
        _ => transfer(op, args).fits_word(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_on_intervals() {
        let a = Interval::new(0, 10);
        let b = Interval::new(-3, 4);
        assert_eq!(transfer(Op::Add, &[a, b]), Interval::new(-3, 14));
        assert_eq!(transfer(Op::Sub, &[a, b]), Interval::new(-4, 13));
        assert_eq!(transfer(Op::Mul, &[a, b]), Interval::new(-30, 40));
        assert_eq!(transfer(Op::Neg, &[b]), Interval::new(-4, 3));
        assert_eq!(transfer(Op::Mod, &[Interval::FULL, Interval::point(7)]), Interval::new(0, 6));
        assert_eq!(transfer(Op::Div, &[Interval::new(-7, 7), Interval::point(2)]), Interval::new(-4, 3));
    }

    #[test]
    fn overflowing_bounds_become_infinite() {
        let big = Interval::new(0, i64::MAX as i128);
        let sum = transfer(Op::Add, &[big, Interval::point(1)]);
        assert_eq!(sum.hi(), POS_INF);
        assert!(!sum.fits_word());
        assert!(!cannot_overflow(Op::Add, &[big, Interval::point(1)]));
        assert!(cannot_overflow(Op::Add, &[Interval::new(0, 100), Interval::point(1)]));
    }

    #[test]
    fn comparisons_decided_by_ranges() {
        assert_eq!(compare(Op::Lt, Interval::new(0, 4), Interval::point(5)), Some(true));
        assert_eq!(compare(Op::Ge, Interval::new(0, 4), Interval::point(5)), Some(false));
        assert_eq!(compare(Op::Lt, Interval::new(0, 5), Interval::point(5)), None);
    }

    #[test]
    fn widening_jumps_to_infinity() {
        let w = Interval::widen(Interval::new(0, 1), Interval::new(0, 2), &[]);
        assert_eq!(w, Interval::new(0, POS_INF));
    }

    #[test]
    fn widening_stops_at_thresholds() {
        let t = [-10, 0, 10, WORD_MAX];
        assert_eq!(Interval::widen(Interval::new(0, 1), Interval::new(0, 2), &t), Interval::new(0, 10));
        assert_eq!(Interval::widen(Interval::new(0, 10), Interval::new(0, 10), &t), Interval::new(0, 10));
        assert_eq!(Interval::widen(Interval::new(0, 10), Interval::new(0, 11), &t), Interval::new(0, WORD_MAX));
        assert_eq!(Interval::widen(Interval::new(0, WORD_MAX), Interval::new(0, WORD_MAX + 1), &t).hi(), POS_INF);
        assert_eq!(Interval::widen(Interval::new(0, 1), Interval::new(-3, 1), &t), Interval::new(-10, 1));
        assert_eq!(Interval::widen(Interval::new(0, 1), Interval::new(-10, 1), &t), Interval::new(-10, 1));
        assert_eq!(Interval::widen(Interval::new(0, 1), Interval::new(-11, 1), &t).lo(), NEG_INF);
    }

    #[test]
    fn words_are_63_bits() {
        assert!(Interval::new(WORD_MIN, WORD_MAX).fits_word());
        assert!(!Interval::new(0, WORD_MAX + 1).fits_word());
        assert!(!Interval::new(WORD_MIN - 1, 0).fits_word());
        assert!(!cannot_overflow(Op::Div, &[Interval::point(WORD_MIN), Interval::point(-1)]));
        assert!(cannot_overflow(Op::Div, &[Interval::new(WORD_MIN + 1, 0), Interval::point(-1)]));
    }
}

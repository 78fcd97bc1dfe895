//! Integers beyond 63 bits as compiled code holds them: *limb cells*, and
//! the arithmetic the runtime does on them without leaving the heap.
//!
//! An integer that does not fit a tagged word but whose magnitude fits
//! [`MAX_LIMBS`] 64-bit limbs lives in a limb cell: the meta word (kind
//! [`LIMBS`], the limb count in bits 16–23, the sign in bit 24), then the
//! magnitude's limbs, least significant first, the top one non-zero. Larger
//! integers are boxed [`Value::Big`]s ([`cell::BOXED_KIND`]). The form is
//! canonical — a 63-bit integer is always a tagged word, a number of at
//! most `MAX_LIMBS` limbs always a limb cell — so the value of a word does
//! not depend on how it was made.
//!
//! [`op_words`] is the fast path of the runtime's operations: `+ - * // %`,
//! negation and the comparisons of two such numbers are computed on a
//! [`Num`] on the stack (schoolbook; division and modulo
//! only by a divisor of one limb) and the result is a tagged word or a
//! fresh limb cell — no `BigInt`, no `malloc`. A bignum loop of the
//! benchmark allocates two cells per iteration and nothing else. Every
//! other case (a divisor of more limbs, zero, results past
//! `2 * MAX_LIMBS` limbs, operands of other kinds) goes to the generic
//! path on [`Value`]s, which also raises the errors.

use std::cmp::Ordering;

use num_bigint::{BigInt, BigUint, Sign};

use crate::ops::Op;
use crate::value::Value;

use super::cell::{self, Cell};
use super::word::{self, Word};

/// The kind of a limb cell.
pub const LIMBS: u64 = 3;
/// The most limbs a limb cell holds: 256 bits.
pub const MAX_LIMBS: usize = 4;
const LEN_SHIFT: u32 = 16;
const NEG: u64 = 1 << 24;
/// Limbs of a number on the stack: room for a product of two limb cells.
const SCRATCH: usize = 2 * MAX_LIMBS;

/// An integer on the stack: sign and magnitude, normalized (no zero top
/// limb; zero has no limbs and is not negative).
#[derive(Clone, Copy, Debug)]
pub struct Num {
    /// 1 when negative, else 0: a word, not a `bool`, because a byte
    /// stored and read back by a wider load stalls store forwarding (a
    /// third of the time of `+` in a profile).
    neg: u64,
    len: usize,
    mag: [u64; SCRATCH],
}

impl PartialEq for Num {
    fn eq(&self, other: &Num) -> bool {
        self.neg == other.neg && self.limbs() == other.limbs()
    }
}

impl Eq for Num {}

impl Ord for Num {
    fn cmp(&self, other: &Num) -> Ordering {
        match (self.is_neg(), other.is_neg()) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => cmp_mag(self.limbs(), other.limbs()),
            (true, true) => cmp_mag(other.limbs(), self.limbs()),
        }
    }
}

impl PartialOrd for Num {
    fn partial_cmp(&self, other: &Num) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Num {
    pub fn from_i64(i: i64) -> Num {
        let mut n = Num { neg: (i < 0) as u64, len: 1, mag: [0; SCRATCH] };
        n.mag[0] = i.unsigned_abs();
        n.normalize();
        n
    }

    fn from_limbs(neg: bool, limbs: &[u64]) -> Num {
        let mut n = Num { neg: neg as u64, len: limbs.len(), mag: [0; SCRATCH] };
        n.mag[..limbs.len()].copy_from_slice(limbs);
        n.normalize();
        n
    }

    /// The number of a big integer of at most [`MAX_LIMBS`] limbs: what
    /// a limb cell holds.
    pub fn of_bigint(b: &BigInt) -> Option<Num> {
        let digits = b.magnitude().iter_u64_digits();
        if digits.len() > MAX_LIMBS {
            return None;
        }
        let mut n = Num { neg: (b.sign() == Sign::Minus) as u64, len: 0, mag: [0; SCRATCH] };
        for (k, d) in digits.enumerate() {
            n.mag[k] = d;
            n.len = k + 1;
        }
        n.normalize();
        Some(n)
    }

    fn is_neg(&self) -> bool {
        self.neg != 0
    }

    fn limbs(&self) -> &[u64] {
        &self.mag[..self.len]
    }

    fn normalize(&mut self) {
        while self.len > 0 && self.mag[self.len - 1] == 0 {
            self.len -= 1;
        }
        if self.len == 0 {
            self.neg = 0;
        }
    }

    /// The value as an `i64`, if it fits.
    pub fn to_i64(&self) -> Option<i64> {
        match self.len {
            0 => Some(0),
            1 if self.is_neg() => (self.mag[0] <= 1 << 63).then(|| self.mag[0].wrapping_neg() as i64),
            1 => i64::try_from(self.mag[0]).ok(),
            _ => None,
        }
    }

    pub fn to_bigint(&self) -> BigInt {
        let digits: Vec<u32> = self.limbs().iter().flat_map(|&l| [l as u32, (l >> 32) as u32]).collect();
        let sign = if self.is_neg() { Sign::Minus } else { Sign::Plus };
        BigInt::from_biguint(sign, BigUint::new(digits))
    }

    /// The canonical value: `Int` when it fits.
    pub fn to_value(&self) -> Value {
        match self.to_i64() {
            Some(i) => Value::Int(i),
            None => Value::Big(std::sync::Arc::new(self.to_bigint())),
        }
    }

    fn negated(mut self) -> Num {
        self.neg = (self.neg ^ 1) & (self.len > 0) as u64;
        self
    }

    // The arithmetic takes operands of at most MAX_LIMBS limbs (what
    // words hold), so results fit SCRATCH limbs; limbs past `len` are
    // zero, so sums run over all MAX_LIMBS limbs without branching.

    pub fn add(&self, other: &Num) -> Num {
        debug_assert!(self.len <= MAX_LIMBS && other.len <= MAX_LIMBS);
        if self.neg == other.neg {
            let mut r = Num { neg: self.neg, len: MAX_LIMBS + 1, mag: [0; SCRATCH] };
            let carry = limbwise(self, other, &mut r, u64::overflowing_add);
            r.mag[MAX_LIMBS] = carry as u64;
            r.normalize();
            return r;
        }
        let (big, small) = match cmp_mag(self.limbs(), other.limbs()) {
            Ordering::Equal => return Num::from_i64(0),
            Ordering::Greater => (self, other),
            Ordering::Less => (other, self),
        };
        let mut r = Num { neg: big.neg, len: MAX_LIMBS, mag: [0; SCRATCH] };
        let borrow = limbwise(big, small, &mut r, u64::overflowing_sub);
        debug_assert!(!borrow, "the larger magnitude minus the smaller");
        r.normalize();
        r
    }

    pub fn sub(&self, other: &Num) -> Num {
        self.add(&other.negated())
    }

    pub fn mul(&self, other: &Num) -> Num {
        debug_assert!(self.len <= MAX_LIMBS && other.len <= MAX_LIMBS);
        let (m, n) = (self.len.min(MAX_LIMBS), other.len.min(MAX_LIMBS));
        let mut r = Num { neg: self.neg ^ other.neg, len: m + n, mag: [0; SCRATCH] };
        for i in 0..m {
            let a = self.mag[i] as u128;
            let mut carry = 0u128;
            for j in 0..n {
                let t = a * other.mag[j] as u128 + r.mag[i + j] as u128 + carry;
                r.mag[i + j] = t as u64;
                carry = t >> 64;
            }
            r.mag[i + n] = carry as u64;
        }
        r.normalize();
        r
    }

    /// Floored division (docs/language.md §2: `//` rounds toward negative
    /// infinity) by a divisor of one limb; `None` for other divisors (zero
    /// included).
    pub fn div_floor(&self, divisor: &Num) -> Option<Num> {
        if divisor.len != 1 {
            return None;
        }
        let mut q = Num { neg: self.neg ^ divisor.neg, len: self.len, mag: [0; SCRATCH] };
        let rem = div_mag(self.limbs(), divisor.mag[0], Some(&mut q.mag));
        q.normalize();
        if rem != 0 && self.neg != divisor.neg {
            // Truncation rounded toward zero; floor is one further down.
            return Some(q.sub(&Num::from_i64(1)));
        }
        Some(q)
    }

    /// Floored modulo (the result takes the divisor's sign) by a divisor of
    /// one limb, as a sign and a magnitude (the result is smaller than the
    /// divisor); `None` for other divisors (zero included).
    pub fn mod_floor(&self, divisor: &Num) -> Option<(bool, u64)> {
        if divisor.len != 1 {
            return None;
        }
        let d = divisor.mag[0];
        let rem = div_mag(self.limbs(), d, None);
        let r = if rem != 0 && self.neg != divisor.neg { d - rem } else { rem };
        Some((divisor.is_neg() && r != 0, r))
    }

    /// The word of this number: tagged when it fits 63 bits, a fresh limb
    /// cell when it fits [`MAX_LIMBS`] limbs, else a boxed big integer.
    /// Allocates, so may collect.
    pub fn to_word(&self) -> Word {
        if let Some(w) = self.to_i64().and_then(word::small) {
            return w;
        }
        if self.len > MAX_LIMBS {
            return super::convert::box_value(&Value::Big(std::sync::Arc::new(self.to_bigint())));
        }
        let c = super::with(|h| h.alloc(1 + self.len));
        // SAFETY: a fresh cell of 1 + len words, written whole here.
        unsafe {
            for (k, &l) in self.limbs().iter().enumerate() {
                cell::set_raw_at(c, 8 * (1 + k), l);
            }
            cell::set_meta(c, LIMBS | ((self.len as u64) << LEN_SHIFT) | (self.neg * NEG));
        }
        // SAFETY: the cell was just written whole.
        unsafe { Word::of_cell(c) }
    }

    /// The number in limb cell `c`.
    ///
    /// # Safety
    /// `c` is a live limb cell.
    pub unsafe fn of_cell(c: Cell) -> Num {
        // SAFETY: the caller's contract: a limb cell has `len` limbs.
        unsafe {
            let m = cell::meta(c);
            let len = ((m >> LEN_SHIFT) & 0xff) as usize;
            let mut n = Num { neg: (m & NEG != 0) as u64, len, mag: [0; SCRATCH] };
            for k in 0..len {
                n.mag[k] = cell::raw_at(c, 8 * (1 + k));
            }
            n
        }
    }

    /// The number word `w` holds, if it is an integer of 63 bits or a limb
    /// cell.
    ///
    /// # Safety
    /// A pointer word points at a live cell of this thread's heap (as for
    /// [`super::to_value`]).
    #[inline]
    pub unsafe fn of_word(w: Word) -> Option<Num> {
        if word::is_int(w) {
            return Some(Num::from_i64(word::untag_int(w)));
        }
        // SAFETY: the caller's contract: a pointer word points at a live cell.
        (word::is_pointer(w) && unsafe { cell::kind(w.cell()) } == LIMBS).then(|| unsafe { Num::of_cell(w.cell()) })
    }
}

/// Whether limb cell `c` is well formed: its count within its cell and
/// [`MAX_LIMBS`], its top limb non-zero, its value not a 63-bit integer.
///
/// # Safety
/// `c` is a live cell of kind [`LIMBS`] in a block of `cell_words`-word cells.
pub(super) unsafe fn check_cell(c: Cell, cell_words: usize) -> Result<(), String> {
    // SAFETY: the caller's contract.
    let m = unsafe { cell::meta(c) };
    let len = ((m >> LEN_SHIFT) & 0xff) as usize;
    if len == 0 || len > MAX_LIMBS || 1 + len > cell_words {
        return Err(format!("limb cell {c:p} has {len} limbs in a cell of {cell_words} words"));
    }
    // SAFETY: the count was just checked against the cell's size.
    let n = unsafe { Num::of_cell(c) };
    if n.len != len {
        return Err(format!("limb cell {c:p} has a zero top limb"));
    }
    if n.to_i64().and_then(word::small).is_some() {
        return Err(format!("limb cell {c:p} holds a 63-bit integer"));
    }
    Ok(())
}

fn cmp_mag(a: &[u64], b: &[u64]) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.iter().rev().cmp(b.iter().rev()))
}

/// The remainder of magnitude `a` divided by `d` (not zero), and the
/// quotient in `q` if asked for: one 128-by-64-bit division per limb.
fn div_mag(a: &[u64], d: u64, mut q: Option<&mut [u64; SCRATCH]>) -> u64 {
    let mut rem = 0u64;
    for k in (0..a.len()).rev() {
        let (qk, r) = div_wide(rem, a[k], d);
        if let Some(q) = q.as_deref_mut() {
            q[k] = qk;
        }
        rem = r;
    }
    rem
}

/// `(hi * 2^64 + lo) / d` and its remainder, where `hi < d` (so the
/// quotient fits 64 bits): one `div` instruction on x86-64, where Rust's
/// `u128 / u128` would be a library call.
#[inline(always)]
fn div_wide(hi: u64, lo: u64, d: u64) -> (u64, u64) {
    debug_assert!(hi < d);
    #[cfg(target_arch = "x86_64")]
    {
        let (q, r): (u64, u64);
        // SAFETY: `div` divides rdx:rax by `d`; it traps only when `d` is
        // zero or the quotient overflows 64 bits, which `hi < d` rules out.
        unsafe {
            std::arch::asm!("div {d}", d = in(reg) d, inout("rax") lo => q, inout("rdx") hi => r,
                options(pure, nomem, nostack));
        }
        (q, r)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let t = (hi as u128) << 64 | lo as u128;
        ((t / d as u128) as u64, (t % d as u128) as u64)
    }
}

/// `r`'s first MAX_LIMBS limbs set to `a op b` limb by limb, the carry
/// (or borrow) of each limb fed into the next through `op` (an
/// `overflowing_add` or `overflowing_sub`); the carry out of the last.
#[inline(always)]
fn limbwise(a: &Num, b: &Num, r: &mut Num, op: fn(u64, u64) -> (u64, bool)) -> bool {
    let mut carry = false;
    for k in 0..MAX_LIMBS {
        let (s, c1) = op(a.mag[k], b.mag[k]);
        let (s, c2) = op(s, carry as u64);
        r.mag[k] = s;
        carry = c1 | c2;
    }
    carry
}

/// The word of the integer with sign `neg` and magnitude `m`.
#[inline]
fn limb_word(neg: bool, m: u64) -> Word {
    let i = if neg { 0i64.checked_sub_unsigned(m) } else { i64::try_from(m).ok() };
    match i.and_then(word::small) {
        Some(w) => w,
        None => Num::from_limbs(neg, &[m]).to_word(),
    }
}

/// The fast path of operation `op` on words `a` (and `b` for two-operand
/// operations) when they are integers of 63 bits or limb cells: the
/// result's word, or `None` when the generic path must run.
///
/// # Safety
/// As for [`Num::of_word`], for `a` and (with two operands) `b`.
#[inline]
pub unsafe fn op_words(op: Op, nargs: u64, a: Word, b: Word) -> Option<Word> {
    use Op::*;
    // Operations on other kinds (`same`, `readlist`, `len`) return before
    // their operands are read as numbers.
    if !(op.takes_integers() || matches!(op, Eq | Ne)) {
        return None;
    }
    // SAFETY: the caller's contract.
    let x = unsafe { Num::of_word(a) }?;
    if nargs == 1 {
        return (op == Neg).then(|| x.negated().to_word());
    }
    // SAFETY: the caller's contract.
    let y = unsafe { Num::of_word(b) }?;
    let truth = |t: bool| if t { word::ONE } else { word::ZERO };
    let r = match op {
        Op::Add => x.add(&y),
        Op::Sub => x.sub(&y),
        Op::Mul => x.mul(&y),
        Op::Div => x.div_floor(&y)?,
        Op::Mod => {
            let (neg, r) = x.mod_floor(&y)?;
            return Some(limb_word(neg, r));
        }
        _ => return Some(truth(op.condition()?.holds(x.cmp(&y)))),
    };
    Some(r.to_word())
}

#[cfg(test)]
mod tests {
    use num_bigint::BigInt;

    use super::*;
    use crate::heap::{to_value, to_word};

    /// Integers around every boundary the representation has (63 bits,
    /// 64, one limb, two, four, past four), and some of no particular
    /// shape.
    fn samples() -> Vec<BigInt> {
        let mut out = Vec::new();
        for bits in [0u32, 1, 31, 32, 61, 62, 63, 64, 65, 127, 128, 129, 191, 192, 255, 256, 257, 300] {
            let p = BigInt::from(1) << bits;
            for d in [-1i64, 0, 1] {
                out.push(&p + d);
                out.push(-(&p + d));
            }
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..24 {
            let mut n = BigInt::from(0);
            let limbs = (x % 5) as usize;
            for _ in 0..limbs {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                n = (n << 64) + x;
            }
            out.push(if x & 1 == 0 { n } else { -n });
        }
        out.push(BigInt::from(1_000_003));
        out.push(BigInt::from(-7));
        out
    }

    fn value(b: &BigInt) -> Value {
        Value::from_big(b.clone())
    }

    /// The value of a word `to_word` or the arithmetic just made.
    fn read(w: crate::heap::word::Word) -> Result<Value, crate::Symbol> {
        // SAFETY: `w` is an immediate or a cell made in this test, and no
        // collection ran since.
        unsafe { to_value(w) }
    }

    #[test]
    fn words_of_integers_are_canonical_and_read_back() {
        for b in samples() {
            let w = to_word(&value(&b));
            assert_eq!(read(w).ok(), Some(value(&b)), "{b}");
            let bits = b.magnitude().bits();
            let is_small = bits < 63 || b == -(BigInt::from(1) << 62u32);
            // SAFETY: a pointer word `to_word` just made points at a live cell.
            let kind = word::is_pointer(w).then(|| unsafe { cell::kind(w.cell()) });
            match kind {
                None => assert!(is_small && word::is_int(w), "{b} is a tagged word"),
                Some(k) if bits <= 64 * MAX_LIMBS as u64 => {
                    assert!(!is_small && k == LIMBS, "{b} is a limb cell");
                    // SAFETY: a fresh limb cell in a block of its size.
                    unsafe { check_cell(w.cell(), 1 + b.magnitude().iter_u64_digits().len()) }.unwrap();
                }
                Some(k) => assert_eq!(k, cell::BOXED_KIND, "{b} is boxed"),
            }
        }
    }

    /// Every operation on words agrees with the generic path on values
    /// (what the interpreters run), or declines.
    #[test]
    fn the_fast_path_agrees_with_the_generic_one() {
        let samples = samples();
        let ops = [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Mod, Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge];
        let mut fast = 0;
        for a in &samples {
            let wa = to_word(&value(a));
            // SAFETY: fresh words, no collection since they were made.
            let neg = unsafe { op_words(Op::Neg, 1, wa, word::STOP) };
            if let Some(w) = neg {
                assert_eq!(read(w).ok(), Some(Op::Neg.eval1(&value(a)).unwrap()), "-{a}");
            } else {
                assert!(a.magnitude().bits() > 64 * MAX_LIMBS as u64, "-{a} declined");
            }
            for b in &samples {
                let wb = to_word(&value(b));
                for op in ops {
                    let want = op.eval2(&value(a), &value(b));
                    // SAFETY: as above.
                    match unsafe { op_words(op, 2, wa, wb) } {
                        Some(w) => {
                            fast += 1;
                            assert_eq!(read(w).ok(), want.clone().ok(), "{a} {} {b}", op.name());
                            // SAFETY: a pointer word `op_words` just made
                            // points at a live cell.
                            if word::is_pointer(w) && unsafe { cell::kind(w.cell()) } == LIMBS {
                                // SAFETY: a fresh limb cell.
                                unsafe { check_cell(w.cell(), MAX_LIMBS + 1) }.unwrap();
                            }
                        }
                        None => {
                            let big = |n: &BigInt| n.magnitude().bits() > 64 * MAX_LIMBS as u64;
                            let divides = matches!(op, Op::Div | Op::Mod);
                            let one_limb = b.magnitude().bits() > 0 && b.magnitude().bits() <= 64;
                            assert!(big(a) || big(b) || (divides && !one_limb), "{a} {} {b} declined", op.name());
                        }
                    }
                }
            }
        }
        assert!(fast > 20_000, "{fast}");
    }

    #[test]
    fn limb_cells_survive_collection_in_fields() {
        use crate::heap::{collect, Layout, Obj};
        use crate::symbol::Symbol;
        let layout = Layout::of([Symbol::intern("n")]);
        let o = Obj::new(1, Symbol::intern("box"), layout);
        let n: BigInt = BigInt::from(3) << 100;
        o.set(Symbol::intern("n"), value(&n)).unwrap();
        for _ in 0..3 {
            for k in 0..10_000u64 {
                to_word(&value(&(BigInt::from(k) << 70)));
            }
            collect();
        }
        crate::heap::with(|h| h.verify()).unwrap();
        assert_eq!(o.get(Symbol::intern("n")), Some(value(&n)));
    }
}

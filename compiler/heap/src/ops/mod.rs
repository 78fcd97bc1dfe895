//! The operation table (docs/language.md §2): one entry per operation, read by
//! every engine — the reference interpreter, the partial evaluator, the
//! tracer, the optimizers and the code generator.
//!
//! Each [`OpInfo`] states the operation's name in both syntaxes, its arity,
//! whether it is pure (no effects; may be folded, CSE'd, removed when dead),
//! whether it is commutative, and which failures it can raise
//! ([`Failure`]). [`Op::eval`] is the single definition of its semantics;
//! anything that folds constants calls it, so folding can never disagree with
//! execution.

pub mod range;

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::Zero;

use crate::value::Value;

/// How an operation is written in the readable syntax.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Readable {
    /// `x = a` — copy.
    Copy,
    /// `x = a OP b`.
    Infix(&'static str),
    /// `x = OP a` (no space: `-x`).
    Prefix(&'static str),
    /// `x = l[i]`.
    Index,
    /// `x = name(a)` — the generic call form, used for `len`.
    Call,
}

/// How much an instruction of an operation still has to check. Cleanup
/// rewrites `Generic` operations into cheaper forms once propagate has proven
/// their operands; the IR interpreter and the code generator implement each
/// form. Which forms an operation has is part of its [`OpInfo`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Form {
    /// Any operands: type checks, overflow to bignums, bounds checks.
    Generic,
    /// Operand kinds proven (integers; for `readlist` a list and an
    /// integer): no type checks, but overflow (or bounds) still checked.
    Int,
    /// Everything proven: machine-word arithmetic that cannot overflow, a
    /// list read inside the list. No checks at all.
    Word,
}

impl Form {
    /// The suffix in the IR text format: `add`, `add.int`, `add.word`.
    pub fn suffix(self) -> &'static str {
        match self {
            Form::Generic => "",
            Form::Int => ".int",
            Form::Word => ".word",
        }
    }
}

/// A way an operation can fail at run time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// An operand of the wrong kind (e.g. `add` on an atom).
    Type,
    /// `readlist` outside the list.
    Index,
    /// `div`/`mod` by zero.
    DivByZero,
}

/// What kind of operation it is: the column passes and code generators
/// ask instead of listing operations.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// `same`: its operand.
    Copy,
    /// Integer arithmetic (`add sub mul div mod neg`): integers in, an
    /// integer out, bignums on overflow.
    Arith,
    /// An ordering of two integers (`lt le gt ge`): 1 or 0.
    Ordering,
    /// Structural equality of any two values (`eq ne`): 1 or 0.
    Equality,
    /// A question to a list (`readlist len`).
    List,
}

/// The condition a comparison tests of two integers (or, for equality,
/// of two words): what code generators map to a machine condition.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Condition {
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    Equal,
    NotEqual,
}

impl Condition {
    /// Whether it holds of two operands that compare as `o`.
    #[inline]
    pub fn holds(self, o: Ordering) -> bool {
        match self {
            Condition::Less => o == Ordering::Less,
            Condition::LessEqual => o != Ordering::Greater,
            Condition::Greater => o == Ordering::Greater,
            Condition::GreaterEqual => o != Ordering::Less,
            Condition::Equal => o == Ordering::Equal,
            Condition::NotEqual => o != Ordering::Equal,
        }
    }
}

/// Static facts about one operation.
#[derive(Debug)]
pub struct OpInfo {
    pub op: Op,
    /// The name in the Prolog syntax (`add`, `readlist`).
    pub name: &'static str,
    pub arity: usize,
    pub readable: Readable,
    pub class: Class,
    /// No effects: the result depends only on the operands.
    pub pure: bool,
    pub commutative: bool,
    /// Failures the operation can raise; empty means it never fails.
    pub failures: &'static [Failure],
    /// Operand kinds it requires, for messages: e.g. "integers".
    pub operands: &'static str,
    /// The specialized forms cleanup may rewrite it to (always including
    /// `Generic`).
    pub forms: &'static [Form],
    /// The comparison that gives the same result with the operands
    /// swapped (`k < x` is `x > k`), if it is one.
    pub mirror: Option<Op>,
    /// The comparison that gives 1 exactly when this one gives 0, if it
    /// is one.
    pub negation: Option<Op>,
    /// The condition it tests, if it is a comparison.
    pub condition: Option<Condition>,
}

/// Declares the operations, one line each: the variant, then the columns
/// of its [`OpInfo`] in order. Generates [`Op`], [`Op::ALL`] and [`OPS`]:
/// adding an operation is a line here and its semantics in
/// [`Op::eval1`] or [`Op::eval2`]; every engine reads the rest from the
/// table, and code generators call the runtime for an operation they have
/// no inline path for.
macro_rules! op_table {
    ($($variant:ident: $name:literal, $arity:literal, $readable:expr, $class:ident, $pure:ident,
        $commutative:ident, [$($failure:ident),*], $operands:literal, [$($form:ident),*],
        $mirror:ident, $negation:ident, $condition:ident;)*) => {
        /// A known operation.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op {
            $($variant,)*
        }

        impl Op {
            /// Every operation, in the table's order.
            pub const ALL: &'static [Op] = &[$(Op::$variant,)*];

            /// What kind of operation it is (a match, not a load from
            /// [`OPS`]: the interpreters' fast paths ask it per operation).
            #[inline]
            pub const fn class(self) -> Class {
                match self {
                    $(Op::$variant => Class::$class,)*
                }
            }

            /// The condition it tests, if it is a comparison (a match, as
            /// [`Op::class`]).
            #[inline]
            pub const fn condition(self) -> Option<Condition> {
                match self {
                    $(Op::$variant => op_table!(@condition $condition),)*
                }
            }
        }

        /// The table, indexed by `Op as usize`.
        pub static OPS: [OpInfo; Op::ALL.len()] = [$(OpInfo {
            op: Op::$variant,
            name: $name,
            arity: $arity,
            readable: $readable,
            class: Class::$class,
            pure: op_table!(@yes $pure),
            commutative: op_table!(@yes $commutative),
            failures: &[$(Failure::$failure),*],
            operands: $operands,
            forms: &[$(Form::$form),*],
            mirror: op_table!(@op $mirror),
            negation: op_table!(@op $negation),
            condition: op_table!(@condition $condition),
        },)*];
    };
    (@yes pure) => { true };
    (@yes effects) => { false };
    (@yes commutative) => { true };
    (@yes ordered) => { false };
    (@op none) => { None };
    (@op $op:ident) => { Some(Op::$op) };
    (@condition none) => { None };
    (@condition $c:ident) => { Some(Condition::$c) };
}

// Columns: name, arity, readable syntax, class, purity, commutativity,
// failures, operand kinds (for messages), forms, mirror, negation,
// condition.
// Equality's `Word` form: one operand is an object, an atom or a small
// integer, equal only to itself, so the words compare (an object's
// identity).
#[rustfmt::skip]
op_table! {
    Same: "same", 1, Readable::Copy, Copy, pure, ordered, [], "any value", [Generic], none, none, none;
    Add: "add", 2, Readable::Infix("+"), Arith, pure, commutative, [Type], "integers", [Generic, Int, Word], none, none, none;
    Sub: "sub", 2, Readable::Infix("-"), Arith, pure, ordered, [Type], "integers", [Generic, Int, Word], none, none, none;
    Mul: "mul", 2, Readable::Infix("*"), Arith, pure, commutative, [Type], "integers", [Generic, Int, Word], none, none, none;
    Div: "div", 2, Readable::Infix("//"), Arith, pure, ordered, [Type, DivByZero], "integers", [Generic, Int, Word], none, none, none;
    Mod: "mod", 2, Readable::Infix("%"), Arith, pure, ordered, [Type, DivByZero], "integers", [Generic, Int, Word], none, none, none;
    Neg: "neg", 1, Readable::Prefix("-"), Arith, pure, ordered, [Type], "an integer", [Generic, Int, Word], none, none, none;
    Eq: "eq", 2, Readable::Infix("=="), Equality, pure, commutative, [], "any values", [Generic, Word], Eq, Ne, Equal;
    Ne: "ne", 2, Readable::Infix("!="), Equality, pure, commutative, [], "any values", [Generic, Word], Ne, Eq, NotEqual;
    Lt: "lt", 2, Readable::Infix("<"), Ordering, pure, ordered, [Type], "integers", [Generic, Int, Word], Gt, Ge, Less;
    Le: "le", 2, Readable::Infix("<="), Ordering, pure, ordered, [Type], "integers", [Generic, Int, Word], Ge, Gt, LessEqual;
    Gt: "gt", 2, Readable::Infix(">"), Ordering, pure, ordered, [Type], "integers", [Generic, Int, Word], Lt, Le, Greater;
    Ge: "ge", 2, Readable::Infix(">="), Ordering, pure, ordered, [Type], "integers", [Generic, Int, Word], Le, Lt, GreaterEqual;
    ReadList: "readlist", 2, Readable::Index, List, pure, ordered, [Type, Index], "a list and an integer", [Generic, Int, Word], none, none, none;
    Len: "len", 1, Readable::Call, List, pure, ordered, [Type], "a list", [Generic, Word], none, none, none;
}

/// Why an operation failed. The interpreter adds the location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpError {
    /// `op` needs `expected` but got `got`.
    Type {
        op: Op,
        expected: &'static str,
        got: Value,
    },
    Index {
        index: Value,
        len: usize,
    },
    DivByZero {
        op: Op,
    },
}

impl Op {
    /// Whether it compares its two operands, giving 1 or 0.
    pub fn is_comparison(self) -> bool {
        matches!(self.class(), Class::Ordering | Class::Equality)
    }

    /// Whether it orders two integers (`lt le gt ge`).
    pub fn is_ordering(self) -> bool {
        self.class() == Class::Ordering
    }

    /// Whether it is integer arithmetic (`add sub mul div mod neg`).
    pub fn is_arithmetic(self) -> bool {
        self.class() == Class::Arith
    }

    /// Whether its operands must be integers: arithmetic and orderings (its
    /// `Int` form then proves them all; `readlist` and `len` take lists).
    pub fn takes_integers(self) -> bool {
        matches!(self.class(), Class::Arith | Class::Ordering)
    }

    /// The comparison that compares the operands swapped: `k OP x` is
    /// `x OP.mirrored() k`. Other operations are their own mirror.
    pub fn mirrored(self) -> Op {
        self.info().mirror.unwrap_or(self)
    }

    /// The comparison that holds exactly when this one gives 0, if any.
    pub fn negated(self) -> Option<Op> {
        self.info().negation
    }

    pub fn info(self) -> &'static OpInfo {
        &OPS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn arity(self) -> usize {
        self.info().arity
    }

    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// The operation written `sym` infix in the readable syntax.
    pub fn from_infix(sym: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| matches!(op.info().readable, Readable::Infix(s) if s == sym))
    }

    /// Applies a one-operand operation.
    pub fn eval1(self, a: &Value) -> Result<Value, OpError> {
        match self {
            Op::Same => Ok(a.clone()),
            Op::Neg => match a {
                Value::Int(i) => Ok(match i.checked_neg() {
                    Some(r) => Value::Int(r),
                    None => Value::from_big(-BigInt::from(*i)),
                }),
                Value::Big(b) => Ok(Value::from_big(-(**b).clone())),
                _ => Err(self.type_error(a)),
            },
            Op::Len => match a {
                Value::List(items) => Ok(Value::Int(items.len() as i64)),
                _ => Err(self.type_error(a)),
            },
            _ => unreachable!("eval1 on binary op {self:?}"),
        }
    }

    /// Applies a two-operand operation.
    pub fn eval2(self, a: &Value, b: &Value) -> Result<Value, OpError> {
        match self {
            Op::Eq => Ok(Value::Int((a == b) as i64)),
            Op::Ne => Ok(Value::Int((a != b) as i64)),
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Mod => self.arith(a, b),
            op if op.is_ordering() => {
                let ord = self.compare(a, b)?;
                Ok(Value::Int(op.condition().is_some_and(|c| c.holds(ord)) as i64))
            }
            Op::ReadList => match (a, b) {
                (Value::List(items), Value::Int(i)) => usize::try_from(*i)
                    .ok()
                    .and_then(|i| items.get(i))
                    .cloned()
                    .ok_or_else(|| OpError::Index { index: b.clone(), len: items.len() }),
                (Value::List(items), Value::Big(_)) => Err(OpError::Index { index: b.clone(), len: items.len() }),
                (Value::List(_), _) => Err(self.type_error(b)),
                _ => Err(self.type_error(a)),
            },
            _ => unreachable!("eval2 on unary op {self:?}"),
        }
    }

    /// Applies the operation to `args` (its arity is checked by the caller).
    pub fn eval(self, args: &[Value]) -> Result<Value, OpError> {
        match args {
            [a] => self.eval1(a),
            [a, b] => self.eval2(a, b),
            _ => unreachable!("{} takes {} operands", self.name(), self.arity()),
        }
    }

    /// Whether `v` may be operand `k` of this operation in `form`: what the
    /// form promises of each operand on its own. `Generic` admits anything;
    /// `Int` admits the operand kinds the operation takes (integers; for
    /// `readlist` a list and an integer); `Word` admits only words
    /// ([`range::is_word`]) where integers are taken (for `readlist` a
    /// non-negative word index). The IR checker applies it to constant
    /// operands.
    pub fn form_admits_operand(self, form: Form, k: usize, v: &Value) -> bool {
        let integer = |v: &Value| match form {
            Form::Word => range::is_word(v),
            _ => v.is_int(),
        };
        match (form, self, k) {
            (Form::Generic, _, _) => true,
            (_, Op::ReadList, 0) | (_, Op::Len, 0) => matches!(v, Value::List(_)),
            (Form::Word, Op::ReadList, 1) => matches!(v, Value::Int(i) if *i >= 0) && range::is_word(v),
            (_, Op::Same | Op::Eq | Op::Ne, _) => true,
            _ => integer(v),
        }
    }

    /// Whether `args` meet every promise `form` makes: each operand
    /// admitted ([`Op::form_admits_operand`]), and for `Word` an operation
    /// that cannot fail or overflow — its result is a word, the index is
    /// inside the list, the divisor is not zero, an equality has an atom,
    /// an object or a small integer among its operands. What the IR interpreter
    /// checks at run time and the IR checker of all-constant operands.
    pub fn form_admits(self, form: Form, args: &[Value]) -> bool {
        if args.len() != self.arity() || !self.info().forms.contains(&form) {
            return false;
        }
        if !args.iter().enumerate().all(|(k, v)| self.form_admits_operand(form, k, v)) {
            return false;
        }
        match (form, self, args) {
            (Form::Word, Op::ReadList, [Value::List(l), Value::Int(i)]) => (*i as usize) < l.len(),
            (Form::Word, Op::Len, _) => true,
            // Compared by their words: one is equal only to itself.
            (Form::Word, Op::Eq | Op::Ne, args) => {
                args.iter().any(|v| matches!(v, Value::Atom(_) | Value::Object(_)) || range::is_word(v))
            }
            (Form::Word, _, args) => self.eval(args).is_ok_and(|r| range::is_word(&r)),
            _ => true,
        }
    }

    /// A two-operand operation on two `i64`s, when its result is an `i64`
    /// too: `None` on overflow, a zero divisor, or an operation that does
    /// not take integers. The interpreters' fast path, before [`Op::eval2`].
    #[inline]
    pub fn eval_ints(self, x: i64, y: i64) -> Option<i64> {
        match self {
            Op::Add => x.checked_add(y),
            Op::Sub => x.checked_sub(y),
            Op::Mul => x.checked_mul(y),
            // A zero divisor, and MIN / -1 (whose quotient overflows, and
            // whose remainder Rust computes by the same overflowing division).
            Op::Div | Op::Mod if y == 0 || (x == i64::MIN && y == -1) => None,
            Op::Div => Some(Integer::div_floor(&x, &y)),
            Op::Mod => Some(Integer::mod_floor(&x, &y)),
            _ => Some(self.condition()?.holds(x.cmp(&y)) as i64),
        }
    }

    fn type_error(self, got: &Value) -> OpError {
        OpError::Type { op: self, expected: self.info().operands, got: got.clone() }
    }

    fn check_ints(self, a: &Value, b: &Value) -> Result<(), OpError> {
        if !a.is_int() {
            return Err(self.type_error(a));
        }
        if !b.is_int() {
            return Err(self.type_error(b));
        }
        Ok(())
    }

    fn compare(self, a: &Value, b: &Value) -> Result<Ordering, OpError> {
        self.check_ints(a, b)?;
        Ok(match (a, b) {
            (Value::Int(x), Value::Int(y)) => x.cmp(y),
            _ => a.to_bigint().unwrap().cmp(&b.to_bigint().unwrap()),
        })
    }

    fn arith(self, a: &Value, b: &Value) -> Result<Value, OpError> {
        self.check_ints(a, b)?;
        if let (Value::Int(x), Value::Int(y)) = (a, b) {
            if let Some(r) = self.eval_ints(*x, *y) {
                return Ok(Value::Int(r));
            }
        }
        let (x, y) = (a.to_bigint().unwrap(), b.to_bigint().unwrap());
        let r = match self {
            Op::Add => x + y,
            Op::Sub => x - y,
            Op::Mul => x * y,
            Op::Div | Op::Mod if y.is_zero() => return Err(OpError::DivByZero { op: self }),
            Op::Div => x.div_floor(&y),
            Op::Mod => x.mod_floor(&y),
            _ => unreachable!(),
        };
        Ok(Value::from_big(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Value {
        Value::Int(i)
    }

    #[test]
    fn the_integer_fast_path_agrees_with_eval2() {
        let edges = [i64::MIN, i64::MIN + 1, -7, -1, 0, 1, 3, 7, i64::MAX - 1, i64::MAX];
        for op in Op::ALL.iter().copied().filter(|op| op.arity() == 2) {
            for x in edges {
                for y in edges {
                    if let Some(r) = op.eval_ints(x, y) {
                        assert_eq!(op.eval2(&int(x), &int(y)), Ok(int(r)), "{op:?} {x} {y}");
                    } else if op != Op::ReadList && (op, x, y) != (Op::Mod, i64::MIN, -1) {
                        // Only overflow and zero divisors leave the fast path
                        // (and MIN % -1, whose remainder overflows in Rust).
                        let slow = op.eval2(&int(x), &int(y));
                        assert!(!matches!(slow, Ok(Value::Int(_))), "{op:?} {x} {y}: {slow:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn table_is_indexed_by_op() {
        for (i, info) in OPS.iter().enumerate() {
            assert_eq!(info.op as usize, i);
            assert_eq!(Op::from_name(info.name), Some(info.op));
        }
    }

    #[test]
    fn mirrors_and_negations_in_the_table_agree_with_eval() {
        let values = [int(-3), int(0), int(2), int(2), Value::atom("a")];
        for op in Op::ALL.iter().copied().filter(|op| op.is_comparison()) {
            assert!(op.condition().is_some(), "{op:?} tests a condition");
            for a in &values {
                for b in &values {
                    let r = op.eval2(a, b);
                    // (An error names the operation: only that both fail.)
                    assert_eq!(op.mirrored().eval2(b, a).ok(), r.clone().ok(), "{op:?} mirrored on {a:?} {b:?}");
                    let negated = op.negated().expect("a comparison has a negation").eval2(a, b);
                    match r {
                        Ok(r) => assert_eq!(negated, Ok(int((r == int(0)) as i64)), "{op:?} negated"),
                        Err(_) => assert!(negated.is_err()),
                    }
                }
            }
        }
        for op in Op::ALL.iter().copied().filter(|op| !op.is_comparison()) {
            assert_eq!((op.condition(), op.negated()), (None, None), "{op:?}");
        }
    }

    #[test]
    fn arithmetic_overflows_into_bignums() {
        let r = Op::Mul.eval2(&int(i64::MAX), &int(2)).unwrap();
        assert_eq!(r.to_print_string(), "18446744073709551614");
        let back = Op::Sub.eval2(&r, &int(i64::MAX)).unwrap();
        assert_eq!(back, int(i64::MAX));
        assert!(matches!(back, Value::Int(_)));
    }

    #[test]
    fn floor_division_follows_divisor_sign() {
        assert_eq!(Op::Div.eval2(&int(-7), &int(2)).unwrap(), int(-4));
        assert_eq!(Op::Mod.eval2(&int(-7), &int(2)).unwrap(), int(1));
        assert_eq!(Op::Mod.eval2(&int(7), &int(-2)).unwrap(), int(-1));
        assert_eq!(Op::Div.eval2(&int(i64::MIN), &int(-1)).unwrap().to_print_string(), "9223372036854775808");
        assert_eq!(Op::Div.eval2(&int(1), &int(0)), Err(OpError::DivByZero { op: Op::Div }));
    }

    #[test]
    fn comparisons_need_integers() {
        assert_eq!(Op::Ge.eval2(&int(3), &int(3)).unwrap(), int(1));
        let err = Op::Ge.eval2(&Value::atom("a"), &int(3)).unwrap_err();
        assert!(matches!(err, OpError::Type { op: Op::Ge, .. }));
        assert_eq!(Op::Eq.eval2(&Value::atom("a"), &int(3)).unwrap(), int(0));
    }

    #[test]
    fn readlist_checks_bounds() {
        let l = Value::list(vec![Value::atom("a"), int(2)]);
        assert_eq!(Op::ReadList.eval2(&l, &int(1)).unwrap(), int(2));
        assert!(matches!(Op::ReadList.eval2(&l, &int(2)), Err(OpError::Index { len: 2, .. })));
        assert!(matches!(Op::ReadList.eval2(&l, &int(-1)), Err(OpError::Index { .. })));
        assert_eq!(Op::Len.eval1(&l).unwrap(), int(2));
    }
}

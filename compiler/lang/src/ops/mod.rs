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

/// A known operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Same,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Neg,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    ReadList,
    Len,
}

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

/// Static facts about one operation.
#[derive(Debug)]
pub struct OpInfo {
    pub op: Op,
    /// The name in the Prolog syntax (`add`, `readlist`).
    pub name: &'static str,
    pub arity: usize,
    pub readable: Readable,
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
}

use Failure::*;

/// The table, indexed by `Op as usize`.
pub static OPS: [OpInfo; 15] = [
    OpInfo {
        op: Op::Same,
        name: "same",
        arity: 1,
        readable: Readable::Copy,
        pure: true,
        commutative: false,
        failures: &[],
        operands: "any value",
        forms: &[Form::Generic],
    },
    OpInfo {
        op: Op::Add,
        name: "add",
        arity: 2,
        readable: Readable::Infix("+"),
        pure: true,
        commutative: true,
        failures: &[Type],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Sub,
        name: "sub",
        arity: 2,
        readable: Readable::Infix("-"),
        pure: true,
        commutative: false,
        failures: &[Type],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Mul,
        name: "mul",
        arity: 2,
        readable: Readable::Infix("*"),
        pure: true,
        commutative: true,
        failures: &[Type],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Div,
        name: "div",
        arity: 2,
        readable: Readable::Infix("//"),
        pure: true,
        commutative: false,
        failures: &[Type, DivByZero],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Mod,
        name: "mod",
        arity: 2,
        readable: Readable::Infix("%"),
        pure: true,
        commutative: false,
        failures: &[Type, DivByZero],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Neg,
        name: "neg",
        arity: 1,
        readable: Readable::Prefix("-"),
        pure: true,
        commutative: false,
        failures: &[Type],
        operands: "an integer",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Eq,
        name: "eq",
        arity: 2,
        readable: Readable::Infix("=="),
        pure: true,
        commutative: true,
        failures: &[],
        operands: "any values",
        // `.word`: one operand is an object, an atom or a small integer,
        // equal only to itself: the words compare (an object's identity).
        forms: &[Form::Generic, Form::Word],
    },
    OpInfo {
        op: Op::Ne,
        name: "ne",
        arity: 2,
        readable: Readable::Infix("!="),
        pure: true,
        commutative: true,
        failures: &[],
        operands: "any values",
        // `.word`: one operand is an object, an atom or a small integer,
        // equal only to itself: the words compare (an object's identity).
        forms: &[Form::Generic, Form::Word],
    },
    OpInfo {
        op: Op::Lt,
        name: "lt",
        arity: 2,
        readable: Readable::Infix("<"),
        pure: true,
        commutative: false,
        failures: &[Type],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Le,
        name: "le",
        arity: 2,
        readable: Readable::Infix("<="),
        pure: true,
        commutative: false,
        failures: &[Type],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Gt,
        name: "gt",
        arity: 2,
        readable: Readable::Infix(">"),
        pure: true,
        commutative: false,
        failures: &[Type],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Ge,
        name: "ge",
        arity: 2,
        readable: Readable::Infix(">="),
        pure: true,
        commutative: false,
        failures: &[Type],
        operands: "integers",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::ReadList,
        name: "readlist",
        arity: 2,
        readable: Readable::Index,
        pure: true,
        commutative: false,
        failures: &[Type, Index],
        operands: "a list and an integer",
        forms: &[Form::Generic, Form::Int, Form::Word],
    },
    OpInfo {
        op: Op::Len,
        name: "len",
        arity: 1,
        readable: Readable::Call,
        pure: true,
        commutative: false,
        failures: &[Type],
        operands: "a list",
        forms: &[Form::Generic, Form::Word],
    },
];

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
        matches!(self, Op::Eq | Op::Ne) || self.is_ordering()
    }

    /// Whether it orders two integers (`lt le gt ge`).
    pub fn is_ordering(self) -> bool {
        matches!(self, Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    /// Whether its operands must be integers: arithmetic and orderings (its
    /// `Int` form then proves them all; `readlist` and `len` take lists).
    pub fn takes_integers(self) -> bool {
        matches!(self, Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Mod | Op::Neg) || self.is_ordering()
    }

    /// The ordering that compares the operands swapped: `k OP x` is
    /// `x OP.mirrored() k`. Other operations are their own mirror.
    pub fn mirrored(self) -> Op {
        match self {
            Op::Lt => Op::Gt,
            Op::Le => Op::Ge,
            Op::Gt => Op::Lt,
            Op::Ge => Op::Le,
            op => op,
        }
    }

    /// The comparison that holds exactly when this one gives 0, if any.
    pub fn negated(self) -> Option<Op> {
        Some(match self {
            Op::Lt => Op::Ge,
            Op::Le => Op::Gt,
            Op::Gt => Op::Le,
            Op::Ge => Op::Lt,
            Op::Eq => Op::Ne,
            Op::Ne => Op::Eq,
            _ => return None,
        })
    }

    pub const ALL: [Op; 15] = [
        Op::Same,
        Op::Add,
        Op::Sub,
        Op::Mul,
        Op::Div,
        Op::Mod,
        Op::Neg,
        Op::Eq,
        Op::Ne,
        Op::Lt,
        Op::Le,
        Op::Gt,
        Op::Ge,
        Op::ReadList,
        Op::Len,
    ];

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
                let r = match self {
                    Op::Lt => ord == Ordering::Less,
                    Op::Le => ord != Ordering::Greater,
                    Op::Gt => ord == Ordering::Greater,
                    _ => ord != Ordering::Less,
                };
                Ok(Value::Int(r as i64))
            }
            Op::ReadList => match (a, b) {
                (Value::List(items), Value::Int(i)) => usize::try_from(*i)
                    .ok()
                    .and_then(|i| items.get(i))
                    .cloned()
                    .ok_or(OpError::Index { index: b.clone(), len: items.len() }),
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
            Op::Lt => Some((x < y) as i64),
            Op::Le => Some((x <= y) as i64),
            Op::Gt => Some((x > y) as i64),
            Op::Ge => Some((x >= y) as i64),
            Op::Eq => Some((x == y) as i64),
            Op::Ne => Some((x != y) as i64),
            _ => None,
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

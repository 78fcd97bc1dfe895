//! Run-time errors (docs/language.md §6): what went wrong ([`ErrorKind`]) and
//! where ([`Location`]: function, block, statement).
//!
//! Every kind has a Prolog-term name ([`ErrorKind::term`]) — `key_not_found(x)`
//! and `missing_op(foo)` as in the series — which differential tests compare
//! across engines: two engines agree on an error when the terms are equal.

use std::fmt;

use crate::ops::{Op, OpError};
use crate::symbol::Symbol;
use crate::value::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Reading a variable that has no value (`key_not_found(x)`).
    Unbound(Symbol),
    UnknownLabel(Symbol),
    UnknownFunction(Symbol),
    /// An operation the op table does not have, or used with the wrong
    /// number of operands (`missing_op(foo)`).
    MissingOp(Symbol),
    /// An operand of the wrong kind: `what` needs `expected`, got `got`.
    Type {
        what: &'static str,
        expected: &'static str,
        got: Value,
    },
    IndexOutOfRange {
        index: Value,
        len: usize,
    },
    DivisionByZero {
        op: Op,
    },
    UnsetField {
        class: Symbol,
        field: Symbol,
    },
    ImmutableField {
        class: Symbol,
        field: Symbol,
    },
    ArgumentCount {
        func: Symbol,
        expected: usize,
        got: usize,
    },
    /// The program's own `error(Reason)`.
    User(Symbol),
    FuelExhausted {
        fuel: u64,
    },
    StackOverflow {
        depth: usize,
    },
    ReturnOutsideFunction,
}

impl ErrorKind {
    pub fn from_op(e: OpError) -> ErrorKind {
        match e {
            OpError::Type { op, expected, got } => ErrorKind::Type { what: op.name(), expected, got },
            OpError::Index { index, len } => ErrorKind::IndexOutOfRange { index, len },
            OpError::DivByZero { op } => ErrorKind::DivisionByZero { op },
        }
    }

    /// The error as a Prolog term, the same for every engine.
    pub fn term(&self) -> String {
        match self {
            ErrorKind::Unbound(v) => format!("key_not_found({v})"),
            ErrorKind::UnknownLabel(l) => format!("unknown_label({l})"),
            ErrorKind::UnknownFunction(f) => format!("unknown_function({f})"),
            ErrorKind::MissingOp(op) => format!("missing_op({op})"),
            ErrorKind::Type { what, expected, .. } => format!("type_error({what}, {})", expected.replace(' ', "_")),
            ErrorKind::IndexOutOfRange { .. } => "index_out_of_range".into(),
            ErrorKind::DivisionByZero { .. } => "division_by_zero".into(),
            ErrorKind::UnsetField { class, field } => format!("unset_field({class}, {field})"),
            ErrorKind::ImmutableField { class, field } => format!("immutable_field({class}, {field})"),
            ErrorKind::ArgumentCount { func, .. } => format!("argument_count({func})"),
            ErrorKind::User(r) => format!("error({r})"),
            ErrorKind::FuelExhausted { .. } => "fuel_exhausted".into(),
            ErrorKind::StackOverflow { .. } => "stack_overflow".into(),
            ErrorKind::ReturnOutsideFunction => "return_outside_function".into(),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Unbound(v) => write!(f, "unbound variable `{v}`"),
            ErrorKind::UnknownLabel(l) => write!(f, "unknown label `{l}`"),
            ErrorKind::UnknownFunction(func) => write!(f, "unknown function `{func}`"),
            ErrorKind::MissingOp(op) => write!(f, "unknown operation `{op}`"),
            ErrorKind::Type { what, expected, got } => {
                write!(f, "type error: `{what}` needs {expected}, got {} {got}", got.kind_name())
            }
            ErrorKind::IndexOutOfRange { index, len } => {
                write!(f, "index {index} out of range for a list of length {len}")
            }
            ErrorKind::DivisionByZero { op } => write!(f, "division by zero in `{}`", op.name()),
            ErrorKind::UnsetField { class, field } => write!(f, "field `{field}` of a `{class}` object is not set"),
            ErrorKind::ImmutableField { class, field } => {
                write!(f, "field `{field}` of a `{class}` object is immutable and already set")
            }
            ErrorKind::ArgumentCount { func, expected, got } => {
                write!(f, "function `{func}` takes {expected} argument(s), called with {got}")
            }
            ErrorKind::User(r) => write!(f, "the program raised error `{r}`"),
            ErrorKind::FuelExhausted { fuel } => write!(f, "out of fuel after {fuel} statements (raise --fuel)"),
            ErrorKind::StackOverflow { depth } => write!(f, "stack depth exceeded ({depth} nested calls)"),
            ErrorKind::ReturnOutsideFunction => write!(f, "`return` outside a function"),
        }
    }
}

/// Where an error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The function, or `None` for the main flow graph.
    pub function: Option<Symbol>,
    pub block: Symbol,
    /// 1-based statement number; one past the last statement is the terminator.
    pub statement: usize,
    /// Whether `statement` is the block's terminator.
    pub is_terminator: bool,
    /// The statement in the readable syntax.
    pub text: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(func) = self.function {
            write!(f, "function `{func}`, ")?;
        }
        write!(f, "block `{}`, ", self.block)?;
        if self.is_terminator {
            write!(f, "terminator")?;
        } else {
            write!(f, "statement {}", self.statement)?;
        }
        if self.text.is_empty() {
            Ok(())
        } else {
            write!(f, ": {}", self.text)
        }
    }
}

/// A run-time error with its place (absent for errors before the first
/// block, such as an unknown entry label).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeError {
    pub kind: ErrorKind,
    pub at: Option<Location>,
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "runtime error: {} [{}]", self.kind, self.kind.term())?;
        if let Some(at) = &self.at {
            write!(f, "\n  at {at}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RuntimeError {}

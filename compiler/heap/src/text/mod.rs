//! The text form of values: the term reader of the Prolog syntax
//! ([`term`]), its errors ([`diag`]), integer literals, and environment
//! lists (`[x/10, y/foo]`), which `flowc run --env`, built executables'
//! `--env` and the constants of built code are written in. The program
//! syntaxes (flowc-lang's `syntax`) read their terms with it.

pub mod diag;
mod fast_env;
pub mod term;

use crate::symbol::Symbol;
use crate::value::Value;
use diag::{ParseError, RawError};
use term::{Reader, Term, TermKind};

/// The most digits an integer literal may have. Decimal-to-binary
/// conversion of a big integer takes time quadratic in its digits (a
/// generated literal of megabytes took most of a minute); no program needs
/// a literal this long, and a computed bignum has no such limit.
pub const MAX_INT_DIGITS: usize = 10_000;

/// An integer literal (an optional `-`, then digits) starting at `start`,
/// in both syntaxes and the IR text: its canonical value (`Int` when it
/// fits). Literals of up to 18 digits, which always fit, are read as
/// machine integers, not through a big integer: an interpreter's program
/// given as an environment list is thousands of them, read before the
/// run starts.
pub fn parse_int(text: &str, start: usize) -> Result<Value, RawError> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if let Some(v) = machine_int(digits.as_bytes(), digits.len() < text.len()) {
        return Ok(v);
    }
    if digits.len() > MAX_INT_DIGITS {
        return Err(RawError::new(
            start,
            format!("an integer literal of {} digits: at most {MAX_INT_DIGITS} are supported", digits.len()),
        ));
    }
    let big: num_bigint::BigInt = text.parse().map_err(|_| RawError::new(start, "malformed number"))?;
    Ok(Value::from_big(big))
}

/// The integer `digits` (ASCII digits, negated if `negative`) as a machine
/// integer, if there are 1 to 18 of them (which always fit); else `None`.
/// [`parse_int`]'s path for all but long literals, and
/// [`fast_env`]'s.
fn machine_int(digits: &[u8], negative: bool) -> Option<Value> {
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits.iter().fold(0i64, |n, b| n * 10 + i64::from(b - b'0'));
    Some(Value::Int(if negative { -n } else { n }))
}

/// Parses an environment list `[x/10, y/foo]` (the `--env` syntax).
pub fn parse_env(src: &str) -> Result<Vec<(Symbol, Value)>, ParseError> {
    parse_env_of("--env", src)
}

/// [`parse_env`] for the command-line option `option` (`--static`, ...),
/// which errors name as their place.
///
/// The common shape (integers and lists of them) is read a byte at a time
/// ([`fast_env`]); anything else by the term reader.
pub fn parse_env_of(option: &str, src: &str) -> Result<Vec<(Symbol, Value)>, ParseError> {
    if let Some(env) = fast_env::read(src) {
        return Ok(env);
    }
    Reader::new(src).whole_term().and_then(|t| env_list(&t)).map_err(|e| e.locate(option, src))
}

/// An error at term `t`.
pub fn term_error(t: &Term, msg: impl Into<String>) -> RawError {
    RawError::new(t.pos, msg)
}

/// The arguments of `t` if it is the compound `name` of `n` arguments.
pub fn compound_args<'t>(t: &'t Term, name: &str, n: usize) -> Option<&'t [Term]> {
    match &t.kind {
        TermKind::Compound(f, a) if f.as_str() == name && a.len() == n => Some(a),
        _ => None,
    }
}

/// The atom `t` names (`what` it should be, for the error).
pub fn atom_name(t: &Term, what: &str) -> Result<Symbol, RawError> {
    match &t.kind {
        TermKind::Atom(a) => Ok(*a),
        _ => Err(term_error(t, format!("expected {what} (an atom), found {}", t.describe()))),
    }
}

/// The atoms of list `t` (`what` each should be, for the error).
pub fn atom_names(t: &Term, what: &str) -> Result<Vec<Symbol>, RawError> {
    match &t.kind {
        TermKind::List(items) => items.iter().map(|i| atom_name(i, what)).collect(),
        _ => Err(term_error(t, format!("expected a list of {what}s, found {}", t.describe()))),
    }
}

/// The value constant `t` is (an integer, an atom, a list of constants).
pub fn term_value(t: &Term) -> Result<Value, RawError> {
    t.to_value().ok_or_else(|| {
        term_error(t, format!("expected a constant (integer, atom or list of constants), found {}", t.describe()))
    })
}

/// The environment list `t` is (`[x/10, y/foo]`).
pub fn env_list(t: &Term) -> Result<Vec<(Symbol, Value)>, RawError> {
    let TermKind::List(items) = &t.kind else {
        return Err(term_error(t, format!("expected an environment list like [x/10, y/20], found {}", t.describe())));
    };
    items
        .iter()
        .map(|i| match compound_args(i, "/", 2) {
            Some([k, v]) => Ok((atom_name(k, "a variable name")?, term_value(v)?)),
            _ => Err(term_error(i, format!("expected Name/Value, found {}", i.describe()))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    /// Literals read as machine integers (up to 18 digits) and through a
    /// big integer (more) give the same canonical values: `Int` wherever
    /// the value fits, whichever way it was read.
    #[test]
    fn integer_literals_read_alike_on_both_paths() {
        use crate::value::Value;
        let big = |text: &str| Value::from_big(text.parse::<num_bigint::BigInt>().expect("digits"));
        for text in [
            "0",
            "-0",
            "007",
            "999999999999999999",
            "-999999999999999999",
            "1000000000000000000",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
        ] {
            let read = super::parse_int(text, 0).unwrap_or_else(|e| panic!("{text}: {}", e.message));
            assert_eq!(read, big(text), "{text}");
        }
        assert!(matches!(super::parse_int("-9223372036854775808", 0), Ok(Value::Int(i64::MIN))));
        assert!(matches!(super::parse_int("9223372036854775808", 0), Ok(Value::Big(_))));
        let long = "9".repeat(super::MAX_INT_DIGITS + 1);
        let e = super::parse_int(&long, 7).expect_err("too long");
        assert_eq!((e.offset, e.message.starts_with("an integer literal of 10001 digits")), (7, true));
    }
}

//! The ordered environment of docs/language.md §4: an `IndexMap` from variable to
//! value, where writing an existing variable replaces it in place and a new
//! one is appended — the order of the series' Prolog lists, which resume
//! data, partial-evaluator cache keys and printed traces make visible.

use crate::symbol::{Symbol, SymbolIndexMap};
use crate::value::Value;

/// Hashed by [`crate::symbol::SymbolHasher`]: the tracer and the trace
/// executor read and write environments per operation, and SipHash was a
/// twentieth of the JIT's recording and compiling work.
pub type Env = SymbolIndexMap<Value>;

/// Builds an environment from ordered pairs (later duplicates replace in place).
pub fn from_pairs(pairs: &[(Symbol, Value)]) -> Env {
    pairs.iter().cloned().collect()
}

/// Writes `var` as the series' `write_env` does.
pub fn write(env: &mut Env, var: Symbol, value: Value) {
    env.insert(var, value);
}

/// Removes `var` keeping the order of the rest (the series' `remove_env`).
pub fn remove(env: &mut Env, var: Symbol) {
    env.shift_remove(&var);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_in_place_and_appends_new() {
        let (x, y, z) = (Symbol::intern("x"), Symbol::intern("y"), Symbol::intern("z"));
        let mut env = from_pairs(&[(x, Value::Int(1)), (y, Value::Int(2))]);
        write(&mut env, x, Value::Int(3));
        write(&mut env, z, Value::Int(4));
        remove(&mut env, y);
        let order: Vec<String> = env.iter().map(|(k, v)| format!("{k}/{v}")).collect();
        assert_eq!(order, ["x/3", "z/4"]);
    }
}

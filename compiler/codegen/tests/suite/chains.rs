//! What the suite's tests of walks share: the function that walks a chain
//! of nodes, and reading a compiled program's code and running it.

use flowc_codegen::Native;
use flowc_lang::value::Value;
use flowc_lang::Symbol;

/// `walk(p)`: the sum of the `v` fields of the chain of `node`s from `p`
/// along `next` (0 ends it). Its `n = get.object q, next` is the last
/// instruction of the loop block, whose branch tests it: a walked link
/// tested for 0 as it is read.
pub const WALK: &str = "function walk(v0:p) {
b0 walk_entry:
    jump b1
b1 step:
    v1:q = phi [b0: v0, b1: v4]
    v2:s = phi [b0: 0, b1: v5]
    v3:h = get.object v1, v
    v5:t = add v2, v3
    v4:n = get.object v1, next
    branch v4, b1, b2
b2 done:
    return v5
}
";

/// The machine code of function `name` of `native`.
pub fn code_of<'n>(native: &'n Native, name: &str) -> &'n [u8] {
    let found = native.code().into_iter().find(|(f, _, _)| f.as_str() == name);
    found.map(|(_, _, code)| code).unwrap_or_else(|| panic!("{name} is compiled"))
}

/// `native` run with `n` bound to `n`: what it printed, or its error.
pub fn run_with_n(native: &Native, n: i64) -> Result<String, String> {
    let out = native.run(&[(Symbol::intern("n"), Value::Int(n))], 1000);
    out.map(|o| o.value.to_string()).map_err(|e| e.to_string())
}

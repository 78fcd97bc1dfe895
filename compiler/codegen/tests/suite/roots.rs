//! The roots of a function compiled whole (`lower::frame::Roots`): a value
//! that may point into the heap gets a word of the frame only if it is
//! live across an instruction — where calls, and so collections, happen.
//! An argument that dies at its call, or a value read right after it is
//! made, stays in registers.

use flowc_codegen::lower::frame::Frame;
use flowc_ir::cfg::Cfg;

#[test]
fn only_values_live_across_an_instruction_get_a_word() {
    // Recursive Fibonacci on values that may be bignums: `n` lives across
    // the first call and `a` across the second; `m` and `k` die at their
    // calls, `b` and `r` are read by the next instruction or terminator.
    let m = flowc_ir::parse::module(
        "fib",
        r#"function fib(v0:n) {
b0 start:
    v1:small = lt v0, 2
    branch v1, b1, b2
b1 base:
    return v0
b2 rec:
    v2:m = sub v0, 1
    v3:a = call fib(v2)
    v4:k = sub v0, 2
    v5:b = call fib(v4)
    v6:r = add v3, v5
    return v6
}
"#,
    )
    .unwrap();
    let f = &m.functions[0];
    let frame = Frame::new(f, &Cfg::new(f), None, |_| true);
    let with_word: Vec<String> = f
        .values
        .iter()
        .filter(|(v, _)| frame.offset(*v).is_some())
        .map(|(_, data)| data.name.map_or("?".to_string(), |n| n.to_string()))
        .collect();
    assert_eq!(with_word, ["n", "a"]);
    // n is still live where a is made (it is read after the second
    // call): two words, not one shared.
    assert_eq!(frame.words, 2);
}

//! Inline paths in hot code: an integer operation whose operands may not
//! be small integers takes one branch on its hot path (to its slow path
//! when an operand is not a small integer or the result overflowed), not
//! a tag test and an overflow test branching each. A constant list is read
//! through its table, a constant of the code.

use flowc_codegen::Native;

/// `g` adds its parameter `adds` times to a running total; main calls it
/// from a loop counted from its parameter, so `g` is hot.
fn module(adds: usize) -> String {
    let mut body = String::new();
    let mut last = 0;
    for k in 1..=adds {
        body.push_str(&format!("    v{k}:x = add v{last}, v0\n"));
        last = k;
    }
    format!(
        "function g(v0:a) {{\nb0 g_entry:\n{body}    return v{last}\n}}\n\
         main start(v0:n) {{\nb0 start:\n    jump b1\nb1 head:\n    v1:k = phi [b0: v0, b2: v4]\n    \
         v2:s = phi [b0: 0, b2: v5]\n    branch v1, b2, b3\nb2 body:\n    v3:r = call g(v1)\n    \
         v4:k = sub v1, 1\n    v5:s = add v2, v3\n    jump b1\nb3 done:\n    print v2\n}}\n"
    )
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_hot_addition_branches_once_on_its_inline_path() {
    let adds = 20;
    let text = module(adds);
    let branches = flowc_codegen::with_stack(move || {
        let m = flowc_ir::parse::module("adds", &text).unwrap();
        let native = Native::compile(&m).unwrap();
        let (_, _, code) = native.code().into_iter().find(|(name, _, _)| name.as_str() == "g").expect("g is compiled");
        let lines = flowc_codegen::disasm::instructions(code);
        lines.iter().filter(|l| l.text.starts_with('j') && !l.text.starts_with("jmp")).count()
    });
    // Each addition: one branch to its slow path, and the slow path's
    // test of the runtime's result for a stop; a few more for the entry.
    assert!(branches >= 2 * adds, "{branches} conditional branches for {adds} additions");
    assert!(branches <= 2 * adds + 4, "{branches} conditional branches for {adds} additions");
}

/// `g` reads element `v0` of a constant list in `form` (`""` or
/// `".word"`) and returns it; main calls it from a loop, so `g` is hot.
fn list_module(form: &str, list: &str) -> String {
    format!(
        "function g(v0:i) {{\nb0 g_entry:\n    v1:x = readlist{form} {list}, v0\n    return v1\n}}\n\
         main start(v0:n) {{\nb0 start:\n    jump b1\nb1 head:\n    v1:k = phi [b0: v0, b2: v4]\n    \
         v2:s = phi [b0: 0, b2: v5]\n    branch v1, b2, b3\nb2 body:\n    v6:j = mod v1, 3\n    \
         v3:r = call g(v6)\n    v4:k = sub v1, 1\n    v5:s = add v2, v3\n    jump b1\nb3 done:\n    print v2\n}}\n"
    )
}

/// The conditional branches of `g` in `text`, compiled in memory.
#[cfg(target_arch = "x86_64")]
fn branches_of_g(text: String) -> usize {
    flowc_codegen::with_stack(move || {
        let m = flowc_ir::parse::module("lists", &text).unwrap();
        let native = Native::compile(&m).unwrap();
        let (_, _, code) = native.code().into_iter().find(|(name, _, _)| name.as_str() == "g").expect("g is compiled");
        let lines = flowc_codegen::disasm::instructions(code);
        lines.iter().filter(|l| l.text.starts_with('j') && !l.text.starts_with("jmp")).count()
    })
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_constant_lists_table_is_read_directly() {
    // The list is immutable and the code's root keeps it alive: its table
    // is a constant of the code. A read proven in range of a list of
    // immediates is one load, with no branch; an unproven read tests the
    // index (a small integer, below the length) in one branch, and not
    // what the list is; a list holding a big integer tests the element too.
    let word = branches_of_g(list_module(".word", "[10, 20, 30]"));
    let int = branches_of_g(list_module("", "[10, 20, 30]"));
    let big = branches_of_g(list_module("", "[10, 20, 100000000000000000000]"));
    // (The unproven reads' second branch is the slow path's test for a
    // stop.)
    assert_eq!((word, int, big), (0, 2, 3));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_write_to_a_proven_object_of_a_bound_value_tests_nothing() {
    // `set.object`: no test of what the object is; a constant is bound:
    // no test of the value. The unproven write tests the object.
    let module = |set: &str| {
        format!(
            "function g(v0:o) {{\nb0 g_entry:\n    {set} v0, v, 5\n    return 1\n}}\n\
             main start(v0:n) {{\nb0 start:\n    v1:c = new cell\n    jump b1\nb1 head:\n    \
             v2:k = phi [b0: v0, b2: v4]\n    branch v2, b2, b3\nb2 body:\n    v3:r = call g(v1)\n    \
             v4:k = sub v2, 1\n    jump b1\nb3 done:\n    print v2\n}}\n"
        )
    };
    let proven = branches_of_g(module("set.object"));
    let unproven = branches_of_g(module("set"));
    assert_eq!(proven, 0);
    assert!(unproven >= 2, "{unproven} conditional branches for an unproven write");
}

/// `g` returns `v0 // k` or `v0 % k` (`op`); main calls it with its
/// parameter `n`, `m` times (a loop whose count is not known: `g` is hot),
/// and prints the last result.
fn divide_module(op: &str, k: i64) -> String {
    format!(
        "function g(v0:a) {{\nb0 g_entry:\n    v1:x = {op} v0, {k}\n    return v1\n}}\n\
         main start(v0:n, v5:m) {{\nb0 start:\n    jump b1\nb1 head:\n    v1:k = phi [b0: v5, b2: v4]\n    \
         v2:s = phi [b0: 0, b2: v3]\n    branch v1, b2, b3\nb2 body:\n    v3:r = call g(v0)\n    \
         v4:k = sub v1, 1\n    jump b1\nb3 done:\n    print v2\n}}\n"
    )
}

#[cfg(target_arch = "x86_64")]
#[test]
fn division_by_a_power_of_two_is_the_words_bits() {
    use flowc_lang::value::Value;
    // Floored `//` and `%` by 2^m on the tagged word: a shift and an `or`,
    // an `and`; no division, and no branch past the operand's tag test
    // (and the slow path's test for a stop). Checked against Rust's
    // Euclidean operations, which floor for a positive divisor, on
    // dividends of every sign up to the least and greatest small integers.
    const MIN: i64 = -(1 << 62);
    const MAX: i64 = (1 << 62) - 1;
    let (n, count) = (flowc_lang::Symbol::intern("n"), flowc_lang::Symbol::intern("m"));
    for k in [1, 2, 8, 256, 1 << 16, 1 << 29] {
        let mut dividends = vec![0, 1, -1, 7, -7, MIN, MIN + 1, MAX, MAX - 1, -987_654_321];
        for d in [-1, 0, 1] {
            dividends.extend([k + d, -k + d, 3 * k + d, -3 * k + d]);
        }
        for op in ["div", "mod"] {
            let text = divide_module(op, k);
            let inputs = dividends.clone();
            let results = flowc_codegen::with_stack(move || {
                let m = flowc_ir::parse::module("divide", &text).unwrap();
                let native = Native::compile(&m).unwrap();
                let (_, _, code) =
                    native.code().into_iter().find(|(name, _, _)| name.as_str() == "g").expect("g is compiled");
                let lines = flowc_codegen::disasm::instructions(code);
                assert!(!lines.iter().any(|l| l.text.contains("div")), "{op} {k}: {lines:#?}");
                let branches = lines.iter().filter(|l| l.text.starts_with('j') && !l.text.starts_with("jmp")).count();
                assert!(branches <= 2, "{op} {k}: {branches} conditional branches");
                inputs
                    .iter()
                    .map(|&a| {
                        let run = native.run(&[(n, Value::Int(a)), (count, Value::Int(3))], 1000);
                        run.map(|o| o.value.to_string()).map_err(|e| e.to_string())
                    })
                    .collect::<Vec<_>>()
            });
            for (a, r) in dividends.iter().zip(results) {
                let want = if op == "div" { a.div_euclid(k) } else { a.rem_euclid(k) };
                assert_eq!(r, Ok(want.to_string()), "{a} {op} {k}");
            }
        }
    }
}

/// A huge main function (`flowc_ir::HUGE_INSTS`: a partially evaluated
/// interpreter's residual program is one) whose loop writes three fields
/// of a cell with `op` (`set` or `set.object`) and reads one, after a
/// long straight run.
fn huge_module(op: &str) -> String {
    let mut filler = String::new();
    for k in 0..=flowc_ir::HUGE_INSTS {
        filler.push_str(&format!("    v{}:x = add v0, {k}\n", 100 + k));
    }
    let get = if op == "set.object" { "get.object" } else { "get" };
    format!(
        "main start(v0:n) {{\nb0 start:\n    v1:c = new cell\n{filler}    jump b1\nb1 head:\n    \
         v2:k = phi [b0: v0, b2: v4]\n    branch v2, b2, b3\nb2 body:\n    {op} v1, a, 1\n    {op} v1, b, 2\n    \
         {op} v1, v, 3\n    v3:x = {get} v1, v\n    v4:k = sub v2, v3\n    jump b1\nb3 done:\n    print v2\n}}\n"
    )
}

/// The `call` instructions of all the code compiled for `text`.
#[cfg(target_arch = "x86_64")]
fn calls_of(text: String) -> usize {
    flowc_codegen::with_stack(move || {
        let m = flowc_ir::parse::module("huge", &text).unwrap();
        let native = Native::compile(&m).unwrap();
        native
            .code()
            .into_iter()
            .map(|(_, _, code)| {
                flowc_codegen::disasm::instructions(code).iter().filter(|l| l.text.starts_with("call")).count()
            })
            .sum()
    })
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_huge_functions_loop_reads_and_writes_proven_objects_in_line() {
    // Code lowered for compile time calls the runtime for every field
    // access; a proven object's, in a loop, is in line: a write of a
    // bound value is a store (no call at all), a read a load and a test
    // (its call left on the slow path).
    let proven = calls_of(huge_module("set.object"));
    let unproven = calls_of(huge_module("set"));
    assert!(unproven >= proven + 3, "{unproven} calls unproven, {proven} proven");
}

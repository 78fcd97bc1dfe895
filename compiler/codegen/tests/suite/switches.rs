//! Dispatch chains lowered as switches: a chain of `eq.word` tests of one
//! value against integer constants branches once or twice on the value,
//! not once per test, and goes where the first equal test goes — for
//! integers that match (negative ones too), integers that match nothing,
//! and values that are no integer.

use flowc_codegen::Native;
use flowc_lang::value::Value;
use flowc_lang::Symbol;

/// `g(op, x)` dispatches on `op` by a chain of tests of `keys` in order,
/// each case joining at `out` with its own constant (phi arguments on
/// every edge); no match gives `x`. Main sums `g` over `n` rounds of
/// `op` = `k % 23 - 5`, then adds `g(some_atom, 1)`.
fn module(keys: &[i64]) -> String {
    let mut chain = String::new();
    let mut cases = String::new();
    let mut inputs = Vec::new();
    let last = keys.len();
    for (j, k) in keys.iter().enumerate() {
        let (test, case) = (j + 1, last + 1 + j);
        let next = if j + 1 < last { format!("b{}", test + 1) } else { format!("b{}", 2 * last + 1) };
        chain +=
            &format!("b{test} t{j}:\n    v{}:c = eq.word v0, {k}\n    branch v{}, b{case}, {next}\n", 10 + j, 10 + j);
        cases += &format!("b{case} case{j}:\n    jump b{}\n", 2 * last + 2);
        inputs.push(format!("b{case}: {}", 7 * j + 1));
    }
    let miss = 2 * last + 1;
    inputs.push(format!("b{miss}: v1"));
    format!(
        "function g(v0:op, v1:x) {{\nb0 g_entry:\n    jump b1\n{chain}{cases}b{miss} miss:\n    jump b{out}\n\
         b{out} out:\n    v2:r = phi [{}]\n    return v2\n}}\n\
         main start(v0:n) {{\nb0 start:\n    jump b1\nb1 head:\n    v1:k = phi [b0: v0, b2: v4]\n    \
         v2:s = phi [b0: 0, b2: v5]\n    branch v1, b2, b3\nb2 body:\n    v6:m = mod v1, 23\n    v7:op = sub v6, 5\n    \
         v3:r = call g(v7, v1)\n    v4:k = sub v1, 1\n    v5:s = add v2, v3\n    jump b1\nb3 done:\n    \
         v8:a = call g(:some_atom, 1)\n    v9:t = add v2, v8\n    print v9\n}}\n",
        inputs.join(", "),
        out = 2 * last + 2,
    )
}

/// What `text` prints with `n` natively and in the IR interpreter, and
/// the conditional branches of its `g`.
#[cfg(target_arch = "x86_64")]
fn run(text: String, n: i64) -> (String, String, usize) {
    flowc_codegen::with_stack(move || {
        let m = flowc_ir::parse::module("switch", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let env = [(Symbol::intern("n"), Value::Int(n))];
        let expected = flowc_ir::interp::run(&m, &env, &Default::default()).expect("it runs").value.to_string();
        let native = Native::compile(&m).unwrap();
        let got = native.run(&env, 1000).map(|o| o.value.to_string()).unwrap_or_else(|e| e.to_string());
        let (_, _, code) = native.code().into_iter().find(|(name, _, _)| name.as_str() == "g").expect("g is compiled");
        let lines = flowc_codegen::disasm::instructions(code);
        let branches = lines.iter().filter(|l| l.text.starts_with('j') && !l.text.starts_with("jmp")).count();
        (got, expected, branches)
    })
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_chain_of_tests_branches_a_few_times_and_goes_where_the_first_equal_test_goes() {
    // Consecutive keys, then scattered ones, negative ones among them.
    let mut keys: Vec<i64> = (0..20).collect();
    keys.extend([100, -3, 140, -1, 57, 77, 99, 1000, -50, 33]);
    // And the integer an atom's word would be, shifted as an integer's
    // (its symbol's index by 4, plus 1): `g(:some_atom, 1)` must match no
    // test.
    keys.push(4 * i64::from(Symbol::intern("some_atom").index()) + 1);
    let (got, expected, branches) = run(module(&keys), 200);
    assert_eq!(got, expected);
    // The tag test and the switch's own: a bound test of the table and
    // a binary search among the ten scattered keys (16 here, where the
    // chain branches once per test).
    let chain = keys.len();
    assert!(3 * branches <= 2 * chain, "{branches} conditional branches for {chain} tests");
    // Fewer tests stay a chain of compares and branches.
    let few = 8;
    let (got, expected, branches) = run(module(&keys[..few]), 200);
    assert_eq!(got, expected);
    assert!(branches >= few, "{branches} conditional branches for {few} tests");
}

/// A trace whose path went through a dispatch chain: per key, a
/// `guard_false` of `eq.word op, key` leaving by record `r{i}` (which
/// stores `i`), then a `guard_true` of `eq.word op, last` leaving by the
/// next record (1000); past it, the trace's exit by the last (999).
fn guard_chain_trace(keys: &[i64], last: i64) -> String {
    let mut body = String::new();
    let mut records = String::new();
    for (i, k) in keys.iter().enumerate() {
        body += &format!("    v{}:c = eq.word v0, {k}\n    guard_false v{}, r{i} else case{i}\n", 10 + i, 10 + i);
        records += &format!("resume r{i} {{\n    frame [op = v0, x = v1, k = {i}]\n}}\n");
    }
    let n = keys.len();
    format!(
        "trace chain(v0:op, v1:x) {{\nb0:\n{body}    v{c}:c = eq.word v0, {last}\n    guard_true v{c}, r{n} else other\n    \
         exit r{e} to done\n{records}resume r{n} {{\n    frame [op = v0, x = v1, k = 1000]\n}}\n\
         resume r{e} {{\n    frame [op = v0, x = v1, k = 999]\n}}\n}}\n",
        c = 10 + n,
        e = n + 1,
    )
}

/// Which exit of the trace `text` (compiled by `tier`) each `op` (an
/// integer, or an atom of the name) leaves by, as its index among the trace's exits, with the values it stores;
/// and the conditional branches of its code, and how many of them are
/// `jg`.
#[cfg(target_arch = "x86_64")]
fn run_chain(
    text: String,
    tier: flowc_codegen::compile::Codegen,
    ops: Vec<Result<i64, &'static str>>,
) -> (Vec<(usize, Vec<i64>)>, usize, usize) {
    use flowc_codegen::{Options, TraceCache, TraceEnd};
    flowc_codegen::with_stack(move || {
        let module = flowc_ir::parse::module("chain", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let cache = TraceCache::new(std::sync::Arc::new(module.clone()), module.layout(), Options::default()).unwrap();
        let id = cache.compile_all(&[&module.functions[0]], tier).unwrap()[0];
        let exits = cache.exits_of(id);
        let left = ops
            .into_iter()
            .map(|op| {
                let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
                // (An integer, or an atom of the name: made here, on the
                // code's stack.)
                let op = op.map_or_else(Value::atom, Value::Int);
                match cache.run(id, &[op, Value::Int(7)], &mut run) {
                    TraceEnd::Exit { exit, values } => {
                        let at = exits.iter().position(|&e| e == exit).expect("one of the trace's exits");
                        // (Integers' values; any other value is -1.)
                        let values = values
                            .into_iter()
                            .map(|v| match v {
                                Some(Value::Int(k)) => k,
                                _ => -1,
                            })
                            .collect();
                        (at, values)
                    }
                    _ => panic!("the trace leaves by an exit"),
                }
            })
            .collect();
        let lines = flowc_codegen::disasm::instructions(&cache.code(id).bytes);
        let branches = lines.iter().filter(|l| l.text.starts_with('j') && !l.text.starts_with("jmp"));
        let (all, greater) = (branches.clone().count(), branches.filter(|l| l.text.starts_with("jg")).count());
        (left, all, greater)
    })
}

/// A run of guards of one value against constants is lowered as one
/// switch, by the baseline compiler (a binary search) and by Cranelift
/// (a jump table): each value leaves by the exit of the first guard that
/// fails for it — the same exits, numbered in the guards' order, storing
/// the values — for keys that repeat, negative and
/// scattered ones, the last guard's key, and values no guard names.
/// Cranelift's code has half as many conditional branches as guards
/// or fewer; the baseline compiler's turns at each step of its search
/// (`jg`), a few times, where a chain would never.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_run_of_guards_on_one_value_is_one_switch_and_leaves_by_the_first_failing_guard() {
    use flowc_codegen::compile::Codegen;
    let mut keys: Vec<i64> = (0..24).collect();
    keys.extend([100, -3, 140, 5, -1, 57]);
    let last = 31;
    let text = guard_chain_trace(&keys, last);
    let ops: Vec<i64> = (-6..150).collect();
    for tier in [Codegen::Baseline, Codegen::Optimized] {
        let values = ops.iter().map(|&op| Ok(op)).collect();
        let (left, branches, turns) = run_chain(text.clone(), tier, values);
        for (&op, (at, values)) in ops.iter().zip(&left) {
            // The first guard that fails, by its index; past them all,
            // the last guard's exit, or on to the trace's exit.
            // (Each record's constant is no value the exit stores.)
            let exit = match keys.iter().position(|&k| k == op) {
                Some(i) => i,
                None if op == last => keys.len() + 1,
                None => keys.len(),
            };
            assert_eq!((*at, values.as_slice()), (exit, [op, 7].as_slice()), "{tier:?}, op {op}");
        }
        let guards = keys.len() + 1;
        match tier {
            Codegen::Baseline => assert!(turns >= 4, "{tier:?}: {turns} turns of a search for {guards} guards"),
            _ => assert!(2 * branches <= guards, "{tier:?}: {branches} conditional branches for {guards} guards"),
        }
    }
}

/// A trace whose path went through a dispatch on an object's class: a
/// `guard_not_class` of `p` per class of `classes`, each leaving by its
/// own record, then a `guard_class` of `last` (its exit the next record);
/// past it, the trace's exit by the last record.
fn class_chain_trace(classes: &[&str], last: &str) -> String {
    let mut body = String::new();
    let mut records = String::new();
    for (i, c) in classes.iter().enumerate() {
        body += &format!("    guard_not_class v0, {c}, r{i} else case{i}\n");
        records += &format!("resume r{i} {{\n    frame [p = v0, x = v1, k = {i}]\n}}\n");
    }
    let n = classes.len();
    format!(
        "trace chain(v0:p, v1:x) {{\nb0:\n{body}    guard_class v0, {last}, r{n} else other\n    exit r{e} to done\n\
         {records}resume r{n} {{\n    frame [p = v0, x = v1, k = 1000]\n}}\n\
         resume r{e} {{\n    frame [p = v0, x = v1, k = 999]\n}}\n}}\n",
        e = n + 1,
    )
}

/// A run of class guards on one value is one switch on the object's
/// class, in baseline code and in Cranelift's: objects of each class of
/// the run (one repeated), of the last guard's class, of a class none
/// names, and values that are no object (an integer, an atom) each leave
/// by the exit of the first guard that fails for them.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_run_of_class_guards_leaves_by_the_first_failing_guard() {
    use flowc_codegen::compile::Codegen;
    use flowc_codegen::{Options, TraceCache, TraceEnd};
    let classes = ["k0", "k1", "k2", "k3", "k4", "k2", "k5", "k6", "k7"];
    let text = class_chain_trace(&classes, "k8");
    for tier in [Codegen::Baseline, Codegen::Optimized] {
        let text = text.clone();
        let left = flowc_codegen::with_stack(move || {
            let module = flowc_ir::parse::module("chain", &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let layout = module.layout();
            let cache = TraceCache::new(std::sync::Arc::new(module.clone()), layout, Options::default()).unwrap();
            let id = cache.compile_all(&[&module.functions[0]], tier).unwrap()[0];
            let exits = cache.exits_of(id);
            let mut values: Vec<(String, Value)> = ["k0", "k2", "k5", "k7", "k8", "k9"]
                .iter()
                .enumerate()
                .map(|(n, c)| {
                    let object = flowc_lang::interp::objects::new_object(n as u64 + 1, Symbol::intern(c), layout);
                    (c.to_string(), object)
                })
                .collect();
            values.push(("an integer".into(), Value::Int(3)));
            values.push(("an atom".into(), Value::atom("k1")));
            values
                .into_iter()
                .map(|(what, v)| {
                    let mut run = flowc_codegen::RunState { max_depth: 1000, ..Default::default() };
                    match cache.run(id, &[v, Value::Int(7)], &mut run) {
                        TraceEnd::Exit { exit, .. } => {
                            (what, exits.iter().position(|&e| e == exit).expect("one of the trace's exits"))
                        }
                        _ => panic!("the trace leaves by an exit"),
                    }
                })
                .collect::<Vec<_>>()
        });
        let n = classes.len();
        let expected: Vec<(String, usize)> =
            [("k0", 0), ("k2", 2), ("k5", 6), ("k7", 8), ("k8", n + 1), ("k9", n), ("an integer", n), ("an atom", n)]
                .iter()
                .map(|&(w, e)| (w.to_string(), e))
                .collect();
        assert_eq!(left, expected, "{tier:?}");
    }
}

/// A value that is no integer tested against integer constants (an
/// `eq.word` compares words of any kind) fails no guard, though its word
/// shifted as an integer's would be one of the constants: an atom's word
/// is its symbol's index by 8 plus 2, so shifted by one it is 4 times the
/// index plus 1. Baseline code and Cranelift's both test the integer tag
/// alone.
#[cfg(target_arch = "x86_64")]
#[test]
fn a_value_of_another_kind_fails_no_guard_of_a_run() {
    use flowc_codegen::compile::Codegen;
    let atom = Symbol::intern("looks_like_a_key");
    let collides = 4 * i64::from(atom.index()) + 1;
    // Among the failing guards' constants, and as the holding guard's.
    let mut keys: Vec<i64> = (0..10).collect();
    keys.push(collides);
    for (keys, last) in [(keys.clone(), 77), ((0..10).collect::<Vec<i64>>(), collides)] {
        let text = guard_chain_trace(&keys, last);
        for tier in [Codegen::Baseline, Codegen::Optimized] {
            let (left, _, _) = run_chain(text.clone(), tier, vec![Err("looks_like_a_key"), Ok(collides)]);
            // The atom: by the holding guard's exit; the integer: by its
            // own guard's, or on to the trace's exit.
            let at = keys.iter().position(|&k| k == collides).unwrap_or(keys.len() + 1);
            assert_eq!((left[0].0, left[1].0), (keys.len(), at), "{tier:?}, constants {keys:?} then {last}");
        }
    }
}

//! Links laid out in a row, predicted ahead of time (`lower/links.rs`):
//! a walk's load of its next link is compared with the addresses of the
//! objects next to the current one, and where it matches the walk goes on
//! from the computed address. Chains laid out forward, backward and
//! interleaved with other objects (where the prediction misses every
//! time) all walk to the same sum.

use flowc_codegen::Native;

/// `walk` sums the `v` fields of the chain from `p`; main builds a chain
/// of `n` nodes holding 1..=n: appended (each node right after the one it
/// follows), prepended (right before), or appended with a decoy allocated
/// between each two.
fn chain_module(build: &str) -> String {
    let push = match build {
        "append" => {
            "    v5:c = new node\n    set.object v5, v, v4\n    set.object v5, next, 0\n    \
                     set.object v3, next, v5\n"
        }
        "prepend" => "    v5:c = new node\n    set.object v5, v, v4\n    set.object v5, next, v9\n",
        _ => {
            "    v5:c = new node\n    set.object v5, v, v4\n    set.object v5, next, 0\n    \
              v10:decoy = new node\n    set.object v10, v, 0\n    set.object v10, next, 0\n    \
              set.object v3, next, v5\n"
        }
    };
    // The chain's head and last node as they come round the loop.
    let (first, head, last) = if build == "prepend" { ("0", "v5", "v3") } else { ("v2", "v9", "v5") };
    format!(
        "function walk(v0:p) {{\nb0 walk_entry:\n    jump b1\nb1 step:\n    v1:q = phi [b0: v0, b1: v4]\n    \
         v2:s = phi [b0: 0, b1: v5]\n    v3:h = get.object v1, v\n    v5:t = add v2, v3\n    \
         v4:n = get.object v1, next\n    branch v4, b1, b2\nb2 done:\n    return v5\n}}\n\
         main start(v0:n) {{\nb0 start:\n    v2:first = new node\n    set.object v2, v, 0\n    \
         set.object v2, next, 0\n    jump b1\nb1 head:\n    v3:last = phi [b0: v2, b2: {last}]\n    \
         v9:head = phi [b0: {first}, b2: {head}]\n    v4:k = phi [b0: v0, b2: v8]\n    branch v4, b2, b3\n\
         b2 push:\n{push}    v8:k = sub v4, 1\n    jump b1\nb3 done:\n    v11:s = call walk(v9)\n    print v11\n}}\n"
    )
}

/// Conditional branches after a comparison of two registers in `walk`:
/// the predictions' tests (the walk's other tests compare with constants).
#[cfg(target_arch = "x86_64")]
fn register_comparisons(code: &[u8]) -> usize {
    let lines = flowc_codegen::disasm::instructions(code);
    lines
        .windows(2)
        .filter(|w| {
            let operands = w[0].text.strip_prefix("cmp").map(str::trim).unwrap_or("");
            let registers = !operands.is_empty()
                && operands.split(',').all(|o| {
                    o.chars().all(|c| c.is_ascii_alphanumeric()) && !o.starts_with(|c: char| c.is_ascii_digit())
                });
            registers && w[1].text.starts_with('j') && !w[1].text.starts_with("jmp")
        })
        .count()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_walk_predicts_its_links_and_sums_every_layout() {
    use flowc_lang::value::Value;
    let n = 1000;
    for build in ["append", "prepend", "interleaved"] {
        let text = chain_module(build);
        let (sum, predictions) = flowc_codegen::with_stack(move || {
            let m = flowc_ir::parse::module("chain", &text).unwrap();
            let native = Native::compile(&m).unwrap();
            let (_, _, code) =
                native.code().into_iter().find(|(name, _, _)| name.as_str() == "walk").expect("walk is compiled");
            let predictions = register_comparisons(code);
            let run = native.run(&[(flowc_lang::Symbol::intern("n"), Value::Int(n))], 1000);
            (run.map(|o| o.value.to_string()).map_err(|e| e.to_string()), predictions)
        });
        assert_eq!(sum, Ok((n * (n + 1) / 2).to_string()), "{build}");
        // The next object in a row and the one before, wherever the
        // load is lowered (the addition's slow path continues in a copy).
        assert!(predictions >= 2 && predictions % 2 == 0, "{build}: {predictions}");
    }
}

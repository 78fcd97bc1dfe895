//! Links laid out in a row, predicted ahead of time (`lower/links.rs`):
//! a walk's load of its next link is compared with the addresses of the
//! objects next to the current one, and where it matches the walk goes on
//! from the computed address. Chains laid out forward, backward and
//! interleaved with other objects (where the prediction misses every
//! time) all walk to the same sum.

use flowc_codegen::Native;

use super::chains::{code_of, run_with_n, WALK};

/// `walk` ([`WALK`]) sums the `v` fields of the chain from `p`; main builds a chain
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
        "{WALK}main start(v0:n) {{\nb0 start:\n    v2:first = new node\n    set.object v2, v, 0\n    \
         set.object v2, next, 0\n    jump b1\nb1 head:\n    v3:last = phi [b0: v2, b2: {last}]\n    \
         v9:head = phi [b0: {first}, b2: {head}]\n    v4:k = phi [b0: v0, b2: v8]\n    branch v4, b2, b3\n\
         b2 push:\n{push}    v8:k = sub v4, 1\n    jump b1\nb3 done:\n    v11:s = call walk(v9)\n    print v11\n}}\n"
    )
}

/// Where line `k` compares two registers (a prediction's test: the walk's
/// other tests compare with constants or memory), the conditional branch
/// on it: the next line other than a move (moves leave the flags).
#[cfg(target_arch = "x86_64")]
fn branch_on_registers(lines: &[flowc_codegen::disasm::Line], k: usize) -> Option<usize> {
    let operands = lines[k].text.strip_prefix("cmp")?.trim();
    let register =
        |o: &str| o.chars().all(|c| c.is_ascii_alphanumeric()) && !o.starts_with(|c: char| c.is_ascii_digit());
    if operands.is_empty() || !operands.split(',').all(register) {
        return None;
    }
    let next = k + 1 + lines[k + 1..].iter().position(|l| !l.text.starts_with("mov "))?;
    (lines[next].text.starts_with('j') && !lines[next].text.starts_with("jmp")).then_some(next)
}

/// Conditional branches after a comparison of two registers in `walk`:
/// the predictions' tests.
#[cfg(target_arch = "x86_64")]
fn register_comparisons(code: &[u8]) -> usize {
    let lines = flowc_codegen::disasm::instructions(code);
    (0..lines.len()).filter(|&k| branch_on_registers(&lines, k).is_some()).count()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_walk_predicts_its_links_and_sums_every_layout() {
    let n = 1000;
    for build in ["append", "prepend", "interleaved"] {
        let text = chain_module(build);
        let (sum, predictions) = flowc_codegen::with_stack(move || {
            let m = flowc_ir::parse::module("chain", &text).unwrap();
            let native = Native::compile(&m).unwrap();
            (run_with_n(&native, n), register_comparisons(code_of(&native, "walk")))
        });
        assert_eq!(sum, Ok((n * (n + 1) / 2).to_string()), "{build}");
        // The next object in a row and the one before, wherever the
        // load is lowered (the addition's slow path continues in a copy).
        assert!(predictions >= 2 && predictions % 2 == 0, "{build}: {predictions}");
    }
}

/// Where `walk`'s code goes once a prediction's comparison found its
/// address equal: past moves (which leave the flags) and unconditional
/// jumps, the first other instruction.
#[cfg(target_arch = "x86_64")]
fn after_hits(code: &[u8]) -> Vec<String> {
    let lines = flowc_codegen::disasm::instructions(code);
    let at = |offset: u32| lines.iter().position(|l| l.offset == offset).expect("a jump into the code");
    let target = |text: &str| u32::from_str_radix(text.split_whitespace().nth(1)?.trim_start_matches("0x"), 16).ok();
    let mut out = Vec::new();
    for k in 0..lines.len() {
        let Some(mut k) = branch_on_registers(&lines, k) else { continue };
        // Equal is the branch's target (je) or the way on (jne).
        match lines[k].text.split_whitespace().next() {
            Some("je") => k = at(target(&lines[k].text).unwrap()),
            Some("jne") => k += 1,
            _ => continue,
        }
        for _ in 0..lines.len() {
            match lines[k].text.split_whitespace().next() {
                Some("mov") => k += 1,
                Some("jmp") => k = at(target(&lines[k].text).unwrap()),
                _ => break,
            }
        }
        out.push(lines[k].text.clone());
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_predicted_link_goes_on_without_its_test_for_0() {
    // `walk`'s `n = get q.next; branch n, step, done`: where the load is
    // the address predicted, the walk goes on to its next step, whose
    // first instruction other than a move reads the node's `v` and adds
    // it (the `lea` of an addition of tagged integers), not a `cmp` of the
    // link with the word of 0.
    let text = chain_module("append");
    let after = flowc_codegen::with_stack(move || {
        let m = flowc_ir::parse::module("chain", &text).unwrap();
        let native = Native::compile(&m).unwrap();
        after_hits(code_of(&native, "walk"))
    });
    assert!(!after.is_empty(), "no prediction found");
    for text in &after {
        assert!(!text.starts_with("cmp") && !text.starts_with("test"), "a hit goes on to {text:?}: {after:?}");
    }
}

/// A walk whose link test's two ways on both take a value of the frame
/// (`k`, a parameter: in a function split into regions it is read from
/// its frame word) by phis, the first way being the loop itself. The
/// second way's edge is made after the link's miss path loaded the word;
/// the first way's edge, which a predicted hit enters without passing
/// that load, loads it again. In every split, the sum is the walk's.
#[test]
fn a_link_tests_two_ways_on_each_read_the_frame_themselves() {
    let walk = "function walk(v0:p, v9:k) {\nb0 walk_entry:\n    jump b1\nb1 step:\n    \
                v1:q = phi [b0: v0, b1: v4]\n    v2:s = phi [b0: 0, b1: v7]\n    v6:j = phi [b0: v9, b1: v9]\n    \
                v3:h = get.object v1, v\n    v5:t = add v2, v3\n    v7:u = add v5, v6\n    \
                v4:n = get.object v1, next\n    branch v4, b1, b2\nb2 done:\n    v8:m = phi [b1: v9]\n    \
                v10:r = add v7, v8\n    return v10\n}\n";
    let n = 300;
    let text = chain_module("append").replace("call walk(v9)", "call walk(v9, 1)");
    let start = text.find("main start").expect("a main");
    let text = format!("{walk}{}", &text[start..]);
    for split in [None, Some(1), Some(2), Some(3), Some(5)] {
        let text = text.clone();
        let got = flowc_codegen::with_stack(move || {
            let m = flowc_ir::parse::module("chain", &text).unwrap();
            let options = flowc_codegen::Options { split, ..Default::default() };
            let native = Native::compile_versions(&m, None, options).unwrap();
            run_with_n(&native, n)
        });
        // The values 0..=n, and k (1) once a node and once at the end.
        let expected = n * (n + 1) / 2 + (n + 1) + 1;
        assert_eq!(got, Ok(expected.to_string()), "split {split:?}");
    }
}

/// A link the loop tests, then tests again where its two ways meet (a
/// use on neither way alone): not lowered with its branch
/// (`lower::links::link_tests` leaves it), since the code where the ways
/// meet could not read the link a predicted hit carries. The walk does
/// no arithmetic in its loop, so nothing gets an optimistic copy and each
/// value has one definition: with the link lowered with its branch, the
/// Cranelift verifier finds the meeting block's test reading a value of
/// the hit's edge, which does not dominate it (tried). In every split,
/// the walk compiles and finds the last node.
#[test]
fn a_link_used_where_its_ways_meet_keeps_its_test() {
    let walk = "function walk(v0:p) {\nb0 walk_entry:\n    jump b1\nb1 step:\n    \
                v1:q = phi [b0: v0, b4: v4]\n    v4:n = get.object v1, next\n    branch v4, b2, b3\n\
                b2 more:\n    jump b4\nb3 last:\n    jump b4\nb4 join:\n    v7:w = phi [b2: 1, b3: 2]\n    \
                branch v4, b1, b5\nb5 done:\n    v8:h = get.object v1, v\n    v9:r = add v8, v7\n    \
                return v9\n}\n";
    let n = 300;
    let text = chain_module("append");
    let start = text.find("main start").expect("a main");
    let text = format!("{walk}{}", &text[start..]);
    for split in [None, Some(1), Some(2), Some(3)] {
        let text = text.clone();
        let got = flowc_codegen::with_stack(move || {
            let m = flowc_ir::parse::module("chain", &text).unwrap();
            let options = flowc_codegen::Options { split, ..Default::default() };
            let native = Native::compile_versions(&m, None, options).map_err(|e| e.to_string())?;
            run_with_n(&native, n)
        });
        // The last node's value (1: appended as the count runs down from
        // n), and 2 from the last way round.
        assert_eq!(got, Ok("3".to_string()), "split {split:?}");
    }
}

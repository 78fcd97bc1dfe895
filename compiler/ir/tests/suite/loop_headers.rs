//! The loop views code generation reads: targets of retreating edges
//! (where fuel is counted: every cycle passes one) and innermost natural
//! loops (whose bodies are placed right after their header).

use flowc_ir::cfg::Cfg;
use flowc_ir::loops::LoopForest;
use flowc_ir::BlockId;

/// The targets of retreating edges, the headers of innermost loops and
/// the blocks of innermost loops (as `block:header`) of the first function
/// of `text`, as sorted names.
fn headers_of(text: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let m = flowc_ir::parse::module("test", text).unwrap();
    let f = &m.functions[0];
    let cfg = Cfg::new(f);
    let headers = cfg.retreating_targets();
    let forest = LoopForest::new(f);
    let innermost = |b: &BlockId| forest.innermost_header(*b);
    let raw = |b: &BlockId| b.into_raw().into_u32() as usize;
    let names = |keep: &dyn Fn(&BlockId) -> Option<String>| {
        let mut names: Vec<String> = cfg.rpo.iter().filter_map(keep).collect();
        names.sort();
        names
    };
    let name = flowc_ir::print::block_ref;
    (
        names(&|b| headers[raw(b)].then(|| name(*b))),
        names(&|b| (innermost(b) == Some(*b)).then(|| name(*b))),
        names(&|b| innermost(b).map(|h| format!("{}:{}", name(*b), name(h)))),
    )
}

#[test]
fn a_single_loop_followed_by_another_is_innermost() {
    // b1's exit leads to the loop at b4, which reverse postorder places
    // between b1 and b1's latch b2.
    let text = r#"main start(v0:n) {
b0 start:
    jump b1
b1 first:
    v1:i = phi [b0: 0, b2: v2]
    v3:c = lt v1, v0
    branch v3, b2, b3
b2 body:
    v2:i = add v1, 1
    jump b1
b3 between:
    jump b4
b4 second:
    v4:j = phi [b3: 0, b5: v5]
    v6:d = lt v4, v0
    branch v6, b5, b6
b5 body2:
    v5:j = add v4, 1
    jump b4
b6 end:
    print v4
}
"#;
    let (headers, innermost, blocks) = headers_of(text);
    assert_eq!(headers, ["b1", "b4"]);
    assert_eq!(innermost, ["b1", "b4"]);
    assert_eq!(blocks, ["b1:b1", "b2:b1", "b4:b4", "b5:b4"]);
}

#[test]
fn the_inner_of_two_nested_loops_is_innermost_and_a_sibling_loop_too() {
    // Euclid's nested loops (b1 outer, b3 inner), then a second loop
    // (b7) after the first: b3 and b7 contain no other header. (In
    // reverse postorder b7 sits between b1 and its latch b5.)
    let text = r#"main start(v0:n) {
b0 start:
    jump b1
b1 outer:
    v1:i = phi [b0: 1, b5: v11]
    v3:more = le v1, v0
    branch v3, b2, b6
b2 pair:
    v5:a = mul v1, 7
    jump b3
b3 inner:
    v6:b = phi [b2: 360, b4: v13]
    v8:a = phi [b2: v5, b4: v6]
    branch v6, b4, b5
b4 step:
    v13:t = mod v8, v6
    jump b3
b5 found:
    v11:i = add v1, 1
    jump b1
b6 done:
    jump b7
b7 again:
    v20:k = phi [b6: 0, b8: v21]
    v22:c = lt v20, v0
    branch v22, b8, b9
b8 step2:
    v21:k = add v20, 1
    jump b7
b9 end:
    print v20
}
"#;
    let (headers, innermost, blocks) = headers_of(text);
    assert_eq!(headers, ["b1", "b3", "b7"]);
    assert_eq!(innermost, ["b3", "b7"]);
    assert_eq!(blocks, ["b3:b3", "b4:b3", "b7:b7", "b8:b7"]);
}

/// The blocks on a cycle ([`Cfg::cycles`]) of the first function of
/// `text`, as sorted names.
fn cyclic_of(text: &str) -> Vec<String> {
    let m = flowc_ir::parse::module("test", text).unwrap();
    let f = &m.functions[0];
    let cfg = Cfg::new(f);
    let cycles = cfg.cycles();
    let mut names: Vec<String> = cfg
        .rpo
        .iter()
        .filter(|b| cycles[flowc_ir::ix(**b)].is_some())
        .map(|b| flowc_ir::print::block_ref(*b))
        .collect();
    names.sort();
    names
}

#[test]
fn blocks_of_an_irreducible_cycle_are_on_a_cycle_though_in_no_natural_loop() {
    // b2 and b3 form a cycle entered at both (from b0 and b1): no block
    // dominates the other, so there is no natural loop; b4 jumps to itself.
    let text = r#"main start(v0:n) {
b0 start:
    branch v0, b1, b3
b1 left:
    jump b2
b2 a:
    v1:c = lt v0, 3
    branch v1, b3, b4
b3 b:
    v2:d = lt v0, 5
    branch v2, b2, b5
b4 self:
    v3:e = lt v0, 7
    branch v3, b4, b5
b5 end:
    print v0
}
"#;
    let m = flowc_ir::parse::module("test", text).unwrap();
    assert_eq!(LoopForest::new(&m.functions[0]).len(), 1, "only b4's self-loop is a natural loop");
    assert_eq!(cyclic_of(text), ["b2", "b3", "b4"]);
    // Two cycles: b2 and b3 on one, b4 on its own.
    let f = &m.functions[0];
    let cycles = Cfg::new(f).cycles();
    let of = |name: &str| {
        let b = f.blocks.iter().find(|(b, _)| flowc_ir::print::block_ref(*b) == name).unwrap().0;
        cycles[flowc_ir::ix(b)]
    };
    assert!(of("b2").is_some() && of("b2") == of("b3") && of("b4").is_some() && of("b4") != of("b2"));
    assert_eq!(of("b0"), None);
}

#[test]
fn blocks_on_a_cycle_are_those_that_reach_themselves_on_generated_programs() {
    for (seed, m) in flowc_testkit::gen::lowered(flowc_testkit::gen::seed_count(40)) {
        for f in &m.functions {
            let cfg = Cfg::new(f);
            let cycles = cfg.cycles();
            for &b in &cfg.rpo {
                // Brute force: a search from b's successors comes back to b.
                let mut seen = std::collections::HashSet::new();
                let mut stack: Vec<BlockId> = cfg.succs(b).to_vec();
                let mut back = false;
                while let Some(x) = stack.pop() {
                    back |= x == b;
                    if seen.insert(x) {
                        stack.extend_from_slice(cfg.succs(x));
                    }
                }
                assert_eq!(cycles[flowc_ir::ix(b)].is_some(), back, "seed {seed}, {}", flowc_ir::print::block_ref(b));
            }
        }
    }
}

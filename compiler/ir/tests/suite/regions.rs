//! Regions of huge functions (`flowc_ir::regions`): how a function is cut
//! into pieces and regions, which pieces enter a region, and region
//! dominance — checked against a brute-force reachability oracle on
//! generated programs cut at several sizes.

use expect_test::expect;
use flowc_ir::cfg::{Cfg, DomTree};
use flowc_ir::loops::LoopForest;
use flowc_ir::regions::Regions;
use flowc_ir::Function;

/// The regions of `f` cut at `max` (loop nests at `max_loop`): per
/// region its pieces (`block[start..end]`, `*` for an entry, with its
/// number) in order.
fn describe(f: &Function, max: usize, max_loop: usize) -> String {
    let cfg = Cfg::new(f);
    let loops = LoopForest::new(f);
    let r = Regions::new(f, &cfg, &loops, max, max_loop);
    let mut out = String::new();
    for k in 0..r.len() {
        let pieces: Vec<String> = r
            .members(k)
            .map(|p| {
                let piece = r.piece(p);
                let entry = r.entry_number(p).map_or(String::new(), |n| format!("*{n}"));
                format!("{}[{}..{}]{entry}", flowc_ir::print::block_ref(piece.block), piece.start, piece.end)
            })
            .collect();
        out.push_str(&format!("region {k}: {}\n", pieces.join(" ")));
    }
    out
}

const LOOP: &str = r#"main start(v0:n) {
b0 start:
    v1:a = add v0, 1
    v2:b = add v1, 2
    v3:c = add v2, 3
    jump b1
b1 head:
    v4:i = phi [b0: 0, b2: v5]
    v6:t = lt v4, v0
    branch v6, b2, b3
b2 body:
    v5:i = add v4, 1
    jump b1
b3 done:
    v7:s = add v4, v3
    v8:u = add v7, v1
    print v8
}
"#;

#[test]
fn a_long_block_is_cut_into_pieces_and_a_loop_stays_whole() {
    let m = flowc_ir::parse::module("test", LOOP).unwrap();
    let f = &m.functions[0];
    // Five at most: b0 (3 instructions and a terminator, size 4) leaves no
    // room for the loop (b1: a phi, an instruction and a terminator; b2:
    // an instruction and a terminator; size 5), which fits a region of its
    // own and stays whole.
    expect![[r#"
        region 0: b0[0..3]*0
        region 1: b1[0..1]*0 b2[0..1]
        region 2: b3[0..2]*0
    "#]]
    .assert_eq(&describe(f, 5, 5));
    // One instruction per piece: the loop no longer fits and is cut like
    // straight-line code; b0 and b3 are cut into pieces, each region
    // entered where the previous one stops.
    expect![[r#"
        region 0: b0[0..1]*0
        region 1: b0[1..2]*0
        region 2: b0[2..3]*0
        region 3: b1[0..1]*0
        region 4: b2[0..1]*0
        region 5: b3[0..1]*0
        region 6: b3[1..2]*0
    "#]]
    .assert_eq(&describe(f, 1, 1));
    // Loop nests of up to five kept whole: the loop gets a region of its
    // own; straight-line code is cut as before.
    expect![[r#"
        region 0: b0[0..1]*0
        region 1: b0[1..2]*0
        region 2: b0[2..3]*0
        region 3: b1[0..1]*0 b2[0..1]
        region 4: b3[0..1]*0
        region 5: b3[1..2]*0
    "#]]
    .assert_eq(&describe(f, 1, 5));
}

const NEST: &str = r#"main start(v0:n) {
b0 start:
    jump b1
b1 outer:
    v1:i = phi [b0: 0, b4: v9]
    v2:t = lt v1, v0
    branch v2, b2, b5
b2 before:
    v3:a = add v1, 1
    v4:b = add v3, 2
    v5:c = add v4, 3
    jump b3
b3 inner:
    v6:j = phi [b2: v5, b6: v7]
    branch v6, b6, b4
b4 after:
    v8:d = add v6, v1
    v9:i = add v8, 1
    jump b1
b5 done:
    print v1
b6 step:
    v7:j = sub v6, 1
    jump b3
}
"#;

#[test]
fn a_nest_too_big_for_a_region_keeps_its_inner_loops_whole() {
    let m = flowc_ir::parse::module("test", NEST).unwrap();
    let f = &m.functions[0];
    // Regions of 3, loop nests of 5: the outer loop (14 instructions,
    // phis and terminators counted) does not fit, so it is placed block
    // by block; its inner loop, b3 and b6 (4), still fits and is one
    // region, the loop's values in registers, entered once per round of
    // the outer loop rather than left and entered again every round of
    // its own (placed block by block too, b6 would not fit beside b3).
    expect![[r#"
        region 0: b0[0..0]*0
        region 1: b1[0..1]*0
        region 2: b2[0..3]*0
        region 3: b3[0..0]*0 b6[0..1]
        region 4: b4[0..2]*0
        region 5: b5[0..0]*0
    "#]]
    .assert_eq(&describe(f, 3, 5));
}

#[test]
fn values_are_direct_only_where_their_piece_dominates_in_the_region() {
    let m = flowc_ir::parse::module("test", LOOP).unwrap();
    let f = &m.functions[0];
    let cfg = Cfg::new(f);
    let r = Regions::new(f, &cfg, &LoopForest::new(f), 5, 5);
    let value = |name: &str| f.values.iter().find(|(v, _)| flowc_ir::print::value_ref(*v) == name).unwrap().0;
    let block = |name: &str| f.blocks.iter().find(|(b, _)| flowc_ir::print::block_ref(*b) == name).unwrap().0;
    let (b1, b2, b3) = (block("b1"), block("b2"), block("b3"));
    // The loop's phi is used directly in its own region (b1's piece
    // dominates b2's there), not in b3's region.
    assert!(r.direct(value("v4"), r.piece_at(b2, 0)));
    assert!(!r.direct(value("v4"), r.piece_at(b3, 0)));
    // v7 is used right after its definition, in its own piece.
    assert!(r.direct(value("v7"), r.piece_at(b3, 1)));
    // Parameters are never direct; nor is a value of an earlier region.
    assert!(!r.direct(value("v0"), r.piece_at(b1, 1)));
    assert!(!r.direct(value("v3"), r.piece_at(b3, 0)));
}

/// Region dominance by brute force: `a` dominates `b` in their region
/// when `b` cannot be reached from the region's entries inside the region
/// without passing `a`.
fn dominates_brute(r: &Regions, cfg: &Cfg, a: usize, b: usize) -> bool {
    let region = r.piece(a).region;
    if r.piece(b).region != region {
        return false;
    }
    if a == b {
        return true;
    }
    let succs = |p: usize| -> Vec<usize> {
        let piece = r.piece(p);
        let next: Vec<usize> = if !piece.last {
            vec![p + 1]
        } else {
            cfg.succs(piece.block).iter().filter_map(|&s| r.first_piece(s)).collect()
        };
        next.into_iter().filter(|&q| r.piece(q).region == region).collect()
    };
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<usize> = r.entries(region as usize).filter(|&e| e != a).collect();
    while let Some(p) = stack.pop() {
        if p == b {
            return false;
        }
        if seen.insert(p) {
            stack.extend(succs(p).into_iter().filter(|&q| q != a));
        }
    }
    true
}

#[test]
fn region_dominance_matches_reachability_on_generated_programs() {
    let mut checked = 0;
    for (seed, m) in flowc_testkit::gen::lowered(flowc_testkit::gen::seed_count(40)) {
        for f in &m.functions {
            let cfg = Cfg::new(f);
            let dom = DomTree::new(f, &cfg);
            let loops = LoopForest::new(f);
            for (max, max_loop) in [(1, 1), (3, 3), (3, 12), (8, 8), (8, 40), (40, 40)] {
                let r = Regions::new(f, &cfg, &loops, max, max_loop);
                let pieces: Vec<usize> = (0..r.len()).flat_map(|k| r.members(k).collect::<Vec<_>>()).collect();
                for &a in &pieces {
                    for &b in &pieces {
                        let want = dominates_brute(&r, &cfg, a, b);
                        assert_eq!(r.dominates(a, b), want, "seed {seed}, max {max}, pieces {a} {b}");
                        // Region dominance implies dominance in the function.
                        if want {
                            assert!(dom.dominates(r.piece(a).block, r.piece(b).block));
                        }
                    }
                }
                for k in 0..r.len() {
                    // Entries: exactly the pieces entered from elsewhere.
                    for p in r.members(k) {
                        let piece = r.piece(p);
                        let from_outside = if piece.start > 0 {
                            r.piece(p - 1).region != piece.region
                        } else {
                            piece.block == f.entry
                                || cfg
                                    .preds(piece.block)
                                    .iter()
                                    .any(|&q| cfg.is_reachable(q) && r.piece(r.last_piece(q)).region != piece.region)
                        };
                        assert_eq!(r.entry_number(p).is_some(), from_outside, "seed {seed}, max {max}, piece {p}");
                    }
                    // Size: at most `max`, or a single piece, or one loop
                    // nest of at most `max_loop`.
                    let size: usize = r
                        .members(k)
                        .map(|p| {
                            let piece = r.piece(p);
                            let phis = if piece.start == 0 { f.blocks[piece.block].phis.len() } else { 0 };
                            phis + (piece.end - piece.start) as usize + usize::from(piece.last)
                        })
                        .sum();
                    let one_nest = {
                        let mut tops = r.members(k).map(|p| {
                            let mut l = loops.loop_of(r.piece(p).block);
                            while let Some(parent) = l.and_then(|l| loops.parent(l)) {
                                l = Some(parent);
                            }
                            l
                        });
                        let first = tops.next().flatten();
                        first.is_some() && tops.all(|t| t == first)
                    };
                    assert!(
                        size <= max || r.members(k).count() == 1 || (one_nest && size <= max_loop),
                        "seed {seed}, max {max}, max_loop {max_loop}, region {k}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} functions checked");
}

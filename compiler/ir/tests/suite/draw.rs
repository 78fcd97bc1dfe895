//! The explorer's SVG drawing of a function (`flowc_ir::draw`).

use flowc_ir::draw::*;

#[test]
fn loops_back_edges_and_cold_blocks_are_marked() {
    let f = flowc_ir::parse::function(
        "t.ir",
        "main m(v0:n) {\nb0 start:\n    jump b1\nb1 head:\n    v1:i = phi [b0: 0, b2: v2]\n    v3 = lt v1, v0\n    branch v3, b2, b3\nb2 body:\n    v2:i = add v1, 1\n    jump b1\nb3 done:\n    branch v1, b4, b5\nb4 ok:\n    print v1\nb5 bad:\n    trap error(no)\n}\n",
    )
    .unwrap();
    let s = svg(&f);
    // Every block once, with its lines' data attributes.
    for b in 0..6 {
        assert_eq!(s.matches(&format!("data-block=\"{b}\"")).count(), 1, "{s}");
    }
    assert!(s.contains("class=\"block loop depth1 header\" data-block=\"1\""), "{s}");
    assert!(s.contains("class=\"block loop depth1\" data-block=\"2\""), "{s}");
    assert!(s.contains("class=\"block cold\" data-block=\"5\""), "{s}");
    assert!(s.contains("data-inst=\"1\""));
    assert!(s.contains("data-term=\"3\""));
    // One back edge (body -> head), four forward edges with branches.
    assert_eq!(s.matches("class=\"edge back").count(), 1);
    assert_eq!(s.matches("class=\"edge then\"").count(), 2);
    assert_eq!(s.matches("class=\"edge else\"").count(), 2);
    assert_eq!(s.matches("class=\"edge jump\"").count(), 1);
    // Deterministic.
    assert_eq!(s, svg(&f));
}

#[test]
fn boxes_do_not_overlap() {
    // A diamond inside a loop, and an edge that skips a layer.
    let f = flowc_ir::parse::function(
        "t.ir",
        "main m(v0:n) {\nb0:\n    branch v0, b1, b4\nb1:\n    v1:i = phi [b0: 0, b3: v2]\n    branch v1, b2, b3\nb2:\n    jump b3\nb3:\n    v2:i = add v1, 1\n    branch v2, b1, b4\nb4:\n    print v0\n}\n",
    )
    .unwrap();
    let s = svg(&f);
    let rects: Vec<(f64, f64, f64, f64)> = s
        .lines()
        .filter(|l| l.starts_with("<rect"))
        .map(|l| {
            let num = |k: &str| -> f64 {
                let at = l.find(&format!(" {k}=\"")).unwrap() + k.len() + 3;
                l[at..].split('"').next().unwrap().parse().unwrap()
            };
            (num("x"), num("y"), num("width"), num("height"))
        })
        .collect();
    assert_eq!(rects.len(), 5);
    for (i, a) in rects.iter().enumerate() {
        for b in &rects[i + 1..] {
            let apart = a.0 + a.2 <= b.0 || b.0 + b.2 <= a.0 || a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1;
            assert!(apart, "{a:?} overlaps {b:?}\n{s}");
        }
    }
}

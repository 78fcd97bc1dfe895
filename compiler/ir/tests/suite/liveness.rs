//! Liveness after an instruction (`flowc_ir::liveness`).

use bitvec::vec::BitVec;
use flowc_ir::cfg::Cfg;
use flowc_ir::ix;
use flowc_ir::liveness::*;
use flowc_ir::Function;

fn names(f: &Function, set: &BitVec) -> Vec<String> {
    let mut out: Vec<String> = f
        .values
        .iter()
        .filter(|(v, _)| set[ix(*v)])
        .map(|(v, d)| format!("v{}:{}", ix(v), d.name.map(|n| n.to_string()).unwrap_or_default()))
        .collect();
    out.sort();
    out
}

#[test]
fn live_after_sees_later_uses_loop_carried_values_and_phi_inputs() {
    let f = flowc_ir::parse::function(
        "t.ir",
        "main start(v0:n) {
b0 start:
    jump b1
b1 loop:
    v1:i = phi [b0: 0, b2: v6]
    v4:t = phi [b0: 0, b2: v5]
    v3:c = lt v1, v0
    branch v3, b2, b3
b2 body:
    v5:t = add v1, v4
    v6:i = add v1, 1
    jump b1
b3 done:
    print v4
}
",
    )
    .unwrap();
    let cfg = Cfg::new(&f);
    let l = Liveness::new(&f, &cfg);
    let b2 = f.layout[2];
    let [add_t, add_i] = [f.blocks[b2].insts[0], f.blocks[b2].insts[1]];
    // After t = i + t: i is still read (i + 1), n goes round the loop,
    // the new t reaches the phi; the old t is dead.
    let after_t = names(&f, &l.live_after(&f, b2, add_t));
    expect_test::expect![[r#"["v0:n", "v1:i", "v5:t"]"#]].assert_eq(&format!("{after_t:?}"));
    let after_i = names(&f, &l.live_after(&f, b2, add_i));
    expect_test::expect![[r#"["v0:n", "v5:t", "v6:i"]"#]].assert_eq(&format!("{after_i:?}"));
    // At the loop's test, the old t is live (printed on the way out).
    let b1 = f.layout[1];
    let test = names(&f, &l.live_after(&f, b1, f.blocks[b1].insts[0]));
    expect_test::expect![[r#"["v0:n", "v1:i", "v3:c", "v4:t"]"#]].assert_eq(&format!("{test:?}"));
}

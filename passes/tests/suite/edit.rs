//! Editing helpers (`flowc_passes::edit`).

use flowc_ir::BlockId;
use flowc_passes::edit::{new_block, Placements};

/// Placing blocks at once gives the layout placing them one by one
/// gives: several after one block (the later first), chains after new
/// blocks, anchors at the end and in the middle.
#[test]
fn placements_lay_out_as_new_block_does() {
    let text = "function f(v0:x) {
b0:
    jump b1
b1:
    jump b2
b2:
    return v0
}";
    let f = flowc_ir::parse::function("test.ir", text).expect("parses");
    let (b0, b1, b2) = (f.layout[0], f.layout[1], f.layout[2]);
    // (anchor: an original block, or the k-th new block)
    enum At {
        Old(BlockId),
        New(usize),
    }
    let steps = [At::Old(b1), At::Old(b1), At::New(0), At::Old(b2), At::New(2), At::Old(b0), At::New(1)];
    let (mut one_by_one, mut at_once) = (f.clone(), f.clone());
    let mut placements = Placements::default();
    let (mut made1, mut made2) = (Vec::new(), Vec::new());
    for step in &steps {
        let (a1, a2) = match *step {
            At::Old(b) => (b, b),
            At::New(k) => (made1[k], made2[k]),
        };
        made1.push(new_block(&mut one_by_one, None, a1));
        made2.push(placements.new_block(&mut at_once, None, a2));
    }
    placements.apply(&mut at_once);
    assert_eq!(made1, made2, "the same blocks are made");
    assert_eq!(one_by_one.layout, at_once.layout);
    assert_eq!(at_once.layout.len(), 3 + steps.len());
}

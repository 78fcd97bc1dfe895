//! Compaction (`flowc_ir::compact`): a function lowered by the front end
//! has unlinked slots in its arenas (the phis SSA construction found
//! trivial and removed); compacted, it holds only what its layout reaches,
//! numbered in layout order, and prints the same up to those numbers.

use expect_test::expect;
use flowc_ir::{Function, Module};

/// The arenas' sizes, and the linked blocks and instructions.
fn sizes(f: &Function) -> String {
    let linked: usize = f.layout.iter().map(|&b| f.block_insts(b).count()).sum();
    format!(
        "arenas: {} blocks, {} insts, {} values; linked: {} blocks, {} insts\n",
        f.blocks.len(),
        f.insts.len(),
        f.values.len(),
        f.layout.len(),
        linked
    )
}

fn lowered(src: &str) -> Module {
    let p = flowc_lang::syntax::parse("test", src).unwrap();
    let label = p.default_entry().unwrap();
    flowc_frontend::lower(&p, label).unwrap()
}

/// A loop reading three variables it never writes: the front end makes a
/// phi for each at the loop header and removes all three as trivial.
const LOOP: &str = "entry start(n = 3)
start:
    a = 1
    b = 2
    i = 0
    goto head
head:
    t = i < n
    if t goto body else goto done
body:
    c = a + b
    i = i + c
    goto head
done:
    print_and_stop(i)
";

#[test]
fn compaction_drops_unlinked_slots_and_renumbers_in_layout_order() {
    let mut m = lowered(LOOP);
    let before = format!("{}{}", sizes(&m.functions[0]), flowc_ir::print::function(&m.functions[0]));
    m.compact();
    let after = format!("{}{}", sizes(&m.functions[0]), flowc_ir::print::function(&m.functions[0]));
    expect![[r#"
        arenas: 4 blocks, 7 insts, 8 values; linked: 4 blocks, 4 insts
        main start(v0:n) {
        b0 start:
            jump b1
        b1 head:
            v1:i = phi [b0: 0, b2: v7]
            v3:t = lt v1, v0
            branch v3, b2, b3
        b2 body:
            v6:c = add 1, 2
            v7:i = add v1, v6
            jump b1
        b3 done:
            print v1
        }
    "#]]
    .assert_eq(&before);
    expect![[r#"
        arenas: 4 blocks, 4 insts, 5 values; linked: 4 blocks, 4 insts
        main start(v0:n) {
        b0 start:
            jump b1
        b1 head:
            v1:i = phi [b0: 0, b2: v4]
            v2:t = lt v1, v0
            branch v2, b2, b3
        b2 body:
            v3:c = add 1, 2
            v4:i = add v1, v3
            jump b1
        b3 done:
            print v1
        }
    "#]]
    .assert_eq(&after);
}

#[test]
fn compaction_keeps_sites_and_is_a_fixed_point() {
    let mut m = lowered(LOOP);
    let f = &m.functions[0];
    let sites = |f: &Function| -> Vec<String> {
        let mut out: Vec<String> = f.all_insts().map(|(_, i)| format!("{:?}", f.sites.inst(i))).collect();
        out.extend(f.layout.iter().map(|&b| format!("{:?}", f.sites.term(b))));
        out
    };
    let before = sites(f);
    m.compact();
    assert_eq!(sites(&m.functions[0]), before);
    // Compacting again changes nothing, numbers included.
    let again = flowc_ir::compact::compact(&m.functions[0]);
    assert_eq!(flowc_ir::print::function(&again), flowc_ir::print::function(&m.functions[0]));
    assert_eq!(again, m.functions[0]);
}

/// A trace with three guards whose middle one an optimizer removed (its
/// record, and the value only that record named, stay in the arenas).
const TRACE: &str = r#"trace loop(v0:i, v1:s) {
b0:
    jump b1
b1 loop:
    v2:s = phi [b0: v1, b1: v6]
    v3:i = phi [b0: v0, b1: v7]
    v4:c = lt.word v3, 1000
    guard_true v4, r0 else done
    v5:m = mod.word v3, 2
    guard_true v5, r1 else even
    v6:s = add.int v2, v3
    guard_true v6, r2 else zero
    v7:i = add.word v3, 1
    jump b1
resume r0 {
    frame [i = v3, s = v2]
}
resume r1 {
    frame [i = v3, s = v2, m = v5]
}
resume r2 {
    frame [i = v3, s = v6]
}
}
"#;

/// [`TRACE`] with its middle guard unlinked (its record `r1` named by no
/// guard now), and the records `r1` and `r2` as outside references.
fn trace_without_its_middle_guard() -> (flowc_ir::Function, Vec<flowc_ir::ResumeId>) {
    let mut f = flowc_ir::parse::module("trace", TRACE).unwrap().functions.remove(0);
    let body = f.layout[1];
    let middle = f.blocks[body].insts[3];
    assert!(matches!(f.insts[middle].kind, flowc_ir::InstKind::Guard { .. }));
    f.blocks[body].insts.retain(|i| *i != middle);
    (f, vec![record(1), record(2)])
}

fn record(n: u32) -> flowc_ir::ResumeId {
    flowc_ir::ResumeId::from_raw(la_arena::RawIdx::from_u32(n))
}

/// Compaction drops the resume records no guard or exit names and
/// renumbers the others in order, guards and given references alike
/// (the JIT's restart records): a trace's records are most of what the
/// JIT keeps of it.
#[test]
fn compaction_drops_the_records_no_guard_names() {
    let (f, mut restarts) = trace_without_its_middle_guard();
    let compacted = flowc_ir::compact::compact_with(&f, &mut restarts);
    assert_eq!(compacted.resumes.len(), 2, "r1 is dropped");
    assert_eq!(restarts, vec![record(1)], "r2 is now r1; r1, gone, is dropped from the list");
    expect![[r#"
        trace loop(v0:i, v1:s) {
        b0:
            jump b1
        b1 loop:
            v2:s = phi [b0: v1, b1: v6]
            v3:i = phi [b0: v0, b1: v7]
            v4:c = lt.word v3, 1000
            guard_true v4, r0 else done
            v5:m = mod.word v3, 2
            v6:s = add.int v2, v3
            guard_true v6, r1 else zero
            v7:i = add.word v3, 1
            jump b1
        resume r0 {
            frame [i = v3, s = v2]
        }
        resume r1 {
            frame [i = v3, s = v6]
        }
        }
    "#]]
    .assert_eq(&flowc_ir::print::function(&compacted));
}

/// Compacting a function it may take apart (`compact_owned`, the JIT's
/// way: it moves what it keeps) gives what copying gives, records and
/// given references renumbered alike.
#[test]
fn compacting_by_moving_gives_what_copying_gives() {
    let (f, mut copied_restarts) = trace_without_its_middle_guard();
    let mut moved_restarts = copied_restarts.clone();
    let copied = flowc_ir::compact::compact_with(&f, &mut copied_restarts);
    let moved = flowc_ir::compact::compact_owned(f, &mut moved_restarts);
    assert_eq!(flowc_ir::print::function(&moved), flowc_ir::print::function(&copied));
    assert_eq!(moved_restarts, copied_restarts);
    assert_eq!(moved.resumes.len(), copied.resumes.len());
}

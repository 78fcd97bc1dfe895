//! The pass table (`flowc_passes::PIPELINE`): what each pass reads, an
//! earlier pass writes, and what it writes, a later pass reads.

use flowc_passes::*;

#[test]
fn every_pass_reads_only_what_an_earlier_pass_writes() {
    for (k, pass) in PIPELINE.iter().enumerate() {
        for fact in pass.reads {
            let writer = PIPELINE[..k].iter().find(|p| p.writes.contains(fact));
            assert!(writer.is_some(), "{} reads {fact:?}, which no earlier pass writes", pass.name);
        }
    }
    // Every result is read by a later pass, except the loop forest,
    // which is for `--dump-after loops` (the code generator, the JIT
    // and the explorer compute `flowc_ir::loops` themselves, on the
    // final IR).
    for (k, pass) in PIPELINE.iter().enumerate() {
        for fact in pass.writes {
            let read = PIPELINE[k + 1..].iter().any(|p| p.reads.contains(fact));
            assert_eq!(read, *fact != Fact::Loops, "{} writes {fact:?}", pass.name);
        }
    }
}

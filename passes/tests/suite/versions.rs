//! Loop versioning: the small version of a program assumes the main
//! graph's integer parameters are machine words, so a counter bounded by
//! one (`j < n`) is a word too and its arithmetic needs no checks. Checked
//! and run after every pass like every pass test.

use crate::support;

use expect_test::expect;
use flowc_lang::Symbol;
use flowc_passes::context::Options;
use flowc_passes::versions::{pipeline, Wanted};

const NESTED: &str = r#"entry start(n = 30)

start:
    total = 0
    i = 0
    goto outer
outer:
    c = i < n
    if c goto row else goto done
row:
    j = 0
    goto inner
inner:
    d = j < n
    if d goto body else goto next
body:
    total = total + i
    total = total + j
    j = j + 1
    goto inner
next:
    i = i + 1
    goto outer
done:
    print_and_stop(total)
"#;

#[test]
fn integer_params_are_those_arithmetic_reads() {
    let (_, lowered) = support::lower(NESTED);
    assert_eq!(flowc_passes::versions::integer_params(&lowered), [Symbol::intern("n")]);
    let (_, lowered) = support::lower(
        r#"entry start(l = [1], n = 2)

start:
    x = l[0]
    print_and_stop(n)
"#,
    );
    assert!(flowc_passes::versions::integer_params(&lowered).is_empty());
}

#[test]
fn counters_bounded_by_a_word_parameter_are_words() {
    let options = Options { small_params: vec![Symbol::intern("n")], ..Options::default() };
    let run = support::run_until_with(NESTED, "dce", options);
    expect![[r#"
        main start(v0:n) {
        b0 start:
            jump b1
        b1 outer:
            v1:i = phi [b0: 0, b5: v9]
            v4:total = phi [b0: 0, b5: v10]
            v3:c = lt.word v1, v0
            branch v3, b2, b6
        b2 row:
            jump b3
        b3 inner:
            v5:j = phi [b2: 0, b4: v13]
            v10:total = phi [b2: v4, b4: v12]
            v7:d = lt.word v5, v0
            branch v7, b4, b5
        b4 body:
            v11:total = add.int v1, v10
            v12:total = add.int v5, v11
            v13:j = add.word v5, 1
            jump b3
        b5 next:
            v9:i = add.word v1, 1
            jump b1
        b6 done:
            print v4
        }
    "#]]
    .assert_eq(&flowc_ir::print::module(&run.module));
}

#[test]
fn a_run_that_knows_its_environment_optimizes_the_version_it_takes() {
    let n = Symbol::intern("n");
    let take = |env: &[(Symbol, flowc_lang::Value)]| {
        let (_, lowered) = support::lower(NESTED);
        let both = pipeline(lowered.clone(), &Options::default(), Wanted::Both, |_, _, _| {});
        let one = pipeline(lowered, &Options::default(), Wanted::For(env), |_, _, _| {});
        assert!(one.small.is_none(), "one version");
        // The very module the pipeline makes for that version when it
        // makes both.
        let same = match &both.small {
            Some((m, _)) if !one.assumed.is_empty() => flowc_ir::print::module(m),
            _ => flowc_ir::print::module(&both.generic),
        };
        assert_eq!(flowc_ir::print::module(&one.generic), same);
        // The small version's counters are words; the generic one has none.
        assert_eq!(flowc_ir::print::module(&one.generic).contains(".word"), !one.assumed.is_empty());
        one.assumed
    };
    assert_eq!(take(&[(n, flowc_lang::Value::Int(30))]), [n]);
    // Out of the 32-bit range, not an integer, or unbound: the generic one.
    assert!(take(&[(n, flowc_lang::Value::Int(1 << 40))]).is_empty());
    assert!(take(&[(n, flowc_lang::Value::Atom(Symbol::intern("a")))]).is_empty());
    assert!(take(&[]).is_empty());
}

/// A loop over an interpreter's program, a list of the environment.
const OPS: &str = r#"entry start(ops = [3, 1, 2, 1])

start:
    n = len(ops)
    i = 0
    s = 0
    goto loop
loop:
    more = i < n
    if more goto body else goto done
body:
    op = ops[i]
    s = s + op
    i = i + 1
    goto loop
done:
    print_and_stop(s)
"#;

#[test]
fn a_run_that_knows_a_list_it_takes_reads_it_as_that_constant() {
    // Compiled for its environment, the run knows `ops`: its length, and
    // what reading it inside it gives (no bounds or kind checks), so the
    // sum of its small items and the index are machine words.
    let ops = Symbol::intern("ops");
    let list = flowc_lang::Value::list([3, 1, 2, 1].map(flowc_lang::Value::Int).to_vec());
    let options = Options { known_lists: vec![(ops, list.clone())], ..Options::default() };
    let run = support::run_until_with(OPS, "dce", options);
    expect![[r#"
        main start(v0:ops) {
        b0 start:
            jump b1
        b1 loop:
            v2:i = phi [b0: 0, b2: v9]
            v5:s = phi [b0: 0, b2: v8]
            v4:more = lt.word v2, 4
            branch v4, b2, b3
        b2 body:
            v7:op = readlist.word [3, 1, 2, 1], v2
            v8:s = add.int v5, v7
            v9:i = add.word v2, 1
            jump b1
        b3 done:
            print v5
        }
    "#]]
    .assert_eq(&flowc_ir::print::module(&run.module));
    // The pipeline for a known environment takes the lists from it (and
    // compacts the result).
    let (_, lowered) = support::lower(OPS);
    let env = [(ops, list)];
    let one = pipeline(lowered, &Options::default(), Wanted::For(&env), |_, _, _| {});
    let mut compacted = run.module.clone();
    compacted.compact();
    assert_eq!(flowc_ir::print::module(&one.generic), flowc_ir::print::module(&compacted));
}

/// The generic version assumes nothing whatever options the pipeline is
/// given: code runs it for any input the small one's entry test turns
/// away. The hook sees each version after every pass and after
/// compaction, in order.
#[test]
fn the_generic_version_assumes_nothing() {
    use flowc_passes::versions::{Stage, Version};
    let n = Symbol::intern("n");
    let (_, lowered) = support::lower(NESTED);
    let options = Options { small_params: vec![n], ..Options::default() };
    let mut seen = Vec::new();
    let both = pipeline(lowered.clone(), &options, Wanted::Both, |version, stage, _| {
        seen.push((version, matches!(stage, Stage::Compacted)));
    });
    assert!(
        !flowc_ir::print::module(&both.generic).contains(".word"),
        "the generic version took the options' assumption"
    );
    let (small, params) = both.small.as_ref().expect("a small version");
    assert!(flowc_ir::print::module(small).contains(".word"));
    assert_eq!(params, &[n]);
    let generic = pipeline(lowered, &options, Wanted::Generic, |_, _, _| {});
    assert!(!flowc_ir::print::module(&generic.generic).contains(".word"));
    // Each version: its passes, then its compaction last.
    let passes = flowc_passes::PIPELINE.len();
    for version in [Version::Small, Version::Generic] {
        let mine: Vec<bool> = seen.iter().filter(|(v, _)| *v == version).map(|(_, c)| *c).collect();
        assert_eq!(mine.len(), passes + 1, "{version:?}");
        assert!(mine[..passes].iter().all(|c| !c) && mine[passes], "{version:?}: {mine:?}");
    }
}

//! Split functions (`flowc_codegen`, `lower/frame.rs`): a huge function is
//! compiled as regions that continue in one another by tail calls, values
//! crossing regions (and every value the collector must see) kept in a
//! frame. Forcing the split on every function, with regions of 1, 2 and 5
//! instructions, puts region boundaries everywhere — inside loops, between
//! a definition and its uses, on edges into phis, in the middle of blocks —
//! and native code must still agree with the reference interpreter, its
//! errors and their places included, with the collector running at every
//! allocation.

use flowc_lang::heap;
use flowc_tests::engines;
use flowc_tests::{corpus, gen};

fn split(max: usize) -> flowc_codegen::Options {
    flowc_codegen::Options { split: Some(max), ..Default::default() }
}

const SIZES: [usize; 3] = [1, 2, 5];

#[test]
fn split_code_matches_reference_on_the_corpus_and_generated_programs() {
    let count = gen::seed_count(150);
    let compared = flowc_codegen::with_stack(move || {
        let mut compared = 0;
        for case in engines::cases(corpus::with_generated(count)).filter(|c| c.finishes()) {
            let versions = case.versions();
            for max in SIZES {
                let got = engines::native_with(&versions, &case.env, split(max));
                assert_eq!(got, case.expected, "{}, regions of {max}", case.name);
            }
            // The split happened: each function's code is its driver and
            // a function per region (at least one).
            let functions = versions.generic.functions.len();
            let native = flowc_codegen::Native::compile_versions(&versions.generic, None, split(1)).unwrap();
            assert!(native.code().len() >= 2 * functions, "{}: {} codes", case.name, native.code().len());
            compared += 1;
        }
        compared
    });
    assert!(compared > 100, "only {compared} programs compared");
}

#[test]
fn split_code_errors_name_the_interpreters_place() {
    let compared = engines::check_error_cases(gen::seed_count(150), |case, expected| {
        let versions = case.versions();
        for max in SIZES {
            let got = engines::native_error_with(&case.program, &versions, &case.env, split(max));
            assert_eq!(got.as_deref(), Some(expected), "{}, regions of {max}", case.name);
        }
    });
    assert!(compared > 30, "only {compared} errors compared");
}

/// Allocation-heavy programs with a collection at every allocation: the
/// frame is the collector's view of a split function's values, so an
/// object held only across a region boundary, or only in a register of a
/// region, must survive.
#[test]
fn split_code_keeps_its_objects_when_collecting_at_every_allocation() {
    let count = gen::seed_count(40);
    let collections = flowc_codegen::with_stack(move || {
        let before = heap::stats().collections;
        for case in engines::cases(gen::alloc_programs(count)).filter(|c| c.finishes()) {
            let versions = case.versions();
            heap::with(|h| h.set_stress(true));
            for max in SIZES {
                let got = engines::native_with(&versions, &case.env, split(max));
                assert_eq!(got, case.expected, "{}, regions of {max}", case.name);
            }
            heap::with(|h| h.set_stress(false));
        }
        heap::stats().collections - before
    });
    assert!(collections > 1000, "only {collections} collections");
}

/// A hot region (code that never tiers up compiles it optimized) gives a
/// value only it reads, and which the collector must see, to its own
/// stack maps instead of storing it in the frame where it is defined
/// (`Frame::for_collector_only`): Cranelift keeps it in a register and
/// stores it before each call it lives across. A list built and walked by
/// loops that stay whole in one region, its head held in a register
/// across every allocation, must survive a collection at each one. (The
/// walk counts its steps, so that a lost list reads wrong values rather
/// than following a stale link forever.)
#[test]
fn a_hot_region_roots_what_only_it_reads_in_its_own_stack_maps() {
    let text = "entry main(n = 300)
main:
    head = 0
    i = 0
    goto build
build:
    node = new node
    node.next = head
    node.v = i
    head = node
    i = i + 1
    c = i < n
    if c goto build else goto sum
sum:
    s = 0
    goto walk
walk:
    v = head.v
    s = s + v
    head = head.next
    i = i - 1
    c = 0 < i
    if c goto walk else goto done
done:
    print_and_stop(s)
";
    let collections = flowc_codegen::with_stack(move || {
        let p = flowc_lang::syntax::parse("hot_region_list.fg", text).expect("it parses");
        let (label, env) = engines::start(&p);
        let expected = engines::reference(&p, label, &env);
        assert_eq!(expected, engines::Outcome::Output(format!("{}\n", (0..300).sum::<i64>())));
        let versions = engines::optimize_versions(flowc_frontend::lower(&p, label).expect("it lowers"));
        let before = heap::stats().collections;
        heap::with(|h| h.set_stress(true));
        let got = engines::native_with(&versions, &env, split(60));
        heap::with(|h| h.set_stress(false));
        assert_eq!(got, expected);
        heap::stats().collections - before
    });
    assert!(collections >= 300, "only {collections} collections");
}

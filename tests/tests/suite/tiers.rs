//! Tiered code (`flowc_codegen::tiers`): functions that may be hot start
//! in tier 0 (cold code in regions) and are compiled optimized once they
//! have run often enough, mid-run; huge functions do so region by region.
//! With the thresholds made tiny (every function tiered, tiering up after
//! 1, 2 or 3 calls; or every function cut into small regions, each
//! tiering up after 1, 2 or 7 entries), programs switch tiers at every
//! point a corpus or generated program reaches, and native code must
//! still agree with the reference interpreter, its errors and their
//! places included, with the collector running at every allocation.

use flowc_lang::heap;
use flowc_tests::engines;
use flowc_tests::{corpus, gen};

fn tiered((after, background): (u32, bool)) -> flowc_codegen::Options {
    let tiering = flowc_codegen::tiers::Tiering { after, region_after: after, background };
    flowc_codegen::Options { tiering: Some(tiering), ..Default::default() }
}

/// The case of program `text` (run from its entry with its defaults).
fn case_of(text: &str) -> engines::Case {
    let program = flowc_lang::syntax::parse("test", text).unwrap();
    engines::cases([("test".to_string(), program)]).next().unwrap()
}

/// Program `case` compiled (its generic version) under `options`.
fn compiled(case: &engines::Case, options: flowc_codegen::Options) -> flowc_codegen::Native {
    flowc_codegen::Native::compile_versions(&case.versions().generic, None, options).unwrap()
}

/// Tiering up after so many calls or iterations, compiled at once or in
/// the background (where the code goes on in tier 0 until it is ready).
const AFTER: [(u32, bool); 3] = [(1, false), (3, false), (2, true)];

/// Every way the tests below tier code, named: whole functions tiering up
/// after [`AFTER`], and every function tiered region by region
/// ([`BY_REGION`]); `true` for the latter.
fn tierings() -> Vec<(String, flowc_codegen::Options, bool)> {
    let whole = AFTER.into_iter().map(|after| (format!("tiering up after {after:?}"), tiered(after), false));
    let regions = BY_REGION.into_iter().map(|(after, split)| {
        (format!("regions of {split}, tiering up after {after:?}"), by_region(after, split), true)
    });
    whole.chain(regions).collect()
}

#[test]
fn tiered_code_matches_reference_on_the_corpus_and_generated_programs() {
    let count = gen::seed_count(150);
    let (compared, [functions, regions]) = flowc_codegen::with_stack(move || {
        let (mut compared, mut tiered_up) = (0, [0, 0]);
        for case in engines::cases(corpus::with_generated(count)).filter(|c| c.finishes()) {
            let versions = case.versions();
            for (how, options, by_region) in tierings() {
                let (got, ups) = engines::native_tiered(&versions, &case.env, options);
                assert_eq!(got, case.expected, "{}, {how}", case.name);
                tiered_up[usize::from(by_region)] += ups;
            }
            compared += 1;
        }
        (compared, tiered_up)
    });
    assert!(compared > 100, "only {compared} programs compared");
    assert!(functions > 100, "only {functions} functions tiered up");
    assert!(regions > 300, "only {regions} regions tiered up");
}

#[test]
fn tiered_code_errors_name_the_interpreters_place() {
    let compared = engines::check_error_cases(gen::seed_count(150), |case, expected| {
        let versions = case.versions();
        for (how, options, _) in tierings() {
            let got = engines::native_error_with(&case.program, &versions, &case.env, options);
            assert_eq!(got.as_deref(), Some(expected), "{}, {how}", case.name);
        }
    });
    assert!(compared > 30, "only {compared} errors compared");
}

/// Allocation-heavy programs with a collection at every allocation: a
/// tier-up happens inside a call, with the caller's objects live in its
/// frame, and compiles constants into the heap; a region's optimized tier
/// allocates in line and is entered with the frame's objects, so every
/// object live across a region boundary or a tier-up must be in the frame.
#[test]
fn tiered_code_keeps_its_objects_when_collecting_at_every_allocation() {
    let count = gen::seed_count(40);
    let collections = flowc_codegen::with_stack(move || {
        let before = heap::stats().collections;
        for case in engines::cases(gen::alloc_programs(count)).filter(|c| c.finishes()) {
            let versions = case.versions();
            heap::with(|h| h.set_stress(true));
            for (how, options, _) in tierings() {
                let (got, _) = engines::native_tiered(&versions, &case.env, options);
                assert_eq!(got, case.expected, "{}, {how}", case.name);
            }
            heap::with(|h| h.set_stress(false));
        }
        heap::stats().collections - before
    });
    assert!(collections > 1000, "only {collections} collections");
}

/// A main loop that runs long enough tiers up in the middle (on-stack
/// replacement at its header), once, and goes on with every value it had:
/// the running total, the counter, and an object made before the loop.
#[test]
fn a_hot_main_loop_continues_in_the_optimized_tier() {
    let text = "entry start(n = 50)\nstart:\n    p = new point\n    p.x = 7\n    s = 0\n    i = 0\n    goto head\nhead:\n    t = i < n\n    if t goto body else goto done\nbody:\n    x = p.x\n    s = s + x\n    s = s * 3\n    s = s % 1000003\n    i = i + 1\n    goto head\ndone:\n    print_and_stop(s)\n";
    let (got, ups, expected) = flowc_codegen::with_stack(move || {
        let case = case_of(text);
        let (got, ups) = engines::native_tiered(&case.versions(), &case.env, tiered((10, false)));
        (got, ups, case.expected)
    });
    assert_eq!(got, expected);
    assert_eq!(ups, 1, "the loop tiers up once");
}

/// Compiled in the background, the optimized tier is installed at a later
/// count once the worker has finished it, while the tier-0 code goes on:
/// the first runs may end before that; a later one finds it ready.
#[test]
fn a_tier_compiled_in_the_background_is_installed_when_ready() {
    let text = "entry start(n = 3000)\nstart:\n    s = 0\n    i = 0\n    goto head\nhead:\n    t = i < n\n    if t goto body else goto done\nbody:\n    s = s + i\n    s = s % 1000003\n    i = i + 1\n    goto head\ndone:\n    print_and_stop(s)\n";
    flowc_codegen::with_stack(move || {
        let case = case_of(text);
        let native = compiled(&case, tiered((100, true)));
        for run in 1..=200 {
            let got = engines::outcome(native.run(&case.env, 1000));
            assert_eq!(got, case.expected, "run {run}");
            if native.tier_ups().count > 0 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the background compilation never got installed");
    });
}

/// Runs of the same compiled program: the first tiers its loop up by
/// on-stack replacement, the second compiles main optimized (its second
/// call), which the entry then calls from its code slot; every run gives
/// the reference's answer.
#[test]
fn later_runs_of_tiered_code_start_in_the_optimized_tier() {
    let text = "entry start(n = 50)\nstart:\n    s = 0\n    i = 0\n    goto head\nhead:\n    t = i < n\n    if t goto body else goto done\nbody:\n    s = s + i\n    s = s * 7\n    s = s % 1000003\n    i = i + 1\n    goto head\ndone:\n    print_and_stop(s)\n";
    flowc_codegen::with_stack(move || {
        let case = case_of(text);
        let native = compiled(&case, tiered((2, false)));
        let mut ups = Vec::new();
        for run in 1..=5 {
            let got = engines::outcome(native.run(&case.env, 1000));
            assert_eq!(got, case.expected, "run {run}");
            ups.push(native.tier_ups().count);
        }
        assert_eq!(ups, [1, 2, 2, 2, 2], "optimized tiers compiled by the end of each run");
    });
}

/// What tiering is for: a function called from a loop counted from the
/// input starts as tier 0 (cut into regions: a driver and region code,
/// where compiled optimized from the start it is one function), runs there
/// while it is called fewer times than the threshold, and is compiled
/// optimized, mid-run, once called more. (Main's loop, counted from the
/// input too, tiers up on its own count.)
#[test]
fn a_function_called_from_a_hot_loop_starts_in_tier_0_and_tiers_up_when_called_often() {
    let mut text = String::from("entry start(n = 3)\nfunction g(a):\n    e:\n");
    for k in 0..20 {
        text += &format!("        a = a + {k}\n        a = a % 1000003\n");
    }
    text += "        return a\nstart:\n    s = 0\n    k = n\n    goto head\nhead:\n    if k goto body else goto done\nbody:\n    s = call g(s) then back\nback:\n    k = k - 1\n    goto head\ndone:\n    print_and_stop(s)\n";
    flowc_codegen::with_stack(move || {
        let case = case_of(&text);
        let g = flowc_lang::Symbol::intern("g");
        let codes_of_g =
            |native: &flowc_codegen::Native| native.code().iter().filter(|(name, _, _)| *name == g).count();
        assert_eq!(codes_of_g(&compiled(&case, flowc_codegen::Options::default())), 1, "untiered: g compiled whole");
        let native = compiled(&case, tiered((5, false)));
        let tier0 = codes_of_g(&native);
        assert!(tier0 >= 2, "tier 0: a driver and regions, {tier0} codes");
        // Three calls: below the threshold.
        assert_eq!(engines::outcome(native.run(&case.env, 1000)), case.expected);
        assert_eq!(codes_of_g(&native), tier0, "three calls of g stay in tier 0");
        // Ten calls, on code compiled afresh: g tiers up during the run.
        let native = compiled(&case, tiered((5, false)));
        let env = [(flowc_lang::Symbol::intern("n"), flowc_lang::Value::Int(10))];
        let expected = engines::reference(&case.program, case.label, &env);
        assert_eq!(engines::outcome(native.run(&env, 1000)), expected);
        assert_eq!(codes_of_g(&native), tier0 + 1, "g compiled optimized once, mid-run");
    });
}

/// Tiering region by region ([`flowc_codegen::plan::Plan::by_region`]),
/// which huge functions get, tried on every function: the split forced
/// into regions of `split` instructions, each region tiering up after
/// `region_after` entries or iterations (at once, or in the background).
fn by_region((region_after, background): (u32, bool), split: usize) -> flowc_codegen::Options {
    let tiering = flowc_codegen::tiers::Tiering { after: 1, region_after, background };
    flowc_codegen::Options { tiering: Some(tiering), split: Some(split), ..Default::default() }
}

/// Thresholds and region sizes: regions of a few instructions, where
/// every loop crosses regions and every block boundary is an entry, and
/// bigger ones holding whole loops; regions tiering up at their first
/// entry (so their tier-0 code barely runs), and later, from loop headers
/// mid-loop.
const BY_REGION: [((u32, bool), usize); 3] = [((1, false), 4), ((7, false), 16), ((2, true), 8)];

/// What tiering region by region is for: a huge main graph (straight-line
/// code around one small hot loop) is compiled for compile time, cut into
/// regions; only the region of the hot loop runs often enough to be
/// compiled optimized, mid-loop, and the run goes on there with every
/// value it had (the running total, the counter, an object made before).
#[test]
fn a_huge_function_compiles_only_its_hot_region_optimized() {
    let text = huge_with_hot_loop();
    flowc_codegen::with_stack(move || {
        let case = case_of(&text);
        let main = case.versions().generic.main().map(|f| (f.name, f.is_huge())).unwrap();
        assert!(main.1, "main is huge");
        let codes_of_main =
            |native: &flowc_codegen::Native| native.code().iter().filter(|(n, _, _)| *n == main.0).count();
        let tiering = flowc_codegen::tiers::Tiering { after: 10, region_after: 100, background: false };
        let native = compiled(&case, flowc_codegen::Options { tiering: Some(tiering), ..Default::default() });
        let regions = codes_of_main(&native) - 1;
        assert!(regions > 10, "a driver and regions: {regions} regions");
        // Ten iterations: below the threshold, nothing tiers up.
        let env = [(flowc_lang::Symbol::intern("n"), flowc_lang::Value::Int(10))];
        let expected = engines::reference(&case.program, case.label, &env);
        assert_eq!(engines::outcome(native.run(&env, 1000)), expected);
        assert_eq!(native.tier_ups().count, 0, "ten iterations stay in tier 0");
        // Five hundred: the loop's region tiers up, and no other.
        assert_eq!(engines::outcome(native.run(&case.env, 1000)), case.expected);
        assert_eq!((native.tier_ups().count, native.tier_ups().regions), (1, 1), "one region compiled optimized");
        assert_eq!(codes_of_main(&native), regions + 2, "the optimized region is code of main");
        // A later run enters the optimized region at once: nothing more
        // is compiled.
        assert_eq!(engines::outcome(native.run(&case.env, 1000)), case.expected);
        assert_eq!(native.tier_ups().count, 1, "the second run compiles nothing");
    });
}

/// A huge main graph: straight-line code around one small hot loop,
/// which reads a field of an object made before it, `n` rounds.
fn huge_with_hot_loop() -> String {
    let mut text = String::from("entry start(n = 500)\nstart:\n    p = new point\n    p.x = 3\n    a = n\n");
    for k in 0..(flowc_ir::HUGE_INSTS / 2) {
        text += &format!("    a = a + {k}\n    a = a % 1000003\n");
    }
    text += "    s = 0\n    i = 0\n    goto head\nhead:\n    t = i < n\n    if t goto body else goto done\nbody:\n    x = p.x\n    s = s + x\n    s = s * 3\n    s = s % 1000003\n    i = i + 1\n    goto head\ndone:\n    s = s + a\n    print_and_stop(s)\n";
    text
}

/// Code that never tiers up — what `flowc build` puts in an executable,
/// or a run without tiering — has a huge function's hot regions compiled
/// optimized from the start (`Plan::hot_region`): the hot loop's region
/// of the huge main graph is lowered for speed, the straight-line regions
/// and the driver for compile time, and the code computes what the
/// interpreter does.
#[test]
fn a_huge_function_that_never_tiers_up_has_its_hot_region_compiled_optimized() {
    let text = huge_with_hot_loop();
    flowc_codegen::with_stack(move || {
        let case = case_of(&text);
        let generic = &case.versions().generic;
        let main = generic.main().map(|f| f.name).unwrap();
        // How `flowc build` lowers the program, per function and region.
        let listing = flowc_codegen::object::lowered(generic).unwrap();
        let tiers: Vec<&str> = listing
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("; {main} (")))
            .map(|rest| rest.trim_end_matches(')'))
            .collect();
        let optimized = tiers.iter().filter(|&&t| t == "Optimized").count();
        let cheap = tiers.iter().filter(|&&t| t == "Cheap").count();
        assert_eq!(optimized, 1, "the hot loop's region, and nothing else: {tiers:?}");
        assert!(cheap > 10, "the straight-line regions and the driver: {cheap}");
        // The same straight-line code with the loop's rounds known: no
        // region is hot.
        let counted =
            text.replace("i = 0\n", "i = 5\n").replace("t = i < n\n", "t = i\n").replace("i = i + 1\n", "i = i - 1\n");
        let case = case_of(&counted);
        let generic = &case.versions().generic;
        let counted_main = generic.main().unwrap();
        assert!(counted_main.is_huge() && !flowc_ir::loops::LoopForest::new(counted_main).is_empty(), "still a loop");
        let listing = flowc_codegen::object::lowered(generic).unwrap();
        assert!(listing.contains(&format!("; {main} (Cheap)")), "split into regions");
        assert!(!listing.contains(&format!("; {main} (Optimized)")), "a loop of five rounds is not hot");
        // Run without tiering, the same lowering computes the right thing.
        let case = case_of(&text);
        let native = compiled(&case, flowc_codegen::Options::default());
        assert_eq!(engines::outcome(native.run(&case.env, 1000)), case.expected);
    });
}

/// Both kinds of tiering in one program: a huge main graph, tiered
/// region by region, whose hot loop calls a small function, tiered as a
/// whole. The loop's region tiers up, and so does the function, called
/// from both tiers of the region through its code slot.
#[test]
fn a_huge_function_tiered_by_region_calls_a_function_tiered_whole() {
    let mut text = String::from("entry start(n = 400)\nfunction g(a, b):\n    e:\n");
    // Too big to be inlined.
    for k in 0..20 {
        text += &format!("        a = a + b\n        a = a % {}\n", 1000003 + k);
    }
    text += "        return a\nstart:\n    a = n\n";
    for k in 0..(flowc_ir::HUGE_INSTS / 2) {
        text += &format!("    a = a + {k}\n    a = a % 1000003\n");
    }
    text += "    s = 0\n    i = 0\n    goto head\nhead:\n    t = i < n\n    if t goto body else goto done\nbody:\n    s = call g(s, i) then back\nback:\n    i = i + 1\n    goto head\ndone:\n    s = s + a\n    print_and_stop(s)\n";
    flowc_codegen::with_stack(move || {
        let case = case_of(&text);
        let tiering = flowc_codegen::tiers::Tiering { after: 50, region_after: 100, background: false };
        let native = compiled(&case, flowc_codegen::Options { tiering: Some(tiering), ..Default::default() });
        assert_eq!(engines::outcome(native.run(&case.env, 1000)), case.expected);
        assert_eq!(native.tier_up_failures(), 0);
        let (all, regions) = (native.tier_ups().count, native.tier_ups().regions);
        assert!(regions >= 1, "main's loop region tiered up");
        assert!(all > regions, "g tiered up too: {all} tiers, {regions} of them regions");
    });
}

/// An optimized tier that fails to compile leaves the tier-0 code running,
/// correct, and is not asked for again: for a function (its loop's
/// on-stack replacement) and for a region of a huge function, the run
/// gives the reference's answer with one failure counted, and a second
/// run asks for nothing more.
#[test]
fn a_tier_that_fails_to_compile_leaves_tier_0_running_and_is_not_asked_for_again() {
    let small = "entry start(n = 500)\nstart:\n    s = 0\n    i = 0\n    goto head\nhead:\n    t = i < n\n    if t goto body else goto done\nbody:\n    s = s + i\n    s = s % 1000003\n    i = i + 1\n    goto head\ndone:\n    print_and_stop(s)\n";
    let mut huge = String::from("entry start(n = 500)\nstart:\n    a = n\n");
    for k in 0..(flowc_ir::HUGE_INSTS / 2) {
        huge += &format!("    a = a + {k}\n    a = a % 1000003\n");
    }
    huge += "    s = 0\n    i = 0\n    goto head\nhead:\n    t = i < n\n    if t goto body else goto done\nbody:\n    s = s + i\n    s = s % 1000003\n    i = i + 1\n    goto head\ndone:\n    s = s + a\n    print_and_stop(s)\n";
    flowc_codegen::with_stack(move || {
        for text in [small, huge.as_str()] {
            let case = case_of(text);
            let tiering = flowc_codegen::tiers::Tiering { after: 10, region_after: 10, background: false };
            let options = flowc_codegen::Options { tiering: Some(tiering), fail_tier_ups: true, ..Default::default() };
            let native = compiled(&case, options);
            for run in 1..=2 {
                assert_eq!(engines::outcome(native.run(&case.env, 1000)), case.expected, "run {run}");
                assert_eq!(native.tier_up_failures(), 1, "one failure, run {run}");
                assert_eq!(native.tier_ups().count, 0, "nothing installed, run {run}");
            }
        }
    });
}

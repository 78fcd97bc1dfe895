//! Native code (the eight passes, then Cranelift) agrees with the reference
//! interpreter: same output or same error kind, over the corpus (the
//! generated programs: [`super::matrix`]), and names the places of errors
//! as it does.

use flowc_tests::engines;
use flowc_tests::{corpus, gen};

/// Both versions as `flowc build` makes them, and the one version
/// `flowc run` makes for the input (lists it binds compiled in as
/// constants), on every corpus program from every label.
#[test]
fn native_matches_reference_on_the_corpus() {
    let compared = flowc_codegen::with_stack(move || {
        let mut compared = 0;
        for case in engines::corpus_cases_from_every_label().filter(|c| c.finishes()) {
            assert_eq!(engines::native(&case.versions(), &case.env), case.expected, "{}", case.name);
            // As `flowc run` compiles it: one version, made for the input.
            assert_eq!(engines::native(&case.run_version(), &case.env), case.expected, "{}, run's version", case.name);
            compared += 1;
        }
        compared
    });
    assert!(compared > 100, "only {compared} runs compared");
}

/// Errors in native code name the same place as the interpreter's: the
/// front end records each instruction's source statement and the passes
/// keep it.
#[test]
fn native_errors_name_the_interpreters_place() {
    let compared = engines::check_error_cases(gen::seed_count(500), |case, expected| {
        let got = engines::native_error(&case.program, &case.versions(), &case.env);
        assert_eq!(got.as_deref(), Some(expected), "{}", case.name);
    });
    assert!(compared > 30, "only {compared} errors compared");
}

/// The small version runs only when the parameters it assumes are 32-bit
/// integers: a larger integer (word or bignum), an atom or an unbound
/// parameter takes the generic version, which computes what the
/// interpreter does.
#[test]
fn versions_choose_by_their_parameters() {
    let outcomes = flowc_codegen::with_stack(|| {
        use flowc_lang::{Symbol, Value};
        let source = r#"entry start(n = 5)

start:
    i = 0
    s = 0
    goto loop
loop:
    c = i < n
    if c goto body else goto done
body:
    s = s + i
    i = i + 1
    d = i < 10
    if d goto loop else goto done
done:
    print_and_stop(s)
"#;
        let program = flowc_lang::syntax::parse("versions.fg", source).unwrap();
        let (label, n) = (Symbol::intern("start"), Symbol::intern("n"));
        let lowered = engines::lower(&program, label);
        assert_eq!(flowc_passes::versions::integer_params(&lowered), [n]);
        let envs: Vec<Vec<(Symbol, Value)>> = vec![
            vec![(n, Value::Int(5))],
            vec![(n, Value::Int((1 << 31) - 1))],
            vec![(n, Value::Int(1 << 31))],
            vec![(n, Value::Int(-(1 << 31)))],
            vec![(n, Value::Int(-(1 << 31) - 1))],
            vec![(n, Value::Int(1 << 62))],
            vec![(n, Value::from_big(num_bigint::BigInt::from(1) << 70))],
            vec![(n, Value::Atom(Symbol::intern("many")))],
            vec![],
        ];
        envs.iter()
            .map(|env| {
                let expected = engines::reference(&program, label, env);
                let versions = engines::optimize_versions_checked(lowered.clone(), env, &expected, "versions.fg");
                assert!(versions.small.is_some(), "n is an integer parameter");
                let got = engines::native(&versions, env);
                assert_eq!(got, expected);
                format!("{got:?}")
            })
            .collect::<Vec<_>>()
    });
    assert_eq!(
        outcomes,
        [
            "Output(\"10\\n\")",
            "Output(\"45\\n\")",
            "Output(\"45\\n\")",
            "Output(\"0\\n\")",
            "Output(\"0\\n\")",
            "Output(\"45\\n\")",
            "Output(\"45\\n\")",
            "Error(\"type_error(lt, integers)\")",
            "Error(\"key_not_found(n)\")",
        ]
    );
}

/// `mod` by a constant takes a shortcut on tagged words for dividends in
/// `0..2^31` and divisors below 2^30; every other case takes the general
/// floored path. Dividends at and around those edges, under both
/// versions (the small one for 32-bit `x`), give the interpreter's results.
#[test]
fn mod_by_constants_matches_the_interpreter_at_the_edges() {
    let results = flowc_codegen::with_stack(|| {
        use flowc_lang::{Symbol, Value};
        let source = r#"entry start(x = 5)

start:
    a = x % 7
    b = x % 1073741823
    c = x % 1073741824
    d = x % 1
    e = x % -7
    t = a * 10000000000
    t = t + b
    t = t * 10000000000
    t = t + c
    t = t * 100
    t = t + d
    t = t * 100
    t = t + e
    print_and_stop(t)
"#;
        let program = flowc_lang::syntax::parse("mod.fg", source).unwrap();
        let (label, x) = (Symbol::intern("start"), Symbol::intern("x"));
        let lowered = engines::lower(&program, label);
        let edges: [i64; 14] = [
            -(1 << 40),
            -(1 << 31) - 1,
            -(1 << 31),
            -8,
            -7,
            -1,
            0,
            1,
            6,
            7,
            (1 << 30) - 1,
            (1 << 31) - 1,
            1 << 31,
            1 << 40,
        ];
        edges
            .iter()
            .map(|&v| {
                let env = vec![(x, Value::Int(v))];
                let expected = engines::reference(&program, label, &env);
                let versions = engines::optimize_versions_checked(lowered.clone(), &env, &expected, "mod.fg");
                (v, engines::native(&versions, &env) == expected)
            })
            .collect::<Vec<_>>()
    });
    let wrong: Vec<i64> = results.iter().filter(|(_, same)| !same).map(|(v, _)| *v).collect();
    assert!(wrong.is_empty(), "native differs from the interpreter for x in {wrong:?}");
    assert_eq!(results.len(), 14);
}

/// Runs tests/corpus/`file` natively (both versions, checked after every
/// pass) and on the reference interpreter under each environment of
/// `envs`: the environment, the reference's outcome, and whether native
/// code's is the same.
fn native_against_reference(file: &str, envs: &[&'static str]) -> Vec<(&'static str, engines::Outcome, bool)> {
    let results = flowc_codegen::with_stack({
        let (file, envs) = (file.to_string(), envs.to_vec());
        move || {
            use flowc_lang::syntax::prolog::parse_env;
            let program = corpus::program(&format!("tests/corpus/{file}"));
            let label = flowc_lang::Symbol::intern("start");
            let lowered = engines::lower(&program, label);
            envs.iter()
                .map(|text| {
                    let env = parse_env(text).unwrap();
                    let expected = engines::reference(&program, label, &env);
                    let versions = engines::optimize_versions_checked(lowered.clone(), &env, &expected, &file);
                    let same = engines::native(&versions, &env) == expected;
                    (*text, expected, same)
                })
                .collect::<Vec<_>>()
        }
    });
    let wrong: Vec<&str> = results.iter().filter(|(_, _, same)| !same).map(|(e, _, _)| *e).collect();
    assert!(wrong.is_empty(), "{file}: native differs from the interpreter for {wrong:?}");
    results
}

/// The optimistic copy of a function assumes its arithmetic stays small
/// and leaves for the generic copy where it does not: a product that
/// overflows mid-loop and goes on as a bignum, a bignum or an atom
/// parameter met by the first operation, values that never overflow. Each
/// gives what the interpreter gives, under both versions.
#[test]
fn the_optimistic_copy_leaves_for_the_generic_one_where_arithmetic_grows() {
    let results = native_against_reference(
        "grow.fg",
        &[
            "[x/3, n/10]",
            "[x/3, n/100]",
            "[x/-3, n/100]",
            "[x/1099511627776, n/5]",
            "[x/1180591620717411303424, n/3]",
            "[x/a, n/3]",
            "[x/3, n/0]",
        ],
    );
    // The runs really overflow, meet a bignum and fail on an atom.
    let outcome = |env: &str| format!("{:?}", results.iter().find(|(e, _, _)| *e == env).unwrap().1);
    assert!(outcome("[x/3, n/100]").len() > 50, "3^100 is a bignum: {}", outcome("[x/3, n/100]"));
    assert!(outcome("[x/a, n/3]").contains("Error"), "{}", outcome("[x/a, n/3]"));
}

/// A tape grown on demand, its links tested for 0 (`lower/links.rs`,
/// `link_tests`: a predicted link goes on without that test): walked out
/// and back over cells grown at once, grown in the walk and reached
/// again, one step of it, and a link read unset, whose error native code
/// raises at the interpreter's place.
#[test]
fn a_tape_grown_on_demand_walks_as_the_interpreter_walks_it() {
    let results = native_against_reference(
        "shapes/tape_grown.fg",
        &["[n/200, rounds/3, forget/0]", "[n/1, rounds/1, forget/0]", "[n/40, rounds/5, forget/7]"],
    );
    let outcome = |env: &str| results.iter().find(|(e, _, _)| *e == env).unwrap().1.clone();
    assert_eq!(outcome("[n/200, rounds/3, forget/0]"), engines::Outcome::Output("120600\n".into()));
    let unset = format!("{:?}", outcome("[n/40, rounds/5, forget/7]"));
    assert!(unset.contains("unset_field(cell, r)"), "{unset}");
}

/// What a corpus program walking a tape did on native code with walks
/// in every function (`flowc_codegen::walks`, not only in huge ones), per
/// environment of `cases`: the interpreter's outcome, native code's, the
/// walks put in the generic version, and what the heap's rows went
/// through.
struct Walked {
    expected: engines::Outcome,
    got: engines::Outcome,
    walks: usize,
    rows: flowc_lang::heap::rows::RowStats,
}

fn walked_everywhere(path: &'static str, cases: Vec<&'static str>) -> Vec<Walked> {
    flowc_codegen::with_stack(move || {
        use flowc_lang::syntax::prolog::parse_env;
        let program = corpus::program(path);
        let label = flowc_lang::Symbol::intern("start");
        let lowered = engines::lower(&program, label);
        cases
            .iter()
            .map(|text| {
                let env = parse_env(text).unwrap();
                let expected = engines::reference(&program, label, &env);
                let versions = engines::optimize_versions_checked(lowered.clone(), &env, &expected, path);
                let walks = versions.generic.clone().functions.iter_mut().map(flowc_codegen::walks::rewrite).sum();
                let everywhere = flowc_codegen::Options { walks_everywhere: true, ..Default::default() };
                let got = engines::native_with(&versions, &env, everywhere);
                let rows = flowc_lang::heap::with(|h| h.row_stats());
                Walked { expected, got, walks, rows }
            })
            .collect()
    })
}

/// Walks: `row_rewired.fg` moves along its tape four tested links at a
/// time, which native code walks at once from the heap's row, and splices a cell out of the row and back every few
/// rounds. The row is found, emptied by each splice (the write shows it
/// the link that no longer lies next to its cell), found again after each
/// mend; native code agrees with the interpreter all along.
#[test]
fn walks_along_a_row_go_link_by_link_once_a_splice_broke_it() {
    let cases =
        vec!["[n/40, rounds/3000, cut/1000, mend/2000, period/3000]", "[n/16, rounds/600, cut/3, mend/5, period/7]"];
    let results = walked_everywhere("tests/corpus/shapes/row_rewired.fg", cases.clone());
    for (text, w) in cases.iter().zip(results) {
        assert!(w.got == w.expected, "{text}: native differs from the interpreter");
        assert!(w.walks >= 1, "{text}: no walk");
        assert!(w.rows.found >= 2 && w.rows.emptied >= 1, "{text}: {:?}", w.rows);
    }
}

/// Walks at a row's ends (`row_ends.fg`: five links right and five left
/// from every cell of a tape; `Lowerer::walk`'s check of the row's bounds):
/// walks that end on the first or last cell are taken at once, walks that
/// would leave the row run link by link and meet the tape's end, with the
/// row laid out either way in memory (its right links going up, or, the
/// tape grown at its front, down), and a tape of one cell, which makes no
/// row. And a walk from an integer, before any row is found and after:
/// the integer -1, whose word's bits are all ones, is no object of a row
/// that is not there either. Native code agrees with the interpreter
/// (errors included), walks each chain, and finds the row where there is
/// one.
#[test]
fn walks_that_reach_or_would_leave_a_row_s_ends_agree_with_the_interpreter() {
    // (Environment, what the interpreter prints or raises, whether a row
    // is found: a tape of more than one cell walked from a cell.)
    let cases = [
        ("[n/12, dir/0, from/0]", "1011086", true),
        ("[n/12, dir/1, from/0]", "1011554", true),
        ("[n/6, dir/0, from/0]", "1010246", true),
        ("[n/6, dir/1, from/0]", "1010354", true),
        ("[n/1, dir/0, from/0]", "505000", false),
        ("[n/1, dir/0, from/-1]", "type_error", false),
        ("[n/12, dir/1, from/-1]", "type_error", false),
        ("[n/1, dir/0, from/7]", "type_error", false),
    ];
    let results = walked_everywhere("tests/corpus/shapes/row_ends.fg", cases.iter().map(|c| c.0).collect());
    for ((text, want, row), w) in cases.iter().zip(&results) {
        let (expected, got) = (format!("{:?}", w.expected), format!("{:?}", w.got));
        assert!(expected.contains(want), "{text}: the interpreter gave {expected}");
        assert!(w.got == w.expected, "{text}: native gave {got}, the interpreter {expected}");
        assert!(w.walks >= 2, "{text}: {} walks: the two five-link chains are walks", w.walks);
        assert!(!row || w.rows.found >= 1, "{text}: no row found: {:?}", w.rows);
    }
}

/// A program whose main graph is huge: `x = n`, then `x = x + 1` more
/// than [`flowc_ir::HUGE_INSTS`] times, then `rest`; parsed as `name`,
/// lowered from its entry and optimized (both versions), the main graph
/// checked to stay huge.
fn huge_main(
    name: &str,
    n: i64,
    rest: &str,
) -> (
    flowc_lang::ast::Program,
    flowc_lang::Symbol,
    Vec<(flowc_lang::Symbol, flowc_lang::value::Value)>,
    engines::Versions,
) {
    let mut source = format!("entry start(n = {n})\nstart:\n    x = n\n");
    for _ in 0..=flowc_ir::HUGE_INSTS {
        source.push_str("    x = x + 1\n");
    }
    source.push_str(rest);
    let p = flowc_lang::syntax::parse(name, &source).unwrap();
    let (label, env) = engines::start(&p);
    let module = flowc_frontend::lower(&p, label).unwrap();
    let versions = flowc_tests::engines::optimize_versions(module);
    assert!(versions.generic.main().unwrap().is_huge(), "the main graph stays huge");
    (p, label, env, versions)
}

/// The same in a huge main graph, compiled as regions whose hot ones
/// are optimized: the walk's link test, lowered with its read, sends
/// both ways on a value defined regions earlier (`x`, read from the
/// frame), each to a phi. A predicted link goes straight to its way on,
/// which must read `x` there, not take the word the other way loaded.
#[test]
fn a_link_tested_in_a_huge_function_carries_the_frames_values_both_ways() {
    let rest = [
        "    head = 0",
        "    i = 0",
        "    goto build",
        "build:",
        "    node = new node",
        "    node.next = head",
        "    head = node",
        "    i = i + 1",
        "    more = i < n",
        "    if more goto build else goto walk",
        "walk:",
        "    t = head",
        "    s = 0",
        "    w = x",
        "    goto loop",
        "loop:",
        "    nx = t.next",
        "    if nx goto a else goto b",
        "a:",
        "    s = s + w",
        "    t = nx",
        "    m = s % 7",
        "    if m goto again else goto extra",
        "again:",
        "    w = x",
        "    goto loop",
        "extra:",
        "    w = 3",
        "    nx = t",
        "    big = 100000 < s",
        "    if big goto other else goto a",
        "other:",
        "    w = 5",
        "    goto b",
        "b:",
        "    s = s + w",
        "    print_and_stop(s)",
    ];
    let rest: String = rest.iter().map(|line| format!("{line}\n")).collect();
    let (expected, got) = flowc_codegen::with_stack(move || {
        let (p, label, env, versions) = huge_main("link_edges_huge.fg", 60, &rest);
        (engines::reference(&p, label, &env), engines::native(&versions, &env))
    });
    assert!(matches!(expected, engines::Outcome::Output(_)), "{expected:?}");
    assert_eq!(got, expected);
}

/// The optimistic copy covers the loops, entered where the values live
/// there that it assumes small are: a value computed between two loops
/// that is not small keeps the second loop in the generic copy.
#[test]
fn loops_enter_the_optimistic_copy_only_with_the_small_values_it_assumes() {
    // Small throughout; y = s * s past 62 bits (3^20 squared); s a bignum
    // in the first loop already; x an atom.
    let results = native_against_reference(
        "loop_entry.fg",
        &["[x/3, n/4]", "[x/3, n/19]", "[x/1099511627776, n/3]", "[x/a, n/3]"],
    );
    let outcome = |env: &str| format!("{:?}", results.iter().find(|(e, _, _)| *e == env).unwrap().1);
    // 19 * 3^40 (about 2.3 * 10^20) does not fit in 64 bits: the run
    // really meets a bignum.
    let digits = outcome("[x/3, n/19]").chars().filter(|c| c.is_ascii_digit()).count();
    assert!(digits > 19, "{}", outcome("[x/3, n/19]"));
    // A loop leaving straight into the next: the first ends in the generic
    // copy when p outgrows the words (n = 50), with s small or not.
    let results =
        native_against_reference("loop_to_loop.fg", &["[x/3, n/4]", "[x/3, n/50]", "[x/1099511627776, n/50]"]);
    assert_eq!(results.len(), 3);
}

/// Huge functions (`flowc_ir::HUGE_INSTS`) test the context's stop flag
/// once per block instead of after every runtime call (the runtime does
/// nothing once the program stopped): generated programs with a huge main
/// function and operations that fail stop with the interpreter's first
/// error, at its place, or print what it prints.
#[test]
fn huge_functions_stop_at_the_first_error() {
    let wanted = gen::seed_count(8);
    let (compared, errors) = flowc_codegen::with_stack(move || {
        let (mut compared, mut errors) = (0, 0);
        // Seeds whose main stays huge after the passes (code after an
        // error that always happens is removed). Huge as the passes leave
        // it, not compacted: its arenas' dead slots keep it over the line,
        // while compacted it would be small (an error early in a generated
        // main cuts most of it) and take the ordinary path.
        for seed in 0..wanted * 5 {
            let cfg = gen::GenConfig {
                size: 20_000,
                functions: 3,
                errors: true,
                odd_names: false,
                alloc: false,
                rotate: false,
            };
            let p = gen::generate(1000 + seed, &cfg);
            let (label, env) = engines::start(&p);
            let module = flowc_frontend::lower(&p, label).unwrap();
            let versions = uncompacted(module);
            if !versions.generic.main().unwrap().is_huge() {
                continue;
            }
            let expected = engines::reference(&p, label, &env);
            assert_eq!(engines::native(&versions, &env), expected, "seed {seed}");
            if let Some(message) = engines::reference_error(&p, label, &env) {
                if !message.contains("fuel_exhausted") {
                    let got = engines::native_error(&p, &versions, &env);
                    assert_eq!(got.as_deref(), Some(message.as_str()), "seed {seed}");
                    errors += 1;
                }
            }
            compared += 1;
            if compared == wanted {
                break;
            }
        }
        (compared, errors)
    });
    assert_eq!(compared, wanted, "too few huge programs");
    assert!(errors * 2 >= wanted, "only {errors} of {wanted} programs failed");
}

/// A huge function's hot loop reads the fields of proven objects in line
/// (`Plan::inline_proven_fields`) while it tests the context's stop flag
/// once per block: the link `q = p.r` is unset at the chain's end, and
/// the runtime's `get` then raises the error and returns the stop word,
/// 0, for `q`. The read of `q.v` after it in the block first tests the
/// stop (`Lowerer::flush_stop`): the run stops with the interpreter's
/// error, at its place, rather than loading from near address 0.
#[test]
fn a_huge_functions_loop_stops_before_reading_a_field_of_what_an_unset_link_gave() {
    let rest = "    a = new cell\n    a.v = 1\n    b = new cell\n    b.v = 2\n    a.r = b\n    p = a\n    k = x\n    goto loop\n\
         loop:\n    q = p.r\n    y = q.v\n    k = k + y\n    c = k < 100000\n    if c goto more else goto done\n\
         more:\n    p = q\n    goto loop\ndone:\n    print_and_stop(k)\n";
    let (message, got) = flowc_codegen::with_stack(move || {
        let (p, label, env, versions) = huge_main("unset_link.fg", 3, rest);
        let message = engines::reference_error(&p, label, &env).expect("the interpreter stops with an error");
        (message, engines::native_error(&p, &versions, &env))
    });
    assert!(message.contains("unset_field(cell, r)"), "{message}");
    assert_eq!(got.as_deref(), Some(message.as_str()));
}

/// The generic version of `lowered` as the last of the eight passes
/// leaves it, before the pipeline compacts it.
fn uncompacted(lowered: flowc_ir::Module) -> flowc_tests::engines::Versions {
    use flowc_passes::versions::{pipeline, Stage, Version, Wanted};
    let last = flowc_passes::PIPELINE.last().map(|p| p.name);
    let mut kept = None;
    pipeline(lowered, &Default::default(), Wanted::Generic, |version, stage, m| {
        if let (Version::Generic, Stage::Pass(pass)) = (version, stage) {
            if Some(pass.name) == last {
                kept = Some(m.clone());
            }
        }
    });
    let generic = kept.expect("the pipeline runs its last pass");
    flowc_tests::engines::Versions { generic, small: None, assumed: Vec::new() }
}

/// For the program `program(count)` with a loop counted down from 3
/// (cold) and from `n` (hot): how many compiled functions are named
/// `name` (regions and their driver, or the function compiled whole).
/// Both compute what the interpreter computes.
fn cold_and_hot(program: impl Fn(&str) -> String + Send, name: &'static str) -> [usize; 2] {
    flowc_codegen::with_stack(move || {
        ["3", "n"].map(|count| {
            let p = flowc_lang::syntax::parse("cold.fg", &program(count)).unwrap();
            let (label, env) = engines::start(&p);
            let module = flowc_frontend::lower(&p, label).unwrap();
            let versions = flowc_tests::engines::optimize_versions(module);
            assert_eq!(engines::native(&versions, &env), engines::reference(&p, label, &env), "k = {count}");
            let native = flowc_codegen::Native::compile(&versions.generic).unwrap();
            native.code().iter().filter(|(n, _, _)| n.as_str() == name).count()
        })
    })
}

/// The main graph of a program whose loops are counted loops that run a
/// few times is cold (`flowc_ir::frequency`): it is compiled for compile
/// time, split into regions, where the same graph with a loop whose count
/// comes from the environment is hot and compiled whole. Both compute
/// what the interpreter computes.
#[test]
fn a_cold_main_graph_is_split_and_a_hot_one_compiled_whole() {
    let program = |count: &str| {
        let body: String = (0..300).map(|k| format!("    x = x + n\n    y = y - x\n    x = x + {k}\n")).collect();
        format!(
            "entry start(n = 5)\nstart:\n    x = 0\n    y = 1\n    k = {count}\n    goto head\nhead:\n    if k goto body else goto done\nbody:\n{body}    k = k - 1\n    goto head\ndone:\n    print_and_stop(y)\n"
        )
    };
    let functions = cold_and_hot(program, "start");
    assert!(functions[0] >= 3, "the cold main graph is split into regions and a driver: {functions:?}");
    assert_eq!(functions[1], 1, "the hot one is compiled whole: {functions:?}");
}

#[test]
fn a_function_called_a_bounded_number_of_times_is_cold_and_one_called_from_a_hot_loop_is_not() {
    // `g` is called from a loop counted down from 3 (at most 4 calls per
    // run: cold, split like a cold main graph) or from `n` (no bound:
    // compiled whole).
    let program = |count: &str| {
        let body: String =
            (0..300).map(|k| format!("        x = x + a\n        y = y - x\n        x = x + {k}\n")).collect();
        format!(
            "entry start(n = 5)\nfunction g(a):\n    g_entry:\n        x = 0\n        y = 1\n{body}        return y\n\nstart:\n    s = 0\n    k = {count}\n    goto head\nhead:\n    if k goto body else goto done\nbody:\n    r = call g(k) then back\nback:\n    s = s + r\n    k = k - 1\n    goto head\ndone:\n    print_and_stop(s)\n"
        )
    };
    let functions = cold_and_hot(program, "g");
    assert!(functions[0] >= 3, "the cold function is split into regions and a driver: {functions:?}");
    assert_eq!(functions[1], 1, "the hot one is compiled whole: {functions:?}");
}

/// Clears (`flowc_codegen::clears`): `shapes/clear_loops.fg`'s loops that
/// step a cell by one to 0 (by -1 from below 0 and above 256, by +1
/// modulo 7, by +255) run at once in native code, its step of 2 does not,
/// and a clear of a field never set raises the interpreter's error.
#[test]
fn loops_that_clear_a_field_end_at_once_as_the_interpreter_ends_them() {
    let results = native_against_reference(
        "shapes/clear_loops.fg",
        &["[n/40, forget/0]", "[n/1, forget/0]", "[n/300, forget/0]", "[n/3, forget/1]"],
    );
    let outcome = |env: &str| results.iter().find(|(e, _, _)| *e == env).unwrap().1.clone();
    assert_eq!(outcome("[n/40, forget/0]"), engines::Outcome::Output("780\n".into()));
    let unset = format!("{:?}", outcome("[n/3, forget/1]"));
    assert!(unset.contains("unset_field(cell, v)"), "{unset}");
    // Four clears, the step of 2 left.
    let cleared = flowc_codegen::with_stack(|| {
        let program = corpus::program("tests/corpus/shapes/clear_loops.fg");
        let label = flowc_lang::Symbol::intern("start");
        let mut versions = engines::optimize_versions(engines::lower(&program, label));
        versions.generic.functions.iter_mut().map(flowc_codegen::clears::rewrite).sum::<usize>()
    });
    assert_eq!(cleared, 4);
}

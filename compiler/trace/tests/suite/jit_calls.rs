//! Compiled calls (`jit/calls.rs`): a function whose loop runs too few
//! rounds per entry for its code to pay its round trips has its calls
//! compiled instead, and the interpreter hands each call to the compiled
//! function without stopping. What the program prints, raises, and how
//! fuel bounds it stay the interpreter's.

use flowc_ir::Function;
use flowc_lang::interp::Config;
use flowc_lang::{syntax, Symbol, Value};
use flowc_trace::jit::{Jit, Options, Stats};

fn check_ir(f: &Function, after: &str) {
    if let Err(vs) = flowc_ir_checker::check(f) {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        panic!("trace IR invalid after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::function(f));
    }
}

/// How the last round ends: `f` is called with `m = 0` there.
#[derive(Clone, Copy)]
enum Last {
    /// As every other round.
    Same,
    /// `f` prints its argument and stops the program.
    Prints,
    /// `f`'s `acc % m` divides by zero.
    Fails,
}

/// `f(x, m)` runs a five-round loop (`rounds`) of `acc = (acc * 3 + 1) % m`; the
/// main graph calls it from `sites` call sites in a row, 30 times round
/// a loop too short to get hot, passing its result on. In the last round
/// `m` is 0 (what `f` then does: `last`).
fn program(sites: usize, last: Last) -> String {
    program_of(sites, 5, last)
}

/// [`program`] with `f`'s loop running `rounds` rounds.
fn program_of(sites: usize, rounds: usize, last: Last) -> String {
    let stop = match last {
        Last::Prints => {
            "        t = m == 0\n        if t goto stop else goto go\n    stop:\n        print_and_stop(x)\n    go:\n"
        }
        Last::Same | Last::Fails => "",
    };
    let zero = match last {
        Last::Same => "1000003",
        Last::Prints | Last::Fails => "0",
    };
    let mut text = format!(
        "entry start(n = 30, m = 1000003)\n\nfunction f(x, m):\n    s:\n{stop}        i = {rounds}\n        acc = x\n        goto l\n    l:\n        if i goto body else goto done\n    body:\n        acc = acc * 3\n        acc = acc + 1\n        acc = acc % m\n        i = i - 1\n        goto l\n    done:\n        return acc\n\nstart:\n    r = 0\n    goto outer\nouter:\n    if n goto calls else goto fin\ncalls:\n"
    );
    for k in 1..=sites {
        text.push_str(&format!("    r = call f(r, m) then c{k}\nc{k}:\n"));
    }
    text.push_str(&format!(
        "    n = n - 1\n    z = n == 1\n    if z goto zero else goto outer\nzero:\n    m = {zero}\n    goto outer\nfin:\n    print_and_stop(r)\n"
    ));
    text
}

/// What the interpreter and the JIT made of `text` under `config`: the
/// output or the error (as displayed, its place included), and the JIT's
/// statistics.
fn both(text: &str, config: &Config) -> (Result<String, String>, Result<String, String>, Stats) {
    flowc_codegen::with_stack(|| {
        let p = syntax::parse("calls.fg", text).unwrap_or_else(|e| panic!("{e}"));
        let entry = Symbol::intern("start");
        let env: Vec<(Symbol, Value)> = p.entry_env(entry).unwrap().to_vec();
        let interp = flowc_lang::interp::run(&p, entry, &env, config).map(|o| o.output()).map_err(|e| e.to_string());
        let module = flowc_frontend::lower(&p, entry).unwrap();
        let mut jit = Jit::new(&p, &module, Options { inspect: Some(check_ir), ..Options::default() });
        // The statement's text, as `flowc run` adds it to errors raised
        // in compiled code.
        let out = jit.run(entry, &env, config).map(|o| o.output()).map_err(|mut e| {
            e.at = e.at.map(|at| if at.text.is_empty() { p.with_text(at) } else { at });
            e.to_string()
        });
        (interp, out, jit.stats())
    })
}

/// The loop's code is entered a thousand times, five rounds each, and
/// given up; from then on the calls of `f` run compiled, most of the
/// 6,000 without the interpreter stopping, and the run prints what the
/// interpreter prints.
#[test]
fn a_function_whose_loop_is_too_short_to_enter_runs_compiled() {
    let (interp, jit, stats) = both(&program(200, Last::Same), &Config::default());
    assert!(interp.is_ok(), "{interp:?}");
    assert_eq!(jit, interp);
    assert_eq!(stats.calls_instead, 1, "{stats}");
    assert_eq!(stats.ignored, 1, "the loop's hot spot was given up\n{stats}");
    assert!(stats.calls >= 4_000, "{} of 6,000 calls ran compiled\n{stats}", stats.calls);
    assert!(stats.per_key.iter().any(|k| k.key == "calls of f" && k.state == "compiled"), "{stats}");
}

/// The program ends inside a compiled call: printing, or with an error
/// that names the statement where the interpreter raises it.
#[test]
fn a_compiled_call_prints_and_fails_as_the_interpreter() {
    for last in [Last::Prints, Last::Fails] {
        let (interp, jit, stats) = both(&program(200, last), &Config::default());
        assert_eq!(jit, interp);
        assert!(stats.calls >= 4_000, "{stats}");
        match last {
            Last::Prints => assert!(interp.is_ok(), "{interp:?}"),
            _ => assert!(interp.as_ref().is_err_and(|e| e.contains("acc = acc % m")), "{interp:?}"),
        }
    }
}

/// Fuel enough for the interpreter's first calls and part of the
/// compiled ones: the JIT counts some 49,000 steps for the whole run (the
/// statements it interprets, one per loop round compiled code runs, as
/// traces count them), which compiled calls start after some 20,000.
const FUEL: u64 = 35_000;

/// Under fuel, compiled calls take their loops' rounds from it: too
/// little fuel ends the run with `fuel_exhausted` after the calls were
/// compiled, enough lets it finish.
#[test]
fn fuel_bounds_compiled_calls() {
    let text = program(200, Last::Same);
    let whole = both(&text, &Config::default()).0.expect("it runs");
    let (interp, jit, stats) = both(&text, &Config { fuel: Some(FUEL), ..Config::default() });
    assert!(interp.as_ref().is_err_and(|e| e.contains("fuel")), "{interp:?}");
    assert!(jit.as_ref().is_err_and(|e| e.contains("fuel")), "{jit:?}");
    assert!(stats.calls > 0, "the calls were compiled before the fuel ran out\n{stats}");
    let (_, jit, _) = both(&text, &Config { fuel: Some(10_000_000), ..Config::default() });
    assert_eq!(jit, Ok(whole));
}

/// A loop that pays through its entries, but mostly in round trips (20
/// five-statement rounds per entry, against a round trip's 64 statements
/// and four times that): its code is kept, and its function's calls are
/// compiled too, which the interpreter takes from then on. A loop of 100
/// rounds per entry keeps being entered.
#[test]
fn a_loop_paying_mostly_in_round_trips_has_its_calls_compiled() {
    let (interp, jit, stats) = both(&program_of(200, 20, Last::Same), &Config::default());
    assert_eq!(jit, interp);
    assert_eq!((stats.ignored, stats.calls_instead), (0, 1), "{stats}");
    assert!(stats.calls >= 4_000, "{stats}");
    let (interp, jit, stats) = both(&program_of(200, 100, Last::Same), &Config::default());
    assert_eq!(jit, interp);
    assert_eq!((stats.calls_instead, stats.calls), (0, 0), "{stats}");
    assert!(stats.entries >= 5_000, "{stats}");
}

/// [`program`] with `functions` more functions of 150 statements each,
/// never called: the program's functions, which are compiled together,
/// cost that much more to compile.
fn padded(functions: usize) -> String {
    let text = program(200, Last::Same);
    let (entry, rest) = text.split_once('\n').expect("an entry fact");
    let mut out = format!("{entry}\n");
    for k in 0..functions {
        out.push_str(&format!("\nfunction pad{k}(x):\n    s:\n"));
        for _ in 0..150 {
            out.push_str("        x = x + 1\n");
        }
        out.push_str("        return x\n");
    }
    out + rest
}

/// Compiling the calls compiles all the program's functions: over the
/// compile budget (40 functions of 150 statements besides `f`, never
/// called), the loop is given up as before and the interpreter runs the
/// calls; with 2 such functions the calls are compiled.
#[test]
fn calls_are_not_compiled_over_the_compile_budget() {
    let (interp, jit, stats) = both(&padded(40), &Config::default());
    assert_eq!(jit, interp);
    assert_eq!((stats.ignored, stats.calls_instead, stats.calls), (1, 0, 0), "{stats}");
    let (interp, jit, stats) = both(&padded(2), &Config::default());
    assert_eq!(jit, interp);
    assert_eq!((stats.ignored, stats.calls_instead), (1, 1), "{stats}");
}

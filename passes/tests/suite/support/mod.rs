//! Shared by the pass tests: parse a program, lower it, run the pipeline up
//! to a pass — checking the IR with the checker and running it with the IR
//! interpreter after every pass, against the reference interpreter — and
//! print the result for a snapshot.

#![allow(dead_code)]

use flowc_ir::Module;
use flowc_lang::interp::{self, Config};
use flowc_lang::{syntax, Program, Symbol, Value};
use flowc_passes::{Context, Pass, PIPELINE};

/// Part 1's power loop, in the readable syntax.
pub const POWER: &str = r#"entry power(x = 10, y = 3)
power:
    res = 1
    if y goto power_rec else goto power_done
power_rec:
    res = res * x
    y = y - 1
    if y goto power_rec else goto power_done
power_done:
    print_and_stop(res)
"#;

/// A point made, written and read in each iteration of a loop: escape
/// analysis and unboxing remove it.
pub const POINTS: &str = r#"entry start(n = 5)
start:
    sum = 0
    i = 0
    goto loop
loop:
    c = i < n
    if c goto body else goto done
body:
    p = new point
    p.x = i
    twice = i * 2
    p.y = twice
    a = p.x
    b = p.y
    s = a + b
    sum = sum + s
    i = i + 1
    goto loop
done:
    print_and_stop(sum)
"#;

/// A point carried around a loop (each iteration makes a new one from the
/// last), then tested with `if ... is point`: neither escapes.
pub const LOOP_CARRIED_POINT: &str = r#"entry start(n = 3)
start:
    p = new point
    p.x = 0
    goto loop
loop:
    if n goto body else goto done
body:
    t = p.x
    p = new point
    t = t + n
    p.x = t
    n = n - 1
    goto loop
done:
    if p is point goto yes else goto no
yes:
    x = p.x
    print_and_stop(x)
no:
    print_and_stop(0)
"#;

pub struct Run {
    pub module: Module,
    pub cx: Context,
    pub program: Program,
}

/// Parses `src` (either syntax) and lowers it from its default entry.
pub fn lower(src: &str) -> (Program, Module) {
    let program = syntax::parse("test", src).unwrap_or_else(|e| panic!("{e}"));
    let entry = program.default_entry().expect("an entry");
    let module = flowc_frontend::lower(&program, entry).expect("lowers");
    verify(&module, "the front end");
    (program, module)
}

pub fn verify(module: &Module, after: &str) {
    if let Err(vs) = flowc_ir_checker::check_module(module) {
        let list: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        panic!("invalid IR after {after}:\n{}\n{}", list.join("\n"), flowc_ir::print::module(module));
    }
}

fn env(p: &Program) -> Vec<(Symbol, Value)> {
    let entry = p.default_entry().unwrap();
    p.entry_env(entry).unwrap_or_default().to_vec()
}

/// The reference interpreter's output (or error term) for the default start.
pub fn reference(p: &Program) -> String {
    let entry = p.default_entry().unwrap();
    reference_from(p, entry, &env(p))
}

/// The IR interpreter's output (or error term) and allocation count.
pub fn run_ir(p: &Program, m: &Module) -> (String, u64) {
    match flowc_ir::interp::run(m, &env(p), &ir_config()) {
        Ok(o) => (o.output(), o.allocations),
        Err(e) => (format!("error {}", e.kind.term()), 0),
    }
}

/// The IR interpreter's output (or error term) from `env`.
fn ir_outcome(m: &Module, env: &[(Symbol, Value)]) -> String {
    match flowc_ir::interp::run(m, env, &ir_config()) {
        Ok(o) => o.output(),
        Err(e) => format!("error {}", e.kind.term()),
    }
}

fn ir_config() -> Config {
    Config { fuel: Some(50_000_000), ..Config::default() }
}

/// Lowers `src` and runs the pipeline through the pass named `last`,
/// checking and running the IR after every pass.
pub fn run_until(src: &str, last: &str) -> Run {
    let (program, module) = lower(src);
    run_lowered(program, module, last)
}

/// [`run_until`] for a parsed program (from the corpus or the generator),
/// lowered from its default entry.
pub fn run_program_through(program: Program, last: &str) -> Run {
    let entry = program.default_entry().expect("an entry");
    let module = flowc_frontend::lower(&program, entry).expect("lowers");
    verify(&module, "the front end");
    run_lowered(program, module, last)
}

fn run_lowered(program: Program, module: Module, last: &str) -> Run {
    run_lowered_with(program, module, last, flowc_passes::context::Options::default())
}

/// [`run_until`] with pass `options` (`small_params`: the small version,
/// run on the program's default environment, which must give those
/// parameters small integers).
pub fn run_until_with(src: &str, last: &str, options: flowc_passes::context::Options) -> Run {
    let (program, module) = lower(src);
    run_lowered_with(program, module, last, options)
}

fn run_lowered_with(program: Program, mut module: Module, last: &str, options: flowc_passes::context::Options) -> Run {
    let expected = reference(&program);
    let mut cx = Context::with_options(&module, options);
    let outcome = |m: &Module| run_ir(&program, m).0;
    run_checked(&mut module, &mut cx, through(last), "", &expected, outcome, |_, _, _| {});
    Run { module, cx, program }
}

/// The pipeline's passes up to and including `last`.
fn through(last: &str) -> impl Iterator<Item = &'static Pass> + '_ {
    let upto = PIPELINE.iter().position(|p| p.name == last).unwrap_or_else(|| panic!("no pass {last}"));
    PIPELINE[..=upto].iter()
}

/// The pipeline's passes named in `names`, in pipeline order.
fn named<'a>(names: &'a [&str]) -> impl Iterator<Item = &'static Pass> + 'a {
    for name in names {
        assert!(PIPELINE.iter().any(|p| p.name == *name), "no pass {name}");
    }
    PIPELINE.iter().filter(|p| names.contains(&p.name))
}

/// Runs `passes` on `module`, checking the IR after each and that
/// `outcome` of it is still `expected`; `after` sees each pass's result.
/// `what` names the program in failure messages (empty for a snippet).
fn run_checked<'p>(
    module: &mut Module,
    cx: &mut Context,
    passes: impl Iterator<Item = &'p Pass>,
    what: &str,
    expected: &str,
    outcome: impl Fn(&Module) -> String,
    mut after: impl FnMut(&Pass, &Module, &Context),
) {
    let of = if what.is_empty() { String::new() } else { format!(" ({what})") };
    for pass in passes {
        (pass.run)(module, cx);
        verify(module, &format!("{}{of}", pass.name));
        let got = outcome(module);
        assert_eq!(got, expected, "output changed after {}{of}:\n{}", pass.name, flowc_ir::print::module(module));
        after(pass, module, cx);
    }
}

/// The IR after the pipeline through `last`, with that pass's annotations.
pub fn dump_until(src: &str, last: &str) -> String {
    let run = run_until(src, last);
    let mut out = flowc_ir::print::module(&run.module);
    if let Some(annotate) = PIPELINE.iter().find(|p| p.name == last).and_then(|p| p.annotate) {
        out.push_str(&annotate(&run.module, &run.cx));
    }
    out
}

/// The reference interpreter's output (or error term) from entry `label`.
pub fn reference_from(p: &Program, label: Symbol, env: &[(Symbol, Value)]) -> String {
    match interp::run(p, label, env, &Config { fuel: Some(10_000_000), ..Config::default() }) {
        Ok(o) => o.output(),
        Err(e) => format!("error {}", e.kind.term()),
    }
}

/// Like [`run_until`] for a parsed program started at `label` with `env`
/// (its free variables not in `env` are unbound parameters): lowers it and
/// runs the pipeline through `last`, checking the IR and comparing the IR
/// interpreter's result with the reference interpreter's after every pass.
/// `what` names the program in failure messages.
pub fn run_program_until(p: &Program, label: Symbol, env: &[(Symbol, Value)], last: &str, what: &str) -> Module {
    let mut module = flowc_frontend::lower(p, label).expect("lowers");
    verify(&module, &format!("the front end ({what})"));
    let expected = reference_from(p, label, env);
    let mut cx = Context::new(&module);
    run_checked(&mut module, &mut cx, through(last), what, &expected, |m| ir_outcome(m, env), |_, _, _| {});
    module
}

/// Parses a module in the IR text format and runs the pipeline through
/// `last`, checking the IR after every pass and comparing the IR
/// interpreter's result (with environment `env`) with its result on the
/// input module. For IR no program produces (unreachable blocks,
/// specialized forms). Returns the IR after `last`.
pub fn run_ir_until(ir: &str, env: &[(Symbol, Value)], last: &str) -> String {
    run_ir_passes(ir, env, through(last))
}

/// Parses IR text and runs the named passes (in pipeline order), checking
/// the IR and comparing the IR interpreter's result after each.
pub fn run_ir_with(ir: &str, env: &[(Symbol, Value)], passes: &[&str]) -> String {
    run_ir_passes(ir, env, named(passes))
}

fn run_ir_passes<'p>(ir: &str, env: &[(Symbol, Value)], passes: impl Iterator<Item = &'p Pass>) -> String {
    let mut module = flowc_ir::parse::module("test", ir).unwrap_or_else(|e| panic!("{e:?}"));
    verify(&module, "parsing");
    let expected = ir_outcome(&module, env);
    let mut cx = Context::new(&module);
    run_checked(&mut module, &mut cx, passes, "", &expected, |m| ir_outcome(m, env), |_, _, _| {});
    flowc_ir::print::module(&module)
}

/// Lowers `src` and runs only the named passes (in pipeline order),
/// checking and running the IR after each.
pub fn run_with(src: &str, passes: &[&str]) -> Run {
    let (program, mut module) = lower(src);
    let expected = reference(&program);
    let mut cx = Context::new(&module);
    let outcome = |m: &Module| run_ir(&program, m).0;
    run_checked(&mut module, &mut cx, named(passes), "", &expected, outcome, |_, _, _| {});
    Run { module, cx, program }
}

/// Lowers `src` and runs only the named passes (in pipeline order),
/// checking and running the IR after each; returns the IR text plus the
/// last pass's annotations. Unit tests of one pass use it to see that pass
/// on its own.
pub fn dump_with(src: &str, passes: &[&str]) -> String {
    let (program, mut module) = lower(src);
    let expected = reference(&program);
    let mut cx = Context::new(&module);
    let mut out = String::new();
    let outcome = |m: &Module| run_ir(&program, m).0;
    run_checked(&mut module, &mut cx, named(passes), "", &expected, outcome, |pass, m, cx| {
        out = flowc_ir::print::module(m);
        if let Some(annotate) = pass.annotate {
            out.push_str(&annotate(m, cx));
        }
    });
    out
}

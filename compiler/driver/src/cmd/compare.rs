//! `flowc compare FILE [--entry L] [--env ENV] [--static ENV] [--fuel N]
//! [--threshold N]`: runs the program on every engine — the reference
//! interpreter, the IR interpreter, native code compiled ahead of time, the
//! tracing JIT, and with `--static` the partial evaluator's residual program
//! compiled to native code — prints each result, and fails (exit 1) if any
//! two differ. Then a table of what each engine cost: run time, compile
//! time and bytes of machine code. Then the routes' code for the hot loop:
//! the AOT loop after the eight passes beside the JIT's optimized trace
//! (side by side when the terminal is wide enough, or with
//! `--side-by-side`; else one after the other), the JIT's bridges, and with
//! `--static` the residual program's loop.
//!
//! `--static` variables join the environment of the other engines,
//! replacing an entry fact's value (giving a variable different values in
//! `--env` and `--static` is a usage error); the residual program gets the
//! rest.

use flowc_ir::loops::LoopForest;
use flowc_ir::{Function, FunctionKind, Module};
use flowc_lang::interp::{self, Config, RuntimeError};
use flowc_lang::{pe, Symbol, Value};
use std::time::Instant;

use crate::{input, Failure};

/// The options of the commands that run a program on every engine
/// (`compare`, `explore`).
#[derive(clap::Args)]
pub struct EngineArgs {
    #[command(flatten)]
    pub start: input::Start,
    /// Also partially evaluate with these variables static, then compile
    /// the residual program to native code.
    #[arg(long = "static", value_name = "ENV")]
    static_env: Option<String>,
    /// Stop interpreting engines after N statements.
    #[arg(long)]
    fuel: Option<u64>,
    #[command(flatten)]
    jit: input::JitArgs,
}

impl EngineArgs {
    /// Runs `program` (the one FILE names) on every engine, from the start
    /// label and environment the options give: the label, the environment
    /// (`--static` variables joined in), and the runs.
    pub fn run<'p>(&self, program: &'p flowc_lang::Program) -> Result<(Symbol, input::StartEnv, Runs<'p>), Failure> {
        let (label, env) = input::start(program, self.start.source.entry.as_deref(), self.start.env.as_deref())?;
        let (env, static_env) = environments(&self.start, self.static_env.as_deref(), env)?;
        let config = Config { fuel: self.fuel, ..Config::default() };
        let runs = run_all(program, label, &env, static_env.as_deref(), &config, &self.jit)?;
        Ok((label, env, runs))
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    engines: EngineArgs,
    /// Show the AOT loop and the trace side by side whatever the terminal's
    /// width (by default: when stdout is a terminal wide enough).
    #[arg(long)]
    side_by_side: bool,
}

/// What one engine cost.
#[derive(Default)]
pub struct Cost {
    pub run: Option<std::time::Duration>,
    pub compile: Option<std::time::Duration>,
    /// Machine code, as the table says it.
    pub code: Option<String>,
    pub code_bytes: Option<usize>,
}

/// What an engine printed, or the error it stopped with.
fn show(result: Result<interp::Outcome, RuntimeError>) -> String {
    match result {
        Ok(o) => o.value.to_print_string(),
        Err(e) => format!("error: {}", e.kind.term()),
    }
}

/// Every engine's run of one program: what each printed and cost, the
/// JIT as the run left it, and the program lowered once.
pub struct Runs<'p> {
    pub results: Vec<(&'static str, String, Cost)>,
    pub jit: flowc_trace::jit::Jit<'p>,
    pub lowered: Option<Module>,
    /// With `--static`: the residual program, its entry and environment.
    pub residual: Option<Residual>,
}

/// A residual program, its entry and its (dynamic) environment.
pub type Residual = (flowc_lang::Program, Symbol, Vec<(Symbol, Value)>);

impl Runs<'_> {
    /// Whether every engine printed the same.
    pub fn agree(&self) -> bool {
        self.results.iter().all(|(_, r, _)| *r == self.results[0].1)
    }
}

/// The environment of a comparison: `--env` (or the entry fact's) with
/// the `--static` variables joined in, and the static ones apart.
fn environments(
    start: &input::Start,
    static_text: Option<&str>,
    mut env: input::StartEnv,
) -> Result<(input::StartEnv, Option<input::StartEnv>), Failure> {
    let static_env = static_text.map(|t| input::env("--static", t)).transpose()?;
    for (k, v) in static_env.iter().flatten() {
        match env.iter_mut().find(|(n, _)| n == k) {
            Some((_, old)) if start.env.is_some() && old != v => {
                return Err(Failure::usage(format!("{k} has different values in --env and --static")));
            }
            Some((_, old)) => *old = v.clone(),
            None => env.push((*k, v.clone())),
        }
    }
    Ok((env, static_env))
}

/// Runs `program` from `label` with `env` on every engine (and with
/// `static_env`, the residual program compiled to native code).
fn run_all<'p>(
    program: &'p flowc_lang::Program,
    label: Symbol,
    env: &[(Symbol, Value)],
    static_env: Option<&[(Symbol, Value)]>,
    config: &Config,
    jit_args: &input::JitArgs,
) -> Result<Runs<'p>, Failure> {
    let mut results: Vec<(&str, String, Cost)> = Vec::new();
    let timed = |f: &mut dyn FnMut() -> Result<interp::Outcome, RuntimeError>| {
        let started = Instant::now();
        let r = f();
        (show(r), Cost { run: Some(started.elapsed()), ..Cost::default() })
    };
    let (r, c) = timed(&mut || interp::run(program, label, env, config));
    results.push(("interp", r, c));
    let lowered = flowc_frontend::lower(program, label);
    let (r, c) = timed(&mut || match &lowered {
        Ok(m) => flowc_ir::interp::run(m, env, config),
        Err(kind) => Err(RuntimeError { kind: kind.clone(), at: None }),
    });
    results.push(("ir", r, c));
    let native = crate::cmd::run::native_counted(program, label, env, config)?;
    let cost = |n: &crate::cmd::run::NativeRun| Cost {
        run: Some(n.run),
        compile: Some(n.compile),
        code: Some(format!("{} bytes", n.code_size)),
        code_bytes: Some(n.code_size),
    };
    results.push(("native", show(native.result.clone()), cost(&native)));
    let empty = Module::default();
    let mut jit = jit_args.jit(program, lowered.as_ref().unwrap_or(&empty))?;
    let started = Instant::now();
    let jit_result = show(match &lowered {
        Ok(_) => jit.run(label, env, config),
        Err(kind) => Err(RuntimeError { kind: kind.clone(), at: None }),
    });
    let stats = jit.stats();
    let jit_cost = Cost {
        run: Some(started.elapsed().saturating_sub(stats.compile_time)),
        compile: Some(stats.compile_time),
        code: Some(format!(
            "{} bytes ({}, {})",
            stats.code_size,
            plural(stats.traces + stats.entry_traces, "trace"),
            plural(stats.bridges, "bridge")
        )),
        code_bytes: Some(stats.code_size),
    };
    results.push(("jit", jit_result, jit_cost));
    let mut residual_program = None;
    if let Some(static_env) = static_env {
        let residual = pe::specialize(program, label, static_env, pe::BLOCKS).map_err(Failure::input)?;
        let out = residual.program(program);
        let dynamic: Vec<(Symbol, Value)> =
            env.iter().filter(|(k, _)| !static_env.iter().any(|(s, _)| s == k)).cloned().collect();
        let run = crate::cmd::run::native_counted(&out, residual.entry, &dynamic, config)?;
        results.push(("pe+native", show(run.result.clone()), cost(&run)));
        residual_program = Some((out, residual.entry, dynamic));
    }
    Ok(Runs { results, jit, lowered: lowered.ok(), residual: residual_program })
}

pub fn main(args: Args) -> Result<(), Failure> {
    let program = input::load(&args.engines.start.source.file)?;
    let (label, env, runs) = args.engines.run(&program)?;
    for (engine, result, _) in &runs.results {
        println!("{engine:<10} {result}");
    }
    println!();
    print!("{}", cost_table(&runs.results));
    println!();
    let width = if args.side_by_side { Some(usize::MAX) } else { terminal_width() };
    print!("{}", hot_loops(label, runs.lowered.clone(), &env, &runs.jit, width));
    if let Some((out, entry, dynamic)) = &runs.residual {
        let module = flowc_frontend::lower(out, *entry).ok();
        print!("{}", aot_loop("pe+native", *entry, module, dynamic, None).0);
    }
    println!();
    println!("For every pass, the CFGs, the machine code and the links between them: flowc explore FILE -o page.html");
    if runs.agree() {
        Ok(())
    } else {
        Err(Failure::input("the engines disagree"))
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Per engine: run time, compile time, machine code.
fn cost_table(results: &[(&'static str, String, Cost)]) -> String {
    let ms = |d: Option<std::time::Duration>| d.map_or(String::new(), |d| format!("{:.3} ms", d.as_secs_f64() * 1e3));
    let mut out = format!("{:<10} {:>12} {:>12}  {}\n", "engine", "run", "compile", "machine code");
    for (engine, _, c) in results {
        let code = c.code.clone().unwrap_or_default();
        out.push_str(format!("{engine:<10} {:>12} {:>12}  {code}", ms(c.run), ms(c.compile)).trim_end());
        out.push('\n');
    }
    out
}

/// The width of the terminal stdout is, if it is one.
fn terminal_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    if let Some(cols) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return Some(cols);
    }
    // SAFETY: `winsize` is plain integers, for which all zeros is a value.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given,
    // which lives on this stack frame for the call; stdout's descriptor is
    // open (it is the terminal just tested).
    let r = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    (r == 0 && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// Two texts in columns, `left` padded to its widest line; `None` if
/// they do not fit in `width`.
fn side_by_side(left: &str, right: &str, width: usize) -> Option<String> {
    let l: Vec<&str> = left.lines().collect();
    let r: Vec<&str> = right.lines().collect();
    let lw = l.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let rw = r.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    if lw + 3 + rw > width {
        return None;
    }
    let mut out = String::new();
    for k in 0..l.len().max(r.len()) {
        let a = l.get(k).copied().unwrap_or("");
        let b = r.get(k).copied().unwrap_or("");
        let pad = lw - a.chars().count();
        out.push_str(format!("{a}{} | {b}", " ".repeat(pad)).trim_end());
        out.push('\n');
    }
    Some(out)
}

/// The AOT code of `module`'s hot loop after the eight passes (the loop at
/// `anchor` if there is one), as `engine` runs it: a header line and the
/// loop's blocks, or a line saying why there is none.
fn aot_loop(
    engine: &str,
    label: Symbol,
    module: Option<Module>,
    env: &[(Symbol, flowc_lang::Value)],
    anchor: Option<Symbol>,
) -> (String, String) {
    let Some(module) = module else { return (format!("== {engine}: cannot lower from {label}\n"), String::new()) };
    // The version native code runs for this environment, as `run` makes it.
    let wanted = flowc_passes::versions::Wanted::For(env);
    let versions = flowc_passes::versions::pipeline(module, &Default::default(), wanted, |_, _, _| {});
    let version = if versions.assumed.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = versions.assumed.iter().map(|p| p.as_str()).collect();
        format!(" (small {})", names.join(", "))
    };
    let main = versions.generic.functions.iter().find(|f| f.kind == FunctionKind::Main).expect("a main graph");
    match hot_loop(main, anchor) {
        Some((header, blocks)) => (
            format!("== {engine}: the loop at {header} after the eight passes{version}\n"),
            flowc_ir::print::blocks(main, &blocks),
        ),
        None => (format!("== {engine}: the main graph has no loop\n"), String::new()),
    }
}

/// The AOT code of the hot loop beside (if `width` allows) or before the
/// JIT's traces, then the bridges.
fn hot_loops(
    label: Symbol,
    lowered: Option<Module>,
    env: &[(Symbol, flowc_lang::Value)],
    jit: &flowc_trace::jit::Jit,
    width: Option<usize>,
) -> String {
    let mut out = String::new();
    let traces = jit.traces();
    let anchor = traces.first().map(|(l, _)| *l);
    let (aot_header, aot) = aot_loop("native", label, lowered, env, anchor);
    let mut traces = traces.into_iter();
    let first = traces.next();
    let beside = match (&first, width) {
        (Some((anchor, f)), Some(width)) => {
            let left = format!("{aot_header}{aot}");
            let right = format!("== jit: the trace at {anchor}, optimized\n{}", flowc_ir::print::function(f));
            side_by_side(&left, &right, width)
        }
        _ => None,
    };
    match beside {
        Some(text) => out.push_str(&text),
        None => {
            out.push_str(&aot_header);
            out.push_str(&aot);
            match &first {
                Some((anchor, f)) => {
                    out.push_str(&format!("== jit: the trace at {anchor}, optimized\n"));
                    out.push_str(&flowc_ir::print::function(f));
                }
                None => out.push_str("== jit: no loop got hot\n"),
            }
        }
    }
    for (anchor, f) in traces {
        out.push_str(&format!("== jit: the trace at {anchor}, optimized\n"));
        out.push_str(&flowc_ir::print::function(f));
    }
    let bridges = jit.bridges();
    if !bridges.is_empty() {
        out.push_str(&format!("== jit: {}\n", plural(bridges.len(), "bridge")));
        for f in bridges {
            out.push_str(&flowc_ir::print::function(f));
        }
    }
    out
}

/// The loop whose header comes from label `anchor`, else the innermost
/// (deepest, then first) loop: its header's name and its blocks.
pub fn hot_loop(f: &Function, anchor: Option<Symbol>) -> Option<(String, Vec<flowc_ir::BlockId>)> {
    let forest = LoopForest::new(f);
    let loops: Vec<_> = forest.loops().map(|l| forest.get(l)).collect();
    let chosen = loops
        .iter()
        .find(|l| anchor.is_some() && f.blocks[l.header].name == anchor)
        .or_else(|| loops.iter().max_by_key(|l| (l.depth, std::cmp::Reverse(l.header.into_raw().into_u32()))))?;
    let name = match f.blocks[chosen.header].name {
        Some(n) => format!("{} ({n})", flowc_ir::print::block_ref(chosen.header)),
        None => flowc_ir::print::block_ref(chosen.header),
    };
    Some((name, chosen.blocks.clone()))
}

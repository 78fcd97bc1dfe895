//! `flowc compare FILE [--entry L] [--env ENV] [--static ENV] [--fuel N]
//! [--threshold N]`: runs the program on every engine — the reference
//! interpreter, the IR interpreter, native code compiled ahead of time, the
//! tracing JIT, and with `--static` the partial evaluator's residual program
//! compiled to native code — prints each result, and fails (exit 1) if any
//! two differ. Then it shows the two routes' code for the hot loop, one
//! after the other: the AOT loop after the eight passes, then the JIT's
//! optimized trace and its bridges.
//!
//! `--static` variables join the environment of the other engines,
//! replacing an entry fact's value (giving a variable different values in
//! `--env` and `--static` is a usage error); the residual program gets the
//! rest.

use flowc_ir::loops::LoopForest;
use flowc_ir::{Function, FunctionKind, Module};
use flowc_lang::interp::{self, Config, RuntimeError};
use flowc_lang::{pe, Symbol, Value};

use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    start: input::Start,
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

/// What an engine printed, or the error it stopped with.
fn show(result: Result<interp::Outcome, RuntimeError>) -> String {
    match result {
        Ok(o) => o.value.to_print_string(),
        Err(e) => format!("error: {}", e.kind.term()),
    }
}

pub fn main(args: Args) -> Result<(), Failure> {
    let (program, label, mut env) = args.start.load()?;
    let static_env = args.static_env.as_deref().map(|t| input::env("--static", t)).transpose()?;
    for (k, v) in static_env.iter().flatten() {
        match env.iter_mut().find(|(n, _)| n == k) {
            Some((_, old)) if args.start.env.is_some() && old != v => {
                return Err(Failure::usage(format!("{k} has different values in --env and --static")));
            }
            Some((_, old)) => *old = v.clone(),
            None => env.push((*k, v.clone())),
        }
    }
    let config = Config { fuel: args.fuel, ..Config::default() };
    let mut results: Vec<(&str, String)> = Vec::new();
    results.push(("interp", show(interp::run(&program, label, &env, &config))));
    let lowered = flowc_frontend::lower(&program, label);
    results.push((
        "ir",
        show(match &lowered {
            Ok(m) => flowc_ir::interp::run(m, &env, &config),
            Err(kind) => Err(RuntimeError { kind: kind.clone(), at: None }),
        }),
    ));
    results.push(("native", show(crate::cmd::run::native(&program, label, &env, &config)?)));
    let empty = Module::default();
    let mut jit = args.jit.jit(&program, lowered.as_ref().unwrap_or(&empty))?;
    results.push((
        "jit",
        show(match &lowered {
            Ok(_) => jit.run(label, &env, &config),
            Err(kind) => Err(RuntimeError { kind: kind.clone(), at: None }),
        }),
    ));
    if let Some(static_env) = &static_env {
        let residual = pe::specialize(&program, label, static_env, 100_000).map_err(Failure::input)?;
        let out = residual.program(&program);
        let dynamic: Vec<(Symbol, Value)> =
            env.iter().filter(|(k, _)| !static_env.iter().any(|(s, _)| s == k)).cloned().collect();
        results.push(("pe+native", show(crate::cmd::run::native(&out, residual.entry, &dynamic, &config)?)));
    }
    for (engine, result) in &results {
        println!("{engine:<10} {result}");
    }
    let agree = results.iter().all(|(_, r)| *r == results[0].1);
    println!();
    print!("{}", hot_loops(label, lowered.ok(), &env, &jit));
    if agree {
        Ok(())
    } else {
        Err(Failure::input("the engines disagree"))
    }
}

/// The AOT code of the hot loop after the eight passes, then the JIT's
/// traces and bridges.
fn hot_loops(
    label: Symbol,
    lowered: Option<Module>,
    env: &[(Symbol, flowc_lang::Value)],
    jit: &flowc_trace::jit::Jit,
) -> String {
    let mut out = String::new();
    let traces = jit.traces();
    match lowered {
        Some(module) => {
            // The version native code runs for this environment.
            let versions = flowc_passes::versions::optimize_versions(module, &Default::default());
            let (module, version) = match versions.small {
                Some((small, params))
                    if params
                        .iter()
                        .all(|p| env.iter().any(|(k, v)| k == p && flowc_lang::ops::range::is_small_param(v))) =>
                {
                    let names: Vec<&str> = params.iter().map(|p| p.as_str()).collect();
                    (small, format!(" (small {})", names.join(", ")))
                }
                _ => (versions.generic, String::new()),
            };
            let main = module.functions.iter().find(|f| f.kind == FunctionKind::Main).expect("a main graph");
            let anchor = traces.first().map(|(l, _)| *l);
            match hot_loop(main, anchor) {
                Some((header, blocks)) => {
                    out.push_str(&format!("== native: the loop at {header} after the eight passes{version}\n"));
                    out.push_str(&flowc_ir::print::blocks(main, &blocks));
                }
                None => out.push_str("== native: the main graph has no loop\n"),
            }
        }
        None => out.push_str(&format!("== native: cannot lower from {label}\n")),
    }
    if traces.is_empty() {
        out.push_str("== jit: no loop got hot\n");
    }
    for (anchor, f) in traces {
        out.push_str(&format!("== jit: the trace at {anchor}, optimized\n"));
        out.push_str(&flowc_ir::print::function(f));
    }
    let bridges = jit.bridges();
    if !bridges.is_empty() {
        out.push_str(&format!("== jit: {} bridges\n", bridges.len()));
        for f in bridges {
            out.push_str(&flowc_ir::print::function(f));
        }
    }
    out
}

/// The loop whose header comes from label `anchor`, else the innermost
/// (deepest, then first) loop: its header's name and its blocks.
fn hot_loop(f: &Function, anchor: Option<Symbol>) -> Option<(String, Vec<flowc_ir::BlockId>)> {
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

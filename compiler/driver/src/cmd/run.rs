//! `flowc run FILE [--entry L] [--env ENV] [--engine E] [--fuel N] [--stats]`.

use std::time::Instant;

use flowc_lang::interp::{self, Config};

use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    start: input::Start,
    /// The engine that runs the program.
    #[arg(long, value_enum, default_value = "interp")]
    engine: Engine,
    /// Stop with an error after N executed statements.
    #[arg(long)]
    fuel: Option<u64>,
    /// Print run statistics to stderr.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    jit: input::JitArgs,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Engine {
    /// The reference interpreter.
    Interp,
    /// The SSA IR from the front end, run by the IR interpreter.
    Ir,
    /// Compiled ahead of time through the eight passes to native code.
    Native,
    /// The interpreter with the tracing JIT: hot loops traced, optimized
    /// and compiled to native code.
    Jit,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Ir => "ir",
            Engine::Native => "native",
            Engine::Jit => "jit",
        }
    }
}

/// Lowers, optimizes with the eight passes, compiles and runs.
pub fn native(
    program: &flowc_lang::Program,
    label: flowc_lang::Symbol,
    env: &[(flowc_lang::Symbol, flowc_lang::Value)],
    config: &Config,
) -> Result<Result<interp::Outcome, interp::RuntimeError>, Failure> {
    let module = match flowc_frontend::lower(program, label) {
        Ok(m) => m,
        Err(kind) => return Ok(Err(interp::RuntimeError { kind, at: None })),
    };
    let versions = flowc_passes::versions::optimize_versions(module, &flowc_passes::context::Options::default());
    // Under --fuel the code counts it (one step per loop iteration).
    let options = flowc_codegen::Options { fuel: config.fuel.is_some() };
    let native = flowc_codegen::Native::compile_versions(&versions.generic, versions.small_version(), options)
        .map_err(|e| Failure::input(format!("code generation failed: {e}")))?;
    Ok(native.run_with(env, config))
}

pub fn main(args: Args) -> Result<(), Failure> {
    let (program, label, env) = args.start.load()?;
    let config = Config { fuel: args.fuel, ..Config::default() };
    let started = Instant::now();
    let heap_before = flowc_lang::heap::stats();
    let result = match args.engine {
        Engine::Interp => interp::run(&program, label, &env, &config),
        Engine::Ir => match flowc_frontend::lower(&program, label) {
            Ok(module) => flowc_ir::interp::run(&module, &env, &config),
            Err(kind) => Err(interp::RuntimeError { kind, at: None }),
        },
        Engine::Native => native(&program, label, &env, &config)?,
        Engine::Jit => match flowc_frontend::lower(&program, label) {
            Ok(module) => {
                let mut jit = args.jit.jit(&program, &module)?;
                let result = jit.run(label, &env, &config);
                if args.stats {
                    eprintln!("{}", jit.stats());
                }
                result
            }
            Err(kind) => Err(interp::RuntimeError { kind, at: None }),
        },
    };
    let elapsed = started.elapsed();
    match result {
        Ok(outcome) => {
            print!("{}", outcome.output());
            if args.stats {
                eprintln!(
                    "stats: engine {}, {} steps, {} allocations, {:.3} ms",
                    args.engine.name(),
                    outcome.steps,
                    outcome.allocations,
                    elapsed.as_secs_f64() * 1e3
                );
                eprintln!("{}", flowc_lang::heap::report(&flowc_lang::heap::stats().since(&heap_before)));
            }
            Ok(())
        }
        Err(mut e) => {
            // Compiled code knows where an error happened, not the text.
            e.at = e.at.map(|at| if at.text.is_empty() { at.with_text(&program) } else { at });
            Err(Failure::input(e))
        }
    }
}

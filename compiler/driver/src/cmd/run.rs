//! `flowc run FILE [--entry L] [--env ENV] [--engine E] [--fuel N] [--stats]`.

use std::time::Instant;

use flowc_lang::interp::{self, Config};

use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    /// The program (`-` reads standard input).
    file: String,
    /// The label to start at (default: the first `entry` fact, else the first block).
    #[arg(long)]
    entry: Option<String>,
    /// The start environment, e.g. '[x/10,y/20]' (default: the entry fact's).
    #[arg(long)]
    env: Option<String>,
    /// The engine that runs the program.
    #[arg(long, value_enum, default_value = "interp")]
    engine: Engine,
    /// Stop with an error after N executed statements.
    #[arg(long)]
    fuel: Option<u64>,
    /// Print run statistics to stderr.
    #[arg(long)]
    stats: bool,
}

#[derive(Copy, Clone, clap::ValueEnum)]
pub enum Engine {
    /// The reference interpreter.
    Interp,
    /// The SSA IR from the front end, run by the IR interpreter.
    Ir,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Interp => "interp",
            Engine::Ir => "ir",
        }
    }
}

pub fn main(args: Args) -> Result<(), Failure> {
    let program = input::load(&args.file)?;
    let (label, env) = input::start(&program, args.entry.as_deref(), args.env.as_deref())?;
    let config = Config { fuel: args.fuel, ..Config::default() };
    let started = Instant::now();
    let result = match args.engine {
        Engine::Interp => interp::run(&program, label, &env, &config),
        Engine::Ir => match flowc_frontend::lower(&program, label) {
            Ok(module) => flowc_ir::interp::run(&module, &env, &config),
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
            }
            Ok(())
        }
        Err(e) => Err(Failure::input(e)),
    }
}

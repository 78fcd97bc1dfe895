//! `flowc-fuzz checker [--from S] [--inputs N]`,
//! `flowc-fuzz kill [--from S] [--mutants N]` (the checker's kill rate per mutation class),
//! `flowc-fuzz engines [--from S] [--seeds N] [--alloc | --rotate] [--stress] [--huge]` (see the library docs) and
//! `flowc-fuzz show SEED` (the generated program, to run with flowc).
//! Exit status 1 when something failed; the failing seeds are printed (and
//! the checker's panicking inputs written to fuzz/crashes/).

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use flowc_tests::engines::Outcome;

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

#[derive(Parser)]
#[command(about = "Fuzz the IR checker and the engines")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Damaged IR texts into the parser and the checker.
    Checker {
        #[arg(long, default_value_t = 0)]
        from: u64,
        #[arg(long, default_value_t = 100_000)]
        inputs: u64,
    },
    /// Structured mutants of valid IR, one class per invariant: the
    /// checker's kill rate per class.
    Kill {
        #[arg(long, default_value_t = 0)]
        from: u64,
        #[arg(long, default_value_t = 100_000)]
        mutants: u64,
        /// Print every survivor (mutant not rejected as expected), not
        /// only the first of each class.
        #[arg(long)]
        all: bool,
    },
    /// Arbitrary valid IR modules through the checker, every pass, the IR
    /// interpreter and native code.
    Valid {
        #[arg(long, default_value_t = 0)]
        from: u64,
        #[arg(long, default_value_t = 10_000)]
        modules: u64,
        /// Print the module of this seed instead.
        #[arg(long)]
        show: Option<u64>,
        /// Generated traces (guards, resume data, virtual objects) instead
        /// of modules: checker, text format, IR interpreter and native code.
        #[arg(long)]
        traces: bool,
    },
    /// Print generated program SEED (to reproduce a failure with flowc).
    Show {
        seed: u64,
        /// The allocation-heavy program of the seed.
        #[arg(long)]
        alloc: bool,
        /// The program of the seed whose loop variables rotate.
        #[arg(long)]
        rotate: bool,
        /// The program with its main graph made huge (`gen::huge`).
        #[arg(long)]
        huge: bool,
    },
    /// Generated programs on every engine.
    Engines {
        #[arg(long, default_value_t = 0)]
        from: u64,
        #[arg(long, default_value_t = 10_000)]
        seeds: u64,
        /// Allocation-heavy programs (`gen::alloc_program`).
        #[arg(long)]
        alloc: bool,
        /// Programs whose loop variables take each other's values
        /// (`gen::rotate_program`).
        #[arg(long)]
        rotate: bool,
        /// Collect at every allocation, verifying the heap (as
        /// FLOWC_GC_STRESS=1 does).
        #[arg(long)]
        stress: bool,
        /// Programs whose main graph is huge where propagate solves the
        /// program facts (`gen::huge`): a residual program's shape.
        #[arg(long)]
        huge: bool,
    },
}

/// Generated program `seed`: allocation-heavy, with rotating loop
/// variables, or plain; its main graph made huge if `huge`.
fn generated(seed: u64, alloc: bool, rotate: bool, huge: bool) -> flowc_lang::ast::Program {
    let p = if alloc {
        flowc_tests::gen::alloc_program(seed)
    } else if rotate {
        flowc_tests::gen::rotate_program(seed)
    } else {
        flowc_tests::gen::program(seed)
    };
    if huge {
        flowc_tests::gen::huge(p)
    } else {
        p
    }
}

/// Runs `run` on seeds `from..from + n` (on a thread with a big stack),
/// prints each problem and then how many runs ended which way (`kind`).
fn tally<T>(what: &str, from: u64, n: u64, run: fn(u64) -> Result<T, String>, kind: fn(&T) -> String) -> ExitCode {
    let (failures, kinds) = flowc_codegen::with_stack(move || {
        let mut failures = 0;
        let mut kinds = std::collections::BTreeMap::<String, u64>::new();
        for seed in from..from + n {
            match run(seed) {
                Err(p) => {
                    println!("seed {seed}: {p}");
                    failures += 1;
                }
                Ok(end) => *kinds.entry(kind(&end)).or_default() += 1,
            }
        }
        (failures, kinds)
    });
    let seen: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!("{n} {what}, {failures} problems; ends: {}", seen.join(", "));
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Checker { from, inputs } => {
            let report = flowc_fuzz::checker::run(from, inputs);
            println!(
                "{} inputs: {} parse errors, {} invalid, {} valid, {} panics",
                report.inputs,
                report.parse_errors,
                report.invalid,
                report.valid,
                report.panics.len()
            );
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crashes");
            for (seed, text) in &report.panics {
                let _ = std::fs::create_dir_all(&dir);
                let path = dir.join(format!("checker-{seed}.ir"));
                let _ = std::fs::write(&path, text);
                println!("panic on seed {seed}: {}", path.display());
            }
            if report.panics.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Kill { from, mutants, all } => {
            let report = flowc_codegen::with_stack(move || flowc_fuzz::kill::run(from, mutants));
            print!("{}", report.table());
            let mut shown = std::collections::HashSet::new();
            for s in &report.survivors {
                if all || shown.insert(s.class) {
                    println!(
                        "\nsurvivor: {} on seed {} ({}); the checker said:\n{}\n{}",
                        s.class.name(),
                        s.seed,
                        s.origin,
                        s.said,
                        s.text
                    );
                }
            }
            for (seed, class, origin) in &report.panics {
                println!("panic: {} on seed {seed} ({origin})", class.name());
            }
            if report.all_killed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Valid { from, modules, show, traces } => {
            if let (Some(seed), true) = (show, traces) {
                let g = flowc_fuzz::irgen::trace(seed);
                println!("# args: {:?}", g.args.iter().map(|v| v.to_string()).collect::<Vec<_>>());
                print!("{}", flowc_ir::print::function(&g.trace));
                return ExitCode::SUCCESS;
            }
            if traces {
                return tally("traces", from, modules, flowc_fuzz::valid::run_trace, |end| match end {
                    Ok((_, label, _)) => format!("left to {label}"),
                    Err(e) => e.split('(').next().unwrap_or_default().to_owned(),
                });
            }
            if let Some(seed) = show {
                let g = flowc_fuzz::irgen::module(seed);
                println!("# env: {:?}", g.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>());
                print!("{}", flowc_ir::print::module(&g.module));
                return ExitCode::SUCCESS;
            }
            tally("modules", from, modules, flowc_fuzz::valid::run, |outcome| match outcome {
                Outcome::Output(_) => "printed".to_owned(),
                Outcome::Error(e) => e.split('(').next().unwrap_or_default().to_owned(),
            })
        }
        Command::Show { seed, alloc, rotate, huge } => {
            let p = generated(seed, alloc, rotate, huge);
            print!("{}", flowc_lang::syntax::print(flowc_lang::syntax::Syntax::Readable, &p));
            ExitCode::SUCCESS
        }
        Command::Engines { from, seeds, alloc, rotate, stress, huge } => {
            let failures = flowc_codegen::with_stack(move || {
                if stress {
                    flowc_lang::heap::with(|h| h.set_stress(true));
                }
                let mut failures = 0;
                for seed in from..from + seeds {
                    let p = generated(seed, alloc, rotate, huge);
                    // A panic is a finding too: name its seed and go on.
                    let found = std::panic::catch_unwind(|| flowc_fuzz::engines::disagreement_on(&p))
                        .unwrap_or_else(|_| Some("an engine panicked".to_owned()));
                    if let Some(d) = found {
                        println!("seed {seed}: {d}");
                        failures += 1;
                    }
                }
                failures
            });
            println!("{seeds} programs, {failures} disagreements");
            if failures == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

//! `flowc`: the command line of the framework (docs/architecture.md "Command line").
//!
//! Program output goes to stdout, diagnostics to stderr. Exit status: 0 on
//! success, 1 on a program or input error, 2 on bad usage (clap's own
//! status for usage errors).

mod cmd;
mod input;
mod progress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

// The process as flowc runs: its allocator, its load-time settings.
flowc_runtime::process_setup!();

#[derive(Parser)]
#[command(
    name = "flowc",
    version,
    about = "A compiler framework for the flow-graph language of 'Comparing Partial Evaluation and Tracing'"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program.
    Run(cmd::run::Args),
    /// Print a program in either syntax.
    Fmt(cmd::fmt::Args),
    /// Print the SSA IR of a program.
    Ir(cmd::ir::Args),
    /// Optimize a program through the eight passes.
    Opt(cmd::opt::Args),
    /// Partially evaluate a program (Part 1's do_pe).
    Pe(cmd::pe::Args),
    /// Trace a loop, optimize the trace, run it (Parts 2-4's do_trace).
    Trace(cmd::trace::Args),
    /// Run on every engine, fail if any result differs, show the AOT hot
    /// loop and the JIT trace.
    Compare(cmd::compare::Args),
    /// Write one HTML page showing the source, the IR after every pass,
    /// the CFGs, the machine code, the JIT's traces, linked to each other.
    Explore(cmd::explore::Args),
    /// Compile ahead of time to a native executable.
    Build(cmd::build::Args),
}

/// A failed command: the message for stderr and the exit status.
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// A program or input error (exit 1).
    pub fn input(message: impl ToString) -> Failure {
        Failure { message: message.to_string(), code: 1 }
    }

    /// Bad usage (exit 2).
    pub fn usage(message: impl ToString) -> Failure {
        Failure { message: message.to_string(), code: 2 }
    }
}

fn main() -> ExitCode {
    flowc_runtime::init_process();
    restore_sigpipe();
    let cli = Cli::parse();
    // Every command runs on a thread with a big stack: generated code and
    // the partial evaluator recurse as deep as the programs they run. That
    // thread ends the process itself when its command is done
    // ([`finish`]): the main thread only waits, and woken by the command's
    // end it was queued behind a busy core for a scheduler tick while the
    // other stood idle — 3.9 ms of a 15 ms run (`perf sched timehist`: a
    // short `--engine jit` run, the JIT's start being prepared on the
    // other core).
    let result = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || flowc_runtime::end_process(finish(dispatch(cli)).into()))
        .map_err(|e| Failure::input(format!("cannot start: {e}")))
        .and_then(|t| t.join().map_err(|_| Failure::input("internal error: the command panicked")));
    ExitCode::from(finish(result))
}

/// The exit status of a command that came to `result`, its failure told
/// on standard error.
fn finish(result: Result<(), Failure>) -> u8 {
    match result {
        Ok(()) => 0,
        Err(f) => {
            eprintln!("flowc: {}", f.message);
            f.code
        }
    }
}

/// Restores the default action of SIGPIPE, which the Rust runtime ignores:
/// when the reader of our output goes away (`flowc opt … | head`), flowc
/// ends quietly like other command-line tools, instead of panicking on the
/// failed write.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists;
    // setting a signal's disposition to SIG_DFL installs no handler code.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn dispatch(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Run(args) => cmd::run::main(args),
        Command::Fmt(args) => cmd::fmt::main(args),
        Command::Ir(args) => cmd::ir::main(args),
        Command::Opt(args) => cmd::opt::main(args),
        Command::Pe(args) => cmd::pe::main(args),
        Command::Trace(args) => cmd::trace::main(args),
        Command::Compare(args) => cmd::compare::main(args),
        Command::Explore(args) => cmd::explore::main(args),
        Command::Build(args) => cmd::build::main(args),
    }
}

//! `ir-check FILE...`: parses each file as an IR module (text format of
//! `flowc_ir::print`) and checks it with `check_module`.
//!
//! Rules:
//! - `-` reads standard input (named `-` in messages).
//! - Each violation prints as `FILE: <violation>` on stderr; parse errors
//!   print with their own `Display` (which names the file); unreadable
//!   files print `ir-check: FILE: <error>`.
//! - Exit status: 0 if every file is valid, 1 if any file is invalid or
//!   unreadable, 2 on bad usage (no files, unknown option).
//! - When every file is valid, one line on stderr says what was checked
//!   (files, functions, blocks, instructions); `-q` / `--quiet` silences it.
//! - `-h` / `--help` prints the usage on stdout and exits 0; `--` ends the
//!   options. Nothing panics: write errors on stderr are ignored.

use std::io::{Read, Write};
use std::process::ExitCode;

const USAGE: &str = "usage: ir-check [-q] FILE...   (FILE `-` reads standard input; -q: nothing on success)";

/// What the valid files held.
#[derive(Default)]
struct Checked {
    functions: usize,
    blocks: usize,
    insts: usize,
}

fn main() -> ExitCode {
    let mut files = Vec::new();
    let mut options_done = false;
    let mut quiet = false;
    for arg in std::env::args_os().skip(1) {
        let arg = arg.to_string_lossy().into_owned();
        if !options_done && arg == "--" {
            options_done = true;
        } else if !options_done && (arg == "-h" || arg == "--help") {
            let _ = writeln!(std::io::stdout(), "{USAGE}");
            return ExitCode::SUCCESS;
        } else if !options_done && (arg == "-q" || arg == "--quiet") {
            quiet = true;
        } else if !options_done && arg.starts_with('-') && arg != "-" {
            say(&format!("ir-check: unknown option `{arg}`\n{USAGE}"));
            return ExitCode::from(2);
        } else {
            files.push(arg);
        }
    }
    if files.is_empty() {
        say(USAGE);
        return ExitCode::from(2);
    }
    let mut ok = true;
    let mut checked = Checked::default();
    for file in &files {
        ok &= check_file(file, &mut checked);
    }
    if ok {
        if !quiet {
            let n = files.len();
            say(&format!(
                "ir-check: {n} file{} valid ({} functions, {} blocks, {} instructions)",
                if n == 1 { "" } else { "s" },
                checked.functions,
                checked.blocks,
                checked.insts
            ));
        }
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Checks one file; reports on stderr and returns whether it is valid.
fn check_file(file: &str, checked: &mut Checked) -> bool {
    let text = match read(file) {
        Ok(text) => text,
        Err(e) => {
            say(&format!("ir-check: {file}: {e}"));
            return false;
        }
    };
    let module = match flowc_ir::parse::module(file, &text) {
        Ok(m) => m,
        Err(e) => {
            say(&e.to_string());
            return false;
        }
    };
    match flowc_ir_checker::check_module(&module) {
        Ok(()) => {
            checked.functions += module.functions.len();
            for f in &module.functions {
                checked.blocks += f.layout.len();
                checked.insts +=
                    f.layout.iter().map(|&b| f.blocks[b].phis.len() + f.blocks[b].insts.len()).sum::<usize>();
            }
            true
        }
        Err(violations) => {
            for v in violations {
                say(&format!("{file}: {v}"));
            }
            false
        }
    }
}

fn read(file: &str) -> std::io::Result<String> {
    let bytes = if file == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf)?;
        buf
    } else {
        std::fs::read(file)?
    };
    String::from_utf8(bytes).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8"))
}

fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

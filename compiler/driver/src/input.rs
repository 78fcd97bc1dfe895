//! Reading programs and environments given on the command line, and the
//! argument groups the commands share: [`Source`] (FILE, `--entry`),
//! [`Start`] (those and `--env`) and [`JitArgs`].

use std::io::Read;
use std::io::Write as _;

use flowc_lang::interp::{ErrorKind, Liveness, Resolved, RuntimeError};
use flowc_lang::syntax::prolog::parse_env_of;
use flowc_lang::{syntax, Program, Symbol, Value};

use crate::Failure;

/// Reads FILE (`-` = standard input).
pub fn read_source(file: &str) -> Result<String, Failure> {
    if file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| Failure::input(format!("cannot read standard input: {e}")))?;
        Ok(s)
    } else {
        std::fs::read_to_string(file).map_err(|e| Failure::input(format!("cannot read {file}: {e}")))
    }
}

/// Reads and parses FILE in the syntax its content shows.
pub fn load(file: &str) -> Result<Program, Failure> {
    parse_source(file, &read_source(file)?)
}

/// What a command keeps of a program's text when it frees the syntax tree
/// while compiling and may need the tree again to name an error's
/// statement (`run --engine native`): the text itself when it came from
/// standard input, which cannot be read twice; for a file only its name
/// and a hash of its content (at 10^6 statements the text is 28 MB, held
/// through the front end's peak), to read it again and parse it only if
/// it is unchanged.
pub struct SourceText {
    file: String,
    kept: Kept,
}

enum Kept {
    Text(String),
    Hash(u64),
}

impl SourceText {
    /// Reads and parses FILE (`-` = standard input).
    pub fn load(file: &str) -> Result<(SourceText, Program), Failure> {
        let text = read_source(file)?;
        let program = parse_source(file, &text)?;
        let kept = if file == "-" { Kept::Text(text) } else { Kept::Hash(hash(&text)) };
        Ok((SourceText { file: file.to_string(), kept }, program))
    }

    /// The program parsed again, if its text is still what was first
    /// read (`None` for a file changed or removed since).
    pub fn reparse(&self) -> Option<Program> {
        match &self.kept {
            Kept::Text(text) => parse_source(&self.file, text).ok(),
            Kept::Hash(h) => {
                let text = read_source(&self.file).ok()?;
                (hash(&text) == *h).then(|| parse_source(&self.file, &text).ok()).flatten()
            }
        }
    }
}

fn parse_source(file: &str, text: &str) -> Result<Program, Failure> {
    let name = if file == "-" { "<stdin>" } else { file };
    syntax::parse(name, text).map_err(Failure::input)
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// A start environment: variables and their values, in the order given
/// (not `flowc_lang::Env`, the interpreter's map).
pub type StartEnv = Vec<(Symbol, Value)>;

/// Parses the list `[x/10,y/20]` given to `option` (`--env`, `--static`),
/// or read from file `F` when given as `@F` (an environment too long for a
/// command line: a program given as a list); an error names the option.
pub fn env(option: &str, text: &str) -> Result<StartEnv, Failure> {
    if let Some(file) = text.strip_prefix('@') {
        let text = std::fs::read_to_string(file)
            .map_err(|e| Failure::input(format!("{option} @{file}: cannot read {file}: {e}")))?;
        return parse_env_of(option, text.trim()).map_err(Failure::input);
    }
    parse_env_of(option, text).map_err(Failure::usage)
}

/// The start label and environment: `--entry` or the first `entry` fact (or
/// the first block); `--env` or the environment of the chosen label's `entry` fact.
pub fn start(program: &Program, entry: Option<&str>, env_text: Option<&str>) -> Result<(Symbol, StartEnv), Failure> {
    let label = match entry {
        Some(l) => Symbol::intern(l),
        None => program.default_entry().ok_or_else(|| Failure::input("the program has no blocks to run"))?,
    };
    let env = match env_text {
        Some(t) => env("--env", t)?,
        None => program.entry_env(label).map(<[_]>::to_vec).unwrap_or_default(),
    };
    Ok((label, env))
}

/// The failure for a run from `label` with `env` that ended in `e`. When
/// `e` is a variable the start label reads before writing it, and the
/// environment does not give it, a note names every variable the label
/// needs (a label without its own `entry` fact starts with an empty
/// environment unless `--env` gives one).
pub fn run_failure(program: &Program, label: Symbol, env: &StartEnv, e: RuntimeError) -> Failure {
    let needed = match e.kind {
        ErrorKind::Unbound(v) => needed_at(program, label, env).filter(|needed| needed.contains(&v)),
        _ => None,
    };
    let Some(needed) = needed else { return Failure::input(e) };
    let names: Vec<String> = needed.iter().map(|v| format!("`{v}`")).collect();
    let example: Vec<String> = needed.iter().map(|v| format!("{v}/0")).collect();
    let given = if env.is_empty() {
        "the start environment is empty".to_string()
    } else {
        let given: Vec<String> = env.iter().map(|(k, _)| format!("`{k}`")).collect();
        format!("the start environment gives {}", given.join(", "))
    };
    Failure::input(format!(
        "{e}\n  note: label `{label}` reads {} before writing {}; {given}: give {} with --env, e.g. --env '[{}]'",
        names.join(", "),
        if needed.len() == 1 { "it" } else { "them" },
        if needed.len() == 1 { "it" } else { "them" },
        example.join(",")
    ))
}

/// The variables main-graph label `label` may read before writing them
/// that `env` does not give, in the graph's variable order; `None` when the
/// label is not in the main graph.
fn needed_at(program: &Program, label: Symbol, env: &StartEnv) -> Option<Vec<Symbol>> {
    let resolved = Resolved::new(program, &[]);
    let main = resolved.graphs.first()?;
    let &block = main.labels.get(&label)?;
    let live = Liveness::of(main);
    Some(
        live.live_at(block)
            .into_iter()
            .map(|slot| main.slot_names[slot as usize])
            .filter(|v| !env.iter().any(|(k, _)| k == v))
            .collect(),
    )
}

/// FILE and `--entry`: the program and the label its main graph starts at.
#[derive(clap::Args)]
pub struct Source {
    /// The program (`-` reads standard input).
    pub file: String,
    /// The label to start at (default: the first `entry` fact, else the first block).
    #[arg(long)]
    pub entry: Option<String>,
}

impl Source {
    /// The parsed program and its start label.
    pub fn load(&self) -> Result<(Program, Symbol), Failure> {
        let program = load(&self.file)?;
        let (label, _) = start(&program, self.entry.as_deref(), None)?;
        Ok((program, label))
    }
}

/// [`Source`] and `--env`: a program ready to run.
#[derive(clap::Args)]
pub struct Start {
    #[command(flatten)]
    pub source: Source,
    /// The start environment, e.g. '[x/10,y/20]' (default: the entry fact's).
    #[arg(long)]
    pub env: Option<String>,
}

impl Start {
    /// The parsed program, its start label and start environment.
    pub fn load(&self) -> Result<(Program, Symbol, StartEnv), Failure> {
        let program = load(&self.source.file)?;
        let (label, env) = self.start(&program)?;
        Ok((program, label, env))
    }

    /// [`Start::load`], and what it takes to parse the program again
    /// ([`SourceText`]).
    pub fn load_with_text(&self) -> Result<(SourceText, Program, Symbol, StartEnv), Failure> {
        let (text, program) = SourceText::load(&self.source.file)?;
        let (label, env) = self.start(&program)?;
        Ok((text, program, label, env))
    }

    fn start(&self, program: &Program) -> Result<(Symbol, StartEnv), Failure> {
        start(program, self.source.entry.as_deref(), self.env.as_deref())
    }
}

/// The JIT's thresholds.
#[derive(clap::Args)]
pub struct JitArgs {
    /// JIT: jumps to a loop header before it is traced.
    #[arg(long, default_value_t = flowc_trace::jit::Options::default().threshold)]
    pub threshold: u32,
    /// JIT: failures of a guard before it gets a bridge.
    #[arg(long, default_value_t = flowc_trace::jit::Options::default().bridge_threshold)]
    pub bridge_threshold: u32,
    /// JIT: write a log of what the JIT does (traces, bridges, aborts and
    /// why, and per trace its entries and exits) to FILE (`-` for standard
    /// error); also set by the environment variable FLOWC_JIT_LOG.
    #[arg(long, value_name = "FILE")]
    pub jit_log: Option<String>,
    /// JIT: statements the interpreter runs alone before the JIT starts
    /// (`flowc run`; 0 starts it at once; default: a fixed cost plus a
    /// share per statement of the program, so that a run too short to
    /// win back the JIT's start never pays for it).
    #[arg(long, value_name = "STATEMENTS")]
    pub warmup: Option<u64>,
}

impl JitArgs {
    pub fn options(&self) -> flowc_trace::jit::Options {
        flowc_trace::jit::Options {
            threshold: self.threshold,
            bridge_threshold: self.bridge_threshold,
            ..Default::default()
        }
    }

    /// A JIT for `program` lowered as `module`, with these options and log.
    pub fn jit<'p>(
        &self,
        program: &'p Program,
        module: &flowc_ir::Module,
    ) -> Result<flowc_trace::jit::Jit<'p>, Failure> {
        self.jit_with(program, module, self.options())
    }

    /// [`JitArgs::jit`] with `options` (made from [`JitArgs::options`]).
    pub fn jit_with<'p>(
        &self,
        program: &'p Program,
        module: &flowc_ir::Module,
        options: flowc_trace::jit::Options,
    ) -> Result<flowc_trace::jit::Jit<'p>, Failure> {
        let prepared = flowc_trace::jit::Prepared::new(program, module.clone());
        Ok(Self::jit_logging(program, prepared, options, self.open_log()?))
    }

    /// The log `--jit-log` asks for, opened (`-`: standard error), if any.
    pub fn open_log(&self) -> Result<Option<Box<dyn std::io::Write>>, Failure> {
        Ok(match self.jit_log.as_deref() {
            None => None,
            Some("-") => Some(Box::new(std::io::stderr())),
            Some(path) => {
                let file = std::fs::File::create(path)
                    .map_err(|e| Failure::input(format!("cannot write the JIT log to {path}: {e}")))?;
                Some(Box::new(std::io::BufWriter::new(file)))
            }
        })
    }

    /// A JIT for `program` as `prepared` with `options`, logging to `log`
    /// ([`JitArgs::open_log`]; without one, as `FLOWC_JIT_LOG` says).
    pub fn jit_logging<'p>(
        program: &'p Program,
        prepared: flowc_trace::jit::Prepared,
        options: flowc_trace::jit::Options,
        log: Option<Box<dyn std::io::Write>>,
    ) -> flowc_trace::jit::Jit<'p> {
        let mut jit = flowc_trace::jit::Jit::prepared(program, prepared, options);
        if let Some(log) = log {
            jit.set_log(log);
        }
        jit
    }

    /// How a run that the JIT never took over ended: within the warm-up
    /// of `warmup` statements, or `waited` statements past it while the
    /// JIT's start was prepared (for `--stats` and the JIT log).
    pub fn not_started(warmup: u64, waited: u64) -> String {
        if waited > 0 {
            format!(
                "the run ended {waited} statements past the JIT's warm-up of {warmup}, while its start was prepared"
            )
        } else {
            format!("the run ended within the JIT's warm-up of {warmup} statements")
        }
    }

    /// Writes to `log` (else to the file `FLOWC_JIT_LOG` names, as the JIT
    /// would, if it can) how the run ended before the JIT took it over
    /// ([`JitArgs::not_started`]): no JIT was built, so no log would say
    /// anything.
    pub fn log_not_started(log: Option<Box<dyn std::io::Write>>, warmup: u64, waited: u64) {
        let log = log.or_else(|| {
            let path = std::env::var_os("FLOWC_JIT_LOG")?;
            std::fs::File::create(path).ok().map(|f| Box::new(f) as Box<dyn std::io::Write>)
        });
        if let Some(mut log) = log {
            let how = JitArgs::not_started(warmup, waited);
            let _ = writeln!(log, "{how}: nothing was traced (--warmup 0 starts the JIT at once)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SourceText;

    #[test]
    fn a_file_is_parsed_again_only_while_its_text_is_unchanged() {
        let path = std::env::temp_dir().join(format!("flowc-source-text-{}.fg", std::process::id()));
        std::fs::write(&path, "start:\n    x = 1\n    print_and_stop(x)\n").unwrap();
        let file = path.to_str().unwrap();
        let Ok((text, program)) = SourceText::load(file) else { panic!("{file} loads") };
        assert_eq!(text.reparse().as_ref(), Some(&program));
        std::fs::write(&path, "start:\n    x = 2\n    print_and_stop(x)\n").unwrap();
        assert_eq!(text.reparse(), None);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(text.reparse(), None);
    }
}

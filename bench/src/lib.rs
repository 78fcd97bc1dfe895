//! flowc-bench: benchmark workloads shared by the bench targets.
//!
//! - `benches/interp.rs` (divan): reference-interpreter statements per second;
//! - `benches/vs_swipl.rs`: the same workloads on the series' Prolog
//!   interpreter under SWI-Prolog, measured in the same run, as a ratio;
//! - `benches/native.rs`: native code against the interpreter and against
//!   hand-written Rust;
//! - `benches/jit.rs`: the JIT on the Part 4 bytecode interpreter against
//!   native code, the partial evaluator, LuaJIT and PyPy, and its latency.

pub mod compile_run;
pub mod peers;
pub mod scale;

use std::path::{Path, PathBuf};

use flowc_lang::interp::{self, Config, Outcome};
use flowc_lang::syntax::prolog::parse_env;
use flowc_lang::{syntax, Program, Symbol, Value};

/// One program with its start label and environment.
pub struct Workload {
    pub name: &'static str,
    /// Path relative to `bench/programs/`.
    pub file: &'static str,
    pub entry: &'static str,
    /// The environment in the series' list syntax (also handed to Prolog).
    pub env: String,
}

const SQUARE: &str = "[mov_a_r0, mov_a_r1, mov_r0_a, decr_a, mov_a_r0, mov_r2_a, add_r1_to_a, mov_a_r2, mov_r0_a, jump_if_a, 2, mov_r2_a, return_a]";

/// The interpreter workloads: fib, gcd, and the Part 4 bytecode interpreter.
/// `scale` multiplies the loop counts.
pub fn workloads(scale: u32) -> Vec<Workload> {
    vec![
        Workload { name: "fib", file: "fib.pl", entry: "start", env: format!("[reps/{}]", 100 * scale) },
        Workload { name: "gcd", file: "gcd.pl", entry: "start", env: format!("[n/{}]", 200 * scale) },
        Workload {
            name: "bytecode",
            // The Part 4 interpreter as the series writes it (one copy, in examples/).
            file: "../../examples/bytecode.pl",
            entry: "bytecode_loop",
            env: format!("[bytecode/{SQUARE}, pc/0, a/{}, r0/0, r1/0, r2/0]", 400 * scale),
        },
    ]
}

pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("programs")
}

/// A workload ready to run.
pub struct Loaded {
    pub program: Program,
    pub entry: Symbol,
    pub env: Vec<(Symbol, Value)>,
}

impl Loaded {
    /// The program lowered from its entry, as the driver hands it to the
    /// JIT.
    pub fn lower(&self) -> flowc_ir::Module {
        flowc_frontend::lower(&self.program, self.entry).expect("the entry label exists")
    }
}

impl Workload {
    pub fn path(&self) -> PathBuf {
        programs_dir().join(self.file)
    }

    pub fn load(&self) -> Loaded {
        let src = std::fs::read_to_string(self.path()).expect("bench program is readable");
        let program = syntax::parse(self.file, &src).unwrap_or_else(|e| panic!("{e}"));
        let env = parse_env(&self.env).unwrap_or_else(|e| panic!("{e}"));
        Loaded { program, entry: Symbol::intern(self.entry), env }
    }
}

/// Loads `file` (under `bench/programs/`) to run from its entry fact, or
/// from `entry` with `env` (list syntax) where given.
pub fn load(file: &str, entry: Option<&str>, env: Option<&str>) -> Loaded {
    let src = std::fs::read_to_string(programs_dir().join(file)).expect("bench program is readable");
    let program = syntax::parse(file, &src).unwrap_or_else(|e| panic!("{e}"));
    let entry = entry.map(Symbol::intern).or_else(|| program.default_entry()).expect("an entry");
    let env = match env {
        Some(text) => parse_env(text).unwrap_or_else(|e| panic!("{e}")),
        None => program.entry_env(entry).unwrap_or_default().to_vec(),
    };
    Loaded { program, entry, env }
}

/// The median wall-clock seconds of `runs` calls of `f`.
pub fn median_secs(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Lowers `program` from `entry`, runs the eight passes and compiles the
/// module to native code, as `flowc build` does (both versions,
/// compacted: [`flowc_passes::versions::pipeline`]).
pub fn compile_native(program: &Program, entry: Symbol) -> flowc_codegen::Native {
    let module = flowc_frontend::lower(program, entry).expect("the entry exists");
    let versions = flowc_tests::engines::optimize_versions(module);
    flowc_codegen::Native::compile_versions(
        &versions.generic,
        versions.small_version(),
        flowc_codegen::Options::default(),
    )
    .expect("code generation succeeds")
}

impl Loaded {
    pub fn run(&self) -> Outcome {
        interp::run(&self.program, self.entry, &self.env, &Config::default()).expect("bench program runs")
    }
}

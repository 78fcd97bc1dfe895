//! The corpus: every program under `examples/` and `tests/corpus/`, parsed.
//! Differential and round-trip tests run over all of it.

use std::path::{Path, PathBuf};

use flowc_lang::{syntax, Program};

/// One corpus program.
pub struct CorpusProgram {
    pub path: PathBuf,
    pub source: String,
    pub program: Program,
}

impl CorpusProgram {
    /// The path relative to the workspace, for messages.
    pub fn name(&self) -> String {
        self.path.strip_prefix(workspace_root()).unwrap_or(&self.path).display().to_string()
    }
}

/// The workspace root (this crate is `tests/kit`).
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).expect("tests/kit is two levels down")
}

/// Paths of all corpus files, sorted.
pub fn paths() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["examples", "tests/corpus"] {
        collect(&workspace_root().join(dir), &mut out);
    }
    out.sort();
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if matches!(p.extension().and_then(|e| e.to_str()), Some("pl" | "fg")) {
            out.push(p);
        }
    }
}

/// The corpus file at `path`, read and parsed; panics with the parse error
/// if it does not parse (corpus files must be valid).
fn read(path: PathBuf) -> CorpusProgram {
    let source = std::fs::read_to_string(&path).expect("corpus file is readable");
    let program = syntax::parse(&path.display().to_string(), &source).unwrap_or_else(|e| panic!("{e}"));
    CorpusProgram { path, source, program }
}

/// The corpus program at `path` (relative to the workspace root).
pub fn program(path: &str) -> Program {
    read(workspace_root().join(path)).program
}

/// The programs of the error corpus (`tests/corpus/errors/`) that end in
/// an error without fuel, as paths relative to the workspace, sorted:
/// every one but `runaway.fg`, which never stops.
pub fn failing_programs() -> Vec<String> {
    let dir = workspace_root().join("tests/corpus/errors");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("the error corpus is readable")
        .map(|e| format!("tests/corpus/errors/{}", e.expect("a directory entry").file_name().to_string_lossy()))
        .filter(|f| !f.ends_with("runaway.fg"))
        .collect();
    files.sort();
    files
}

/// Every corpus program, parsed.
pub fn all() -> Vec<CorpusProgram> {
    paths().into_iter().map(read).collect()
}

/// Every corpus program by name, then the generated programs of seeds
/// `0..seeds` (named `seed N`): what the cross-engine tests run.
pub fn with_generated(seeds: u64) -> Vec<(String, Program)> {
    let corpus = all().into_iter().map(|p| (p.name(), p.program));
    corpus.chain(crate::gen::programs(seeds)).collect()
}

//! The same programs under other implementations (LuaJIT, PyPy), run as
//! scripts from bench/lua and bench/python, for the benchmarks' ratios.

use std::path::Path;
use std::process::Command;

/// The workspace root.
pub fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Runs a script (`luajit FILE N`, the file relative to the workspace)
/// that prints its result and, on stderr, its seconds; the best of three
/// runs, if `interpreter` is installed. Panics if it prints another result
/// than `expected`.
pub fn script_secs(interpreter: &str, file: &str, n: i64, expected: &str) -> Option<f64> {
    let mut best: Option<f64> = None;
    for _ in 0..3 {
        let out = Command::new(interpreter).arg(root().join(file)).arg(n.to_string()).output().ok()?;
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), expected, "{interpreter} {file} prints another result");
        let secs: f64 = String::from_utf8_lossy(&out.stderr).trim().parse().ok()?;
        best = Some(best.map_or(secs, |b| b.min(secs)));
    }
    best
}

/// A ratio for a table: two decimals, `-` when there is none.
pub fn cell(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |x| format!("{x:.2}"))
}

//! Filetests: one file per case under `tests/filetests/`, in the IR text
//! format (`flowc_ir::print`), Cranelift-style. A file starts with a
//! directive, then the input IR, then the expected output after an
//! `# expected:` line, every line of it commented out (`# `), so that the
//! whole file is still IR that `ir-check` reads:
//!
//! ```text
//! # test: opt normalize,propagate,cleanup
//! # Free text saying what the case shows.
//! main start(v0:n) {
//! ...
//! }
//! # expected:
//! # main start(v0:n) {
//! # ...
//! ```
//!
//! Directives:
//! - `check`: the IR checker's verdict: `ok`, or each violation on a
//!   line of its own.
//! - `opt PASS,...`: the passes named, in order (`flowc opt --passes`),
//!   the checker after each; the IR after the last, or why the list
//!   cannot run (a pass reading what no pass before it leaves).
//! - `walks`: the IR after native code's walks are put before its chains
//!   of links (`flowc_codegen::walks`; here in every function, not only
//!   huge ones), the checker after it.
//! - `lower`: the Cranelift IR of every function as `flowc build`
//!   lowers it, before Cranelift optimizes it
//!   (`flowc_codegen::object::lowered`). Code names atoms, fields and
//!   classes by their symbols' numbers, which follow the order the test
//!   process interned them in, so a `lower` case names none: the runner
//!   refuses one that does.
//!
//! Files are read with their line ends as `\n`.
//!
//! `UPDATE_EXPECT=1 cargo test -p flowc-tests --test suite filetests`
//! rewrites each file's expected output with what the case gives; read
//! the diff before committing it.

use std::path::{Path, PathBuf};

use flowc_passes::{run_passes, Context, Pass, PIPELINE};

/// The line that ends a case's input and starts its expected output.
const EXPECTED: &str = "# expected:";

/// One case: its directive, its input and its expected output.
struct Case {
    directive: String,
    input: String,
    expected: String,
}

impl Case {
    fn parse(path: &Path, text: &str) -> Case {
        let text = &text.replace("\r\n", "\n");
        let first = text.lines().next().unwrap_or_default();
        let directive = first
            .strip_prefix("# test:")
            .unwrap_or_else(|| panic!("{}: the first line is not `# test: DIRECTIVE`", path.display()))
            .trim()
            .to_string();
        let (input, expected) = match text.split_once(&format!("\n{EXPECTED}\n")) {
            Some((input, expected)) => (format!("{input}\n"), expected),
            None if text.ends_with('\n') => (text.to_string(), ""),
            None => (format!("{text}\n"), ""),
        };
        let expected = expected
            .lines()
            .map(|l| l.strip_prefix("# ").or_else(|| l.strip_prefix('#')).unwrap_or(l))
            .map(|l| format!("{l}\n"))
            .collect();
        Case { directive, input, expected }
    }

    /// The file's text with `actual` as its expected output.
    fn with_expected(&self, actual: &str) -> String {
        let commented: String =
            actual.lines().map(|l| if l.is_empty() { "#\n".to_string() } else { format!("# {l}\n") }).collect();
        format!("{}{EXPECTED}\n{commented}", self.input)
    }
}

/// What the case's directive gives for its input.
fn run(path: &Path, case: &Case) -> String {
    let name = path.display().to_string();
    let (command, args) = case.directive.split_once(' ').unwrap_or((&case.directive, ""));
    // The directive first: a misspelt one is the file's mistake, whatever
    // its IR.
    let passes = match (command, args.trim()) {
        ("check" | "lower" | "walks", "") => Vec::new(),
        ("opt", names) if !names.is_empty() => passes_named(&name, names),
        _ => panic!("{name}: `# test: {}` is not a directive (check, opt PASS,..., walks, lower)", case.directive),
    };
    let module = match flowc_ir::parse::module(&name, &case.input) {
        Ok(m) => m,
        Err(e) => return format!("parse error: {e}\n"),
    };
    let verdict = match flowc_ir_checker::check_module(&module) {
        Ok(()) => "ok\n".to_string(),
        Err(violations) => violations.iter().map(|v| format!("{v}\n")).collect(),
    };
    match command {
        "check" => verdict,
        _ if verdict != "ok\n" => format!("the input is not valid IR:\n{verdict}"),
        "opt" => optimize(module, &passes),
        "walks" => {
            let mut module = module;
            flowc_codegen::walks::rewrite_module(&mut module, true);
            match flowc_ir_checker::check_module(&module) {
                Ok(()) => flowc_ir::print::module(&module),
                Err(v) => format!("the checker rejects the IR after the walks: {v:?}\n"),
            }
        }
        _ => {
            assert!(
                !names_symbols(&module),
                "{name}: a `lower` case names no atom, field or class (see the module docs)"
            );
            flowc_codegen::object::lowered(&module).unwrap_or_else(|e| format!("error: {e}\n"))
        }
    }
}

/// Whether lowering `module` would put a symbol's number in its code: an
/// atom constant, a field, a class or an unknown operation's name.
fn names_symbols(module: &flowc_ir::Module) -> bool {
    use flowc_ir::{InstKind, Operand};
    let atom = |o: &Operand| matches!(o, Operand::Const(flowc_lang::Value::Atom(_)));
    module.functions.iter().any(|f| {
        f.all_insts().any(|(_, i)| {
            let kind = &f.insts[i].kind;
            matches!(
                kind,
                InstKind::Get { .. }
                    | InstKind::Set { .. }
                    | InstKind::New(_)
                    | InstKind::Op { op: flowc_lang::ast::Operator::Unknown(_), .. }
            ) || kind.operands().any(atom)
        }) || f.layout.iter().any(|&b| f.blocks[b].term.operands().any(atom))
    })
}

/// The passes named in `names` (comma-separated), for case `name`.
fn passes_named(name: &str, names: &str) -> Vec<&'static Pass> {
    names
        .split(',')
        .map(|n| n.trim())
        .map(|n| PIPELINE.iter().find(|p| p.name == n).unwrap_or_else(|| panic!("{name}: no pass is named `{n}`")))
        .collect()
}

/// `passes` run over `module`, the checker after each: the IR after the
/// last, or why they cannot run.
fn optimize(mut module: flowc_ir::Module, passes: &[&Pass]) -> String {
    let mut cx = Context::new(&module);
    let mut invalid = None;
    let ran = run_passes(&mut module, &mut cx, passes, |pass, m, _| {
        if let (Err(v), None) = (flowc_ir_checker::check_module(m), &invalid) {
            invalid = Some(format!("the checker rejects the IR after `{}`: {v:?}\n", pass.name));
        }
    });
    match (ran, invalid) {
        (Err(unmet), _) => format!("error: {unmet}\n"),
        (Ok(()), Some(invalid)) => invalid,
        (Ok(()), None) => flowc_ir::print::module(&module),
    }
}

/// The case files, sorted.
fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ir"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_filetest_gives_its_expected_output() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let files = cases();
    assert!(files.len() >= 6, "the filetests are missing: {files:?}");
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("a readable case");
        let case = Case::parse(path, &text);
        let actual = run(path, &case);
        if actual == case.expected {
            continue;
        }
        if update {
            std::fs::write(path, case.with_expected(&actual)).expect("the case rewritten");
        } else {
            failures.push(format!("{}:\n--- expected\n{}--- actual\n{actual}", path.display(), case.expected));
        }
    }
    assert!(
        failures.is_empty(),
        "{} filetest(s) differ (UPDATE_EXPECT=1 rewrites them):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The directives every case starts with are the ones the runner knows,
/// and each of them has a case.
#[test]
fn every_directive_has_a_case() {
    let directives: Vec<String> = cases()
        .iter()
        .map(|p| Case::parse(p, &std::fs::read_to_string(p).expect("a readable case")).directive)
        .map(|d| d.split(' ').next().unwrap_or_default().to_string())
        .collect();
    for d in ["check", "opt", "walks", "lower"] {
        assert!(directives.iter().any(|x| x == d), "no filetest uses `{d}`");
    }
}

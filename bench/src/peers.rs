//! The same programs under other implementations (LuaJIT, PyPy), run as
//! scripts from bench/lua and bench/python, for the benchmarks' ratios.

use std::path::Path;
use std::process::Command;

/// The workspace root.
pub fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The interpreter written in the language that the BF and stack-machine
/// benchmarks name `tutorial`, `rle`, `objects`, `scan`, `plain` or `vm` (the
/// first word of their rows and of the environment files they write,
/// `target/bench-bf`). `plain` is the tutorial interpreter with its hint
/// absent: no `promote pc` at the dispatch label, so the JIT compiles the
/// dispatch loop once for every BF position rather than a loop per BF
/// loop ([`plain_tutorial`]); `moved`, with its hint moved after the
/// fetch ([`moved_tutorial`]); `hinted`, with `can_enter_jit` on the label
/// every instruction ends at ([`hinted_tutorial`]); all written to
/// `target/bench-bf`.
pub fn interpreter(name: &str) -> Option<std::path::PathBuf> {
    let file = match name {
        "tutorial" => "bf_tutorial.fg",
        "rle" => "bf_rle.fg",
        "scan" => "bf_scan.fg",
        "objects" => "bf_objects.fg",
        "vm" => "stack_vm.fg",
        "plain" | "moved" | "hinted" => {
            let dir = root().join("target/bench-bf");
            std::fs::create_dir_all(&dir).expect("a scratch folder");
            let path = dir.join(format!("bf_{name}.fg"));
            let text = match name {
                "plain" => plain_tutorial(),
                "moved" => moved_tutorial(),
                _ => hinted_tutorial(),
            };
            std::fs::write(&path, text).expect("the interpreter written");
            return Some(path);
        }
        _ => return None,
    };
    Some(root().join("tests/corpus/interpreters").join(file))
}

/// The tutorial BF interpreter with its hint where the loop's head has
/// already run: the dispatch label tests for the program's end, and the
/// promotion of `pc` follows the fetch of its instruction (`op =
/// prog[pc]`), as people place it when they think of the fetch as part of
/// the dispatch. Panics if the interpreter no longer has those lines.
pub fn moved_tutorial() -> String {
    let path = root().join("tests/corpus/interpreters/bf_tutorial.fg");
    let text = std::fs::read_to_string(&path).expect("the tutorial interpreter");
    let head = "dispatch:\n    promote pc then fetch\nfetch:\n";
    let fetch = "decode:\n    op = prog[pc]\n";
    assert!(text.contains(head) && text.contains(fetch), "{} fetches as it did", path.display());
    text.replace(head, "dispatch:\n")
        .replace(fetch, "decode:\n    op = prog[pc]\n    promote pc then decoded\ndecoded:\n")
}

/// The tutorial BF interpreter with `can_enter_jit next`: a hint on the
/// label every instruction ends at (`next: pc = pc + 1`), which promotes
/// nothing — where a reader of PyPy's tutorial, which puts
/// `can_enter_jit` at the interpreter's back edge, might put it (see
/// "A hint that keys nothing" in `flowc_trace::jit`). Panics if the
/// interpreter no longer has that label.
pub fn hinted_tutorial() -> String {
    let path = root().join("tests/corpus/interpreters/bf_tutorial.fg");
    let text = std::fs::read_to_string(&path).expect("the tutorial interpreter");
    assert!(text.contains("\nnext:\n    pc = pc + 1\n"), "{} ends its instructions at `next`", path.display());
    assert!(!text.lines().any(|l| l.starts_with("can_enter_jit")), "{} has no hint of its own", path.display());
    format!("can_enter_jit next\n{text}")
}

/// The tutorial BF interpreter (tests/corpus/interpreters/bf_tutorial.fg)
/// with its one hint removed: its dispatch label goes on to `fetch`
/// instead of promoting `pc` there. Panics if the interpreter no longer
/// has that line.
pub fn plain_tutorial() -> String {
    let path = root().join("tests/corpus/interpreters/bf_tutorial.fg");
    let text = std::fs::read_to_string(&path).expect("the tutorial interpreter");
    let hint = "    promote pc then fetch\n";
    assert_eq!(text.matches(hint).count(), 1, "{} promotes pc once, at its dispatch label", path.display());
    text.replace(hint, "    goto fetch\n")
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

/// Runs a peer program (`exe args...`) that prints its result and, on
/// stderr, its seconds; the best of `runs`, if it runs at all. Panics if
/// it prints another result than `expected`.
pub fn program_secs(exe: &str, args: &[&str], expected: &str, runs: usize) -> Option<f64> {
    let mut best: Option<f64> = None;
    for _ in 0..runs {
        let out = Command::new(exe).args(args).output().ok()?;
        if !out.status.success() {
            return None;
        }
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), expected, "{exe} {args:?} prints another result");
        let secs: f64 = String::from_utf8_lossy(&out.stderr).trim().parse().ok()?;
        best = Some(best.map_or(secs, |b| b.min(secs)));
    }
    best
}

/// The tutorial BF interpreter's peers running BF file `bf`, which prints
/// `expected`: the C interpreter (the executable `c`, if gcc built it; best
/// of 3), PyPy and LuaJIT (one run each); their seconds, if they ran.
pub fn tutorial_peers(c: Option<&Path>, bf: &str, expected: &str) -> [Option<f64>; 3] {
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_string();
    let c = c.and_then(|c| program_secs(&path(c), &[bf], expected, 3));
    let py = path(&root().join("bench/python/bf_tutorial.py"));
    let lua = path(&root().join("bench/lua/bf_tutorial.lua"));
    [c, program_secs("pypy3", &[&py, bf], expected, 1), program_secs("luajit", &[&lua, bf], expected, 1)]
}

/// Compiles C file `source` with `gcc -O2` to `exe`; whether it did.
pub fn gcc(source: &Path, exe: &Path) -> bool {
    Command::new("gcc").arg("-O2").arg("-o").arg(exe).arg(source).status().is_ok_and(|s| s.success())
}

/// Brainfuck instructions `code` translated to C, as compilers of BF do:
/// the run-length form the second interpreter runs
/// (`flowc_tests::bf::run_length`: runs of `+`/`-` and of `<`/`>` folded,
/// `[-]` a store of 0), one statement per operation; byte cells in an
/// array, output folded into the suites' checksum
/// (`flowc_tests::bf::checksum_step`). The program prints the checksum
/// and, on stderr, the seconds it ran.
pub fn bf_to_c(code: &[u8]) -> String {
    translate(code, Tape::Array)
}

/// The same translation keeping the interpreters' tape: a chain of cells
/// (value, left and right neighbour) grown on demand, each move following
/// one link per step. This is the BF program compiled with the data the
/// interpreter's program works on, which a JIT for the interpreter cannot
/// change: what gcc makes of exactly that is the yardstick for how close
/// the JIT comes to compiled code, where [`bf_to_c`] also measures what
/// trading the chain for an array gains (gcc keeps the array's cells at
/// fixed offsets, often in registers, and folds whole loops of them).
pub fn bf_to_c_chain(code: &[u8]) -> String {
    translate(code, Tape::Chain)
}

/// The tape a translated BF program keeps.
#[derive(Copy, Clone, PartialEq)]
enum Tape {
    /// `unsigned char` cells in one static array, the head a pointer.
    Array,
    /// Cells linked both ways, the head a pointer to one.
    Chain,
}

fn translate(code: &[u8], tape: Tape) -> String {
    let chain = tape == Tape::Chain;
    let mut body = String::new();
    let mut depth = 1;
    for (op, arg) in flowc_tests::bf::run_length(code) {
        if op == "close" {
            depth -= 1;
        }
        let statement = match (op, chain) {
            ("add", false) => format!("*p += {arg};"),
            ("add", true) => format!("p->v = (p->v + {arg}) & 255;"),
            ("move", false) => format!("p += {arg};"),
            ("move", true) if arg >= 0 => format!("p = right(p, {arg});"),
            ("move", true) => format!("p = left(p, {});", -arg),
            ("clear" | "in", false) => "*p = 0;".to_string(),
            ("clear" | "in", true) => "p->v = 0;".to_string(),
            ("open", false) => "while (*p) {".to_string(),
            ("open", true) => "while (p->v) {".to_string(),
            ("close", _) => "}".to_string(),
            ("out", false) => "sum = (sum * 31 + *p) % 1000000007;".to_string(),
            ("out", true) => "sum = (sum * 31 + p->v) % 1000000007;".to_string(),
            (other, _) => format!("/* {other} */"),
        };
        body += &format!("{}{statement}\n", "    ".repeat(depth));
        if op == "open" {
            depth += 1;
        }
    }
    let (data, head) = if chain {
        (
            "typedef struct cell { long v; struct cell *l, *r; } cell;\n\n\
             static cell *fresh(void) {\n    cell *c = calloc(1, sizeof(cell));\n    \
             if (!c) { perror(\"calloc\"); exit(1); }\n    return c;\n}\n\n\
             static inline cell *right(cell *p, long k) {\n    while (k--) {\n        \
             if (__builtin_expect(!p->r, 0)) { p->r = fresh(); p->r->l = p; }\n        \
             p = p->r;\n    }\n    return p;\n}\n\n\
             static inline cell *left(cell *p, long k) {\n    while (k--) {\n        \
             if (__builtin_expect(!p->l, 0)) { p->l = fresh(); p->l->r = p; }\n        \
             p = p->l;\n    }\n    return p;\n}\n",
            "cell *p = fresh();",
        )
    } else {
        ("static unsigned char tape[1 << 22];\n", "unsigned char *p = tape + (1 << 21);")
    };
    format!(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n\n{data}\n\
         int main(void) {{\n    struct timespec t0, t1;\n    clock_gettime(CLOCK_MONOTONIC, &t0);\n\
         \x20   {head}\n    long sum = 0;\n{body}\
         \x20   clock_gettime(CLOCK_MONOTONIC, &t1);\n    printf(\"%ld\\n\", sum);\n\
         \x20   fprintf(stderr, \"%.6f\\n\", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);\n\
         \x20   return 0;\n}}\n"
    )
}

#[cfg(test)]
mod tests {
    use flowc_lang::interp::{run, Config};
    use flowc_lang::{syntax, Symbol};

    /// Both translations of a BF program print what the BF model prints:
    /// a program of the suite, and one that grows the chain to the right
    /// in a loop and walks back through it.
    #[test]
    fn both_translations_print_the_models_checksum() {
        let dir = std::env::temp_dir().join(format!("flowc-bf2c-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let suite = flowc_tests::bf::program("nest", 1).expect("a program of the suite");
        for (name, text) in [("nest", suite.as_str()), ("walk", "+++[>>+++[>+<-]<<-]>>>.<<<+[>+>+>+.<<<-]>>>.")] {
            let (sum, _) = flowc_tests::bf::run(text).expect("a valid program");
            let code = flowc_tests::bf::instructions(text);
            for (tape, c) in [("array", super::bf_to_c(&code)), ("chain", super::bf_to_c_chain(&code))] {
                let source = dir.join(format!("{name}-{tape}.c"));
                let exe = dir.join(format!("{name}-{tape}"));
                std::fs::write(&source, &c).expect("the translation written");
                assert!(super::gcc(&source, &exe), "gcc compiles the {tape} translation of {name}:\n{c}");
                let out = std::process::Command::new(&exe).output().expect("it runs");
                assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), sum.to_string(), "{tape} {name}");
                let secs: f64 = String::from_utf8_lossy(&out.stderr).trim().parse().expect("its seconds on stderr");
                assert!(secs >= 0.0);
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The moved interpreter promotes once, after its fetch, and prints
    /// what the tutorial interpreter prints.
    #[test]
    fn the_moved_interpreter_promotes_after_its_fetch() {
        let moved = super::moved_tutorial();
        assert!(moved.contains("    op = prog[pc]\n    promote pc then decoded\n"), "{moved}");
        assert_eq!(moved.lines().filter(|l| l.trim_start().starts_with("promote")).count(), 1);
        let text = flowc_tests::bf::program("nest", 1).expect("a program of the suite");
        let (sum, _) = flowc_tests::bf::run(&text).expect("a valid program");
        let env = flowc_lang::syntax::prolog::parse_env(&flowc_tests::bf::tutorial_env(&text)).expect("an environment");
        let p = syntax::parse("moved", &moved).expect("it parses");
        let out = run(&p, Symbol::intern("start"), &env, &Config::default()).expect("it runs");
        assert_eq!(out.value.to_string(), sum.to_string());
    }

    /// The hinted interpreter has its one hint where it promotes
    /// nothing, and prints what the tutorial interpreter prints.
    #[test]
    fn the_hinted_interpreter_hints_at_next() {
        let hinted = super::hinted_tutorial();
        let p = syntax::parse("hinted", &hinted).expect("it parses");
        assert_eq!(p.can_enter_jit_labels().collect::<Vec<_>>(), vec![Symbol::intern("next")]);
        let text = flowc_tests::bf::program("nest", 1).expect("a program of the suite");
        let (sum, _) = flowc_tests::bf::run(&text).expect("a valid program");
        let env = flowc_lang::syntax::prolog::parse_env(&flowc_tests::bf::tutorial_env(&text)).expect("an environment");
        let out = run(&p, Symbol::intern("start"), &env, &Config::default()).expect("it runs");
        assert_eq!(out.value.to_string(), sum.to_string());
    }

    /// The plain interpreter promotes nothing, and prints what the
    /// tutorial interpreter and the BF model print, on a program with
    /// nested loops.
    #[test]
    fn the_plain_interpreter_is_the_tutorial_without_its_hint() {
        let plain = super::plain_tutorial();
        assert!(!plain.lines().any(|l| l.trim_start().starts_with("promote")), "{plain}");
        let text = flowc_tests::bf::program("nest", 1).expect("a program of the suite");
        let (sum, _) = flowc_tests::bf::run(&text).expect("a valid program");
        let env = flowc_lang::syntax::prolog::parse_env(&flowc_tests::bf::tutorial_env(&text)).expect("an environment");
        let tutorial = std::fs::read_to_string(super::root().join("tests/corpus/interpreters/bf_tutorial.fg"))
            .expect("the tutorial interpreter");
        for (name, source) in [("tutorial", tutorial), ("plain", plain)] {
            let p = syntax::parse(name, &source).expect("it parses");
            let out = run(&p, Symbol::intern("start"), &env, &Config::default()).expect("it runs");
            assert_eq!(out.value.to_string(), sum.to_string(), "{name}");
        }
    }
}

//! `flowc build`: executables of the series' examples print what
//! `flowc run` prints, with the entry's environment or `--env`; errors
//! leave with status 1 and the language's message.

use std::path::PathBuf;
use std::process::{Command, Output};

use flowc_tests::corpus::workspace_root;

fn flowc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowc")).args(args).current_dir(workspace_root()).output().expect("flowc runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Builds `file` into a directory of its own under cargo's temporary
/// directory for tests (named for the test and the arguments, so that runs
/// overwrite rather than pile up); returns the executable.
fn build(file: &str, extra: &[&str]) -> PathBuf {
    let test = std::thread::current().name().unwrap_or("test").replace("::", "_");
    let name = format!("{test}-{file}{}", extra.join("")).replace(['/', '[', ']', ','], "_");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("built").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("program");
    let mut args = vec!["build", file, "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = flowc(&args);
    assert!(o.status.success(), "flowc build {file}: {}", text(&o.stderr));
    out
}

fn run(exe: &PathBuf, args: &[&str]) -> Output {
    Command::new(exe).args(args).output().expect("the executable runs")
}

#[test]
fn built_examples_print_what_the_interpreter_prints() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("examples/power.pl", &[], &[]),
        ("examples/power.pl", &[], &["--env", "[x/10,y/20]"]),
        ("examples/promotion.pl", &["--entry", "b", "--env", "[i/100,x/5]"], &[]),
        ("examples/bytecode.pl", &[], &[]),
        ("examples/bytecode_traced.pl", &[], &[]),
        ("examples/fib.fg", &[], &[]),
        ("examples/gcd.fg", &[], &["--env", "[n/1000]"]),
        ("examples/points.pl", &[], &[]),
        ("examples/linked_list.fg", &[], &[]),
        ("examples/interp_loop.fg", &[], &[]),
    ];
    for (file, build_args, run_args) in cases {
        let exe = build(file, build_args);
        let got = run(&exe, run_args);
        assert!(got.status.success(), "{file}: {}", text(&got.stderr));
        let mut reference = vec!["run", file];
        reference.extend_from_slice(build_args);
        reference.extend_from_slice(run_args);
        let expected = flowc(&reference);
        assert_eq!(text(&got.stdout), text(&expected.stdout), "{file} {run_args:?}");
    }
    let power = build("examples/power.pl", &[]);
    assert_eq!(text(&run(&power, &["--env", "[x/10,y/20]"]).stdout), "100000000000000000000\n");
}

#[test]
fn built_programs_report_errors_where_the_interpreter_does() {
    let files = flowc_tests::corpus::failing_programs();
    assert!(files.len() > 10);
    for file in &files {
        let exe = build(file, &[]);
        let o = run(&exe, &[]);
        assert_eq!(o.status.code(), Some(1), "{file}");
        let expected = flowc(&["run", file]);
        // flowc's notes (the variables a start label needs) are its own.
        let theirs: String = text(&expected.stderr)
            .replacen("flowc: ", "", 1)
            .lines()
            .filter(|l| !l.starts_with("  note: "))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(text(&o.stderr).replacen("program: ", "", 1), theirs, "{file}");
    }
    let exe = build("tests/corpus/errors/type_error.fg", &[]);
    let o = run(&exe, &[]);
    assert_eq!(
        text(&o.stderr),
        "program: runtime error: type error: `add` needs integers, got atom apple [type_error(add, integers)]\n  at block `start`, statement 2: b = a + 1\n"
    );
    let o = run(&exe, &["--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).starts_with("program: unexpected argument: --bogus\nusage: program"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&exe, &["--env", "[x/"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Built executables collect: under FLOWC_GC_STRESS (a collection at
/// every allocation, the heap verified after each) they print what the
/// interpreter prints, and `--stats` reports the collections.
#[test]
fn built_programs_collect() {
    let files = [
        "tests/corpus/shapes/list_sum.fg",
        "tests/corpus/shapes/alloc_escape.fg",
        "tests/corpus/gc/list_across_recursion.fg",
        "tests/corpus/gc/boxed_arguments.fg",
        "examples/stack_machine.fg",
        "examples/linked_list.fg",
    ];
    for file in files {
        let exe = build(file, &[]);
        let got = Command::new(&exe).env("FLOWC_GC_STRESS", "1").output().unwrap();
        assert!(got.status.success(), "{file}: {}", text(&got.stderr));
        assert_eq!(text(&got.stdout), text(&flowc(&["run", file]).stdout), "{file}");
    }
    let exe = build("tests/corpus/shapes/list_sum.fg", &[]);
    let o = run(&exe, &["--env", "[n/1000, reps/100]", "--stats"]);
    assert_eq!(text(&o.stdout), "49950000\n");
    let stats = text(&o.stderr);
    let heap = stats.lines().find(|l| l.starts_with("heap: ")).unwrap_or("");
    let collections: u64 = heap.strip_prefix("heap: ").and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!(collections > 0, "{stats}");
}

/// Built executables behave like command-line programs: `--help`, both
/// option spellings, `--fuel` (when built with fuel checks), `--stats`;
/// they are small (unused runtime code removed, symbols stripped unless
/// `--keep-symbols`).
#[test]
fn built_executables_take_the_usual_options() {
    let exe = build("examples/power.pl", &[]);
    let o = run(&exe, &["--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = text(&o.stdout);
    assert!(help.starts_with("usage: program [--env ENV] [--fuel N] [--stats]\n"), "{help}");
    assert!(help.contains("(default [x/10, y/10])"), "{help}");
    assert_eq!(text(&run(&exe, &["-h"]).stdout), help);
    assert_eq!(text(&run(&exe, &["--env=[x/2,y/5]"]).stdout), "32\n");
    assert_eq!(text(&run(&exe, &["--env", "[x/2,y/5]"]).stdout), "32\n");
    let o = run(&exe, &["--fuel", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("built without fuel checks"), "{}", text(&o.stderr));
    let o = run(&exe, &["--env=[x/2,y/5]", "--stats"]);
    assert!(text(&o.stderr).starts_with("stats: "), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("\nheap: "), "{}", text(&o.stderr));

    let fueled = build("examples/gcd.fg", &["--fuel-checks"]);
    let o = run(&fueled, &["--fuel=50"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("[fuel_exhausted]"), "{}", text(&o.stderr));
    let o = run(&fueled, &["--fuel", "100000000", "--stats"]);
    assert_eq!(text(&o.stdout), text(&flowc(&["run", "examples/gcd.fg"]).stdout));
    assert!(text(&o.stderr).contains(" loop iterations"), "{}", text(&o.stderr));
    let o = run(&fueled, &["--fuel", "ten"]);
    assert_eq!(o.status.code(), Some(2));

    // Stripped and without unused runtime code; symbols on request.
    let size = |p: &PathBuf| std::fs::metadata(p).unwrap().len();
    assert!(size(&exe) < 4 << 20, "{} bytes", size(&exe));
    let symbols = build("examples/power.pl", &["--keep-symbols"]);
    assert!(size(&symbols) > size(&exe), "{} vs {}", size(&symbols), size(&exe));
}

/// flowc carries its runtime library: a copy of flowc far from the
/// workspace (as `cargo install` leaves one) still builds executables.
#[test]
fn a_copied_flowc_builds_executables() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("copied-flowc");
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("flowc");
    std::fs::copy(env!("CARGO_BIN_EXE_flowc"), &copy).unwrap();
    std::fs::copy(workspace_root().join("examples/power.pl"), dir.join("power.pl")).unwrap();
    // Another test's child process, forked while the copy was open for
    // writing, may hold it open for an instant ("text file busy" until
    // that child execs): try again.
    let mut tries = 0;
    let o = loop {
        let attempt = Command::new(&copy)
            .args(["build", "power.pl", "-o", "pw"])
            .current_dir(&dir)
            .env_remove("FLOWC_RUNTIME")
            .output();
        match attempt {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&run(&dir.join("pw"), &[]).stdout), "10000000000\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A huge main graph — straight-line code around one hot loop over an
/// object's field, `n` rounds — whose loop's region an executable has
/// compiled optimized (`Plan::hot_region`), position-independent, beside
/// regions compiled for compile time: it prints what the interpreter
/// prints, with the entry's environment and another, and an error raised
/// in the hot region (a division by zero at round 300) names the
/// interpreter's place.
#[test]
fn a_built_huge_function_runs_its_hot_region_as_the_interpreter_does() {
    let program = |divisor: &str| {
        let mut text = String::from("entry start(n = 500)\nstart:\n    p = new point\n    p.x = 3\n    a = n\n");
        for k in 0..(flowc_ir::HUGE_INSTS / 2) {
            text += &format!("    a = a + {k}\n    a = a % 1000003\n");
        }
        text += "    s = 0\n    i = 0\n    goto head\nhead:\n    t = i < n\n    if t goto body else goto done\n";
        text += &format!("body:\n    x = p.x\n    s = s + x\n    d = {divisor}\n    q = 999 // d\n    s = s + q\n");
        text += "    s = s * 3\n    s = s % 1000003\n    i = i + 1\n    goto head\ndone:\n    s = s + a\n    print_and_stop(s)\n";
        text
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("built-huge");
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [("huge.fg", "3", None), ("huge.fg", "3", Some("[n/20000]")), ("huge_error.fg", "300 - i", None)];
    for (name, divisor, env) in cases {
        let file = dir.join(name);
        std::fs::write(&file, program(divisor)).unwrap();
        let file = file.to_str().unwrap();
        let exe = build(file, &[]);
        let env_args: Vec<&str> = env.map(|e| vec!["--env", e]).unwrap_or_default();
        let got = run(&exe, &env_args);
        let mut reference = vec!["run", file];
        reference.extend_from_slice(&env_args);
        let expected = flowc(&reference);
        assert_eq!(got.status.code(), expected.status.code(), "{name} {env:?}: {}", text(&got.stderr));
        assert_eq!(text(&got.stdout), text(&expected.stdout), "{name} {env:?}");
        let theirs = text(&expected.stderr).replacen("flowc: ", "", 1);
        assert_eq!(text(&got.stderr).replacen("program: ", "", 1), theirs, "{name} {env:?}");
        if name == "huge_error.fg" {
            assert!(text(&got.stderr).contains("division by zero"), "{}", text(&got.stderr));
        }
    }
}

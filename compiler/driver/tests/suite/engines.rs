//! `flowc compare` and `flowc run --engine jit` end to end.

use std::process::{Command, Output};

use flowc_tests::corpus::workspace_root;

fn flowc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowc")).args(args).current_dir(workspace_root()).output().expect("flowc runs")
}

/// [`flowc`] with environment variables `vars` set.
fn flowc_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flowc"));
    command.args(args).current_dir(workspace_root()).envs(vars.iter().copied());
    command.output().expect("flowc runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const SQUARE: &str = "[mov_a_r0, mov_a_r1, mov_r0_a, decr_a, mov_a_r0, mov_r2_a, add_r1_to_a, mov_a_r2, mov_r0_a, \
                      jump_if_a, 2, mov_r2_a, return_a]";

#[test]
fn compare_runs_every_engine_and_shows_both_loops() {
    let o = flowc(&["compare", "examples/gcd.fg", "--threshold", "5"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    let results: Vec<&str> = out.lines().take(4).collect();
    assert_eq!(results, ["interp     2970", "ir         2970", "native     2970", "jit        2970"]);
    assert!(out.contains("== native: the loop at b1 (outer) after the eight passes (small n)\nb1 outer:\n"), "{out}");
    assert!(out.contains("== jit: the trace at outer, optimized\ntrace outer("), "{out}");
    // What each engine cost (times vary; the rows and columns do not).
    let table: Vec<&str> = out.lines().skip(5).take(5).collect();
    assert!(table[0].starts_with("engine") && table[0].ends_with("run      compile  machine code"), "{out}");
    assert!(table[3].starts_with("native ") && table[3].ends_with(" bytes"), "{out}");
    // The outer loop, and the inner one made at its join (the label `step`
    // its exits' bridges kept recording from, compiler/trace/src/jit/joins.rs).
    assert!(table[4].starts_with("jit ") && table[4].contains(" bytes (2 traces, "), "{out}");
}

#[test]
fn compare_puts_the_loop_beside_the_trace() {
    let o = flowc(&["compare", "examples/gcd.fg", "--threshold", "5", "--side-by-side"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    let first = out.lines().find(|l| l.starts_with("== native: the loop")).expect("the loop's header");
    assert!(first.ends_with(" | == jit: the trace at outer, optimized"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("b1 outer:") && l.contains(" | trace outer(")), "{out}");
}

#[test]
fn compare_with_static_adds_the_partial_evaluator() {
    let statics = format!("[bytecode/{SQUARE}, pc/0]");
    let o = flowc(&["compare", "examples/bytecode.pl", "--static", &statics, "--threshold", "5"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    assert!(
        out.starts_with(
            r#"interp     256
ir         256
native     256
jit        256
pe+native  256
"#
        ),
        "{out}"
    );
    // The residual program's loop is shown too.
    assert!(out.contains("\n== pe+native: the loop at "), "{out}");
}

#[test]
fn compare_agrees_on_errors() {
    let o = flowc(&["compare", "examples/gcd.fg", "--env", "[n/foo]"]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}{}", text(&o.stderr));
    let first: Vec<&str> = out.lines().take(4).collect();
    assert!(first.iter().all(|l| l.ends_with("error: type_error(le, integers)")), "{out}");
}

#[test]
fn compare_rejects_contradicting_environments() {
    let o = flowc(&["compare", "examples/gcd.fg", "--env", "[n/10]", "--static", "[n/20]"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stderr), "flowc: n has different values in --env and --static\n");
}

#[test]
fn run_with_the_jit_reports_its_work() {
    // Optimizing on the running thread: what the JIT makes is the same
    // every run.
    let o = flowc_env(
        &["run", "examples/gcd.fg", "--engine", "jit", "--threshold", "5", "--warmup", "0", "--stats"],
        &[("FLOWC_JIT_BACKGROUND", "0")],
    );
    assert!(o.status.success());
    assert_eq!(text(&o.stdout), "2970\n");
    let stats = text(&o.stderr);
    // The inner loop runs as bridges unrolling its rounds until its label
    // `step` is a join (compiler/trace/src/jit/joins.rs): a loop from
    // then on.
    for line in [
        "traces:          2 (",
        "joins:           1 (",
        "bridges:",
        "guard failures:",
        "compile time:",
        "loop outer from outer",
        "loop step.3 from step",
    ] {
        assert!(stats.contains(line), "{stats}");
    }
    assert!(!stats.contains("background:"), "{stats}");
}

/// With a worker optimizing traces (forced on, as on a machine with a
/// second core), a long enough run compiles its loops there and says so;
/// the output is the interpreter's.
#[test]
fn run_with_the_jit_optimizes_in_the_background() {
    let o = flowc_env(
        &[
            "run",
            "examples/gcd.fg",
            "--engine",
            "jit",
            "--threshold",
            "5",
            "--warmup",
            "0",
            "--stats",
            "--env",
            "[n/400]",
        ],
        &[("FLOWC_JIT_BACKGROUND", "1")],
    );
    let reference = flowc(&["run", "examples/gcd.fg", "--stats", "--env", "[n/400]"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), text(&reference.stdout));
    let stats = text(&o.stderr);
    assert!(stats.contains("\nbackground:      "), "{stats}");
}

/// The statements `--stats` says a run did.
fn steps(stats: &str) -> u64 {
    let line = stats.lines().find(|l| l.starts_with("stats: ")).unwrap_or_else(|| panic!("no stats line:\n{stats}"));
    let words: Vec<&str> = line.split(' ').collect();
    let at = words.iter().position(|w| w.starts_with("steps")).unwrap_or_else(|| panic!("no steps in {line}"));
    words[at - 1].parse().unwrap()
}

/// A run shorter than the JIT's warm-up is the interpreter's: the same
/// output and statements, and nothing of the JIT built — which its log,
/// asked for, says.
#[test]
fn run_with_the_jit_leaves_a_short_run_to_the_interpreter() {
    let log = std::env::temp_dir().join(format!("flowc-short-run-{}.log", std::process::id()));
    let log_arg = log.to_str().expect("a UTF-8 path");
    let o = flowc(&["run", "examples/gcd.fg", "--engine", "jit", "--stats", "--jit-log", log_arg]);
    let reference = flowc(&["run", "examples/gcd.fg", "--stats"]);
    let logged = std::fs::read_to_string(&log).expect("the log is written");
    let _ = std::fs::remove_file(&log);
    assert!(logged.starts_with("the run ended within the JIT's warm-up of "), "{logged}");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), text(&reference.stdout));
    let stats = text(&o.stderr);
    assert!(stats.starts_with("jit: not started (the run ended within the JIT's warm-up of "), "{stats}");
    assert!(!stats.contains("traces:"), "{stats}");
    assert_eq!(steps(&stats), steps(&text(&reference.stderr)));
}

/// A run the JIT took over ends its process without exit handlers and
/// leaves the JIT to the exit (`flowc_runtime::end_process`,
/// `Options::leave_to_exit`): its log, a buffered file, is written whole
/// all the same — what it compiled, and the closing listing of its hot
/// spots to the last line (flushed with that listing, and closed before
/// the JIT is left: without both, the file is empty).
#[test]
fn a_jit_log_is_written_whole_when_the_process_ends() {
    let log = std::env::temp_dir().join(format!("flowc-whole-log-{}.log", std::process::id()));
    let log_arg = log.to_str().expect("a UTF-8 path");
    let o = flowc_env(
        &[
            "run",
            "examples/gcd.fg",
            "--env",
            "[n/400]",
            "--engine",
            "jit",
            "--threshold",
            "5",
            "--warmup",
            "2000",
            "--jit-log",
            log_arg,
        ],
        &[("FLOWC_JIT_BACKGROUND", "0")],
    );
    let logged = std::fs::read_to_string(&log).expect("the log is written");
    let _ = std::fs::remove_file(&log);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(logged.lines().any(|l| l.contains("] compiled ")), "{logged}");
    let listing = logged.rfind("\nevery hot spot:\n").unwrap_or_else(|| panic!("no closing listing:\n{logged}"));
    assert!(logged[listing..].lines().nth(2).is_some_and(|l| l.starts_with("  ")), "{logged}");
    assert!(logged.ends_with('\n'), "{logged}");
}

/// Past its warm-up the interpreter pauses and the JIT takes over: its
/// loops compiled, the output and the statements counted the same as
/// the interpreter's alone; fuel that runs out before the warm-up ends
/// runs out exactly as in the interpreter, and fuel past it still stops
/// the run.
#[test]
fn run_with_the_jit_takes_over_after_its_warmup() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "examples/gcd.fg", "--env", "[n/400]", "--stats"];
        args.extend_from_slice(extra);
        flowc_env(&args, &[("FLOWC_JIT_BACKGROUND", "0")])
    };
    let reference = run(&[]);
    let o = run(&["--engine", "jit", "--threshold", "5", "--warmup", "2000"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), text(&reference.stdout));
    let stats = text(&o.stderr);
    assert!(stats.starts_with("jit: started after the warm-up of 2000 statements\ntraces:          "), "{stats}");
    assert!(!stats.starts_with("jit: started after the warm-up of 2000 statements\ntraces:          0 "), "{stats}");
    assert!(steps(&stats) < steps(&text(&reference.stderr)), "compiled code ran some of it:\n{stats}");
    let interp_out = run(&["--fuel", "1500"]);
    let jit_out = run(&["--engine", "jit", "--threshold", "5", "--warmup", "2000", "--fuel", "1500"]);
    assert_eq!(jit_out.status.code(), interp_out.status.code());
    let error = |o: &std::process::Output| {
        text(&o.stderr)
            .lines()
            .filter(|l| !l.starts_with("stats:") && !l.starts_with("heap:") && !l.starts_with("jit:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(error(&interp_out).contains("out of fuel after 1500 statements"), "{}", text(&interp_out.stderr));
    assert_eq!(error(&jit_out), error(&interp_out));
    let late = run(&["--engine", "jit", "--threshold", "5", "--warmup", "2000", "--fuel", "4000"]);
    assert!(text(&late.stderr).contains("out of fuel after 4000 statements"), "{}", text(&late.stderr));
}

/// A program of over a thousand statements is prepared for the JIT on a
/// thread of its own while the interpreter warms up
/// (`flowc_trace::jit::prepare_apart`) — light, as its text gives the
/// labels to watch (`flowc_trace::jit::starts_light`): a run past the
/// warm-up is taken over with it, the rest of the start prepared once a
/// loop is hot, and compiles loops; a run that ends within the warm-up
/// does not wait for it. Both print what the interpreter prints.
#[test]
fn run_with_the_jit_prepares_a_big_program_while_it_warms_up() {
    let program = flowc_tests::loops::many_functions(120, 200);
    let parsed = flowc_lang::syntax::parse("big.fg", &program).expect("it parses");
    assert!(parsed.statement_count() >= flowc_trace::jit::PREPARE_APART_STATEMENTS);
    let file = std::env::temp_dir().join(format!("flowc-big-jit-{}.fg", std::process::id()));
    std::fs::write(&file, &program).expect("the program written");
    let path = file.to_str().expect("a UTF-8 path");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", path, "--stats"];
        args.extend_from_slice(extra);
        flowc_env(&args, &[("FLOWC_JIT_BACKGROUND", "0")])
    };
    let reference = run(&[]);
    let late = run(&["--engine", "jit", "--threshold", "5", "--warmup", "20000"]);
    let short_reference = run(&["--env", "[n/1]"]);
    let short = run(&["--engine", "jit", "--env", "[n/1]"]);
    let _ = std::fs::remove_file(&file);
    assert!(reference.status.success() && late.status.success(), "{}", text(&late.stderr));
    assert_eq!(text(&late.stdout), text(&reference.stdout));
    let stats = text(&late.stderr);
    assert!(stats.starts_with("jit: started after the warm-up of 20000 statements\ntraces:          "), "{stats}");
    assert!(!stats.starts_with("jit: started after the warm-up of 20000 statements\ntraces:          0 "), "{stats}");
    assert!(stats.contains("\nstart:           light (") && stats.contains(", adopted at statement "), "{stats}");
    assert!(short.status.success(), "{}", text(&short.stderr));
    assert_eq!(text(&short.stdout), text(&short_reference.stdout));
    assert!(text(&short.stderr).starts_with("jit: not started"), "{}", text(&short.stderr));
}

/// The collections `--stats` reports in its heap line.
fn collections(stats: &str) -> u64 {
    let line = stats.lines().find(|l| l.starts_with("heap: ")).unwrap_or_else(|| panic!("no heap line:\n{stats}"));
    line["heap: ".len()..].split(' ').next().unwrap().parse().unwrap()
}

/// `--stats` says what the heap did on every engine: a program dropping
/// 100 lists of 1000 cells collects, and the process's peak is told.
#[test]
fn run_stats_report_the_heap() {
    for engine in ["interp", "ir", "native", "jit"] {
        let args =
            ["run", "tests/corpus/shapes/list_sum.fg", "--env", "[n/1000, reps/100]", "--stats", "--engine", engine];
        let o = flowc(&args);
        assert!(o.status.success(), "{engine}");
        assert_eq!(text(&o.stdout), "49950000\n", "{engine}");
        let stats = text(&o.stderr);
        assert!(collections(&stats) > 0, "{engine}: {stats}");
        assert!(stats.contains("MB allocated, peak ") && stats.contains("; process peak "), "{engine}: {stats}");
        // Native code says what its compile time went to.
        let phases = stats.lines().find(|l| l.starts_with("compiling: "));
        match engine {
            "native" => {
                let phases = phases.unwrap_or_else(|| panic!("no phases:\n{stats}"));
                for phase in ["front end ", ", the eight passes ", ", code generation "] {
                    assert!(phases.contains(phase), "{phases}");
                }
                assert!(phases.ends_with(" ms"), "{phases}");
            }
            _ => assert!(phases.is_none(), "{engine}: {stats}"),
        }
    }
}

//! The `flowc` binary end to end: outputs of the series' examples, one test
//! per error kind (message and exit status), parse errors with their place,
//! usage errors, and garbage input that must never crash it.

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};

use expect_test::{expect, Expect};
use flowc_tests::corpus::{self, workspace_root};

/// `flowc ARGS…` started in the workspace with all three streams piped.
fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_flowc"))
        .args(args)
        .current_dir(workspace_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("flowc starts")
}

fn flowc(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = spawn(args);
    let mut pipe = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        // A program may stop reading early on a parse error.
        let _ = pipe.write_all(text.as_bytes());
    }
    drop(pipe);
    child.wait_with_output().expect("flowc finishes")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `flowc run FILE ARGS…` expecting success and `out` on stdout.
fn runs(file: &str, args: &[&str], out: &str) {
    let mut all = vec!["run", file];
    all.extend_from_slice(args);
    let o = flowc(&all, None);
    assert_eq!(o.status.code(), Some(0), "{file} {args:?}: {}", stderr(&o));
    assert_eq!(stdout(&o), out, "{file} {args:?}");
}

#[test]
fn series_examples_print_what_the_series_prints() {
    runs("examples/power.pl", &[], "10000000000\n");
    runs("examples/power.pl", &["--env", "[x/10,y/10]"], "10000000000\n");
    runs("examples/power.pl", &["--env", "[x/10,y/20]"], "100000000000000000000\n");
    runs("examples/promotion.pl", &["--entry", "b", "--env", "[i/100,x/5]"], "-10\n");
    runs("examples/bytecode.pl", &[], "256\n");
    runs("examples/bytecode_traced.pl", &[], "256\n");
    runs("examples/bytecode_traced.pl", &["--entry", "op_jump_if_a_jump"], "256\n");
}

#[test]
fn own_examples_run() {
    runs("examples/fib.fg", &[], "6765\n");
    runs("examples/fib.fg", &["--env", "[n/25]"], "75025\n");
    runs("examples/points.pl", &[], "2450\n");
    runs("examples/linked_list.fg", &[], "5050\n");
    runs("examples/gcd.fg", &[], "2970\n");
    runs("examples/interp_loop.fg", &[], "210\n");
}

#[test]
fn reads_standard_input() {
    let src = std::fs::read_to_string(workspace_root().join("examples/power.pl")).unwrap();
    let o = flowc(&["run", "-"], Some(&src));
    assert_eq!(stdout(&o), "10000000000\n");
    let o = flowc(&["fmt", "-", "--syntax", "readable"], Some(&src));
    assert!(stdout(&o).starts_with("# Part 1: x to the power y.\n"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(
            r#"
power:
    res = 1
"#
        ),
        "{}",
        stdout(&o)
    );
}

/// Runs an error-corpus program and checks status 1, empty stdout, and stderr.
fn fails(file: &str, args: &[&str], expected: Expect) {
    let mut all = vec!["run", file];
    all.extend_from_slice(args);
    let o = flowc(&all, None);
    assert_eq!(o.status.code(), Some(1), "{file}: {}", stderr(&o));
    assert_eq!(stdout(&o), "", "{file}");
    expected.assert_eq(&stderr(&o));
}

#[test]
fn unbound_variable() {
    fails(
        "examples/power.pl",
        &["--env", "[x/10]"],
        expect![[r#"
            flowc: runtime error: unbound variable `y` [key_not_found(y)]
              at block `power`, terminator: if y goto power_rec else goto power_done
              note: label `power` reads `y` before writing it; the start environment gives `x`: give it with --env, e.g. --env '[y/0]'
        "#]],
    );
}

#[test]
fn unknown_label() {
    fails(
        "tests/corpus/errors/unknown_label.fg",
        &[],
        expect![[r#"
            flowc: runtime error: unknown label `nowhere` [unknown_label(nowhere)]
              at block `start`, terminator: goto nowhere
        "#]],
    );
    fails(
        "examples/power.pl",
        &["--entry", "nope"],
        expect![[r#"
            flowc: runtime error: unknown label `nope` [unknown_label(nope)]
        "#]],
    );
}

/// Compiled code names the statement of an error as the interpreter does:
/// every program of the error corpus fails with the same message under
/// `--engine native` (its runtime calls carry their site, cold ones in the
/// operation's description word). `runaway.fg` never ends without fuel,
/// and compiled code places fuel at the loop's header
/// (`fuel_stops_runaway_programs_in_compiled_code`).
#[test]
fn native_code_names_each_errors_statement_like_the_interpreter() {
    let files = corpus::failing_programs();
    assert!(files.iter().any(|f| f.ends_with("cold_function_error.fg")), "{files:?}");
    for file in &files {
        let interp = flowc(&["run", file], None);
        let native = flowc(&["run", "--engine", "native", file], None);
        assert_eq!(interp.status.code(), Some(1), "{file}: {}", stderr(&interp));
        assert_eq!(native.status.code(), Some(1), "{file}: {}", stderr(&native));
        assert_eq!(stderr(&native), stderr(&interp), "{file}");
        // Native runs free the syntax tree while compiling and parse the
        // text again for an error's statement: also a text read from
        // standard input, which cannot be read twice.
        let source = std::fs::read_to_string(workspace_root().join(file)).unwrap();
        let piped = flowc(&["run", "--engine", "native", "-"], Some(&source));
        assert_eq!(stderr(&piped), stderr(&interp), "{file} on standard input");
    }
}

#[test]
fn unknown_function() {
    fails(
        "tests/corpus/errors/unknown_function.fg",
        &[],
        expect![[r#"
            flowc: runtime error: unknown function `nosuch` [unknown_function(nosuch)]
              at block `start`, terminator: r = call nosuch(1, 2) then done
        "#]],
    );
}

#[test]
fn unknown_operation() {
    fails(
        "tests/corpus/errors/unknown_op.pl",
        &[],
        expect![[r#"
            flowc: runtime error: unknown operation `frob` [missing_op(frob)]
              at block `start`, statement 2: y = frob(x, 1)
        "#]],
    );
}

#[test]
fn type_error() {
    fails(
        "tests/corpus/errors/type_error.fg",
        &[],
        expect![[r#"
            flowc: runtime error: type error: `add` needs integers, got atom apple [type_error(add, integers)]
              at block `start`, statement 2: b = a + 1
        "#]],
    );
    fails(
        "tests/corpus/errors/get_on_non_object.fg",
        &[],
        expect![[r#"
            flowc: runtime error: type error: `get` needs an object, got integer 3 [type_error(get, an_object)]
              at block `start`, statement 2: v = n.field
        "#]],
    );
}

#[test]
fn index_out_of_range() {
    fails(
        "tests/corpus/errors/index_out_of_range.fg",
        &[],
        expect![[r#"
            flowc: runtime error: index 3 out of range for a list of length 3 [index_out_of_range]
              at block `start`, statement 3: x = l[i]
        "#]],
    );
}

#[test]
fn division_by_zero() {
    fails(
        "tests/corpus/errors/division_by_zero.fg",
        &[],
        expect![[r#"
            flowc: runtime error: division by zero in `div` [division_by_zero]
              at block `start`, statement 3: q = n // z
        "#]],
    );
}

#[test]
fn unset_field() {
    fails(
        "tests/corpus/errors/unset_field.fg",
        &[],
        expect![[r#"
            flowc: runtime error: field `y` of a `point` object is not set [unset_field(point, y)]
              at block `start`, statement 3: y = p.y
        "#]],
    );
}

#[test]
fn write_to_immutable_field() {
    fails(
        "tests/corpus/errors/immutable_field.fg",
        &[],
        expect![[r#"
            flowc: runtime error: field `x` of a `point` object is immutable and already set [immutable_field(point, x)]
              at block `start`, statement 4: p.x = 3
        "#]],
    );
}

#[test]
fn wrong_argument_count() {
    fails(
        "tests/corpus/errors/argument_count.fg",
        &[],
        expect![[r#"
            flowc: runtime error: function `add` takes 2 argument(s), called with 1 [argument_count(add)]
              at block `main`, terminator: r = call add(1) then done
        "#]],
    );
}

#[test]
fn program_error() {
    fails(
        "tests/corpus/errors/user_error.fg",
        &[],
        expect![[r#"
            flowc: runtime error: the program raised error `too_big` [error(too_big)]
              at block `fail`, terminator: error(:too_big)
        "#]],
    );
}

#[test]
fn fuel_stops_runaway_programs() {
    fails(
        "tests/corpus/errors/runaway.fg",
        &["--fuel", "1000"],
        expect![[r#"
            flowc: runtime error: out of fuel after 1000 statements (raise --fuel) [fuel_exhausted]
              at block `loop`, statement 1: i = i + 1
        "#]],
    );
}

/// Compiled code counts fuel too (one step per loop iteration), so a
/// runaway loop stops under every engine; the place is the loop's header.
#[test]
fn fuel_stops_runaway_programs_in_compiled_code() {
    for (engine, expected) in [
        (
            "native",
            expect![[r#"
                flowc: runtime error: out of fuel after 1000 statements (raise --fuel) [fuel_exhausted]
                  at block `loop`, terminator: goto loop
            "#]],
        ),
        (
            "jit",
            expect![[r#"
                flowc: runtime error: out of fuel after 1000 statements (raise --fuel) [fuel_exhausted]
                  at block `loop`, statement 1: i = i + 1
            "#]],
        ),
    ] {
        fails("tests/corpus/errors/runaway.fg", &["--fuel", "1000", "--engine", engine], expected);
    }
}

#[test]
fn stack_depth_exceeded() {
    fails(
        "tests/corpus/errors/deep_recursion.fg",
        &[],
        expect![[r#"
            flowc: runtime error: stack depth exceeded (100000 nested calls) [stack_overflow]
              at function `down`, block `start`, terminator: r = call down(m) then back
        "#]],
    );
}

#[test]
fn return_outside_function() {
    fails(
        "tests/corpus/errors/return_outside_function.fg",
        &[],
        expect![[r#"
            flowc: runtime error: `return` outside a function [return_outside_function]
              at block `start`, terminator: return 1
        "#]],
    );
}

/// Parses FILE given as text, expecting status 1 and the message.
fn parse_fails(text: &str, expected: Expect) {
    let o = flowc(&["run", "-"], Some(text));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    expected.assert_eq(&stderr(&o));
}

#[test]
fn parse_errors_show_the_place() {
    parse_fails(
        "block(a, op1(x, same, const(1),\n         jump(b)).\n",
        expect![[r#"
            flowc: <stdin>:2:18: parse error: expected `,` or `)`, found `.`
            2 |          jump(b)).
              |                  ^
        "#]],
    );
    parse_fails(
        "block(a, op1(x, same, Const, jump(b))).\n",
        expect![[r#"
            flowc: <stdin>:1:23: parse error: `Const` is a Prolog variable; facts must be ground (write atoms in lower case or quote them)
            1 | block(a, op1(x, same, Const, jump(b))).
              |                       ^
        "#]],
    );
    parse_fails(
        "block(a, op1(x, same, var(y), stop)).\n",
        expect![[r#"
            flowc: <stdin>:1:31: parse error: expected a statement (op1, op2, new, get, set) or a terminator (jump, if, print_and_stop, promote, if_class, call, return, error), found atom `stop`
            1 | block(a, op1(x, same, var(y), stop)).
              |                               ^
        "#]],
    );
    parse_fails(
        r#"start:
    x = 1 +
    print_and_stop(x)
"#,
        expect![[r#"
            flowc: <stdin>:2:12: parse error: expected a variable or a constant, found end of line
            2 |     x = 1 +
              |            ^
        "#]],
    );
    parse_fails(
        r#"start:
    x = 1
loop:
    goto start
start:
    goto loop
"#,
        expect![[r#"
            flowc: <stdin>:1:1: parse error: block `start` has no terminator (goto, if, print_and_stop, promote, call, return, error)
            1 | start:
              | ^
        "#]],
    );
    parse_fails(
        "start:\n    x = 1\n",
        expect![[r#"
            flowc: <stdin>:1:1: parse error: block `start` has no terminator (goto, if, print_and_stop, promote, call, return, error)
            1 | start:
              | ^
        "#]],
    );
}

#[test]
fn parse_errors_name_the_file() {
    let dir = std::env::temp_dir().join(format!("flowc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.pl");
    std::fs::write(&path, "block(a, jump(b)).\nblock(b, print_and_stop(var(x))\n").unwrap();
    let o = flowc(&["run", path.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "flowc: {}:3:1: parse error: expected `,` or `)`, found end of input",
            path.display()
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    let o = flowc(&["run", "examples/power.pl", "--env", "[x/10,"], None);
    assert_eq!(o.status.code(), Some(2));
    expect![[r#"
        flowc: --env:1:7: parse error: expected a term, found end of input
        1 | [x/10,
          |       ^
    "#]]
    .assert_eq(&stderr(&o));
    let o = flowc(&["pe", "examples/gcd.fg", "--entry", "start", "--static", "[y/"], None);
    assert_eq!(o.status.code(), Some(2));
    expect![[r#"
        flowc: --static:1:4: parse error: expected a term, found end of input
        1 | [y/
          |    ^
    "#]]
    .assert_eq(&stderr(&o));
    let o = flowc(&["run", "examples/power.pl", "--frobnicate"], None);
    assert_eq!(o.status.code(), Some(2));
    let o = flowc(&["run", "examples/power.pl", "--engine", "warp"], None);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn missing_file_is_an_input_error() {
    let o = flowc(&["run", "no/such/file.pl"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("flowc: cannot read no/such/file.pl:"), "{}", stderr(&o));
}

/// Cuts and corruptions of a source text, chosen deterministically.
fn damaged(src: &str, count: usize) -> Vec<String> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    for k in 1..=count {
        let cut = bytes.len() * k / (count + 1);
        out.push(String::from_utf8_lossy(&bytes[..cut]).into_owned());
        let mut garbled = bytes.to_vec();
        let at = (cut * 7 + k * 13) % garbled.len().max(1);
        for (j, b) in garbled.iter_mut().skip(at).take(3).enumerate() {
            *b = b"()[],.'%:=#-x0\n\t|"[(k + j) % 18];
        }
        out.push(String::from_utf8_lossy(&garbled).into_owned());
    }
    out
}

#[test]
fn damaged_corpus_files_never_crash_flowc() {
    for p in corpus::all() {
        for text in damaged(&p.source, 6) {
            for args in [&["run", "-", "--fuel", "20000"][..], &["fmt", "-"][..]] {
                let o = flowc(args, Some(&text));
                let code = o.status.code();
                assert!(
                    matches!(code, Some(0 | 1)),
                    r#"{} {args:?} exited {code:?}:
{}
--- input:
{text}"#,
                    p.name(),
                    stderr(&o)
                );
                assert!(!stderr(&o).contains("panicked"), "{}: {}", p.name(), stderr(&o));
            }
        }
    }
}

#[test]
fn ir_command_prints_ir_dot_and_runnable_programs() {
    let o = flowc(&["ir", "examples/power.pl"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The front end's IR from the default entry (its snapshot is the
    // front end's power test, compiler/frontend/tests/lower.rs).
    let program = flowc_tests::corpus::program("examples/power.pl");
    let lowered = flowc_frontend::lower(&program, program.default_entry().unwrap()).unwrap();
    assert_eq!(stdout(&o), flowc_ir::print::module(&lowered));
    assert!(stdout(&o).contains("v2:res = phi [b0: 1, b1: v4]"), "{}", stdout(&o));
    let o = flowc(&["ir", "examples/power.pl", "--emit", "dot"], None);
    let dot = stdout(&o);
    assert!(dot.starts_with("digraph \"power\" {"), "{dot}");
    assert!(dot.contains("b1 -> b1 [label=\"then\"];"), "{dot}");
    let o = flowc(&["ir", "examples/bytecode.pl", "--emit", "fgl"], None);
    let fgl = stdout(&o);
    assert!(fgl.starts_with("entry("), "{fgl}");
    let o = flowc(&["run", "-", "--env", "[bytecode/[mov_a_r0,mov_a_r1,mov_r0_a,decr_a,mov_a_r0,mov_r2_a,add_r1_to_a,mov_a_r2,mov_r0_a,jump_if_a,2,mov_r2_a,return_a],pc/0,a/12,r0/0,r1/0,r2/0]"], Some(&fgl));
    assert_eq!(stdout(&o), "144\n", "{}", stderr(&o));
}

#[test]
fn ir_engine_runs_programs() {
    runs("examples/power.pl", &["--engine", "ir", "--env", "[x/10,y/20]"], "100000000000000000000\n");
    runs("examples/linked_list.fg", &["--engine", "ir"], "5050\n");
    fails(
        "examples/power.pl",
        &["--engine", "ir", "--env", "[x/10]"],
        expect![[r#"
            flowc: runtime error: unbound variable `y` [key_not_found(y)]
              at block `power`, terminator: if y goto power_rec else goto power_done
              note: label `power` reads `y` before writing it; the start environment gives `x`: give it with --env, e.g. --env '[y/0]'
        "#]],
    );
}

/// A reader that goes away early (`flowc fmt BIG | head`) ends flowc
/// quietly, by SIGPIPE as for other tools, never with a panic.
#[test]
fn a_closed_output_pipe_is_not_a_crash() {
    use std::io::Read;
    let mut program = String::from("start:\n    x = 0\n");
    for _ in 0..20_000 {
        program.push_str("    x = x + 1\n");
    }
    program.push_str("    print_and_stop(x)\n");
    let mut child = spawn(&["fmt", "-"]);
    child.stdin.take().unwrap().write_all(program.as_bytes()).expect("flowc reads its input");
    let mut start = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut start).expect("flowc writes");
    // The pipe is closed here, with most of the output unwritten.
    let o = child.wait_with_output().expect("flowc finishes");
    let err = stderr(&o);
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
    }
}

/// A reader that reads to the end gets the whole output: flowc ends its
/// process without the C library's exit handlers (`end_process` in
/// `main.rs`), after flushing what it wrote. A long output (more than a
/// pipe holds) printed back from the readable syntax is the program again,
/// to its last line.
#[test]
fn a_long_output_reaches_the_pipe_whole() {
    let mut program = String::from("start:\n    x = 0\n");
    for k in 0..20_000 {
        program.push_str(&format!("    x = x + {k}\n"));
    }
    program.push_str("    print_and_stop(x)\n");
    let prolog = flowc(&["fmt", "-"], Some(&program));
    assert_eq!(prolog.status.code(), Some(0), "{}", stderr(&prolog));
    assert!(prolog.stdout.len() > 1 << 18, "{} bytes", prolog.stdout.len());
    let back = flowc(&["fmt", "-", "--syntax", "readable"], Some(&stdout(&prolog)));
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
    assert_eq!(stdout(&back), program);
}

/// `FLOWC_CODE_DIR` gets the machine code of every compiled function, one
/// file each, and the program still prints what it prints.
#[test]
fn code_dir_receives_each_compiled_function() {
    let dir = std::env::temp_dir().join(format!("flowc-code-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_flowc"))
        .args(["run", "--engine", "native", "examples/power.pl"])
        .current_dir(workspace_root())
        .env("FLOWC_CODE_DIR", &dir)
        .output()
        .expect("flowc runs");
    assert_eq!(stdout(&o), "10000000000\n", "{}", stderr(&o));
    let mut files: Vec<(String, u64)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().len())
        })
        .collect();
    files.sort();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(files.iter().any(|(name, _)| name.starts_with("power-") && name.ends_with(".bin")), "{files:?}");
    assert!(files.iter().all(|(_, len)| *len > 0), "{files:?}");
}

#[test]
fn build_describes_env_as_the_executables_default() {
    // `build` shares `--env` with `run`, but for it the environment is
    // what the executable runs with when given none.
    let build = stdout(&flowc(&["build", "--help"], None));
    assert!(build.contains("The environment the executable runs with when given none"), "{build}");
    let run = stdout(&flowc(&["run", "--help"], None));
    assert!(run.contains("The start environment"), "{run}");
}

/// `--stats` reports a run that ends in an error too, and under `native`
/// says that compiled code counts no statements and how long compiling took.
#[test]
fn stats_report_runs_that_fail_and_native_compile_time() {
    for engine in ["interp", "ir", "native", "jit"] {
        let o = flowc(&["run", "--engine", engine, "--stats", "tests/corpus/errors/negative_index.fg"], None);
        assert_eq!(o.status.code(), Some(1), "{engine}");
        let err = stderr(&o);
        let line = err.lines().find(|l| l.starts_with("stats: engine")).unwrap_or_else(|| panic!("{engine}: {err}"));
        assert!(line.ends_with(", ended in an error"), "{engine}: {line}");
        assert!(err.contains("heap: "), "{engine}: {err}");
        assert!(err.contains("[index_out_of_range]"), "{engine}: {err}");
    }
    let o = flowc(&["run", "--engine", "interp", "--stats", "tests/corpus/errors/negative_index.fg"], None);
    assert!(stderr(&o).contains("stats: engine interp, 1 steps, "), "{}", stderr(&o));
    let o = flowc(&["run", "--engine", "native", "--stats", "examples/power.pl"], None);
    let err = stderr(&o);
    assert!(err.contains("statements not counted by compiled code"), "{err}");
    assert!(err.contains(" ms compiling, "), "{err}");
    assert!(!err.contains("0 steps"), "{err}");
    let o = flowc(&["run", "--engine", "native", "--fuel", "1000", "--stats", "examples/power.pl"], None);
    assert!(stderr(&o).contains("stats: engine native, 10 loop iterations"), "{}", stderr(&o));
}

/// `flowc fmt` keeps comments: own-line ones where they stand, those at
/// the end of a line on a line of their own before it, in both syntaxes;
/// converting there and back gives the same text.
#[test]
fn fmt_keeps_comments() {
    let src = r#"# header
entry main(n = 3)  # the start

# the loop
main:
    # count down
    c = n > 0  # test
    if c goto more else goto out
more:
    n = n - 1
    # back
    goto main

function f(x):
    # its entry
    s:
        return x
out:
    print_and_stop(n)
# the end
"#;
    let prolog = stdout(&flowc(&["fmt", "-"], Some(src)));
    expect![[r#"
        % header
        % the start
        entry(main, [n/3]).

        % the loop
        block(main,
                    % count down
                    % test
                    op2(c, gt, var(n), const(0),
                    if(c, more, out))).

        block(more, op2(n, sub, var(n), const(1),
                    % back
                    jump(main))).

        function(f, [x], [
            % its entry
            block(s, return(var(x)))
        ]).

        block(out, print_and_stop(var(n))).
        % the end
    "#]]
    .assert_eq(&prolog);
    let readable = stdout(&flowc(&["fmt", "-", "--syntax", "readable"], Some(&prolog)));
    expect![[r#"
        # header
        # the start
        entry main(n = 3)

        # the loop
        main:
            # count down
            # test
            c = n > 0
            if c goto more else goto out

        more:
            n = n - 1
            # back
            goto main

        function f(x):
            # its entry
            s:
                return x

        out:
            print_and_stop(n)
        # the end
    "#]]
    .assert_eq(&readable);
    assert_eq!(stdout(&flowc(&["fmt", "-"], Some(&readable))), prolog);
    assert_eq!(stdout(&flowc(&["fmt", "-", "--syntax", "readable"], Some(&readable))), readable);
    // `/* */` comments become comment lines.
    let block = stdout(&flowc(
        &["fmt", "-"],
        Some(
            r#"/* one
 two */
block(a, print_and_stop(const(1))).
"#,
        ),
    ));
    assert_eq!(
        block,
        r#"% one
% two
block(a, print_and_stop(const(1))).
"#
    );
}

/// `--verify-each` says on stderr what it checked when all is well, and
/// nothing with `-q`.
#[test]
fn verify_each_says_what_it_checked() {
    let o = flowc(&["opt", "examples/power.pl", "--verify-each"], None);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).starts_with(
            "flowc opt: the IR checker accepted the module after the front end and each of the 8 passes ("
        ),
        "{}",
        stderr(&o)
    );
    let o = flowc(&["opt", "examples/power.pl", "--verify-each", "-q"], None);
    assert_eq!(stderr(&o), "");
}

/// `flowc trace` says when no loop closed; from a label without an
/// environment it names the variables the label needs.
#[test]
fn trace_explains_no_loop_and_missing_variables() {
    let o = flowc(&["trace", "examples/power.pl", "--entry", "power"], None);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "10000000000\n");
    assert!(stderr(&o).contains("no loop closed"), "{}", stderr(&o));
    let o = flowc(&["trace", "tests/corpus/shapes/function_loop.fg", "--entry", "again"], None);
    assert_eq!(o.status.code(), Some(1));
    expect![[r#"
        flowc: runtime error: unbound variable `k` [key_not_found(k)]
          at block `again`, terminator: if k goto call_it else goto done
          note: label `again` reads `total`, `k`, `n` before writing them; the start environment is empty: give them with --env, e.g. --env '[total/0,k/0,n/0]'
    "#]]
    .assert_eq(&stderr(&o));
}

/// `flowc trace --format readable` writes calls in the readable syntax's
/// words, not as Prolog terms.
#[test]
fn readable_traces_have_no_prolog_terms() {
    let o = flowc(
        &[
            "trace",
            "tests/corpus/shapes/function_loop.fg",
            "--entry",
            "again",
            "--env",
            "[total/0,k/3,n/4]",
            "--format",
            "readable",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("enter r = call sum(n) then add\n"), "{out}");
    assert!(out.contains("leave return t\n"), "{out}");
    assert!(!out.contains("enter(") && !out.contains("leave(") && !out.contains("var("), "{out}");
}

/// The IR engine reports errors at the source statement, as the
/// interpreter does (also a jump to a missing label).
#[test]
fn ir_engine_errors_name_source_statements() {
    for file in ["tests/corpus/errors/unknown_label.fg", "tests/corpus/errors/negative_index.fg"] {
        let interp = flowc(&["run", file], None);
        let ir = flowc(&["run", "--engine", "ir", file], None);
        assert_eq!(stderr(&ir), stderr(&interp), "{file}");
        assert!(!stderr(&ir).contains("block `b"), "{}", stderr(&ir));
    }
}

/// Compiling a large program shows progress on a terminal only: piped,
/// stderr stays empty. (Huge functions are compiled cheaply, so this is
/// quick even in a debug build.)
#[test]
fn large_compilations_are_quiet_when_piped() {
    let mut program = String::from("start:\n    x = 0\n");
    for k in 0..60_000 {
        program.push_str(if k % 2 == 0 { "    x = x + 1\n" } else { "    x = x - 2\n" });
    }
    program.push_str("    print_and_stop(x)\n");
    let o = flowc(&["run", "--engine", "native", "-"], Some(&program));
    assert_eq!(stdout(&o), "-30000\n", "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

/// Deep nesting and long lines (issue 15): rejected with a short, placed
/// error, never a stack overflow or a message as long as the input.
#[test]
fn deep_nesting_and_long_lines_get_short_errors() {
    let fails_with = |args: &[&str], src: &str, want: &str| {
        let o = flowc(args, Some(src));
        let err = stderr(&o);
        let cmd = args[0];
        // Input errors exit 1, a bad `--env` is a usage error (2).
        assert!(matches!(o.status.code(), Some(1 | 2)), "{cmd}: {:?} {}", o.status, &err[..err.len().min(500)]);
        assert!(err.contains(want), "{cmd}: {}", &err[..err.len().min(500)]);
        assert!(err.len() < 1000, "{cmd}: a {}-byte message", err.len());
    };
    // 1.5 million nested lists, in both syntaxes and in `--env`.
    let n = 1_500_000;
    let lists = format!("{}{}", "[".repeat(n), "]".repeat(n));
    let prolog = format!("block(start, op1(x, same, const({lists}), print_and_stop(var(x)))).\n");
    fails_with(&["fmt", "-"], &prolog, "<stdin>:1:10033: parse error: lists nested more than 10000 deep");
    let readable = format!(
        r#"start:
    x = {lists}
    print_and_stop(x)
"#
    );
    fails_with(&["run", "-"], &readable, "<stdin>:2:10009: parse error: lists nested more than 10000 deep");
    let env = format!("[x/{}{}]", "[".repeat(20_000), "]".repeat(20_000));
    fails_with(&["run", "examples/power.pl", "--env", &env], "", "lists nested more than 10000 deep");
    // A block of more statements than the Prolog syntax nests.
    let chain = "op1(x, same, const(1), ".repeat(100_001);
    let deep = format!("block(start, {chain}print_and_stop(var(x)){}).\n", ")".repeat(100_001));
    fails_with(&["fmt", "-"], &deep, "terms nested more than 100000 deep");
    // The readable syntax has no such limit, so printing that block as
    // Prolog is refused rather than written unreadable.
    let big = format!("start:\n{}    print_and_stop(x)\n", "    x = 1\n".repeat(100_001));
    fails_with(&["fmt", "--syntax", "prolog", "-"], &big, "block start has too many statements for the Prolog syntax");
    let o = flowc(&["fmt", "--syntax", "prolog", "-"], Some(&big.replace(&"    x = 1\n".repeat(2), "")));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let printed = stdout(&o);
    let back = flowc(&["run", "-"], Some(&printed));
    assert_eq!(stdout(&back), "1\n", "{}", &stderr(&back)[..stderr(&back).len().min(500)]);
    // A 7 MB line: the excerpt is cut around the column.
    let long = format!("start:\n    x = {} + !\n", "a".repeat(7_000_000));
    fails_with(&["run", "-"], &long, "<stdin>:2:7000012: parse error: unexpected character `!`\n2 | ...aaa");
    // A 7 MB integer is refused at once rather than converted for a minute.
    let long = format!("block(start, op1(x, same, const({}), print_and_stop(var(x)))).\n", "1".repeat(7_000_000));
    fails_with(&["run", "-"], &long, "an integer literal of 7000000 digits: at most 10000 are supported");
}

/// `flowc ir|opt FILE --emit fgl` prints a program that runs as is: with
/// the entry's start environment and the `can_enter_jit` hints (issue 16),
/// in both syntaxes, for every example.
#[test]
fn emitted_flow_graphs_run_as_is() {
    let dir = workspace_root().join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 9);
    for path in files {
        let file = path.to_str().unwrap();
        let expected = flowc(&["run", file], None);
        assert_eq!(expected.status.code(), Some(0), "{file}");
        for cmd in ["ir", "opt"] {
            for syntax in ["prolog", "readable"] {
                let emitted = flowc(&[cmd, file, "--emit", "fgl", "--syntax", syntax], None);
                assert_eq!(emitted.status.code(), Some(0), "{cmd} {file}: {}", stderr(&emitted));
                let text = stdout(&emitted);
                let hinted = std::fs::read_to_string(&path).unwrap().contains("can_enter_jit");
                assert_eq!(text.contains("can_enter_jit"), hinted, "{cmd} {file} --syntax {syntax}:\n{text}");
                let run = flowc(&["run", "-"], Some(&text));
                assert_eq!(stdout(&run), stdout(&expected), "{cmd} {file} --syntax {syntax}: {}", stderr(&run));
            }
        }
    }
}

/// `--print-changed`: the front end's IR, then each pass that changed it
/// as a diff, one line for each that did not (issue 16).
#[test]
fn print_changed_shows_diffs_of_the_passes_that_changed_the_ir() {
    let o = flowc(&["opt", "examples/gcd.fg", "--print-changed"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    expect![[r#"
        == front end ==
        main start(v0:n) {
        b0 start:
            jump b1
        b1 outer:
            v1:i = phi [b0: 1, b5: v11]
            v4:total = phi [b0: 0, b5: v9]
            v3:more = le v1, v0
            branch v3, b2, b6
        b2 pair:
            v5:a = mul v1, 7
            jump b3
        b3 inner:
            v6:b = phi [b2: 360, b4: v13]
            v8:a = phi [b2: v5, b4: v14]
            branch v6, b4, b5
        b4 step:
            v13:t = mod v8, v6
            v14:a = check_bound v6
            jump b3
        b5 found:
            v9:total = add v4, v8
            v11:i = add v1, 1
            jump b1
        b6 done:
            print v4
        }
        == after normalize: no change ==
        == after propagate: no change ==
        == after cleanup (changed) ==
        --- before cleanup
        +++ after cleanup
        @@ -7,19 +7,18 @@
             v3:more = le v1, v0
             branch v3, b2, b6
         b2 pair:
        -    v5:a = mul v1, 7
        +    v5:a = mul.int v1, 7
             jump b3
         b3 inner:
             v6:b = phi [b2: 360, b4: v13]
        -    v8:a = phi [b2: v5, b4: v14]
        +    v8:a = phi [b2: v5, b4: v6]
             branch v6, b4, b5
         b4 step:
        -    v13:t = mod v8, v6
        -    v14:a = check_bound v6
        +    v13:t = mod.int v8, v6
             jump b3
         b5 found:
        -    v9:total = add v4, v8
        -    v11:i = add v1, 1
        +    v9:total = add.int v4, v8
        +    v11:i = add.int v1, 1
             jump b1
         b6 done:
             print v4
        == after loops: no change ==
        == after escape: no change ==
        == after unbox: no change ==
        == after def-use: no change ==
        == after dce: no change ==
    "#]]
    .assert_eq(&stdout(&o));
}

/// `--dump-before` and `--dump-after` take lists; with `--emit dot` every
/// dump is Graphviz, one graph per function and step, headers as comments.
#[test]
fn dumps_take_lists_of_passes_and_print_graphs() {
    let headers = |args: &[&str]| -> String {
        let o = flowc(args, None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
            .lines()
            .filter(|l| l.starts_with("==") || l.starts_with("//") || l.starts_with("digraph"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    expect![[r#"
        == before normalize ==
        == after cleanup ==
        == before dce =="#]]
    .assert_eq(&headers(&["opt", "examples/fib.fg", "--dump-before", "normalize,dce", "--dump-after", "cleanup"]));
    expect![[r#"
        // == after normalize ==
        digraph "main" {
        digraph "fib" {
        // == after dce ==
        digraph "main" {
        digraph "fib" {"#]]
    .assert_eq(&headers(&["opt", "examples/fib.fg", "--dump-after", "normalize,dce", "--emit", "dot"]));
    let o = flowc(&["opt", "examples/fib.fg", "--dump-after", "normalize,nosuch"], None);
    assert_eq!(o.status.code(), Some(2));
    expect![[r#"
        flowc: --dump-after: no pass `nosuch` (all, normalize, propagate, cleanup, loops, escape, unbox, def-use, dce)
    "#]]
    .assert_eq(&stderr(&o));
}

/// `flowc opt --disasm`: each compiled function's final machine code,
/// decoded, with offsets (issue 16).
#[test]
fn disasm_prints_the_final_machine_code() {
    let o = flowc(&["opt", "examples/fib.fg", "--disasm"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let headers: Vec<&str> = text.lines().filter(|l| l.starts_with("; function")).collect();
    assert_eq!(headers.len(), 2, "{text}");
    assert!(headers[0].starts_with("; function main: ") && headers[1].starts_with("; function fib: "), "{text}");
    // Every function starts at offset 0 and returns somewhere (decoded on
    // x86-64 only; elsewhere the bytes are listed).
    if cfg!(target_arch = "x86_64") {
        assert!(text.contains("\n       0:  "), "{text}");
        assert!(text.lines().any(|l| l.ends_with(" ret")), "{text}");
    }
}

/// `flowc trace --dot FILE` draws the trace IR, converted and optimized;
/// stdout stays the series' output (issue 16).
#[test]
fn trace_draws_its_ir_as_graphviz() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trace-power.dot");
    let plain = flowc(&["trace", "examples/power.pl", "--entry", "power_rec", "--env", "[res/1,x/10,y/20]"], None);
    let p = path.to_str().unwrap();
    let o =
        flowc(&["trace", "examples/power.pl", "--entry", "power_rec", "--env", "[res/1,x/10,y/20]", "--dot", p], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&plain));
    let dot = std::fs::read_to_string(&path).unwrap();
    let graphs: Vec<&str> = dot.lines().filter(|l| l.starts_with("digraph") || l.starts_with("//")).collect();
    assert_eq!(graphs.len(), 4, "{dot}");
    assert_eq!(graphs[0], "// == the trace IR, converted ==");
    assert_eq!(graphs[2], "// == optimized ==");
    let o = flowc(&["trace", "examples/power.pl", "--entry", "power_rec", "--optimizer", "blog", "--dot", p], None);
    assert_eq!(o.status.code(), Some(2));
}

/// `--passes` runs the passes it names, in its order, and refuses a pass
/// that reads what no pass before it leaves, before anything runs.
#[test]
fn opt_runs_the_passes_it_is_given() {
    let o = flowc(&["opt", "examples/fib.fg", "--passes", "normalize,propagate,cleanup", "--verify-each"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("after the front end and each of the 3 passes"), "{}", stderr(&o));
    let o =
        flowc(&["opt", "examples/fib.fg", "--passes", "normalize,propagate,cleanup,dce", "--dump-after", "all"], None);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    expect![[r#"
        flowc: --passes: `dce` reads DefUse, which no pass before it leaves (`def-use` does)
    "#]]
    .assert_eq(&stderr(&o));
    let o = flowc(&["opt", "examples/fib.fg", "--passes", "normalize,inline"], None);
    assert_eq!(o.status.code(), Some(2));
    expect![[r#"
        flowc: --passes: no pass `inline` (normalize, propagate, cleanup, loops, escape, unbox, def-use, dce)
    "#]]
    .assert_eq(&stderr(&o));
}

/// `flowc run --engine native` moves the optimized IR into the code
/// rather than copying it (`Native::compile_owned_versions`): the
/// optimized tier of a hot region of a huge main graph is compiled from
/// it while the program runs, and the run prints what the interpreter
/// does.
#[test]
fn a_huge_main_graphs_hot_region_tiers_up_from_the_ir_it_was_given() {
    let mut text = String::from(
        "entry start(n = 3000000)\n\nstart:\n    acc = 1\n    k = n\n    goto l\nl:\n    if k goto body else goto pad\n\
         body:\n    acc = acc * 31\n    acc = acc + k\n    acc = acc % 1000003\n    k = k - 1\n    goto l\npad:\n",
    );
    // Straight-line code that no pass folds, to make the graph huge.
    for i in 0..2_500 {
        text.push_str(&format!("    acc = acc * {}\n    acc = acc % 1000003\n", i + 2));
    }
    text.push_str("    print_and_stop(acc)\n");
    let interp = flowc(&["run", "--engine", "interp", "-"], Some(&text));
    let native = flowc(&["run", "--engine", "native", "--stats", "-"], Some(&text));
    assert_eq!(native.status.code(), Some(0), "{}", stderr(&native));
    assert_eq!(stdout(&native), stdout(&interp));
    let err = stderr(&native);
    assert!(err.contains("1 optimized tier (a region of a huge function) compiled while running"), "{err}");
    assert!(!err.contains("failed"), "{err}");
}

//! The `ir-check` binary: exit 0 on valid files, 1 on invalid or unreadable
//! ones (with `FILE: <violation>` lines or the parse error on stderr), 2 on
//! bad usage; `-` reads standard input.

use crate::common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use expect_test::expect;

fn ir_check(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ir-check"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ir-check runs");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// Writes `text` to a file of the test's temporary directory.
fn file(name: &str, text: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

fn stderr(out: &Output, path: &str) -> String {
    String::from_utf8_lossy(&out.stderr).replace(path, "FILE")
}

#[test]
fn valid_file_exits_0() {
    let path = file("valid.ir", common::FIB);
    let out = ir_check(&[&path], "");
    assert_eq!(out.status.code(), Some(0));
    expect![[r#"
        ir-check: 1 file valid (2 functions, 4 blocks, 7 instructions)
    "#]]
    .assert_eq(&stderr(&out, &path));
    let out = ir_check(&["-q", &path], "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out, &path), "");
}

#[test]
fn invalid_file_exits_1_with_the_violation() {
    let valid = file("valid2.ir", common::TRACE);
    let invalid = file("invalid.ir", &common::edit(common::POWER, "print v6", "print v4"));
    let out = ir_check(&[&valid, &invalid], "");
    assert_eq!(out.status.code(), Some(1));
    expect![[r#"
        FILE: function power, block b2, terminator `print v4`: [use-dominated] v4 is used here but its definition in b1 does not dominate b2
    "#]]
    .assert_eq(&stderr(&out, &invalid));
}

#[test]
fn stdin_and_parse_errors() {
    let out = ir_check(&["-"], common::OBJECTS);
    assert_eq!(out.status.code(), Some(0));
    let out = ir_check(
        &["-"],
        r#"main m() {
b0:
    jump
}
"#,
    );
    assert_eq!(out.status.code(), Some(1));
    expect![[r#"
        -:3:9: parse error: expected a block like b2, found end of line
        3 |     jump
          |         ^
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stderr));
}

#[test]
fn unreadable_file_exits_1() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("does-not-exist.ir");
    let path = path.to_str().unwrap();
    let out = ir_check(&[path], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out, path).starts_with("ir-check: FILE: "), "{}", stderr(&out, path));
}

#[test]
fn bad_usage_exits_2() {
    let out = ir_check(&[], "");
    assert_eq!(out.status.code(), Some(2));
    expect![[r#"
        usage: ir-check [-q] FILE...   (FILE `-` reads standard input; -q: nothing on success)
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(ir_check(&["--frobnicate"], "").status.code(), Some(2));
}

//! Output is deterministic: the same input gives byte-identical IR dumps,
//! traces and residual programs. Each command runs twice in separate
//! processes — hash maps are seeded per process, so an iteration order
//! leaking into the output would show as a difference.

use std::process::Command;

use flowc_tests::corpus::{self, workspace_root};

fn flowc(args: &[&str]) -> (Option<i32>, Vec<u8>) {
    let o = Command::new(env!("CARGO_BIN_EXE_flowc")).args(args).current_dir(workspace_root()).output().unwrap();
    (o.status.code(), o.stdout)
}

#[test]
fn ir_dumps_are_byte_identical_across_runs() {
    let mut compared = 0;
    for p in corpus::all() {
        let path = p.name();
        let commands: [&[&str]; 4] = [
            &["ir", &path],
            &["opt", &path, "--dump-after", "all"],
            &["opt", &path, "--small-params", "--emit", "fgl"],
            &["trace", &path],
        ];
        for args in commands {
            let first = flowc(args);
            let second = flowc(args);
            assert_eq!(first.0, second.0, "flowc {args:?}: exit status differs");
            assert!(
                first.1 == second.1,
                r#"flowc {args:?}: output differs between runs:
{}
---
{}"#,
                String::from_utf8_lossy(&first.1),
                String::from_utf8_lossy(&second.1)
            );
            compared += usize::from(first.0 == Some(0));
        }
    }
    assert!(compared > 40, "only {compared} successful commands compared");
}

/// A program big enough to be compiled on two cores
/// (`flowc_codegen::compile`: at least 20,000 IR instructions), where
/// which thread compiles which function depends on timing: its object
/// file is the same, byte for byte, from run to run, since functions are
/// defined in the order they were lowered whoever compiled them. (On a
/// machine of one core it is compiled on one thread, and this shows only
/// that that is deterministic.)
#[test]
fn object_files_compiled_on_two_cores_are_byte_identical_across_runs() {
    let dir = std::env::temp_dir().join(format!("flowc-determinism-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("many.fg");
    // 3,000 functions of a loop each, called in turn: some 30,000 IR
    // instructions.
    std::fs::write(&source, flowc_tests::loops::many_functions(3_000, 3)).unwrap();
    let object = |k: usize| {
        let out = dir.join(format!("many{k}"));
        let args = ["build", source.to_str().unwrap(), "-o", out.to_str().unwrap(), "--keep-object"];
        let (status, _) = flowc(&args);
        assert_eq!(status, Some(0), "flowc {args:?} failed");
        let run = Command::new(&out).output().unwrap();
        assert!(run.status.success(), "the executable failed");
        (std::fs::read(dir.join(format!("many{k}.o"))).unwrap(), run.stdout)
    };
    let (first, printed) = object(1);
    let (second, again) = object(2);
    assert_eq!(printed, again);
    assert!(first.len() > 100_000, "an object of {} bytes is too small to have been compiled in parallel", first.len());
    assert!(first == second, "the object files differ between runs");
    let _ = std::fs::remove_dir_all(&dir);
}

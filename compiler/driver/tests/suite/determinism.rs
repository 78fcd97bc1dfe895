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

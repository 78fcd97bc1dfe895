//! `flowc explore`'s data, checked without a browser (explore_browser.rs
//! checks the page in one): for every bundled example, the JSON embedded in
//! the page has the front end and the eight passes, and every link it
//! draws leads somewhere — each machine code line's key names an
//! instruction or terminator of the final IR of its function, each IR line's
//! source line exists and shows that instruction's statement's block, each
//! trace exit's key is a line of its trace, the hot loop's blocks are
//! blocks of the final IR. What is drawn is deterministic.

use std::collections::HashSet;
use std::process::Command;

use flowc_tests::corpus::workspace_root;
use serde_json::Value;

/// The JSON of the page `flowc explore ARGS -o -` writes.
fn explore(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_flowc"))
        .arg("explore")
        .args(args)
        .args(["-o", "-"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(out.status.success(), "flowc explore {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let page = String::from_utf8(out.stdout).unwrap();
    let marker = "<script id=\"data\" type=\"application/json\">";
    let start = page.find(marker).expect("the data element") + marker.len();
    let end = start + page[start..].find("</script>").unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("renderMain"), "a page with its script inlined");
    assert!(!page.contains("{{"), "every placeholder filled");
    serde_json::from_str(&page[start..end]).unwrap()
}

fn keys_of(ir: &Value) -> HashSet<String> {
    ir.as_array().unwrap().iter().map(|l| l[1].as_str().unwrap().to_owned()).filter(|k| !k.is_empty()).collect()
}

#[test]
fn every_link_of_every_example_leads_somewhere() {
    let mut examples: Vec<_> = std::fs::read_dir(workspace_root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fg" || x == "pl"))
        .collect();
    examples.sort();
    assert!(examples.len() >= 9);
    for path in examples {
        let name = path.display().to_string();
        let d = explore(&[&name]);
        assert_eq!(d["agree"], true, "{name}");
        let steps = d["steps"].as_array().unwrap();
        let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["front end", "normalize", "propagate", "cleanup", "loops", "escape", "unbox", "def-use", "dce"],
            "{name}"
        );
        let source: Vec<&str> = d["source"]["text"].as_str().unwrap().lines().collect();
        for step in steps {
            for f in step["functions"].as_array().unwrap() {
                let ir = f["ir"].as_array().unwrap();
                assert!(ir.len() > 2, "{name}");
                for line in ir {
                    let src = line[2].as_u64().unwrap() as usize;
                    assert!(src <= source.len(), "{name}: source line {src} of {}", source.len());
                    if src > 0 {
                        assert!(!source[src - 1].trim().is_empty(), "{name}: {line} links to an empty line");
                    }
                }
                // The front end's instructions all come from statements.
                if step["name"] == "front end" {
                    let linked = ir.iter().filter(|l| l[1].as_str().unwrap().starts_with('i')).all(|l| l[2] != 0);
                    assert!(linked, "{name}: a front end instruction without a source line");
                }
                assert!(f["svg"].as_str().is_some_and(|s| s.starts_with("<svg")), "{name}: a CFG");
            }
        }
        let last = steps.last().unwrap();
        let machine = d["machine"].as_array().unwrap();
        assert!(!machine.is_empty(), "{name}: machine code");
        let mut linked_lines = 0;
        for code in machine {
            let f = last["functions"].as_array().unwrap().iter().find(|f| f["name"] == code["name"]).unwrap();
            let keys = keys_of(&f["ir"]);
            for line in code["lines"].as_array().unwrap() {
                let key = line[3].as_str().unwrap();
                if !key.is_empty() {
                    assert!(
                        keys.contains(key),
                        "{name}: machine code of {} links to {key}, not in its IR",
                        code["name"]
                    );
                    linked_lines += 1;
                }
            }
        }
        assert!(linked_lines > 0, "{name}: no machine code line links to the IR");
        for t in d["traces"].as_array().unwrap() {
            let keys = keys_of(&t["function"]["ir"]);
            for e in t["exits"].as_array().unwrap() {
                assert!(keys.contains(e["key"].as_str().unwrap()), "{name}: exit {e} not a line of {}", t["name"]);
            }
            for line in t["machine"]["lines"].as_array().unwrap() {
                let key = line[3].as_str().unwrap();
                assert!(key.is_empty() || keys.contains(key), "{name}: trace machine code links to {key}");
            }
        }
        let hot = &d["hot"];
        if let Some(f) = hot["function"].as_str() {
            let f = last["functions"].as_array().unwrap().iter().find(|g| g["name"] == f).unwrap();
            let keys = keys_of(&f["ir"]);
            for b in hot["blocks"].as_array().unwrap() {
                assert!(keys.contains(&format!("b{b}")), "{name}: hot block {b}");
            }
        }
    }
}

#[test]
fn what_is_drawn_is_deterministic_and_big_graphs_are_capped() {
    let strip = |mut d: Value| {
        // Timings and addresses change from run to run; the rest may not.
        for s in d["steps"].as_array_mut().unwrap() {
            s["ms"] = Value::Null;
        }
        (d["steps"].clone(), d["source"].clone(), d["hot"].clone())
    };
    let a = strip(explore(&["examples/stack_machine.fg"]));
    let b = strip(explore(&["examples/stack_machine.fg"]));
    assert_eq!(a, b);
    let capped = explore(&["examples/stack_machine.fg", "--max-blocks", "3"]);
    let f = &capped["steps"][0]["functions"][0];
    assert!(f["svg"].is_null());
    assert!(f["notes"][0].as_str().unwrap().contains("more than --max-blocks 3"), "{}", f["notes"]);
}

#[test]
fn bad_input_gets_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_flowc"))
        .args(["explore", "examples/gcd.fg", "-o", "/nonexistent-dir/page.html"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write /nonexistent-dir/page.html"));
    let out = Command::new(env!("CARGO_BIN_EXE_flowc"))
        .args(["explore", "examples/gcd.fg"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "-o is required");
    let out = Command::new(env!("CARGO_BIN_EXE_flowc"))
        .args(["explore", "-", "-o", "-"])
        .current_dir(workspace_root())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no blocks"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn compare_points_at_the_explorer() {
    let out = Command::new(env!("CARGO_BIN_EXE_flowc"))
        .args(["compare", "examples/fib.fg"])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // fib has no loop: compare says so, and where to look further.
    assert!(text.contains("the main graph has no loop"), "{text}");
    assert!(text.contains("== jit: no loop got hot"), "{text}");
    assert!(text.contains("flowc explore FILE -o page.html"), "{text}");
}

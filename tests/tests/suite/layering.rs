//! The crates' layering (docs/architecture.md, "Crates"): which of the
//! workspace's crates each may depend on, read from the manifests. A
//! dependency outside its row fails here, so the dependency graph stays
//! the DAG the document describes: values and the heap know no program,
//! the runtime of compiled code no syntax or interpreter of the language,
//! the language no IR, the IR no pass, the passes no code generator, and
//! the IR's and the passes' tests build no code generator.

use std::collections::BTreeSet;
use std::path::Path;

/// Each library's folder, and the workspace crates its dependencies
/// (`[dependencies]`, `[build-dependencies]`) and its tests'
/// (`[dev-dependencies]`) may name.
const LAYERS: &[(&str, &[&str], &[&str])] = &[
    ("compiler/heap", &[], &[]),
    ("compiler/lang", &["flowc-heap"], &[]),
    ("compiler/ir", &["flowc-lang"], &["flowc-frontend", "flowc-testkit"]),
    ("compiler/frontend", &["flowc-lang", "flowc-ir"], &[]),
    ("ir-checker", &["flowc-lang", "flowc-ir"], &[]),
    ("passes", &["flowc-lang", "flowc-ir"], &["flowc-frontend", "flowc-ir-checker", "flowc-testkit"]),
    ("compiler/runtime", &["flowc-heap"], &[]),
    ("compiler/codegen", &["flowc-lang", "flowc-ir", "flowc-runtime"], &[]),
    (
        "compiler/trace",
        &["flowc-lang", "flowc-ir", "flowc-passes", "flowc-codegen"],
        &["flowc-frontend", "flowc-ir-checker"],
    ),
    ("tests/kit", &["flowc-lang", "flowc-ir", "flowc-frontend", "flowc-ir-checker", "flowc-passes"], &[]),
];

/// The leaves: members nothing of ours depends on but each other, which
/// may depend on any crate.
const LEAVES: &[&str] = &["compiler/driver", "tests", "bench", "fuzz"];

/// Which kind of dependency table a manifest's section header opens, if
/// any: `[dependencies]` and `[build-dependencies]` (and their
/// target-specific forms) are the library's, `[dev-dependencies]` its
/// tests'. A table per dependency (`[dependencies.flowc-x]`) names it.
fn table(header: &str) -> Option<(bool, Option<String>)> {
    let inner = header.strip_prefix('[')?.strip_suffix(']')?.trim();
    let parts: Vec<&str> = inner.split('.').map(|p| p.trim().trim_matches('"')).collect();
    // `target.'cfg(..)'.dependencies` and the like: the kind is the part
    // after the target.
    let rest: &[&str] = match parts.as_slice() {
        ["target", _, rest @ ..] => rest,
        all => all,
    };
    let dev = match rest.first()? {
        &"dependencies" | &"build-dependencies" => false,
        &"dev-dependencies" => true,
        _ => return None,
    };
    Some((dev, rest.get(1).map(|name| name.to_string())))
}

/// The workspace crates (`flowc-…`) a manifest depends on: the library's
/// (`false`) and its tests' (`true`). A renamed dependency counts by its
/// package.
fn named(manifest: &str) -> [BTreeSet<String>; 2] {
    let mut out = [BTreeSet::new(), BTreeSet::new()];
    let mut section: Option<(bool, Option<String>)> = None;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.starts_with('[') {
            section = table(line);
            if let Some((dev, Some(name))) = &section {
                out[usize::from(*dev)].insert(name.clone());
            }
            continue;
        }
        let Some((dev, None)) = &section else { continue };
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = key.split('.').next().unwrap_or_default().trim().trim_matches('"');
        let package = value.split("package").nth(1).and_then(|p| p.split('"').nth(1));
        out[usize::from(*dev)].insert(package.unwrap_or(key).to_string());
    }
    for set in &mut out {
        set.retain(|name| name.starts_with("flowc"));
    }
    out
}

/// The workspace's members, from the root manifest.
fn members(root: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the root manifest");
    let list = manifest.split("members = [").nth(1).and_then(|m| m.split(']').next()).expect("a members list");
    list.split(',').map(|m| m.trim().trim_matches('"').to_string()).filter(|m| !m.is_empty()).collect()
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let root = flowc_tests::corpus::workspace_root();
    for &(folder, normal, dev) in LAYERS {
        let path = root.join(folder).join("Cargo.toml");
        let manifest = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let [deps, dev_deps] = named(&manifest);
        for (what, found, allowed) in [("dependencies", deps, normal), ("dev-dependencies", dev_deps, dev)] {
            let allowed: BTreeSet<String> = allowed.iter().map(|s| s.to_string()).collect();
            let extra: Vec<String> = found.difference(&allowed).cloned().collect();
            assert!(extra.is_empty(), "{folder}'s {what} name {extra:?}, outside its layer {allowed:?}");
        }
    }
}

#[test]
fn every_member_has_a_layer_or_is_a_leaf() {
    let root = flowc_tests::corpus::workspace_root();
    for member in members(root) {
        let known = LAYERS.iter().any(|&(folder, _, _)| folder == member) || LEAVES.contains(&member.as_str());
        assert!(known, "workspace member {member} has no row in LAYERS and is no leaf");
    }
}

#[test]
fn the_manifest_reader_sees_every_way_a_manifest_names_a_crate() {
    // The checks above could pass by reading nothing: they read this.
    let text = "[package]\nname = \"x\"\n\n[dependencies] # ours\nflowc-lang.workspace = true\nflowc-ir = { path = \"../ir\" }\ncg = { package = \"flowc-codegen\", path = \"../codegen\" }\nother = \"1\"\n\n[dependencies.flowc-trace]\npath = \"../trace\"\n\n[target.'cfg(unix)'.dependencies]\n\"flowc-runtime\" = { path = \"../runtime\" }\n\n[build-dependencies]\nflowc-passes.workspace = true\n\n[dev-dependencies]\nflowc-tests.workspace = true\n";
    let [deps, dev] = named(text);
    let deps: Vec<String> = deps.into_iter().collect();
    assert_eq!(deps, ["flowc-codegen", "flowc-ir", "flowc-lang", "flowc-passes", "flowc-runtime", "flowc-trace"]);
    let dev: Vec<String> = dev.into_iter().collect();
    assert_eq!(dev, ["flowc-tests"]);
    let root = flowc_tests::corpus::workspace_root();
    assert!(members(root).contains(&"compiler/lang".to_string()));
    assert!(Path::new(&root.join("compiler/lang/Cargo.toml")).exists());
}

//! The crates' layering (docs/architecture.md, "Crates"): which of the
//! workspace's crates each may depend on, read from the manifests. A
//! dependency outside its row fails here, so the dependency graph stays
//! the DAG the document describes: the language knows no IR, the IR no
//! pass, the passes no code generator, and the IR's and the passes' tests
//! build no code generator.

use std::collections::BTreeSet;
use std::path::Path;

/// Each crate's folder, and the workspace crates its `[dependencies]`
/// and its `[dev-dependencies]` may name.
const LAYERS: &[(&str, &[&str], &[&str])] = &[
    ("compiler/lang", &[], &[]),
    ("compiler/ir", &["flowc-lang"], &["flowc-frontend", "flowc-testkit"]),
    ("compiler/frontend", &["flowc-lang", "flowc-ir"], &[]),
    ("ir-checker", &["flowc-lang", "flowc-ir"], &[]),
    ("passes", &["flowc-lang", "flowc-ir"], &["flowc-frontend", "flowc-ir-checker", "flowc-testkit"]),
    ("compiler/runtime", &["flowc-lang"], &[]),
    ("compiler/codegen", &["flowc-lang", "flowc-ir", "flowc-runtime"], &[]),
    (
        "compiler/trace",
        &["flowc-lang", "flowc-ir", "flowc-passes", "flowc-codegen"],
        &["flowc-frontend", "flowc-ir-checker"],
    ),
    ("tests/kit", &["flowc-lang", "flowc-ir", "flowc-frontend", "flowc-ir-checker", "flowc-passes"], &[]),
];

/// The workspace crates (`flowc-…`) a manifest names in `section`.
fn named(manifest: &str, section: &str) -> BTreeSet<String> {
    let mut inside = false;
    let mut out = BTreeSet::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == section;
        } else if inside && line.starts_with("flowc") {
            let name = line.split(['.', ' ', '=']).next().unwrap_or_default();
            out.insert(name.to_string());
        }
    }
    out
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    let root = flowc_tests::corpus::workspace_root();
    for &(folder, normal, dev) in LAYERS {
        let path = root.join(folder).join("Cargo.toml");
        let manifest = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (section, allowed) in [("[dependencies]", normal), ("[dev-dependencies]", dev)] {
            let allowed: BTreeSet<String> = allowed.iter().map(|s| s.to_string()).collect();
            let extra: Vec<String> = named(&manifest, section).difference(&allowed).cloned().collect();
            assert!(extra.is_empty(), "{folder} {section} names {extra:?}, outside its layer {allowed:?}");
        }
    }
}

#[test]
fn the_manifest_reader_sees_what_a_manifest_names() {
    // The check above could pass by reading nothing: it reads this.
    let text = "[package]\nname = \"x\"\n\n[dependencies]\nflowc-lang.workspace = true\nflowc-ir = { path = \"../ir\" }\nother = \"1\"\n\n[dev-dependencies]\nflowc-tests.workspace = true\n";
    let deps: Vec<String> = named(text, "[dependencies]").into_iter().collect();
    assert_eq!(deps, ["flowc-ir", "flowc-lang"]);
    let dev: Vec<String> = named(text, "[dev-dependencies]").into_iter().collect();
    assert_eq!(dev, ["flowc-tests"]);
    assert!(Path::new(&flowc_tests::corpus::workspace_root().join("compiler/lang/Cargo.toml")).exists());
}

//! Replays every input kept under fuzz/regressions/<target>/ (crashes the
//! cargo-fuzz targets found, minimized with `cargo fuzz tmin`, and the seed
//! corpus) through the target's body, without libFuzzer: once fixed, a
//! crash stays fixed.

use std::path::Path;

#[test]
fn regression_inputs_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut replayed = 0;
    for (name, target) in flowc_fuzz::targets::TARGETS {
        for dir in [root.join("regressions").join(name), root.join("libfuzzer/seeds").join(name)] {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
            files.sort();
            for path in files {
                let data = std::fs::read(&path).unwrap();
                let shown = path.display().to_string();
                let outcome = std::panic::catch_unwind(|| flowc_codegen::with_stack(|| target(&data)));
                assert!(
                    outcome.is_ok(),
                    "{shown} fails again (run `cargo fuzz run --fuzz-dir fuzz/libfuzzer -s none {name} {shown}`)"
                );
                replayed += 1;
            }
        }
    }
    // The seed corpus alone has inputs for every target.
    assert!(replayed >= 9, "only {replayed} inputs replayed");
}

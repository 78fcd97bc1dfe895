//! Builds the runtime library that `flowc build` links executables with
//! (`libflowc_runtime.a`, the `flowc-runtime` crate as a static library)
//! and has flowc carry it inside (`include_bytes!`), so that a flowc
//! installed with `cargo install` or copied anywhere can still build
//! executables.
//!
//! Cargo gives a build script no way to depend on another crate's static
//! library, so this one runs cargo itself on the runtime crate of the same
//! workspace, with the profile flowc is built with, in a target directory
//! of its own next to flowc's (`target/embedded-runtime`), which keeps it
//! incremental. The archive's debug information is stripped when `strip`
//! is at hand (it is most of the archive). When the build fails (no
//! network for a missing crate, say), flowc is built without the archive
//! and `flowc build` looks for one next to the flowc executable instead,
//! as it did before (a warning says so).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.join("../..");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for input in
        ["compiler/runtime/src", "compiler/runtime/Cargo.toml", "compiler/heap/src", "compiler/heap/Cargo.toml"]
    {
        println!("cargo:rerun-if-changed={}", root.join(input).display());
    }
    println!("cargo:rerun-if-changed={}", root.join("Cargo.lock").display());
    // The workspace's manifest chooses the runtime's dependencies'
    // features (mimalloc's version), which the lock file does not record.
    println!("cargo:rerun-if-changed={}", root.join("Cargo.toml").display());
    let archive = out.join("libflowc_runtime.a");
    match build_runtime(&root, &out) {
        Ok(built) => {
            if let Err(e) = std::fs::copy(&built, &archive) {
                println!("cargo:warning=cannot copy {}: {e}", built.display());
                let _ = std::fs::write(&archive, b"");
            } else {
                // Best effort: without `strip` the archive stays as it is.
                let _ = Command::new("strip").arg("--strip-debug").arg(&archive).status();
            }
        }
        Err(e) => {
            println!("cargo:warning=flowc is built without its runtime library inside ({e}); `flowc build` will look for libflowc_runtime.a next to the flowc executable");
            let _ = std::fs::write(&archive, b"");
        }
    }
    println!("cargo:rustc-env=FLOWC_RUNTIME_ARCHIVE={}", archive.display());
}

/// Builds `flowc-runtime` as a static library; returns its path.
fn build_runtime(root: &Path, out: &Path) -> Result<PathBuf, String> {
    let release = std::env::var("PROFILE").as_deref() == Ok("release");
    // OUT_DIR is TARGET/PROFILE/build/flowc-HASH/out.
    let target = out.ancestors().nth(4).unwrap_or(out).join("embedded-runtime");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["rustc", "--lib", "--package", "flowc-runtime", "--crate-type", "staticlib", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target);
    if release {
        cmd.arg("--release");
    }
    // No debug information: `strip` would take it out of the archive again
    // (without it this build took 66 s instead of 81 on a clean directory).
    cmd.args(["--config", "profile.dev.debug=false", "--config", "profile.release.debug=false"]);
    // What describes flowc's own build (a target directory, clippy as the
    // compiler under `cargo clippy`) must not leak into this one.
    for var in ["CARGO_TARGET_DIR", "CARGO_BUILD_TARGET_DIR", "RUSTC_WORKSPACE_WRAPPER", "CLIPPY_ARGS"] {
        cmd.env_remove(var);
    }
    // The archive sets up the process of the executables that link it
    // (`flowc_runtime::process_setup!`): a cfg of this compile only.
    cmd.args(["--", "--cfg", "flowc_executable"]);
    let output = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(format!(
            "cargo build of flowc-runtime failed: {}",
            last.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    let built = target.join(if release { "release" } else { "debug" }).join("libflowc_runtime.a");
    if built.exists() {
        Ok(built)
    } else {
        Err(format!("{} was not built", built.display()))
    }
}

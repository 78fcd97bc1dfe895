//! `flowc build FILE [--entry L] [--env ENV] -o OUT`: compiles the program
//! ahead of time (front end, the eight passes, Cranelift) into an object
//! file and links it with the runtime (`libflowc_runtime.a`, which flowc
//! carries inside, see build.rs; `FLOWC_RUNTIME` names another) using the
//! system C compiler (`cc`, or `$CC`), keeping only the runtime code the
//! program reaches and stripping symbols (`--keep-symbols` keeps them).
//! The executable runs with the entry's environment, or `OUT --env
//! '[n/100]'`; `OUT --help` tells the rest.

use std::path::{Path, PathBuf};
use std::process::Command;

use flowc_lang::interp::Config;

use crate::progress::Progress;
use crate::{input, Failure};

#[derive(clap::Args)]
#[command(mut_arg("env", |a| a.help("The environment the executable runs with when given none, e.g. '[n/100]' (default: the entry fact's)")))]
pub struct Args {
    #[command(flatten)]
    start: input::Start,
    /// The executable to write.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    /// Also keep the object file (OUT.o).
    #[arg(long)]
    keep_object: bool,
    /// Count loop iterations in the code, so that the executable takes
    /// `--fuel N` (costs a memory update per iteration).
    #[arg(long)]
    fuel_checks: bool,
    /// Keep the executable's symbols (for debuggers and profilers); by
    /// default they are stripped.
    #[arg(long)]
    keep_symbols: bool,
}

/// The runtime library flowc carries inside (empty when its build script
/// could not build it).
const EMBEDDED_RUNTIME: &[u8] = include_bytes!(env!("FLOWC_RUNTIME_ARCHIVE"));

/// The runtime library to link, and whether it is a temporary copy to
/// remove afterwards: `$FLOWC_RUNTIME`, else the one flowc carries
/// (written to a temporary file), else the newest of those cargo built
/// next to this executable.
fn runtime_library() -> Result<(PathBuf, bool), Failure> {
    if let Some(p) = std::env::var_os("FLOWC_RUNTIME") {
        return Ok((PathBuf::from(p), false));
    }
    if !EMBEDDED_RUNTIME.is_empty() {
        let path = std::env::temp_dir().join(format!("flowc-runtime-{}.a", std::process::id()));
        std::fs::write(&path, EMBEDDED_RUNTIME)
            .map_err(|e| Failure::input(format!("cannot write the runtime library to {}: {e}", path.display())))?;
        return Ok((path, true));
    }
    let exe = std::env::current_exe().map_err(Failure::input)?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    let beside = std::fs::read_dir(dir).into_iter().flatten().flatten();
    let in_deps = std::fs::read_dir(dir.join("deps")).into_iter().flatten().flatten();
    let newest = beside
        .chain(in_deps)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name == "libflowc_runtime.a" || (name.starts_with("libflowc_runtime-") && name.ends_with(".a"))
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max();
    if let Some((_, path)) = newest {
        return Ok((path, false));
    }
    Err(Failure::input(format!(
        "this flowc was built without its runtime library and cannot find libflowc_runtime.a next to {} (set FLOWC_RUNTIME)",
        exe.display()
    )))
}

pub fn main(args: Args) -> Result<(), Failure> {
    let (program, label, env) = args.start.load()?;
    let progress = Progress::for_program(&program);
    progress.phase("front end");
    let module = flowc_frontend::lower(&program, label).map_err(|kind| Failure::input(format!("{kind}")))?;
    progress.phase("the eight passes");
    let options = flowc_passes::context::Options::default();
    let versions =
        flowc_passes::versions::pipeline(module, &options, flowc_passes::versions::Wanted::Both, |_, _, _| {});
    progress.phase("code generation");
    // Every error site's text goes into the executable: looked up by label
    // in an index, not by scanning the program once per site (a partially
    // evaluated residual has tens of thousands of blocks and sites).
    let index = flowc_lang::index::ProgramIndex::new(&program);
    let describe = |site: flowc_ir::Site| index.with_text(site.location()).to_string();
    let bytes = flowc_codegen::object::object(
        &versions.generic,
        versions.small_version(),
        &env,
        Config::default().max_depth,
        &describe,
        args.fuel_checks,
    )
    .map_err(|e| Failure::input(format!("code generation failed: {e}")))?;
    let mut object = args.output.clone().into_os_string();
    object.push(".o");
    let object = PathBuf::from(object);
    std::fs::write(&object, bytes).map_err(|e| Failure::input(format!("{}: {e}", object.display())))?;
    progress.phase("linking");
    let (library, temporary) = runtime_library()?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let linked = Command::new(&cc)
        .arg(&object)
        .arg(&library)
        .arg("-o")
        .arg(&args.output)
        // Only the runtime code the program reaches (the archive has one
        // section per function), and no symbols unless asked for.
        .arg("-Wl,--gc-sections")
        .args((!args.keep_symbols).then_some("-s"))
        .args(["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"])
        .output()
        .map_err(|e| Failure::input(format!("cannot run the linker `{cc}`: {e}")));
    if !args.keep_object {
        let _ = std::fs::remove_file(&object);
    }
    if temporary {
        let _ = std::fs::remove_file(&library);
    }
    let linked = linked?;
    if !linked.status.success() {
        return Err(Failure::input(format!("linking failed:\n{}", String::from_utf8_lossy(&linked.stderr))));
    }
    Ok(())
}

//! `flowc build FILE [--entry L] [--env ENV] -o OUT`: compiles the program
//! ahead of time (front end, the eight passes, Cranelift) into an object
//! file and links it with the runtime (`libflowc_runtime.a`, which cargo
//! builds next to the `flowc` binary; `FLOWC_RUNTIME` names another) using
//! the system C compiler (`cc`, or `$CC`). The executable runs with the
//! entry's environment, or `OUT --env '[n/100]'`.

use std::path::{Path, PathBuf};
use std::process::Command;

use flowc_lang::interp::Config;

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
}

/// The runtime library to link: `$FLOWC_RUNTIME`, else the newest of the
/// ones cargo built next to this executable (`cargo build`) and in its
/// `deps/` directory (`cargo test --workspace` builds it only there).
fn runtime_library() -> Result<PathBuf, Failure> {
    if let Some(p) = std::env::var_os("FLOWC_RUNTIME") {
        return Ok(PathBuf::from(p));
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
        return Ok(path);
    }
    Err(Failure::input(format!(
        "cannot find libflowc_runtime.a next to {} (build the workspace with cargo build, or set FLOWC_RUNTIME)",
        exe.display()
    )))
}

pub fn main(args: Args) -> Result<(), Failure> {
    let (program, label, env) = args.start.load()?;
    let module = flowc_frontend::lower(&program, label).map_err(|kind| Failure::input(format!("{kind}")))?;
    let versions = flowc_passes::versions::optimize_versions(module, &flowc_passes::context::Options::default());
    let describe = |site: flowc_ir::Site| {
        let at = flowc_lang::interp::Location {
            function: site.function,
            block: site.block,
            statement: site.statement as usize,
            is_terminator: site.is_terminator,
            text: String::new(),
        };
        at.with_text(&program).to_string()
    };
    let bytes = flowc_codegen::object::object(
        &versions.generic,
        versions.small_version(),
        &env,
        Config::default().max_depth,
        &describe,
    )
    .map_err(|e| Failure::input(format!("code generation failed: {e}")))?;
    let mut object = args.output.clone().into_os_string();
    object.push(".o");
    let object = PathBuf::from(object);
    std::fs::write(&object, bytes).map_err(|e| Failure::input(format!("{}: {e}", object.display())))?;
    let library = runtime_library()?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let linked = Command::new(&cc)
        .arg(&object)
        .arg(&library)
        .arg("-o")
        .arg(&args.output)
        .args(["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"])
        .output()
        .map_err(|e| Failure::input(format!("cannot run the linker `{cc}`: {e}")))?;
    if !args.keep_object {
        let _ = std::fs::remove_file(&object);
    }
    if !linked.status.success() {
        return Err(Failure::input(format!("linking failed:\n{}", String::from_utf8_lossy(&linked.stderr))));
    }
    Ok(())
}

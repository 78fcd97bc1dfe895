//! flowc-runtime: what generated code runs on, in the JIT and in built
//! executables alike.
//!
//! - [`word`]: the value representation (tagged 64-bit words);
//! - [`runtime`]: the context of a run and the functions generated code
//!   calls (`flowc_rt_*`): slow paths of operations, objects, printing,
//!   errors;
//! - [`frames`]: the stack maps of compiled code, and the walk of its
//!   frames for roots when the heap collects;
//! - [`start`]: the `main` of executables built by `flowc build`.

pub mod frames;
pub mod runtime;
pub mod start;
pub mod word;

/// Makes the binary that invokes it run the way flowc runs: mimalloc its
/// allocator, and transparent huge pages off from the moment the process
/// is loaded ([`init_process`]). Invoked by the binaries (flowc, its
/// benchmarks and fuzzers) and by built executables (the runtime archive
/// `flowc build` links is compiled with `--cfg flowc_executable`, which
/// invokes it); a library does not choose its users' allocator.
///
/// mimalloc: the compiler allocates many small vectors (operands, phi
/// inputs, block lists) and big integers allocate their digits; mimalloc
/// keeps both fast where glibc's malloc degrades.
///
/// The load-time setting: the Rust runtime allocates before `main` runs,
/// and that first allocation touched mimalloc's first arena page under a
/// transparent huge page — 2 MiB zeroed and resident in every run of
/// `flowc` (docs/architecture.md, "Measurements behind the comments").
#[macro_export]
macro_rules! process_setup {
    () => {
        #[global_allocator]
        static FLOWC_GLOBAL_ALLOCATOR: $crate::MiMalloc = $crate::MiMalloc;

        #[cfg(target_os = "linux")]
        #[used]
        #[link_section = ".init_array"]
        static FLOWC_DISABLE_HUGE_PAGES_AT_LOAD: extern "C" fn() = $crate::disable_huge_pages;
    };
}

pub use mimalloc::MiMalloc;

// The runtime archive of built executables: `flowc`'s build script
// compiles this crate as a static library with `--cfg flowc_executable`
// (a cfg of that one compile, not a feature: a feature would be on in
// `--all-features` builds of the workspace, whose binaries set the process
// up themselves).
#[cfg(flowc_executable)]
process_setup!();

/// Sets up the process the way flowc runs: without transparent huge pages.
/// mimalloc asks for them on its arenas, and a 2 MiB page is resident as
/// soon as one byte of it is touched — the compiler's many small
/// allocations then kept three times their working set resident, and no
/// benchmark ran faster with them. The binaries make this setting when
/// they are loaded ([`process_setup`]; `tests/process_setup.rs` shows
/// it); `flowc` and built executables also call this first thing, because
/// a built executable gets the load-time setting only if the linker keeps
/// the archive's object that holds it.
pub fn init_process() {
    disable_huge_pages();
}

/// Turns transparent huge pages off for the process ([`init_process`]).
#[doc(hidden)]
pub extern "C" fn disable_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes no pointers; it sets a flag of the
    // process that later page faults read.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn the_process_runs_without_transparent_huge_pages() {
        super::init_process();
        // SAFETY: PR_GET_THP_DISABLE reads the process's flag; no pointers.
        let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(disabled, 1);
    }
}

/// Ends the process with exit status `code` once its work is done and
/// what it wrote to files is closed: standard output and error flushed,
/// then `_exit`, without the C library's exit handlers and without
/// waiting for other threads. `flowc` ends so after a command, a built
/// executable after its run. The exit handler that ran was mimalloc's
/// process end, which collects and gives back to the system every page
/// the process freed (some ten `madvise` calls and a walk of the heap's
/// pages, for a process that is going away; a call that unmaps memory
/// interrupts the other core while a thread of the JIT runs there); a
/// built executable's run thread also unmapped its heap's blocks one by
/// one as it ended, and the main thread, woken by its end, could wait a
/// scheduler tick behind a busy core.
pub fn end_process(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(unix)]
    // SAFETY: `_exit` ends the process at once; nothing of Rust's needs to
    // run after it: standard output is flushed above, and the callers'
    // own writers were flushed when they were dropped.
    unsafe {
        libc::_exit(code)
    }
    #[cfg(not(unix))]
    std::process::exit(code)
}

/// Gives memory the allocator holds freed back to the operating system.
/// The compiler calls it between its phases: mimalloc keeps freed pages
/// for a while (so that a program allocating and freeing big integers
/// reuses them at once), and a phase's temporaries, freed while the next
/// phase allocates structures of other sizes, added a third to the peak
/// of compiling a large program.
pub fn release_freed_memory() {
    // SAFETY: mi_collect only walks the allocator's own free lists.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

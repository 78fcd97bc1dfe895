//! A binary that invokes `process_setup!` runs without transparent huge
//! pages from the moment it is loaded, before `main` and before anything
//! calls `init_process` (this test binary is such a binary, and calls
//! nothing).

flowc_runtime::process_setup!();

#[cfg(target_os = "linux")]
#[test]
fn a_binary_that_sets_the_process_up_has_huge_pages_off_from_load_time() {
    // SAFETY: PR_GET_THP_DISABLE reads the process's flag; no pointers.
    let disabled = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
    assert_eq!(disabled, 1);
}

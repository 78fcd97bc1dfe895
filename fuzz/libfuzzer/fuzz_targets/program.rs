//! `cargo fuzz run --fuzz-dir fuzz/libfuzzer -s none program`: see
//! `flowc_fuzz::targets::program`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    flowc_codegen::with_stack(|| flowc_fuzz::targets::program(data));
});

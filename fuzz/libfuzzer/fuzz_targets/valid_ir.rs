//! `cargo fuzz run --fuzz-dir fuzz/libfuzzer -s none valid_ir`: see
//! `flowc_fuzz::targets::valid_ir`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    flowc_codegen::with_stack(|| flowc_fuzz::targets::valid_ir(data));
});

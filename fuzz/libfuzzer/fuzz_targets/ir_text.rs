//! `cargo fuzz run --fuzz-dir fuzz/libfuzzer -s none ir_text`: see
//! `flowc_fuzz::targets::ir_text`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    flowc_codegen::with_stack(|| flowc_fuzz::targets::ir_text(data));
});

//! Valid modules pass `check_module`, and each of their functions passes
//! `check`; the examples are in the printer's canonical form (print of parse
//! is identity), so they are what passes would dump.

use crate::common::{parse, render, VALID};

#[test]
fn valid_examples_pass() {
    for (name, text) in VALID {
        let m = parse(text);
        assert_eq!(flowc_ir::print::module(&m), text, "{name} is not in canonical form");
        assert_eq!(render(&m), "ok", "{name}");
        for f in &m.functions {
            assert_eq!(flowc_ir_checker::check(f), Ok(()), "{name}: {}", f.name);
        }
    }
}

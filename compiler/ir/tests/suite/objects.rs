//! Object reads and writes the optimizer proved of objects (`get.object`,
//! `set.object`): they print as they parse, and the IR interpreter holds
//! them to their promise.

use flowc_lang::interp::Config;
use flowc_lang::{Symbol, Value};

const MAIN: &str = "main start(v0:p) {
b0 start:
    v1:c = new cell
    set.object v1, v, 7
    v2:v = get.object v1, v
    set v0, v, v2
    v3:w = get.object v0, v
    print v3
}
";

#[test]
fn object_proofs_print_as_they_parse() {
    let m = flowc_ir::parse::module("objects.ir", MAIN).unwrap();
    assert_eq!(flowc_ir::print::module(&m), MAIN);
    let err = flowc_ir::parse::module("objects.ir", &MAIN.replace("get.object v1", "get.obj v1")).unwrap_err();
    assert!(err.to_string().contains("expected `.object`"), "{err}");
}

#[test]
fn a_broken_object_proof_is_an_error_of_the_ir_interpreter() {
    let m = flowc_ir::parse::module("objects.ir", MAIN).unwrap();
    let p = Symbol::intern("p");
    // `p` an object: every proof holds.
    let cell = flowc_lang::interp::objects::new_object(1, Symbol::intern("cell"), m.layout());
    let out = flowc_ir::interp::run(&m, &[(p, cell)], &Config::default()).unwrap();
    assert_eq!(out.value, Value::Int(7));
    // `p` an integer: the unproven `set` raises the language's error, as
    // the reference interpreter would; a proven read of it would break
    // its promise.
    let err = flowc_ir::interp::run(&m, &[(p, Value::Int(3))], &Config::default()).unwrap_err();
    assert!(!err.kind.to_string().contains("broken_form"), "{}", err.kind);
    let unproven_set = MAIN.replace("    set v0, v, v2\n", "");
    let m = flowc_ir::parse::module("objects.ir", &unproven_set).unwrap();
    let err = flowc_ir::interp::run(&m, &[(p, Value::Int(3))], &Config::default()).unwrap_err();
    assert_eq!(err.kind.to_string(), "the program raised error `broken_form(get.object)`");
}

//! Mutations of IR with nothing to work on, which the generated subjects
//! reach only by chance: the replay in `regressions/mutant/` depends on
//! `gen::program(358)` still making an operand-free function.

use flowc_fuzz::mutants::{judge, mutate, Class, Mutant, Subject};
use flowc_tests::rng::Rng;

/// A dangling-value mutant of a function without a single operand: the
/// mutator inserts a `check_bound` to hold the operand, and the operand
/// must dangle past the insertion (the mutator once named the new
/// instruction's own result, which the checker rightly accepted).
#[test]
fn a_dangling_value_in_a_function_without_operands_dangles() {
    let module = flowc_ir::parse::module(
        "t.ir",
        r#"main m() {
b0:
    trap error(no)
}
"#,
    )
    .unwrap();
    flowc_ir_checker::check_module(&module).unwrap();
    let subject = Subject { module, origin: "written".to_owned(), focus: Some(0) };
    for seed in 0..200 {
        let mutant = mutate(Class::DanglingValue, &subject, &mut Rng::new(seed)).expect("a mutant");
        let Mutant::Module(m) = &mutant else { panic!("a module") };
        assert!(flowc_ir::print::module(m).contains("check_bound"), "seed {seed}");
        assert_eq!(judge(&mutant, Class::DanglingValue.expected()), Ok(()), "seed {seed}");
    }
}

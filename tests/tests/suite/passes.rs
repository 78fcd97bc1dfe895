//! The eight passes keep programs valid and their behaviour unchanged:
//! after every pass the IR checker passes and the IR interpreter prints
//! what the reference interpreter prints (or raises the same error), over
//! the whole corpus (the generated programs: [`super::matrix`]).

use flowc_tests::corpus;
use flowc_tests::engines;

#[test]
fn pipeline_preserves_the_corpus() {
    for case in engines::cases(corpus::with_generated(0)).filter(|c| c.finishes()) {
        engines::optimize_checked(case.lowered(), &case.env, &case.expected, &case.name);
    }
}

/// A program that doubles with a multiplication.
const DOUBLING: &str = "
entry start(n = 10)
start:
    s = 0
    goto loop
loop:
    c = n > 0
    if c goto body else goto done
body:
    t = n * 2
    s = s + t
    n = n - 1
    goto loop
done:
    print_and_stop(s)
";

/// [`DOUBLING`] as the front end lowers it.
fn doubling() -> flowc_ir::Module {
    let program = flowc_lang::syntax::parse("doubling", DOUBLING).unwrap_or_else(|e| panic!("{e}"));
    engines::lower(&program, flowc_lang::Symbol::intern("start"))
}

/// A pass of one's own: `mul x, 2` becomes `add x, x`.
fn doubling_as_addition(module: &mut flowc_ir::Module, _: &mut flowc_passes::Context) {
    use flowc_ir::{InstKind, Operand};
    use flowc_lang::ast::Operator;
    use flowc_lang::ops::Op;
    for f in &mut module.functions {
        let insts: Vec<flowc_ir::InstId> = f.all_insts().map(|(_, i)| i).collect();
        for i in insts {
            if let InstKind::Op { op, args, .. } = &mut f.insts[i].kind {
                if *op == Operator::Known(Op::Mul) && args[1] == Operand::Const(flowc_lang::Value::Int(2)) {
                    *op = Operator::Known(Op::Add);
                    args[1] = args[0].clone();
                }
            }
        }
    }
}

/// A pipeline of one's choosing (`flowc_passes::run_passes`): some of the
/// eight passes and one of one's own between two of them, with the IR
/// checker after each; the program prints what it printed.
#[test]
fn a_pass_of_ones_own_runs_between_two_of_ours() {
    let lowered = doubling();
    let env = [(flowc_lang::Symbol::intern("n"), flowc_lang::Value::Int(10))];
    let expected = engines::ir(&lowered, &env);
    let mine =
        flowc_passes::Pass { name: "doubling", run: doubling_as_addition, annotate: None, reads: &[], writes: &[] };
    let ours = |name| flowc_passes::pass(name).expect("one of the eight");
    let passes = [ours("normalize"), ours("propagate"), ours("cleanup"), &mine, ours("escape"), ours("unbox")];
    let passes: Vec<&flowc_passes::Pass> = passes.into_iter().chain([ours("def-use"), ours("dce")]).collect();
    let mut module = lowered.clone();
    let mut cx = flowc_passes::Context::new(&module);
    let mut ran = Vec::new();
    flowc_passes::run_passes(&mut module, &mut cx, &passes, |pass, m, _| {
        engines::verify(m, pass.name);
        assert_eq!(engines::ir(m, &env), expected, "after {}", pass.name);
        ran.push(pass.name);
    })
    .expect("each pass finds what it reads");
    assert_eq!(ran, ["normalize", "propagate", "cleanup", "doubling", "escape", "unbox", "def-use", "dce"]);
    expect_test::expect![[r#"
        main start(v0:n) {
        b0 start:
            jump b1
        b1 loop:
            v1:n = phi [b0: v0, b2: v6]
            v3:s = phi [b0: 0, b2: v5]
            v2:c = gt v1, 0
            branch v2, b2, b3
        b2 body:
            v4:t = add v1, v1
            v5:s = add.int v3, v4
            v6:n = sub v1, 1
            jump b1
        b3 done:
            print v3
        }
    "#]]
    .assert_eq(&flowc_ir::print::module(&module));
}

/// A chosen pipeline whose pass reads what no pass before it leaves is
/// refused, before anything runs and where it would stop.
#[test]
fn a_pass_that_reads_what_no_pass_before_it_leaves_is_refused() {
    use flowc_passes::{pass, Fact, Unmet};
    let ours = |name| pass(name).expect("one of the eight");
    let without_def_use = [ours("normalize"), ours("propagate"), ours("cleanup"), ours("dce")];
    assert_eq!(flowc_passes::unmet(&without_def_use), Some(Unmet { pass: "dce", fact: Fact::DefUse }));
    assert_eq!(
        Unmet { pass: "dce", fact: Fact::DefUse }.to_string(),
        "`dce` reads DefUse, which no pass before it leaves (`def-use` does)"
    );
    let eight: Vec<&flowc_passes::Pass> = flowc_passes::PIPELINE.iter().collect();
    assert_eq!(flowc_passes::unmet(&eight), None);
    let mut module = doubling();
    let mut cx = flowc_passes::Context::new(&module);
    let mut ran = Vec::new();
    let stopped = flowc_passes::run_passes(&mut module, &mut cx, &[ours("cleanup")], |p, _, _| ran.push(p.name));
    assert_eq!(stopped, Err(Unmet { pass: "cleanup", fact: Fact::Propagation }));
    assert!(ran.is_empty());
}
